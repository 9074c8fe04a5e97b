//! A usual `tools/call` (a name and an arguments object) is typed straight from its params
//! text, with no map of owned values; anything else takes the general way. The two ways must
//! not differ in anything a client sees: these calls cover what separates them (escapes,
//! unknown members, absent or null arguments, a handler type stricter than its schema,
//! arguments that are not an object).

use mcp_core::jsonrpc::decode;
use mcp_server_kit::schema::Schema;
use mcp_server_kit::{Context, Error, Server, Tool};
use serde_json::{Value, json};

mod common;
use common::Peer;

#[derive(serde::Deserialize)]
struct Message {
    message: String,
}

/// Stricter than the schema it publishes (which allows any other member).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Strict {
    #[allow(dead_code)]
    message: String,
}

fn session(version: &str) -> Peer {
    let message = || Schema::object().property("message", Schema::string());
    let server = Server::builder("t", "1")
        .tool(
            Tool::new("echo", |a: Message, _: &Context| Ok::<_, Error>(a.message))
                .input_schema(message().into_value()),
        )
        .tool(
            Tool::new("strict", |_: Strict, _: &Context| Ok::<_, Error>("ran"))
                .input_schema(message().into_value()),
        )
        .build()
        .unwrap();
    let p = Peer::open(&server);
    p.initialize(version, json!({}));
    p
}

/// Sends `params` written as `params` is (escapes kept) in a `tools/call`; the response.
fn call_text(p: &Peer, id: i64, params: &str) -> Value {
    let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#);
    p.session.handle(decode(line.as_bytes()).unwrap());
    p.response(id).0
}

fn text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {r}"))
}

#[test]
fn escapes_unknown_members_and_meta_read_as_the_value_would() {
    let p = session("2025-11-25");
    let r = call_text(
        &p,
        1,
        r#"{"_meta":{"progressToken":"t"},"name":"\u0065cho","other":[1,{"a":null}],
            "arguments":{"m\u0065ssage":"caf\u00e9 \"quoted\"\n","extra":{"deep":[[]]}}}"#,
    );
    assert_eq!(text(&r), "café \"quoted\"\n", "{r}");
    assert!(r["result"].get("isError").is_none_or(|e| e == false), "{r}");
}

#[test]
fn absent_or_null_arguments_are_an_empty_object() {
    let p = session("2025-11-25");
    for (id, params) in [
        (1, r#"{"name":"echo"}"#),
        (2, r#"{"name":"echo","arguments":null}"#),
    ] {
        let r = call_text(&p, id, params);
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert_eq!(
            text(&r),
            "Invalid arguments: message: required property missing",
            "{r}"
        );
    }
}

#[test]
fn a_type_stricter_than_its_schema_words_its_refusal_as_for_a_value() {
    let p = session("2025-11-25");
    let r = call_text(
        &p,
        1,
        r#"{"name":"strict","arguments":{"message":"m","extra":1}}"#,
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    // The message of a `Value` read, without the text position a read from text would add.
    assert_eq!(
        text(&r),
        "Invalid arguments: unknown field `extra`, expected `message`",
        "{r}"
    );
    // Before 2025-11-25 the same refusal is a protocol error.
    let p = session("2025-06-18");
    let r = call_text(
        &p,
        1,
        r#"{"name":"strict","arguments":{"message":"m","extra":1}}"#,
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(
        r["error"]["message"],
        "Invalid params: Invalid arguments for tool strict: unknown field `extra`, expected \
         `message`"
    );
}

#[test]
fn arguments_that_are_not_an_object_are_invalid_params() {
    let p = session("2025-11-25");
    for (id, args) in [(1, "5"), (2, "[]"), (3, r#""text""#)] {
        let r = call_text(&p, id, &format!(r#"{{"name":"echo","arguments":{args}}}"#));
        assert_eq!(r["error"]["code"], -32602, "{args}: {r}");
    }
    // A repeated member is the typed params' error, as it always was.
    let r = call_text(&p, 4, r#"{"name":"echo","name":"echo","arguments":{}}"#);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = call_text(&p, 5, r#"{"name":"nope","arguments":{}}"#);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Invalid params: Unknown tool: nope");
}

#[test]
fn a_repeated_argument_keeps_the_last_value() {
    let p = session("2025-11-25");
    // As a `Value` keeps it: the schema check and the handler see the last one.
    let r = call_text(
        &p,
        1,
        r#"{"name":"echo","arguments":{"message":"first","message":"last"}}"#,
    );
    assert_eq!(text(&r), "last", "{r}");
}

#[test]
fn arguments_nested_ten_thousand_deep_are_answered_not_a_crash() {
    let p = session("2025-11-25");
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    // In a member the tool ignores (its schema is open): valid JSON, valid arguments, skipped
    // without recursion.
    let r = call_text(
        &p,
        1,
        &format!(r#"{{"name":"echo","arguments":{{"message":"m","deep":{deep}}}}}"#),
    );
    assert_eq!(text(&r), "m", "{r}");
    // Where the tool reads it: past what the parser builds as a value, -32602.
    let r = call_text(
        &p,
        2,
        &format!(r#"{{"name":"echo","arguments":{{"message":{deep}}}}}"#),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // The session goes on.
    let r = call_text(&p, 3, r#"{"name":"echo","arguments":{"message":"after"}}"#);
    assert_eq!(text(&r), "after", "{r}");
}
