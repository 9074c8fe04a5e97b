//! Configuring a client and opening a connection: the handshake of the chosen era, done on the
//! caller's thread before the reader thread starts.

use mcp_core::types::methods::{INITIALIZE, SERVER_DISCOVER};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use mcp_core::engine::{
    ClientConfig, ClientEngine, ClientStep, HandshakeError, Ready, Refused, Timeout,
};
use mcp_core::jsonrpc::{ErrorObject, Message, Notification};
use mcp_core::types::{CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams};
use mcp_core::types::{ElicitResult, Root};
use mcp_core::version::{Era, ProtocolVersion, VersionSet};
use mcp_stdio::ChildBuilder;
use serde_json::{Value, json};

use crate::client::{Client, ServerSummary};
use crate::connection::{NotificationCallback, Shared, spawn_reader};
use crate::era_cache::EraCache;
use crate::error::{Closed, Error, Unexpected};
use crate::handlers::Handlers;
use crate::list_limits::ListLimits;
use crate::transport::{StdioTransport, Transport};
use mcp_core::transport::Incoming;

/// Which protocol era (or exact revision) to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Revision {
    /// Dual-era, as the 2026-07-28 spec describes: probe with `server/discover` (retried once
    /// with a revision the server lists when it refuses ours with -32022); when the server is
    /// not a modern one (any error that is not a 2026-07-28 error, a -32022 that lists no
    /// modern revision in common, or no answer within the handshake timeout), fall back to
    /// `initialize`.
    #[default]
    Auto,
    /// Only the legacy era (`initialize`, 2024-11-05 .. 2025-11-25, newest first).
    Legacy,
    /// Only the 2026-07-28 era (`server/discover`, per-request `_meta`).
    Modern,
    /// Exactly this revision.
    Exact(ProtocolVersion),
}

impl Revision {
    fn versions(self) -> VersionSet {
        match self {
            Revision::Auto => VersionSet::all(),
            Revision::Legacy => VersionSet::legacy_only(),
            Revision::Modern => VersionSet::modern_only(),
            Revision::Exact(v) => VersionSet::only([v]),
        }
    }
}

/// Builds a [`Client`]: who it is, what it can answer, which era it speaks.
///
/// ```no_run
/// use mcp_client::{Client, Revision};
/// use mcp_core::types::{ElicitAction, ElicitResult};
///
/// # fn main() -> Result<(), mcp_client::Error> {
/// let client = Client::builder()
///     .client_info("my-host", "1.0.0")
///     .revision(Revision::Auto)
///     .elicitation(|_request| Ok(ElicitResult::action(ElicitAction::Decline)))
///     .spawn(mcp_stdio::ChildBuilder::new("my-mcp-server"))?;
/// # let _ = client;
/// # Ok(())
/// # }
/// ```
pub struct ClientBuilder {
    client_info: Value,
    revision: Revision,
    handlers: Handlers,
    notify: Option<NotificationCallback>,
    timeout: Timeout,
    handshake_timeout: Duration,
    send_timeout: Duration,
    era_cache: Option<EraCache>,
    list_limits: ListLimits,
    ping: Option<(Duration, u32)>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            client_info: json!({"name": "mcp-client", "version": env!("CARGO_PKG_VERSION")}),
            revision: Revision::Auto,
            // On by default: the extension is server-directed, the client only says it can
            // follow a task, and `call_tool` follows one to its result, so callers see no
            // difference except that tools which run only as tasks work instead of failing
            // with -32021.
            handlers: Handlers {
                tasks: true,
                ..Handlers::default()
            },
            notify: None,
            timeout: Timeout::default(),
            handshake_timeout: Duration::from_secs(30),
            send_timeout: Duration::from_secs(30),
            era_cache: None,
            list_limits: ListLimits::default(),
            ping: None,
        }
    }
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("client_info", &self.client_info)
            .field("revision", &self.revision)
            .field("capabilities", &self.handlers.capabilities())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A builder with the defaults: dual-era, no handlers, 60 s timeouts extended by progress.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Starts `server` as a child process and connects with the default settings.
    ///
    /// # Errors
    /// As [`ClientBuilder::spawn`].
    pub fn spawn(server: ChildBuilder) -> Result<Client, Error> {
        Client::builder().spawn(server)
    }

    /// Connects over `transport` with the default settings.
    ///
    /// # Errors
    /// As [`ClientBuilder::connect`].
    pub fn connect<T: Transport>(transport: T) -> Result<Client, Error> {
        Client::builder().connect(transport)
    }
}

