//! The server role: lifecycle of both eras, capability gates, the requests in flight, and the
//! server's own requests to the client.
//!
//! Era of a connection: the first request that settles it wins. `initialize` opens a legacy
//! session; a request whose `_meta` names a supported 2026-07-28 revision makes the connection
//! modern. From then on the other era's opening move is refused with -32600 (a second
//! `initialize`, or a request carrying the modern envelope inside a legacy session), because
//! the two eras disagree on where capabilities live and mixing them would let one request see
//! capabilities another declared. `server/discover` and a failed version check do not settle
//! the era, so a client can probe and then fall back to `initialize`.

use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId, Response};
use crate::types::methods as m;
use crate::version::{Era, ProtocolVersion, VersionSet};

use super::gates;
use super::meta::{
    self, CLIENT_CAPABILITIES_KEY, LoggingLevel, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY,
    has_capability,
};
use super::pending::{Expired, InFlight, IncomingTable, OutgoingTable, Timeout};
use super::progress::{self, CancelledParams, ProgressParams, ProgressUpdate};
use super::server_step::{ClientNotice, ListKind, PlainRequest, RequestContext, ServerStep};
use super::{Answer, Outcome, Refused};

/// What a server is and offers; fixed for the life of the engine.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The revisions this server speaks (both eras by default).
    pub(crate) versions: VersionSet,
    /// The server's `Implementation` object (`name`, `version`, ...).
    pub(crate) server_info: Value,
    /// The `ServerCapabilities` object the server advertises; methods it does not cover are
    /// answered -32601 by the engine.
    pub(crate) capabilities: Value,
    /// What `capabilities` declares, of what requests need.
    pub(crate) declared: gates::Declared,
    /// Guidance for the client's model, returned by `initialize` and `server/discover`.
    pub(crate) instructions: Option<String>,
}

impl ServerConfig {
    /// A builder starting from the defaults, with the settings that have none.
    pub fn builder(server_info: Value) -> ServerConfigBuilder {
        ServerConfigBuilder {
            config: ServerConfig {
                versions: VersionSet::all(),
                server_info,
                capabilities: Value::Object(serde_json::Map::new()),
                declared: gates::Declared::default(),
                instructions: None,
            },
        }
    }

    /// The revisions this server speaks (both eras by default).
    pub fn versions(&self) -> &VersionSet {
        &self.versions
    }

    /// The server's `Implementation` object (`name`, `version`, ...).
    pub fn server_info(&self) -> &Value {
        &self.server_info
    }

    /// The `ServerCapabilities` object the server advertises; methods it does not cover are
    /// answered -32601 by the engine.
    pub fn capabilities(&self) -> &Value {
        &self.capabilities
    }

    /// Guidance for the client's model, returned by `initialize` and `server/discover`.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }
}

/// Builds a [`ServerConfig`]: one method per setting, named after it, then
/// [`build`](ServerConfigBuilder::build).
#[derive(Debug, Clone)]
#[must_use]
pub struct ServerConfigBuilder {
    config: ServerConfig,
}

impl ServerConfigBuilder {
    /// The revisions this server speaks (both eras by default).
    pub fn versions(mut self, v: VersionSet) -> Self {
        self.config.versions = v;
        self
    }

    /// The `ServerCapabilities` object the server advertises; methods it does not cover are
    /// answered -32601 by the engine.
    pub fn capabilities(mut self, v: Value) -> Self {
        self.config.capabilities = v;
        self
    }

    /// Guidance for the client's model, returned by `initialize` and `server/discover`.
    pub fn instructions(mut self, v: impl Into<String>) -> Self {
        self.config.instructions = Some(v.into());
        self
    }

    /// The finished [`ServerConfig`].
    pub fn build(mut self) -> ServerConfig {
        self.config.declared = gates::Declared::of(&self.config.capabilities);
        self.config
    }
}

#[derive(Debug)]
struct Session {
    version: ProtocolVersion,
    client_capabilities: Arc<Value>,
    client_info: Option<Arc<Value>>,
    initialized: bool,
    /// `None` until `logging/setLevel`: every level goes out, as the spec leaves the default to
    /// the server and clients that never set a level still expect to see logs.
    log_level: Option<LoggingLevel>,
}

