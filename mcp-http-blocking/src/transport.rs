//! The transport core: (method, path, headers, body) in, a complete response or an SSE stream
//! out. It knows MCP's Streamable HTTP rules for both eras and nothing about any HTTP server.

use std::io::Read;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};
use mcp_core::jsonrpc::{
    DecodeError, ErrorObject, Incoming, Message, RequestId, codes, decode_incoming,
};
use mcp_core::service::{Service, SessionInfo, TransportKind};
use mcp_core::version::{Era, ProtocolVersion};
use serde_json::{Value, json};

use crate::config::HttpConfig;
use crate::http::{Body, Frame, HttpRequest, HttpResponse, SseBody, StreamEnd, accepts, sse_event};
use crate::legacy::{Kind, LegacySession, Registry, StreamError, parse_event_id, priming_event};
use crate::modern::{ExchangeOutbound, check_headers, status_for};
use crate::security::{AuthError, cors_headers, host_allowed, preflight};
use crate::store::{EventStore, MemoryEventStore};

/// The header carrying the legacy session id.
pub const SESSION_HEADER: &str = "Mcp-Session-Id";
/// The header carrying the protocol revision.
pub const VERSION_HEADER: &str = "MCP-Protocol-Version";
const PRM_PATH: &str = "/.well-known/oauth-protected-resource";

/// Streamable HTTP for one [`Service`], independent of the HTTP server that carries it.
///
/// Cloning is cheap and shares everything (sessions included).
#[derive(Clone)]
pub struct StreamableHttp {
    inner: Arc<Inner>,
}

struct Inner {
    cfg: Arc<HttpConfig>,
    service: Arc<dyn Service>,
    sessions: Registry,
    store: Arc<dyn EventStore>,
}

