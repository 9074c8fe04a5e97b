//! The HTTP client against the crate's own server, legacy era: session id minted by
//! `initialize` and sent back, SSE answers with notifications first, the GET stream, 404 for a
//! forgotten session, DELETE on close. Real sockets on 127.0.0.1.
#![cfg(feature = "client")]

mod common;

use std::time::Duration;

use common::{WAIT, next, req, serve};
use crossbeam_channel::Receiver;
use mcp_core::jsonrpc::{Message, Notification, RequestId};
use mcp_core::transport::Incoming;
use mcp_http_blocking::Error;
use mcp_http_blocking::client::{HttpClient, HttpClientConfig, SESSION_NOT_FOUND};
use mcp_http_blocking::{HttpConfig, ServerHandle};
use serde_json::{Value, json};

/// The server's io timeout.
const IO: Duration = Duration::from_secs(5);

fn url(h: &ServerHandle) -> String {
    format!("http://{}/mcp", h.local_addr())
}

fn result(m: &Message) -> Value {
    match m {
        Message::Response(r) => r.result().unwrap(),
        other => panic!("expected a response, got {other:?}"),
    }
}

/// initialize + notifications/initialized, as the MCP client does it.
fn handshake(c: &HttpClient, version: &str) {
    c.sender()
        .send(req(
            1,
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ))
        .unwrap();
    let m = next(&c.receiver());
    assert_eq!(result(&m)["protocolVersion"], version);
    assert!(c.session_id().is_some(), "the minted session id is kept");
    c.sender()
        .send(Message::Notification(Notification::bare(
            "notifications/initialized",
        )))
        .unwrap();
}

#[test]
fn session_requests_sse_answers_and_delete_on_close() {
    let (h, ctl) = serve(HttpConfig::default(), IO);
    let mut c = HttpClient::connect(&url(&h), HttpClientConfig::default()).unwrap();
    handshake(&c, "2025-11-25");
    assert_eq!(h.core().session_count(), 1);
    let rx = c.receiver();

    // A plain request: only answered because the session id goes back on it.
    c.sender().send(req(2, "echo", json!({"x": 1}))).unwrap();
    let m = next(&rx);
    assert_eq!(m.id(), Some(&RequestId::Number(2)));
    assert_eq!(result(&m)["echo"]["x"], 1);

    // An SSE answer in ten pieces: the progress notifications come first (each sent once the
    // one before has arrived), then the answer.
    c.sender().send(req(3, "burst", json!({}))).unwrap();
    for i in 0..10 {
        let m = next(&rx);
        assert_eq!(m.method(), Some("notifications/progress"), "event {i}");
        if i < 9 {
            ctl.go_tx.send(()).unwrap();
        }
    }
    assert_eq!(next(&rx).id(), Some(&RequestId::Number(3)));

    // Unknown method: the server's JSON-RPC error reaches the caller with the request's id.
    c.sender().send(req(4, "nope", json!({}))).unwrap();
    match next(&rx) {
        Message::Error(e) => {
            assert_eq!(e.id, Some(RequestId::Number(4)));
            assert_eq!(e.error.code, -32601);
        }
        other => panic!("{other:?}"),
    }

    // Closing DELETEs the session: the server closes it at once.
    c.close();
    assert!(ctl.wait_for("session-closed", WAIT).is_some());
    // The server takes a session out of its table before it closes it.
    assert_eq!(h.core().session_count(), 0);
    h.shutdown();
}

#[test]
fn concurrent_requests_do_not_wait_for_a_slow_one() {
    let (h, ctl) = serve(HttpConfig::default(), IO);
    let mut c = HttpClient::connect(&url(&h), HttpClientConfig::default()).unwrap();
    handshake(&c, "2025-06-18");
    let rx = c.receiver();
    c.sender().send(req(10, "gated", json!({}))).unwrap();
    assert_eq!(next(&rx).method(), Some("notifications/progress"));
    // The gated call is still open; a ping goes through meanwhile.
    c.sender().send(req(11, "ping", json!({}))).unwrap();
    assert_eq!(next(&rx).id(), Some(&RequestId::Number(11)));
    ctl.go_tx.send(()).unwrap();
    assert_eq!(next(&rx).method(), Some("notifications/progress"));
    assert_eq!(next(&rx).id(), Some(&RequestId::Number(10)));
    c.close();
    h.shutdown();
}

