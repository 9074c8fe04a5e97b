//! The HTTP client against a scripted HTTP server on 127.0.0.1, for what a well-behaved server
//! rarely does: streams that break (resumed with `Last-Event-ID` after the `retry:` delay, a
//! bounded number of times), oversized answers, bare HTTP errors, a GET stream refused with
//! 405, and the exact headers of each request.
#![cfg(feature = "client")]

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::{WAIT, next, next_event, req};
use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_core::jsonrpc::{Message, Notification, Request, RequestId};
use mcp_core::transport::Incoming;
use mcp_http_blocking::Error;
use mcp_http_blocking::client::{HttpClient, HttpClientConfig};
use serde_json::{Value, json};

/// One request as the scripted server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    headers: HashMap<String, String>,
    body: Value,
    at: Instant,
}

impl Seen {
    fn header(&self, n: &str) -> Option<&str> {
        self.headers.get(n).map(String::as_str)
    }
    fn rpc_method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
}

type Handler = dyn Fn(&Seen, &mut TcpStream) + Send + Sync;

/// Serves up to 64 connections, one request each, answered by `handler`; reports each request.
fn serve(handler: Arc<Handler>) -> (SocketAddr, Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = bounded(256);
    thread::spawn(move || {
        for conn in listener.incoming().take(64) {
            let Ok(conn) = conn else { return };
            let (h, tx) = (handler.clone(), tx.clone());
            thread::spawn(move || one(conn, &*h, &tx));
        }
    });
    (addr, rx)
}

fn one(mut conn: TcpStream, handler: &Handler, tx: &Sender<Seen>) {
    conn.set_read_timeout(Some(WAIT)).unwrap();
    let mut r = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if r.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let method = line.split_whitespace().next().unwrap_or("").to_owned();
    let mut headers = HashMap::new();
    loop {
        let mut l = String::new();
        r.read_line(&mut l).unwrap();
        let l = l.trim_end();
        if l.is_empty() {
            break;
        }
        let (n, v) = l.split_once(':').unwrap();
        headers.insert(n.trim().to_ascii_lowercase(), v.trim().to_owned());
    }
    let len = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    r.read_exact(&mut body).unwrap();
    let seen = Seen {
        method,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        at: Instant::now(),
    };
    let _ = tx.send(seen.clone());
    handler(&seen, &mut conn);
    let _ = conn.flush();
}

fn json_answer(conn: &mut TcpStream, status: u16, extra: &str, body: &str) {
    let _ = write!(
        conn,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    );
}

fn bare(conn: &mut TcpStream, status: u16, extra: &str) {
    let _ = write!(
        conn,
        "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n{extra}\r\n"
    );
}

/// An SSE answer that ends (the connection closes) after `events`.
fn sse(conn: &mut TcpStream, events: &str) {
    let _ = write!(
        conn,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{events}"
    );
}

fn init_answer(conn: &mut TcpStream, seen: &Seen) {
    let body = json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}});
    json_answer(conn, 200, "Mcp-Session-Id: sess-1\r\n", &body.to_string());
}

/// The next event, which must be a failed exchange: its request id and error.
fn failure(rx: &Receiver<Incoming>) -> (RequestId, Error) {
    match next_event(rx) {
        Incoming::Failed { id, error } => match error.downcast::<Error>() {
            Ok(e) => (id, *e),
            Err(other) => panic!("not this crate's error: {other:?}"),
        },
        other => panic!("expected a failed exchange, got {other:?}"),
    }
}

fn connect(addr: SocketAddr, cfg: HttpClientConfig) -> HttpClient {
    HttpClient::connect(&format!("http://{addr}/mcp"), cfg).unwrap()
}

fn initialize(c: &HttpClient, seen: &Receiver<Seen>) {
    c.sender().send(req(1, "initialize", json!({}))).unwrap();
    assert!(matches!(next(&c.receiver()), Message::Response(_)));
    assert_eq!(seen.recv_timeout(WAIT).unwrap().rpc_method(), "initialize");
}