#[derive(Debug)]
enum Mode {
    Fresh,
    Legacy(Session),
    Modern,
}

/// The server side of one connection (stdio), one legacy HTTP session, or one modern HTTP
/// exchange. Request ids are the client's, unique only within what one client sends, so one
/// engine must never serve two clients.
#[derive(Debug)]
pub struct ServerEngine {
    config: Arc<ServerConfig>,
    mode: Mode,
    incoming: IncomingTable,
    outgoing: OutgoingTable,
    discover_ttl_ms: u64,
}

#[derive(Deserialize)]
struct InitializeParams {
    #[serde(rename = "protocolVersion")]
    protocol_version: String,
    #[serde(default)]
    capabilities: Option<Value>,
    #[serde(rename = "clientInfo", default)]
    client_info: Option<Value>,
}

#[derive(Deserialize)]
struct SetLevelParams {
    level: String,
}

impl ServerEngine {
    /// An engine for a new connection.
    pub fn new(config: ServerConfig) -> Self {
        Self::from_shared(Arc::new(config))
    }

    /// An engine sharing a config with others (one engine per HTTP session or exchange, with no
    /// copy of the capabilities each time).
    pub fn from_shared(config: Arc<ServerConfig>) -> Self {
        ServerEngine {
            config,
            mode: Mode::Fresh,
            incoming: IncomingTable::default(),
            outgoing: OutgoingTable::default(),
            discover_ttl_ms: 0,
        }
    }

    /// Sets the `ttlMs` of the `server/discover` result. The default, 0, tells clients not to
    /// cache it, which is always correct; raise it when the capabilities never change.
    pub fn set_discover_ttl_ms(&mut self, ttl_ms: u64) {
        self.discover_ttl_ms = ttl_ms;
    }

    /// The config.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The era of the connection, once settled.
    pub fn era(&self) -> Option<Era> {
        match self.mode {
            Mode::Fresh => None,
            Mode::Legacy(_) => Some(Era::Legacy),
            Mode::Modern => Some(Era::Modern),
        }
    }

    /// The revision negotiated by `initialize` (legacy sessions only; modern requests each name
    /// their own).
    pub fn session_version(&self) -> Option<ProtocolVersion> {
        match &self.mode {
            Mode::Legacy(s) => Some(s.version),
            _ => None,
        }
    }

    /// The capabilities the client declared in `initialize` (legacy sessions only).
    pub fn session_client_capabilities(&self) -> Option<&Value> {
        match &self.mode {
            Mode::Legacy(s) => Some(&s.client_capabilities),
            _ => None,
        }
    }

    /// Whether a request from the client still waits for the application's answer.
    pub fn is_in_flight(&self, id: &RequestId) -> bool {
        self.incoming.live(id).is_some()
    }

    /// How many client requests are in flight and how many server requests are pending.
    pub fn load(&self) -> (usize, usize) {
        (self.incoming.len(), self.outgoing.len())
    }

    /// Takes one incoming message and says what to do about it. `now` is read only for a
    /// notification (a client's progress on a server request restarts its timeout), so a
    /// caller may pass any instant with the other kinds.
    pub fn handle(&mut self, msg: Message, now: Instant) -> ServerStep {
        match msg {
            Message::Request(req) => self.on_request(req),
            Message::Notification(n) => self.on_notification(n, now),
            Message::Response(r) => match self.outgoing.remove(&r.id) {
                Some(p) => ServerStep::Answer(Answer {
                    id: r.id,
                    method: p.method,
                    related_to: p.related_to,
                    outcome: Outcome::from_result(r.result),
                }),
                None => ServerStep::Nothing,
            },
            Message::Error(e) => match e
                .id
                .and_then(|id| self.outgoing.remove(&id).map(|p| (id, p)))
            {
                Some((id, p)) => ServerStep::Answer(Answer {
                    id,
                    method: p.method,
                    related_to: p.related_to,
                    outcome: Outcome::Error(e.error),
                }),
                None => ServerStep::Nothing,
            },
        }
    }

