//! A small test service and a raw HTTP/1.1 client over std TcpStream.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_core::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId, Response};
use mcp_core::service::{Outbound, Service, Session, SessionInfo};
use serde_json::{Value, json};

/// Starts a server of `TestService` on 127.0.0.1 with `cfg` and the io timeout `io`.
pub fn serve(
    cfg: mcp_http_blocking::HttpConfig,
    io: Duration,
) -> (mcp_http_blocking::ServerHandle, Arc<Ctl>) {
    let ctl = Ctl::new();
    let h = mcp_http_blocking::HttpServer::builder()
        .config(cfg)
        .io_timeout(io)
        .build(TestService(ctl.clone()))
        .unwrap()
        .spawn()
        .unwrap();
    (h, ctl)
}

/// Starts a server of `TestService` on 127.0.0.1 with `cfg` and the default io timeout.
pub fn start(cfg: mcp_http_blocking::HttpConfig) -> mcp_http_blocking::ServerHandle {
    mcp_http_blocking::HttpServer::builder()
        .config(cfg)
        .build(TestService(Ctl::new()))
        .unwrap()
        .spawn()
        .unwrap()
}

/// How long a client test waits for one event before it fails.
pub const WAIT: Duration = Duration::from_secs(10);

/// A request with a numeric id.
pub fn req(id: i64, method: &str, params: Value) -> Message {
    Message::Request(Request::new(RequestId::Number(id), method, &params).unwrap())
}

/// The client's next event, within [`WAIT`].
pub fn next_event(rx: &Receiver<mcp_core::transport::Incoming>) -> mcp_core::transport::Incoming {
    rx.recv_timeout(WAIT).expect("an event in time")
}

