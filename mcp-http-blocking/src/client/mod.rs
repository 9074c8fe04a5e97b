//! The Streamable HTTP client transport (feature `client`): a pair of bounded channels of
//! [`Message`]s in front of an MCP endpoint URL, for a blocking MCP client such as
//! `mcp-client` (whose `http` feature wraps [`HttpClient`] in its `Transport` trait).
//!
//! What happens to each message put on [`HttpClient::sender`]:
//! - a request is POSTed on a thread of its own (so a slow tool call never holds up a ping or
//!   the answer to a server request); its answer, plain JSON or an SSE stream with
//!   notifications and server requests before the response, arrives on
//!   [`HttpClient::receiver`]. An HTTP 4xx/5xx answer arrives as a JSON-RPC error response
//!   for that request id (the server's own error when it sent one); an exchange that failed
//!   below HTTP (a refused connection, a stream that could not be resumed) arrives as
//!   [`Incoming::Failed`] with this crate's
//!   [`Error`];
//! - a notification or a response is POSTed at once and expected to get 202;
//! - `notifications/cancelled` closes the cancelled request's stream (in 2026-07-28 that *is*
//!   the cancellation, and nothing is POSTed); in a legacy session it is POSTed as well.
//!
//! Headers: a 2026-07-28 request gets `MCP-Protocol-Version` from its own `_meta`, plus
//! `Mcp-Method` and `Mcp-Name` (base64-encoded when not plain ASCII); everything else is part
//! of the legacy session that `initialize` opened: `Mcp-Session-Id` and the negotiated
//! `MCP-Protocol-Version`. After the legacy handshake the GET stream is opened (405 means the
//! server has none). Broken streams that carried event ids are resumed with `Last-Event-ID`
//! after the server's `retry:` delay, a bounded number of times. [`HttpClient::close`] ends
//! every stream and DELETEs the session.
//!
//! Older servers: when `initialize` is refused with any 4xx but 401 and 403, the client tries the
//! 2024-11-05 HTTP+SSE transport (GET the URL, POST to the endpoint its `endpoint` event
//! names, read every answer from that one stream), as the later revisions prescribe.
//!
//! 2026-07-28 `x-mcp-header` marks are learnt from `tools/list` answers as they pass through:
//! `tools/call` then carries the marked arguments as `Mcp-Param-{Name}` headers, and tools
//! with invalid marks are removed from the list, as the spec requires of clients.
//!
//! Threads: one sorts what is sent; a one-way lane POSTs notifications and answers (in order),
//! so a server slow to acknowledge them never holds up a request; a request lane waits for a
//! free slot and starts each request's own thread (at most
//! [`HttpClientConfig::max_in_flight`] at once), so a cancellation never waits behind queued
//! requests; the legacy GET stream has one. Every request holds
//! its own ureq agent (reused afterwards for keep-alive), because shutting an agent down is
//! the only way to interrupt a blocked read from another thread: that is how a cancelled
//! request's stream is closed.

mod auth;
mod exchange;
mod headers;
mod old_sse;
mod params;
mod queue;
mod renew;
mod sse;

use mcp_core::types::methods;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, TrySendError, bounded, select};
use mcp_core::jsonrpc::{Message, RequestId};
use mcp_core::transport::Incoming;
use mcp_core::version::{Era, ProtocolVersion};
use ureq::Agent;

use crate::Error;
use headers::Shape;

pub use auth::{AuthError, AuthProvider, BearerToken, Challenge};
pub use exchange::SESSION_NOT_FOUND;

