//! The client against servers that try to hang it (issue 20): each scripted server misbehaves
//! in one way, and the client must end within its own bound with a clear error. Over
//! `mcp_stdio::memory` pipes, and a loopback HTTP listener for the HTTP transport.
//!
//! The stated slack: a call ends within its timeout plus [`SLACK`].

use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, bounded};
use mcp_client::{ChannelTransport, Client, Error, Revision, Timeout, Unexpected};
use mcp_core::jsonrpc::{Message, decode};
use mcp_stdio::{Connection, FrameError};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);
/// How much past its own bound a call may end.
const SLACK: Duration = Duration::from_millis(500);

fn msg(v: Value) -> Message {
    decode(&serde_json::to_vec(&v).unwrap()).unwrap()
}

fn to_value(m: &Message) -> Value {
    serde_json::from_slice(&m.to_vec()).unwrap()
}

fn initialize_answer(v: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": v["id"], "result": {
        "protocolVersion": v["params"]["protocolVersion"],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "hostile", "version": "1"}}})
}

/// A legacy server on one end of a memory pipe of `capacity`: it answers the handshake and
/// gives every later request to `script` (its answers are sent; `None` stops reading for
/// good, holding the pipe open). Tells `requests` each request it got.
fn server(
    capacity: usize,
    mut script: impl FnMut(&Value) -> Option<Vec<Value>> + Send + 'static,
) -> (ChannelTransport, Receiver<Value>) {
    let (a, b) = mcp_stdio::memory(capacity).unwrap();
    let (seen_tx, seen) = bounded(100_000);
    thread::spawn(move || {
        for item in &b.receiver {
            let Ok(m) = item else { continue };
            let v = to_value(&m);
            let replies = match v["method"].as_str() {
                Some("initialize") => vec![initialize_answer(&v)],
                Some("notifications/initialized") | Some("notifications/cancelled") => vec![],
                _ => {
                    let _ = seen_tx.try_send(v.clone());
                    match script(&v) {
                        Some(r) => r,
                        None => {
                            // Stops reading, keeps the pipe: a server that hangs.
                            let _keep = (b.sender, b.receiver);
                            thread::park();
                            return;
                        }
                    }
                }
            };
            for r in replies {
                if b.sender.send(msg(r)).is_err() {
                    return;
                }
            }
        }
    });
    (ChannelTransport::new(a), seen)
}

fn tool(n: usize) -> Value {
    json!({"name": format!("t{n}"), "inputSchema": {"type": "object"}})
}

/// Endless pagination: every page has a new `nextCursor`. Without bounds the iterator never
/// ended (memory grew by the page).
#[test]
fn a_listing_that_pages_without_end_stops_at_the_page_bound() {
    let mut n = 0;
    let (t, seen) = server(16, move |v| {
        n += 1;
        Some(vec![json!({"jsonrpc": "2.0", "id": v["id"], "result": {
            "tools": [tool(n)], "nextCursor": format!("c{n}")}})])
    });
    let client = Client::builder()
        .revision(Revision::Legacy)
        .max_list_pages(50)
        .connect(t)
        .unwrap();
    let got: Vec<_> = client.list_tools().collect();
    let (ok, err): (Vec<_>, Vec<_>) = got.into_iter().partition(Result::is_ok);
    assert_eq!(ok.len(), 50, "the items of the pages within the bound");
    match &err[..] {
        [Err(Error::Unexpected(Unexpected::ListTooLong { method, reached }))] => {
            assert_eq!(*method, "tools/list");
            assert!(reached.contains("50 pages"), "{reached}");
        }
        other => panic!("expected one ListTooLong, got {other:?}"),
    }
    assert_eq!(
        seen.try_iter().count(),
        50,
        "no page past the bound was asked for"
    );
}

#[test]
fn a_listing_stops_at_the_item_bound() {
    let mut n = 0;
    let (t, _seen) = server(16, move |v| {
        n += 1;
        let tools: Vec<Value> = (0..200).map(|i| tool(n * 1000 + i)).collect();
        Some(vec![json!({"jsonrpc": "2.0", "id": v["id"], "result": {
            "tools": tools, "nextCursor": format!("c{n}")}})])
    });
    let client = Client::builder()
        .revision(Revision::Legacy)
        .max_list_items(1_000)
        .connect(t)
        .unwrap();
    let got: Vec<_> = client.list_tools().collect();
    assert_eq!(got.iter().filter(|r| r.is_ok()).count(), 1_000);
    let last = got.last().unwrap();
    assert!(
        matches!(last, Err(Error::Unexpected(Unexpected::ListTooLong { reached, .. })) if reached.contains("1000 items")),
        "{last:?}"
    );
}