#[test]
fn a_broken_stream_is_resumed_with_last_event_id_after_the_retry_delay() {
    let (addr, seen) = serve(Arc::new(|s: &Seen, conn: &mut TcpStream| {
        match (s.method.as_str(), s.rpc_method()) {
            ("POST", "initialize") => init_answer(conn, s),
            ("POST", "slow") => sse(
                conn,
                "id: s-1\nretry: 300\ndata: \n\nid: s-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n",
            ),
            ("GET", _) => sse(
                conn,
                "id: s-3\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"ok\":true}}\n\n",
            ),
            _ => bare(conn, 500, ""),
        }
    }));
    let mut c = connect(addr, HttpClientConfig::default());
    initialize(&c, &seen);
    let rx = c.receiver();
    c.sender().send(req(2, "slow", json!({}))).unwrap();
    assert_eq!(next(&rx).method(), Some("notifications/progress"));
    match next(&rx) {
        Message::Response(r) => assert_eq!(r.id, RequestId::Number(2)),
        other => panic!("{other:?}"),
    }
    let post = seen.recv_timeout(WAIT).unwrap();
    assert_eq!(post.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(post.header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(
        post.header("accept"),
        Some("application/json, text/event-stream")
    );
    let get = seen.recv_timeout(WAIT).unwrap();
    assert_eq!(get.method, "GET");
    assert_eq!(get.header("last-event-id"), Some("s-2"));
    assert_eq!(get.header("mcp-session-id"), Some("sess-1"));
    assert!(
        get.at - post.at >= Duration::from_millis(300),
        "the server's retry: 300 is honoured ({:?})",
        get.at - post.at
    );
    c.close();
}

#[test]
fn resumption_gives_up_after_the_configured_attempts() {
    let (addr, seen) = serve(Arc::new(|s: &Seen, conn: &mut TcpStream| {
        match (s.method.as_str(), s.rpc_method()) {
            ("POST", "initialize") => init_answer(conn, s),
            ("POST", _) => sse(conn, "id: a-1\nretry: 10\ndata: \n\n"),
            // Every resumption ends at once, empty.
            ("GET", _) => sse(conn, ""),
            _ => bare(conn, 500, ""),
        }
    }));
    let cfg = HttpClientConfig::builder().max_reconnects(2).build();
    let mut c = connect(addr, cfg);
    initialize(&c, &seen);
    c.sender().send(req(2, "slow", json!({}))).unwrap();
    let (id, reason) = failure(&c.receiver());
    assert_eq!(id, RequestId::Number(2));
    assert!(
        matches!(reason, Error::StreamEnded { attempts: 2, .. }),
        "{reason:?}"
    );
    let gets = seen.try_iter().filter(|s| s.method == "GET").count();
    assert_eq!(gets, 2);
    c.close();
}

/// Ids should be unique, but a server that repeats one on the stream that first carries it is
/// not replaying anything: the answer under the repeated id is delivered, not dropped (the
/// call once waited for its timeout), and nothing is resumed.
#[test]
fn a_repeated_event_id_on_an_unbroken_stream_still_delivers_the_answer() {
    let (addr, seen) = serve(Arc::new(|s: &Seen, conn: &mut TcpStream| {
        match (s.method.as_str(), s.rpc_method()) {
            ("POST", "initialize") => init_answer(conn, s),
            ("POST", "call") => sse(
                conn,
                "id: same\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":1}}\n\n\
                 id: same\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n",
            ),
            ("GET", _) => bare(conn, 405, ""),
            _ => bare(conn, 500, ""),
        }
    }));
    let mut c = connect(addr, HttpClientConfig::default());
    initialize(&c, &seen);
    c.sender().send(req(2, "call", json!({}))).unwrap();
    let mut got = Vec::new();
    while got.len() < 2 {
        match next_event(&c.receiver()) {
            Incoming::Message(m) => got.push(m),
            other => panic!("{other:?}"),
        }
    }
    assert!(matches!(&got[0], Message::Notification(_)), "{got:?}");
    assert!(
        matches!(&got[1], Message::Response(r) if r.id == RequestId::Number(2)),
        "{got:?}"
    );
    c.close();
}

