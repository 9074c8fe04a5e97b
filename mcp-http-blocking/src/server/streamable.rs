//! The transport core: (method, path, headers, body) in, a complete response or an SSE stream
//! out. It knows MCP's Streamable HTTP rules for both eras and nothing about any HTTP server.

use std::io::Read;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};
use mcp_core::executor::Executor;
use mcp_core::jsonrpc::{
    DecodeError, ErrorObject, Message, Payload as Incoming, check_batch, codes, decode_incoming,
};
use mcp_core::service::Service;
use mcp_core::types::methods;
use mcp_core::version::{Era, ProtocolVersion};
use serde_json::{Value, json};

use crate::server::answer::{Deferred, Handoff, Reply, Via, Watch};
use crate::server::config::HttpConfig;
use crate::server::context::ServerContext;
use crate::server::http::{
    Body, HttpRequest, HttpResponse, accepts, bad_request, err400, read_body, session_not_found,
    unsupported_version,
};
use crate::server::seal::StateSealer;
use crate::server::security::{
    AuthError, cors_headers, host_allowed, host_names_port, hosts_open, preflight,
};
use crate::server::sessions::{Kind, Registry};
use crate::server::store::MemoryEventStore;
use crate::server::{legacy, stateless};
use crate::{SESSION_HEADER, VERSION_HEADER};
const PRM_PATH: &str = "/.well-known/oauth-protected-resource";

/// Streamable HTTP for one [`Service`], independent of the HTTP server that carries it.
///
/// Cloning is cheap and shares everything (sessions included).
#[derive(Clone)]
pub struct StreamableHttp {
    inner: Arc<ServerContext>,
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

impl StreamableHttp {
    /// A transport serving `service` with `cfg`.
    pub fn new(service: impl Service, cfg: HttpConfig) -> Self {
        Self::build(service, cfg, None, None)
    }

    /// A transport whose sessions run handlers on the request's thread, for an HTTP server
    /// that can hand a response over to another thread (see `answer::escape`).
    pub(crate) fn new_inline(
        service: impl Service,
        cfg: HttpConfig,
        listen_port: u16,
    ) -> std::io::Result<Self> {
        let watch = Watch::start(cfg.json_window)?;
        let deliver = Executor::builder()
            .name("mcp-http-deliver")
            .max_threads(1024)
            .idle_timeout(Duration::from_secs(10))
            .build()?;
        Ok(Self::build(
            service,
            cfg,
            Some((watch, deliver)),
            Some(listen_port),
        ))
    }

