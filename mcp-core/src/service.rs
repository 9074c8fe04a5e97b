//! The seam where transports meet whatever serves MCP.
//!
//! A transport (stdio, Streamable HTTP, an in-memory pipe in a test) turns bytes into
//! [`Message`]s and hands them to a [`Session`]; the session answers through the [`Outbound`]
//! the transport gave it. The server kit implements [`Service`]; transports depend only on these
//! traits, never on the kit, so any transport serves any service.
//!
//! Routing: every outgoing message may name the incoming request it belongs to (its response, its
//! progress and log notifications, a server-to-client request made while handling it). A
//! transport with one stream per request (Streamable HTTP) uses that to pick the stream; a
//! transport with a single pipe (stdio) ignores it.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::jsonrpc::{Message, RequestId, Response, ResultValue};
use crate::version::ProtocolVersion;

/// The peer is gone (or the stream the message belonged to was closed): nothing was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the connection to the peer is closed")
    }
}

impl std::error::Error for Closed {}

/// Where a session's outgoing messages go.
pub trait Outbound: Send + Sync {
    /// Sends one message. `related` is the id of the incoming request the message belongs to,
    /// if any. Blocks while the transport is back-pressured (a bounded queue is full).
    ///
    /// # Errors
    /// [`Closed`] when the peer, or the stream for `related`, is gone.
    fn send(&self, msg: Message, related: Option<&RequestId>) -> Result<(), Closed>;

    /// Sends a message that this session's own work does not wait on (a broadcast: a list or
    /// a resource changed, which any session's handler or a timer may cause) without waiting
    /// for room: where the peer does not keep up, the transport cuts its stream (a resumable
    /// one keeps the message for the reconnection) instead of holding the sender, which may
    /// be serving another client. The default sends as [`send`](Outbound::send) does (stdio
    /// has one client, whose own back-pressure it is).
    ///
    /// # Errors
    /// As [`send`](Outbound::send), and when the stream had no room.
    fn send_nowait(&self, msg: Message, related: Option<&RequestId>) -> Result<(), Closed> {
        self.send(msg, related)
    }

    /// Sends the successful answer to request `id` (as [`send`](Outbound::send) would send
    /// [`Response::message`]`(id, result)`), leaving the result's serialization to the
    /// transport: one that frames its answers itself (stdio) writes it straight into the
    /// answer's frame, with no raw text made, copied and dropped on the way. The default
    /// sends the message.
    ///
    /// # Errors
    /// As [`send`](Outbound::send).
    fn send_result(
        &self,
        id: &RequestId,
        result: &dyn ResultValue,
        related: Option<&RequestId>,
    ) -> Result<(), Closed> {
        self.send(Response::message(id, result), related)
    }

    /// Ends the connection that carries the stream of request `related` without ending the
    /// stream: the client reconnects after the `retry:` delay and resumes it from the last
    /// event id (SSE polling, 2025-11-25), and what was sent meanwhile is replayed then. A
    /// server uses it to avoid holding a connection through a long call. Returns false when
    /// the transport cannot (stdio, a JSON answer, the 2026-07-28 era, a stream that is not
    /// resumable); the default does nothing.
    fn close_stream(&self, related: &RequestId) -> bool {
        let _ = related;
        false
    }

    /// The session is about to run work that may block but ends on its own (a tool handler
    /// that sleeps or does slow I/O) inside [`Session::handle`], on the calling thread. A
    /// transport whose reading thread calls `handle` (stdio) hands the reading to another
    /// thread before this returns, so that `ping`, cancellations and the peer's answers are
    /// still read; one that gives each request a thread of its own (HTTP) has nothing to do,
    /// which is the default. Only meaningful where the transport declared
    /// [`SessionInfo::handle_may_block`].
    ///
    /// Returns false when blocking now could stop the session for good: no thread is free to
    /// read, and every other blocked `handle` waits for the peer
    /// ([`Outbound::will_await_peer`]), whose answers only a reader delivers. The session must
    /// then not block: it answers the request at once, for example with
    /// [`codes::SERVER_BUSY`](crate::jsonrpc::codes::SERVER_BUSY). True otherwise, which is
    /// the default.
    fn will_block(&self) -> bool {
        true
    }

    /// The session is about to wait, inside [`Session::handle`], for what only the peer can
    /// send: the answer to a request of its own, a cancellation. As [`Outbound::will_block`]
    /// (the reading goes on elsewhere), and the transport counts this `handle` as waiting on
    /// the peer until it returns: it lets the reading wait for a thread only while some
    /// blocked `handle` will end without the peer's help. Returns false when this wait could
    /// never end (no thread would be left to read the answer): the session must not wait then
    /// (and answers busy). The default is [`Outbound::will_block`].
    fn will_await_peer(&self) -> bool {
        self.will_block()
    }

