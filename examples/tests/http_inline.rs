//! Handlers that run on the HTTP request's own thread (`HttpServer` opens its sessions with
//! `handle_may_block`), over real sockets: a quick handler is answered as plain JSON, a
//! handler that sends more progress notifications than a stream's channel holds gets them all
//! through, a legacy handler that asks the client to sample gets its answer, a handler that
//! blocks does not hold up requests on other connections, and a silent 2026-07-28 handler
//! still learns that its client hung up.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_client::{CallOptions, Client, Revision};
use mcp_core::types::{CallToolResult, ContentBlock, CreateMessageRequestParams};
use mcp_http_blocking::{HttpConfig, HttpServer, ServerHandle};
use mcp_server_kit::{Context, Error, RateLimits, Server, Tool};
use serde_json::{Value, json};

mod client_support;
use client_support::{Asked, builder};

/// More progress notifications than the default stream buffer (64) holds.
const CHATTY: usize = 300;

#[derive(serde::Deserialize)]
struct Message {
    message: String,
}

#[derive(serde::Deserialize)]
struct NoArgs {}

/// The kit behind an `HttpServer`, with tools for each hazard. `entered` hears from `gate`
/// when it starts; `gate` then waits for `release`.
fn start(entered: Sender<()>, release: Receiver<()>) -> ServerHandle {
    // `chatty` sends 300 progress notifications at once, past the default HTTP rate limit
    // (bursts of 100): these tests are about their delivery, so nothing is limited here.
    let server = Server::builder("inline-tests", "1.0.0")
        .rate_limits(RateLimits::off())
        .tool(Tool::new("echo", |a: Message, _: &Context| {
            Ok::<_, Error>(a.message)
        }))
        .tool(Tool::new("chatty", |_: NoArgs, ctx: &Context| {
            for i in 0..CHATTY {
                ctx.progress(i as f64, Some(CHATTY as f64), None);
            }
            Ok::<_, Error>("chatted")
        }))
        .tool(Tool::new("ask", |a: Message, ctx: &Context| {
            let params: CreateMessageRequestParams = serde_json::from_value(json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": a.message}}],
                "maxTokens": 10
            }))
            .map_err(|e| Error::InvalidParams(e.to_string()))?;
            let answer = ctx.sample(params)?;
            let v = serde_json::to_value(&answer).unwrap_or(Value::Null);
            Ok::<_, Error>(format!(
                "sampled: {}",
                v["content"]["text"].as_str().unwrap_or("")
            ))
        }))
        .tool(Tool::new("gate", move |_: NoArgs, _: &Context| {
            let _ = entered.send(());
            match release.recv_timeout(Duration::from_secs(20)) {
                Ok(()) => Ok::<_, Error>("released"),
                Err(_) => Err(Error::Message("never released".into())),
            }
        }))
        .build()
        .expect("the server builds");
    // A JSON window longer than any test: the watchdog that starts the answer of a handler
    // running longer than that stays out of the way, so what is tested here is the escape
    // taken by the handler's first message.
    let cfg = HttpConfig::builder()
        .json_window(Duration::from_secs(60))
        .build();
    HttpServer::builder()
        .config(cfg)
        .build(server)
        .expect("binds")
        .spawn()
        .expect("starts")
}

fn url(h: &ServerHandle) -> String {
    format!("http://{}/mcp", h.local_addr())
}

fn connect(h: &ServerHandle, revision: Revision) -> (Client, Asked) {
    let asked = Asked::default();
    let client = builder("inline-tests", revision, &asked)
        .connect_http(&url(h))
        .unwrap_or_else(|e| panic!("{revision:?}: connects: {e}"));
    (client, asked)
}

fn only_text(r: &CallToolResult) -> String {
    match r.content.as_slice() {
        [ContentBlock::Text(t)] => t.text.clone(),
        other => panic!("expected one text block, got {other:?}"),
    }
}

fn idle_server() -> ServerHandle {
    let (entered, _) = bounded(1);
    let (_, release) = bounded(1);
    start(entered, release)
}

#[test]
fn many_progress_notifications_from_an_inline_handler_all_arrive() {
    let h = idle_server();
    for revision in [Revision::Legacy, Revision::Modern] {
        let (client, _) = connect(&h, revision);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        let options = CallOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
        let r = client
            .call_tool_with("chatty", json!({}), &options)
            .unwrap_or_else(|e| panic!("{revision:?}: {e}"));
        assert_eq!(only_text(&r), "chatted", "{revision:?}");
        let seen = seen.lock().unwrap();
        let want: Vec<f64> = (0..CHATTY).map(|i| i as f64).collect();
        assert_eq!(*seen, want, "{revision:?}");
        client.close().unwrap();
    }
}

#[test]
fn an_inline_legacy_handler_that_samples_gets_the_answer() {
    let h = idle_server();
    let (client, asked) = connect(&h, Revision::Legacy);
    for i in 0..3 {
        let r = client
            .call_tool("ask", json!({"message": format!("question {i}")}))
            .unwrap();
        assert_eq!(
            only_text(&r),
            "sampled: This is a test response from the client"
        );
    }
    assert_eq!(asked.lock().unwrap().len(), 3);
    client.close().unwrap();
}