/// Stops the sweeper thread when dropped (or through [`Sweeper::stop`]).
pub struct Sweeper {
    stop: Option<Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Sweeper {
    /// Stops the thread and waits for it.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Sweeper {
    fn drop(&mut self) {
        self.halt();
    }
}

type OnEnd = Box<dyn FnOnce(StreamEnd) + Send>;

struct Answer {
    accept_sse: bool,
    single: bool,
    modern: bool,
    prefix: Vec<Vec<u8>>,
}

fn err400(detail: impl Into<String>) -> HttpResponse {
    HttpResponse::rpc_error(
        400,
        None,
        ErrorObject::new(codes::INVALID_REQUEST, detail.into()),
    )
}

fn session_not_found() -> HttpResponse {
    HttpResponse::rpc_error(404, None, ErrorObject::new(-32001, "Session not found"))
}

fn unsupported_version(requested: &str, supported: Vec<&'static str>) -> HttpResponse {
    HttpResponse::rpc_error(
        400,
        None,
        ErrorObject::new(
            codes::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(json!({ "supported": supported, "requested": requested })),
    )
}

fn sse_response(body: SseBody) -> HttpResponse {
    HttpResponse {
        status: 200,
        headers: vec![
            ("Content-Type".into(), "text/event-stream".into()),
            ("Cache-Control".into(), "no-cache".into()),
            ("X-Accel-Buffering".into(), "no".into()),
        ],
        body: Body::Sse(body),
    }
}

fn new_session_id() -> Option<String> {
    let mut b = [0u8; 24];
    getrandom::fill(&mut b).ok()?;
    Some(b.iter().map(|x| format!("{x:02x}")).collect())
}

impl StreamableHttp {
    /// A transport serving `service` with `cfg`.
    pub fn new(service: impl Service, cfg: HttpConfig) -> Self {
        let store = cfg
            .event_store
            .clone()
            .unwrap_or_else(|| Arc::new(MemoryEventStore::new(cfg.history)));
        StreamableHttp {
            inner: Arc::new(Inner {
                cfg: Arc::new(cfg),
                service: Arc::new(service),
                sessions: Registry::default(),
                store,
            }),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &HttpConfig {
        &self.inner.cfg
    }

    /// Live legacy sessions.
    pub fn session_count(&self) -> usize {
        self.inner.sessions.len()
    }

    /// Closes the sessions idle for longer than the configured time; returns how many.
    pub fn sweep(&self) -> usize {
        let dead = self
            .inner
            .sessions
            .expired(Instant::now(), self.inner.cfg.session_idle);
        for s in &dead {
            log::debug!("session {} expired", s.id);
            s.close();
        }
        dead.len()
    }

    /// Starts a thread that calls [`StreamableHttp::sweep`] at the configured interval.
    pub fn spawn_sweeper(&self) -> std::io::Result<Sweeper> {
        let (tx, rx): (Sender<()>, Receiver<()>) = bounded(1);
        let me = self.clone();
        let every = self.inner.cfg.sweep_every();
        let thread = thread::Builder::new()
            .name("mcp-http-sweeper".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    me.sweep();
                }
            })?;
        Ok(Sweeper {
            stop: Some(tx),
            thread: Some(thread),
        })
    }

    /// Closes every session (their streams end).
    pub fn close_all(&self) {
        for s in self.inner.sessions.drain() {
            s.close();
        }
    }

    /// Handles one request. `body` is read only for POST, at most `max_body + 1` bytes.
    pub fn handle(&self, req: &HttpRequest, body: &mut dyn Read) -> HttpResponse {
        let cfg = &self.inner.cfg;
        if req.header_bytes() > cfg.max_header_bytes {
            return HttpResponse::empty(431);
        }
        match req.header("Host") {
            None => return err400("the Host header is required"),
            Some(h) if !host_allowed(cfg.allowed_hosts.as_deref(), h) => {
                log::warn!("refused Host {h:?} from {:?}", req.remote_addr);
                return HttpResponse::rpc_error(
                    403,
                    None,
                    ErrorObject::new(codes::INVALID_REQUEST, "Host not allowed"),
                );
            }
            Some(_) => {}
        }
        let origin = req.header("Origin");
        if let Some(o) = origin {
            if !cfg.allowed_origins.allows(o) {
                log::warn!("refused Origin {o:?} from {:?}", req.remote_addr);
                return HttpResponse::rpc_error(
                    403,
                    None,
                    ErrorObject::new(codes::INVALID_REQUEST, "Origin not allowed"),
                );
            }
        }
        let mut resp = self.route(req, body);
        if let (Some(o), true) = (origin, cfg.cors) {
            if req.method != "OPTIONS" {
                cors_headers(&mut resp, o);
            }
        }
        resp
    }

    fn ours(&self, path: &str) -> bool {
        let cfg = &self.inner.cfg;
        path == cfg.path
            || (cfg.enable_legacy_sse && (path == cfg.sse_path || path == cfg.messages_path))
    }

    fn route(&self, req: &HttpRequest, body: &mut dyn Read) -> HttpResponse {
        let cfg = &self.inner.cfg;
        let path = req.path();
        if let Some(auth) = &cfg.auth {
            if path == PRM_PATH || path == format!("{PRM_PATH}{}", cfg.path) {
                if req.method != "GET" {
                    return HttpResponse::empty(405).with_header("Allow", "GET");
                }
                let doc = json!({
                    "resource": self.resource_url(req),
                    "authorization_servers": auth.authorization_servers,
                    "scopes_supported": auth.scopes,
                    "bearer_methods_supported": ["header"],
                });
                return HttpResponse::json(200, doc.to_string().into_bytes());
            }
        }
        if !self.ours(path) {
            return HttpResponse::empty(404);
        }
        if req.method == "OPTIONS" {
            return match req.header("Origin") {
                Some(o) if cfg.cors => preflight(req, o),
                _ => HttpResponse::empty(204).with_header("Allow", "GET, POST, DELETE, OPTIONS"),
            };
        }
        let claims = match self.authorize(req) {
            Ok(c) => c,
            Err(r) => return r,
        };
        if path == cfg.path {
            match req.method.as_str() {
                "POST" => self.post(req, body, claims),
                "GET" => self.get(req),
                "DELETE" => self.delete(req),
                _ => self.method_not_allowed(),
            }
        } else if path == cfg.sse_path {
            if req.method == "GET" {
                self.old_sse_get(req, claims)
            } else {
                HttpResponse::empty(405).with_header("Allow", "GET")
            }
        } else if req.method == "POST" {
            self.old_sse_post(req, body)
        } else {
            HttpResponse::empty(405).with_header("Allow", "POST")
        }
    }

    fn method_not_allowed(&self) -> HttpResponse {
        HttpResponse::empty(405).with_header("Allow", "POST")
    }

    fn base_url(&self, req: &HttpRequest) -> String {
        match self
            .inner
            .cfg
            .auth
            .as_ref()
            .and_then(|a| a.public_url.clone())
        {
            Some(u) => u.trim_end_matches('/').to_owned(),
            None => format!("http://{}", req.header("Host").unwrap_or("localhost")),
        }
    }

    fn resource_url(&self, req: &HttpRequest) -> String {
        format!("{}{}", self.base_url(req), self.inner.cfg.path)
    }

    fn authorize(&self, req: &HttpRequest) -> Result<Option<Value>, HttpResponse> {
        let Some(auth) = &self.inner.cfg.auth else {
            return Ok(None);
        };
        let prm = format!("{}{PRM_PATH}{}", self.base_url(req), self.inner.cfg.path);
        let scope = auth.scopes.join(" ");
        let challenge = |extra: &str| {
            let mut c = format!("Bearer resource_metadata=\"{prm}\"");
            if !scope.is_empty() {
                c.push_str(&format!(", scope=\"{scope}\""));
            }
            c.push_str(extra);
            c
        };
        let token = req
            .header("Authorization")
            .and_then(|h| {
                h.strip_prefix("Bearer ")
                    .or_else(|| h.strip_prefix("bearer "))
            })
            .map(str::trim);
        let Some(token) = token.filter(|t| !t.is_empty()) else {
            return Err(HttpResponse::empty(401).with_header("WWW-Authenticate", challenge("")));
        };
        match auth.authorizer.authorize(token, &self.resource_url(req)) {
            Ok(claims) => Ok(Some(claims)),
            Err(AuthError::Invalid(why)) => Err(HttpResponse::empty(401).with_header(
                "WWW-Authenticate",
                challenge(&format!(", error=\"invalid_token\", error_description=\"{}\"", why.replace('"', "'"))),
            )),
            Err(AuthError::InsufficientScope { scope }) => Err(HttpResponse::empty(403).with_header(
                "WWW-Authenticate",
                format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{prm}\""),
            )),
        }
    }

    fn read_body(&self, req: &HttpRequest, body: &mut dyn Read) -> Result<Vec<u8>, HttpResponse> {
        let max = self.inner.cfg.max_body;
        if req.content_length.is_some_and(|l| l > max as u64) {
            return Err(HttpResponse::empty(413));
        }
        let mut buf = Vec::with_capacity(req.content_length.unwrap_or(0).min(max as u64) as usize);
        match body.take(max as u64 + 1).read_to_end(&mut buf) {
            Ok(_) if buf.len() > max => Err(HttpResponse::empty(413)),
            Ok(_) => Ok(buf),
            Err(e) => Err(err400(format!("could not read the body: {e}"))),
        }
    }

    fn post(&self, req: &HttpRequest, body: &mut dyn Read, claims: Option<Value>) -> HttpResponse {
        let cfg = &self.inner.cfg;
        let ct_ok = req.header("Content-Type").is_some_and(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        });
        if !ct_ok {
            return HttpResponse::rpc_error(
                415,
                None,
                ErrorObject::new(
                    codes::INVALID_REQUEST,
                    "Content-Type must be application/json",
                ),
            );
        }
        let accept = req.header("Accept");
        let accept_sse = accepts(accept, "text/event-stream");
        if accept.is_some() && !accept_sse && !accepts(accept, "application/json") {
            return HttpResponse::rpc_error(
                406,
                None,
                ErrorObject::new(
                    codes::INVALID_REQUEST,
                    "Accept must include application/json or text/event-stream",
                ),
            );
        }
        let bytes = match self.read_body(req, body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let incoming = match decode_incoming(&bytes, true) {
            Ok(i) => i,
            Err(e) => return HttpResponse::json(400, e.to_response().to_vec()),
        };
        let header_version = req.header(VERSION_HEADER);
        let sid = req.header(SESSION_HEADER);
        let is_init =
            matches!(&incoming, Incoming::Single(Message::Request(r)) if r.method == "initialize");
        let parsed = header_version.map(|v| (v, ProtocolVersion::parse(v)));
        if let Some((v, None)) = parsed {
            return unsupported_version(v, cfg.versions.supported_strings());
        }
        let body_is_modern = match &incoming {
            Incoming::Single(Message::Request(r)) => r
                .params_value()
                .get("_meta")
                .is_some_and(|m| m.get("io.modelcontextprotocol/protocolVersion").is_some()),
            _ => false,
        };
        let modern = sid.is_none()
            && !is_init
            && match parsed {
                Some((_, Some(v))) => v.era() == Era::Modern,
                _ => body_is_modern,
            };
        if modern {
            return self.post_modern(
                req,
                incoming,
                header_version.unwrap_or(""),
                accept_sse,
                claims,
            );
        }
        if !cfg.versions.speaks(Era::Legacy) {
            return unsupported_version(
                header_version.unwrap_or(""),
                cfg.versions.supported_strings(),
            );
        }
        if let Some((v, Some(pv))) = parsed {
            if pv.era() != Era::Legacy || !cfg.versions.contains(pv) {
                return unsupported_version(v, cfg.versions.supported_strings());
            }
        }
        let (sess, minted) = match sid {
            Some(id) => match self.inner.sessions.get(id) {
                Some(s) if s.kind == Kind::Streamable => (s, false),
                _ => return session_not_found(),
            },
            None if is_init => match self.open_legacy(Kind::Streamable, claims) {
                Ok(s) => (s, true),
                Err(r) => return r,
            },
            None => return err400("Bad Request: Mcp-Session-Id header is required"),
        };
        sess.touch();
        if let (true, Incoming::Single(Message::Request(r))) = (is_init, &incoming) {
            sess.set_init_id(r.id.clone());
        }
        let msgs: Vec<Result<Message, DecodeError>> = match incoming {
            Incoming::Single(m) => vec![Ok(m)],
            Incoming::Batch(b) => {
                if !sess.version().is_some_and(ProtocolVersion::allows_batches) {
                    return err400(
                        "JSON-RPC batches are not supported by the negotiated protocol revision",
                    );
                }
                b
            }
        };
        let single = msgs.len() == 1;
        let mut resp = self.post_legacy(&sess, msgs, single, accept_sse, is_init);
        if minted {
            let failed = resp.status != 200
                || matches!(&resp.body, Body::Bytes(b) if serde_json::from_slice::<Value>(b).ok().is_some_and(|v| v.get("error").is_some()));
            if failed {
                if let Some(s) = self.inner.sessions.remove(&sess.id) {
                    s.close();
                }
            } else {
                resp.headers.push((SESSION_HEADER.into(), sess.id.clone()));
            }
        }
        resp
    }

    fn open_legacy(
        &self,
        kind: Kind,
        claims: Option<Value>,
    ) -> Result<Arc<LegacySession>, HttpResponse> {
        let Some(id) = new_session_id() else {
            return Err(HttpResponse::empty(500));
        };
        let sess = LegacySession::new(id, kind, self.inner.cfg.clone(), self.inner.store.clone());
        if !self
            .inner
            .sessions
            .insert(sess.clone(), self.inner.cfg.max_sessions)
        {
            return Err(HttpResponse::rpc_error(
                503,
                None,
                ErrorObject::new(codes::INTERNAL_ERROR, "too many sessions"),
            ));
        }
        let transport = match kind {
            Kind::Streamable => TransportKind::StreamableHttp,
            Kind::OldSse => TransportKind::LegacySse,
        };
        let mut info = SessionInfo::new(transport);
        if let Some(c) = claims {
            info = info.with_auth(c);
        }
        let svc = self.inner.service.open(info, sess.outbound());
        sess.set_service(svc);
        Ok(sess)
    }

    fn post_legacy(
        &self,
        sess: &Arc<LegacySession>,
        msgs: Vec<Result<Message, DecodeError>>,
        single: bool,
        accept_sse: bool,
        is_init: bool,
    ) -> HttpResponse {
        let ids: Vec<RequestId> = msgs
            .iter()
            .filter_map(|m| match m {
                Ok(Message::Request(r)) => Some(r.id.clone()),
                _ => None,
            })
            .collect();
        if ids.is_empty() {
            for m in msgs.into_iter().flatten() {
                sess.deliver(m);
            }
            return HttpResponse::empty(202);
        }
        let (stream, att) = match sess.open_post_stream(&ids) {
            Ok(x) => x,
            Err(StreamError::TooMany) => return HttpResponse::empty(429),
            Err(_) => return session_not_found(),
        };
        // The priming id is taken before any message of the stream exists, so it is below all
        // of them as a cursor.
        let priming_seq = sess.next_seq();
        let version = if is_init {
            msgs.first()
                .and_then(|m| m.as_ref().ok())
                .and_then(|m| match m {
                    Message::Request(r) => r
                        .params_value()
                        .get("protocolVersion")
                        .and_then(Value::as_str)
                        .and_then(ProtocolVersion::parse),
                    _ => None,
                })
        } else {
            sess.version()
        };
        let prefix = if version.is_some_and(|v| v.at_least(ProtocolVersion::V2025_11_25)) {
            vec![priming_event(
                stream.no,
                priming_seq,
                self.inner.cfg.retry_ms,
            )]
        } else {
            Vec::new()
        };
        for m in msgs {
            match m {
                Ok(m) => sess.deliver(m),
                Err(e) => log::debug!("dropping an invalid batch element: {e}"),
            }
        }
        let s2 = sess.clone();
        let generation = att.generation;
        let on_end: OnEnd = Box::new(move |how| s2.detach(&stream, generation, how));
        let Some(rx) = att.rx else {
            return HttpResponse::empty(202);
        };
        self.answer(
            rx,
            Answer {
                accept_sse,
                single,
                modern: false,
                prefix,
            },
            on_end,
        )
    }

    fn post_modern(
        &self,
        req: &HttpRequest,
        incoming: Incoming,
        header_version: &str,
        accept_sse: bool,
        claims: Option<Value>,
    ) -> HttpResponse {
        let cfg = &self.inner.cfg;
        let Incoming::Single(msg) = incoming else {
            return err400("JSON-RPC batches are not supported");
        };
        let version = match cfg.versions.check_modern(header_version) {
            Ok(v) => v,
            Err(supported) if !header_version.is_empty() => {
                return unsupported_version(header_version, supported);
            }
            Err(_) => {
                return HttpResponse::rpc_error(
                    400,
                    msg.id().cloned(),
                    ErrorObject::new(
                        codes::HEADER_MISMATCH,
                        "the MCP-Protocol-Version header is required",
                    ),
                );
            }
        };
        if let Err(r) = check_headers(req, &msg, header_version) {
            return r;
        }
        let id = match &msg {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        let (out, rx) = ExchangeOutbound::new(id.clone(), cfg.stream_buffer, cfg.send_timeout);
        let mut info =
            SessionInfo::new(TransportKind::StreamableHttp).with_protocol_version(version);
        if let Some(c) = claims {
            info = info.with_auth(c);
        }
        let session = self.inner.service.open(info, out);
        session.handle(msg);
        let Some(id) = id else {
            session.close();
            return HttpResponse::empty(202);
        };
        let on_end: OnEnd = Box::new(move |how| {
            if how == StreamEnd::ClientGone {
                session.stream_closed(&id);
            }
            session.close();
        });
        self.answer(
            rx,
            Answer {
                accept_sse,
                single: true,
                modern: true,
                prefix: Vec::new(),
            },
            on_end,
        )
    }

    /// Turns a stream's channel into the HTTP answer: plain JSON when the client accepts only
    /// JSON, or when the answer arrives alone within the JSON window; SSE otherwise.
    fn answer(&self, rx: Receiver<Frame>, a: Answer, on_end: OnEnd) -> HttpResponse {
        let cfg = &self.inner.cfg;
        let json_of = |f: Frame| {
            let status = if a.modern {
                status_for(f.error_code)
            } else {
                200
            };
            HttpResponse::json(status, f.json)
        };
        if !a.accept_sse {
            let deadline = Instant::now() + cfg.request_timeout;
            let mut answers = Vec::new();
            loop {
                match rx.recv_deadline(deadline) {
                    Ok(f) => {
                        let last = f.last;
                        if f.is_response {
                            answers.push(f);
                        }
                        if last {
                            break;
                        }
                    }
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                        on_end(StreamEnd::ClientGone);
                        return HttpResponse::rpc_error(
                            504,
                            None,
                            ErrorObject::internal("no answer in time"),
                        );
                    }
                }
            }
            on_end(StreamEnd::Completed);
            return if a.single {
                match answers.into_iter().next() {
                    Some(f) => json_of(f),
                    None => HttpResponse::rpc_error(
                        503,
                        None,
                        ErrorObject::internal("the session closed"),
                    ),
                }
            } else {
                let mut out = b"[".to_vec();
                for (i, f) in answers.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(&f.json);
                }
                out.push(b']');
                HttpResponse::json(200, out)
            };
        }
        let mut initial = a.prefix;
        match rx.recv_timeout(cfg.json_window) {
            Ok(f) if f.last && a.single => {
                on_end(StreamEnd::Completed);
                json_of(f)
            }
            Ok(f) => {
                initial.push(f.event);
                sse_response(SseBody::new(initial, Some(rx), cfg.keepalive, Some(on_end)))
            }
            Err(RecvTimeoutError::Timeout) => {
                sse_response(SseBody::new(initial, Some(rx), cfg.keepalive, Some(on_end)))
            }
            Err(RecvTimeoutError::Disconnected) => {
                on_end(StreamEnd::Completed);
                sse_response(SseBody::new(initial, None, cfg.keepalive, None))
            }
        }
    }