#[test]
fn unrelated_notifications_arrive_on_the_get_stream() {
    let (h, _ctl) = serve(HttpConfig::default(), IO);
    let mut c = HttpClient::connect(&url(&h), HttpClientConfig::default()).unwrap();
    handshake(&c, "2025-11-25");
    let rx = c.receiver();
    // The server can only send an unrelated notification once the GET stream is attached;
    // ask until it says it could. This is a poll: the client opens its GET stream on its own
    // after the handshake, and neither side offers an event for "attached". Each try is a full
    // round trip, with no pause between them.
    let mut id = 100;
    let mut seen = 0;
    let deadline = std::time::Instant::now() + WAIT;
    let sent = loop {
        id += 1;
        c.sender()
            .send(req(id, "notify_unrelated", json!({})))
            .unwrap();
        let sent = loop {
            let m = next(&rx);
            if m.method() == Some("notifications/message") {
                seen += 1;
            } else if m.id() == Some(&RequestId::Number(id)) {
                break result(&m)["sent"] == true;
            }
        };
        if sent || std::time::Instant::now() >= deadline {
            break sent;
        }
    };
    assert!(sent, "the GET stream was opened after the handshake");
    if seen == 0 {
        let m = next(&rx);
        assert_eq!(m.method(), Some("notifications/message"));
    }
    c.close();
    h.shutdown();
}

#[test]
fn a_forgotten_session_is_replaced_and_the_request_sent_again() {
    let (h, _ctl) = serve(HttpConfig::default(), IO);
    let mut c = HttpClient::connect(&url(&h), HttpClientConfig::default()).unwrap();
    handshake(&c, "2025-06-18");
    let first = c.session_id().unwrap();
    let rx = c.receiver();
    h.core().close_all();
    assert_eq!(h.core().session_count(), 0);

    // The request meets a 404; the client starts a new session and the request is answered.
    c.sender().send(req(5, "echo", json!({"n": 5}))).unwrap();
    let m = next(&rx);
    assert_eq!(m.id(), Some(&RequestId::Number(5)));
    assert_eq!(result(&m)["echo"]["n"], 5);
    let second = c.session_id().unwrap();
    assert_ne!(first, second, "a new session id");
    assert_eq!(h.core().session_count(), 1);
    assert!(c.end_reason().is_none());
    // The repeated initialize is the client's business: nothing of it reaches the caller.
    assert!(rx.try_recv().is_err());

    // And the new session keeps working.
    c.sender().send(req(6, "echo", json!({"n": 6}))).unwrap();
    assert_eq!(result(&next(&rx))["echo"]["n"], 6);
    c.close();
    h.shutdown();
}

#[test]
fn a_new_session_gets_the_subscriptions_and_log_level_again() {
    let (h, ctl) = serve(HttpConfig::default(), IO);
    let mut c = HttpClient::connect(&url(&h), HttpClientConfig::default()).unwrap();
    handshake(&c, "2025-11-25");
    let rx = c.receiver();
    let calls = [
        ("resources/subscribe", json!({"uri": "file:///a"})),
        ("resources/subscribe", json!({"uri": "file:///b"})),
        ("resources/unsubscribe", json!({"uri": "file:///a"})),
        ("logging/setLevel", json!({"level": "warning"})),
        ("logging/setLevel", json!({"level": "debug"})),
    ];
    for (i, (method, params)) in calls.into_iter().enumerate() {
        c.sender().send(req(10 + i as i64, method, params)).unwrap();
        result(&next(&rx));
    }
    let got = |ctl: &common::Ctl| -> Vec<String> {
        std::iter::from_fn(|| ctl.ev_rx.try_recv().ok())
            .filter(|e| e.starts_with("got:"))
            .collect()
    };
    assert_eq!(got(&ctl).len(), 5);
    h.core().close_all();

    c.sender().send(req(20, "echo", json!({"n": 20}))).unwrap();
    let m = next(&rx);
    assert_eq!(m.id(), Some(&RequestId::Number(20)));
    // Set up again before the request went out: the last level, the one subscription left.
    assert_eq!(
        got(&ctl),
        [
            "got:logging/setLevel debug",
            "got:resources/subscribe file:///b"
        ]
    );
    // Their answers are the client's business.
    assert!(rx.try_recv().is_err());
    c.close();
    h.shutdown();
}

