//! The README's first server is `examples/first_server.rs`, and its tool functions
//! `examples/tool_functions.rs`, which `cargo test` and `cargo clippy --all-targets` build:
//! this test holds the README's blocks to those files, so the programs a new user copies first
//! are ones that compile, and the first stays within 30 lines.

const README: &str = include_str!("../../README.md");
const FIRST_SERVER: &str = include_str!("../examples/first_server.rs");
const TOOL_FUNCTIONS: &str = include_str!("../examples/tool_functions.rs");

/// The first ```rust block after `heading`.
fn block_after(heading: &str) -> &'static str {
    README
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("the README has its section {heading:?}"))
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```rust block in the section")
}

#[test]
fn readme_tool_functions_are_the_example_that_compiles() {
    assert_eq!(
        block_after("### A tool per function"),
        TOOL_FUNCTIONS,
        "the README's tool functions differ from mcp-server-kit/examples/tool_functions.rs"
    );
}

#[test]
fn readme_first_server_is_the_example_that_compiles() {
    let block = block_after("## A server in 30 lines");
    assert_eq!(
        block, FIRST_SERVER,
        "the README's first server differs from mcp-server-kit/examples/first_server.rs"
    );
    let lines = FIRST_SERVER.lines().count();
    assert!(lines <= 30, "the first server has grown to {lines} lines");
}
