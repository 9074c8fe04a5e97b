//! The HTTP client against the crate's own server, 2026-07-28 era: the headers come from the
//! message (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, base64 for non-ASCII names, which
//! the server checks against the body), no session, closing the stream cancels.
#![cfg(feature = "client")]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Ctl, TestService, next};
use mcp_core::jsonrpc::{Message, Notification, Request, RequestId};
use mcp_http_blocking::client::{HttpClient, HttpClientConfig};
use mcp_http_blocking::{HttpConfig, HttpServer, ServerHandle};
use serde_json::{Value, json};

const V: &str = "2026-07-28";

fn start() -> (ServerHandle, Arc<Ctl>) {
    let ctl = Ctl::new();
    let h = HttpServer::builder()
        .bind("127.0.0.1:0")
        // Short keep-alives: the server notices a closed stream at its next write.
        .config(
            HttpConfig::builder()
                .keepalive(Duration::from_millis(100))
                .build(),
        )
        .io_timeout(Duration::from_secs(5))
        .build(TestService(ctl.clone()))
        .unwrap()
        .spawn()
        .unwrap();
    (h, ctl)
}

fn client(h: &ServerHandle) -> HttpClient {
    HttpClient::connect(
        &format!("http://{}/mcp", h.local_addr()),
        HttpClientConfig::default(),
    )
    .unwrap()
}

/// A 2026-07-28 request: the revision in `_meta`.
fn modern_req(id: i64, method: &str, mut params: Value) -> Message {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    Message::Request(Request::new(RequestId::Number(id), method, &params).unwrap())
}

fn result(m: &Message) -> Value {
    match m {
        Message::Response(r) => r.result().unwrap(),
        other => panic!("expected a response, got {other:?}"),
    }
}

#[test]
fn headers_match_the_body_even_for_non_ascii_names() {
    let (h, _ctl) = start();
    let mut c = client(&h);
    let rx = c.receiver();
    // The server answers 400/-32020 when Mcp-Method or Mcp-Name disagree with the body.
    c.sender()
        .send(modern_req(
            1,
            "tools/call",
            json!({"name": "日本語-tool", "arguments": {}}),
        ))
        .unwrap();
    let m = next(&rx);
    assert_eq!(result(&m)["echo"]["name"], "日本語-tool");
    c.sender()
        .send(modern_req(
            2,
            "resources/read",
            json!({"uri": "file:///tmp/ä b"}),
        ))
        .unwrap();
    assert_eq!(result(&next(&rx))["echo"]["uri"], "file:///tmp/ä b");
    c.sender()
        .send(modern_req(3, "prompts/get", json!({"name": "plain"})))
        .unwrap();
    assert_eq!(result(&next(&rx))["echo"]["name"], "plain");
    assert_eq!(c.session_id(), None, "2026-07-28 has no sessions");
    c.close();
    h.shutdown();
}

#[test]
fn errors_keep_their_status_meaning_and_the_request_id() {
    let (h, _ctl) = start();
    let mut c = client(&h);
    let rx = c.receiver();
    // Unknown method: 404 with a -32601 body.
    c.sender()
        .send(modern_req(7, "no/such", json!({})))
        .unwrap();
    match next(&rx) {
        Message::Error(e) => {
            assert_eq!(e.id, Some(RequestId::Number(7)));
            assert_eq!(e.error.code, -32601);
        }
        other => panic!("{other:?}"),
    }
    // An unsupported revision: 400 with -32022 and the supported list.
    let mut bad = json!({});
    bad["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2099-01-01"});
    let m = Message::Request(Request::new(RequestId::Number(8), "tools/list", &bad).unwrap());
    c.sender().send(m).unwrap();
    match next(&rx) {
        Message::Error(e) => {
            assert_eq!(e.id, Some(RequestId::Number(8)));
            assert_eq!(e.error.code, -32022);
        }
        other => panic!("{other:?}"),
    }
    c.close();
    h.shutdown();
}

#[test]
fn cancelling_closes_the_stream_and_the_server_sees_it() {
    let (h, ctl) = start();
    let mut c = client(&h);
    let rx = c.receiver();
    c.sender().send(modern_req(5, "gated", json!({}))).unwrap();
    assert_eq!(next(&rx).method(), Some("notifications/progress"));
    c.sender()
        .send(Message::Notification(
            Notification::new("notifications/cancelled", &json!({"requestId": 5})).unwrap(),
        ))
        .unwrap();
    // The server learns of it only through the closed stream (nothing is POSTed).
    assert_eq!(
        ctl.wait_for("closed:", Duration::from_secs(3)).as_deref(),
        Some("closed:5")
    );
    // The handler goes on and sends its second notification and its answer; nothing of them
    // is relayed: once the service has sent them, the next message the caller gets is the
    // answer to a new request.
    ctl.go_tx.send(()).unwrap();
    assert!(ctl.wait_for("sent", Duration::from_secs(5)).is_some());
    c.sender().send(modern_req(6, "ping", json!({}))).unwrap();
    assert_eq!(
        next(&rx).id(),
        Some(&RequestId::Number(6)),
        "nothing more is relayed for a cancelled request"
    );
    assert!(rx.try_recv().is_err());
    c.close();
    h.shutdown();
}

#[test]
fn closing_ends_open_streams() {
    let (h, ctl) = start();
    let mut c = client(&h);
    let rx = c.receiver();
    c.sender().send(modern_req(9, "gated", json!({}))).unwrap();
    assert_eq!(next(&rx).method(), Some("notifications/progress"));
    c.close();
    assert_eq!(
        ctl.wait_for("closed:", Duration::from_secs(3)).as_deref(),
        Some("closed:9")
    );
    h.shutdown();
}

#[test]
fn a_cancellation_is_not_held_up_by_requests_waiting_for_a_slot() {
    let (h, ctl) = start();
    let cfg = HttpClientConfig::builder().max_in_flight(1).build();
    let mut c = HttpClient::connect(&format!("http://{}/mcp", h.local_addr()), cfg).unwrap();
    let rx = c.receiver();
    c.sender().send(modern_req(1, "gated", json!({}))).unwrap();
    assert_eq!(next(&rx).method(), Some("notifications/progress"));
    // The only slot is taken: this one waits...
    c.sender().send(modern_req(2, "ping", json!({}))).unwrap();
    // ...and the cancellation of the first still gets through at once, freeing the slot.
    c.sender()
        .send(Message::Notification(
            Notification::new("notifications/cancelled", &json!({"requestId": 1})).unwrap(),
        ))
        .unwrap();
    assert_eq!(
        ctl.wait_for("closed:", Duration::from_secs(3)).as_deref(),
        Some("closed:1")
    );
    assert_eq!(next(&rx).id(), Some(&RequestId::Number(2)));
    c.close();
    h.shutdown();
}
