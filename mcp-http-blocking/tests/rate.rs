//! Rate limits over HTTP (issue 20): a client that calls a tool 1,000 times in a tight loop
//! gets `429 Too Many Requests` with `Retry-After` (in whole seconds, rounded up) and the
//! kit's -32005 error in the body, in both eras; one whose loop fits in the burst never does.
//! The server is the real kit with its default limits over HTTP (50 calls a second, bursts
//! of 100), so the tight loop cannot outlast the burst by luck: all 1,000 would pass only if
//! the loop took 18 s.

mod common;

use std::io::BufReader;
use std::net::{SocketAddr, TcpStream};

use common::{ACCEPT_BOTH, JSON_CT, connect, open_session, read_response, rpc, write_request};
use mcp_core::jsonrpc::codes;
use mcp_http_blocking::{HttpServer, ServerHandle};
use mcp_server_kit::{Context, Error, NoArgs, RateLimit, RateLimits, Server, Tool};
use serde_json::{Value, json};

fn start(limits: Option<RateLimits>) -> (ServerHandle, SocketAddr) {
    let quiet = Tool::new("quiet", |_: NoArgs, _: &Context| Ok::<_, Error>("ok"));
    let mut b = Server::builder("rate", "1").tool(quiet);
    if let Some(l) = limits {
        b = b.rate_limits(l);
    }
    let handle = HttpServer::builder()
        .build(b.build().unwrap())
        .unwrap()
        .spawn()
        .unwrap();
    let addr = handle.local_addr();
    (handle, addr)
}

/// One keep-alive connection, so the loop is as tight as a client can make it.
struct Conn {
    s: TcpStream,
    r: BufReader<TcpStream>,
}

impl Conn {
    fn new(addr: SocketAddr) -> Conn {
        let s = connect(addr);
        let r = BufReader::new(s.try_clone().unwrap());
        Conn { s, r }
    }

    fn post(&mut self, headers: &[(&str, &str)], body: &[u8]) -> common::Resp {
        write_request(&mut self.s, "POST", "/mcp", headers, body);
        read_response(&mut self.r)
    }
}

fn modern_call(id: i64) -> Vec<u8> {
    rpc(
        id,
        "tools/call",
        json!({"name": "quiet", "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}),
    )
}

const MODERN: [(&str, &str); 5] = [
    ACCEPT_BOTH,
    JSON_CT,
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", "quiet"),
];

/// Checks a refused answer: 429, `Retry-After` at least the error's wait in whole seconds.
fn check_refusal(r: &common::Resp) {
    assert_eq!(r.status, 429);
    let body: Value = r.json();
    assert_eq!(body["error"]["code"], codes::RATE_LIMITED, "{body}");
    let ms = body["error"]["data"]["retryAfterMs"].as_u64().unwrap();
    let secs: u64 = r.header("retry-after").unwrap().parse().unwrap();
    assert_eq!(secs, ms.div_ceil(1000).max(1), "{ms} ms");
}

#[test]
fn a_tight_loop_of_modern_calls_meets_429_with_retry_after() {
    let (_h, addr) = start(None);
    let mut c = Conn::new(addr);
    let statuses: Vec<common::Resp> = (1..=1000)
        .map(|i| c.post(&MODERN, &modern_call(i)))
        .collect();
    let refused: Vec<&common::Resp> = statuses.iter().filter(|r| r.status != 200).collect();
    assert!(refused.len() >= 500, "{} refused", refused.len());
    for r in &refused {
        check_refusal(r);
    }
    // The burst went through.
    assert!(statuses[..100].iter().all(|r| r.status == 200));
}

#[test]
fn a_tight_loop_in_a_legacy_session_meets_429_with_retry_after() {
    let (_h, addr) = start(None);
    let sid = open_session(addr, "2025-11-25");
    let headers = [
        ACCEPT_BOTH,
        JSON_CT,
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", sid.as_str()),
    ];
    let mut c = Conn::new(addr);
    let r = c.post(
        &headers,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(r.status, 202);
    let mut refused = 0;
    for i in 1..=1000 {
        let r = c.post(&headers, &rpc(i, "tools/call", json!({"name": "quiet"})));
        if r.status != 200 {
            check_refusal(&r);
            refused += 1;
        }
    }
    assert!(refused >= 500, "{refused} refused");
}

#[test]
fn a_loop_that_fits_in_the_burst_is_never_refused() {
    let limits = RateLimits::builder()
        .tool_calls(Some(RateLimit::per_second(50, 1000)))
        .build();
    let (_h, addr) = start(Some(limits));
    let mut c = Conn::new(addr);
    for i in 1..=1000 {
        let r = c.post(&MODERN, &modern_call(i));
        assert_eq!(
            r.status,
            200,
            "call {i}: {}",
            String::from_utf8_lossy(&r.body)
        );
    }
}