    fn legacy_session_for(&self, req: &HttpRequest) -> Result<Arc<LegacySession>, HttpResponse> {
        let cfg = &self.inner.cfg;
        if let Some(v) = req.header(VERSION_HEADER) {
            match ProtocolVersion::parse(v) {
                Some(pv) if pv.era() == Era::Modern => return Err(self.method_not_allowed()),
                Some(pv) if cfg.versions.contains(pv) => {}
                _ => return Err(unsupported_version(v, cfg.versions.supported_strings())),
            }
        }
        if !cfg.versions.speaks(Era::Legacy) {
            return Err(self.method_not_allowed());
        }
        let Some(id) = req.header(SESSION_HEADER) else {
            return Err(err400("Bad Request: Mcp-Session-Id header is required"));
        };
        match self.inner.sessions.get(id) {
            Some(s) if s.kind == Kind::Streamable => {
                s.touch();
                Ok(s)
            }
            _ => Err(session_not_found()),
        }
    }

    fn get(&self, req: &HttpRequest) -> HttpResponse {
        let cfg = &self.inner.cfg;
        if !cfg.enable_get_stream {
            return self.method_not_allowed();
        }
        let sess = match self.legacy_session_for(req) {
            Ok(s) => s,
            Err(r) => return r,
        };
        if !accepts(req.header("Accept"), "text/event-stream") {
            return HttpResponse::rpc_error(
                406,
                None,
                ErrorObject::new(
                    codes::INVALID_REQUEST,
                    "Accept must include text/event-stream",
                ),
            );
        }
        let resume = match req.header("Last-Event-ID") {
            Some(v) => match parse_event_id(v) {
                Some(x) => Some(x),
                None => return err400("unknown Last-Event-ID"),
            },
            None => None,
        };
        let (no, cursor) = match resume {
            Some((no, seq)) => (no, Some(seq)),
            None => (0, None),
        };
        let (stream, att) = match sess.attach(no, cursor) {
            Ok(x) => x,
            Err(StreamError::Busy) => {
                return HttpResponse::rpc_error(
                    409,
                    None,
                    ErrorObject::new(
                        codes::INVALID_REQUEST,
                        "a GET stream is already open for this session",
                    ),
                );
            }
            Err(StreamError::TooMany) => return HttpResponse::empty(429),
            Err(StreamError::Closed) if resume.is_some() => return err400("unknown Last-Event-ID"),
            Err(StreamError::Closed) => return session_not_found(),
        };
        let mut initial = Vec::new();
        if cursor.is_none()
            && sess
                .version()
                .is_some_and(|v| v.at_least(ProtocolVersion::V2025_11_25))
        {
            initial.push(priming_event(0, sess.next_seq(), cfg.retry_ms));
        }
        initial.extend(att.replay);
        let generation = att.generation;
        let s2 = sess.clone();
        let on_end: OnEnd = Box::new(move |how| s2.detach(&stream, generation, how));
        sse_response(SseBody::new(initial, att.rx, cfg.keepalive, Some(on_end)))
    }

