//! Connection hazards: huge declared bodies, oversized bodies and headers, idle and slowloris
//! connections, slow SSE readers, Nagle, the in-flight cap.

mod common;

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use crossbeam_channel::{Sender, bounded};
use mcp_core::jsonrpc::{Message, Request, RequestId, Response};
use mcp_core::service::{Outbound, Service, Session, SessionInfo};
use mcp_http_blocking::{HttpConfig, HttpServer, HttpServerBuilder, ServerHandle};
use serde_json::json;

fn alive(h: &ServerHandle) -> bool {
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT],
        &init_body("2025-06-18"),
    );
    r.status == 200
}

/// Sends `head` and reads the answer's status; then expects the server to close the connection.
fn raw(h: &ServerHandle, head: &str) -> u16 {
    let mut s = connect(h.local_addr());
    s.write_all(head.as_bytes()).unwrap();
    let mut r = BufReader::new(s);
    let status = read_head(&mut r).0;
    let mut rest = Vec::new();
    // EOF (or a reset) ends this: the server holds nothing for a refused request.
    let _ = r.read_to_end(&mut rest);
    status
}

#[test]
fn an_absurd_content_length_is_refused_without_killing_the_process() {
    // A long io timeout: the 413 must not wait for a body that will never come (the test
    // client gives up after 10 s).
    let (h, _) = serve(HttpConfig::default(), Duration::from_secs(60));
    for _ in 0..3 {
        let st = raw(
            &h,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 999999999999999\r\n\r\n{",
        );
        assert_eq!(st, 413);
    }
    assert!(alive(&h));
}

#[test]
fn oversized_bodies_get_413_and_the_connection_is_drained_safely() {
    let cfg = HttpConfig::builder().max_body(1000).build();
    let (h, _) = serve(cfg, Duration::from_secs(60));
    // Declared too large, sent in part, then the client waits: the 413 comes at once.
    let mut s = connect(h.local_addr());
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n").unwrap();
    s.write_all(&[b' '; 4096]).unwrap();
    let r = read_response(&mut BufReader::new(s));
    assert_eq!(r.status, 413);
    // The refusal says why, as a JSON-RPC error (it used to be an empty body).
    assert_eq!(r.json()["error"]["code"], -32600);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1000 bytes")
    );
    // Chunked and too large.
    let mut s = connect(h.local_addr());
    let mut req = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    req.extend_from_slice(format!("{:x}\r\n", 3000).as_bytes());
    req.extend_from_slice(&[b' '; 3000]);
    req.extend_from_slice(b"\r\n0\r\n\r\n");
    s.write_all(&req).unwrap();
    assert_eq!(read_head(&mut BufReader::new(s)).0, 413);
    // Within the limit: fine.
    assert!(alive(&h));
}

#[test]
fn a_client_that_sends_its_whole_oversized_body_first_still_reads_the_413() {
    // As Node's fetch does: all 12 MiB written before anything is read. The server refuses
    // at once and then reads (and drops) the rest, so the client's writes do not meet a reset
    // and the 413 reaches it (it used to read only 256 KiB more).
    let cfg = HttpConfig::builder().max_body(1000).build();
    let (h, _) = serve(cfg, Duration::from_secs(60));
    let body = vec![b' '; 12 * 1024 * 1024];
    let mut s = connect(h.local_addr());
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(&body)
        .expect("the server reads the body's rest");
    assert_eq!(read_head(&mut BufReader::new(s)).0, 413);
}

#[test]
fn oversized_headers_get_431() {
    let (h, _) = serve(HttpConfig::default(), Duration::from_secs(5));
    let big = "a".repeat(20 * 1024);
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("X-Big", &big)],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 431);
}

#[test]
fn idle_and_slowloris_connections_are_closed_by_the_io_timeout() {
    let (h, _) = serve(HttpConfig::default(), Duration::from_millis(300));
    let mut conns = Vec::new();
    for i in 0..10 {
        let mut s = connect(h.local_addr());
        if i % 2 == 0 {
            // Half a request line, then silence.
            s.write_all(b"POST /mcp HTTP/1.1\r\nHo").unwrap();
        }
        conns.push(s);
    }
    let t0 = Instant::now();
    for mut s in conns {
        let mut b = [0u8; 64];
        // The server hangs up (EOF or a reset, nothing else: no answer, and not the client's
        // own 10 s timeout).
        let r = s.read(&mut b);
        assert!(peer_closed(&r), "{r:?}");
    }
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t0.elapsed()
    );
    assert!(alive(&h));
}