/// Settings of an [`HttpClient`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpClientConfig {
    /// Longest wait for a TCP (and TLS) connection (default 10 s).
    pub(crate) connect_timeout: Duration,
    /// Longest wait for the head of a response once the request is sent (default 10 min: a
    /// server may hold a JSON answer until a long tool call ends; the MCP client's own request
    /// timeout usually cancels sooner).
    pub(crate) response_timeout: Duration,
    /// Longest silence inside a response body before the stream counts as dead (default
    /// 5 min; servers send keep-alive comments more often than that).
    pub(crate) read_timeout: Duration,
    /// Longest wait for the 202 that acknowledges a POSTed notification or response (default
    /// 30 s). These are sent in order on one thread, so a server that never acknowledges one
    /// must not hold up the rest for long.
    pub(crate) ack_timeout: Duration,
    /// Largest single message, JSON body or SSE event (default 16 MiB).
    pub(crate) max_message: usize,
    /// Attempts to resume a broken stream with `Last-Event-ID`, in a row (default 5).
    pub(crate) max_reconnects: u32,
    /// Wait before resuming when the server gave no `retry:` hint (default 1 s).
    pub(crate) default_retry: Duration,
    /// Upper bound on a server's `retry:` hint (default 30 s).
    pub(crate) max_retry: Duration,
    /// Requests in flight at most; beyond it the sending side waits (default 64).
    pub(crate) max_in_flight: usize,
    /// Capacity of the receiving channel (default 256 messages).
    pub(crate) channel_capacity: usize,
    /// Most bytes of the server's messages waiting for the client to read them (default
    /// 16 MiB).
    pub(crate) max_queued_bytes: usize,
    /// Open the legacy GET stream after `initialize` (default true).
    pub(crate) get_stream: bool,
    /// When the server answers 404 to a request of a legacy session (it forgot the session),
    /// start a new session by repeating the `initialize` and send the request again (default
    /// true). The resource subscriptions and the log level the client had asked for are set
    /// up again in the new session first (the answers to that stay inside the client).
    /// False: the request fails with [`SESSION_NOT_FOUND`].
    pub(crate) renew_session: bool,
    /// Extra headers on every request.
    pub(crate) headers: Vec<(String, String)>,
    /// Gives the `Authorization` header of every request and answers the server's 401 and
    /// 403 refusals (a fixed [`BearerToken`], or OAuth with feature `oauth`). None: no
    /// authorization.
    pub(crate) auth: Option<Arc<dyn AuthProvider>>,
    /// The `User-Agent`.
    pub(crate) user_agent: String,
}

impl HttpClientConfig {
    /// A builder starting from the defaults.
    pub fn builder() -> HttpClientConfigBuilder {
        HttpClientConfigBuilder {
            config: HttpClientConfig::default(),
        }
    }

    /// Longest wait for a TCP (and TLS) connection (default 10 s).
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// Longest wait for the head of a response once the request is sent (default 10 min: a
    /// server may hold a JSON answer until a long tool call ends; the MCP client's own request
    /// timeout usually cancels sooner).
    pub fn response_timeout(&self) -> Duration {
        self.response_timeout
    }

    /// Longest silence inside a response body before the stream counts as dead (default
    /// 5 min; servers send keep-alive comments more often than that).
    pub fn read_timeout(&self) -> Duration {
        self.read_timeout
    }

    /// Longest wait for the 202 that acknowledges a POSTed notification or response (default
    /// 30 s). These are sent in order on one thread, so a server that never acknowledges one
    /// must not hold up the rest for long.
    pub fn ack_timeout(&self) -> Duration {
        self.ack_timeout
    }

    /// Largest single message, JSON body or SSE event (default 16 MiB).
    pub fn max_message(&self) -> usize {
        self.max_message
    }

    /// Attempts to resume a broken stream with `Last-Event-ID`, in a row (default 5).
    pub fn max_reconnects(&self) -> u32 {
        self.max_reconnects
    }

    /// Wait before resuming when the server gave no `retry:` hint (default 1 s).
    pub fn default_retry(&self) -> Duration {
        self.default_retry
    }

    /// Upper bound on a server's `retry:` hint (default 30 s).
    pub fn max_retry(&self) -> Duration {
        self.max_retry
    }

    /// Requests in flight at most; beyond it the sending side waits (default 64).
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// Capacity of the receiving channel (default 256 messages).
    pub fn channel_capacity(&self) -> usize {
        self.channel_capacity
    }

    /// Most bytes of the server's messages waiting for the client to read them (default
    /// 16 MiB). See [`HttpClientConfigBuilder::max_queued_bytes`].
    pub fn max_queued_bytes(&self) -> usize {
        self.max_queued_bytes
    }

    /// Open the legacy GET stream after `initialize` (default true).
    pub fn get_stream(&self) -> bool {
        self.get_stream
    }

    /// When the server answers 404 to a request of a legacy session (it forgot the session),
    /// start a new session by repeating the `initialize` and send the request again (default
    /// true). The resource subscriptions and the log level the client had asked for are set
    /// up again in the new session first (the answers to that stay inside the client).
    /// False: the request fails with [`SESSION_NOT_FOUND`].
    pub fn renew_session(&self) -> bool {
        self.renew_session
    }

