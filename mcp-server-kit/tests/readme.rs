//! The README's first server is `examples/first_server.rs`, which `cargo test` and
//! `cargo clippy --all-targets` build: this test holds the README's block to that file, so
//! the program a new user copies first is one that compiles, and stays within 30 lines.

const README: &str = include_str!("../../README.md");
const FIRST_SERVER: &str = include_str!("../examples/first_server.rs");

#[test]
fn readme_first_server_is_the_example_that_compiles() {
    let section = README
        .split("## A server in 30 lines")
        .nth(1)
        .expect("the README has its first-server section");
    let block = section
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```rust block in the section");
    assert_eq!(
        block, FIRST_SERVER,
        "the README's first server differs from mcp-server-kit/examples/first_server.rs"
    );
    let lines = FIRST_SERVER.lines().count();
    assert!(lines <= 30, "the first server has grown to {lines} lines");
}