    fn on_request(&mut self, req: Request) -> ServerStep {
        let id = req.id.clone();
        let reply = |e: ErrorObject| ServerStep::Reply(Message::error(Some(id.clone()), e));
        if self.incoming.contains(&req.id) {
            return reply(ErrorObject::invalid_request(format!(
                "request id {} is already in use by a request in flight",
                req.id
            )));
        }
        let head = match meta::read_request_meta(req.params.as_deref()) {
            Ok(h) => h,
            Err(e) => return reply(e),
        };
        let speaks_modern = self.config.versions.speaks(Era::Modern);
        if head.protocol_version.is_some() && speaks_modern {
            return self.on_modern_request(req, head);
        }
        match req.method.as_str() {
            m::INITIALIZE => return self.on_initialize(req),
            m::PING => return self.ok(req.id, json!({})),
            m::SERVER_DISCOVER if speaks_modern && !matches!(self.mode, Mode::Legacy(_)) => {
                return self.discover(req.id, None);
            }
            _ => {}
        }
        let session = match &self.mode {
            Mode::Legacy(s) => s,
            Mode::Fresh if !self.config.versions.speaks(Era::Legacy) => {
                return reply(missing_envelope());
            }
            Mode::Fresh => {
                return reply(ErrorObject::invalid_request(
                    "the session is not initialized: send initialize first \
                     (or, for 2026-07-28, carry _meta io.modelcontextprotocol/protocolVersion)",
                ));
            }
            Mode::Modern => return reply(missing_envelope()),
        };
        if !gates::exists_in(&req.method, Era::Legacy) {
            return reply(ErrorObject::method_not_found(&req.method));
        }
        if !self.config.declared.allows(&req.method) {
            return reply(ErrorObject::method_not_found(&req.method));
        }
        if req.method == m::LOGGING_SET_LEVEL {
            return self.set_level(req);
        }
        let ctx = RequestContext {
            id: req.id,
            method: req.method,
            params: req.params,
            era: Era::Legacy,
            protocol_version: session.version,
            client_capabilities: session.client_capabilities.clone(),
            client_info: session.client_info.clone(),
            progress_token: head.progress_token,
            log_level: None,
        };
        self.track(&ctx);
        ServerStep::Dispatch(ctx)
    }

    /// Takes request `id` for `method`, read in place by the caller and carrying no `_meta`,
    /// exactly as [`handle`](Self::handle) would dispatch it in an initialized legacy session,
    /// but with no [`RequestContext`] built: no owned method or params, no scan of the params.
    /// The request is in flight from here, answered through [`respond`](Self::respond) or
    /// [`answer`](Self::answer) as any other.
    ///
    /// `None` wherever `handle` would do anything else with the request (answer it itself,
    /// refuse it, or the connection is not a legacy session): nothing changed, and the caller
    /// hands the decoded message to `handle`, which decides. The caller vouches that the
    /// params hold no `_meta` member (no progress token, no 2026-07-28 envelope).
    pub fn take_plain(&mut self, id: &RequestId, method: &str) -> Option<PlainRequest> {
        self.admit_plain(id, method)?;
        let Mode::Legacy(session) = &self.mode else {
            return None;
        };
        Some(PlainRequest {
            protocol_version: session.version,
            client_capabilities: Arc::clone(&session.client_capabilities),
            client_info: session.client_info.clone(),
        })
    }

    /// [`take_plain`](Self::take_plain) for a caller that already holds this session's
    /// [`PlainRequest`] facts (they are fixed from `initialize` on): the same checks, the
    /// request in flight the same way, and only the negotiated revision returned, so that no
    /// reference count is touched (each is an atomic operation a request, measurable on a
    /// request that does little else).
    pub fn admit_plain(&mut self, id: &RequestId, method: &str) -> Option<ProtocolVersion> {
        let Mode::Legacy(session) = &self.mode else {
            return None;
        };
        if matches!(method, m::INITIALIZE | m::PING | m::LOGGING_SET_LEVEL)
            || self.incoming.contains(id)
            || !gates::exists_in(method, Era::Legacy)
            || !self.config.declared.allows(method)
        {
            return None;
        }
        let version = session.version;
        self.incoming
            .insert(id.clone(), InFlight::plain(Era::Legacy));
        Some(version)
    }

