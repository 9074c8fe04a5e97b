//! The client role: the handshake of either era, the `_meta` envelope on every 2026-07-28
//! request, gates on the server's capabilities, and the server's requests to us (legacy).
//!
//! The client chooses the era: `initialize_request` opens a legacy session, `discover_request`
//! (or `assume_modern`, which skips the probe) makes every later request carry the 2026-07-28
//! envelope. A failed discovery says whether falling back to `initialize` makes sense
//! ([`HandshakeError::should_fall_back`]), which is how a dual-era client meets an old server.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId, Response};
use crate::types::methods as m;
use crate::version::{Era, ProtocolVersion, VersionSet};

use super::client_step::{ClientStep, HandshakeError, PeerRequest, Ready};
use super::gates::{self, RequestShape};
use super::meta::{
    self, CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, LoggingLevel,
    PROTOCOL_VERSION_KEY, SERVER_INFO_KEY, has_capability,
};
use super::pending::{Expired, InFlight, IncomingTable, OutgoingTable, Timeout};
use super::progress::{self, CancelledParams, ProgressParams, ProgressUpdate};
use super::{Answer, Outcome, Refused};

/// What a client is and can do; fixed for the life of the engine.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientConfig {
    /// The revisions this client speaks.
    pub(crate) versions: VersionSet,
    /// The client's `Implementation` object (`name`, `version`, ...).
    pub(crate) client_info: Value,
    /// The `ClientCapabilities` object: sent in `initialize` (legacy) or on every request
    /// (modern), and used to refuse server requests we did not declare.
    pub(crate) capabilities: Value,
}

impl ClientConfig {
    /// A builder starting from the defaults, with the settings that have none.
    pub fn builder(client_info: Value) -> ClientConfigBuilder {
        ClientConfigBuilder {
            config: ClientConfig {
                versions: VersionSet::all(),
                client_info,
                capabilities: Value::Object(serde_json::Map::new()),
            },
        }
    }

    /// The revisions this client speaks.
    pub fn versions(&self) -> &VersionSet {
        &self.versions
    }

    /// The client's `Implementation` object (`name`, `version`, ...).
    pub fn client_info(&self) -> &Value {
        &self.client_info
    }

    /// The `ClientCapabilities` object: sent in `initialize` (legacy) or on every request
    /// (modern), and used to refuse server requests we did not declare.
    pub fn capabilities(&self) -> &Value {
        &self.capabilities
    }
}

/// Builds a [`ClientConfig`]: one method per setting, named after it, then
/// [`build`](ClientConfigBuilder::build).
#[derive(Debug, Clone)]
#[must_use]
pub struct ClientConfigBuilder {
    config: ClientConfig,
}

impl ClientConfigBuilder {
    /// The revisions this client speaks.
    pub fn versions(mut self, v: VersionSet) -> Self {
        self.config.versions = v;
        self
    }

    /// The `ClientCapabilities` object: sent in `initialize` (legacy) or on every request
    /// (modern), and used to refuse server requests we did not declare.
    pub fn capabilities(mut self, v: Value) -> Self {
        self.config.capabilities = v;
        self
    }

    /// The finished [`ClientConfig`].
    pub fn build(self) -> ClientConfig {
        self.config
    }
}

#[derive(Debug)]
struct Session {
    era: Era,
    version: ProtocolVersion,
    /// `None` when the client went modern without discovery: nothing is gated then.
    server_capabilities: Option<Value>,
    server_info: Option<Value>,
}

#[derive(Debug)]
enum Mode {
    Fresh,
    Initializing(RequestId),
    Discovering(RequestId),
    Ready(Session),
}

/// The client side of one connection.
#[derive(Debug)]
pub struct ClientEngine {
    config: Arc<ClientConfig>,
    mode: Mode,
    incoming: IncomingTable,
    outgoing: OutgoingTable,
    handshake_timeout: Timeout,
    log_level: Option<LoggingLevel>,
}

