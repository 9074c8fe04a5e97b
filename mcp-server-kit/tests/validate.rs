//! A tool's arguments are checked against its published `inputSchema` before the handler runs:
//! a call that does not fit gets an error naming each wrong field, and the handler never sees
//! it. The tools here take a plain `Value`, so nothing but the schema check can refuse them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[cfg(feature = "tasks")]
use mcp_server_kit::types::tasks_ext::{EXTENSION_ID, TaskSupport};
use mcp_server_kit::{Context, Error, Server, Tool};
use serde_json::{Value, json};

mod common;
use common::Peer;

/// A tool with a hand-written `schema` that echoes its arguments and counts its calls.
fn echo(schema: Value, calls: &Arc<AtomicUsize>) -> Tool {
    let calls = Arc::clone(calls);
    Tool::new("echo", move |a: Value, _: &Context| {
        calls.fetch_add(1, Ordering::SeqCst);
        Ok::<_, Error>(a.to_string())
    })
    .input_schema(schema)
}

fn person() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "minimum": 0},
            "color": {"type": "string", "enum": ["red", "green"]},
            "address": {"$ref": "#/$defs/address"}
        },
        "required": ["name"],
        "additionalProperties": false,
        "$defs": {"address": {"type": "object", "properties": {
            "city": {"type": "string"},
            "lines": {"type": "array", "items": {"type": "string"}}
        }, "required": ["city"]}}
    })
}

/// One 2025-11-25 session of a server with `tool`.
fn session(tool: Tool) -> Peer {
    let server = Server::builder("t", "1").tool(tool).build().unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({}));
    p
}

/// Calls `echo` with `args`: the tool result's text, and whether it is an error.
fn call(p: &Peer, args: Value) -> (String, bool) {
    let r = p.request(7, "tools/call", json!({"name": "echo", "arguments": args}));
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {r}"))
        .to_owned();
    (text, r["result"]["isError"] == true)
}

/// Calls `echo` with `args`, expecting a refusal; its message.
fn refused(p: &Peer, args: Value) -> String {
    let (text, is_error) = call(p, args);
    assert!(is_error, "{text}");
    assert!(text.starts_with("Invalid arguments: "), "{text}");
    text
}

#[test]
fn a_valid_call_reaches_the_handler_unchanged() {
    let calls = Arc::new(AtomicUsize::new(0));
    let p = session(echo(person(), &calls));
    let args = json!({"name": "Ada", "age": 36, "color": "red",
                      "address": {"city": "London", "lines": ["12 St James's Sq"]}});
    let (text, is_error) = call(&p, args.clone());
    assert!(!is_error, "{text}");
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), args);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_wrong_type_is_named_and_the_handler_never_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let p = session(echo(person(), &calls));
    let text = refused(&p, json!({"name": 5}));
    assert_eq!(text, "Invalid arguments: name: expected string, got number");
    let text = refused(&p, json!({"name": "x", "age": 1.5}));
    assert!(text.contains("age: expected integer, got number"), "{text}");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn a_missing_required_field_is_named() {
    let calls = Arc::new(AtomicUsize::new(0));
    let p = session(echo(person(), &calls));
    let text = refused(&p, json!({}));
    assert_eq!(text, "Invalid arguments: name: required property missing");
    // No `arguments` at all reads as `{}`, and is refused the same way.
    let r = p.request(8, "tools/call", json!({"name": "echo"}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn a_value_out_of_the_enum_is_named() {
    let calls = Arc::new(AtomicUsize::new(0));
    let p = session(echo(person(), &calls));
    let text = refused(&p, json!({"name": "x", "color": "blue"}));
    assert!(
        text.contains(r#"color: expected one of "red", "green""#),
        "{text}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn an_additional_property_is_refused() {
    let calls = Arc::new(AtomicUsize::new(0));
    let p = session(echo(person(), &calls));
    let text = refused(&p, json!({"name": 5, "bogus": true}));
    assert!(text.contains("bogus: property not allowed"), "{text}");
    assert!(text.contains("name: expected string, got number"), "{text}");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn a_nested_field_is_named_by_its_path_through_a_ref() {
    let calls = Arc::new(AtomicUsize::new(0));
    let p = session(echo(person(), &calls));
    // `address` is checked through `$ref: #/$defs/address`.
    let text = refused(&p, json!({"name": "x", "address": {"lines": ["a", 2]}}));
    assert!(
        text.contains("address.city: required property missing"),
        "{text}"
    );
    assert!(
        text.contains("address.lines[1]: expected string, got number"),
        "{text}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn a_legacy_ref_to_definitions_is_followed() {
    let calls = Arc::new(AtomicUsize::new(0));
    let schema = json!({
        "type": "object",
        "properties": {"n": {"$ref": "#/definitions/small"}},
        "definitions": {"small": {"type": "integer", "maximum": 9}}
    });
    let p = session(echo(schema, &calls));
    let text = refused(&p, json!({"n": 10}));
    assert_eq!(text, "Invalid arguments: n: must be at most 9");
    let (_, is_error) = call(&p, json!({"n": 9}));
    assert!(!is_error);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_cyclic_ref_terminates() {
    let calls = Arc::new(AtomicUsize::new(0));
    // `a` and `b` refer to each other without ever moving into the value; `node` recurses
    // into it (a linked list).
    let schema = json!({
        "type": "object",
        "$defs": {
            "a": {"$ref": "#/$defs/b"},
            "b": {"$ref": "#/$defs/a"},
            "node": {"type": "object", "properties": {
                "v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}}}
        },
        "properties": {"loop": {"$ref": "#/$defs/a"}, "list": {"$ref": "#/$defs/node"}}
    });
    let p = session(echo(schema, &calls));
    let (text, is_error) = call(&p, json!({"loop": 1, "list": {"v": 1, "next": {"v": 2}}}));
    assert!(!is_error, "{text}");
    let text = refused(&p, json!({"list": {"v": 1, "next": {"next": {"v": "3"}}}}));
    assert_eq!(
        text,
        "Invalid arguments: list.next.next.v: expected integer, got string"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn older_revisions_get_invalid_params_naming_the_field() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = Server::builder("t", "1")
        .tool(echo(person(), &calls))
        .build()
        .unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-06-18", json!({}));
    let r = p.request(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"name": []}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(
        r["error"]["message"],
        "Invalid params: Invalid arguments for tool echo: name: expected string, got array"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn the_check_can_be_turned_off_per_tool() {
    let calls = Arc::new(AtomicUsize::new(0));
    let p = session(echo(person(), &calls).validate_arguments(false));
    let (text, is_error) = call(&p, json!({"name": 5, "bogus": true}));
    assert!(!is_error, "{text}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[cfg(feature = "tasks")]
#[test]
fn a_task_tool_refuses_bad_arguments_at_once_instead_of_making_a_task() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = Server::builder("t", "1")
        .tool(echo(person(), &calls).task_support(TaskSupport::Required))
        .build()
        .unwrap();
    // A 2026-07-28 connection: no initialize, each request says its revision.
    let p = Peer::open(&server);
    let modern = |args: Value| {
        json!({"name": "echo", "arguments": args, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION_ID: {}}}
        }})
    };
    let r = p.request(1, "tools/call", modern(json!({"name": 5})));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Invalid arguments: name: expected string, got number"
    );
    // A call that fits still becomes a task.
    let r = p.request(2, "tools/call", modern(json!({"name": "x"})));
    assert_eq!(r["result"]["resultType"], "task", "{r}");
}