    /// Extra headers on every request.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// Gives the `Authorization` header of every request and answers the server's 401 and
    /// 403 refusals (a fixed [`BearerToken`], or OAuth with feature `oauth`). None: no
    /// authorization.
    pub fn auth(&self) -> Option<&Arc<dyn AuthProvider>> {
        self.auth.as_ref()
    }

    /// The `User-Agent`.
    pub fn user_agent(&self) -> &str {
        &self.user_agent
    }
}

/// Builds a [`HttpClientConfig`]: one method per setting, named after it, then
/// [`build`](HttpClientConfigBuilder::build).
#[derive(Debug, Clone)]
#[must_use]
pub struct HttpClientConfigBuilder {
    config: HttpClientConfig,
}

impl HttpClientConfigBuilder {
    /// Longest wait for a TCP (and TLS) connection (default 10 s).
    pub fn connect_timeout(mut self, v: Duration) -> Self {
        self.config.connect_timeout = v;
        self
    }

    /// Longest wait for the head of a response once the request is sent (default 10 min: a
    /// server may hold a JSON answer until a long tool call ends; the MCP client's own request
    /// timeout usually cancels sooner).
    pub fn response_timeout(mut self, v: Duration) -> Self {
        self.config.response_timeout = v;
        self
    }

    /// Longest silence inside a response body before the stream counts as dead (default
    /// 5 min; servers send keep-alive comments more often than that).
    pub fn read_timeout(mut self, v: Duration) -> Self {
        self.config.read_timeout = v;
        self
    }

    /// Longest wait for the 202 that acknowledges a POSTed notification or response (default
    /// 30 s). These are sent in order on one thread, so a server that never acknowledges one
    /// must not hold up the rest for long.
    pub fn ack_timeout(mut self, v: Duration) -> Self {
        self.config.ack_timeout = v;
        self
    }

    /// Largest single message, JSON body or SSE event (default 16 MiB).
    pub fn max_message(mut self, v: usize) -> Self {
        self.config.max_message = v;
        self
    }

    /// Attempts to resume a broken stream with `Last-Event-ID`, in a row (default 5).
    pub fn max_reconnects(mut self, v: u32) -> Self {
        self.config.max_reconnects = v;
        self
    }

    /// Wait before resuming when the server gave no `retry:` hint (default 1 s).
    pub fn default_retry(mut self, v: Duration) -> Self {
        self.config.default_retry = v;
        self
    }

    /// Upper bound on a server's `retry:` hint (default 30 s).
    pub fn max_retry(mut self, v: Duration) -> Self {
        self.config.max_retry = v;
        self
    }

    /// Requests in flight at most; beyond it the sending side waits (default 64).
    pub fn max_in_flight(mut self, v: usize) -> Self {
        self.config.max_in_flight = v;
        self
    }

    /// Capacity of the receiving channel (default 256 messages).
    pub fn channel_capacity(mut self, v: usize) -> Self {
        self.config.channel_capacity = v;
        self
    }

    /// Most bytes of the server's messages waiting for the client to read them (default
    /// 16 MiB, one message of the largest size [`max_message`](Self::max_message) allows).
    /// When the client falls behind (say its replies wait for a server that never
    /// acknowledges them) and the queue holds this much, the threads reading the server's
    /// streams stop reading until it catches up, so the server's writes block: a server that
    /// floods large messages costs this much memory (plus at most one message being read per
    /// open stream), not the channel capacity times the message limit. A single message
    /// larger than this still passes, alone.
    pub fn max_queued_bytes(mut self, v: usize) -> Self {
        self.config.max_queued_bytes = v.max(1);
        self
    }

    /// Open the legacy GET stream after `initialize` (default true).
    pub fn get_stream(mut self, v: bool) -> Self {
        self.config.get_stream = v;
        self
    }

    /// When the server answers 404 to a request of a legacy session (it forgot the session),
    /// start a new session by repeating the `initialize` and send the request again (default
    /// true). The resource subscriptions and the log level the client had asked for are set
    /// up again in the new session first (the answers to that stay inside the client).
    /// False: the request fails with [`SESSION_NOT_FOUND`].
    pub fn renew_session(mut self, v: bool) -> Self {
        self.config.renew_session = v;
        self
    }

