//! Resumption, randomized and seeded (`MCP_FUZZ_SEED` replays a run; the seed is printed on
//! failure): 16 clients at once, each running rounds of a request whose answer streams `n`
//! progress notifications and then the result. Each round cuts the stream at a random place
//! (after the priming event, between notifications, after a keep-alive comment, right after the
//! final answer), lets the handler go on while nobody listens (all, some or none of what is
//! left), and resumes with `Last-Event-ID`, sometimes more than once. Every message arrives
//! exactly once, in order.

#[path = "../../mcp-core/tests/wire_fuzz_support.rs"]
mod wire_fuzz_support;

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{ACCEPT_BOTH, JSON_CT, connect, open_session, read_head, rpc, write_request};
use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_core::jsonrpc::{Message, Notification, RequestId, Response};
use mcp_core::service::{Outbound, Service, Session, SessionInfo};
use mcp_http_blocking::{HttpConfig, HttpServer};
use serde_json::{Value, json};
use wire_fuzz_support::{Rng, SeedGuard, seed};

const CLIENTS: usize = 16;
const ROUNDS_PER_CLIENT: usize = 13;

/// The release channel of each request, by id: the test lets a handler send its next message.
type Gates = Arc<Mutex<HashMap<i64, Receiver<()>>>>;

struct Steps(Gates);
struct StepsSession {
    out: Arc<dyn Outbound>,
    gates: Gates,
}

impl Service for Steps {
    fn open(&self, _: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
        Arc::new(StepsSession {
            out,
            gates: self.0.clone(),
        })
    }
}

impl Session for StepsSession {
    fn handle(&self, msg: Message) {
        let Message::Request(r) = msg else { return };
        let id = r.id.clone();
        let out = self.out.clone();
        if r.method == "initialize" {
            let v = r.params_value()["protocolVersion"].clone();
            let result = json!({"protocolVersion": v, "capabilities": {}, "serverInfo": {"name": "steps", "version": "1"}});
            let _ = out.send(
                Message::Response(Response::new(id.clone(), &result).unwrap()),
                Some(&id),
            );
            return;
        }
        let n = r.params_value()["n"].as_u64().unwrap_or(0);
        let RequestId::Number(key) = id else { return };
        let Some(gate) = self.gates.lock().unwrap().remove(&key) else {
            return;
        };
        std::thread::spawn(move || {
            for i in 0..=n {
                // Each message waits for the test's word (or for the test to be gone).
                if gate.recv().is_err() {
                    return;
                }
                let msg = if i < n {
                    Message::Notification(
                        Notification::new(
                            "notifications/progress",
                            &json!({"progressToken": key, "progress": i}),
                        )
                        .unwrap(),
                    )
                } else {
                    Message::Response(Response::new(id.clone(), &json!({"steps": n})).unwrap())
                };
                let _ = out.send(msg, Some(&id));
            }
        });
    }

    fn close(&self) {}
}

/// One chunk of an SSE answer: an event (its id and data) or a keep-alive comment.
enum Chunk {
    Event { id: Option<String>, data: String },
    Comment,
}

/// Reads SSE answers chunk by chunk (the server writes one event or comment per chunk).
struct Stream(BufReader<TcpStream>);

impl Stream {
    fn open(s: TcpStream) -> Stream {
        let mut r = BufReader::new(s);
        let (status, headers) = read_head(&mut r);
        assert_eq!(status, 200);
        assert_eq!(
            headers.get("content-type").map(String::as_str),
            Some("text/event-stream")
        );
        Stream(r)
    }

    fn next(&mut self) -> Option<Chunk> {
        let mut size = String::new();
        self.0.read_line(&mut size).ok()?;
        let n = usize::from_str_radix(size.trim(), 16).ok()?;
        let mut chunk = vec![0; n + 2];
        self.0.read_exact(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&chunk[..n]).into_owned();
        if text.starts_with(':') {
            return Some(Chunk::Comment);
        }
        let mut id = None;
        let mut data = String::new();
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("id: ") {
                id = Some(v.to_owned());
            } else if let Some(v) = line.strip_prefix("data: ") {
                data.push_str(v);
            }
        }
        Some(Chunk::Event { id, data })
    }

    fn cut(self) {
        let _ = self.0.get_ref().shutdown(Shutdown::Both);
    }
}

/// What a message of the stream says: a progress step, or the final answer.
fn step_of(data: &str) -> Option<u64> {
    let v: Value = serde_json::from_str(data).ok()?;
    v["params"]["progress"]
        .as_u64()
        .or_else(|| v["result"]["steps"].as_u64().map(|n| 1000 + n))
}