/// Pages as large as a message may be, without end: the pages and items bounds alone would
/// let a caller collecting the list hold gigabytes; the bytes bound ends it.
#[test]
fn a_listing_of_large_pages_stops_at_the_byte_bound() {
    let mut n = 0;
    let (t, seen) = server(16, move |v| {
        n += 1;
        let mut t = tool(n);
        t["description"] = json!("d".repeat(256 * 1024));
        Some(vec![json!({"jsonrpc": "2.0", "id": v["id"], "result": {
            "tools": [t], "nextCursor": format!("c{n}")}})])
    });
    let client = Client::builder()
        .revision(Revision::Legacy)
        .max_list_bytes(4 << 20)
        .connect(t)
        .unwrap();
    let got: Vec<_> = client.list_tools().collect();
    let ok = got.iter().filter(|r| r.is_ok()).count();
    assert!((14..16).contains(&ok), "{ok} pages of 256 KiB within 4 MiB");
    let last = got.last().unwrap();
    assert!(
        matches!(last, Err(Error::Unexpected(Unexpected::ListTooLong { reached, .. })) if reached.contains("max_list_bytes")),
        "{last:?}"
    );
    assert_eq!(
        seen.try_iter().count(),
        ok + 1,
        "no page asked for past the bound"
    );
}

/// The whole list has one deadline: a server that answers the first page and then stalls
/// cannot hold the listing for the per-request timeout (60 s by default).
#[test]
fn a_listing_has_one_deadline() {
    let mut n = 0;
    let (t, _seen) = server(16, move |v| {
        n += 1;
        // The first page, then silence (reading on, answering nothing).
        Some(if n == 1 {
            vec![json!({"jsonrpc": "2.0", "id": v["id"], "result": {
                "tools": [tool(1)], "nextCursor": "next"}})]
        } else {
            vec![]
        })
    });
    let bound = Duration::from_millis(800);
    let client = Client::builder()
        .revision(Revision::Legacy)
        .list_timeout(bound)
        .connect(t)
        .unwrap();
    let started = Instant::now();
    let got: Vec<_> = client.list_tools().collect();
    let took = started.elapsed();
    assert!(took < bound + SLACK, "took {took:?}");
    assert!(
        matches!(got.last(), Some(Err(Error::Unexpected(Unexpected::ListTooLong { reached, .. }))) if reached.contains("list_timeout")),
        "{got:?}"
    );
}

/// A server that stops reading: the pipe fills, and neither the request nor the cancellation
/// after its timeout may hold the caller past its timeout (the cancellation waited 30 s).
#[test]
fn a_call_to_a_server_that_stopped_reading_ends_within_its_timeout() {
    let (t, _seen) = server(2, |_| None);
    let timeout = Duration::from_millis(300);
    let client = Client::builder()
        .revision(Revision::Legacy)
        .timeout(Timeout::fixed(timeout))
        .connect(t)
        .unwrap();
    // Enough calls to fill every buffer on the way (2 + 2 + the forwarder's one).
    for i in 0..12 {
        let started = Instant::now();
        let r = client.call_tool("any", json!({}));
        let took = started.elapsed();
        assert!(
            matches!(r, Err(Error::Timeout { .. } | Error::SendTimeout(_))),
            "call {i}: {r:?}"
        );
        assert!(took < timeout + SLACK, "call {i} took {took:?}");
    }
}

/// A malformed answer to `initialize` (its id readable, the rest not a message) fails the
/// handshake at once, with the reason, instead of after the handshake timeout.
#[test]
fn a_malformed_initialize_answer_fails_the_handshake_at_once() {
    let (to_server, from_client) = bounded::<Message>(8);
    let (to_client, from_server) = bounded::<Result<Message, FrameError>>(8);
    thread::spawn(move || {
        for m in &from_client {
            let v = to_value(&m);
            if v["method"] == "initialize" {
                let bad = format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{}},"error":{{"code":1,"message":"both"}}}}"#,
                    v["id"]
                );
                let e = decode(bad.as_bytes()).expect_err("both result and error");
                let _ = to_client.send(Err(FrameError::Decode(e)));
            }
        }
    });
    let t = ChannelTransport::new(Connection {
        sender: to_server,
        receiver: from_server,
    });
    let started = Instant::now();
    let r = Client::builder()
        .revision(Revision::Legacy)
        .handshake_timeout(WAIT)
        .connect(t);
    let took = started.elapsed();
    match r {
        Err(Error::Unexpected(Unexpected::Malformed(why))) => {
            assert!(!why.to_string().is_empty());
        }
        other => panic!("expected the malformed answer as the error, got {other:?}"),
    }
    assert!(took < SLACK, "took {took:?}");
}

