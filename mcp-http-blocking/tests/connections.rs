//! Connections: a burst of new keep-alive connections is read at once (none waits for another
//! connection to end), also while other connections hold long-lived SSE streams; an answer that
//! closes its connection closes it right after its last byte.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::*;
use mcp_http_blocking::{HttpConfig, HttpServer};
use serde_json::json;

/// The bound the README states for a connection of a burst to be answered.
const BURST_BOUND: Duration = Duration::from_secs(1);

/// `n` clients connect at the same moment, each sends `initialize` and keeps its connection
/// open; returns the slowest time from the start to an answer, and the connections.
fn burst(a: SocketAddr, n: usize) -> (Duration, Vec<TcpStream>) {
    let gate = Arc::new(Barrier::new(n));
    let clients: Vec<_> = (0..n)
        .map(|_| {
            let gate = gate.clone();
            std::thread::spawn(move || {
                gate.wait();
                let t0 = Instant::now();
                let mut s = connect(a);
                write_request(
                    &mut s,
                    "POST",
                    "/mcp",
                    &[ACCEPT_BOTH, JSON_CT],
                    &init_body("2025-06-18"),
                );
                let r = read_response(&mut BufReader::new(s.try_clone().unwrap()));
                assert_eq!(r.status, 200);
                (t0.elapsed(), s)
            })
        })
        .collect();
    let mut worst = Duration::ZERO;
    let mut conns = Vec::new();
    for c in clients {
        let (t, s) = c.join().unwrap();
        worst = worst.max(t);
        conns.push(s);
    }
    (worst, conns)
}

#[test]
fn bursts_of_keep_alive_connections_are_all_answered_within_the_bound() {
    let h = start(HttpConfig::default());
    let mut worst = Duration::ZERO;
    // 64 at once, five times over; the connections of earlier bursts stay open meanwhile.
    let mut held = Vec::new();
    for _ in 0..5 {
        let (t, conns) = burst(h.local_addr(), 64);
        worst = worst.max(t);
        held.extend(conns);
    }
    drop(held);
    let (t, _conns) = burst(h.local_addr(), 256);
    worst = worst.max(t);
    eprintln!("slowest answer in a burst (64 x 5, 256 x 1): {worst:?}");
    assert!(worst < BURST_BOUND, "slowest answer in a burst: {worst:?}");
}

#[test]
fn a_burst_is_answered_while_every_other_connection_is_an_sse_stream() {
    let h = start(HttpConfig::default());
    let a = h.local_addr();
    let streams: Vec<SseClient> = (0..64)
        .map(|_| {
            let sid = open_session(a, "2025-06-18");
            let s = SseClient::get_stream(a, &sid);
            assert_eq!(s.status, 200);
            s
        })
        .collect();
    let (t, _conns) = burst(a, 64);
    eprintln!("slowest answer in a burst of 64 beside 64 streams: {t:?}");
    assert!(t < BURST_BOUND, "slowest answer in the burst: {t:?}");
    drop(streams);
}

#[test]
fn a_finished_sse_answer_closes_its_connection_right_after_the_last_byte() {
    let h = start(HttpConfig::default());
    let a = h.local_addr();
    let sid = open_session(a, "2025-06-18");
    let mut s = connect(a);
    write_request(
        &mut s,
        "POST",
        "/mcp",
        &[
            ACCEPT_BOTH,
            JSON_CT,
            ("Mcp-Session-Id", &sid),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        &rpc(2, "progress", json!({})),
    );
    let mut r = BufReader::new(s);
    let (status, headers) = read_head(&mut r);
    assert_eq!(status, 200);
    assert_eq!(
        headers.get("content-type").map(String::as_str),
        Some("text/event-stream")
    );
    assert_eq!(headers.get("connection").map(String::as_str), Some("close"));
    // Chunks up to the terminating one.
    loop {
        let mut size = String::new();
        r.read_line(&mut size).unwrap();
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        let mut chunk = vec![0; n + 2];
        r.read_exact(&mut chunk).unwrap();
        if n == 0 {
            break;
        }
    }
    let last_byte = Instant::now();
    let mut rest = Vec::new();
    let n = r.read_to_end(&mut rest).unwrap();
    let eof = last_byte.elapsed();
    eprintln!("EOF {eof:?} after the last chunk");
    assert_eq!(n, 0, "nothing follows the last chunk");
    assert!(
        eof < Duration::from_millis(100),
        "EOF came {eof:?} after the last byte"
    );
}

#[test]
fn connections_beyond_the_cap_are_refused_at_once() {
    let h = HttpServer::builder()
        .max_connections(2)
        .build(TestService(Ctl::new()))
        .unwrap()
        .spawn()
        .unwrap();
    let a = h.local_addr();
    let _held: Vec<TcpStream> = (0..2).map(|_| connect(a)).collect();
    // The accept loop takes connections in the order they came, so both held ones have their
    // places before the third is looked at.
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("1"));
}

#[test]
fn pipelined_requests_on_one_connection_are_answered_in_order() {
    let h = start(HttpConfig::default());
    let a = h.local_addr();
    let sid = open_session(a, "2025-06-18");
    let headers = [
        ("Accept", "application/json"),
        JSON_CT,
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let mut s = connect(a);
    // Three requests written before any answer is read; the middle one is answered by a
    // handler on another thread, after a progress notification.
    write_request(&mut s, "POST", "/mcp", &headers, &rpc(1, "ping", json!({})));
    write_request(
        &mut s,
        "POST",
        "/mcp",
        &headers,
        &rpc(2, "progress", json!({})),
    );
    write_request(&mut s, "POST", "/mcp", &headers, &rpc(3, "ping", json!({})));
    let mut r = BufReader::new(s);
    let ids: Vec<i64> = (0..3)
        .map(|_| read_response(&mut r).json()["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3]);
}

/// Standing streams have a cap of their own: streams a client opens and never reads used to
/// be bounded only by the connections (1,024 `subscriptions/listen` took every one, and every
/// other client got 503); beyond the cap a stream is refused and requests go on.
#[test]
fn standing_streams_beyond_their_cap_get_503_and_requests_go_on() {
    let h = HttpServer::builder()
        .max_streams(2)
        .build(common::TestService(Ctl::new()))
        .unwrap()
        .spawn()
        .unwrap();
    let a = h.local_addr();
    let get = |sid: &str| SseClient::get_stream(a, sid);
    let sids: Vec<String> = (0..3).map(|_| open_session(a, "2025-06-18")).collect();
    let held: Vec<SseClient> = sids[..2].iter().map(|s| get(s)).collect();
    assert!(held.iter().all(|s| s.status == 200));
    assert_eq!(h.streams(), 2);
    let third = get(&sids[2]);
    assert_eq!(third.status, 503);
    assert_eq!(
        third.headers.get("retry-after").map(String::as_str),
        Some("1")
    );
    // A 2026-07-28 listen is a standing stream too (refused here before it is read).
    let listen = request(
        a,
        "POST",
        "/mcp",
        &[
            ACCEPT_BOTH,
            JSON_CT,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "subscriptions/listen"),
        ],
        &rpc(
            9,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ),
    );
    assert_eq!(listen.status, 503);
    assert_eq!(
        listen.json()["error"]["message"],
        "server busy: too many streams open"
    );
    assert_eq!(h.streams(), 2, "a refused stream holds no place");
    // Requests are still served, on new connections and on a session without a stream.
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("Mcp-Session-Id", &sids[2])],
        &rpc(3, "ping", json!({})),
    );
    assert_eq!(r.status, 200);
    drop(held);
}