    /// Gives the `Authorization` header of every request and answers the server's 401 and
    /// 403 refusals (a fixed [`BearerToken`], or OAuth with feature `oauth`). None: no
    /// authorization.
    pub fn auth(mut self, v: Arc<dyn AuthProvider>) -> Self {
        self.config.auth = Some(v);
        self
    }

    /// The `User-Agent`.
    pub fn user_agent(mut self, v: impl Into<String>) -> Self {
        self.config.user_agent = v.into();
        self
    }

    /// Adds a header sent on every request (call it once per header).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.config.headers.push((name.into(), value.into()));
        self
    }

    /// The finished [`HttpClientConfig`].
    pub fn build(self) -> HttpClientConfig {
        self.config
    }
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        HttpClientConfig {
            connect_timeout: Duration::from_secs(10),
            response_timeout: Duration::from_secs(600),
            read_timeout: Duration::from_secs(300),
            ack_timeout: Duration::from_secs(30),
            max_message: 16 << 20,
            max_reconnects: 5,
            default_retry: Duration::from_secs(1),
            max_retry: Duration::from_secs(30),
            max_in_flight: 64,
            channel_capacity: 256,
            max_queued_bytes: queue::DEFAULT_MAX_QUEUED_BYTES,
            get_stream: true,
            renew_session: true,
            headers: Vec::new(),
            auth: None,
            user_agent: concat!("mcp-http-blocking/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

/// A Streamable HTTP connection to one MCP endpoint. See the [module](self) docs.
pub struct HttpClient {
    shared: Arc<Shared>,
    out: Sender<Message>,
    stop: Option<Sender<()>>,
    /// The sending thread and the request lane.
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("url", &self.shared.url)
            .field("session", &self.session_id())
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// Prepares a connection to `url` (`http://` or, with feature `client-tls`, `https://`)
    /// and starts the thread that sends. Nothing goes on the wire before the first message.
    ///
    /// # Errors
    /// [`Error::InvalidUrl`] for a URL that is not `http(s)://`, [`Error::Io`] when the
    /// thread cannot start.
    pub fn connect(url: &str, cfg: HttpClientConfig) -> Result<HttpClient, Error> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(Error::InvalidUrl {
                url: url.to_owned(),
                reason: "not an http:// or https:// URL",
            });
        }
        let agent_cfg = Agent::config_builder()
            .http_status_as_error(false)
            .user_agent(cfg.user_agent.as_str())
            .timeout_connect(Some(cfg.connect_timeout))
            .timeout_send_request(Some(cfg.connect_timeout))
            .timeout_send_body(Some(cfg.response_timeout))
            .timeout_recv_response(Some(cfg.response_timeout))
            .timeout_per_read(Some(cfg.read_timeout))
            .max_idle_connections(1)
            .max_idle_connections_per_host(1)
            .max_redirects(0)
            .build();
        let (out, out_rx) = bounded::<Message>(cfg.channel_capacity.max(1));
        let (stop, stop_rx) = bounded::<()>(0);
        let (events, events_rx, forwarder) = queue::byte_bounded(
            cfg.channel_capacity,
            cfg.max_queued_bytes,
            stop_rx.clone(),
            "mcp-http-queue",
        )
        .map_err(Error::Io)?;
        let (slots, slots_rx) = bounded(cfg.max_in_flight.max(1));
        let shared = Arc::new(Shared {
            url: url.to_owned(),
            cfg,
            agent_cfg,
            events,
            events_rx,
            stop_rx,
            slots,
            slots_rx,
            state: Mutex::new(State::default()),
            renewing: Mutex::new(()),
        });
        let (lane_tx, lane_rx) = bounded(shared.cfg.channel_capacity.max(1));
        let s2 = Arc::clone(&shared);
        let lane = thread::Builder::new()
            .name("mcp-http-requests".into())
            .spawn(move || s2.request_lane(&lane_rx))
            .map_err(Error::Io)?;
        let (one_way_tx, one_way_rx) = bounded(shared.cfg.channel_capacity.max(1));
        let s2 = Arc::clone(&shared);
        let one_way = thread::Builder::new()
            .name("mcp-http-one-way".into())
            .spawn(move || s2.one_way_loop(&one_way_rx))
            .map_err(Error::Io)?;
        let s2 = Arc::clone(&shared);
        let lanes = Lanes {
            requests: lane_tx,
            one_way: one_way_tx,
        };
        let writer = thread::Builder::new()
            .name("mcp-http-client".into())
            .spawn(move || s2.write_loop(&out_rx, &lanes))
            .map_err(Error::Io)?;
        Ok(HttpClient {
            shared,
            out,
            stop: Some(stop),
            threads: vec![writer, lane, one_way, forwarder],
        })
    }

    /// Where the messages for the server go.
    pub fn sender(&self) -> Sender<Message> {
        self.out.clone()
    }

    /// Where the server's messages come from.
    pub fn receiver(&self) -> Receiver<Incoming> {
        self.shared.events_rx.clone()
    }

    /// The handshake's outcome: which era, and for a legacy session the revision to send in
    /// `MCP-Protocol-Version` (it is also read off the `initialize` answer, so calling this is
    /// only needed when the handshake went some other way).
    pub fn set_protocol(&self, era: Era, version: ProtocolVersion) {
        let mut st = self.shared.state();
        st.modern = era == Era::Modern;
        if era == Era::Legacy {
            st.version = Some(version.as_str().to_owned());
        }
    }

    /// The legacy session id the server gave, if any.
    pub fn session_id(&self) -> Option<String> {
        self.shared.state().session.clone()
    }

    /// Why requests fail, when the connection has a known problem:
    /// [`Error::SessionLost`] when the server forgot the session.
    pub fn end_reason(&self) -> Option<Error> {
        let st = self.shared.state();
        st.session_lost.then(|| Error::SessionLost {
            url: self.shared.url.clone(),
        })
    }

    /// Ends the connection: every open stream is closed (in 2026-07-28, that cancels what the
    /// server was doing for it), the sending thread stops, and a legacy session is ended with
    /// DELETE. Calling it again does nothing.
    pub fn close(&mut self) {
        let Some(stop) = self.stop.take() else {
            return;
        };
        let (agents, get_thread, session, version) = {
            let mut st = self.shared.state();
            st.closed = true;
            let mut agents: Vec<Agent> = st.idle.drain(..).collect();
            for (_, b) in st.busy.drain() {
                agents.push(b.agent);
            }
            (
                agents,
                st.get_thread.take(),
                st.session.clone(),
                st.version.clone(),
            )
        };
        drop(stop);
        for a in agents {
            a.shutdown();
        }
        for t in self.threads.drain(..) {
            if t.join().is_err() {
                log::warn!("a thread of the HTTP client panicked");
            }
        }
        if let Some(g) = get_thread {
            let _ = g.join();
        }
        if let Some(sid) = session {
            self.shared.delete_session(&sid, version.as_deref());
        }
    }
}