    fn on_modern_request(&mut self, req: Request, head: meta::RequestMeta) -> ServerStep {
        let id = req.id.clone();
        let reply = |e: ErrorObject| ServerStep::Reply(Message::error(Some(id.clone()), e));
        if matches!(self.mode, Mode::Legacy(_)) {
            return reply(ErrorObject::invalid_request(
                "this connection holds a legacy session (initialize); \
                 a 2026-07-28 request cannot join it",
            ));
        }
        let requested = match head.protocol_version.as_ref().and_then(Value::as_str) {
            Some(v) => v,
            None => {
                return reply(ErrorObject::invalid_params(format!(
                    "_meta {PROTOCOL_VERSION_KEY} must be a string"
                )));
            }
        };
        let version = match self.config.versions.check_modern(requested) {
            Ok(v) => v,
            Err(supported) => return reply(meta::unsupported_version_error(requested, &supported)),
        };
        if req.method != m::SERVER_DISCOVER && !gates::exists_in(&req.method, Era::Modern) {
            return reply(ErrorObject::method_not_found(&req.method));
        }
        // Strict on purpose: the revision makes the field required and forbids inferring it
        // from earlier requests, so a guess here would be a capability the client never gave.
        // `server/discover` is no exception: it is a request of the revision like any other.
        let Some(caps) = head.client_capabilities else {
            return reply(ErrorObject::invalid_params(format!(
                "_meta {CLIENT_CAPABILITIES_KEY} is required"
            )));
        };
        if !caps.is_object() {
            return reply(ErrorObject::invalid_params(format!(
                "_meta {CLIENT_CAPABILITIES_KEY} must be an object"
            )));
        }
        if req.method == m::SERVER_DISCOVER {
            return self.discover(req.id, Some(version));
        }
        let log_level = match head.log_level {
            None => None,
            Some(v) => match v.as_str().and_then(LoggingLevel::parse) {
                Some(l) => Some(l),
                None => return reply(ErrorObject::invalid_params(format!("bad log level {v}"))),
            },
        };
        if !self.config.declared.allows(&req.method) {
            return reply(ErrorObject::method_not_found(&req.method));
        }
        self.mode = Mode::Modern;
        let ctx = RequestContext {
            id: req.id,
            method: req.method,
            params: req.params,
            era: Era::Modern,
            protocol_version: version,
            client_capabilities: Arc::new(caps),
            client_info: head.client_info.map(Arc::new),
            progress_token: head.progress_token,
            log_level,
        };
        self.track(&ctx);
        ServerStep::Dispatch(ctx)
    }

    fn track(&mut self, ctx: &RequestContext) {
        self.incoming.insert(
            ctx.id.clone(),
            InFlight {
                era: ctx.era,
                progress_token: ctx.progress_token.clone(),
                last_progress: None,
                log_level: ctx.log_level,
                cancelled: false,
            },
        );
    }

    fn ok(&self, id: RequestId, result: Value) -> ServerStep {
        ServerStep::Reply(value_response(id, result))
    }

    fn on_initialize(&mut self, req: Request) -> ServerStep {
        let id = req.id.clone();
        let reply = |e: ErrorObject| ServerStep::Reply(Message::error(Some(id.clone()), e));
        match self.mode {
            Mode::Legacy(_) => {
                return reply(ErrorObject::invalid_request(
                    "the session is already initialized",
                ));
            }
            Mode::Modern => {
                return reply(ErrorObject::invalid_request(
                    "this connection speaks 2026-07-28, which has no initialize",
                ));
            }
            Mode::Fresh => {}
        }
        let params: InitializeParams = match req.params() {
            Ok(p) => p,
            Err(e) => return reply(ErrorObject::invalid_params(e)),
        };
        let Some(version) = self
            .config
            .versions
            .answer_initialize(&params.protocol_version)
        else {
            // A server that speaks only 2026-07-28: say which revisions it does speak.
            return reply(meta::unsupported_version_error(
                &params.protocol_version,
                &self.config.versions.supported_strings(),
            ));
        };
        let caps = params
            .capabilities
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        self.mode = Mode::Legacy(Session {
            version,
            client_capabilities: Arc::new(caps),
            client_info: params.client_info.map(Arc::new),
            initialized: false,
            log_level: None,
        });
        let mut result = json!({
            "protocolVersion": version.as_str(),
            "capabilities": self.config.capabilities,
            "serverInfo": self.config.server_info,
        });
        if let Some(i) = &self.config.instructions {
            result["instructions"] = Value::from(i.as_str());
        }
        // Leave out what the negotiated revision does not know (a title before 2025-06-18,
        // `completions` before 2025-03-26, ...). Our own answer always fits some shape.
        if let Err(e) = crate::types::shape::result(m::INITIALIZE, &mut result, version) {
            return reply(ErrorObject::internal(e));
        }
        self.ok(req.id, result)
    }