#[test]
fn an_sse_answer_in_many_pieces_does_not_stall_on_nagle() {
    let (h, ctl) = serve(HttpConfig::default(), Duration::from_secs(5));
    let a = h.local_addr();
    let sid = open_session(a, "2025-06-18");
    let hs = [ACCEPT_BOTH, JSON_CT, ("Mcp-Session-Id", sid.as_str())];
    for _ in 0..3 {
        // A few request/response rounds on one kept-alive connection first: that is what puts
        // the client's TCP stack into delayed-ACK mode, where Nagle would hold each small SSE
        // write until the previous one is acknowledged (~40 ms on Linux).
        let mut conn = BufReader::new(connect(a));
        for i in 0..4 {
            write_request(
                conn.get_mut(),
                "POST",
                "/mcp",
                &hs,
                &rpc(10 + i, "ping", json!({})),
            );
            assert_eq!(read_response(&mut conn).status, 200);
        }
        let t0 = Instant::now();
        let mut s = SseClient::open_on(conn, "POST", "/mcp", &hs, &rpc(2, "burst", json!({})));
        let mut n = 0;
        while s.next().is_some() {
            n += 1;
            // Each notification is sent once the one before was read: every one is a small
            // write while the previous segment may still be unacknowledged, which is where
            // Nagle would wait for the client's delayed ACK (~40 ms each, 10 of them).
            if n < 10 {
                ctl.go_tx.send(()).unwrap();
            }
        }
        assert_eq!(n, 11);
        assert!(
            t0.elapsed() < Duration::from_millis(200),
            "took {:?}",
            t0.elapsed()
        );
    }
}

#[test]
fn a_reader_that_stops_reading_is_cut_off_not_buffered_for() {
    let cfg = HttpConfig::builder()
        .stream_buffer(4)
        .send_timeout(Duration::from_millis(200))
        .build();
    let (h, ctl) = serve(cfg, Duration::from_millis(300));
    let a = h.local_addr();
    let sid = open_session(a, "2025-06-18");
    // Open the GET stream and never read from it.
    let mut idle = connect(a);
    write_request(
        &mut idle,
        "GET",
        "/mcp",
        &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &sid)],
        b"",
    );
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("Mcp-Session-Id", &sid)],
        &rpc(2, "flood", json!({"n": 300})),
    );
    assert_eq!(r.status, 200);
    // 300 x 64 KiB cannot fit in socket buffers plus 4 queued frames: the stream is cut and
    // the rest of the sends go on at once (kept, within the history's bounds, for a client
    // that resumes) instead of blocking forever.
    ctl.wait_for("flood:", Duration::from_secs(30))
        .expect("flood finished");
    // Cut: the session's GET stream is free for a new connection.
    let again = SseClient::get_stream(a, &sid);
    assert_eq!(again.status, 200);
    // The session itself goes on.
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("Mcp-Session-Id", &sid)],
        &rpc(3, "ping", json!({})),
    );
    assert_eq!(r.status, 200);
    drop(idle);
}

#[test]
fn requests_beyond_the_in_flight_cap_get_503() {
    let ctl = Ctl::new();
    let h = HttpServer::builder()
        .max_in_flight(2)
        .io_timeout(Duration::from_secs(5))
        .build(TestService(ctl))
        .unwrap()
        .spawn()
        .unwrap();
    let a = h.local_addr();
    // Two requests whose bodies never finish arriving hold both slots. They ask for a
    // `100 Continue`, which the server sends when it starts reading the body: by then the
    // request holds its place under the cap.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut s = BufReader::new(connect(a));
        write!(
            s.get_mut(),
            "POST /mcp HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nExpect: 100-continue\r\n\
             Content-Length: 4000\r\n\r\n"
        )
        .unwrap();
        assert_eq!(read_head(&mut s).0, 100);
        let mut s = s.into_inner();
        s.write_all(b"{").unwrap();
        held.push(s);
    }
    assert_eq!(h.in_flight(), 2);
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(r.json()["error"]["code"], -32603, "the refusal says why");
    // Hanging up frees the slots: the server, reading the body, meets the end of the stream
    // and closes; its place was given back before that.
    for mut s in held {
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
    }
    assert_eq!(h.in_flight(), 0);
    assert!(alive(&h));
}