/// The client's next event, which must be a message.
pub fn next(rx: &Receiver<mcp_core::transport::Incoming>) -> Message {
    match next_event(rx) {
        mcp_core::transport::Incoming::Message(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

/// What the test controls and observes.
pub struct Ctl {
    /// `gated` waits on this before its second notification and answer.
    pub go_rx: Receiver<()>,
    pub go_tx: Sender<()>,
    /// Reports from the service: "sent", "closed:<id>", "session-closed", flood results.
    pub ev_tx: Sender<String>,
    pub ev_rx: Receiver<String>,
    pub infos: Mutex<Vec<SessionInfo>>,
}

impl Ctl {
    pub fn new() -> Arc<Ctl> {
        let (go_tx, go_rx) = bounded(16);
        let (ev_tx, ev_rx) = bounded(1024);
        Arc::new(Ctl {
            go_rx,
            go_tx,
            ev_tx,
            ev_rx,
            infos: Mutex::new(Vec::new()),
        })
    }

    /// Waits for a report starting with `prefix`, skipping others.
    pub fn wait_for(&self, prefix: &str, within: Duration) -> Option<String> {
        let deadline = Instant::now() + within;
        while let Ok(e) = self.ev_rx.recv_deadline(deadline) {
            if e.starts_with(prefix) {
                return Some(e);
            }
        }
        None
    }
}

#[derive(Clone)]
pub struct TestService(pub Arc<Ctl>);

struct TestSession {
    out: Arc<dyn Outbound>,
    ctl: Arc<Ctl>,
}

impl Service for TestService {
    fn open(&self, info: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
        self.0.infos.lock().unwrap().push(info);
        Arc::new(TestSession {
            out,
            ctl: self.0.clone(),
        })
    }
}

fn note(method: &str, params: Value) -> Message {
    Message::Notification(Notification::new(method, &params).unwrap())
}

fn answer(id: &RequestId, result: Value) -> Message {
    Message::Response(Response::new(id.clone(), &result).unwrap())
}

impl Session for TestSession {
    fn handle(&self, msg: Message) {
        let Message::Request(r) = msg else {
            return;
        };
        let Request { id, method, .. } = &r;
        let params = r.params_value();
        let out = self.out.clone();
        let ctl = self.ctl.clone();
        let id = id.clone();
        match method.as_str() {
            "initialize" => {
                let v = params
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("2025-11-25")
                    .to_owned();
                let _ = out.send(
                    answer(
                        &id,
                        json!({"protocolVersion": v, "capabilities": {}, "serverInfo": {"name": "t", "version": "1"}}),
                    ),
                    Some(&id),
                );
            }
            "ping" => {
                let _ = out.send(answer(&id, json!({})), Some(&id));
            }
            "resources/subscribe" | "resources/unsubscribe" | "logging/setLevel" => {
                // Reported as "got:METHOD ARG" (the uri or the level).
                let arg = params
                    .get("uri")
                    .or_else(|| params.get("level"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let _ = ctl.ev_tx.try_send(format!("got:{method} {arg}"));
                let _ = out.send(answer(&id, json!({})), Some(&id));
            }
            "echo" | "tools/call" | "prompts/get" | "resources/read" => {
                let _ = out.send(answer(&id, json!({"echo": params})), Some(&id));
            }
            "progress" => {
                // A related notification first, then the answer: an SSE answer.
                std::thread::spawn(move || {
                    let _ = out.send(
                        note(
                            "notifications/progress",
                            json!({"progressToken": 1, "progress": 1}),
                        ),
                        Some(&id),
                    );
                    let _ = out.send(answer(&id, json!({"done": true})), Some(&id));
                });
            }
            "notify_unrelated" => {
                let r = out.send(
                    note(
                        "notifications/message",
                        json!({"level": "info", "data": "hello"}),
                    ),
                    None,
                );
                let _ = out.send(answer(&id, json!({"sent": r.is_ok()})), Some(&id));
            }
            "poll" => {
                // Lets go of the connection first (SSE polling), answers once released.
                std::thread::spawn(move || {
                    let released = out.close_stream(&id);
                    let _ = ctl.ev_tx.send(format!("released:{released}"));
                    let _ = ctl.go_rx.recv_timeout(Duration::from_secs(10));
                    let _ = out.send(answer(&id, json!({"polled": true})), Some(&id));
                    let _ = ctl.ev_tx.send("sent".into());
                });
            }
            "gated" => {
                std::thread::spawn(move || {
                    let _ = out.send(
                        note(
                            "notifications/progress",
                            json!({"progressToken": 1, "progress": 1}),
                        ),
                        Some(&id),
                    );
                    let _ = ctl.ev_tx.try_send("gated:waiting".into());
                    let _ = ctl.go_rx.recv_timeout(Duration::from_secs(10));
                    let _ = out.send(
                        note(
                            "notifications/progress",
                            json!({"progressToken": 1, "progress": 2}),
                        ),
                        Some(&id),
                    );
                    let _ = out.send(answer(&id, json!({"gated": true})), Some(&id));
                    let _ = ctl.ev_tx.send("sent".into());
                });
            }
            "burst" => {
                // Ten notifications, each but the first sent once the test let it go (after
                // reading the one before: a separate small write each time, paced by the
                // reader), then the answer.
                std::thread::spawn(move || {
                    for i in 0..10 {
                        if i > 0 {
                            let _ = ctl.go_rx.recv_timeout(Duration::from_secs(10));
                        }
                        let _ = out.send(
                            note(
                                "notifications/progress",
                                json!({"progressToken": 1, "progress": i}),
                            ),
                            Some(&id),
                        );
                    }
                    let _ = out.send(answer(&id, json!({})), Some(&id));
                });
            }
            "wait_cancel" => {
                std::thread::spawn(move || {
                    let _ = out.send(
                        note(
                            "notifications/progress",
                            json!({"progressToken": 1, "progress": 0}),
                        ),
                        Some(&id),
                    );
                });
            }
            "flood" => {
                // Many large unrelated messages: go to the GET stream, whose reader never reads.
                let n = params.get("n").and_then(Value::as_u64).unwrap_or(200);
                let (out2, id2) = (out.clone(), id.clone());
                std::thread::spawn(move || {
                    let big = "x".repeat(64 * 1024);
                    let mut failed = 0;
                    for _ in 0..n {
                        if out
                            .send(
                                note(
                                    "notifications/message",
                                    json!({"level": "info", "data": big}),
                                ),
                                None,
                            )
                            .is_err()
                        {
                            failed += 1;
                        }
                    }
                    let _ = ctl.ev_tx.send(format!("flood:{failed}"));
                });
                let _ = out2.send(answer(&id2, json!({})), Some(&id2));
            }
            other => {
                let _ = out.send(
                    Message::error(Some(id.clone()), ErrorObject::method_not_found(other)),
                    Some(&id),
                );
            }
        }
    }

    fn close(&self) {
        let _ = self.ctl.ev_tx.try_send("session-closed".into());
    }

    fn stream_closed(&self, id: &RequestId) {
        let _ = self.ctl.ev_tx.try_send(format!("closed:{id}"));
    }
}

/// A parsed HTTP response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, n: &str) -> Option<&str> {
        self.headers
            .get(&n.to_ascii_lowercase())
            .map(String::as_str)
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

pub fn write_request(
    s: &mut TcpStream,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) {
    let mut req = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        req.push_str("Host: 127.0.0.1\r\n");
    }
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    bytes.extend_from_slice(body);
    s.write_all(&bytes).unwrap();
}

/// Reads the status line and headers.
pub fn read_head<R: BufRead>(r: &mut R) -> (u16, HashMap<String, String>) {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut headers = HashMap::new();
    loop {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap_or(0) == 0 {
            break;
        }
        let l = l.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((n, v)) = l.split_once(':') {
            headers.insert(n.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    (status, headers)
}

/// Reads one complete response (Content-Length, chunked, or until close).
pub fn read_response<R: BufRead>(r: &mut R) -> Resp {
    let (status, headers) = read_head(r);
    let mut body = Vec::new();
    if let Some(n) = headers
        .get("content-length")
        .and_then(|v| v.parse::<usize>().ok())
    {
        body.resize(n, 0);
        r.read_exact(&mut body).unwrap();
    } else if headers
        .get("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"))
    {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).unwrap();
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if !(status == 202 || status == 204 || status == 304) {
        let _ = r.read_to_end(&mut body);
    }
    Resp {
        status,
        headers,
        body,
    }
}

pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    let mut s = connect(addr);
    write_request(&mut s, method, path, headers, body);
    read_response(&mut BufReader::new(s))
}

/// One SSE event as the client sees it.
#[derive(Debug, Clone, Default)]
pub struct Event {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
    pub retry: Option<String>,
}

/// Reads an SSE response incrementally (chunked framing + SSE parsing).
pub struct SseClient {
    pub status: u16,
    pub headers: HashMap<String, String>,
    reader: BufReader<TcpStream>,
    buf: Vec<u8>,
    chunked: bool,
    pub comments: usize,
    /// Events read while waiting for comments, not yet returned by `next`.
    held: std::collections::VecDeque<Event>,
}

impl SseClient {
    pub fn open(
        addr: SocketAddr,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> SseClient {
        Self::open_on(BufReader::new(connect(addr)), method, path, headers, body)
    }

    /// Opens the GET stream of legacy session `sid`.
    pub fn get_stream(addr: SocketAddr, sid: &str) -> SseClient {
        Self::open(
            addr,
            "GET",
            "/mcp",
            &[("Accept", "text/event-stream"), ("Mcp-Session-Id", sid)],
            b"",
        )
    }

    /// Sends the request on an existing (kept-alive) connection.
    pub fn open_on(
        mut reader: BufReader<TcpStream>,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> SseClient {
        write_request(reader.get_mut(), method, path, headers, body);
        let (status, headers) = read_head(&mut reader);
        let chunked = headers
            .get("transfer-encoding")
            .is_some_and(|v| v.contains("chunked"));
        SseClient {
            status,
            headers,
            reader,
            buf: Vec::new(),
            chunked,
            comments: 0,
            held: std::collections::VecDeque::new(),
        }
    }

    fn fill(&mut self) -> bool {
        if self.chunked {
            let mut size = String::new();
            if self.reader.read_line(&mut size).unwrap_or(0) == 0 {
                return false;
            }
            let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
                return false;
            };
            let mut chunk = vec![0; n + 2];
            if self.reader.read_exact(&mut chunk).is_err() || n == 0 {
                return false;
            }
            self.buf.extend_from_slice(&chunk[..n]);
            true
        } else {
            let mut tmp = [0u8; 4096];
            match self.reader.read(&mut tmp) {
                Ok(0) | Err(_) => false,
                Ok(n) => {
                    self.buf.extend_from_slice(&tmp[..n]);
                    true
                }
            }
        }
    }

    /// The next event (comments are counted and skipped); None at the end of the stream.
    pub fn next(&mut self) -> Option<Event> {
        if let Some(ev) = self.held.pop_front() {
            return Some(ev);
        }
        self.frame(false)
    }

    /// Reads until `n` comments (keep-alives) have arrived in all; events read meanwhile are
    /// kept for [`SseClient::next`]. False when the stream ends first.
    pub fn wait_comments(&mut self, n: usize) -> bool {
        while self.comments < n {
            let before = self.comments;
            match self.frame(true) {
                Some(ev) => self.held.push_back(ev),
                None if self.comments > before => {}
                None => return false,
            }
        }
        true
    }

    /// The next event; with `stop_at_comment`, returns None after a comment too.
    fn frame(&mut self, stop_at_comment: bool) -> Option<Event> {
        loop {
            if let Some(pos) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let raw: Vec<u8> = self.buf.drain(..pos + 2).collect();
                let text = String::from_utf8_lossy(&raw).to_string();
                let mut ev = Event::default();
                let mut any = false;
                for line in text.lines() {
                    if line.is_empty() || line.starts_with(':') {
                        continue;
                    }
                    let (k, v) = line.split_once(':').unwrap_or((line, ""));
                    let v = v.strip_prefix(' ').unwrap_or(v).to_owned();
                    any = true;
                    match k {
                        "id" => ev.id = Some(v),
                        "event" => ev.event = Some(v),
                        "data" => ev.data.push_str(&v),
                        "retry" => ev.retry = Some(v),
                        _ => {}
                    }
                }
                if any {
                    return Some(ev);
                }
                self.comments += 1;
                if stop_at_comment {
                    return None;
                }
                continue;
            }
            if !self.fill() {
                return None;
            }
        }
    }

    /// Drops the connection (a client hanging up).
    pub fn cut(self) {
        let _ = self.reader.get_ref().shutdown(std::net::Shutdown::Both);
    }
}

/// Threads of this process (Linux).
pub fn thread_count() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Threads:"))
                .and_then(|l| l[8..].trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The peer closed the connection: a read returned EOF or a reset (not data, and not a
/// timeout of our own).
pub fn peer_closed(r: &std::io::Result<usize>) -> bool {
    match r {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    }
}

pub const ACCEPT_BOTH: (&str, &str) = ("Accept", "application/json, text/event-stream");
pub const JSON_CT: (&str, &str) = ("Content-Type", "application/json");

pub fn rpc(id: i64, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

/// Opens a legacy session of `version` (`initialize` answered 200) and returns its id.
pub fn open_session(addr: SocketAddr, version: &str) -> String {
    let r = request(
        addr,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT],
        &init_body(version),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.header("mcp-session-id")
        .expect("a session id is minted")
        .to_owned()
}

pub fn init_body(version: &str) -> Vec<u8> {
    rpc(
        1,
        "initialize",
        json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    )
}

/// Form and URL helpers of the mock authorization servers (the crate's own are private).
pub mod form {
    /// Percent-encodes everything but RFC 3986's unreserved characters.
    pub fn encode(s: &str) -> String {
        s.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    /// Decodes `%XX` and `+`; a broken escape is kept as it is.
    pub fn decode(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            let hex = (b[i] == b'%')
                .then(|| s.get(i + 1..i + 3))
                .flatten()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match (b[i], hex) {
                (b'+', _) => out.push(b' '),
                (_, Some(v)) => {
                    out.push(v);
                    i += 2;
                }
                (c, None) => out.push(c),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// `a=1&b=2` (a query or a form body) as decoded pairs.
    pub fn parse(q: &str) -> Vec<(String, String)> {
        q.split('&')
            .filter(|p| !p.is_empty())
            .map(|p| match p.split_once('=') {
                Some((k, v)) => (decode(k), decode(v)),
                None => (decode(p), String::new()),
            })
            .collect()
    }

    /// A request target's path and query.
    pub fn split_target(target: &str) -> (&str, Option<&str>) {
        match target.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (target, None),
        }
    }

    /// `BASE64URL(SHA256(text))`: a PKCE S256 challenge, a DPoP `ath`.
    #[cfg(feature = "oauth")]
    pub fn s256(text: &str) -> String {
        use sha2::{Digest, Sha256};
        const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let digest = Sha256::digest(text.as_bytes());
        let mut out = String::new();
        for chunk in digest.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
            for i in 0..=chunk.len() {
                out.push(char::from(ABC[(n >> (18 - 6 * i) & 63) as usize]));
            }
        }
        out
    }
}
