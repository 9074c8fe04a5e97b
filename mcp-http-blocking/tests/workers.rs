//! The connection threads: each connection's requests are answered on its own thread, so these
//! tests check what that must not cost: a slow answer never holds up other requests, `run()`
//! keeps serving, and a shutdown drains (requests in flight finish within the grace period,
//! and what still runs after it is cut).

mod common;

use std::io::{BufReader, Read, Write};
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
    let sid = open_session(a, "2025-06-18");
    // Clients that accept only JSON: each answer is held until the test lets it go, so each
    // keeps the thread that took it busy.
    let slow: Vec<_> = (0..3)
        .map(|i| {
            let sid = sid.clone();
            std::thread::spawn(move || {
                let hs = [
                    ("Accept", "application/json"),
                    JSON_CT,
                    ("Mcp-Session-Id", sid.as_str()),
                ];
                let mut conn = BufReader::new(connect(a));
                write_request(
                    conn.get_mut(),
                    "POST",
                    "/mcp",
                    &hs,
                    &rpc(100 + i, "gated", json!({})),
                );
                let gated = read_response(&mut conn);
                // A second request on the same connection: its answer comes once the
                // connection's thread is done with the first one (see the end of the test).
                write_request(
                    conn.get_mut(),
                    "POST",
                    "/mcp",
                    &hs,
                    &rpc(200 + i, "ping", json!({})),
                );
                assert_eq!(read_response(&mut conn).status, 200);
                gated
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
    // Every place under the in-flight cap was given back: each connection's thread gives its
    // place back before it writes an answer (or before it waits for a handed-over one to be
    // written), and every answer has been read.
    assert_eq!(h.in_flight(), 0);
}

#[test]
fn run_keeps_serving_through_idle_timeouts() {
    // With a 50 ms io timeout, idle connections end quickly; `run()` must not return then.
    let server = HttpServer::builder()
        .io_timeout(Duration::from_millis(50))
        .build(TestService(Ctl::new()))
        .unwrap();
    let a = server.local_addr();
    let runner = std::thread::spawn(move || server.run());
    for round in 0..2 {
        // A connection that never sends a request, and one idle after an answer: the server
        // closes both when the io timeout passes (EOF, or a reset, is the sign).
        let silent = connect(a);
        let mut kept = BufReader::new(connect(a));
        write_request(
            kept.get_mut(),
            "POST",
            "/mcp",
            &[ACCEPT_BOTH, JSON_CT],
            &init_body("2025-06-18"),
        );
        assert_eq!(read_response(&mut kept).status, 200);
        for mut s in [silent, kept.into_inner()] {
            let mut b = [0u8; 16];
            let r = s.read(&mut b);
            assert!(peer_closed(&r), "round {round}: {r:?}");
        }
        // The timeouts have passed; the server still answers, and run() has not returned.
        assert_eq!(ping_legacy(a), 200, "round {round}");
        assert!(!runner.is_finished(), "round {round}: run() returned");
    }
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

/// Connects until the server refuses: the accept loop has stopped, so a shutdown has begun.
fn wait_until_refused(a: std::net::SocketAddr) {
    for _ in 0..100_000 {
        if std::net::TcpStream::connect(a).is_err() {
            return;
        }
    }
    panic!("the server kept accepting");
}

#[test]
fn shutdown_lets_a_request_in_flight_finish_then_returns() {
    let ctl = Ctl::new();
    let h = HttpServer::builder()
        .shutdown_grace(Duration::from_secs(20))
        .build(TestService(ctl.clone()))
        .unwrap()
        .spawn()
        .unwrap();
    let a = h.local_addr();
    let slow = std::thread::spawn(move || gated_modern(a, 7));
    assert!(
        ctl.wait_for("gated:waiting", Duration::from_secs(5))
            .is_some()
    );
    let stopper = std::thread::spawn(move || h.shutdown());
    // New connections are refused once the drain has begun; only then is the handler let go.
    wait_until_refused(a);
    assert!(
        !stopper.is_finished(),
        "shutdown returned with a request in flight"
    );
    ctl.go_tx.send(()).unwrap();
    let r = slow.join().unwrap();
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["result"]["gated"], true);
    stopper.join().unwrap();
}

#[test]
fn shutdown_cuts_what_still_runs_when_the_grace_is_over() {
    let ctl = Ctl::new();
    let h = HttpServer::builder()
        .build(TestService(ctl.clone()))
        .unwrap()
        .spawn()
        .unwrap();
    let a = h.local_addr();
    let slow = std::thread::spawn(move || {
        let mut s = connect(a);
        let body = rpc(
            7,
            "gated",
            json!({"name": "gated", "arguments": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }}),
        );
        let body = String::from_utf8(body).unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: gated\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(body.as_bytes()).unwrap();
        let mut rest = Vec::new();
        // The server cuts the connection: EOF or a reset, with no answer.
        let _ = s.read_to_end(&mut rest);
        rest
    });
    assert!(
        ctl.wait_for("gated:waiting", Duration::from_secs(5))
            .is_some()
    );
    h.shutdown_within(Duration::from_millis(100));
    assert!(slow.join().unwrap().is_empty(), "no answer was written");
    ctl.go_tx.send(()).unwrap();
}