/// A malformed answer to `server/discover` is not a modern server's answer: the automatic
/// revision goes on to `initialize`, which a legacy server answers, as after any other
/// failure of the probe.
#[test]
fn a_malformed_discover_answer_falls_back_to_initialize() {
    let (to_server, from_client) = bounded::<Message>(8);
    let (to_client, from_server) = bounded::<Result<Message, FrameError>>(8);
    thread::spawn(move || {
        for m in &from_client {
            let v = to_value(&m);
            let answer = match v["method"].as_str() {
                Some("server/discover") => {
                    let bad = format!(
                        r#"{{"jsonrpc":"2.0","id":{},"result":{{}},"error":{{"code":1,"message":"x"}}}}"#,
                        v["id"]
                    );
                    Err(FrameError::Decode(
                        decode(bad.as_bytes()).expect_err("both"),
                    ))
                }
                Some("initialize") => Ok(msg(initialize_answer(&v))),
                _ => continue,
            };
            let _ = to_client.send(answer);
        }
    });
    let t = ChannelTransport::new(Connection {
        sender: to_server,
        receiver: from_server,
    });
    let started = Instant::now();
    let client = Client::builder()
        .handshake_timeout(WAIT)
        .connect(t)
        .expect("initialize after the malformed discover answer");
    assert_eq!(client.era(), mcp_core::version::Era::Legacy);
    assert_eq!(client.server_info().unwrap()["name"], "hostile");
    assert!(started.elapsed() < SLACK, "took {:?}", started.elapsed());
}