    fn discover(&self, id: RequestId, _version: Option<ProtocolVersion>) -> ServerStep {
        let mut result = json!({
            "supportedVersions": self.config.versions.supported_strings(),
            "capabilities": self.config.capabilities,
            "resultType": "complete",
            "ttlMs": self.discover_ttl_ms,
            // Capabilities may depend on who asks (authorization), so shared caches stay out.
            "cacheScope": "private",
            "_meta": { SERVER_INFO_KEY: self.config.server_info },
        });
        if let Some(i) = &self.config.instructions {
            result["instructions"] = Value::from(i.as_str());
        }
        self.ok(id, result)
    }

    fn set_level(&mut self, req: Request) -> ServerStep {
        let level = req
            .params::<SetLevelParams>()
            .ok()
            .and_then(|p| LoggingLevel::parse(&p.level));
        let Some(level) = level else {
            return ServerStep::Reply(Message::error(
                Some(req.id),
                ErrorObject::invalid_params("level must be one of the eight syslog levels"),
            ));
        };
        if let Mode::Legacy(s) = &mut self.mode {
            s.log_level = Some(level);
        }
        self.ok(req.id, json!({}))
    }

    fn on_notification(&mut self, n: Notification, now: Instant) -> ServerStep {
        match n.method.as_str() {
            m::NOTIFICATION_INITIALIZED => match &mut self.mode {
                Mode::Legacy(s) if !s.initialized => {
                    s.initialized = true;
                    ServerStep::Notice(ClientNotice::Initialized)
                }
                _ => ServerStep::Nothing,
            },
            progress::CANCELLED => {
                // Unknown, answered or never-cancellable (initialize) ids: ignored, as the
                // spec asks; the race with a response in flight is normal.
                let Ok(p) = n.params::<CancelledParams>() else {
                    return ServerStep::Nothing;
                };
                // The id stays taken until the handler ends (see `InFlight::cancelled`).
                if self.incoming.cancel(&p.request_id) {
                    ServerStep::Cancel {
                        id: p.request_id,
                        reason: p.reason,
                    }
                } else {
                    ServerStep::Nothing
                }
            }
            progress::PROGRESS => {
                let Ok(p) = n.params::<ProgressParams>() else {
                    return ServerStep::Nothing;
                };
                match self.outgoing.on_progress(&p.token, p.progress, now) {
                    Some(id) => ServerStep::Progress(ProgressUpdate {
                        id,
                        progress: p.progress,
                        total: p.total,
                        message: p.message,
                    }),
                    None => ServerStep::Nothing,
                }
            }
            m::NOTIFICATION_ROOTS_LIST_CHANGED if matches!(self.mode, Mode::Legacy(_)) => {
                ServerStep::Notice(ClientNotice::RootsListChanged)
            }
            _ => ServerStep::Notice(ClientNotice::Other(n)),
        }
    }

    /// The application's answer to request `id`, as the message to send; `None` when the
    /// request was cancelled (a cancelled request gets no response) or is unknown (answered
    /// already). 2026-07-28 results get `resultType: "complete"` when they lack one.
    pub fn respond(
        &mut self,
        id: &RequestId,
        outcome: Result<Box<RawValue>, ErrorObject>,
    ) -> Option<Message> {
        let entry = self.incoming.finish(id)?;
        Some(match outcome {
            Ok(result) => {
                let result = if entry.era == Era::Modern {
                    meta::ensure_result_type(result)
                } else {
                    result
                };
                Message::Response(Response {
                    id: id.clone(),
                    result,
                })
            }
            Err(e) => Message::error(Some(id.clone()), e),
        })
    }