    /// The service will send nothing more about request `id`, not even its answer: the peer
    /// cancelled it (a cancelled request gets no response). Without this a transport with one
    /// exchange per request (Streamable HTTP) could not tell a cancelled request from a slow
    /// one, and would hold its stream, its connection and its place under the per-session
    /// stream limit until the session ends; told, it ends the stream at once (an unstarted
    /// answer becomes `204 No Content`). Messages sent about `id` afterwards may be dropped.
    /// Called at most a few times per request (repeats are harmless); the default does
    /// nothing, which is right for a single pipe (stdio).
    fn unanswered(&self, id: &RequestId) {
        let _ = id;
    }

    /// The service ends the session on its own: the peer is gone although its connection is
    /// not (it stopped answering the service's pings), so only the service can tell. The
    /// transport ends the session as if the peer had left, and must not block here: stdio
    /// stops serving and returns an error naming `why`; Streamable HTTP closes the legacy
    /// session (its streams end, later requests for it get 404). The service closes its own
    /// side as well; the default does nothing more.
    fn end_session(&self, why: &str) {
        let _ = why;
    }
}

/// Which kind of transport a session runs on; services may shape behaviour by it (for example,
/// `notifications/cancelled` travels only on stdio in the 2026-07-28 era).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportKind {
    /// Newline-delimited JSON over a pipe pair.
    Stdio,
    /// Streamable HTTP (one session per `Mcp-Session-Id`, or one exchange per POST in the
    /// 2026-07-28 era).
    StreamableHttp,
    /// The deprecated HTTP+SSE transport of 2024-11-05.
    LegacySse,
    /// An in-process connection (tests, embedding).
    Memory,
}

/// Who a request's authorization claims name, as what a user owns (a legacy HTTP session, a
/// task) is bound to: the members that say who it is (`iss`, `sub`, `client_id`, `username`),
/// so that a refreshed token (a new `exp`, a stepped-up `scope`) is still the same requester.
/// Claims naming none of those count whole, less what changes from one token to the next
/// (`exp`, `iat`, `nbf`, `jti`, `scope`, `active`).
///
/// ```
/// use serde_json::json;
/// let a = mcp_core::service::requester(&json!({"sub": "alice", "exp": 1}));
/// assert_eq!(a, mcp_core::service::requester(&json!({"sub": "alice", "exp": 2})));
/// assert_ne!(a, mcp_core::service::requester(&json!({"sub": "bob", "exp": 1})));
/// ```
pub fn requester(claims: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    let Value::Object(c) = claims else {
        return claims.clone();
    };
    // Inserted one by one: collecting into the map would link a sort for four keys.
    let mut named = serde_json::Map::new();
    for k in ["iss", "sub", "client_id", "username"] {
        if let Some(v) = c.get(k) {
            named.insert(k.to_owned(), v.clone());
        }
    }
    if !named.is_empty() {
        return Value::Object(named);
    }
    let mut rest = c.clone();
    for k in ["exp", "iat", "nbf", "jti", "scope", "active"] {
        rest.remove(k);
    }
    Value::Object(rest)
}

/// What the transport knows when a session opens.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionInfo {
    /// The transport the session runs on.
    pub transport: TransportKind,
    /// The revision the transport already knows the peer speaks (from an HTTP header, say).
    pub protocol_version: Option<ProtocolVersion>,
    /// Claims from the transport's authorization step (for example a validated bearer
    /// token's subject and scopes), passed through to handlers untouched.
    pub auth: Option<serde_json::Value>,
    /// The service may do a request's work inside [`Session::handle`] itself (no hand-off to a
    /// worker thread, the fastest path for quick handlers), even work that waits for the
    /// peer's answer to a request of its own, provided it calls [`Outbound::will_block`]
    /// first: the transport then keeps taking input meanwhile (stdio hands its reading to
    /// another thread at that call; HTTP runs each request on a thread of its own). No
    /// transport watches for a `handle` that blocks without saying so.
    pub handle_may_block: bool,
    /// The `Mcp-Param-*` headers of a 2026-07-28 HTTP request (SEP-2243), as `(name after the
    /// prefix, decoded value)` in arrival order; `None` where there are no such headers to
    /// speak of (stdio, the legacy era). A tool argument whose schema names a header with
    /// `x-mcp-header` is mirrored in one, so that intermediaries can route on it without
    /// reading the body; the service checks that the two agree, since only it knows the tools.
    pub param_headers: Option<Vec<(String, String)>>,
    /// The network peer, when the transport knows it (HTTP): what a service keys its per-client
    /// rate limits on where there is no session to key them on (2026-07-28 exchanges without
    /// authorization). `None` on pipes.
    pub peer: Option<SocketAddr>,
    /// Seals what a service hands the peer to carry and give back (2026-07-28 `requestState`,
    /// pagination cursors), where a service cannot keep it itself: a stateless HTTP exchange
    /// is a session of its own, so the next request finds none of this one's state, and may
    /// even reach another instance. The transport that needs sealing provides it (the HTTP
    /// server always does, keyed at random or from a secret its instances share); on a pipe,
    /// where one session is one peer, it is `None` and the service keeps such state in the
    /// session.
    pub sealer: Option<Arc<dyn Sealer>>,
}