#[derive(Deserialize)]
struct InitializeResult {
    #[serde(rename = "protocolVersion")]
    protocol_version: String,
    #[serde(default)]
    capabilities: Option<Value>,
    #[serde(rename = "serverInfo", default)]
    server_info: Option<Value>,
    #[serde(default)]
    instructions: Option<String>,
}

#[derive(Deserialize)]
struct DiscoverResult {
    #[serde(rename = "supportedVersions")]
    supported_versions: Vec<String>,
    #[serde(default)]
    capabilities: Option<Value>,
    #[serde(default)]
    instructions: Option<String>,
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

impl ClientEngine {
    /// An engine for a new connection.
    pub fn new(config: ClientConfig) -> Self {
        ClientEngine {
            config: Arc::new(config),
            mode: Mode::Fresh,
            incoming: IncomingTable::default(),
            outgoing: OutgoingTable::default(),
            handshake_timeout: Timeout::fixed(Duration::from_secs(30)),
            log_level: None,
        }
    }

    /// Sets how long `initialize` and `server/discover` may take (30 s by default).
    pub fn set_handshake_timeout(&mut self, timeout: Timeout) {
        self.handshake_timeout = timeout;
    }

    /// 2026-07-28: the log level every later request asks for in its `_meta` (`None`, the
    /// default, asks the server for no log messages at all).
    pub fn set_log_level(&mut self, level: Option<LoggingLevel>) {
        self.log_level = level;
    }

    /// The config.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The era, once the handshake is done.
    pub fn era(&self) -> Option<Era> {
        self.session().map(|s| s.era)
    }

    /// The revision in use, once the handshake is done.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.session().map(|s| s.version)
    }

    /// The server's capabilities, when known.
    pub fn server_capabilities(&self) -> Option<&Value> {
        self.session().and_then(|s| s.server_capabilities.as_ref())
    }

    /// The server's `Implementation`, when known.
    pub fn server_info(&self) -> Option<&Value> {
        self.session().and_then(|s| s.server_info.as_ref())
    }

    fn session(&self) -> Option<&Session> {
        match &self.mode {
            Mode::Ready(s) => Some(s),
            _ => None,
        }
    }

    fn check_can_handshake(&self, era: Era) -> Result<ProtocolVersion, Refused> {
        if !matches!(self.mode, Mode::Fresh) {
            return Err(Refused::NotReady(
                "a handshake is under way or already done",
            ));
        }
        self.config.versions.latest(era).ok_or(Refused::WrongEra {
            method: match era {
                Era::Legacy => m::INITIALIZE.to_owned(),
                Era::Modern => m::SERVER_DISCOVER.to_owned(),
            },
            era,
        })
    }

    /// Starts the legacy handshake: the `initialize` request to send, proposing our newest
    /// legacy revision.
    ///
    /// # Errors
    /// [`Refused`] when a handshake is under way or done, or the client speaks no legacy
    /// revision.
    pub fn initialize_request(&mut self, now: Instant) -> Result<Message, Refused> {
        let version = self.check_can_handshake(Era::Legacy)?;
        let params = json!({
            "protocolVersion": version.as_str(),
            "capabilities": self.config.capabilities,
            "clientInfo": self.config.client_info,
        });
        let id = self.outgoing.allocate_id();
        let msg = Request::new(id.clone(), m::INITIALIZE, &params)
            .map_err(|e| Refused::InvalidParams(e.to_string()))?;
        self.outgoing.insert(
            id.clone(),
            m::INITIALIZE,
            None,
            None,
            now,
            self.handshake_timeout,
        );
        self.mode = Mode::Initializing(id);
        Ok(msg.into())
    }

    /// Starts the 2026-07-28 handshake: a `server/discover` request carrying our newest modern
    /// revision. Its answer sets the revision and the server's capabilities.
    ///
    /// # Errors
    /// [`Refused`] when a handshake is under way or done, or the client speaks no modern
    /// revision.
    pub fn discover_request(&mut self, now: Instant) -> Result<Message, Refused> {
        let version = self.check_can_handshake(Era::Modern)?;
        self.discover_at(now, version)
    }

