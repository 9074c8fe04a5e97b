//! Rate limits (issue 20): a client that calls a tool in a tight loop is refused with
//! -32005 and `retryAfterMs`, one that stays under the limit never is, a tool's own limit
//! applies even over stdio, 2026-07-28 exchanges count per client (authorized client or peer
//! address), and excess progress and log notifications are dropped and counted, never queued.
//!
//! No test depends on timing: the limits either refill far slower than any loop runs (one a
//! minute) or hold the whole loop in their burst.

use std::net::SocketAddr;
use std::time::Duration;

use mcp_core::jsonrpc::codes;
use mcp_core::service::{SessionInfo, TransportKind};
use mcp_core::types::LoggingLevel;
use mcp_core::version::ProtocolVersion;
use mcp_server_kit::{Context, Error, NoArgs, RateLimit, RateLimits, Server, Tool};
use serde_json::{Value, json};

mod common;
use common::Peer;

const VERSION: &str = "2025-11-25";

fn quiet() -> Tool {
    Tool::new("quiet", |_: NoArgs, _: &Context| Ok::<_, Error>("ok"))
}

/// One token a minute: after the burst, nothing comes back while a test runs.
fn slow(burst: u32) -> RateLimit {
    RateLimit::new(1, Duration::from_secs(60), burst)
}

fn call(p: &Peer, id: i64, name: &str) -> Value {
    p.request(id, "tools/call", json!({"name": name}))
}

fn limited(answer: &Value) -> bool {
    answer["error"]["code"] == codes::RATE_LIMITED
}

/// A session of `server` over HTTP (legacy era), initialized.
fn http_peer(server: &Server) -> Peer {
    let p = Peer::open_with(server, SessionInfo::new(TransportKind::StreamableHttp));
    p.initialize(VERSION, json!({}));
    p
}

#[test]
fn a_tight_loop_of_tool_calls_over_http_is_limited_by_default() {
    let server = Server::builder("t", "1").tool(quiet()).build().unwrap();
    let p = http_peer(&server);
    let answers: Vec<Value> = (1..=1000).map(|i| call(&p, i, "quiet")).collect();
    let refused: Vec<&Value> = answers.iter().filter(|a| limited(a)).collect();
    // The default burst is 100 and 50 come back per second: however fast the loop ran, most
    // of the thousand were refused (all would pass only if it took 18 s).
    assert!(refused.len() >= 500, "{} refused", refused.len());
    let e = &refused[0]["error"];
    assert!(e["data"]["retryAfterMs"].as_u64().unwrap() >= 1, "{e}");
    assert!(e["message"].as_str().unwrap().contains("tools/call"), "{e}");
    // The first hundred (the burst) all ran.
    assert!(answers[..100].iter().all(|a| a["result"].is_object()));
    assert_eq!(server.rate_limited().tool_calls, refused.len() as u64);
}

#[test]
fn a_client_under_the_limit_is_never_refused() {
    // The whole loop fits in the burst, so the outcome does not depend on its speed.
    let limits = RateLimits::builder()
        .tool_calls(Some(RateLimit::per_second(50, 1000)))
        .build();
    let server = Server::builder("t", "1")
        .tool(quiet())
        .rate_limits(limits)
        .build()
        .unwrap();
    let p = http_peer(&server);
    for i in 1..=1000 {
        let a = call(&p, i, "quiet");
        assert!(a["result"].is_object(), "call {i}: {a}");
    }
    assert_eq!(server.rate_limited().tool_calls, 0);
}

#[test]
fn stdio_is_not_limited_by_default_but_a_tools_own_limit_applies_everywhere() {
    let guarded = Tool::new("guarded", |_: NoArgs, _: &Context| Ok::<_, Error>("ok"))
        .rate_limit(Some(slow(5)));
    let free = Tool::new("free", |_: NoArgs, _: &Context| Ok::<_, Error>("ok")).rate_limit(None);
    let limits = RateLimits::builder().tool_calls(Some(slow(3))).build();
    let server = Server::builder("t", "1")
        .tool(quiet())
        .tool(guarded)
        .tool(free)
        .rate_limits(limits)
        .build()
        .unwrap();
    // stdio: the server's limits are off.
    let local = Peer::open_with(&server, SessionInfo::new(TransportKind::Stdio));
    local.initialize(VERSION, json!({}));
    for i in 1..=200 {
        assert!(!limited(&call(&local, i, "quiet")));
    }
    // ... but the tool's own limit holds there too.
    let guarded: Vec<bool> = (1..=8)
        .map(|i| limited(&call(&local, i, "guarded")))
        .collect();
    assert_eq!(
        guarded,
        [false, false, false, false, false, true, true, true]
    );
    // Over HTTP the server's limit (burst 3) applies to `quiet`; `free` has none.
    let http = http_peer(&server);
    let quiet: Vec<bool> = (1..=5).map(|i| limited(&call(&http, i, "quiet"))).collect();
    assert_eq!(quiet, [false, false, false, true, true]);
    for i in 1..=50 {
        assert!(!limited(&call(&http, i, "free")));
    }
    // Each legacy session has buckets of its own.
    let other = http_peer(&server);
    assert!(!limited(&call(&other, 1, "quiet")));
}