#[test]
fn a_blocked_handler_does_not_hold_up_other_connections() {
    let (entered_tx, entered) = bounded(1);
    let (release, release_rx) = bounded(1);
    let h = start(entered_tx, release_rx);
    for revision in [Revision::Legacy, Revision::Modern] {
        let (slow, _) = connect(&h, revision);
        let waiter = std::thread::spawn(move || {
            let r = slow.call_tool("gate", json!({}));
            let _ = slow.close();
            r
        });
        entered
            .recv_timeout(Duration::from_secs(10))
            .expect("the gate handler starts");
        // The gate's handler blocks its request thread; others are served meanwhile.
        let (quick, _) = connect(&h, revision);
        for i in 0..20 {
            let r = quick
                .call_tool("echo", json!({"message": format!("m{i}")}))
                .unwrap();
            assert_eq!(only_text(&r), format!("m{i}"), "{revision:?}");
        }
        quick.close().unwrap();
        assert!(h.in_flight() >= 1, "the gate call is still in flight");
        release.send(()).unwrap();
        let r = waiter.join().unwrap().unwrap();
        assert_eq!(only_text(&r), "released", "{revision:?}");
    }
}

/// One request on its own connection (`Connection: close`); returns the status, the
/// lower-cased headers and the body (de-chunked).
fn post(
    addr: SocketAddr,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = body.to_string();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&body);
    s.write_all(req.as_bytes()).unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status: u16 = line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut hs = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (n, v) = l.split_once(':').unwrap();
        hs.push((n.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
    let chunked = hs
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let mut out = Vec::new();
    if chunked {
        loop {
            line.clear();
            r.read_line(&mut line).unwrap();
            let n = usize::from_str_radix(line.trim(), 16).unwrap();
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&chunk[..n]);
        }
    } else {
        r.read_to_end(&mut out).unwrap();
    }
    (status, hs, out)
}

fn header<'a>(hs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    hs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

#[test]
fn a_quick_inline_handler_is_answered_with_plain_json_in_both_eras() {
    let h = idle_server();
    let addr = h.local_addr();
    // Legacy: a session, then the call.
    let (status, hs, _) = post(
        addr,
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    assert_eq!(status, 200);
    let sid = header(&hs, "mcp-session-id").unwrap().to_owned();
    let legacy = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (status, _, _) = post(
        addr,
        &legacy,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(status, 202);
    let call = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"message": "hi"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}})
    };
    let mut legacy_call = call(2);
    legacy_call["params"]
        .as_object_mut()
        .unwrap()
        .remove("_meta");
    let (status, hs, body) = post(addr, &legacy, &legacy_call);
    assert_eq!(status, 200);
    assert_eq!(header(&hs, "content-type"), Some("application/json"));
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["id"], 2);
    assert_eq!(v["result"]["content"][0]["text"], "hi");
    // 2026-07-28: one stateless exchange.
    let modern = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    let (status, hs, body) = post(addr, &modern, &call(3));
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(header(&hs, "content-type"), Some("application/json"));
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["id"], 3);
    assert_eq!(v["result"]["content"][0]["text"], "hi");
}

/// A 2026-07-28 handler that sends nothing and runs past the JSON window: the watchdog starts
/// its SSE answer, whose keep-alives notice the client hanging up, which cancels the handler
/// still running on the request's thread.
#[test]
fn a_silent_inline_handler_is_cancelled_when_its_2026_client_hangs_up() {
    let (cancelled_tx, cancelled) = bounded::<&'static str>(1);
    let (started_tx, started) = bounded::<()>(1);
    let server = Server::builder("inline-cancel", "1.0.0")
        .tool(Tool::new("linger", move |_: NoArgs, ctx: &Context| {
            let _ = started_tx.send(());
            // Blocks until the cancellation arrives (or a generous safety bound passes).
            if ctx.wait_cancelled(Duration::from_secs(20)) {
                let _ = cancelled_tx.send("cancelled");
                return Ok::<_, Error>("cancelled");
            }
            let _ = cancelled_tx.send("never cancelled");
            Ok("done")
        }))
        .build()
        .expect("the server builds");
    let cfg = HttpConfig::builder()
        .json_window(Duration::from_millis(20))
        .keepalive(Duration::from_millis(20))
        .build();
    let h = HttpServer::builder()
        .config(cfg)
        .build(server)
        .expect("binds")
        .spawn()
        .expect("starts");
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
    "name": "linger", "arguments": {},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }}})
    .to_string();
    let mut s = TcpStream::connect(h.local_addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: linger\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    started
        .recv_timeout(Duration::from_secs(10))
        .expect("the handler starts");
    // The SSE head arrives while the handler still runs.
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        if line.trim_end().is_empty() {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-type:") {
            assert_eq!(v.trim(), "text/event-stream");
        }
    }
    drop(r);
    assert_eq!(
        cancelled.recv_timeout(Duration::from_secs(15)),
        Ok("cancelled")
    );
}