    /// A `server/discover` request proposing `version`: the retry after the server refused
    /// our first choice with -32022 and listed what it supports (see
    /// [`ClientEngine::retry_version`]). The 2026-07-28 spec has the client negotiate this
    /// way instead of falling back to `initialize`, which a modern-only server does not
    /// answer.
    ///
    /// # Errors
    /// [`Refused`] when a handshake is under way or done, or `version` is not a modern
    /// revision this client speaks.
    pub fn discover_request_with(
        &mut self,
        now: Instant,
        version: ProtocolVersion,
    ) -> Result<Message, Refused> {
        self.check_can_handshake(Era::Modern)?;
        if version.era() != Era::Modern || !self.config.versions.contains(version) {
            return Err(Refused::WrongEra {
                method: m::SERVER_DISCOVER.to_owned(),
                era: version.era(),
            });
        }
        self.discover_at(now, version)
    }

    /// After `server/discover` failed with `error`: the newest modern revision that the
    /// server listed as supported in its -32022 refusal and that this client speaks, to
    /// retry with. `None` for every other failure, or when nothing listed is in common
    /// (falling back to `initialize` is then the only way left).
    pub fn retry_version(&self, error: &HandshakeError) -> Option<ProtocolVersion> {
        self.config
            .versions
            .pick_from_discover(error.supported_versions())
    }

    fn discover_at(&mut self, now: Instant, version: ProtocolVersion) -> Result<Message, Refused> {
        let mut params = Map::new();
        self.envelope(&mut params, version);
        let id = self.outgoing.allocate_id();
        let msg = Request::new(id.clone(), m::SERVER_DISCOVER, &params)
            .map_err(|e| Refused::InvalidParams(e.to_string()))?;
        self.outgoing.insert(
            id.clone(),
            m::SERVER_DISCOVER,
            None,
            None,
            now,
            self.handshake_timeout,
        );
        self.mode = Mode::Discovering(id);
        Ok(msg.into())
    }

    /// Goes modern without `server/discover`, with our newest modern revision; the server's
    /// capabilities stay unknown, so requests are not gated on them.
    ///
    /// # Errors
    /// As [`ClientEngine::discover_request`].
    pub fn assume_modern(&mut self) -> Result<ProtocolVersion, Refused> {
        let version = self.check_can_handshake(Era::Modern)?;
        self.mode = Mode::Ready(Session {
            era: Era::Modern,
            version,
            server_capabilities: None,
            server_info: None,
        });
        Ok(version)
    }

    fn envelope(&self, params: &mut Map<String, Value>, version: ProtocolVersion) {
        meta::set_meta(params, PROTOCOL_VERSION_KEY, Value::from(version.as_str()));
        meta::set_meta(
            params,
            CLIENT_CAPABILITIES_KEY,
            self.config.capabilities.clone(),
        );
        meta::set_meta(params, CLIENT_INFO_KEY, self.config.client_info.clone());
        if let Some(level) = self.log_level {
            meta::set_meta(params, LOG_LEVEL_KEY, Value::from(level.as_str()));
        }
    }