impl Drop for HttpClient {
    fn drop(&mut self) {
        self.close();
    }
}

/// An agent lent to one exchange, so closing or cancelling can interrupt exactly that one.
struct Busy {
    agent: Agent,
    request: Option<RequestId>,
    modern: bool,
    /// Dropped to cancel: the exchange's waits see the disconnection.
    cancel: Option<Sender<()>>,
}

#[derive(Default)]
struct State {
    session: Option<String>,
    version: Option<String>,
    modern: bool,
    closed: bool,
    session_lost: bool,
    legacy_ready: bool,
    /// The id of the `initialize` request, whose answer names the revision.
    init_id: Option<RequestId>,
    /// The revision that request asks for (sent on authorization discovery before the
    /// answer names the session's).
    wanted_version: Option<String>,
    /// That request as sent, repeated to start a new session when the server forgets one.
    init_body: Option<Vec<u8>>,
    /// What to set up again in such a new session.
    replay: renew::Replay,
    /// Where to POST, once a 2024-11-05 server named it in its `endpoint` event.
    old_endpoint: Option<String>,
    /// The server's requests sent on the stream of one of ours, not answered yet: (its id,
    /// its method, our request's id), newest last, at most `ASKED`. When the server refuses
    /// the answer, our request fails at once instead of waiting out its timeout.
    asked: std::collections::VecDeque<(RequestId, String, RequestId)>,
    /// `x-mcp-header` marks per tool, learnt from `tools/list` answers.
    marks: HashMap<String, params::Marks>,
    idle: Vec<Agent>,
    busy: HashMap<u64, Busy>,
    next_key: u64,
    get_thread: Option<JoinHandle<()>>,
}

/// How many unanswered server requests the client remembers the origin of (see
/// `State::asked`): a server asks a handful at a time; one asking more only loses the quick
/// failure for the oldest.
const ASKED: usize = 64;

