//! Server pings over HTTP (issue 20): with the kit's `ping_every`, a legacy session whose
//! client answers no ping (its GET stream open, so the session never expires as idle) is
//! closed by the server after the configured misses: the GET stream ends and later requests
//! for the session get 404. Off by default.

mod common;

use common::{ACCEPT_BOTH, JSON_CT, SseClient, open_session, request, rpc};
use mcp_http_blocking::HttpServer;
use mcp_server_kit::Server;
use serde_json::{Value, json};
use std::time::Duration;

const VERSION: &str = "2025-11-25";

#[test]
fn a_legacy_session_whose_client_answers_no_ping_is_closed() {
    let server = Server::builder("ping", "1")
        .ping_every(Duration::from_millis(50), 2)
        .build()
        .unwrap();
    let handle = HttpServer::builder()
        .build(server)
        .unwrap()
        .spawn()
        .unwrap();
    let addr = handle.local_addr();
    let sid = open_session(addr, VERSION);
    let headers = [
        ACCEPT_BOTH,
        JSON_CT,
        ("MCP-Protocol-Version", VERSION),
        ("Mcp-Session-Id", sid.as_str()),
    ];
    let r = request(
        addr,
        "POST",
        "/mcp",
        &headers,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(r.status, 202);
    let mut get = SseClient::open(addr, "GET", "/mcp", &headers, b"");
    assert_eq!(get.status, 200);
    // The pings arrive on the GET stream; the client answers none, and the stream ends.
    let mut pings = 0;
    while let Some(ev) = get.next() {
        let v: Value = serde_json::from_str(&ev.data).unwrap_or(Value::Null);
        if v["method"] == "ping" {
            pings += 1;
        }
    }
    assert!(pings >= 1, "no ping before the end");
    let r = request(addr, "POST", "/mcp", &headers, &rpc(2, "ping", json!({})));
    assert_eq!(r.status, 404, "{}", String::from_utf8_lossy(&r.body));
}