impl ClientBuilder {
    /// The client's name and version (`clientInfo`).
    pub fn client_info(mut self, name: &str, version: &str) -> Self {
        self.client_info = json!({"name": name, "version": version});
        self
    }

    /// The whole `Implementation` object (`title`, `description`, `icons`...).
    pub fn client_implementation(mut self, info: Value) -> Self {
        self.client_info = info;
        self
    }

    /// Which era or revision to speak ([`Revision::Auto`] by default).
    pub fn revision(mut self, revision: Revision) -> Self {
        self.revision = revision;
        self
    }

    /// Remembers in `cache` which era each server speaks, and with [`Revision::Auto`] tries
    /// the remembered one first (a legacy server then gets `initialize` at once, without the
    /// `server/discover` probe).
    pub fn era_cache(mut self, cache: EraCache) -> Self {
        self.era_cache = Some(cache);
        self
    }

    /// Declares `sampling` and answers the server's `sampling/createMessage` with `f`.
    pub fn sampling(
        mut self,
        f: impl Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.handlers.sampling = Some(Arc::new(f));
        self
    }

    /// Declares form-mode `elicitation` and answers `elicitation/create` with `f`.
    pub fn elicitation(
        mut self,
        f: impl Fn(ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.handlers.elicitation = Some(Arc::new(f));
        self.handlers.elicitation_url = false;
        self
    }

    /// Declares both elicitation modes (form and URL); `f` gets either kind of request.
    pub fn elicitation_with_url(
        mut self,
        f: impl Fn(ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.handlers.elicitation = Some(Arc::new(f));
        self.handlers.elicitation_url = true;
        self
    }

    /// Declares `roots` and answers `roots/list` with what `f` returns.
    pub fn roots(mut self, f: impl Fn() -> Vec<Root> + Send + Sync + 'static) -> Self {
        self.handlers.roots = Some(Arc::new(f));
        self
    }

    /// Whether to declare the tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28)
    /// in every request's capabilities; on by default. A server may then answer a
    /// `tools/call` with a task handle instead of the result: [`Client::call_tool`] follows
    /// the task to its end (polling `tasks/get`, answering its input requests through the
    /// same handlers, cancelling it with the call), so nothing changes for the caller except
    /// that a tool which runs only as a task works instead of failing with -32021. Turn it
    /// off to keep every answer in the request that asked for it (a task's result is polled,
    /// so it arrives up to one poll interval later than a direct answer would).
    pub fn tasks(mut self, declare: bool) -> Self {
        self.handlers.tasks = declare;
        self
    }

    /// Whether to declare MCP Apps (`io.modelcontextprotocol/ui`, with `mimeTypes`
    /// `["text/html;profile=mcp-app"]`) in every revision; off by default. Declare it only in
    /// a host that renders views ([`crate::apps`]): servers may then link tools to `ui://`
    /// views, or offer tools they keep from text-only clients.
    pub fn apps(mut self, declare: bool) -> Self {
        self.handlers.apps = declare;
        self
    }

    /// Receives server notifications that belong to no call and no listen stream: log
    /// messages, list changes and resource updates (legacy era), and so on. Runs on the
    /// reader thread: keep it short.
    pub fn on_notification(mut self, f: impl Fn(&Notification) + Send + Sync + 'static) -> Self {
        self.notify = Some(Arc::new(f));
        self
    }

    /// The timeout of every request that sets none ([`Timeout::default`]: 60 s, extended by
    /// progress up to 10 min). A plain `Duration` is a fixed timeout.
    pub fn timeout(mut self, timeout: impl Into<Timeout>) -> Self {
        self.timeout = timeout.into();
        self
    }

    /// The most pages a listing (`list_tools` and the like) follows before it ends with
    /// [`Unexpected::ListTooLong`](crate::Unexpected::ListTooLong) (1,000 by default): a server
    /// answering every page with a new `nextCursor` cannot keep the caller iterating forever.
    pub fn max_list_pages(mut self, pages: usize) -> Self {
        self.list_limits.pages = pages.max(1);
        self
    }

    /// The most items a listing yields before it ends with
    /// [`Unexpected::ListTooLong`](crate::Unexpected::ListTooLong) (10,000 by default), so that
    /// collecting one stays bounded in memory.
    pub fn max_list_items(mut self, items: usize) -> Self {
        self.list_limits.items = items;
        self
    }

    /// The most JSON a listing's pages may add up to, in bytes (64 MiB by default), before it
    /// ends with [`Unexpected::ListTooLong`](crate::Unexpected::ListTooLong): a server whose
    /// every page is as large as a message may be cannot grow a caller that collects the
    /// list past this (a page past the bound is not yielded).
    pub fn max_list_bytes(mut self, bytes: usize) -> Self {
        self.list_limits.bytes = bytes;
        self
    }

    /// How long a listing may take as a whole, its page requests included (2 minutes by
    /// default); past it the listing ends with
    /// [`Unexpected::ListTooLong`](crate::Unexpected::ListTooLong). Each page's own timeout is
    /// the client's, cut short by this deadline.
    pub fn list_timeout(mut self, timeout: Duration) -> Self {
        self.list_limits.deadline = timeout;
        self
    }

    /// Pings the server every `interval` (each ping waits that long for its answer); after
    /// `misses` unanswered pings in a row the connection closes with
    /// [`Closed::NoPingAnswer`](crate::Closed::NoPingAnswer) and every waiting call fails at
    /// once with it. Off by default: a call already ends at its own timeout, and an idle
    /// connection has nothing to lose; turn it on for long-lived connections to servers
    /// that may hang without exiting (a stdio child stuck in a loop), where it turns "every
    /// call times out, one by one" into one clear error.
    pub fn ping_every(mut self, interval: Duration, misses: u32) -> Self {
        self.ping = Some((interval, misses));
        self
    }

    /// How long the handshake may take (30 s by default), all of it: in [`Revision::Auto`]
    /// the `server/discover` probe of a server that never answers it takes at most half, and
    /// the `initialize` after it the rest. A failed handshake then closes the transport, which
    /// for a child process is its shutdown on top of this: up to its
    /// [`close_grace`](mcp_stdio::ChildBuilder::close_grace) to exit after its stdin closed,
    /// then up to its [`term_grace`](mcp_stdio::ChildBuilder::term_grace) after SIGTERM.
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// The `ClientCapabilities` the registered handlers add up to. With
    /// [`Revision::Exact`] of an older revision, the handshake declares only the part that
    /// revision has (no elicitation before 2025-06-18, no URL mode before 2025-11-25).
    pub fn capabilities(&self) -> Value {
        Value::Object(self.handlers.capabilities())
    }

    /// Starts `server` as a child process and connects to it over stdio.
    ///
    /// # Errors
    /// As [`ClientBuilder::connect`], plus [`Error::Io`] when the program cannot be started.
    pub fn spawn(self, server: ChildBuilder) -> Result<Client, Error> {
        self.connect(StdioTransport::spawn(server)?)
    }

    /// Performs the handshake over `transport` and starts the client's reader thread.
    ///
    /// # Errors
    /// [`Error::Handshake`] when the server refuses or the eras do not meet, [`Error::Closed`]
    /// when the server goes away first, [`Error::Timeout`] when it does not answer. The
    /// transport is closed in every case.
    pub fn connect<T: Transport>(self, mut transport: T) -> Result<Client, Error> {
        let out = transport.sender();
        let incoming = transport.receiver();
        // An exact older revision declares only what that revision has; every other choice
        // proposes the newest revision of its era, which has everything.
        let capabilities = match self.revision {
            Revision::Exact(v) => Value::Object(self.handlers.capabilities_for(v)),
            _ => self.capabilities(),
        };
        let mut engine = ClientEngine::new(
            ClientConfig::builder(self.client_info.clone())
                .versions(self.revision.versions())
                .capabilities(capabilities)
                .build(),
        );
        engine.set_handshake_timeout(Timeout::fixed(self.handshake_timeout));
        let mut hs = Handshake {
            engine: &mut engine,
            out: &out,
            incoming: &incoming,
            send_timeout: self.send_timeout,
            deadline: Instant::now() + self.handshake_timeout,
            limit: self.handshake_timeout,
        };
        let cache = self
            .era_cache
            .as_ref()
            .and_then(|c| Some((c, transport.server_key()?)));
        let remembered = match (self.revision, &cache) {
            (Revision::Auto, Some((c, key))) => c.get(key),
            _ => None,
        };
        let ready = match hs.run(self.revision, remembered) {
            Ok(r) => {
                if let Some((c, key)) = cache {
                    c.insert(key, r.era);
                }
                r
            }
            Err(e) => {
                if let (Some((c, key)), Some(_)) = (cache, remembered) {
                    c.remove(&key);
                }
                let e = match e {
                    // A server that does not read is alive: no end to report.
                    Error::Closed(Closed::NotReading) => e,
                    Error::Closed(_) => {
                        Error::Closed(transport.end_reason().unwrap_or(Closed::Ended))
                    }
                    e => e,
                };
                drop(out);
                if let Err(close) = transport.close() {
                    log::debug!(target: "mcp_client", "closing after a failed handshake: {close}");
                }
                return Err(e);
            }
        };
        transport.handshake_done(ready.era, ready.version);
        let summary = ServerSummary {
            server_key: transport.server_key(),
            era: ready.era,
            version: ready.version,
            server_info: ready.server_info,
            capabilities: ready.capabilities,
            instructions: ready.instructions,
        };
        let (shared, parts) = Shared::new(
            engine,
            out,
            incoming,
            Box::new(transport),
            self.handlers,
            self.notify,
            self.send_timeout,
        );
        let reader = match spawn_reader(Arc::clone(&shared), parts) {
            Ok(r) => r,
            Err(e) => {
                shared.shut(Closed::ThreadsNotStarted);
                if let Some(mut c) = shared.control.lock().ok().and_then(|mut c| c.take()) {
                    let _ = c.close();
                }
                return Err(e);
            }
        };
        let mut client = Client::new(shared, reader, summary, self.timeout, self.list_limits);
        if let Some((interval, misses)) = self.ping {
            // Dropping the client closes the connection and ends its threads.
            client.start_pinger(interval, misses)?;
        }
        Ok(client)
    }
}

/// The handshake, on the caller's thread: nothing else is in flight yet.
struct Handshake<'a, I> {
    engine: &'a mut ClientEngine,
    out: &'a Sender<Message>,
    incoming: &'a Receiver<I>,
    send_timeout: Duration,
    /// The whole handshake ends by then, the `server/discover` probe and an `initialize`
    /// after it together (`limit` after the start).
    deadline: Instant,
    limit: Duration,
}

impl<I: Into<Incoming>> Handshake<'_, I> {
    fn run(&mut self, revision: Revision, remembered: Option<Era>) -> Result<Ready, Error> {
        let era = match revision {
            // Remembered legacy: straight to `initialize`. Remembered modern: the usual
            // order, which starts with the modern probe anyway.
            Revision::Auto if remembered == Some(Era::Legacy) => Some(Era::Legacy),
            Revision::Auto => None,
            Revision::Legacy => Some(Era::Legacy),
            Revision::Modern => Some(Era::Modern),
            Revision::Exact(v) => Some(v.era()),
        };
        match era {
            Some(Era::Legacy) => self.legacy(),
            Some(Era::Modern) => self.modern().map_err(HandshakeFailure::into_error),
            None => match self.probe() {
                Ok(r) => Ok(r),
                Err(HandshakeFailure::Protocol(e)) if e.should_fall_back() => {
                    log::debug!(target: "mcp_client", "{SERVER_DISCOVER} failed ({e}); trying {INITIALIZE}");
                    self.legacy()
                }
                Err(HandshakeFailure::Other(Error::Timeout { .. })) => {
                    log::debug!(target: "mcp_client", "no answer to {SERVER_DISCOVER}; trying {INITIALIZE}");
                    self.legacy()
                }
                // Not a modern server's answer: as for any other non-modern error.
                Err(HandshakeFailure::Malformed(e)) => {
                    log::debug!(target: "mcp_client", "{SERVER_DISCOVER} got no message ({e}); trying {INITIALIZE}");
                    self.legacy()
                }
                Err(e) => Err(e.into_error()),
            },
        }
    }