    /// Starts a request to the server. In the 2026-07-28 era the `_meta` envelope
    /// (protocolVersion, clientCapabilities, clientInfo, logLevel) is added; with `progress` a
    /// fresh progress token is too.
    ///
    /// # Errors
    /// [`Refused`] before the handshake (only `ping` may go out then, legacy), for methods
    /// of the other era, for methods whose server capability was not advertised, and for params
    /// that are not a JSON object.
    pub fn request<P: Serialize + ?Sized>(
        &mut self,
        method: &str,
        params: &P,
        now: Instant,
        timeout: Timeout,
        progress: bool,
    ) -> Result<(RequestId, Message), Refused> {
        let mut params = meta::params_object(params).map_err(Refused::InvalidParams)?;
        if matches!(method, m::INITIALIZE | m::SERVER_DISCOVER) {
            return Err(Refused::NotReady(
                "handshake requests go through initialize_request or discover_request",
            ));
        }
        match &self.mode {
            Mode::Ready(s) => {
                if !gates::exists_in(method, s.era) {
                    return Err(Refused::WrongEra {
                        method: method.to_owned(),
                        era: s.era,
                    });
                }
                if let (Some(caps), Some(path)) = (
                    &s.server_capabilities,
                    gates::required_server_capability(method),
                ) {
                    if !has_capability(caps, path) {
                        return Err(Refused::MissingCapability {
                            method: method.to_owned(),
                            capability: path.join("."),
                        });
                    }
                }
                if s.era == Era::Modern {
                    self.envelope(&mut params, s.version);
                }
            }
            // The spec lets either side ping at any time of a legacy connection.
            _ if method == m::PING && self.config.versions.speaks(Era::Legacy) => {}
            _ => return Err(Refused::NotReady("the handshake is not done")),
        }
        let id = self.outgoing.allocate_id();
        let token = progress.then(|| {
            let t = self.outgoing.allocate_token();
            meta::set_meta(&mut params, "progressToken", t.to_value());
            t
        });
        let msg = Request::new(id.clone(), method, &params)
            .map_err(|e| Refused::InvalidParams(e.to_string()))?;
        self.outgoing
            .insert(id.clone(), method, None, token, now, timeout);
        Ok((id, msg.into()))
    }

    /// Takes one incoming message and says what to do about it.
    pub fn handle(&mut self, msg: Message, now: Instant) -> ClientStep {
        match msg {
            Message::Request(r) => self.on_request(r),
            Message::Notification(n) => self.on_notification(n, now),
            Message::Response(r) => {
                let Some(p) = self.outgoing.remove(&r.id) else {
                    return ClientStep::Nothing;
                };
                match &self.mode {
                    Mode::Initializing(h) if *h == r.id => self.on_initialize_result(&r),
                    Mode::Discovering(h) if *h == r.id => self.on_discover_result(&r),
                    _ => ClientStep::Answer(Answer {
                        id: r.id,
                        method: p.method,
                        related_to: None,
                        outcome: Outcome::from_result(r.result),
                    }),
                }
            }
            Message::Error(e) => {
                let Some((id, p)) =
                    e.id.and_then(|id| self.outgoing.remove(&id).map(|p| (id, p)))
                else {
                    return ClientStep::Nothing;
                };
                if matches!(&self.mode, Mode::Initializing(h) | Mode::Discovering(h) if *h == id) {
                    self.mode = Mode::Fresh;
                    return ClientStep::HandshakeFailed(HandshakeError::Rejected(e.error));
                }
                ClientStep::Answer(Answer {
                    id,
                    method: p.method,
                    related_to: None,
                    outcome: Outcome::Error(e.error),
                })
            }
        }
    }

    fn on_initialize_result(&mut self, r: &Response) -> ClientStep {
        self.mode = Mode::Fresh;
        let result: InitializeResult = match r.result() {
            Ok(x) => x,
            Err(e) => return ClientStep::HandshakeFailed(HandshakeError::Malformed(Arc::new(e))),
        };
        let version = match self
            .config
            .versions
            .accept_initialize_answer(&result.protocol_version)
        {
            Ok(v) => v,
            Err(_) => {
                return ClientStep::HandshakeFailed(HandshakeError::UnsupportedVersion {
                    answered: result.protocol_version,
                });
            }
        };
        let capabilities = result.capabilities.unwrap_or_else(|| json!({}));
        self.mode = Mode::Ready(Session {
            era: Era::Legacy,
            version,
            server_capabilities: Some(capabilities.clone()),
            server_info: result.server_info.clone(),
        });
        ClientStep::Ready(Ready {
            era: Era::Legacy,
            version,
            server_info: result.server_info,
            capabilities,
            instructions: result.instructions,
            send: Some(Notification::bare(m::NOTIFICATION_INITIALIZED).into()),
        })
    }