    fn build(
        service: impl Service,
        cfg: HttpConfig,
        inline: Option<(Watch, Executor)>,
        listen_port: Option<u16>,
    ) -> Self {
        let (watch, deliver) = inline.unzip();
        let store = cfg
            .event_store
            .clone()
            .unwrap_or_else(|| Arc::new(MemoryEventStore::new(cfg.history)));
        let sealer = cfg.sealer.clone().unwrap_or_else(|| {
            Arc::new(StateSealer::for_config(
                cfg.state_secret.as_ref(),
                cfg.previous_state_secret.as_ref(),
            ))
        });
        StreamableHttp {
            inner: Arc::new(ServerContext {
                sealer,
                cfg: Arc::new(cfg),
                service: Arc::new(service),
                sessions: Registry::default(),
                store,
                watch,
                deliver,
                listen_port,
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
    ///
    /// On the core of an [`crate::HttpServer`] (whose sessions run handlers inline, see
    /// [`crate::HttpServer`]), a request's handlers then run on a thread of their own.
    pub fn handle(&self, req: &HttpRequest, body: &mut dyn Read) -> HttpResponse {
        match self.handle_via(req, body, Via::Plain) {
            Reply::Now(r) => r,
            Reply::Handed => HttpResponse::empty(500),
        }
    }

    /// Handles one request for an HTTP server that can also write the response from another
    /// thread (`handoff`, called at most once; see `answer::escape`).
    pub(crate) fn handle_inline(
        &self,
        req: &HttpRequest,
        body: &mut dyn Read,
        handoff: Handoff,
    ) -> Reply {
        self.handle_via(req, body, Via::Inline(handoff))
    }

    fn handle_via(&self, req: &HttpRequest, body: &mut dyn Read, via: Via) -> Reply {
        let cfg = &self.inner.cfg;
        if req.header_bytes() > cfg.max_header_bytes {
            return Reply::Now(HttpResponse::empty(431));
        }
        match req.header("Host") {
            None => return Reply::Now(err400("the Host header is required")),
            Some(h) if !host_allowed(cfg.allowed_hosts.as_deref(), h) => {
                log::warn!("refused Host {h:?} from {:?}", req.remote_addr);
                return Reply::Now(HttpResponse::rpc_error(
                    403,
                    None,
                    ErrorObject::new(codes::INVALID_REQUEST, "Host not allowed"),
                ));
            }
            Some(_) => {}
        }
        let origin = req.header("Origin");
        if let Some(o) = origin {
            if !cfg.allowed_origins.allows(o) {
                log::warn!("refused Origin {o:?} from {:?}", req.remote_addr);
                return Reply::Now(HttpResponse::rpc_error(
                    403,
                    None,
                    ErrorObject::new(codes::INVALID_REQUEST, "Origin not allowed"),
                ));
            }
        }
        let cors = origin.filter(|_| cfg.cors && req.method != "OPTIONS");
        let via = match (via, cors) {
            (Via::Inline(handoff), Some(o)) => {
                let o = o.to_owned();
                Via::Inline(Box::new(move |mut d: Deferred| {
                    d.decorate(move |r| cors_headers(r, &o));
                    handoff(d)
                }))
            }
            (v, _) => v,
        };
        let mut reply = self.route(req, body, via);
        if let (Some(o), Reply::Now(r)) = (cors, &mut reply) {
            cors_headers(r, o);
        }
        reply
    }

    fn ours(&self, path: &str) -> bool {
        let cfg = &self.inner.cfg;
        path == cfg.path
            || (cfg.enable_legacy_sse && (path == cfg.sse_path || path == cfg.messages_path))
    }

    fn route(&self, req: &HttpRequest, body: &mut dyn Read, via: Via) -> Reply {
        let cfg = &self.inner.cfg;
        let path = req.path();
        // Metadata names at least one authorization server (MCP authorization, RFC 9728): a
        // server whose tokens come from none (a fixed token) publishes none.
        let prm = cfg
            .auth
            .as_ref()
            .filter(|a| !a.authorization_servers.is_empty());
        if let Some(auth) = prm {
            if path == PRM_PATH || path == format!("{PRM_PATH}{}", cfg.path) {
                // A browser asks before a discovery GET that carries a header of its own
                // (`MCP-Protocol-Version`): the preflight is answered as the endpoint's is.
                if req.method == "OPTIONS" {
                    return Reply::Now(match req.header("Origin") {
                        Some(o) if cfg.cors => preflight(req, o),
                        _ => HttpResponse::empty(204).with_header("Allow", "GET, OPTIONS"),
                    });
                }
                if req.method != "GET" {
                    return Reply::Now(
                        HttpResponse::empty(405).with_header("Allow", "GET, OPTIONS"),
                    );
                }
                let Some(resource) = self.resource_url(req) else {
                    return Reply::Now(misdirected());
                };
                let doc = json!({
                    "resource": resource,
                    "authorization_servers": auth.authorization_servers,
                    "scopes_supported": auth.scopes,
                    "bearer_methods_supported": ["header"],
                });
                return Reply::Now(HttpResponse::json(200, doc.to_string().into_bytes()));
            }
        }
        if !self.ours(path) {
            return Reply::Now(HttpResponse::empty(404));
        }
        if req.method == "OPTIONS" {
            return Reply::Now(match req.header("Origin") {
                Some(o) if cfg.cors => preflight(req, o),
                _ => HttpResponse::empty(204).with_header("Allow", "GET, POST, DELETE, OPTIONS"),
            });
        }
        let claims = match self.authorize(req) {
            Ok(c) => c,
            Err(r) => return Reply::Now(r),
        };
        if path == cfg.path {
            match req.method.as_str() {
                "POST" => self.post(req, body, claims, via),
                "GET" => Reply::Now(legacy::get(&self.inner, req, claims.as_ref())),
                "DELETE" => Reply::Now(legacy::delete(&self.inner, req, claims.as_ref())),
                // `Allow` lists what this endpoint serves (GET and DELETE are legacy sessions').
                _ => {
                    let legacy = cfg.versions.speaks(Era::Legacy);
                    let allow = match (legacy && cfg.enable_get_stream, legacy && cfg.enable_delete)
                    {
                        (true, true) => "GET, POST, DELETE, OPTIONS",
                        (true, false) => "GET, POST, OPTIONS",
                        (false, true) => "POST, DELETE, OPTIONS",
                        (false, false) => "POST, OPTIONS",
                    };
                    Reply::Now(HttpResponse::empty(405).with_header("Allow", allow))
                }
            }
        } else if path == cfg.sse_path {
            if req.method == "GET" {
                Reply::Now(legacy::sse_get(&self.inner, claims))
            } else {
                Reply::Now(HttpResponse::empty(405).with_header("Allow", "GET"))
            }
        } else if req.method == "POST" {
            Reply::Now(legacy::sse_post(&self.inner, req, body, claims.as_ref()))
        } else {
            Reply::Now(HttpResponse::empty(405).with_header("Allow", "POST"))
        }
    }

    /// This server's public base URL: the configured one, or `http://` plus `Host`.
    ///
    /// The resource URL built from it is the audience tokens are checked for, so it must not
    /// be the client's to choose: from `Host`, only when `Host` is one of the allowed names
    /// (never with `*` allowed) and, on this crate's server, names the port it listens on.
    /// Otherwise `None`: a token meant for another server on the same host (another port) or
    /// for a name of the attacker's choosing is never accepted here.
    fn base_url(&self, req: &HttpRequest) -> Option<String> {
        let cfg = &self.inner.cfg;
        if let Some(u) = cfg.auth.as_ref().and_then(|a| a.public_url.as_deref()) {
            return Some(u.trim_end_matches('/').to_owned());
        }
        let host = req.header("Host")?.trim();
        let port_ok = self
            .inner
            .listen_port
            .is_none_or(|p| host_names_port(host, p));
        (port_ok && !hosts_open(cfg.allowed_hosts.as_deref())).then(|| format!("http://{host}"))
    }

    fn resource_url(&self, req: &HttpRequest) -> Option<String> {
        Some(format!("{}{}", self.base_url(req)?, self.inner.cfg.path))
    }

    fn authorize(&self, req: &HttpRequest) -> Result<Option<Value>, HttpResponse> {
        let Some(auth) = &self.inner.cfg.auth else {
            return Ok(None);
        };
        let Some(base) = self.base_url(req) else {
            return Err(misdirected());
        };
        let resource = format!("{base}{}", self.inner.cfg.path);
        // Without an authorization server there is no metadata to point at (see `route`).
        let prm = (!auth.authorization_servers.is_empty()).then(|| {
            format!(
                "resource_metadata=\"{base}{PRM_PATH}{}\"",
                self.inner.cfg.path
            )
        });
        let scope = auth.scopes.join(" ");
        let challenge = |extra: &str| {
            let mut parts: Vec<String> = prm.iter().cloned().collect();
            if !scope.is_empty() {
                parts.push(format!("scope=\"{scope}\""));
            }
            let mut c = format!("Bearer {}", parts.join(", "));
            if parts.is_empty() {
                c.push_str(extra.trim_start_matches(", "));
            } else {
                c.push_str(extra);
            }
            c.trim_end().to_owned()
        };
        // The scheme is matched ignoring case (RFC 9110 §11.1).
        let token = req
            .header("Authorization")
            .and_then(|h| {
                h.get(..7)
                    .filter(|s| s.eq_ignore_ascii_case("bearer "))
                    .map(|_| &h[7..])
            })
            .map(str::trim);
        let Some(token) = token.filter(|t| !t.is_empty()) else {
            return Err(HttpResponse::empty(401).with_header("WWW-Authenticate", challenge("")));
        };
        if !is_b64token(token) {
            // Not a bearer token at all (RFC 6750 §2.1): refused here, never sent on to be
            // checked.
            return Err(HttpResponse::empty(400).with_header(
                "WWW-Authenticate",
                challenge(
                    ", error=\"invalid_request\", error_description=\"malformed bearer token\"",
                ),
            ));
        }
        match auth.authorizer.authorize(token, &resource) {
            Ok(claims) => Ok(Some(claims)),
            Err(AuthError::Invalid(why)) => Err(HttpResponse::empty(401).with_header(
                "WWW-Authenticate",
                challenge(&format!(
                    ", error=\"invalid_token\", error_description=\"{}\"",
                    why.replace('"', "'")
                )),
            )),
            Err(AuthError::InsufficientScope { scope }) => {
                let mut c = format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\"");
                if let Some(m) = &prm {
                    c.push_str(", ");
                    c.push_str(m);
                }
                Err(HttpResponse::empty(403).with_header("WWW-Authenticate", c))
            }
            Err(AuthError::Unavailable(why)) => {
                log::warn!("cannot check a token: {why}");
                Err(crate::server::http::busy(
                    "the token could not be checked now",
                    "5",
                ))
            }
        }
    }

    fn post(
        &self,
        req: &HttpRequest,
        body: &mut dyn Read,
        claims: Option<Value>,
        via: Via,
    ) -> Reply {
        let cfg = &self.inner.cfg;
        let ct_ok = req.header("Content-Type").is_some_and(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        });
        if !ct_ok {
            return Reply::Now(HttpResponse::rpc_error(
                415,
                None,
                ErrorObject::new(
                    codes::INVALID_REQUEST,
                    "Content-Type must be application/json",
                ),
            ));
        }
        let accept = req.header("Accept");
        let accept_sse = accepts(accept, "text/event-stream");
        if accept.is_some() && !accept_sse && !accepts(accept, "application/json") {
            return Reply::Now(HttpResponse::rpc_error(
                406,
                None,
                ErrorObject::new(
                    codes::INVALID_REQUEST,
                    "Accept must include application/json or text/event-stream",
                ),
            ));
        }
        let bytes = match read_body(req, body, cfg.max_body) {
            Ok(b) => b,
            Err(r) => return Reply::Now(r),
        };
        let incoming = match decode_incoming(&bytes, true) {
            Ok(i) => i,
            // Refused (an HTTP error status, as the transport requires), but never answered
            // with a JSON-RPC message: it is a notification or a response, even an invalid one.
            Err(e) if !e.is_answered() => return Reply::Now(HttpResponse::empty(400)),
            Err(e) => return Reply::Now(HttpResponse::json(400, e.to_response().to_vec())),
        };
        let header_version = req.header(VERSION_HEADER);
        let sid = req.header(SESSION_HEADER);
        // The id every refusal below carries, when the body is one request.
        let rid = match &incoming {
            Incoming::Single(Message::Request(r)) => Some(r.id.clone()),
            _ => None,
        };
        let is_init = matches!(&incoming, Incoming::Single(Message::Request(r)) if r.method == methods::INITIALIZE);
        let parsed = header_version.map(|v| (v, ProtocolVersion::parse(v)));
        if let Some((v, None)) = parsed {
            return Reply::Now(unsupported_version(
                rid,
                v,
                cfg.versions.supported_strings(),
            ));
        }
        if is_init && matches!(parsed, Some((_, Some(v))) if v.era() == Era::Modern) {
            // 2026-07-28 has no `initialize`: a method that does not exist in the revision the
            // client named (404, as every 2026-07-28 error of that kind).
            return Reply::Now(HttpResponse::rpc_error(
                404,
                rid,
                ErrorObject::method_not_found(methods::INITIALIZE).with_data(
                    serde_json::json!({ "hint": "2026-07-28 begins with server/discover" }),
                ),
            ));
        }
        // Parsing the params is not free: only done when the header does not tell. A body
        // names 2026-07-28 (or a later revision) when its `_meta` carries a protocolVersion
        // that is not a legacy one.
        let body_is_modern = || match &incoming {
            Incoming::Single(Message::Request(r)) => r
                .params_value()
                .get("_meta")
                .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
                .is_some_and(|v| {
                    !v.as_str()
                        .and_then(ProtocolVersion::parse)
                        .is_some_and(|v| v.era() == Era::Legacy)
                }),
            _ => false,
        };
        // A 2026-07-28 request ignores `Mcp-Session-Id` (that revision has no sessions): the
        // header naming the revision decides. Without it, a session's request is legacy.
        let modern = !is_init
            && match parsed {
                Some((_, Some(v))) => v.era() == Era::Modern,
                _ => sid.is_none() && body_is_modern(),
            };
        if !modern
            && !is_init
            && sid.is_none()
            && matches!(parsed, Some((_, Some(v))) if v.era() == Era::Legacy)
            && body_is_modern()
        {
            // No session, a legacy revision in the header, and a body that names 2026-07-28:
            // the header and `_meta` disagree (-32020), which says more than a missing
            // session would.
            return Reply::Now(HttpResponse::rpc_error(
                400,
                rid,
                ErrorObject::new(
                    codes::HEADER_MISMATCH,
                    "the MCP-Protocol-Version header does not match the request's _meta \
                     protocolVersion",
                ),
            ));
        }
        if modern {
            return stateless::post(
                &self.inner,
                req,
                incoming,
                header_version.unwrap_or(""),
                accept_sse,
                claims,
                via,
            );
        }
        if !cfg.versions.speaks(Era::Legacy) {
            return Reply::Now(unsupported_version(
                rid,
                header_version.unwrap_or(""),
                cfg.versions.supported_strings(),
            ));
        }
        if let Some((v, Some(pv))) = parsed {
            if pv.era() != Era::Legacy || !cfg.versions.contains(pv) {
                return Reply::Now(unsupported_version(
                    rid,
                    v,
                    cfg.versions.supported_strings(),
                ));
            }
        }
        let (sess, minted) = match sid {
            Some(id) => match self.inner.sessions.get(id) {
                // Another user's session is not found, as if it did not exist.
                Some(s) if s.kind == Kind::Streamable && s.owned_by(claims.as_ref()) => (s, false),
                _ => return Reply::Now(session_not_found(rid)),
            },
            None if is_init => match legacy::open(&self.inner, Kind::Streamable, claims) {
                Ok(s) => (s, true),
                // Refused (too many sessions): the error carries the `initialize`'s id.
                Err(r) if r.status == 503 => return Reply::Now(legacy::too_many_sessions(rid)),
                Err(r) => return Reply::Now(r),
            },
            None => {
                return Reply::Now(bad_request(
                    rid,
                    "Bad Request: Mcp-Session-Id header is required",
                ));
            }
        };
        sess.touch();
        if let (true, Incoming::Single(Message::Request(r))) = (is_init, &incoming) {
            sess.set_init_id(r.id.clone());
        }
        // A batch is answered with an array, even a batch of one (JSON-RPC 2.0 §6).
        let batch = matches!(incoming, Incoming::Batch(_));
        let msgs: Vec<Result<Message, DecodeError>> = match incoming {
            Incoming::Single(m) => vec![Ok(m)],
            Incoming::Batch(mut b) => {
                // The rule stdio follows too (see `mcp_core::jsonrpc::check_batch`).
                if let Err(e) = check_batch(sess.version(), &mut b) {
                    return Reply::Now(err400(e.to_string()));
                }
                b
            }
        };
        // A lone answer may go back as plain JSON only to a client that takes it; one that
        // listed only `text/event-stream` gets an SSE stream whatever it holds.
        let single = !batch
            && msgs.len() == 1
            && accept.is_none_or(|a| accepts(Some(a), "application/json"));
        let via = match via {
            Via::Inline(handoff) if minted => {
                // An answer that starts elsewhere still tells the client its session.
                let id = sess.id.clone();
                Via::Inline(Box::new(move |mut d: Deferred| {
                    d.decorate(move |r| r.headers.push((SESSION_HEADER.into(), id)));
                    handoff(d)
                }))
            }
            v => v,
        };
        let mut resp =
            match legacy::post(&self.inner, &sess, msgs, single, accept_sse, is_init, via) {
                Reply::Now(r) => r,
                other => return other,
            };
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
        Reply::Now(resp)
    }
}

/// RFC 6750 §2.1 `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
/// An authorizing server that cannot tell its own resource URL from this request (see
/// `StreamableHttp::base_url`): 421, the status for a request that names another server.
fn misdirected() -> HttpResponse {
    log::warn!(
        "refused: the resource URL tokens are checked for cannot come from this Host \
         (set AuthConfigBuilder::public_url when hosts are open or the server sits behind a proxy)"
    );
    HttpResponse::rpc_error(
        421,
        None,
        ErrorObject::new(codes::INVALID_REQUEST, "Host does not name this server"),
    )
}

fn is_b64token(t: &str) -> bool {
    let body = t.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}