    /// [`Handshake::modern`] when `initialize` may follow: the probe of a server that never
    /// answers `server/discover` takes at most half of the handshake's time, so that the
    /// fallback has the other half and the whole stays within the handshake timeout.
    fn probe(&mut self) -> Result<Ready, HandshakeFailure> {
        let half = self.limit / 2;
        self.deadline -= half;
        let r = self.modern();
        self.deadline += half;
        r
    }

    /// What is left of the handshake's time (at least 1 ms: a request sent with none would
    /// expire before its answer could be read), for the engine's next request.
    fn budget(&mut self) {
        let left = self
            .deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        self.engine.set_handshake_timeout(Timeout::fixed(left));
    }

    /// `server/discover`, and once more with the revision the server named when it refused
    /// ours with -32022: the 2026-07-28 negotiation. A dual-era client that fell back to
    /// `initialize` here instead would lose a modern-only server, which answers no
    /// `initialize`. One retry only, so a server that refuses what it listed cannot keep
    /// the client looping.
    fn modern(&mut self) -> Result<Ready, HandshakeFailure> {
        self.budget();
        let msg = self
            .engine
            .discover_request(Instant::now())
            .map_err(|e| HandshakeFailure::Other(e.into()))?;
        match self.exchange(msg, SERVER_DISCOVER) {
            Err(HandshakeFailure::Protocol(e)) => {
                let Some(version) = self.engine.retry_version(&e) else {
                    return Err(HandshakeFailure::Protocol(e));
                };
                log::debug!(
                    target: "mcp_client",
                    "{SERVER_DISCOVER} refused ({e}); retrying with {}",
                    version.as_str()
                );
                self.budget();
                let msg = self
                    .engine
                    .discover_request_with(Instant::now(), version)
                    .map_err(|e| HandshakeFailure::Other(e.into()))?;
                self.exchange(msg, SERVER_DISCOVER)
            }
            other => other,
        }
    }