/// Agents kept for reuse (each keeps one idle keep-alive connection).
const IDLE_AGENTS: usize = 8;

/// How long the first requests of a legacy session wait for the server to answer the GET
/// stream's request (after `notifications/initialized`): long enough for any live server, short
/// enough that one which never answers costs the first call little.
const GET_HEAD_START: std::time::Duration = std::time::Duration::from_millis(200);

/// How long the first requests of a legacy session wait for `notifications/initialized` to be
/// acknowledged (and the GET stream's head start after it).
const INITIALIZED_HEAD_START: std::time::Duration = std::time::Duration::from_secs(1);

pub(crate) struct Shared {
    url: String,
    cfg: HttpClientConfig,
    agent_cfg: ureq::config::Config,
    /// The receiving queue, bounded in messages and bytes.
    events: queue::Feeder<Incoming>,
    events_rx: Receiver<Incoming>,
    /// Disconnected when the client closes.
    stop_rx: Receiver<()>,
    /// One token per request in flight.
    slots: Sender<()>,
    slots_rx: Receiver<()>,
    state: Mutex<State>,
    /// Held while a new session is being started, so only one exchange does it.
    renewing: Mutex<()>,
}

/// Where the sending thread passes messages on: requests to the request lane, one-way
/// messages to the one-way lane (each a thread of its own).
struct Lanes {
    requests: Sender<(Message, Shape)>,
    /// With a sender that the lane drops once the message is dealt with (for
    /// `notifications/initialized`: acknowledged, and the GET stream's head start given).
    one_way: Sender<(Message, Option<Sender<()>>)>,
}

/// An agent on loan, and how the exchange learns it was cancelled.
pub(crate) struct Lease {
    key: u64,
    agent: Agent,
    cancel: Receiver<()>,
}

