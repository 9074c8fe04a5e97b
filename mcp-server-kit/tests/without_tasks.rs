//! A kit built without the `tasks` feature (the default) serves no tasks: to a 2026-07-28
//! client that declared the tasks extension it does not declare it back, answers `tasks/*`
//! as methods it does not have, and runs every `tools/call` as an ordinary call. Run by
//! `cargo test -p mcp-server-kit`, which selects the kit alone, so no other crate of the
//! workspace turns the feature on.
#![cfg(not(feature = "tasks"))]

use mcp_server_kit::types::tasks_ext::EXTENSION_ID;
use mcp_server_kit::{Context, Error, NoArgs, Server, Tool};
use serde_json::{Value, json};

mod common;
use common::Peer;

/// `params` of a 2026-07-28 request from a client that declared the tasks extension.
fn modern(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION_ID: {}}}
    });
    params
}

#[test]
fn a_server_without_the_feature_declares_no_tasks_and_answers_them_method_not_found() {
    let server = Server::builder("plain", "1")
        .tool(Tool::new("hello", |_: NoArgs, _: &Context| {
            Ok::<_, Error>("hi")
        }))
        .build()
        .unwrap();
    let p = Peer::open(&server);

    // What a 2026-07-28 client learns in place of an initialize result.
    let r = p.request(1, "server/discover", modern(json!({})));
    let caps = &r["result"]["capabilities"];
    assert!(caps["tools"].is_object(), "{r}");
    assert!(caps["extensions"][EXTENSION_ID].is_null(), "{r}");
    assert!(server.capabilities()["extensions"][EXTENSION_ID].is_null());

    // The methods of the extension are not there, as any method the kit does not serve.
    for (id, method, params) in [
        (2, "tasks/get", json!({"taskId": "t"})),
        (3, "tasks/cancel", json!({"taskId": "t"})),
        (
            4,
            "tasks/update",
            json!({"taskId": "t", "inputResponses": {}}),
        ),
    ] {
        let r = p.request(id, method, modern(params));
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
        assert_eq!(
            r["error"]["message"],
            format!("Method not found: {method}"),
            "{r}"
        );
    }

    // A call from a client that could follow a task is answered with the tool's result.
    let r = p.request(5, "tools/call", modern(json!({"name": "hello"})));
    assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    assert_ne!(r["result"]["resultType"], "task", "{r}");
}
