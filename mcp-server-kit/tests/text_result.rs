//! A tool that returns its text (`String`, `&str`) is answered without a `CallToolResult` being
//! built: the answer must be the very bytes a tool returning `CallToolResult::text` gets, in
//! every revision (shaped before 2025-11-25, written as is from then on, with `resultType` in
//! 2026-07-28), and a task's result the same value.
#![cfg(unix)]

mod common;

use common::stdio::Client;
use mcp_core::types::CallToolResult;
use mcp_server_kit::{Context, Error, NoArgs, Server, Tool};
use serde_json::{Value, json};

const TEXT: &str = "a \"quoted\" \\ line\nwith a tab\t, é ✓ 😀 and \u{1}";

fn server() -> Server {
    Server::builder("t", "1")
        .tool(Tool::new("owned", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(TEXT.to_owned())
        }))
        .tool(Tool::new("borrowed", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(TEXT)
        }))
        .tool(Tool::new("result", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(CallToolResult::text(TEXT))
        }))
        .build()
        .unwrap()
}

/// The answer lines to a call of each tool, with the id taken out (the same id is sent to
/// each, one at a time, so only the tool differs).
fn answers(c: &mut Client, meta: Option<Value>) -> Vec<String> {
    ["owned", "borrowed", "result"]
        .iter()
        .map(|tool| {
            let mut params = json!({"name": tool, "arguments": {}});
            if let Some(m) = &meta {
                params["_meta"] = m.clone();
            }
            c.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}));
            c.next_line()
        })
        .collect()
}

fn handshake(c: &mut Client, version: &str) {
    c.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}}),
    );
    assert_eq!(c.next()["result"]["protocolVersion"], version);
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

#[test]
fn a_text_answer_has_the_bytes_of_a_text_result_in_every_revision() {
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut c = Client::start(server());
        handshake(&mut c, version);
        let lines = answers(&mut c, None);
        assert_eq!(lines[0], lines[2], "{version}");
        assert_eq!(lines[1], lines[2], "{version}");
        let v: Value = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!(v["result"]["content"][0]["text"], TEXT, "{version}");
    }
    // 2026-07-28: no handshake, each request carries its revision; the answer says it is
    // complete.
    let mut c = Client::start(server());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let lines = answers(&mut c, Some(meta));
    assert_eq!(lines[0], lines[2]);
    assert_eq!(lines[1], lines[2]);
    let v: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(v["result"]["content"][0]["text"], TEXT);
}