/// A service whose `ask` asks the client a question (a `ping` of its own) and waits, inside
/// `handle` on the request's thread (holding its place under the in-flight cap), for the
/// answer, as a handler waiting for a sampling answer does.
struct Asking;

struct AskingSession {
    out: Arc<dyn Outbound>,
    /// Where the answer to each question goes, by the question's id.
    waiting: Mutex<HashMap<RequestId, Sender<()>>>,
}

impl Service for Asking {
    fn open(&self, _: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
        Arc::new(AskingSession {
            out,
            waiting: Mutex::new(HashMap::new()),
        })
    }
}

impl Session for AskingSession {
    fn handle(&self, msg: Message) {
        let r = match msg {
            Message::Request(r) => r,
            Message::Response(answer) => {
                if let Some(tx) = self.waiting.lock().unwrap().remove(&answer.id) {
                    let _ = tx.send(());
                }
                return;
            }
            _ => return,
        };
        let result = match r.method.as_str() {
            "initialize" => json!({"protocolVersion": "2025-06-18", "capabilities": {},
                                   "serverInfo": {"name": "t", "version": "1"}}),
            "ask" => {
                let qid = RequestId::from(format!("q-{}", r.id));
                let (tx, rx) = bounded(1);
                self.waiting.lock().unwrap().insert(qid.clone(), tx);
                let question = Request::new(qid, "ping", &json!({})).unwrap();
                let sent = self.out.send(question.into(), Some(&r.id)).is_ok();
                json!({"sent": sent, "answered": sent && rx.recv_timeout(WAIT).is_ok()})
            }
            _ => json!({}),
        };
        let _ = self.out.send(
            Response::new(r.id.clone(), &result).unwrap().into(),
            Some(&r.id),
        );
    }

    fn close(&self) {}
}

/// An `Asking` server built from `builder`, its address, and a 2025-06-18 session on it.
fn asking(builder: HttpServerBuilder) -> (ServerHandle, std::net::SocketAddr, String) {
    let h = builder.build(Asking).unwrap().spawn().unwrap();
    let a = h.local_addr();
    let sid = open_session(a, "2025-06-18");
    (h, a, sid)
}

#[test]
fn answers_to_the_servers_questions_pass_the_in_flight_cap() {
    let (h, a, sid) = asking(HttpServer::builder().max_in_flight(2));
    let with_session = [ACCEPT_BOTH, JSON_CT, ("Mcp-Session-Id", sid.as_str())];
    // Two calls, each waiting for the answer to its question, hold both places.
    let mut calls: Vec<SseClient> = (1..=2)
        .map(|id| {
            let mut c =
                SseClient::open(a, "POST", "/mcp", &with_session, &rpc(id, "ask", json!({})));
            assert_eq!(c.status, 200);
            let q: serde_json::Value = serde_json::from_str(&c.next().unwrap().data).unwrap();
            assert_eq!(q["id"], format!("q-{id}"));
            c
        })
        .collect();
    assert_eq!(h.in_flight(), 2);
    let refused = request(a, "POST", "/mcp", &with_session, &rpc(3, "ping", json!({})));
    assert_eq!(refused.status, 503, "a request still waits for a place");
    // Their answers come through all the same, and the calls end.
    for (id, call) in (1..=2).zip(calls.iter_mut()) {
        let answer = json!({"jsonrpc": "2.0", "id": format!("q-{id}"), "result": {}});
        let r = request(
            a,
            "POST",
            "/mcp",
            &with_session,
            answer.to_string().as_bytes(),
        );
        assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
        let done: serde_json::Value = serde_json::from_str(&call.next().unwrap().data).unwrap();
        assert_eq!(done["result"]["answered"], true, "{done}");
    }
    assert!(alive(&h));
}