#[test]
fn a_forgotten_session_gives_a_clean_error_when_renewal_is_off() {
    let (h, _ctl) = serve(HttpConfig::default(), IO);
    let cfg = HttpClientConfig::builder().renew_session(false).build();
    let mut c = HttpClient::connect(&url(&h), cfg).unwrap();
    handshake(&c, "2025-03-26");
    h.core().close_all();
    c.sender().send(req(5, "echo", json!({}))).unwrap();
    match next(&c.receiver()) {
        Message::Error(e) => {
            assert_eq!(e.id, Some(RequestId::Number(5)));
            assert_eq!(e.error.code, SESSION_NOT_FOUND);
            assert!(e.error.message.contains("404"), "{}", e.error.message);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(c.end_reason(), Some(Error::SessionLost { url: u }) if u == url(&h)));
    c.close();
    h.shutdown();
}

#[test]
fn a_refused_connection_fails_the_request_not_the_client() {
    // A port with nothing listening: bind, note it, and close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut c = HttpClient::connect(
        &format!("http://127.0.0.1:{port}/mcp"),
        HttpClientConfig::default(),
    )
    .unwrap();
    c.sender().send(req(1, "ping", json!({}))).unwrap();
    // Not an answer from a server: a failed exchange.
    match c.receiver().recv_timeout(WAIT).unwrap() {
        Incoming::Failed { id, error } => {
            assert_eq!(id, RequestId::Number(1));
            // ureq's error, reachable as the source.
            let e = error.downcast_ref::<Error>().expect("this crate's error");
            assert!(matches!(e, Error::Http { .. }), "{e:?}");
            let source = std::error::Error::source(e).expect("a source");
            assert!(source.downcast_ref::<ureq::Error>().is_some(), "{source:?}");
        }
        other => panic!("{other:?}"),
    }
    c.close();
}

/// Reads one HTTP request's head and body from `conn`: the body as text, `None` when the
/// connection ended first.
fn read_request(conn: std::net::TcpStream) -> Option<String> {
    use std::io::{BufRead, BufReader, Read};
    let mut r = BufReader::new(conn);
    let mut len = 0;
    loop {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap_or(0) == 0 {
            return None;
        }
        let l = l.trim_end().to_ascii_lowercase();
        if l.is_empty() {
            break;
        }
        if let Some(v) = l.strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; len];
    let _ = r.read_exact(&mut body);
    Some(String::from_utf8_lossy(&body).into_owned())
}

/// A server that answers every POST with `200 application/json` and this body.
fn json_server(body: &'static str) -> std::net::SocketAddr {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            std::thread::spawn(move || {
                let mut w = conn.try_clone().unwrap();
                if read_request(conn).is_none() {
                    return;
                }
                let _ = write!(
                    w,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    addr
}

#[test]
fn a_json_reply_without_the_answer_fails_the_request_at_once() {
    // A notification, or an answer to another request: the exchange is over, and nothing
    // else will answer this one, so it fails now rather than at the caller's timeout.
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
    ] {
        let addr = json_server(body);
        let mut c = HttpClient::connect(&format!("http://{addr}/mcp"), HttpClientConfig::default())
            .unwrap();
        c.sender().send(req(1, "ping", json!({}))).unwrap();
        let failed = loop {
            match c.receiver().recv_timeout(WAIT).expect("the request ends") {
                Incoming::Failed { id, error } => break (id, error),
                // The message itself still goes to the client.
                Incoming::Message(_) => {}
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(failed.0, RequestId::Number(1));
        let e = failed
            .1
            .downcast_ref::<Error>()
            .expect("this crate's error");
        assert!(matches!(e, Error::StreamEnded { .. }), "{e:?}");
        c.close();
    }
}

/// A server that answers a `tools/call` POST with an SSE stream holding one question
/// (`elicitation/create`) and nothing more, and refuses (400) every POSTed answer: as a server
/// that cannot take answers where it asks (rmcp's stateless mode does this).
fn refusing_server() -> (std::net::SocketAddr, crossbeam_channel::Sender<()>) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // Dropped by the test at its end: the held streams end then.
    let (hold_tx, hold_rx) = crossbeam_channel::bounded::<()>(0);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let hold = hold_rx.clone();
            std::thread::spawn(move || {
                let mut w = conn.try_clone().unwrap();
                let Some(body) = read_request(conn) else {
                    return;
                };
                if body.contains("tools/call") {
                    let ask = r#"{"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}}"#;
                    let _ = write!(
                        w,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                         Connection: close\r\n\r\ndata: {ask}\n\n"
                    );
                    let _ = w.flush();
                    let _ = hold.recv(); // the stream stays open, and never answers
                } else {
                    let status = if body.contains("\"result\"") {
                        "400 Bad Request"
                    } else {
                        "202 Accepted"
                    };
                    let _ = write!(
                        w,
                        "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                }
            });
        }
    });
    (addr, hold_tx)
}

