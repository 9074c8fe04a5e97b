//! Legacy era (2025-03-26 .. 2025-11-25) and the 2024-11-05 HTTP+SSE transport, over real
//! sockets.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;
use mcp_http_blocking::{HttpConfig, ServerHandle};
use serde_json::json;

type Header<'a> = (&'a str, &'a str);

/// POSTs `body` in the session and opens its SSE answer.
fn post_stream(a: SocketAddr, sid: Header<'_>, pv: Header<'_>, body: &[u8]) -> SseClient {
    SseClient::open(a, "POST", "/mcp", &[ACCEPT_BOTH, JSON_CT, sid, pv], body)
}

/// Resumes a stream of the session with `Last-Event-ID: last`.
fn resume(a: SocketAddr, sid: Header<'_>, pv: Header<'_>, last: &str) -> SseClient {
    SseClient::open(
        a,
        "GET",
        "/mcp",
        &[
            ("Accept", "text/event-stream"),
            sid,
            pv,
            ("Last-Event-ID", last),
        ],
        b"",
    )
}

fn init(h: &ServerHandle, version: &str) -> String {
    open_session(h.local_addr(), version)
}

#[test]
fn initialize_mints_a_session_and_session_rules_hold() {
    let (h, _) = serve(HttpConfig::default(), Duration::from_secs(5));
    let a = h.local_addr();
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 200);
    // The answer came alone and at once: plain JSON.
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-06-18");
    let sid = r.header("mcp-session-id").unwrap().to_owned();
    assert!(sid.len() >= 32 && sid.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let sid_h = ("Mcp-Session-Id", sid.as_str());
    let pv = ("MCP-Protocol-Version", "2025-06-18");

    // A notification: 202, no body.
    let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, sid_h, pv],
        n.as_bytes(),
    );
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());
    // A response from the client: 202 too.
    let resp = json!({"jsonrpc": "2.0", "id": 77, "result": {}}).to_string();
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, sid_h, pv],
        resp.as_bytes(),
    );
    assert_eq!(r.status, 202);

    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, sid_h, pv],
        &rpc(2, "ping", json!({})),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["id"], 2);
    // Missing session id: 400. Unknown: 404.
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, pv],
        &rpc(3, "ping", json!({})),
    );
    assert_eq!(r.status, 400);
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, pv, ("Mcp-Session-Id", "nope")],
        &rpc(3, "ping", json!({})),
    );
    assert_eq!(r.status, 404);
    // An invalid protocol version header: 400; a missing one means 2025-03-26 and is accepted.
    let r = request(
        a,
        "POST",
        "/mcp",
        &[
            ACCEPT_BOTH,
            JSON_CT,
            sid_h,
            ("MCP-Protocol-Version", "1999-01-01"),
        ],
        &rpc(4, "ping", json!({})),
    );
    assert_eq!(r.status, 400);
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, sid_h],
        &rpc(5, "ping", json!({})),
    );
    assert_eq!(r.status, 200);
    // Wrong content type: 415.
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, ("Content-Type", "text/plain"), sid_h],
        &rpc(6, "ping", json!({})),
    );
    assert_eq!(r.status, 415);
    // Not JSON: 400 with a parse error body.
    let r = request(a, "POST", "/mcp", &[ACCEPT_BOTH, JSON_CT, sid_h], b"{nope");
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], -32700);
    // DELETE ends the session; afterwards it is unknown.
    let r = request(a, "DELETE", "/mcp", &[sid_h, pv], b"");
    assert_eq!(r.status, 200);
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, sid_h, pv],
        &rpc(7, "ping", json!({})),
    );
    assert_eq!(r.status, 404);
    h.shutdown();
}

#[test]
fn get_and_delete_can_be_disabled() {
    let cfg = HttpConfig::builder()
        .enable_get_stream(false)
        .enable_delete(false)
        .build();
    let (h, _) = serve(cfg, Duration::from_secs(5));
    let sid = init(&h, "2025-11-25");
    let sid_h = ("Mcp-Session-Id", sid.as_str());
    assert_eq!(
        request(
            h.local_addr(),
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream"), sid_h],
            b""
        )
        .status,
        405
    );
    assert_eq!(
        request(h.local_addr(), "DELETE", "/mcp", &[sid_h], b"").status,
        405
    );
    let put = request(h.local_addr(), "PUT", "/mcp", &[sid_h], b"");
    assert_eq!(put.status, 405);
    // `Allow` names what is served here: not GET or DELETE, switched off.
    assert_eq!(put.header("allow"), Some("POST, OPTIONS"));
    let (full, _) = serve(HttpConfig::default(), Duration::from_secs(5));
    let put = request(full.local_addr(), "PUT", "/mcp", &[], b"");
    assert_eq!(put.header("allow"), Some("GET, POST, DELETE, OPTIONS"));
    assert_eq!(
        request(
            h.local_addr(),
            "POST",
            "/elsewhere",
            &[ACCEPT_BOTH, JSON_CT],
            b"{}"
        )
        .status,
        404
    );
}