#[test]
fn a_question_to_a_client_that_accepts_only_json_is_refused_at_once() {
    // Its answer holds responses only: the question cannot travel, and the handler learns it
    // when it asks instead of waiting for an answer that cannot come.
    let (_server, a, sid) = asking(HttpServer::builder());
    let started = Instant::now();
    let r = request(
        a,
        "POST",
        "/mcp",
        &[
            ("Accept", "application/json"),
            JSON_CT,
            ("Mcp-Session-Id", sid.as_str()),
        ],
        &rpc(1, "ask", json!({})),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.json()["result"]["sent"],
        false,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    assert!(started.elapsed() < WAIT / 2, "{:?}", started.elapsed());
}

#[test]
fn open_streams_do_not_take_request_slots() {
    let ctl = Ctl::new();
    let cfg = HttpConfig::builder()
        .keepalive(Duration::from_millis(50))
        .build();
    let h = HttpServer::builder()
        .config(cfg)
        .max_in_flight(2)
        .build(TestService(ctl))
        .unwrap()
        .spawn()
        .unwrap();
    let a = h.local_addr();
    // More long-lived streams than request slots: idle listeners must not lock others out.
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut s = SseClient::open(a, "GET", "/sse", &[("Accept", "text/event-stream")], b"");
        assert_eq!(s.status, 200);
        assert!(s.next().is_some());
        held.push(s);
    }
    // `/sse` is answered at once (its stream is the answer's body), and a connection gives its
    // place back before it writes an answer: with the first events read, no place is held.
    assert_eq!(h.in_flight(), 0);
    assert!(alive(&h));
    drop(held);
}

#[test]
fn shutdown_ends_streams_and_closes_the_port() {
    let (h, _) = serve(HttpConfig::default(), Duration::from_secs(30));
    let a = h.local_addr();
    let sid = open_session(a, "2025-06-18");
    let mut get = SseClient::get_stream(a, &sid);
    assert_eq!(get.status, 200);
    h.shutdown();
    // The open stream ends cleanly, and nothing listens on the port any more.
    assert!(get.next().is_none());
    // shutdown() returned after the accept thread ended and with the handle (and its listener)
    // dropped: the port is closed already.
    assert!(std::net::TcpStream::connect(a).is_err());
}

#[test]
fn a_head_trickled_a_byte_at_a_time_is_cut_off_after_one_io_timeout() {
    // Each byte comes well within the socket's read timeout, so only a deadline on the whole
    // head ends this: the connection must close about one io timeout after the head began,
    // long before the trickle would have finished.
    let io = Duration::from_millis(500);
    let (h, _) = serve(HttpConfig::default(), io);
    let mut s = connect(h.local_addr());
    s.write_all(b"POST /mcp HTTP/1.1\r\nX-Slow: ").unwrap();
    let mut reader = s.try_clone().unwrap();
    let (closed_tx, closed_rx) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        // Until the server hangs up (EOF or reset); a 431 or 400 would also end the head.
        while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
        let _ = closed_tx.send(Instant::now());
    });
    let start = Instant::now();
    let mut closed = None;
    // The attack's own pace: a byte every 50 ms, for up to 10 s.
    while start.elapsed() < Duration::from_secs(10) {
        if s.write_all(b"a").is_err() {
            break;
        }
        if let Ok(t) = closed_rx.recv_timeout(Duration::from_millis(50)) {
            closed = Some(t);
            break;
        }
    }
    let closed = closed.or_else(|| closed_rx.recv_timeout(Duration::from_secs(2)).ok());
    let after = closed.expect("the server closed the trickling connection") - start;
    assert!(after < Duration::from_secs(5), "closed after {after:?}");
}

