//! Request threads are reused: consecutive requests do not each pay for a new thread.

use std::collections::HashSet;
use std::io::BufReader;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

mod common;

use common::{connect, read_response, rpc, write_request};
use mcp_core::jsonrpc::{Message, Response};
use mcp_core::service::{Outbound, Service, Session, SessionInfo};
use mcp_http_blocking::HttpServer;
use serde_json::json;

/// Answers every request at once and records the thread that handled it.
struct Recorder(Arc<Mutex<Vec<ThreadId>>>);
struct RecSession(Arc<dyn Outbound>, Arc<Mutex<Vec<ThreadId>>>);

impl Service for Recorder {
    fn open(&self, _: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
        Arc::new(RecSession(out, self.0.clone()))
    }
}

impl Session for RecSession {
    fn handle(&self, msg: Message) {
        if let Message::Request(r) = msg {
            self.1.lock().unwrap().push(std::thread::current().id());
            let answer = Response::new(r.id.clone(), &json!({"content": []})).unwrap();
            let _ = self.0.send(Message::Response(answer), Some(&r.id));
        }
    }

    fn close(&self) {}
}

#[test]
fn consecutive_requests_reuse_request_threads() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let h = HttpServer::builder()
        .build(Recorder(seen.clone()))
        .unwrap()
        .spawn()
        .unwrap();
    let mut s = connect(h.local_addr());
    let mut r = BufReader::new(s.try_clone().unwrap());
    const N: usize = 40;
    for id in 0..N as i64 {
        let mut params = json!({"name": "echo", "arguments": {}});
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        let body = rpc(id, "tools/call", params);
        write_request(
            &mut s,
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "echo"),
            ],
            &body,
        );
        let resp = read_response(&mut r);
        assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
        assert_eq!(resp.json()["id"], id);
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), N);
    let distinct: HashSet<_> = seen.iter().collect();
    // One thread per request before; now the same few threads serve them all.
    assert!(
        distinct.len() <= N / 4,
        "{} threads for {N} requests",
        distinct.len()
    );
    h.shutdown();
}
