//! A cancelled request ends its HTTP exchange at once (issue 20): over a legacy session a
//! `notifications/cancelled` ends the request's SSE stream within 100 ms (nothing more is
//! written for it, and a resumption finds it over), answers a JSON-only POST with `204 No
//! Content` within 100 ms, and frees the stream's place under the per-session limit; in the
//! 2026-07-28 era, where hanging up is the cancellation, the handler sees it within 100 ms.
//!
//! The server is the real kit: its tool `stuck` ignores cancellation (it waits for the test's
//! word), so the exchange must end without waiting for the handler.

mod common;

use std::io::BufReader;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{
    ACCEPT_BOTH, JSON_CT, SseClient, connect, read_response, request, rpc, write_request,
};
use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_http_blocking::{HttpConfig, HttpServer, ServerHandle};
use mcp_server_kit::{Context, Error, NoArgs, Server, Tool};
use serde_json::json;

/// What the stated bounds allow: the 100 ms.
const BOUND: Duration = Duration::from_millis(100);
const VERSION: &str = "2025-11-25";

struct Fixture {
    _handle: ServerHandle,
    addr: SocketAddr,
    /// One message per `stuck` call that started.
    started: Receiver<()>,
    /// Dropped at the end: every `stuck` call returns then.
    release: Option<Sender<()>>,
    /// One message per `watch` call that saw its cancellation.
    saw_cancel: Receiver<()>,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.release.take();
    }
}

fn start(cfg: HttpConfig) -> Fixture {
    let (started_tx, started) = bounded::<()>(64);
    let (release, release_rx) = bounded::<()>(1);
    let (saw_tx, saw_cancel) = bounded::<()>(64);
    let stuck = Tool::new("stuck", move |_: NoArgs, _: &Context| {
        let _ = started_tx.send(());
        // Ignores its cancellation on purpose; ends when the test lets it.
        let _ = release_rx.recv_timeout(Duration::from_secs(20));
        Ok::<_, Error>("finished anyway")
    });
    let watch = Tool::new("watch", move |_: NoArgs, ctx: &Context| {
        if ctx.wait_cancelled(Duration::from_secs(20)) {
            let _ = saw_tx.send(());
        }
        Ok::<_, Error>("not cancelled")
    });
    let server = Server::builder("cancel", "1")
        .tool(stuck)
        .tool(watch)
        .build()
        .unwrap();
    let handle = HttpServer::builder()
        .config(cfg)
        .build(server)
        .unwrap()
        .spawn()
        .unwrap();
    let addr = handle.local_addr();
    Fixture {
        _handle: handle,
        addr,
        started,
        release: Some(release),
        saw_cancel,
    }
}

/// A legacy session, initialized.
fn session(addr: SocketAddr) -> String {
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    );
    let r = request(addr, "POST", "/mcp", &[ACCEPT_BOTH, JSON_CT], &init);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let sid = r.header("mcp-session-id").unwrap().to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let r = post(addr, &sid, ACCEPT_BOTH, note.as_bytes());
    assert_eq!(r.status, 202);
    sid
}

fn post(addr: SocketAddr, sid: &str, accept: (&str, &str), body: &[u8]) -> common::Resp {
    let hs = [
        accept,
        JSON_CT,
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", VERSION),
    ];
    request(addr, "POST", "/mcp", &hs, body)
}

fn call(id: i64, tool: &str) -> Vec<u8> {
    rpc(id, "tools/call", json!({"name": tool, "arguments": {}}))
}

fn cancel(addr: SocketAddr, sid: &str, id: i64) {
    let body = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "test"}});
    let r = post(addr, sid, ACCEPT_BOTH, body.to_string().as_bytes());
    assert_eq!(r.status, 202);
}

fn wait(rx: &Receiver<()>) {
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the handler started");
}