/// A server that never acknowledges `notifications/initialized` holds the session's requests
/// up for a moment at most, not for the acknowledgement's timeout (the first call once waited
/// 30 s, and one with a shorter timeout failed without ever being sent); the GET stream is
/// opened all the same.
#[test]
fn an_unacknowledged_initialized_holds_nothing_up() {
    let (release, held) = bounded::<()>(0);
    let (addr, seen) = serve(Arc::new(move |s: &Seen, conn: &mut TcpStream| {
        match (s.method.as_str(), s.rpc_method()) {
            ("POST", "initialize") => init_answer(conn, s),
            // Held until the test ends (the channel then disconnects).
            ("POST", "notifications/initialized") => {
                let _ = held.recv();
            }
            ("POST", "call") => json_answer(
                conn,
                200,
                "",
                &json!({"jsonrpc": "2.0", "id": 2, "result": {}}).to_string(),
            ),
            ("GET", _) => bare(conn, 405, ""),
            _ => bare(conn, 500, ""),
        }
    }));
    let cfg = HttpClientConfig::builder()
        .ack_timeout(Duration::from_secs(120))
        .build();
    let mut c = connect(addr, cfg);
    initialize(&c, &seen);
    let initialized = Message::Notification(Notification {
        method: "notifications/initialized".into(),
        params: None,
    });
    c.sender().send(initialized).unwrap();
    c.sender().send(req(2, "call", json!({}))).unwrap();
    // Answered within the test's wait (10 s), far inside the acknowledgement's 120 s.
    assert!(matches!(next(&c.receiver()), Message::Response(r) if r.id == RequestId::Number(2)));
    // The GET stream is opened all the same (its request may still be on its way).
    let mut methods = Vec::new();
    while !methods.iter().any(|m| m == "GET ") {
        let s = seen
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("no GET: {methods:?}"));
        methods.push(format!("{} {}", s.method, s.rpc_method()));
    }
    drop(release);
    c.close();
}

/// A server that stalls the session's DELETE cannot hold `close` up for the connect timeout:
/// the courtesy is waited for briefly (it once took 10 s, in `drop` too).
#[test]
fn a_stalled_delete_does_not_hold_close_up() {
    let (release, held) = bounded::<()>(0);
    let (addr, seen) = serve(Arc::new(move |s: &Seen, conn: &mut TcpStream| {
        match (s.method.as_str(), s.rpc_method()) {
            ("POST", "initialize") => init_answer(conn, s),
            ("DELETE", _) => {
                let _ = held.recv();
            }
            ("GET", _) => bare(conn, 405, ""),
            _ => bare(conn, 202, ""),
        }
    }));
    let cfg = HttpClientConfig::builder()
        .connect_timeout(Duration::from_secs(60))
        .build();
    let mut c = connect(addr, cfg);
    initialize(&c, &seen);
    let started = Instant::now();
    c.close();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "close took {took:?}");
    assert!(
        seen.try_iter().any(|s| s.method == "DELETE"),
        "the DELETE was sent"
    );
    drop(release);
}