    /// Ends request `id` for a result the caller sends itself
    /// ([`Outbound::send_result`](crate::service::Outbound::send_result)), as
    /// [`respond`](ServerEngine::respond) would for its message: the request's era (a
    /// 2026-07-28 result must carry `resultType`, which `respond` adds), or `None` when
    /// nothing may be sent (it was cancelled or answered already).
    pub fn answer(&mut self, id: &RequestId) -> Option<Era> {
        self.incoming.finish(id).map(|entry| entry.era)
    }

    /// [`ServerEngine::respond`] for a result held as a `Value`.
    pub fn respond_value(
        &mut self,
        id: &RequestId,
        outcome: Result<Value, ErrorObject>,
    ) -> Option<Message> {
        self.respond(id, super::raw_outcome(outcome))
    }

    /// The client stopped waiting for request `id` without a `notifications/cancelled` (a
    /// 2026-07-28 HTTP client closed the response stream, which counts as cancellation): forget
    /// it so its late answer, progress and logs are dropped. Returns whether it was in flight;
    /// when it was, stop its handler as for [`ServerStep::Cancel`].
    pub fn abandon(&mut self, id: &RequestId) -> bool {
        self.incoming.finish(id).is_some()
    }

    /// Starts a request to the client (`sampling/createMessage`, `elicitation/create`,
    /// `roots/list`, `ping`, ...), made on behalf of the client request `related_to` if any.
    /// With `timeout.reset_on_progress` the request carries a progress token, since only then
    /// does the client's progress matter.
    ///
    /// # Errors
    /// [`Refused`] when the protocol forbids the request: no legacy session yet (or
    /// `notifications/initialized` not received), the 2026-07-28 era (which has no
    /// server-to-client requests), a capability the client did not declare, a revision that
    /// predates the method, or params that are not a JSON object.
    pub fn request<P: Serialize + ?Sized>(
        &mut self,
        method: &str,
        params: &P,
        related_to: Option<RequestId>,
        now: Instant,
        timeout: Timeout,
    ) -> Result<(RequestId, Message), Refused> {
        let mut params = meta::params_object(params).map_err(Refused::InvalidParams)?;
        let session = match &self.mode {
            Mode::Legacy(s) => s,
            Mode::Fresh => return Err(Refused::NotReady("the client has not initialized")),
            Mode::Modern => {
                return Err(Refused::WrongEra {
                    method: method.to_owned(),
                    era: Era::Modern,
                });
            }
        };
        if !session.initialized && method != m::PING {
            return Err(Refused::NotReady(
                "the client has not sent notifications/initialized",
            ));
        }
        gates::check_client_capability(
            method,
            &session.client_capabilities,
            session.version,
            gates::RequestShape::of_params(&params),
        )?;
        // Fitted to the client's revision: what it cannot express is left out or rewritten
        // (a form elicitation's `mode` before 2025-11-25, say), or the request is refused
        // here rather than sent in a shape the client's schema does not have.
        shape_request(method, &mut params, session.version)?;
        let id = self.outgoing.allocate_id();
        let token = if timeout.reset_on_progress {
            let t = self.outgoing.allocate_token();
            meta::set_meta(&mut params, "progressToken", t.to_value());
            Some(t)
        } else {
            None
        };
        let msg = Request::new(id.clone(), method, &params)
            .map_err(|e| Refused::InvalidParams(e.to_string()))?;
        self.outgoing
            .insert(id.clone(), method, related_to, token, now, timeout);
        Ok((id, msg.into()))
    }

    /// Gives up on one of the server's requests: forgets it and returns the
    /// `notifications/cancelled` to send; `None` when it is not pending.
    pub fn cancel(&mut self, id: &RequestId, reason: Option<&str>) -> Option<Message> {
        self.outgoing.remove(id)?;
        Some(progress::cancelled_message(id.clone(), reason))
    }

    /// Removes and returns the server's requests whose deadline passed.
    pub fn poll(&mut self, now: Instant) -> Vec<Expired> {
        self.outgoing
            .expire(now)
            .into_iter()
            .map(|(id, e)| Expired {
                cancel: progress::cancelled_message(id.clone(), Some("timed out")),
                id,
                method: e.method,
                related_to: e.related_to,
            })
            .collect()
    }