#[test]
fn a_body_trickled_a_byte_at_a_time_is_cut_off_after_one_io_timeout() {
    // The head in one piece, then the body a byte at a time, each well within the socket's
    // read timeout: only a deadline on the whole body ends this. Until then the request holds
    // a place under the in-flight cap, so a few hundred such clients would lock out everyone.
    let io = Duration::from_millis(500);
    let (h, _) = serve(HttpConfig::default(), io);
    let mut s = connect(h.local_addr());
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{",
        h.local_addr()
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut reader = BufReader::new(s.try_clone().unwrap());
    let (answer_tx, answer_rx) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let status = read_head(&mut reader).0;
        let _ = answer_tx.send((status, Instant::now()));
    });
    let start = Instant::now();
    let mut answer = None;
    // The attack's own pace: a byte every 50 ms, for up to 10 s.
    while start.elapsed() < Duration::from_secs(10) {
        if s.write_all(b" ").is_err() {
            break;
        }
        if let Ok(a) = answer_rx.recv_timeout(Duration::from_millis(50)) {
            answer = Some(a);
            break;
        }
    }
    let (status, at) = answer
        .or_else(|| answer_rx.recv_timeout(Duration::from_secs(2)).ok())
        .expect("the server answered the trickling request");
    assert_eq!(status, 400);
    let after = at - start;
    assert!(after < Duration::from_secs(5), "answered after {after:?}");
    // And the server still serves.
    assert!(alive(&h));
}

/// A service that answers every request but `initialize` with one long string (`size` bytes).
struct Big(usize);

struct BigSession {
    out: Arc<dyn Outbound>,
    size: usize,
}

impl Service for Big {
    fn open(&self, _: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
        Arc::new(BigSession { out, size: self.0 })
    }
}

impl Session for BigSession {
    fn handle(&self, msg: Message) {
        let Message::Request(r) = msg else {
            return;
        };
        let result = match r.method.as_str() {
            "initialize" => json!({"protocolVersion": "2025-06-18", "capabilities": {},
                                   "serverInfo": {"name": "t", "version": "1"}}),
            _ => json!({ "big": "x".repeat(self.size) }),
        };
        let _ = self.out.send(
            Response::new(r.id.clone(), &result).unwrap().into(),
            Some(&r.id),
        );
    }

    fn close(&self) {}
}

#[test]
fn an_answer_read_a_trickle_at_a_time_is_cut_off_after_its_deadline() {
    // The socket's write timeout bounds one write call, and a client that reads a little now
    // and then (each read well within the io timeout) makes every call progress: only a
    // deadline on the whole response ends this. Without it an 8 MB answer read 1 KiB every
    // 20 ms holds the connection, its thread and the answer for minutes (at the default 30 s
    // io timeout and a slower trickle, for hours). The answer is larger than the socket
    // buffers can take (Linux lets a send buffer grow to 4 MiB by default).
    let io = Duration::from_millis(300);
    // Twice what this machine lets a send buffer grow to, and at least 8 MB.
    let wmem_max = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_wmem")
        .ok()
        .and_then(|t| t.split_whitespace().nth(2)?.parse::<usize>().ok())
        .unwrap_or(0);
    let size = (2 * wmem_max).max(8_000_000);
    let h = HttpServer::builder()
        .io_timeout(io)
        .build(Big(size))
        .unwrap()
        .spawn()
        .unwrap();
    let a = h.local_addr();
    let sid = open_session(a, "2025-06-18");
    // A small receive buffer: the client's kernel cannot take the answer off the server's hands.
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    sock.connect(&a.into()).unwrap();
    let mut s: std::net::TcpStream = sock.into();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let hs = [
        ("Accept", "application/json"),
        JSON_CT,
        ("Mcp-Session-Id", sid.as_str()),
    ];
    write_request(&mut s, "POST", "/mcp", &hs, &rpc(2, "big", json!({})));
    let mut buf = [0u8; 1024];
    // From the answer's first bytes (making it takes a while in a debug build).
    let mut got = s.read(&mut buf).unwrap();
    assert!(got > 0);
    let start = Instant::now();
    // The reader's own pace: 1 KiB every 20 ms, for at most ten io timeouts.
    let end = loop {
        let r = s.read(&mut buf);
        match r {
            Ok(n) if n > 0 => got += n,
            _ => break Some(r),
        }
        if start.elapsed() > io * 10 {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let end = end.unwrap_or_else(|| {
        panic!(
            "still receiving the answer after {:?} ({got} bytes read)",
            start.elapsed()
        )
    });
    // Cut off (a reset: the unsent rest is dropped), long before the whole answer was read.
    assert!(peer_closed(&end), "{end:?}");
    assert!(got < size, "{got}");
    // The server let go of the connection and its thread.
    assert!(h.wait_until_idle(Duration::from_secs(5)));
    assert!(alive(&h));
}