/// An answer that comes broken (invalid UTF-8 in a string) on a stream that stays open fails
/// its request at once, with the request's id (it waited for the stream's end or the call's
/// timeout); a broken notification on the same stream is skipped, the answer after it delivered.
#[test]
fn a_broken_answer_fails_its_request_at_once() {
    let (release, held) = bounded::<()>(0);
    let (addr, seen) = serve(Arc::new(move |s: &Seen, conn: &mut TcpStream| {
        match (s.method.as_str(), s.rpc_method()) {
            ("POST", "initialize") => init_answer(conn, s),
            ("POST", m @ ("broken" | "fine")) => {
                let mut body = Vec::new();
                body.extend_from_slice(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
                );
                // A notification with a bad byte, then the answer (bad too for `broken`).
                body.extend_from_slice(
                    b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"\xff\"}}\n\n",
                );
                let id = &s.body["id"];
                let text = if m == "broken" {
                    &b"\xff"[..]
                } else {
                    &b"ok"[..]
                };
                body.extend_from_slice(
                    format!("data: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"t\":\"")
                        .as_bytes(),
                );
                body.extend_from_slice(text);
                body.extend_from_slice(b"\"}}\n\n");
                let _ = conn.write_all(&body);
                let _ = conn.flush();
                // The stream stays open.
                let _ = held.recv();
            }
            ("GET", _) => bare(conn, 405, ""),
            _ => bare(conn, 500, ""),
        }
    }));
    let mut c = connect(addr, HttpClientConfig::default());
    initialize(&c, &seen);
    c.sender().send(req(2, "broken", json!({}))).unwrap();
    loop {
        match next_event(&c.receiver()) {
            // The broken notification: no id.
            Incoming::Malformed { id: None, .. } => {}
            Incoming::Malformed { id, .. } => {
                assert_eq!(id, Some(RequestId::Number(2)));
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    c.sender().send(req(3, "fine", json!({}))).unwrap();
    loop {
        match next_event(&c.receiver()) {
            Incoming::Message(Message::Response(r)) => {
                assert_eq!(r.id, RequestId::Number(3));
                break;
            }
            // The broken notification: no id, skipped by the client.
            Incoming::Malformed { id: None, .. } => {}
            other => panic!("{other:?}"),
        }
    }
    drop(release);
    c.close();
}

#[test]
fn a_server_that_replays_what_it_sent_delivers_it_once_and_resumption_gives_up() {
    // Every stream, the first and each resumption, carries the same event (a request of the
    // server's) and ends at once with `retry: 0`. Delivered again it would be answered again
    // and count as progress, and the client would reconnect for ever as fast as it could.
    let event = r#"id: e-1
retry: 0
data: {"jsonrpc":"2.0","id":"srv-1","method":"ping"}

"#;
    let (addr, seen) = serve(Arc::new(move |s: &Seen, conn: &mut TcpStream| {
        match (s.method.as_str(), s.rpc_method()) {
            ("POST", "initialize") => init_answer(conn, s),
            ("POST" | "GET", _) => sse(conn, event),
            _ => bare(conn, 500, ""),
        }
    }));
    let cfg = HttpClientConfig::builder().max_reconnects(3).build();
    let mut c = connect(addr, cfg);
    initialize(&c, &seen);
    let started = Instant::now();
    c.sender().send(req(2, "slow", json!({}))).unwrap();
    let mut pings = 0;
    let failed = loop {
        match c.receiver().recv_timeout(WAIT).expect("the request ends") {
            Incoming::Message(Message::Request(r)) if r.method == "ping" => pings += 1,
            Incoming::Failed { id, error } => break (id, error),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(pings, 1, "the replayed request is delivered once");
    assert_eq!(failed.0, RequestId::Number(2));
    let e = failed
        .1
        .downcast_ref::<Error>()
        .expect("this crate's error");
    assert!(matches!(e, Error::StreamEnded { attempts: 3, .. }), "{e:?}");
    let gets = seen.try_iter().filter(|s| s.method == "GET").count();
    assert_eq!(gets, 3);
    // `retry: 0` is waited as the shortest delay the client allows, not as none.
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    c.close();
}

#[test]
fn a_stream_without_event_ids_that_ends_early_fails_the_request() {
    let (addr, seen) = serve(Arc::new(|s: &Seen, conn: &mut TcpStream| {
        sse(
            conn,
            if s.method == "POST" {
                ": nothing\n\n"
            } else {
                ""
            },
        );
    }));
    let mut c = connect(addr, HttpClientConfig::default());
    c.sender().send(req(3, "x", json!({}))).unwrap();
    let (id, reason) = failure(&c.receiver());
    assert_eq!(id, RequestId::Number(3));
    assert!(
        matches!(
            reason,
            Error::StreamEnded {
                attempts: 0,
                source: None
            }
        ),
        "{reason:?}"
    );
    c.close();
    assert!(
        seen.try_iter().all(|s| s.method == "POST"),
        "no resumption without ids"
    );
}

#[test]
fn answers_over_the_size_limit_are_refused() {
    let (addr, _seen) = serve(Arc::new(|s: &Seen, conn: &mut TcpStream| {
        let big = "x".repeat(8192);
        let body = json!({"jsonrpc": "2.0", "id": s.body["id"], "result": {"big": big}});
        if s.rpc_method() == "json" {
            json_answer(conn, 200, "", &body.to_string());
        } else {
            sse(conn, &format!("data: {body}\n\n"));
        }
    }));
    let cfg = HttpClientConfig::builder().max_message(1024).build();
    let mut c = connect(addr, cfg);
    for (id, method) in [(1, "json"), (2, "sse")] {
        c.sender().send(req(id, method, json!({}))).unwrap();
        match next_event(&c.receiver()) {
            Incoming::Malformed { id: Some(got), .. } => {
                assert_eq!(got, RequestId::Number(id));
            }
            other => panic!("{method}: {other:?}"),
        }
    }
    c.close();
}

#[test]
fn bare_http_errors_become_error_answers() {
    let (addr, _seen) = serve(Arc::new(|s: &Seen, conn: &mut TcpStream| {
        match s.rpc_method() {
            "a" => bare(conn, 405, "Allow: GET\r\n"),
            _ => bare(
                conn,
                401,
                "WWW-Authenticate: Bearer resource_metadata=\"http://x/.well-known/oauth-protected-resource\"\r\n",
            ),
        }
    }));
    let mut c = connect(addr, HttpClientConfig::default());
    let rx = c.receiver();
    c.sender().send(req(1, "a", json!({}))).unwrap();
    match next(&rx) {
        Message::Error(e) => {
            assert_eq!(e.id, Some(RequestId::Number(1)));
            assert_eq!(e.error.code, -32601);
            assert!(e.error.message.contains("405"));
        }
        other => panic!("{other:?}"),
    }
    c.sender().send(req(2, "b", json!({}))).unwrap();
    match next(&rx) {
        Message::Error(e) => {
            assert!(e.error.message.contains("401"));
            assert!(
                e.error.message.contains("resource_metadata"),
                "{}",
                e.error.message
            );
        }
        other => panic!("{other:?}"),
    }
    c.close();
}

#[test]
fn handshake_headers_a_refused_get_stream_and_delete_on_close() {
    let (addr, seen) = serve(Arc::new(|s: &Seen, conn: &mut TcpStream| {
        match (s.method.as_str(), s.rpc_method()) {
            ("POST", "initialize") => init_answer(conn, s),
            ("POST", "") if s.body.get("method").is_some() || s.body.get("id").is_some() => {
                bare(conn, 202, "")
            }
            ("POST", m) if m.starts_with("notifications/") => bare(conn, 202, ""),
            ("POST", _) => json_answer(
                conn,
                200,
                "",
                &json!({"jsonrpc": "2.0", "id": s.body["id"], "result": {}}).to_string(),
            ),
            ("GET", _) => bare(conn, 405, "Allow: POST\r\n"),
            ("DELETE", _) => bare(conn, 200, ""),
            _ => bare(conn, 500, ""),
        }
    }));
    let cfg = HttpClientConfig::builder()
        .header("Authorization", "Bearer t0k")
        .build();
    let mut c = connect(addr, cfg);
    initialize(&c, &seen);
    c.sender()
        .send(Message::Notification(Notification::bare(
            "notifications/initialized",
        )))
        .unwrap();
    let n = seen.recv_timeout(WAIT).unwrap();
    assert_eq!(n.rpc_method(), "notifications/initialized");
    assert_eq!(n.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(n.header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(n.header("authorization"), Some("Bearer t0k"));
    // The GET stream is tried once after the handshake; 405 is the end of it.
    let g = seen.recv_timeout(WAIT).unwrap();
    assert_eq!(g.method, "GET");
    assert_eq!(g.header("accept"), Some("text/event-stream"));
    // Requests still work.
    c.sender().send(req(2, "ping", json!({}))).unwrap();
    assert_eq!(next(&c.receiver()).id(), Some(&RequestId::Number(2)));
    assert_eq!(seen.recv_timeout(WAIT).unwrap().rpc_method(), "ping");
    c.close();
    let d = seen.recv_timeout(WAIT).unwrap();
    assert_eq!(d.method, "DELETE");
    assert_eq!(d.header("mcp-session-id"), Some("sess-1"));
    assert!(
        seen.try_iter().all(|s| s.method != "GET"),
        "no second GET after 405"
    );
}

#[test]
fn a_notification_the_server_never_acknowledges_does_not_block_the_rest() {
    let (addr, seen) = serve(Arc::new(|s: &Seen, conn: &mut TcpStream| {
        if s.body.get("id").is_none() {
            // Never answer a notification: hold the connection for a while, then drop it.
            let (_keep, hold) = bounded::<()>(0);
            let _ = hold.recv_timeout(WAIT);
            return;
        }
        let body = json!({"jsonrpc": "2.0", "id": s.body["id"], "result": {}});
        json_answer(conn, 200, "", &body.to_string());
    }));
    // An acknowledgement the client would wait a minute for: the requests after the
    // notification go out and are answered meanwhile (they used to queue behind it).
    let cfg = HttpClientConfig::builder()
        .ack_timeout(Duration::from_secs(60))
        .build();
    let mut c = connect(addr, cfg);
    c.sender()
        .send(Message::Notification(Notification::bare("notifications/x")))
        .unwrap();
    for id in 1..=3 {
        c.sender().send(req(id, "ping", json!({}))).unwrap();
        assert_eq!(next(&c.receiver()).id(), Some(&RequestId::Number(id)));
    }
    // It was POSTed all the same (the pings may have overtaken it).
    let methods: Vec<String> = (0..4)
        .map(|_| seen.recv_timeout(WAIT).unwrap().rpc_method().to_owned())
        .collect();
    assert!(
        methods.iter().any(|m| m == "notifications/x"),
        "{methods:?}"
    );
    c.close();
}

#[test]
fn a_stream_that_goes_silent_times_out() {
    let (addr, _seen) = serve(Arc::new(|_: &Seen, conn: &mut TcpStream| {
        let _ = write!(
            conn,
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n: started\n\n"
        );
        let _ = conn.flush();
        // Then nothing, for longer than the client's read timeout.
        let (_keep, hold) = bounded::<()>(0);
        let _ = hold.recv_timeout(WAIT);
    }));
    let cfg = HttpClientConfig::builder()
        .read_timeout(Duration::from_millis(300))
        .build();
    let mut c = connect(addr, cfg);
    let started = Instant::now();
    c.sender().send(req(1, "slow", json!({}))).unwrap();
    let (id, reason) = failure(&c.receiver());
    assert_eq!(id, RequestId::Number(1));
    assert!(
        matches!(&reason, Error::StreamEnded { attempts: 0, source: Some(e) } if matches!(**e, Error::Io(_))),
        "{reason:?}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the read timeout ended it"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    c.close();
}

/// A 2026-07-28 request: the revision in `_meta`.
fn modern(id: i64, method: &str, mut params: Value) -> Message {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    Message::Request(Request::new(RequestId::Number(id), method, &params).unwrap())
}

#[test]
fn x_mcp_header_marks_become_mcp_param_headers() {
    let (addr, seen) = serve(Arc::new(|s: &Seen, conn: &mut TcpStream| {
        let result = match s.rpc_method() {
            "tools/list" => json!({"tools": [
                {"name": "route", "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"}}}},
                {"name": "broken", "inputSchema": {"type": "object", "properties": {
                    "o": {"type": "object", "x-mcp-header": "O"}}}}
            ], "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}),
            _ => json!({"content": [], "resultType": "complete"}),
        };
        let body = json!({"jsonrpc": "2.0", "id": s.body["id"], "result": result});
        json_answer(conn, 200, "", &body.to_string());
    }));
    let mut c = connect(addr, HttpClientConfig::default());
    let rx = c.receiver();
    c.sender().send(modern(1, "tools/list", json!({}))).unwrap();
    let listed: Value = match next(&rx) {
        Message::Response(r) => r.result().unwrap(),
        other => panic!("{other:?}"),
    };
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["route"], "the tool with an invalid mark is dropped");
    let _ = seen.recv_timeout(WAIT).unwrap();
    c.sender()
        .send(modern(
            2,
            "tools/call",
            json!({"name": "route", "arguments": {"region": "Zürich"}}),
        ))
        .unwrap();
    assert!(matches!(next(&rx), Message::Response(_)));
    let call = seen.recv_timeout(WAIT).unwrap();
    assert_eq!(call.header("mcp-method"), Some("tools/call"));
    assert_eq!(call.header("mcp-name"), Some("route"));
    assert_eq!(call.header("mcp-protocol-version"), Some("2026-07-28"));
    let region = call.header("mcp-param-region").expect("Mcp-Param-Region");
    // Not plain ASCII: the SEP's base64 form, "Zürich" in UTF-8.
    assert_eq!(region, "=?base64?WsO8cmljaA==?=");
    c.close();
}

#[test]
fn a_stream_that_keeps_making_progress_is_resumed_past_the_bound() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let gets = Arc::new(AtomicUsize::new(0));
    let g = Arc::clone(&gets);
    let (addr, seen) = serve(Arc::new(move |s: &Seen, conn: &mut TcpStream| {
        match (s.method.as_str(), s.rpc_method()) {
            ("POST", "initialize") => init_answer(conn, s),
            ("POST", _) => sse(conn, "id: p-0\nretry: 10\ndata: \n\n"),
            ("GET", _) => {
                // Each resumption carries one progress event, then the server hangs up (SSE
                // polling); the fifth one carries the answer.
                let n = g.fetch_add(1, Ordering::SeqCst) + 1;
                let msg = if n < 5 {
                    json!({"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": 1, "progress": n}})
                } else {
                    json!({"jsonrpc": "2.0", "id": 2, "result": {}})
                };
                sse(conn, &format!("id: p-{n}\ndata: {msg}\n\n"));
            }
            _ => bare(conn, 500, ""),
        }
    }));
    let cfg = HttpClientConfig::builder().max_reconnects(2).build();
    let mut c = connect(addr, cfg);
    initialize(&c, &seen);
    let rx = c.receiver();
    c.sender().send(req(2, "slow", json!({}))).unwrap();
    for _ in 1..5 {
        assert_eq!(next(&rx).method(), Some("notifications/progress"));
    }
    assert_eq!(next(&rx).id(), Some(&RequestId::Number(2)));
    assert_eq!(gets.load(Ordering::SeqCst), 5);
    c.close();
}

#[test]
fn the_get_stream_is_reopened_from_its_last_event_id() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let gets = Arc::new(AtomicUsize::new(0));
    let g = Arc::clone(&gets);
    let (addr, seen) = serve(Arc::new(move |s: &Seen, conn: &mut TcpStream| {
        match (s.method.as_str(), s.rpc_method()) {
            ("POST", "initialize") => init_answer(conn, s),
            ("POST", _) => bare(conn, 202, ""),
            ("GET", _) if g.fetch_add(1, Ordering::SeqCst) == 0 => sse(
                conn,
                "id: g-7\nretry: 50\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
            ),
            // The second time: no more stream (ends the test's GET traffic).
            ("GET", _) => bare(conn, 405, ""),
            _ => bare(conn, 500, ""),
        }
    }));
    let mut c = connect(addr, HttpClientConfig::default());
    initialize(&c, &seen);
    c.sender()
        .send(Message::Notification(Notification::bare(
            "notifications/initialized",
        )))
        .unwrap();
    assert_eq!(
        next(&c.receiver()).method(),
        Some("notifications/tools/list_changed")
    );
    let mut gets_seen = Vec::new();
    while gets_seen.len() < 2 {
        let s = seen.recv_timeout(WAIT).expect("two GETs");
        if s.method == "GET" {
            gets_seen.push(s);
        }
    }
    assert_eq!(gets_seen[0].header("last-event-id"), None);
    assert_eq!(gets_seen[1].header("last-event-id"), Some("g-7"));
    assert!(gets_seen[1].at - gets_seen[0].at >= Duration::from_millis(50));
    c.close();
}

/// SSE events carrying a notification each, ids `e<from>` to `e<to>`.
fn notifications(from: usize, to: usize) -> String {
    let mut s = String::from("retry: 0\n");
    for i in from..=to {
        s.push_str(&format!(
            "id: e{i}\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":{i}}}}}\n\n"
        ));
    }
    s
}