/// A server that stops taking our messages while it sends many requests of its own (an HTTP
/// server acknowledging each POST late does that): the reader answers what it can and goes
/// on reading, so the answer to our call, already sent, still arrives.
#[test]
fn a_server_that_stops_taking_our_answers_does_not_hold_back_its_own() {
    let (to_server, from_client) = bounded::<Message>(16);
    let (to_client, from_server) = bounded(16);
    thread::spawn(move || {
        for m in &from_client {
            let v = to_value(&m);
            let reply = match v["method"].as_str() {
                Some("initialize") => json!({"jsonrpc": "2.0", "id": v["id"], "result": {
                    "protocolVersion": v["params"]["protocolVersion"], "capabilities": {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"}}}),
                Some("tools/list") => {
                    // Stops reading: 400 pings, then the answer.
                    for i in 0..400 {
                        let ping =
                            json!({"jsonrpc": "2.0", "id": format!("p-{i}"), "method": "ping"});
                        if to_client.send(Ok(msg(ping))).is_err() {
                            return;
                        }
                    }
                    let answer = json!({"jsonrpc": "2.0", "id": v["id"], "result": {"tools": []}});
                    let _ = to_client.send(Ok(msg(answer)));
                    // Holds the channel (and reads nothing more) until the test ends.
                    std::thread::sleep(WAIT);
                    return;
                }
                _ => continue,
            };
            if to_client.send(Ok(msg(reply))).is_err() {
                return;
            }
        }
    });
    let t = ChannelTransport::new(Connection {
        sender: to_server,
        receiver: from_server,
    });
    let client = Client::builder()
        .revision(Revision::Legacy)
        .timeout(Timeout::fixed(Duration::from_secs(5)))
        .connect(t)
        .unwrap();
    let started = Instant::now();
    let tools: Result<Vec<_>, _> = client.list_tools().collect();
    assert!(tools.is_ok(), "{tools:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

/// A server that answers nothing: in `Revision::Auto` the `server/discover` probe and the
/// `initialize` after it end together within the handshake timeout (each took all of it).
#[test]
fn a_silent_server_fails_the_handshake_within_its_timeout() {
    let (to_server, from_client) = bounded::<Message>(16);
    let (_to_client, from_server) = bounded(16);
    thread::spawn(move || for _ in &from_client {});
    let t = ChannelTransport::new(Connection {
        sender: to_server,
        receiver: from_server,
    });
    let limit = Duration::from_millis(600);
    let started = Instant::now();
    let r = Client::builder()
        .revision(Revision::Auto)
        .handshake_timeout(limit)
        .connect(t);
    let took = started.elapsed();
    assert!(matches!(r, Err(Error::Timeout { .. })), "{r:?}");
    assert!(took >= limit / 2, "the probe had its half: {took:?}");
    assert!(took < limit + Duration::from_millis(300), "took {took:?}");
}

/// A legacy HTTP server that never answers the GET stream: the first call is not held for it
/// (it waited the connect timeout, 10 s).
#[cfg(feature = "http")]
#[test]
fn a_legacy_http_session_does_not_wait_for_its_get_stream() {
    use crossbeam_channel::Sender;
    use std::io::{BufReader, Write};
    use std::net::TcpListener;

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (hold_tx, hold_rx): (Sender<std::net::TcpStream>, Receiver<_>) = bounded(16);
    thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let hold = hold_tx.clone();
            thread::spawn(move || {
                let mut w = conn.try_clone().unwrap();
                let mut r = BufReader::new(conn);
                while let Some((line, body)) = http_request(&mut r) {
                    if line.starts_with("GET") {
                        // Never answered: the connection is held open.
                        let _ = hold.send(w);
                        return;
                    }
                    let v: Value = serde_json::from_slice(&body).unwrap_or_default();
                    let answer = match v["method"].as_str() {
                        Some("initialize") => Some(initialize_answer(&v)),
                        Some(_) if v.get("id").is_some() => {
                            Some(json!({"jsonrpc": "2.0", "id": v["id"], "result": {}}))
                        }
                        _ => None,
                    };
                    let _ = match answer {
                        Some(a) => json_answer(&mut w, &a),
                        None => write!(w, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"),
                    };
                }
            });
        }
    });
    let client = Client::builder()
        .revision(Revision::Legacy)
        .connect_http(&format!("http://{addr}/mcp"))
        .unwrap();
    let started = Instant::now();
    client.ping().unwrap();
    let took = started.elapsed();
    assert!(took < SLACK, "the first call took {took:?}");
    drop(hold_rx);
}

/// A 200 with `v` as its JSON body, in legacy session `s1`.
#[cfg(feature = "http")]
fn json_answer(w: &mut impl std::io::Write, v: &Value) -> std::io::Result<()> {
    let a = v.to_string();
    write!(
        w,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\nContent-Length: {}\r\n\r\n{a}",
        a.len()
    )
}

/// One HTTP request off `r`: the request line and the body (None at the end).
#[cfg(feature = "http")]
fn http_request(r: &mut impl std::io::BufRead) -> Option<(String, Vec<u8>)> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut len = 0;
    loop {
        let mut l = String::new();
        if r.read_line(&mut l).ok()? == 0 {
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
    r.read_exact(&mut body).ok()?;
    Some((line, body))
}

/// A legacy HTTP server that acknowledges none of the client's answers (each POSTed answer is
/// held open, unanswered) and asks 300 pings in the stream of a call's answer: the client's
/// one-way lane (256) fills, and the requests after it used to wait behind the lane (each
/// unacknowledged POST its 30 s) instead of going out.
#[cfg(feature = "http")]
#[test]
fn a_server_that_acknowledges_no_answer_does_not_hold_up_requests() {
    use std::io::{BufReader, Write};
    use std::net::TcpListener;

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (hold_tx, hold_rx) = bounded::<std::net::TcpStream>(64);
    thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let hold = hold_tx.clone();
            thread::spawn(move || {
                let mut w = conn.try_clone().unwrap();
                let mut r = BufReader::new(conn);
                while let Some((line, body)) = http_request(&mut r) {
                    if !line.starts_with("POST") {
                        let _ = write!(
                            w,
                            "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n"
                        );
                        continue;
                    }
                    let v: Value = serde_json::from_slice(&body).unwrap_or_default();
                    let _ = match (v["method"].as_str(), v.get("id").is_some()) {
                        (Some("initialize"), _) => json_answer(&mut w, &initialize_answer(&v)),
                        (Some("tools/call"), _) => {
                            let _ = write!(
                                w,
                                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                            );
                            for i in 0..300 {
                                let p = json!({"jsonrpc": "2.0", "id": format!("p{i}"), "method": "ping"});
                                let _ = write!(w, "data: {p}\n\n");
                            }
                            let a =
                                json!({"jsonrpc": "2.0", "id": v["id"], "result": {"content": []}});
                            let _ = write!(w, "data: {a}\n\n");
                            return;
                        }
                        (Some(_), true) => json_answer(
                            &mut w,
                            &json!({"jsonrpc": "2.0", "id": v["id"], "result": {}}),
                        ),
                        (Some(_), false) => {
                            write!(w, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                        }
                        // An answer of the client's: never acknowledged.
                        (None, _) => {
                            let _ = hold.send(w);
                            return;
                        }
                    };
                }
            });
        }
    });
    let timeout = Duration::from_secs(3);
    let client = Client::builder()
        .revision(Revision::Legacy)
        .timeout(Timeout::fixed(timeout))
        .connect_http(&format!("http://{addr}/mcp"))
        .unwrap();
    client.call_tool("asks", json!({})).unwrap();
    let started = Instant::now();
    let r = client.ping();
    assert!(
        r.is_ok(),
        "the request after the unacknowledged answers: {r:?}"
    );
    assert!(started.elapsed() < timeout, "took {:?}", started.elapsed());
    drop(hold_rx);
}

/// A request of the server's with an id over 1,024 bytes is not answered (an answer echoes
/// it, and a server sending 8 MiB ids while taking no answers grew the client by gigabytes);
/// the ids of honest requests are.
#[test]
fn a_server_request_with_an_outsized_id_is_not_answered() {
    let long = format!("p-{}", "i".repeat(1024));
    let long2 = long.clone();
    let (t, seen) = server(16, move |v| {
        if v["method"] == "tools/call" {
            Some(vec![
                json!({"jsonrpc": "2.0", "id": long2, "method": "ping"}),
                json!({"jsonrpc": "2.0", "id": "short", "method": "ping"}),
            ])
        } else if v["id"] == "short" {
            // The answer to the short one: the call ends (its id was 2, after initialize).
            Some(vec![
                json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}),
            ])
        } else {
            Some(vec![])
        }
    });
    let client = Client::builder()
        .revision(Revision::Legacy)
        .timeout(Timeout::fixed(WAIT))
        .connect(t)
        .unwrap();
    client.call_tool("asks", json!({})).unwrap();
    let answered: Vec<Value> = seen
        .try_iter()
        .filter(|v| v.get("method").is_none())
        .collect();
    assert!(answered.iter().any(|v| v["id"] == "short"), "{answered:?}");
    assert!(
        !answered.iter().any(|v| v["id"] == long),
        "the long id was answered"
    );
}

/// A server that hangs without exiting (reads on, answers nothing): with pings on, the
/// waiting call fails with the reason after the missed pings, not at its own timeout.
#[test]
fn a_server_that_stops_answering_pings_is_reported_gone() {
    let (t, _seen) = server(16, |_| Some(vec![]));
    let interval = Duration::from_millis(100);
    let client = Client::builder()
        .revision(Revision::Legacy)
        .timeout(Timeout::fixed(WAIT))
        .ping_every(interval, 2)
        .connect(t)
        .unwrap();
    let started = Instant::now();
    let r = client.call_tool("slow", json!({}));
    let took = started.elapsed();
    match r {
        Err(Error::Closed(mcp_client::Closed::NoPingAnswer { missed: 2, .. })) => {}
        other => panic!("expected NoPingAnswer, got {other:?}"),
    }
    // Two rounds of a wait and an unanswered ping.
    assert!(took < 4 * interval + SLACK, "took {took:?}");
}

/// A server that answers its pings is never reported, however long a call takes: here the
/// call is answered only after six pings (three times the miss limit).
#[test]
fn a_server_that_answers_pings_keeps_its_slow_calls() {
    let mut pings = 0;
    let mut call_id = None;
    let (t, _seen) = server(16, move |v| {
        if v["method"] != "ping" {
            call_id = Some(v["id"].clone());
            return Some(vec![]);
        }
        pings += 1;
        let mut out = vec![json!({"jsonrpc": "2.0", "id": v["id"], "result": {}})];
        if pings >= 6 {
            if let Some(id) = call_id.take() {
                out.push(json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}));
            }
        }
        Some(out)
    });
    let client = Client::builder()
        .revision(Revision::Legacy)
        .timeout(Timeout::fixed(WAIT))
        .ping_every(Duration::from_millis(50), 2)
        .connect(t)
        .unwrap();
    let r = client.call_tool("slow", json!({}));
    assert!(r.is_ok(), "{r:?}");
    assert!(!client.is_closed());
}