#[test]
fn a_cancelled_sse_stream_ends_at_once_and_a_resumption_finds_it_over() {
    let f = start(HttpConfig::default());
    let sid = session(f.addr);
    let hs = [
        ACCEPT_BOTH,
        JSON_CT,
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", VERSION),
    ];
    // The handler outlives the JSON window: the answer is an SSE stream (its head and
    // priming event come once the window is over).
    let mut sse = SseClient::open(f.addr, "POST", "/mcp", &hs, &call(2, "stuck"));
    assert_eq!(sse.status, 200);
    assert_eq!(sse.headers["content-type"], "text/event-stream");
    let priming = sse.next().expect("a priming event");
    let cursor = priming.id.expect("the priming event has an id");
    wait(&f.started);

    let t0 = Instant::now();
    cancel(f.addr, &sid, 2);
    let after = sse.next();
    let took = t0.elapsed();
    assert!(
        after.is_none(),
        "nothing is written for a cancelled request: {after:?}"
    );
    assert!(
        took < BOUND,
        "the stream ended {took:?} after the cancellation"
    );

    // A resumption from the priming event finds the stream over, with nothing in it.
    let resume_hs = [
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", VERSION),
        ("Last-Event-ID", cursor.as_str()),
    ];
    let mut resumed = SseClient::open(f.addr, "GET", "/mcp", &resume_hs, b"");
    assert_eq!(resumed.status, 200);
    assert!(
        resumed.next().is_none(),
        "a resumed cancelled stream is over"
    );
}

#[test]
fn a_cancelled_json_post_is_answered_204_at_once() {
    let f = start(HttpConfig::default());
    let sid = session(f.addr);
    let accept_json = ("Accept", "application/json");
    let hs = [
        accept_json,
        JSON_CT,
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", VERSION),
    ];
    let mut conn = connect(f.addr);
    write_request(&mut conn, "POST", "/mcp", &hs, &call(2, "stuck"));
    wait(&f.started);
    let t0 = Instant::now();
    cancel(f.addr, &sid, 2);
    let r = read_response(&mut BufReader::new(conn));
    let took = t0.elapsed();
    assert_eq!(r.status, 204, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.body.is_empty());
    assert!(took < BOUND, "answered {took:?} after the cancellation");
}

#[test]
fn cancelled_requests_give_back_their_stream_places() {
    let f = start(HttpConfig::builder().max_streams_per_session(4).build());
    let sid = session(f.addr);
    let accept_json = ("Accept", "application/json");
    let hs = [
        accept_json,
        JSON_CT,
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", VERSION),
    ];
    // Five times the limit, each cancelled while its handler still runs.
    for id in 10..30 {
        let mut conn = connect(f.addr);
        write_request(&mut conn, "POST", "/mcp", &hs, &call(id, "stuck"));
        wait(&f.started);
        cancel(f.addr, &sid, id);
        let r = read_response(&mut BufReader::new(conn));
        assert_eq!(
            r.status,
            204,
            "call {id}: {}",
            String::from_utf8_lossy(&r.body)
        );
    }
    let r = post(f.addr, &sid, ACCEPT_BOTH, &rpc(99, "ping", json!({})));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["id"], 99);
}
#[test]
fn a_2026_handler_sees_the_hang_up_at_once() {
    let f = start(HttpConfig::default());
    let version = "2026-07-28";
    let body = rpc(
        5,
        "tools/call",
        json!({"name": "watch", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {}
        }}),
    );
    let hs = [
        ACCEPT_BOTH,
        JSON_CT,
        ("MCP-Protocol-Version", version),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "watch"),
    ];
    let mut conn = connect(f.addr);
    write_request(&mut conn, "POST", "/mcp", &hs, &body);
    // The head of the SSE answer comes once the JSON window is over: the exchange is running.
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let (status, _) = common::read_head(&mut reader);
    assert_eq!(status, 200);
    let t0 = Instant::now();
    conn.shutdown(std::net::Shutdown::Both).unwrap();
    drop(conn);
    drop(reader);
    f.saw_cancel
        .recv_timeout(Duration::from_secs(10))
        .expect("the handler saw its cancellation");
    let took = t0.elapsed();
    assert!(
        took < BOUND,
        "the handler saw the hang-up {took:?} after it"
    );
}