/// Reads the next message of the stream (skipping comments), recording its event id.
fn read_message(stream: &mut Stream, last_id: &mut Option<String>) -> Option<u64> {
    loop {
        match stream.next()? {
            Chunk::Comment => {}
            Chunk::Event { id, data } => {
                if let Some(i) = id {
                    *last_id = Some(i);
                }
                if let Some(step) = step_of(&data) {
                    return Some(step);
                }
            }
        }
    }
}

fn resume(a: SocketAddr, sid: (&str, &str), pv: (&str, &str), last: &str) -> Stream {
    let mut s = connect(a);
    write_request(
        &mut s,
        "GET",
        "/mcp",
        &[
            ("Accept", "text/event-stream"),
            sid,
            pv,
            ("Last-Event-ID", last),
        ],
        b"",
    );
    Stream::open(s)
}

fn client(a: SocketAddr, gates: Gates, next_id: Arc<AtomicI64>, seed: u64) {
    let mut rng = Rng::new(seed);
    let sid = open_session(a, "2025-11-25");
    let sid_h = ("Mcp-Session-Id", sid.as_str());
    let pv = ("MCP-Protocol-Version", "2025-11-25");
    for round in 0..ROUNDS_PER_CLIENT {
        let key = next_id.fetch_add(1, Ordering::SeqCst);
        let n = rng.below(6) as u64;
        let total = n + 1;
        let (go, gate): (Sender<()>, Receiver<()>) = bounded(16);
        gates.lock().unwrap().insert(key, gate);
        let mut s = connect(a);
        write_request(
            &mut s,
            "POST",
            "/mcp",
            &[ACCEPT_BOTH, JSON_CT, sid_h, pv],
            &rpc(key, "steps", json!({"n": n})),
        );
        let mut stream = Stream::open(s);
        // The priming event: its id is the cursor of a cut before the first message.
        let mut last_id = match stream.next() {
            Some(Chunk::Event { id, .. }) => id,
            _ => None,
        };
        assert!(
            last_id.is_some(),
            "a 2025-11-25 POST stream starts with a priming event"
        );
        // Everything the client has seen, in order: the steps 0..n, then 1000 + n (the answer).
        let mut seen: Vec<u64> = Vec::new();
        let mut released = 0u64;
        let mut cuts = 0;
        loop {
            // Read `k` more messages on this connection (0: cut at once, before the first
            // message or right after the replay), releasing each one the handler has not
            // been allowed to send yet.
            let left = total - seen.len() as u64;
            let k = if cuts > 3 {
                left
            } else {
                rng.below(left as usize + 1) as u64
            };
            for _ in 0..k {
                if released == seen.len() as u64 {
                    go.send(()).unwrap();
                    released += 1;
                }
                let m = read_message(&mut stream, &mut last_id).expect("a message");
                seen.push(m);
            }
            if seen.len() as u64 == total {
                if rng.percent(50) {
                    // Cut right after the final answer, and resume: nothing more comes.
                    stream.cut();
                    let mut again = resume(a, sid_h, pv, last_id.as_deref().unwrap());
                    assert!(
                        read_message(&mut again, &mut last_id).is_none(),
                        "round {round}: nothing after the answer"
                    );
                } else {
                    assert!(
                        read_message(&mut stream, &mut last_id).is_none(),
                        "the stream ends after its answer"
                    );
                }
                break;
            }
            if released == seen.len() as u64 && rng.percent(30) {
                // Cut after a keep-alive: with nothing released, only comments come.
                assert!(matches!(stream.next(), Some(Chunk::Comment)));
            }
            stream.cut();
            cuts += 1;
            // The handler goes on while nobody listens: all, some or none of what is left.
            let more = rng.below((total - released) as usize + 1) as u64;
            for _ in 0..more {
                go.send(()).unwrap();
            }
            released += more;
            stream = resume(a, sid_h, pv, last_id.as_deref().unwrap());
        }
        let want: Vec<u64> = (0..n).chain([1000 + n]).collect();
        assert_eq!(
            seen, want,
            "round {round} (n {n}, {cuts} cuts): every message exactly once, in order"
        );
    }
}

#[test]
fn cut_streams_resume_with_every_message_exactly_once() {
    let seed = seed();
    let _guard = SeedGuard::new("http resume", seed);
    let gates: Gates = Arc::default();
    let cfg = HttpConfig::builder()
        .keepalive(Duration::from_millis(20))
        .build();
    let h = HttpServer::builder()
        .config(cfg)
        .build(Steps(gates.clone()))
        .unwrap()
        .spawn()
        .unwrap();
    let a = h.local_addr();
    let next_id = Arc::new(AtomicI64::new(1));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (g, n) = (gates.clone(), next_id.clone());
            let s = seed.wrapping_add(c as u64 * 0x9E37_79B9);
            std::thread::spawn(move || client(a, g, n, s))
        })
        .collect();
    for c in clients {
        c.join().expect("a client's rounds");
    }
    assert!(next_id.load(Ordering::SeqCst) > 200, "at least 200 rounds");
}