    /// When [`ServerEngine::poll`] next has something to do.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.outgoing.next_deadline()
    }

    /// A progress notification for client request `id`; `None` when the request did not ask
    /// for progress, is no longer in flight, or `progress` does not exceed the last value sent
    /// (the spec requires it to increase).
    pub fn progress(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Option<Message> {
        let token = self.incoming.advance_progress(id, progress)?;
        // 2024-11-05 progress notifications have no `message`.
        let old = matches!(&self.mode, Mode::Legacy(s) if s.version < ProtocolVersion::V2025_03_26);
        let message = message.filter(|_| !old);
        Some(progress::progress_message(token, progress, total, message))
    }

    /// A log message, or `None` when it must not be sent: the server did not advertise
    /// `logging`, or the level is below what the client asked for (legacy: the
    /// `logging/setLevel` level, all levels until set; modern: the `_meta` logLevel of the
    /// request `related_to`, and nothing without one).
    pub fn log(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: Value,
        related_to: Option<&RequestId>,
    ) -> Option<Message> {
        if !has_capability(&self.config.capabilities, &["logging"]) {
            return None;
        }
        let related = related_to.and_then(|id| self.incoming.get(id));
        if related.is_some_and(|r| r.cancelled) {
            // Nothing more goes out for a cancelled request.
            return None;
        }
        let threshold = match (&self.mode, related) {
            (_, Some(r)) if r.era == Era::Modern => r.log_level?,
            (Mode::Legacy(s), _) => s.log_level.unwrap_or(LoggingLevel::Debug),
            _ => return None,
        };
        (level >= threshold).then(|| progress::log_message(level, logger, data))
    }

    /// A `list_changed` notification, or `None` when the server did not advertise
    /// `listChanged` for that list. `subscription` is the id of the 2026-07-28
    /// `subscriptions/listen` request the notification travels on.
    pub fn list_changed(
        &self,
        kind: ListKind,
        subscription: Option<&RequestId>,
    ) -> Option<Message> {
        if !has_capability(
            &self.config.capabilities,
            &[kind.capability(), "listChanged"],
        ) {
            return None;
        }
        let params = progress::with_subscription(serde_json::Map::new(), subscription);
        Some(progress::plain_notification(kind.method(), params))
    }

    /// A `notifications/resources/updated` for `uri`, or `None` when the server did not
    /// advertise `resources.subscribe` (legacy) and this is not for a listen stream (modern).
    pub fn resource_updated(&self, uri: &str, subscription: Option<&RequestId>) -> Option<Message> {
        let allowed = subscription.is_some()
            || has_capability(&self.config.capabilities, &["resources", "subscribe"]);
        if !allowed {
            return None;
        }
        let mut params = serde_json::Map::new();
        params.insert("uri".to_owned(), Value::from(uri));
        let params = progress::with_subscription(params, subscription);
        Some(progress::plain_notification(
            progress::RESOURCE_UPDATED,
            params,
        ))
    }
}

fn missing_envelope() -> ErrorObject {
    ErrorObject::invalid_params(format!(
        "2026-07-28 requests carry _meta {PROTOCOL_VERSION_KEY} and {CLIENT_CAPABILITIES_KEY}"
    ))
}

fn value_response(id: RequestId, result: Value) -> Message {
    match Response::new(id.clone(), &result) {
        Ok(r) => r.into(),
        Err(e) => Message::error(Some(id), ErrorObject::internal(e)),
    }
}

/// [`shape::request_params`](crate::types::shape::request_params) for a request to a legacy
/// client of revision `version`, its refusal as the engine words it.
fn shape_request(
    method: &str,
    params: &mut serde_json::Map<String, Value>,
    version: ProtocolVersion,
) -> Result<(), Refused> {
    use crate::types::shape::{ShapeError, server_request_params};
    server_request_params(method, params, version).map_err(|e| match e {
        ShapeError::MethodNotInRevision { method, version } => {
            Refused::UnsupportedByVersion { method, version }
        }
        e @ ShapeError::Unrepresentable { .. } => Refused::InvalidParams(e.to_string()),
    })
}