/// A server that answers every resumption by replaying its stream (against `Last-Event-ID`)
/// from the start or from the middle, beyond the 4,096 ids the client remembers: the replay
/// is recognised (by an anchor, one id in 64 kept of older events), nothing of it or at most
/// 63 events are delivered again, and a resumption that only replays is no progress, so it
/// meets the bound instead of delivering the stream again and again for ever (it did).
#[test]
fn replays_of_the_stream_deliver_at_most_once_or_meet_the_bound() {
    const N: usize = 5000;
    // (replayed from, then the answer, most deliveries of the N events allowed)
    for (from, answered, most) in [(1, true, N), (1, false, N), (100, false, N + 3 * 63)] {
        let first = notifications(1, N);
        let replay = notifications(from, N);
        let (addr, seen) = serve(Arc::new(move |s: &Seen, conn: &mut TcpStream| {
            match (s.method.as_str(), s.rpc_method()) {
                ("POST", "initialize") => init_answer(conn, s),
                ("POST", _) => sse(conn, &first),
                ("GET", _) if answered => sse(
                    conn,
                    &format!(
                        "{replay}id: last\ndata: {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{}}}}\n\n"
                    ),
                ),
                ("GET", _) => sse(conn, &replay),
                _ => bare(conn, 500, ""),
            }
        }));
        let cfg = HttpClientConfig::builder().max_reconnects(3).build();
        let mut c = connect(addr, cfg);
        initialize(&c, &seen);
        c.sender().send(req(2, "slow", json!({}))).unwrap();
        let mut delivered = 0usize;
        let end = loop {
            match c.receiver().recv_timeout(WAIT).expect("the request ends") {
                Incoming::Message(Message::Notification(_)) => {
                    delivered += 1;
                    assert!(delivered <= 4 * N, "from e{from}: resumed for ever");
                }
                other => break other,
            }
        };
        if answered {
            assert!(
                matches!(end, Incoming::Message(Message::Response(_))),
                "{end:?}"
            );
        } else {
            match end {
                Incoming::Failed { error, .. } => {
                    let e = error.downcast_ref::<Error>().expect("this crate's error");
                    assert!(matches!(e, Error::StreamEnded { attempts: 3, .. }), "{e:?}");
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(
            delivered >= N && delivered <= most,
            "from e{from}: {delivered}"
        );
        c.close();
    }
}