#[test]
fn related_notifications_make_an_sse_answer_with_priming_and_ids() {
    let (h, _) = serve(HttpConfig::default(), Duration::from_secs(5));
    let sid = init(&h, "2025-11-25");
    let hs = [
        ACCEPT_BOTH,
        JSON_CT,
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let mut s = SseClient::open(
        h.local_addr(),
        "POST",
        "/mcp",
        &hs,
        &rpc(9, "progress", json!({})),
    );
    assert_eq!(s.status, 200);
    assert_eq!(
        s.headers.get("content-type").map(String::as_str),
        Some("text/event-stream")
    );
    assert_eq!(
        s.headers.get("x-accel-buffering").map(String::as_str),
        Some("no")
    );
    let priming = s.next().unwrap();
    assert!(priming.id.is_some() && priming.data.is_empty() && priming.retry.is_some());
    let n = s.next().unwrap();
    assert!(n.data.contains("notifications/progress"));
    let done = s.next().unwrap();
    assert!(done.data.contains(r#""id":9"#));
    let ids = [priming.id.unwrap(), n.id.unwrap(), done.id.unwrap()];
    assert!(ids[0] != ids[1] && ids[1] != ids[2]);
    assert!(s.next().is_none(), "the stream ends after the answer");
}

#[test]
fn a_client_that_takes_only_sse_never_gets_plain_json() {
    // A lone, quick answer goes back as plain JSON to a client that takes both; to one that
    // listed only `text/event-stream` it comes as an SSE event, in either era.
    let (h, _) = serve(HttpConfig::default(), Duration::from_secs(5));
    let a = h.local_addr();
    let sid = init(&h, "2025-06-18");
    let sse_only = ("Accept", "text/event-stream");
    let mut s = SseClient::open(
        a,
        "POST",
        "/mcp",
        &[sse_only, JSON_CT, ("Mcp-Session-Id", sid.as_str())],
        &rpc(9, "ping", json!({})),
    );
    assert_eq!(s.status, 200);
    assert_eq!(
        s.headers.get("content-type").map(String::as_str),
        Some("text/event-stream")
    );
    assert!(s.next().unwrap().data.contains(r#""id":9"#));
    let modern = rpc(
        10,
        "ping",
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}),
    );
    let mut s = SseClient::open(
        a,
        "POST",
        "/mcp",
        &[
            sse_only,
            JSON_CT,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "ping"),
        ],
        &modern,
    );
    assert_eq!(s.status, 200);
    assert_eq!(
        s.headers.get("content-type").map(String::as_str),
        Some("text/event-stream")
    );
    assert!(s.next().unwrap().data.contains(r#""id":10"#));
}

#[test]
fn a_json_only_client_gets_json_even_with_notifications_first() {
    let (h, _) = serve(HttpConfig::default(), Duration::from_secs(5));
    let sid = init(&h, "2025-06-18");
    let hs = [
        ("Accept", "application/json"),
        JSON_CT,
        ("Mcp-Session-Id", sid.as_str()),
    ];
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &hs,
        &rpc(9, "progress", json!({})),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["done"], true);
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[
            ("Accept", "image/png"),
            JSON_CT,
            ("Mcp-Session-Id", sid.as_str()),
        ],
        &rpc(9, "ping", json!({})),
    );
    assert_eq!(r.status, 406);
}

#[test]
fn unrelated_messages_go_to_the_get_stream_and_only_one_may_be_open() {
    let (h, _) = serve(HttpConfig::default(), Duration::from_secs(5));
    let a = h.local_addr();
    let sid = init(&h, "2025-06-18");
    let sid_h = ("Mcp-Session-Id", sid.as_str());
    let hs = [ACCEPT_BOTH, JSON_CT, sid_h];
    // Without a GET stream the unrelated message has nowhere to go.
    let r = request(
        a,
        "POST",
        "/mcp",
        &hs,
        &rpc(2, "notify_unrelated", json!({})),
    );
    assert_eq!(r.json()["result"]["sent"], false);
    assert_eq!(
        request(
            a,
            "GET",
            "/mcp",
            &[("Accept", "application/json"), sid_h],
            b""
        )
        .status,
        406
    );
    assert_eq!(
        request(a, "GET", "/mcp", &[("Accept", "text/event-stream")], b"").status,
        400
    );
    let mut get = SseClient::open(
        a,
        "GET",
        "/mcp",
        &[("Accept", "text/event-stream"), sid_h],
        b"",
    );
    assert_eq!(get.status, 200);
    assert_eq!(
        request(
            a,
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream"), sid_h],
            b""
        )
        .status,
        409
    );
    let r = request(
        a,
        "POST",
        "/mcp",
        &hs,
        &rpc(3, "notify_unrelated", json!({})),
    );
    assert_eq!(r.json()["result"]["sent"], true);
    let ev = get.next().unwrap();
    assert!(ev.data.contains("notifications/message"), "{ev:?}");
    // Ending the session ends its GET stream.
    assert_eq!(request(a, "DELETE", "/mcp", &[sid_h], b"").status, 200);
    assert!(get.next().is_none());
}

#[test]
fn the_server_may_end_a_post_stream_early_and_the_client_resumes_it() {
    let (h, ctl) = serve(HttpConfig::default(), Duration::from_secs(5));
    let a = h.local_addr();
    let sid = init(&h, "2025-11-25");
    let sid_h = ("Mcp-Session-Id", sid.as_str());
    let pv = ("MCP-Protocol-Version", "2025-11-25");
    let mut s = post_stream(a, sid_h, pv, &rpc(7, "poll", json!({})));
    assert_eq!(s.status, 200);
    let priming = s.next().unwrap();
    assert!(priming.data.is_empty() && priming.id.is_some());
    // The server lets go of the connection: the response ends without the answer.
    assert_eq!(
        ctl.wait_for("released:", Duration::from_secs(10))
            .as_deref(),
        Some("released:true")
    );
    assert!(
        s.next().is_none(),
        "the stream ends after the priming event"
    );
    // The answer is produced while nobody is connected, and replayed on resumption.
    ctl.go_tx.send(()).unwrap();
    assert!(ctl.wait_for("sent", Duration::from_secs(10)).is_some());
    let mut r = resume(a, sid_h, pv, priming.id.as_deref().unwrap());
    assert_eq!(r.status, 200);
    let got: Vec<String> = std::iter::from_fn(|| r.next()).map(|e| e.data).collect();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].contains(r#""polled":true"#), "{got:?}");
    h.shutdown();
}

#[test]
fn a_stream_the_client_cannot_resume_is_not_ended_early() {
    let (h, ctl) = serve(HttpConfig::default(), Duration::from_secs(5));
    let a = h.local_addr();
    // 2025-06-18: no priming event, so no event id to resume from.
    let sid = init(&h, "2025-06-18");
    let sid_h = ("Mcp-Session-Id", sid.as_str());
    let pv = ("MCP-Protocol-Version", "2025-06-18");
    let mut s = post_stream(a, sid_h, pv, &rpc(8, "poll", json!({})));
    assert_eq!(
        ctl.wait_for("released:", Duration::from_secs(10))
            .as_deref(),
        Some("released:false")
    );
    ctl.go_tx.send(()).unwrap();
    let got: Vec<String> = std::iter::from_fn(|| s.next()).map(|e| e.data).collect();
    assert!(
        got.iter().any(|d| d.contains(r#""polled":true"#)),
        "{got:?}"
    );
    h.shutdown();
}

#[test]
fn a_cut_stream_resumes_with_nothing_lost_and_nothing_repeated() {
    let (h, ctl) = serve(HttpConfig::default(), Duration::from_secs(5));
    let a = h.local_addr();
    let sid = init(&h, "2025-11-25");
    let sid_h = ("Mcp-Session-Id", sid.as_str());
    let pv = ("MCP-Protocol-Version", "2025-11-25");
    let mut s = post_stream(a, sid_h, pv, &rpc(5, "gated", json!({})));
    let priming = s.next().unwrap();
    assert!(priming.data.is_empty());
    let first = s.next().unwrap();
    assert!(first.data.contains(r#""progress":1"#));
    s.cut();
    // Let the service go on while nobody is connected.
    ctl.go_tx.send(()).unwrap();
    assert!(ctl.wait_for("sent", Duration::from_secs(10)).is_some());
    let last_id = first.id.clone().unwrap();
    let mut r = resume(a, sid_h, pv, &last_id);
    assert_eq!(r.status, 200);
    let mut got = Vec::new();
    while let Some(e) = r.next() {
        got.push(e);
    }
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].data.contains(r#""progress":2"#));
    assert!(got[1].data.contains(r#""gated":true"#));
    // Resuming from the priming event replays everything of that stream, once, in order.
    let mut r = resume(a, sid_h, pv, priming.id.as_deref().unwrap());
    let mut all = Vec::new();
    while let Some(e) = r.next() {
        all.push(e.data);
    }
    assert_eq!(all.len(), 3);
    assert!(all[0].contains(r#""progress":1"#));
    // A malformed cursor is refused.
    let r = request(
        a,
        "GET",
        "/mcp",
        &[
            ("Accept", "text/event-stream"),
            sid_h,
            ("Last-Event-ID", "garbage"),
        ],
        b"",
    );
    assert_eq!(r.status, 400);
}

#[test]
fn idle_sessions_expire() {
    let cfg = HttpConfig::builder()
        .session_idle(Duration::from_millis(200))
        .sweep_interval(Duration::from_millis(20))
        .build();
    let (h, ctl) = serve(cfg, Duration::from_secs(5));
    let sid = init(&h, "2025-06-18");
    assert_eq!(h.core().session_count(), 1);
    // The sweeper closes it: the service hears about it, and the id is then unknown.
    assert!(
        ctl.wait_for("session-closed", Duration::from_secs(5))
            .is_some()
    );
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("Mcp-Session-Id", sid.as_str())],
        &rpc(2, "ping", json!({})),
    );
    assert_eq!(r.status, 404);
    assert_eq!(h.core().session_count(), 0);
}

#[test]
fn at_the_session_cap_the_longest_idle_session_makes_room() {
    let cfg = HttpConfig::builder().max_sessions(2).build();
    let (h, _) = serve(cfg, Duration::from_secs(5));
    let a = h.local_addr();
    let ping = |sid: &str| {
        request(
            a,
            "POST",
            "/mcp",
            &[ACCEPT_BOTH, JSON_CT, ("Mcp-Session-Id", sid)],
            &rpc(2, "ping", json!({})),
        )
        .status
    };
    let first = init(&h, "2025-06-18");
    let second = init(&h, "2025-06-18");
    // Full, both idle: the first (idle longest) is closed for the third.
    let third = init(&h, "2025-06-18");
    assert_eq!(ping(&first), 404);
    assert_eq!(ping(&second), 200);
    assert_eq!(h.core().session_count(), 2);
    // Both open sessions busy (a connection on their GET streams): refused, to be retried.
    let get = |sid: &str| SseClient::get_stream(a, sid);
    let (g2, g3) = (get(&second), get(&third));
    assert_eq!((g2.status, g3.status), (200, 200));
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("5"));
    // The refusal answers the `initialize` by its id.
    assert_eq!(r.json()["id"], 1, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["error"]["message"], "too many sessions");
}

#[test]
fn batches_only_where_2025_03_26_is_negotiated() {
    let (h, _) = serve(HttpConfig::default(), Duration::from_secs(5));
    let batch = format!(
        "[{},{}]",
        String::from_utf8(rpc(2, "ping", json!({}))).unwrap(),
        String::from_utf8(rpc(3, "echo", json!({"x": 1}))).unwrap()
    );
    let old = init(&h, "2025-03-26");
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[
            ("Accept", "application/json"),
            JSON_CT,
            ("Mcp-Session-Id", old.as_str()),
        ],
        batch.as_bytes(),
    );
    assert_eq!(r.status, 200);
    let v = r.json();
    let ids: Vec<i64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&2) && ids.contains(&3));
    // The same batch over SSE: two answers, then the end.
    let mut s = SseClient::open(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("Mcp-Session-Id", old.as_str())],
        batch.as_bytes(),
    );
    let mut n = 0;
    while let Some(e) = s.next() {
        if !e.data.is_empty() {
            n += 1;
        }
    }
    assert_eq!(n, 2);
    let new = init(&h, "2025-06-18");
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("Mcp-Session-Id", new.as_str())],
        batch.as_bytes(),
    );
    assert_eq!(r.status, 400);
}

/// A request that reuses the id of one in flight on another POST is refused (-32600) without
/// taking the id's route: the request in flight still gets its answer on its own stream.
#[test]
fn a_reused_id_in_flight_is_refused_and_the_first_request_keeps_its_answer() {
    let (h, ctl) = serve(HttpConfig::default(), Duration::from_secs(5));
    let a = h.local_addr();
    let sid = init(&h, "2025-06-18");
    let sid_h = ("Mcp-Session-Id", sid.as_str());
    let pv = ("MCP-Protocol-Version", "2025-06-18");
    let mut s = post_stream(a, sid_h, pv, &rpc(5, "gated", json!({})));
    assert!(s.next().unwrap().data.contains(r#""progress":1"#));
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, sid_h, pv],
        &rpc(5, "ping", json!({})),
    );
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(v["id"], 5);
    assert_eq!(v["error"]["code"], -32600, "{v}");
    ctl.go_tx.send(()).unwrap();
    let mut rest = Vec::new();
    while let Some(e) = s.next() {
        rest.push(e.data);
    }
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert!(rest[1].contains(r#""gated":true"#), "{rest:?}");
}

/// A batch is answered with an array, a batch of one request too (JSON-RPC 2.0 §6).
#[test]
fn a_batch_of_one_is_answered_with_an_array() {
    let (h, _) = serve(HttpConfig::default(), Duration::from_secs(5));
    let old = init(&h, "2025-03-26");
    let batch = format!(
        "[{}]",
        String::from_utf8(rpc(2, "ping", json!({}))).unwrap()
    );
    for accept in [("Accept", "application/json"), ACCEPT_BOTH] {
        let r = request(
            h.local_addr(),
            "POST",
            "/mcp",
            &[accept, JSON_CT, ("Mcp-Session-Id", old.as_str())],
            batch.as_bytes(),
        );
        assert_eq!(r.status, 200);
        let body = String::from_utf8_lossy(&r.body).into_owned();
        if r.header("content-type") == Some("application/json") {
            let v = r.json();
            assert_eq!(v.as_array().map(Vec::len), Some(1), "{body}");
            assert_eq!(v[0]["id"], 2);
        } else {
            // Over SSE the answer is an event; what matters is that a JSON-only client
            // gets an array, checked above.
            assert!(body.contains(r#""id":2"#), "{body}");
        }
    }
}

#[test]
fn the_2024_11_05_http_sse_transport_works() {
    // Short keep-alives: the server notices a client that hung up when it next writes.
    let cfg = HttpConfig::builder()
        .keepalive(Duration::from_millis(50))
        .build();
    let (h, ctl) = serve(cfg, Duration::from_secs(5));
    let a = h.local_addr();
    let mut s = SseClient::open(a, "GET", "/sse", &[("Accept", "text/event-stream")], b"");
    assert_eq!(s.status, 200);
    let ep = s.next().unwrap();
    assert_eq!(ep.event.as_deref(), Some("endpoint"));
    assert!(ep.data.starts_with("/messages?sessionId="));
    let r = request(a, "POST", &ep.data, &[JSON_CT], &init_body("2024-11-05"));
    assert_eq!(r.status, 202);
    let ans = s.next().unwrap();
    assert_eq!(ans.event.as_deref(), Some("message"));
    assert!(ans.data.contains("2024-11-05"));
    let r = request(a, "POST", &ep.data, &[JSON_CT], &rpc(2, "ping", json!({})));
    assert_eq!(r.status, 202);
    assert!(s.next().unwrap().data.contains(r#""id":2"#));
    assert_eq!(
        request(
            a,
            "POST",
            "/messages?sessionId=unknown",
            &[JSON_CT],
            &rpc(3, "ping", json!({}))
        )
        .status,
        404
    );
    assert_eq!(
        request(
            a,
            "POST",
            "/messages",
            &[JSON_CT],
            &rpc(3, "ping", json!({}))
        )
        .status,
        400
    );
    // Closing the stream ends the session (seen at the next keep-alive): the service is told,
    // and the session is out of the table before that (it is removed, then closed), so its
    // endpoint is gone.
    s.cut();
    assert!(
        ctl.wait_for("session-closed", Duration::from_secs(5))
            .is_some()
    );
    let r = request(a, "POST", &ep.data, &[JSON_CT], &rpc(4, "ping", json!({})));
    assert_eq!(r.status, 404);
}

#[test]
fn idle_streams_carry_keep_alive_comments() {
    let cfg = HttpConfig::builder()
        .keepalive(std::time::Duration::from_millis(30))
        .build();
    let (h, _) = serve(cfg, Duration::from_secs(5));
    let sid = init(&h, "2025-06-18");
    let sid_h = ("Mcp-Session-Id", sid.as_str());
    let mut get = SseClient::open(
        h.local_addr(),
        "GET",
        "/mcp",
        &[("Accept", "text/event-stream"), sid_h],
        b"",
    );
    // Two keep-alives arrive on the idle stream (read as they come, not waited for by time).
    assert!(get.wait_comments(2), "the stream ended");
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, sid_h],
        &rpc(2, "notify_unrelated", json!({})),
    );
    assert_eq!(r.json()["result"]["sent"], true);
    let ev = get.next().unwrap();
    assert!(ev.data.contains("notifications/message"), "{ev:?}");
    assert!(get.comments >= 2, "{} comments", get.comments);
}