    fn on_discover_result(&mut self, r: &Response) -> ClientStep {
        self.mode = Mode::Fresh;
        let result: DiscoverResult = match r.result() {
            Ok(x) => x,
            Err(e) => return ClientStep::HandshakeFailed(HandshakeError::Malformed(Arc::new(e))),
        };
        let picked = self
            .config
            .versions
            .pick_from_discover(result.supported_versions.iter().map(String::as_str));
        let Some(version) = picked else {
            return ClientStep::HandshakeFailed(HandshakeError::NoCommonVersion {
                server_supports: result.supported_versions,
            });
        };
        let capabilities = result.capabilities.unwrap_or_else(|| json!({}));
        let server_info = result.meta.and_then(|mut m| m.remove(SERVER_INFO_KEY));
        self.mode = Mode::Ready(Session {
            era: Era::Modern,
            version,
            server_capabilities: Some(capabilities.clone()),
            server_info: server_info.clone(),
        });
        ClientStep::Ready(Ready {
            era: Era::Modern,
            version,
            server_info,
            capabilities,
            instructions: result.instructions,
            send: None,
        })
    }

    fn on_request(&mut self, req: Request) -> ClientStep {
        let reply = |e: ErrorObject| ClientStep::Reply(Message::error(Some(req.id.clone()), e));
        if self.incoming.contains(&req.id) {
            return reply(ErrorObject::invalid_request(format!(
                "request id {} is already in use by a request in flight",
                req.id
            )));
        }
        let (version, era) = match &self.mode {
            Mode::Ready(s) => (s.version, s.era),
            _ => (ProtocolVersion::LATEST_LEGACY, Era::Legacy),
        };
        if era == Era::Modern {
            return reply(ErrorObject::method_not_found(&req.method));
        }
        if req.method == m::PING {
            return ClientStep::Reply(
                Response::new(req.id.clone(), &json!({}))
                    .map(Message::from)
                    .unwrap_or_else(|e| {
                        Message::error(Some(req.id.clone()), ErrorObject::internal(e))
                    }),
            );
        }
        let shape = RequestShape::of_raw(req.params.as_deref());
        if gates::check_client_capability(&req.method, &self.config.capabilities, version, shape)
            .is_err()
        {
            return reply(ErrorObject::method_not_found(&req.method));
        }
        let progress_token = meta::read_request_meta(req.params.as_deref())
            .ok()
            .and_then(|m| m.progress_token);
        self.incoming.insert(
            req.id.clone(),
            InFlight {
                era,
                progress_token: progress_token.clone(),
                last_progress: None,
                log_level: None,
                cancelled: false,
            },
        );
        ClientStep::Dispatch(PeerRequest {
            id: req.id,
            method: req.method,
            params: req.params,
            progress_token,
        })
    }

    fn on_notification(&mut self, n: Notification, now: Instant) -> ClientStep {
        match n.method.as_str() {
            progress::CANCELLED => {
                let Ok(p) = n.params::<CancelledParams>() else {
                    return ClientStep::Nothing;
                };
                // The id stays taken until the handler ends (see `InFlight::cancelled`).
                if self.incoming.cancel(&p.request_id) {
                    return ClientStep::Cancel {
                        id: p.request_id,
                        reason: p.reason,
                    };
                }
                // A cancellation names a request of its sender's ("MUST correspond to the ID
                // of a request previously issued in the same direction"): one of ours only
                // where a server may end it, a 2026-07-28 `subscriptions/listen` stream. Ids
                // of both directions are small integers, so a late cancel of the server's own
                // request (answered already) often carries the id of a call of ours.
                let handshake = matches!(
                    &self.mode,
                    Mode::Initializing(h) | Mode::Discovering(h) if *h == p.request_id
                );
                match self.outgoing.remove(&p.request_id) {
                    Some(e) if !handshake && e.method == m::SUBSCRIPTIONS_LISTEN => {
                        ClientStep::EndedByServer {
                            id: p.request_id,
                            method: e.method,
                            reason: p.reason,
                        }
                    }
                    Some(e) => {
                        // Put it back: not the server's to end.
                        self.outgoing.restore(p.request_id, e);
                        ClientStep::Nothing
                    }
                    None => ClientStep::Nothing,
                }
            }
            progress::PROGRESS => {
                let Ok(p) = n.params::<ProgressParams>() else {
                    return ClientStep::Nothing;
                };
                match self.outgoing.on_progress(&p.token, p.progress, now) {
                    Some(id) => ClientStep::Progress(ProgressUpdate {
                        id,
                        progress: p.progress,
                        total: p.total,
                        message: p.message,
                    }),
                    None => ClientStep::Nothing,
                }
            }
            _ => ClientStep::Notification(n),
        }
    }