    fn delete(&self, req: &HttpRequest) -> HttpResponse {
        if !self.inner.cfg.enable_delete {
            return self.method_not_allowed();
        }
        let sess = match self.legacy_session_for(req) {
            Ok(s) => s,
            Err(r) => return r,
        };
        if let Some(s) = self.inner.sessions.remove(&sess.id) {
            s.close();
        }
        HttpResponse::empty(200)
    }

    fn old_sse_get(&self, req: &HttpRequest, claims: Option<Value>) -> HttpResponse {
        let cfg = &self.inner.cfg;
        if !cfg.versions.contains(ProtocolVersion::V2024_11_05) {
            return HttpResponse::empty(404);
        }
        let sess = match self.open_legacy(Kind::OldSse, claims) {
            Ok(s) => s,
            Err(r) => return r,
        };
        let (stream, att) = match sess.attach(0, None) {
            Ok(x) => x,
            Err(_) => return HttpResponse::empty(500),
        };
        let _ = stream;
        let endpoint = format!("{}?sessionId={}", cfg.messages_path, sess.id);
        let _ = req;
        let initial = vec![sse_event(None, Some("endpoint"), endpoint.as_bytes())];
        let me = self.clone();
        let on_end: OnEnd = Box::new(move |_| {
            // The stream is the session: when it ends, so does the session.
            if let Some(s) = me.inner.sessions.remove(&sess.id) {
                s.close();
            }
        });
        sse_response(SseBody::new(initial, att.rx, cfg.keepalive, Some(on_end)))
    }

    fn old_sse_post(&self, req: &HttpRequest, body: &mut dyn Read) -> HttpResponse {
        let Some(id) = req.query_param("sessionId") else {
            return err400("the sessionId query parameter is required");
        };
        let sess = match self.inner.sessions.get(id) {
            Some(s) if s.kind == Kind::OldSse => s,
            _ => return session_not_found(),
        };
        let bytes = match self.read_body(req, body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        match decode_incoming(&bytes, false) {
            Ok(Incoming::Single(m)) => {
                sess.touch();
                sess.deliver(m);
                HttpResponse::empty(202)
            }
            Ok(Incoming::Batch(_)) => err400("batches are not supported"),
            Err(e) => HttpResponse::json(400, e.to_response().to_vec()),
        }
    }
}