impl Lease {
    fn cancelled(&self) -> bool {
        matches!(
            self.cancel.try_recv(),
            Err(crossbeam_channel::TryRecvError::Disconnected)
        )
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lease(&self, request: Option<RequestId>, modern: bool) -> Option<Lease> {
        let mut st = self.state();
        if st.closed {
            return None;
        }
        let agent = st.idle.pop().unwrap_or_else(|| self.agent_cfg.new_agent());
        let (tx, rx) = bounded(0);
        let key = st.next_key;
        st.next_key += 1;
        st.busy.insert(
            key,
            Busy {
                agent: agent.clone(),
                request,
                modern,
                cancel: Some(tx),
            },
        );
        Some(Lease {
            key,
            agent,
            cancel: rx,
        })
    }

    /// Gives the agent back; a cancelled one was shut down and is dropped.
    fn release(&self, lease: Lease) {
        let cancelled = lease.cancelled();
        let mut st = self.state();
        st.busy.remove(&lease.key);
        if !cancelled && !st.closed && st.idle.len() < IDLE_AGENTS {
            st.idle.push(lease.agent);
        }
    }

    /// Closes the stream of request `id`; returns whether it was a 2026-07-28 exchange.
    fn cancel(&self, id: &RequestId) -> Option<bool> {
        let mut st = self.state();
        let busy = st
            .busy
            .values_mut()
            .find(|b| b.request.as_ref() == Some(id))?;
        busy.cancel.take();
        let modern = busy.modern;
        busy.agent.clone().shutdown();
        Some(modern)
    }

    /// Hands an event to the client, waiting while its queue is full (in messages or bytes);
    /// false when the client is closing or has not read for the response timeout.
    fn forward(&self, ev: Incoming) -> bool {
        let size = queue::incoming_size(&ev);
        let sent = self
            .events
            .send(ev, size, &self.stop_rx, Some(self.cfg.response_timeout));
        if !sent && !self.state().closed {
            log::warn!(
                "the MCP client stopped reading; dropping a message from {}",
                self.url
            );
        }
        sent
    }

    /// The sending thread: requests go on to the request lane, one-way messages to the
    /// one-way lane, so a full set of requests in flight never holds up a cancellation or the
    /// answer to a server request, and a server slow to acknowledge those never holds up a
    /// request. Only `notifications/initialized` is POSTed here: what follows it waits for it.
    fn write_loop(self: &Arc<Self>, out: &Receiver<Message>, lanes: &Lanes) {
        loop {
            let msg = select! {
                recv(out) -> m => match m {
                    Ok(m) => m,
                    Err(_) => return,
                },
                recv(self.stop_rx) -> _ => return,
            };
            self.dispatch(msg, lanes);
        }
    }

    /// The one-way lane: notifications and answers to the server's requests, POSTed in the
    /// order they were sent, each waiting for its acknowledgement (at most `ack_timeout`).
    fn one_way_loop(self: &Arc<Self>, one_way: &Receiver<(Message, Option<Sender<()>>)>) {
        loop {
            let (msg, done) = select! {
                recv(one_way) -> m => match m {
                    Ok(m) => m,
                    Err(_) => return,
                },
                recv(self.stop_rx) -> _ => return,
            };
            let Some(lease) = self.lease(None, false) else {
                return;
            };
            let origin = self.origin_of(&msg);
            let posted = self.post_one_way(&lease, &msg);
            self.release(lease);
            let accepted = posted.is_ok();
            if let (Err(Some(status)), Some((method, call))) = (posted, origin) {
                self.fail(&call, Error::AnswerRefused { method, status });
            }
            if msg.method() == Some(methods::NOTIFICATION_INITIALIZED) {
                if !accepted {
                    log::debug!(
                        "{}: notifications/initialized was not acknowledged",
                        self.url
                    );
                }
                // The GET stream gets a short head start: the first requests wait until the
                // server answered the GET (open or refused), at most `GET_HEAD_START`, so
                // that the stream is normally open before any request's own stream (what the
                // server sends outside requests then has somewhere to go, and a server
                // watching the order of a session's requests sees the GET first), while a
                // server that never answers the GET costs the first call that bound once.
                if let Some(ready) = self.start_get_stream() {
                    select! {
                        recv(ready) -> _ => {}
                        recv(self.stop_rx) -> _ => {}
                        default(GET_HEAD_START) => {}
                    }
                }
            }
            drop(done);
        }
    }

    /// The request lane: waits for a free slot, then starts the request's exchange thread.
    fn request_lane(self: &Arc<Self>, lane: &Receiver<(Message, Shape)>) {
        loop {
            let (msg, shape) = select! {
                recv(lane) -> m => match m {
                    Ok(m) => m,
                    Err(_) => return,
                },
                recv(self.stop_rx) -> _ => return,
            };
            let Some(id) = msg.id().cloned() else {
                continue;
            };
            // Wait for a free slot (bounded concurrency), or for the client to close.
            select! {
                send(self.slots, ()) -> r => if r.is_err() { return },
                recv(self.stop_rx) -> _ => return,
            }
            let Some(lease) = self.lease(Some(id.clone()), shape.modern_version.is_some()) else {
                let _ = self.slots_rx.try_recv();
                return;
            };
            let me = Arc::clone(self);
            let id2 = id.clone();
            let spawned = thread::Builder::new()
                .name("mcp-http-exchange".into())
                .spawn(move || {
                    me.request_exchange(&lease, &id2, &msg, &shape);
                    me.release(lease);
                    let _ = me.slots_rx.try_recv();
                });
            if let Err(e) = spawned {
                let _ = self.slots_rx.try_recv();
                self.fail(&id, Error::Io(e));
            }
        }
    }

    fn dispatch(self: &Arc<Self>, msg: Message, lanes: &Lanes) {
        let shape = headers::shape(&msg);
        if let Message::Request(r) = &msg {
            if shape.is_initialize {
                let mut st = self.state();
                st.init_id = Some(r.id.clone());
                st.init_body = Some(msg.to_vec());
                st.wanted_version = r
                    .params_value()
                    .get("protocolVersion")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned);
            } else if self.cfg.renew_session {
                self.state().replay.note(r);
            }
            select! {
                send(lanes.requests, (msg, shape)) -> _ => {}
                recv(self.stop_rx) -> _ => {}
            }
            return;
        }
        if let Some(id) = &shape.cancels {
            let modern = self.cancel(id).unwrap_or(self.state().modern);
            if modern {
                // 2026-07-28 over HTTP: the closed stream is the cancellation.
                return;
            }
        }
        if msg.method() != Some(methods::NOTIFICATION_INITIALIZED) {
            // Never waited for: a server that leaves every one-way POST unacknowledged fills
            // the lane, and waiting here would hold up every request behind it (for hours: 256
            // acknowledgement timeouts). A full lane means the server takes none of what we
            // send: the newest one-way message goes (an answer's request ends at the server's
            // own timeout).
            if let Err(TrySendError::Full((m, _))) = lanes.one_way.try_send((msg, None)) {
                log::warn!(
                    "{} takes none of our one-way messages: dropped {}",
                    self.url,
                    m.method().unwrap_or("an answer")
                );
            }
            return;
        }
        // The requests after `initialized` wait for its acknowledgement and the GET stream's
        // head start (see `one_way_loop`), but at most `INITIALIZED_HEAD_START`: a server slow
        // to acknowledge must not hold every request up for the acknowledgement's timeout.
        let (done, dealt_with) = bounded::<()>(0);
        select! {
            send(lanes.one_way, (msg, Some(done))) -> _ => {}
            recv(self.stop_rx) -> _ => return,
        }
        select! {
            recv(dealt_with) -> _ => {}
            recv(self.stop_rx) -> _ => {}
            default(INITIALIZED_HEAD_START) => {
                // Still unacknowledged: the GET stream opens now all the same (once only:
                // the lane's own start then finds it open).
                drop(self.start_get_stream());
            }
        }
    }