fn modern_call(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "quiet",
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
}

/// One 2026-07-28 HTTP exchange (a session of its own) from `peer`, with `auth` claims.
fn exchange(server: &Server, peer: &str, auth: Option<Value>) -> bool {
    let addr: SocketAddr = peer.parse().unwrap();
    let mut info = SessionInfo::new(TransportKind::StreamableHttp)
        .with_protocol_version(ProtocolVersion::V2026_07_28)
        .with_peer(addr);
    if let Some(a) = auth {
        info = info.with_auth(a);
    }
    let p = Peer::open_with(server, info);
    p.send(modern_call(1));
    limited(&p.response(1).0)
}

#[test]
fn modern_exchanges_count_per_peer_address_or_per_authorized_client() {
    let limits = RateLimits::builder().tool_calls(Some(slow(2))).build();
    let server = Server::builder("t", "1")
        .tool(quiet())
        .rate_limits(limits)
        .build()
        .unwrap();
    // Every exchange is a new session, yet one address (any port) is one client.
    let runs: Vec<bool> = ["10.0.0.1:1000", "10.0.0.1:1001", "10.0.0.1:1002"]
        .iter()
        .map(|a| exchange(&server, a, None))
        .collect();
    assert_eq!(runs, [false, false, true]);
    // Another address is another client.
    assert!(!exchange(&server, "10.0.0.2:1000", None));
    // Authorized clients count by their identity, whatever address they come from.
    let alice = || Some(json!({"sub": "alice", "client_id": "app"}));
    assert!(!exchange(&server, "10.0.0.1:2000", alice()));
    assert!(!exchange(&server, "10.0.0.3:2000", alice()));
    assert!(exchange(&server, "10.0.0.4:2000", alice()));
    let bob = Some(json!({"sub": "bob", "client_id": "app"}));
    assert!(!exchange(&server, "10.0.0.1:2000", bob));
    // A loopback peer is a local process or a proxy relaying many clients: each connection
    // is a client of its own, so a proxy's clients do not share one set of buckets.
    let runs: Vec<bool> = ["127.0.0.1:1000", "127.0.0.1:1000", "127.0.0.1:1000"]
        .iter()
        .map(|a| exchange(&server, a, None))
        .collect();
    assert_eq!(runs, [false, false, true]);
    assert!(!exchange(&server, "127.0.0.1:1001", None));
    assert!(!exchange(&server, "[::1]:1002", None));
}

#[test]
fn excess_progress_and_log_messages_are_dropped_and_counted_not_queued() {
    const SENT: usize = 1000;
    let flood = Tool::new("flood", |_: NoArgs, ctx: &Context| {
        for i in 1..=SENT {
            ctx.progress(i as f64, Some(SENT as f64), None);
            ctx.log(LoggingLevel::Info, json!({"line": i}));
        }
        Ok::<_, Error>("done")
    });
    let limits = RateLimits::builder()
        .progress(Some(slow(10)))
        .log_messages(Some(slow(20)))
        .build();
    let server = Server::builder("t", "1")
        .tool(flood)
        .logging()
        .rate_limits(limits)
        .build()
        .unwrap();
    let p = http_peer(&server);
    p.request(1, "logging/setLevel", json!({"level": "info"}));
    p.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "flood", "_meta": {"progressToken": "t"}}}));
    let (answer, before) = p.response(2);
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    let count = |m: &str| before.iter().filter(|v| v["method"] == m).count();
    let (progress, logs) = (
        count("notifications/progress"),
        count("notifications/message"),
    );
    // Exactly the bursts went out: the rest were dropped at once, not held for later.
    assert_eq!((progress, logs), (10, 20));
    let dropped = server.rate_limited();
    assert_eq!(dropped.progress as usize, SENT - progress);
    assert_eq!(dropped.log_messages as usize, SENT - logs);
    // Nothing more arrives after the answer: nothing was queued.
    p.request(3, "ping", json!({}));
}
