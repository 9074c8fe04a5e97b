//! The `client` command-line program against the `everything` server: what a person typing
//! the commands gets on stdout, and the exit status.

use std::process::{Command, Output};

use serde_json::{Value, json};

const CLIENT: &str = env!("CARGO_BIN_EXE_client");
const EVERYTHING: &str = env!("CARGO_BIN_EXE_everything");

fn run(args: &[&str]) -> Output {
    Command::new(CLIENT)
        .args(args)
        .output()
        .expect("the client binary runs")
}

/// Runs `client ACTION... -- everything`, expects success, returns stdout as JSON.
fn ok(action: &[&str]) -> Value {
    let mut args = action.to_vec();
    args.extend(["--", EVERYTHING]);
    let out = run(&args);
    assert!(
        out.status.success(),
        "{action:?}: {:?}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn lists_and_calls_over_stdio() {
    let tools = ok(&["tools"]);
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "test_simple_text");
    assert!(names.len() >= 14, "{names:?}");

    let r = ok(&["call", "test_simple_text"]);
    assert_eq!(
        r["content"],
        json!([{"type": "text", "text": "This is a simple text response for testing."}])
    );
    let r = ok(&[
        "--legacy",
        "call",
        "json_schema_2020_12_tool",
        r#"{"email":"e","name":"x"}"#,
    ]);
    assert_eq!(
        r["content"][0]["text"],
        r#"JSON Schema 2020-12 tool called with: {"email":"e","name":"x"}"#
    );
    // Three resources, and the SKILL.md of each of the fixture's two skills.
    let r = ok(&["resources"]);
    assert_eq!(r.as_array().unwrap().len(), 5);
    let r = ok(&["read", "test://static-text"]);
    assert_eq!(
        r["contents"][0]["text"],
        "This is the content of the static text resource."
    );
    let r = ok(&["prompts"]);
    assert_eq!(r[0]["name"], "test_simple_prompt");
    let r = ok(&[
        "prompt",
        "test_prompt_with_arguments",
        r#"{"arg1":"a","arg2":"b"}"#,
    ]);
    assert_eq!(
        r["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );
    let r = ok(&["--revision", "2025-03-26", "info"]);
    assert_eq!(r["protocolVersion"], "2025-03-26");
    assert_eq!(r["serverInfo"]["name"], "mcp-everything");
}

#[test]
fn a_form_with_a_required_field_and_no_default_is_declined() {
    // The client asks no one: it accepts forms with their defaults, and declines one whose
    // required fields it could only make up (both eras: an elicitation request, an input
    // round); the server refuses an accepted form without them.
    for era in ["--legacy", "--modern"] {
        let out = Command::new(CLIENT)
            .args([era, "--no-tasks", "conformance", "--", EVERYTHING])
            .env(
                "MCP_CONFORMANCE_CONTEXT",
                r#"{"toolCalls":[{"name":"multi_input","arguments":{}}]}"#,
            )
            .output()
            .expect("the client binary runs");
        assert!(
            out.status.success(),
            "{era}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
        assert_eq!(
            r[0]["result"]["content"][0]["text"], r#"name "", confirm """#,
            "{era}: {r}"
        );
    }
}

#[test]
fn errors_exit_non_zero() {
    // A tool that reports isError: printed, and the exit status says it failed.
    let out = run(&["call", "test_error_handling", "--", EVERYTHING]);
    assert!(!out.status.success());
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["isError"], true);
    // A protocol error.
    let out = run(&["read", "test://nope", "--", EVERYTHING]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("error"));
    // A server that cannot be started.
    let out = run(&["tools", "--", "/nonexistent/server"]);
    assert!(!out.status.success());
    // Bad usage.
    let out = run(&["frobnicate", "--", EVERYTHING]);
    assert!(!out.status.success());
    let out = run(&["call", "x", "[1]", "--", EVERYTHING]);
    assert!(!out.status.success());
}

#[test]
fn an_unreachable_url_is_a_clear_error() {
    // Port 9 on loopback: nothing listens there, so the connection is refused.
    let out = run(&["http://127.0.0.1:9/mcp", "tools"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("127.0.0.1:9"), "{err}");
    // Said as what it is: the server was not reached, it refused nothing.
    assert!(err.contains("transport error"), "{err}");
    assert!(!err.contains("refused the handshake"), "{err}");
}

#[test]
fn the_url_may_come_last() {
    // As the conformance suite calls it: `client ACTION URL`.
    let out = run(&["tools", "http://127.0.0.1:9/mcp"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("127.0.0.1:9"), "{err}");
    assert!(!err.contains("not a URL"), "{err}");
}

#[test]
fn skills_are_listed_and_read_verified() {
    let skills = ok(&["skills"]);
    let uris: Vec<&str> = skills
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://pdf-processing/SKILL.md"
        ]
    );
    let s = ok(&["skill", "get", "skill://pdf-processing/SKILL.md"]);
    assert_eq!(s["frontmatter"]["metadata"]["version"], "2.1.0");
    let forms = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/skills/pdf-processing/references/FORMS.md"
    );
    let out = run(&[
        "skill",
        "read",
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "--",
        EVERYTHING,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, std::fs::read(forms).unwrap());
    // A file the entry does not list is refused without being read.
    let out = run(&[
        "skill",
        "read",
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/../../etc/passwd",
        "--",
        EVERYTHING,
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not in the skill's manifest"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