#[test]
fn an_answer_the_server_refuses_fails_the_request_it_came_with_at_once() {
    let (addr, _hold) = refusing_server();
    let mut c =
        HttpClient::connect(&format!("http://{addr}/mcp"), HttpClientConfig::default()).unwrap();
    c.sender()
        .send(req(1, "tools/call", json!({"name": "ask"})))
        .unwrap();
    let Incoming::Message(Message::Request(ask)) = c.receiver().recv_timeout(WAIT).unwrap() else {
        panic!("the server's question first");
    };
    assert_eq!(ask.method, "elicitation/create");
    c.sender()
        .send(Message::Response(
            mcp_core::jsonrpc::Response::new(ask.id.clone(), &json!({"action": "decline"}))
                .unwrap(),
        ))
        .unwrap();
    // Not the call's timeout (a minute): the refusal ends it.
    match c
        .receiver()
        .recv_timeout(WAIT)
        .expect("the call fails at once")
    {
        Incoming::Failed { id, error } => {
            assert_eq!(id, RequestId::Number(1));
            let e = error.downcast_ref::<Error>().expect("this crate's error");
            assert!(
                matches!(e, Error::AnswerRefused { method, status: 400 } if method == "elicitation/create"),
                "{e:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    c.close();
}

#[test]
fn urls_must_be_http() {
    let e = HttpClient::connect("ftp://x/mcp", HttpClientConfig::default()).unwrap_err();
    assert!(
        matches!(&e, mcp_http_blocking::Error::InvalidUrl { url, .. } if url == "ftp://x/mcp"),
        "{e}"
    );
}

#[test]
fn an_http_sse_server_of_2024_11_05_is_reached_through_its_endpoint_event() {
    let (h, _ctl) = serve(HttpConfig::default(), IO);
    let sse_url = format!("http://{}/sse", h.local_addr());
    let mut c = HttpClient::connect(&sse_url, HttpClientConfig::default()).unwrap();
    let rx = c.receiver();
    // POST to /sse gets 405; the client GETs /sse, reads the endpoint, and posts there.
    c.sender()
        .send(req(
            1,
            "initialize",
            json!({"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ))
        .unwrap();
    assert_eq!(result(&next(&rx))["protocolVersion"], "2024-11-05");
    assert_eq!(c.session_id(), None);
    c.sender()
        .send(Message::Notification(Notification::bare(
            "notifications/initialized",
        )))
        .unwrap();
    // Answers, notifications first, all come on the one stream.
    c.sender().send(req(2, "progress", json!({}))).unwrap();
    assert_eq!(next(&rx).method(), Some("notifications/progress"));
    assert_eq!(next(&rx).id(), Some(&RequestId::Number(2)));
    // The stream is the session: the server ending it is the end of the connection.
    h.core().close_all();
    match rx.recv_timeout(WAIT).expect("an event") {
        Incoming::Broken(error) => assert!(
            matches!(
                error.downcast_ref::<Error>(),
                Some(Error::StreamEnded { attempts: 0, .. })
            ),
            "{error:?}"
        ),
        other => panic!("{other:?}"),
    }
    c.close();
    h.shutdown();
}

/// A scripted server of the 2024-11-05 HTTP+SSE era at `/mcp` whose answer to a POST there is
/// `status`: it records what it saw ("POST /mcp", "GET /mcp") and answers `initialize` on its
/// SSE stream.
struct OldServer {
    addr: std::net::SocketAddr,
    seen: Receiver<String>,
}

fn old_server(status: u16) -> OldServer {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::{Arc, Mutex};

    fn head(r: &mut BufReader<TcpStream>) -> Option<(String, usize)> {
        let mut line = String::new();
        r.read_line(&mut line).ok()?;
        let first = line
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        let mut len = 0;
        loop {
            let mut l = String::new();
            if r.read_line(&mut l).ok()? == 0 {
                return None;
            }
            let l = l.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((n, v)) = l.split_once(':') {
                if n.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().ok()?;
                }
            }
        }
        Some((first, len))
    }

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, seen) = crossbeam_channel::bounded(64);
    let stream: Arc<Mutex<Option<TcpStream>>> = Arc::default();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let (tx, stream) = (tx.clone(), stream.clone());
            std::thread::spawn(move || {
                let mut w = conn.try_clone().unwrap();
                let mut r = BufReader::new(conn);
                while let Some((what, len)) = head(&mut r) {
                    let mut body = vec![0; len];
                    if r.read_exact(&mut body).is_err() {
                        return;
                    }
                    let _ = tx.try_send(what.clone());
                    match what.as_str() {
                        "POST /mcp" => {
                            let _ = write!(
                                w,
                                "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            );
                            return;
                        }
                        "GET /mcp" => {
                            // The stream is kept before the endpoint goes out: the client may
                            // POST to it (from another connection) the moment it reads it.
                            *stream.lock().unwrap() = w.try_clone().ok();
                            let _ = write!(
                                w,
                                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: endpoint\ndata: /messages\n\n"
                            );
                        }
                        _ => {
                            let msg: Value = serde_json::from_slice(&body).unwrap_or_default();
                            if msg["method"] == "initialize" {
                                let answer = json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                                    "protocolVersion": "2024-11-05", "capabilities": {},
                                    "serverInfo": {"name": "old", "version": "1"}}});
                                if let Some(s) = stream.lock().unwrap().as_mut() {
                                    let _ = write!(s, "event: message\ndata: {answer}\n\n");
                                }
                            }
                            let _ = write!(w, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
                        }
                    }
                }
            });
        }
    });
    OldServer { addr, seen }
}

fn initialize_old() -> Message {
    req(
        1,
        "initialize",
        json!({"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    )
}

/// The backwards-compatibility rule (issue 20): any 4xx to the `initialize` POST means try the
/// old transport, not only 400, 404 and 405.
#[test]
fn any_4xx_to_initialize_falls_back_to_http_sse() {
    for status in [410, 415, 422] {
        let s = old_server(status);
        let mut c = HttpClient::connect(
            &format!("http://{}/mcp", s.addr),
            HttpClientConfig::default(),
        )
        .unwrap();
        c.sender().send(initialize_old()).unwrap();
        let m = next(&c.receiver());
        assert_eq!(result(&m)["protocolVersion"], "2024-11-05", "HTTP {status}");
        assert_eq!(s.seen.recv_timeout(WAIT).unwrap(), "POST /mcp");
        assert_eq!(s.seen.recv_timeout(WAIT).unwrap(), "GET /mcp");
        c.close();
    }
}

/// ... but 401 and 403 belong to the authorization flow: the `initialize` fails, and the client
/// never tries the old transport.
#[test]
fn a_401_or_403_to_initialize_is_no_fallback() {
    for status in [401, 403] {
        let s = old_server(status);
        let mut c = HttpClient::connect(
            &format!("http://{}/mcp", s.addr),
            HttpClientConfig::default(),
        )
        .unwrap();
        c.sender().send(initialize_old()).unwrap();
        match c.receiver().recv_timeout(WAIT).expect("an event") {
            Incoming::Message(Message::Error(_)) | Incoming::Failed { .. } => {}
            other => panic!("HTTP {status}: expected a failure, got {other:?}"),
        }
        assert_eq!(s.seen.recv_timeout(WAIT).unwrap(), "POST /mcp");
        assert!(
            s.seen.try_recv().is_err(),
            "HTTP {status}: no GET for the old transport"
        );
        c.close();
    }
}
