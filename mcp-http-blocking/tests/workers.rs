//! The request threads: requests are answered by the threads that take them off tiny_http's
//! queue, so these tests check what that must not cost: a slow answer never holds up other
//! requests, `run()` keeps serving across accept-loop restarts, and shutdown does not wait
//! on a request that is still being answered.

mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_http_blocking::HttpServer;
use serde_json::json;

fn ping_legacy(addr: std::net::SocketAddr) -> u16 {
    request(
        addr,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT],
        &init_body("2025-06-18"),
    )
    .status
}

#[test]
fn slow_answers_do_not_hold_up_other_requests() {
    let ctl = Ctl::new();
    let h = HttpServer::builder()
        .build(TestService(ctl.clone()))
        .unwrap()
        .spawn()
        .unwrap();
    let a = h.local_addr();
    let sid = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT],
        &init_body("2025-06-18"),
    )
    .header("mcp-session-id")
    .unwrap()
    .to_owned();
    // Clients that accept only JSON: each answer is held until the test lets it go, so each
    // keeps the thread that took it busy.
    let slow: Vec<_> = (0..3)
        .map(|i| {
            let sid = sid.clone();
            std::thread::spawn(move || {
                request(
                    a,
                    "POST",
                    "/mcp",
                    &[
                        ("Accept", "application/json"),
                        JSON_CT,
                        ("Mcp-Session-Id", &sid),
                    ],
                    &rpc(100 + i, "gated", json!({})),
                )
            })
        })
        .collect();
    // All three handlers are waiting. (Where their answers wait, on the thread that took the
    // request or on a stream thread it was handed to, depends on how the first progress
    // notification raced the handler's return: either way they hold something up.)
    for _ in 0..3 {
        assert!(
            ctl.wait_for("gated:waiting", Duration::from_secs(5))
                .is_some()
        );
    }
    // Meanwhile other requests are answered at once, on new and kept-alive connections.
    let t0 = Instant::now();
    for _ in 0..5 {
        assert_eq!(ping_legacy(a), 200);
    }
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    for _ in 0..3 {
        ctl.go_tx.send(()).unwrap();
    }
    for t in slow {
        let r = t.join().unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.json()["result"]["gated"], true);
    }
    assert!(eventually(Duration::from_secs(5), || h.in_flight() == 0));
}

#[test]
fn run_keeps_serving_after_the_first_accept_loop_retires() {
    // With a 50 ms io timeout, the first tiny_http accept thread dies within 50 ms of
    // idleness and its generation retires about 350 ms later. `run()` must not return then.
    let server = HttpServer::builder()
        .io_timeout(Duration::from_millis(50))
        .build(TestService(Ctl::new()))
        .unwrap();
    let a = server.local_addr();
    let runner = std::thread::spawn(move || server.run());
    assert!(
        !eventually(Duration::from_secs(2), || runner.is_finished()),
        "run() returned"
    );
    assert_eq!(ping_legacy(a), 200);
}

/// A stateless (2026-07-28) `gated` call from a client that accepts only JSON: it belongs to no
/// session, so closing the sessions at shutdown does not end it.
fn gated_modern(a: std::net::SocketAddr, id: i64) -> Resp {
    let mut params = json!({"name": "gated", "arguments": {}});
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    request(
        a,
        "POST",
        "/mcp",
        &[
            ("Accept", "application/json"),
            JSON_CT,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "gated"),
        ],
        &rpc(id, "gated", params),
    )
}

#[test]
fn shutdown_does_not_wait_for_a_request_still_being_answered() {
    let ctl = Ctl::new();
    let h = HttpServer::builder()
        .build(TestService(ctl.clone()))
        .unwrap()
        .spawn()
        .unwrap();
    let a = h.local_addr();
    let slow = std::thread::spawn(move || gated_modern(a, 7));
    // The handler is waiting: its answer is pending on the request's thread or on a stream
    // thread (see above); shutdown must wait for neither.
    assert!(
        ctl.wait_for("gated:waiting", Duration::from_secs(5))
            .is_some()
    );
    let t0 = Instant::now();
    h.shutdown();
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    // The request was not cut off: its answer still goes out once it is let go.
    ctl.go_tx.send(()).unwrap();
    let r = slow.join().unwrap();
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["result"]["gated"], true);
}