    /// Where POSTs go: the endpoint URL, or the one a 2024-11-05 server named.
    fn post_url(&self) -> String {
        self.state()
            .old_endpoint
            .clone()
            .unwrap_or_else(|| self.url.clone())
    }

    /// Notes a request of the server's that arrived on the stream of our request `call`.
    fn note_asked(&self, asked: &Message, call: &RequestId) {
        if let (Some(id), Some(method)) = (asked.id(), asked.method()) {
            let mut st = self.state();
            if st.asked.len() == ASKED {
                st.asked.pop_front();
            }
            st.asked
                .push_back((id.clone(), method.to_owned(), call.clone()));
        }
    }

    /// For an answer to a server's request noted by `note_asked`: that request's method and
    /// the request of ours it came with (forgotten now: it is answered).
    fn origin_of(&self, msg: &Message) -> Option<(String, RequestId)> {
        if !msg.is_response() {
            return None;
        }
        let id = msg.id()?;
        let mut st = self.state();
        let at = st.asked.iter().position(|(asked, ..)| asked == id)?;
        st.asked.remove(at).map(|(_, method, call)| (method, call))
    }

    /// Reports a failed exchange of request `id` (an [`Incoming::Failed`]).
    fn fail(&self, id: &RequestId, error: Error) {
        self.forward(Incoming::Failed {
            id: id.clone(),
            error: Box::new(error),
        });
    }

    /// Reports something from the server that is not a message (an [`Incoming::Malformed`]);
    /// false when the client is closing.
    fn malformed(&self, id: Option<RequestId>, error: Error) -> bool {
        self.forward(Incoming::Malformed {
            id,
            error: Box::new(error),
        })
    }

    fn fail_with(&self, id: &RequestId, error: mcp_core::jsonrpc::ErrorObject) {
        self.forward(Incoming::Message(Message::error(Some(id.clone()), error)));
    }

    /// Opens the GET stream again after a new session, when the old one's stream has ended.
    fn restart_get_stream(self: &Arc<Self>) {
        let finished = {
            let mut st = self.state();
            match &st.get_thread {
                Some(t) if t.is_finished() => st.get_thread.take(),
                _ => None,
            }
        };
        if let Some(t) = finished {
            let _ = t.join();
        }
        let _ = self.start_get_stream();
    }

    /// Starts the GET stream's thread (once the session is ready, unless one runs); the
    /// receiver disconnects once its first attempt to open the stream is over.
    fn start_get_stream(self: &Arc<Self>) -> Option<Receiver<()>> {
        if !self.cfg.get_stream {
            return None;
        }
        let mut st = self.state();
        if st.closed || st.get_thread.is_some() || !st.legacy_ready || st.old_endpoint.is_some() {
            return None;
        }
        let me = Arc::clone(self);
        let (ready_tx, ready_rx) = bounded::<()>(0);
        match thread::Builder::new()
            .name("mcp-http-get".into())
            .spawn(move || me.get_stream(Some(ready_tx)))
        {
            Ok(t) => {
                st.get_thread = Some(t);
                Some(ready_rx)
            }
            Err(e) => {
                log::warn!("cannot start the GET stream thread: {e}");
                None
            }
        }
    }
}