    /// The application's answer to server request `id`; `None` when the server cancelled it or
    /// it is unknown.
    pub fn respond(
        &mut self,
        id: &RequestId,
        outcome: Result<Box<RawValue>, ErrorObject>,
    ) -> Option<Message> {
        self.incoming.finish(id)?;
        Some(match outcome {
            Ok(result) => Message::Response(Response {
                id: id.clone(),
                result,
            }),
            Err(e) => Message::error(Some(id.clone()), e),
        })
    }

    /// [`ClientEngine::respond`] for a result held as a `Value`.
    pub fn respond_value(
        &mut self,
        id: &RequestId,
        outcome: Result<Value, ErrorObject>,
    ) -> Option<Message> {
        self.respond(id, super::raw_outcome(outcome))
    }

    /// A progress notification for server request `id` (same rules as the server's).
    pub fn progress(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Option<Message> {
        let token = self.incoming.advance_progress(id, progress)?;
        Some(progress::progress_message(token, progress, total, message))
    }

    /// Gives up on one of our requests: forgets it and returns the `notifications/cancelled`
    /// to send. `None` when it is not pending, or when it is `initialize`, which the spec says
    /// must not be cancelled. Cancelling `server/discover` returns the engine to its start.
    pub fn cancel(&mut self, id: &RequestId, reason: Option<&str>) -> Option<Message> {
        match &self.mode {
            Mode::Initializing(h) if h == id => return None,
            Mode::Discovering(h) if h == id => self.mode = Mode::Fresh,
            _ => {}
        }
        self.outgoing.remove(id)?;
        Some(progress::cancelled_message(id.clone(), reason))
    }

    /// Removes and returns our requests whose deadline passed. A timed-out handshake returns
    /// the engine to its start, so the caller may retry or fall back.
    pub fn poll(&mut self, now: Instant) -> Vec<Expired> {
        let expired = self.outgoing.expire(now);
        expired
            .into_iter()
            .map(|(id, e)| {
                if matches!(&self.mode, Mode::Initializing(h) | Mode::Discovering(h) if *h == id) {
                    self.mode = Mode::Fresh;
                }
                Expired {
                    cancel: progress::cancelled_message(id.clone(), Some("timed out")),
                    id,
                    method: e.method,
                    related_to: None,
                }
            })
            .collect()
    }

    /// When [`ClientEngine::poll`] next has something to do.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.outgoing.next_deadline()
    }

    /// When one request of ours times out now (progress may have moved it), `None` once it
    /// was answered, cancelled or expired. A caller that waits on the answer can keep its own
    /// deadline with this, whatever holds up the thread that runs [`ClientEngine::poll`].
    pub fn deadline_of(&self, id: &RequestId) -> Option<Instant> {
        self.outgoing.deadline_of(id)
    }

    /// A `notifications/roots/list_changed`, or `None` outside a legacy session or when we did
    /// not declare `roots.listChanged`.
    pub fn roots_list_changed(&self) -> Option<Message> {
        let legacy = self.era() == Some(Era::Legacy);
        (legacy && has_capability(&self.config.capabilities, &["roots", "listChanged"]))
            .then(|| Notification::bare(m::NOTIFICATION_ROOTS_LIST_CHANGED).into())
    }
}
