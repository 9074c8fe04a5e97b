//! JSON-RPC read by value over HTTP, as stdio reads it (the one codec in mcp-core): escaped
//! members, integer-valued ids in any spelling, batch elements that are not objects or not
//! valid, repeated ids in a batch, notifications never answered, and errors that carry the
//! request's id.

mod common;

use common::*;
use mcp_http_blocking::{HttpConfig, ServerHandle};
use serde_json::{Value, json};

/// A 2025-03-26 session (the revision with batches); returns its id.
fn session(h: &ServerHandle) -> String {
    open_session(h.local_addr(), "2025-03-26")
}

/// POSTs raw `body` in the session; the client accepts JSON only, so answers come as JSON.
fn post(h: &ServerHandle, sid: &str, body: &str) -> Resp {
    request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[
            ("Accept", "application/json"),
            JSON_CT,
            ("Mcp-Session-Id", sid),
            ("MCP-Protocol-Version", "2025-03-26"),
        ],
        body.as_bytes(),
    )
}

fn answers(r: &Resp) -> Vec<Value> {
    match r.json() {
        Value::Array(a) => a,
        v => vec![v],
    }
}

#[test]
fn escaped_members_are_read_by_value() {
    let h = start(HttpConfig::default());
    let sid = session(&h);
    let r = post(&h, &sid, r#"{"jsonrpc":"\u0032.0","id":7,"method":"ping"}"#);
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
    let r = post(
        &h,
        &sid,
        r#"{"jsonrpc":"2\u002e0","method":"notifications/initialized"}"#,
    );
    assert_eq!(r.status, 202, "a notification is accepted");
    assert!(r.body.is_empty(), "and never answered");
}

#[test]
fn integer_valued_ids_in_any_spelling_are_integers() {
    let h = start(HttpConfig::default());
    let sid = session(&h);
    for (text, id) in [("-0", 0), ("1.0", 1), ("1e0", 1), ("2E1", 20)] {
        let r = post(
            &h,
            &sid,
            &format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"ping"}}"#),
        );
        assert_eq!(r.status, 200, "{text}");
        assert_eq!(r.json()["id"], json!(id), "{text}");
        assert_eq!(r.json()["result"], json!({}), "{text}");
    }
}

#[test]
fn a_batch_element_that_is_not_a_valid_message_gets_its_own_error() {
    let h = start(HttpConfig::default());
    let sid = session(&h);
    let invalid = |v: &Value| v["error"]["code"] == -32600 && v["id"].is_null();
    // A positional array is not a request: nothing runs, the element is refused.
    let r = post(
        &h,
        &sid,
        r#"[["2.0",6,"tools/call",{"name":"test_simple_text","arguments":{}}]]"#,
    );
    assert_eq!(r.status, 200);
    let a = answers(&r);
    assert_eq!(a.len(), 1, "{a:?}");
    assert!(invalid(&a[0]), "{a:?}");
    for body in ["[{}]", "[[]]"] {
        let a = answers(&post(&h, &sid, body));
        assert_eq!(a.len(), 1, "{body}: {a:?}");
        assert!(invalid(&a[0]), "{body}: {a:?}");
    }
    // A readable id is echoed.
    let a = answers(&post(
        &h,
        &sid,
        r#"[{"jsonrpc":"1.0","id":6,"method":"ping"}]"#,
    ));
    assert_eq!(a.len(), 1);
    assert_eq!(
        (a[0]["id"].clone(), a[0]["error"]["code"].clone()),
        (json!(6), json!(-32600))
    );
    // A valid element and an invalid one: both answered.
    let a = answers(&post(
        &h,
        &sid,
        r#"[{"jsonrpc":"2.0","id":8,"method":"ping"}, -1]"#,
    ));
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(
        a.iter().any(|v| v["id"] == 8 && v["result"] == json!({})),
        "{a:?}"
    );
    assert!(a.iter().any(invalid), "{a:?}");
}

#[test]
fn a_batch_repeating_an_id_is_answered_and_its_stream_ends() {
    let h = start(HttpConfig::default());
    let sid = session(&h);
    let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    let a = answers(&post(&h, &sid, &format!("[{ping},{ping}]")));
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(
        a.iter().any(|v| v["id"] == 7 && v["result"] == json!({})),
        "{a:?}"
    );
    assert!(
        a.iter()
            .any(|v| v["id"] == 7 && v["error"]["code"] == -32600),
        "{a:?}"
    );
    // Over SSE too: the stream ends once both answers are written (read_response reads the
    // chunked body to its end).
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[
            ACCEPT_BOTH,
            JSON_CT,
            ("Mcp-Session-Id", &sid),
            ("MCP-Protocol-Version", "2025-03-26"),
        ],
        format!("[{ping},{ping}]").as_bytes(),
    );
    assert_eq!(r.status, 200);
    let text = String::from_utf8_lossy(&r.body);
    assert_eq!(text.matches("data: ").count(), 2, "{text}");
}

#[test]
fn an_invalid_notification_is_refused_without_an_answer() {
    let h = start(HttpConfig::default());
    let sid = session(&h);
    let r = post(
        &h,
        &sid,
        r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(r.status, 400);
    assert!(r.body.is_empty(), "{}", String::from_utf8_lossy(&r.body));
    // In a batch it is dropped; the rest is answered.
    let a = answers(&post(
        &h,
        &sid,
        r#"[{"jsonrpc":"1.0","method":"notifications/x"},{"jsonrpc":"2.0","id":3,"method":"ping"}]"#,
    ));
    assert_eq!(a, vec![json!({"jsonrpc": "2.0", "id": 3, "result": {}})]);
}

#[test]
fn initialize_sent_as_2026_07_28_is_a_method_that_does_not_exist_there() {
    let h = start(HttpConfig::default());
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("MCP-Protocol-Version", "2026-07-28")],
        &init_body("2026-07-28"),
    );
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["id"], 1, "the id was readable");
    assert_eq!(r.json()["error"]["code"], -32601);
}

#[test]
fn version_errors_carry_the_request_id() {
    let h = start(HttpConfig::default());
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("MCP-Protocol-Version", "1999-01-01")],
        &rpc(5, "ping", json!({})),
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["id"], 5);
    let supported = r.json()["error"]["data"]["supported"].clone();
    assert!(!supported.as_array().unwrap().contains(&json!("1999-01-01")));
}