/// Seals bytes so that the peer can carry them but neither read nor change them, and opens
/// only what this sealer (or one sharing its keys) sealed for the same `context`.
///
/// `context` is authenticated but not stored: it binds a sealed value to its use (a state to
/// the request it belongs to, a cursor to its list), so that one is never accepted as
/// another. Implementations are an authenticated encryption (an AEAD) under keys the peer
/// never sees; `Debug` must not show them.
pub trait Sealer: Send + Sync + fmt::Debug {
    /// `plaintext` sealed as URL-safe text, or `None` when it cannot be (no random source):
    /// the caller then fails closed.
    fn seal(&self, plaintext: &[u8], context: &[u8]) -> Option<String>;

    /// What `sealed` holds, or `None` when it was not sealed by these keys for `context`, or
    /// was changed.
    fn open(&self, sealed: &str, context: &[u8]) -> Option<Vec<u8>>;
}

impl SessionInfo {
    /// Info for a transport with nothing else known yet.
    pub fn new(transport: TransportKind) -> Self {
        SessionInfo {
            transport,
            protocol_version: None,
            auth: None,
            handle_may_block: false,
            param_headers: None,
            peer: None,
            sealer: None,
        }
    }

    /// Sets the sealer (see [`SessionInfo::sealer`]).
    pub fn with_sealer(mut self, sealer: Arc<dyn Sealer>) -> Self {
        self.sealer = Some(sealer);
        self
    }

    /// Sets the network peer (see [`SessionInfo::peer`]).
    pub fn with_peer(mut self, peer: SocketAddr) -> Self {
        self.peer = Some(peer);
        self
    }

    /// Sets the `Mcp-Param-*` headers (see [`SessionInfo::param_headers`]).
    pub fn with_param_headers(mut self, headers: Vec<(String, String)>) -> Self {
        self.param_headers = Some(headers);
        self
    }

    /// Declares that `handle` may block (see [`SessionInfo::handle_may_block`]).
    pub fn with_blocking_handle(mut self) -> Self {
        self.handle_may_block = true;
        self
    }

    /// Sets the revision the transport already knows.
    pub fn with_protocol_version(mut self, v: ProtocolVersion) -> Self {
        self.protocol_version = Some(v);
        self
    }

    /// Sets authorization claims.
    pub fn with_auth(mut self, claims: serde_json::Value) -> Self {
        self.auth = Some(claims);
        self
    }
}

/// Something that serves MCP: it opens a [`Session`] per connection (stdio), per
/// `Mcp-Session-Id` (legacy HTTP) or per exchange (2026-07-28 HTTP).
pub trait Service: Send + Sync + 'static {
    /// Opens a session whose outgoing messages go to `out`.
    fn open(&self, info: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session>;

    /// Whether this service may end a session on its own ([`Outbound::end_session`]) while
    /// the peer is silent, as one that pings its clients does. The stdio transport reads on
    /// its caller's thread, where it can only notice the end between two messages, unless
    /// the service says so here: then it reads on a thread of its own and the caller returns
    /// as soon as the session ends. The default, `false`, suits a service that never calls
    /// `end_session`.
    fn ends_idle_sessions(&self) -> bool {
        false
    }
}

/// One conversation with one peer.
///
/// Transports may call [`Session::handle`] from several threads at once (one per HTTP request),
/// so implementations use interior mutability. `handle` must return quickly (long work belongs
/// on the service's own worker threads) unless the transport declared
/// [`SessionInfo::handle_may_block`].
pub trait Session: Send + Sync {
    /// Takes one incoming message (decode errors were already answered by the transport).
    fn handle(&self, msg: Message);

    /// Offered one line of input (a single JSON object, valid UTF-8) before it is decoded:
    /// true when the session served it from the text itself, and the transport then forgets
    /// the line; false, and the line is decoded and given to [`handle`](Self::handle) as
    /// usual. The default serves nothing.
    ///
    /// Only for what the session can read in place at less cost than a [`Message`] (the
    /// kit's usual `tools/call`, read with
    /// [`RequestView`](crate::jsonrpc::RequestView)). A session that returns false must not
    /// have acted on the line in any way (no answer, no state, no call of
    /// [`Outbound::will_block`]): the same message then reaches `handle`. The stdio server
    /// offers lines; HTTP transports do not.
    fn handle_line(&self, line: &str) -> bool {
        let _ = line;
        false
    }

    /// The peer is gone or the transport is shutting down: cancel outstanding work. No more
    /// messages will arrive; messages sent after this may be dropped.
    fn close(&self);

    /// The peer stopped listening for the answer to `id` (an HTTP client closed the response
    /// stream). In the 2026-07-28 era this is a cancellation; in the legacy era the answer may
    /// still go to a resumed stream, so the default does nothing.
    fn stream_closed(&self, id: &RequestId) {
        let _ = id;
    }
}

/// Blanket impl so an `Arc<S>` can be passed where a service is wanted.
impl<S: Service> Service for Arc<S> {
    fn open(&self, info: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
        (**self).open(info, out)
    }
}