    fn legacy(&mut self) -> Result<Ready, Error> {
        self.budget();
        let msg = without_extensions(self.engine.initialize_request(Instant::now())?);
        let ready = self
            .exchange(msg, INITIALIZE)
            .map_err(HandshakeFailure::into_error)?;
        Ok(ready)
    }

    /// Sends, waiting for room no longer than the handshake may still take: a server that
    /// stops reading (while it floods us with pings, say) fails the handshake at its
    /// deadline, not after the longer send timeout of a connected client.
    fn send(&self, msg: Message) -> Result<(), Error> {
        let wait = match self.engine.next_deadline() {
            Some(d) => d
                .saturating_duration_since(Instant::now())
                .min(self.send_timeout),
            None => self.send_timeout,
        };
        self.out
            .send_timeout(msg, wait)
            .map_err(|_| Error::Closed(Closed::NotReading))
    }

    /// Sends the handshake request and reads until it is answered, answering whatever the
    /// server asks meanwhile (a legacy `ping`) and refusing its other requests.
    fn exchange(&mut self, msg: Message, method: &str) -> Result<Ready, HandshakeFailure> {
        let asked = msg.id().cloned();
        self.send(msg).map_err(HandshakeFailure::Other)?;
        loop {
            let wait = self.engine.next_deadline();
            let item = match wait {
                Some(d) => self.incoming.recv_deadline(d),
                None => {
                    return Err(HandshakeFailure::Other(Error::Refused(Refused::NotReady(
                        "no handshake in flight",
                    ))));
                }
            };
            let item = match item {
                Ok(i) => i.into(),
                Err(RecvTimeoutError::Timeout) => {
                    let expired = self.engine.poll(Instant::now());
                    if expired.is_empty() {
                        continue;
                    }
                    for e in expired {
                        let _ = self.send(e.cancel);
                    }
                    return Err(HandshakeFailure::Other(Error::Timeout {
                        method: method.to_owned(),
                    }));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(HandshakeFailure::Other(Error::Closed(Closed::Ended)));
                }
            };
            let msg = match item {
                Incoming::Message(m) => m,
                Incoming::Broken(why) => {
                    return Err(HandshakeFailure::Other(Error::Closed(Closed::Broken(
                        why.into(),
                    ))));
                }
                // The answer to the handshake, but not a message: nothing better will come, so
                // the handshake fails now with the reason rather than at its timeout.
                Incoming::Malformed {
                    id: Some(id),
                    error,
                } if Some(&id) == asked.as_ref() => {
                    // Answered, if badly: the engine forgets the request (a `server/discover`
                    // returns it to its start, so that `initialize` may follow); the server
                    // is told nothing, having answered.
                    let _ = self.engine.cancel(&id, None);
                    return Err(HandshakeFailure::Malformed(Error::Unexpected(
                        Unexpected::Malformed(error.into()),
                    )));
                }
                // Something else (a stray line a server printed): the answer may still come.
                Incoming::Malformed { error, .. } => {
                    log::warn!(target: "mcp_client", "during the handshake: {error}");
                    continue;
                }
                // The server was not reached: no other era would fare better.
                Incoming::Failed { error, .. } => {
                    return Err(HandshakeFailure::Other(Error::Transport(error)));
                }
            };
            match self.engine.handle(msg, Instant::now()) {
                ClientStep::Ready(mut ready) => {
                    if let Some(m) = ready.send.take() {
                        self.send(m).map_err(HandshakeFailure::Other)?;
                    }
                    return Ok(ready);
                }
                ClientStep::HandshakeFailed(e) => return Err(HandshakeFailure::Protocol(e)),
                ClientStep::Reply(m) => self.send(m).map_err(HandshakeFailure::Other)?,
                ClientStep::Dispatch(req) => {
                    let err = ErrorObject::invalid_request("the client is not initialized yet");
                    if let Some(m) = self.engine.respond(&req.id, Err(err)) {
                        self.send(m).map_err(HandshakeFailure::Other)?;
                    }
                }
                _ => {}
            }
        }
    }
}

/// `initialize` without the tasks extension's declaration, a 2026-07-28 notion a legacy
/// server has no use for (MCP Apps stays: see `handlers::without_tasks_extension`). A
/// dual-era client proposes the same capabilities to both eras, so it is taken out here.
fn without_extensions(msg: Message) -> Message {
    let Message::Request(req) = msg else {
        return msg;
    };
    let mut params = req.params_value();
    let removed = params
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
        .is_some_and(crate::handlers::without_tasks_extension);
    if !removed {
        return Message::Request(req);
    }
    match mcp_core::jsonrpc::Request::new(req.id.clone(), &req.method, &params) {
        Ok(r) => Message::Request(r),
        Err(_) => Message::Request(req),
    }
}

enum HandshakeFailure {
    Protocol(HandshakeError),
    /// The answer to the handshake request was not a message.
    Malformed(Error),
    Other(Error),
}

impl HandshakeFailure {
    fn into_error(self) -> Error {
        match self {
            HandshakeFailure::Protocol(e) => e.into(),
            HandshakeFailure::Malformed(e) | HandshakeFailure::Other(e) => e,
        }
    }
}
