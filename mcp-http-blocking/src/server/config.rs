//! Every knob of the transport, with defaults that are safe for a local server.

use std::sync::Arc;
use std::time::Duration;

use mcp_core::service::Sealer;
use mcp_core::version::VersionSet;

use crate::server::seal::StateSecret;
use crate::server::security::{Authorizer, OriginPolicy};
use crate::server::store::EventStore;

/// Settings of the transport core (the HTTP-server-independent part).
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The MCP endpoint path (default `/mcp`).
    pub(crate) path: String,
    /// Which protocol revisions are served (default: all, both eras).
    pub(crate) versions: VersionSet,
    /// Serve the standalone GET stream of legacy sessions (otherwise GET is 405).
    pub(crate) enable_get_stream: bool,
    /// Let clients end legacy sessions with DELETE (otherwise 405).
    pub(crate) enable_delete: bool,
    /// Serve the deprecated HTTP+SSE transport of 2024-11-05 at `sse_path` / `messages_path`.
    pub(crate) enable_legacy_sse: bool,
    /// GET path of the 2024-11-05 transport (default `/sse`).
    pub(crate) sse_path: String,
    /// POST path of the 2024-11-05 transport (default `/messages`).
    pub(crate) messages_path: String,
    /// A legacy session unused this long is closed (default 30 min).
    pub(crate) session_idle: Duration,
    /// How often the sweeper looks for idle sessions (default: a quarter of `session_idle`,
    /// at most 30 s).
    pub(crate) sweep_interval: Option<Duration>,
    /// Live legacy sessions at most (default 1,024); see `max_sessions`.
    pub(crate) max_sessions: usize,
    /// Open SSE streams per legacy session at most (default 16); beyond it 429.
    pub(crate) max_streams_per_session: usize,
    /// Largest request body (default 4 MiB); larger gets 413.
    pub(crate) max_body: usize,
    /// Largest total size of request header names and values (default 16 KiB); larger gets 431.
    pub(crate) max_header_bytes: usize,
    /// Capacity of each stream's channel (default 64 messages).
    pub(crate) stream_buffer: usize,
    /// How long a sender waits on a full stream before it gives the stream up as a slow or
    /// gone reader (default 10 s).
    pub(crate) send_timeout: Duration,
    /// Interval of `:` keep-alive comments on idle streams (default 15 s).
    pub(crate) keepalive: Duration,
    /// The `retry:` hint (milliseconds) sent in priming events (default 1,000).
    pub(crate) retry_ms: u64,
    /// Events kept per stream for resumption by the default store (default 1,000).
    pub(crate) history: usize,
    /// The store behind resumption (default: in memory, `history` events per stream).
    pub(crate) event_store: Option<Arc<dyn EventStore>>,
    /// How long a POST waits for the first message before it commits to an SSE answer; an
    /// answer that arrives first and alone within this window goes back as plain JSON, which
    /// also lets error answers carry their HTTP status (default 100 ms).
    pub(crate) json_window: Duration,
    /// Longest wait for an answer when the client accepts only JSON (default 5 min).
    pub(crate) request_timeout: Duration,
    /// Accepted `Host` header values (host part, no port). `None`: loopback names only
    /// (`localhost`, `127.0.0.1`, `[::1]`), which defeats DNS rebinding for a local server.
    pub(crate) allowed_hosts: Option<Vec<String>>,
    /// Accepted `Origin` values (a request with another Origin gets 403).
    pub(crate) allowed_origins: OriginPolicy,
    /// Answer CORS preflights and add CORS headers for allowed origins (default true).
    pub(crate) cors: bool,
    /// Bearer-token authorization (default none).
    pub(crate) auth: Option<AuthConfig>,
    /// Prefix of the legacy session ids this instance mints, `TAG.<random>` (default none).
    pub(crate) instance_tag: Option<InstanceTag>,
    /// The secret the instances of one server share, to open each other's sealed states and
    /// cursors (default none: a key of this process's own).
    pub(crate) state_secret: Option<StateSecret>,
    /// A previous secret, during a rotation: opens, never seals.
    pub(crate) previous_state_secret: Option<StateSecret>,
    /// A sealer of the caller's own, in place of the built-in one.
    pub(crate) sealer: Option<Arc<dyn Sealer>>,
}

impl HttpConfig {
    /// A builder starting from the defaults.
    pub fn builder() -> HttpConfigBuilder {
        HttpConfigBuilder {
            config: HttpConfig::default(),
        }
    }

    /// The MCP endpoint path (default `/mcp`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Which protocol revisions are served (default: all, both eras).
    pub fn versions(&self) -> &VersionSet {
        &self.versions
    }

    /// Serve the standalone GET stream of legacy sessions (otherwise GET is 405).
    pub fn enable_get_stream(&self) -> bool {
        self.enable_get_stream
    }

    /// Let clients end legacy sessions with DELETE (otherwise 405).
    pub fn enable_delete(&self) -> bool {
        self.enable_delete
    }

    /// Serve the deprecated HTTP+SSE transport of 2024-11-05 at `sse_path` / `messages_path`.
    pub fn enable_legacy_sse(&self) -> bool {
        self.enable_legacy_sse
    }

    /// GET path of the 2024-11-05 transport (default `/sse`).
    pub fn sse_path(&self) -> &str {
        &self.sse_path
    }

    /// POST path of the 2024-11-05 transport (default `/messages`).
    pub fn messages_path(&self) -> &str {
        &self.messages_path
    }

    /// A legacy session unused this long is closed (default 30 min).
    pub fn session_idle(&self) -> Duration {
        self.session_idle
    }

    /// How often the sweeper looks for idle sessions (default: a quarter of `session_idle`,
    /// at most 30 s).
    pub fn sweep_interval(&self) -> Option<Duration> {
        self.sweep_interval
    }

    /// Live legacy sessions at most (default 1,024). An `initialize` beyond it closes the
    /// session idle longest (no connection on any of its streams; its client gets 404 next
    /// and starts anew), or gets 503 with `Retry-After` when every session is busy.
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// Open SSE streams per legacy session at most (default 16); beyond it 429.
    pub fn max_streams_per_session(&self) -> usize {
        self.max_streams_per_session
    }

    /// Largest request body (default 4 MiB); larger gets 413.
    pub fn max_body(&self) -> usize {
        self.max_body
    }

    /// Largest total size of request header names and values (default 16 KiB); larger gets 431.
    pub fn max_header_bytes(&self) -> usize {
        self.max_header_bytes
    }

    /// Capacity of each stream's channel (default 64 messages).
    pub fn stream_buffer(&self) -> usize {
        self.stream_buffer
    }

    /// How long a sender waits on a full stream before it gives the stream up as a slow or
    /// gone reader (default 10 s).
    pub fn send_timeout(&self) -> Duration {
        self.send_timeout
    }

    /// Interval of `:` keep-alive comments on idle streams (default 15 s).
    pub fn keepalive(&self) -> Duration {
        self.keepalive
    }

    /// The `retry:` hint (milliseconds) sent in priming events (default 1,000).
    pub fn retry_ms(&self) -> u64 {
        self.retry_ms
    }

    /// Events kept per stream for resumption by the default store (default 1,000).
    pub fn history(&self) -> usize {
        self.history
    }

    /// The store behind resumption (default: in memory, `history` events per stream).
    pub fn event_store(&self) -> Option<&Arc<dyn EventStore>> {
        self.event_store.as_ref()
    }

    /// How long a POST waits for the first message before it commits to an SSE answer; an
    /// answer that arrives first and alone within this window goes back as plain JSON, which
    /// also lets error answers carry their HTTP status (default 100 ms).
    pub fn json_window(&self) -> Duration {
        self.json_window
    }

    /// Longest wait for an answer when the client accepts only JSON (default 5 min).
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Accepted `Host` header values (host part, no port). `None`: loopback names only
    /// (`localhost`, `127.0.0.1`, `[::1]`), which defeats DNS rebinding for a local server.
    pub fn allowed_hosts(&self) -> Option<&[String]> {
        self.allowed_hosts.as_deref()
    }

    /// Accepted `Origin` values (a request with another Origin gets 403).
    pub fn allowed_origins(&self) -> &OriginPolicy {
        &self.allowed_origins
    }

    /// Answer CORS preflights and add CORS headers for allowed origins (default true).
    pub fn cors(&self) -> bool {
        self.cors
    }

    /// Bearer-token authorization (default none).
    pub fn auth(&self) -> Option<&AuthConfig> {
        self.auth.as_ref()
    }

    /// Prefix of the legacy session ids this instance mints, `TAG.<random>` (default none).
    pub fn instance_tag(&self) -> Option<&InstanceTag> {
        self.instance_tag.as_ref()
    }
}

/// Builds a [`HttpConfig`]: one method per setting, named after it, then
/// [`build`](HttpConfigBuilder::build).
#[derive(Clone)]
#[must_use]
pub struct HttpConfigBuilder {
    config: HttpConfig,
}

impl HttpConfigBuilder {
    /// The MCP endpoint path (default `/mcp`).
    pub fn path(mut self, v: impl Into<String>) -> Self {
        self.config.path = v.into();
        self
    }

    /// Which protocol revisions are served (default: all, both eras).
    pub fn versions(mut self, v: VersionSet) -> Self {
        self.config.versions = v;
        self
    }

    /// Serve the standalone GET stream of legacy sessions (otherwise GET is 405).
    pub fn enable_get_stream(mut self, v: bool) -> Self {
        self.config.enable_get_stream = v;
        self
    }

    /// Let clients end legacy sessions with DELETE (otherwise 405).
    pub fn enable_delete(mut self, v: bool) -> Self {
        self.config.enable_delete = v;
        self
    }

    /// Serve the deprecated HTTP+SSE transport of 2024-11-05 at `sse_path` / `messages_path`.
    pub fn enable_legacy_sse(mut self, v: bool) -> Self {
        self.config.enable_legacy_sse = v;
        self
    }

    /// GET path of the 2024-11-05 transport (default `/sse`).
    pub fn sse_path(mut self, v: impl Into<String>) -> Self {
        self.config.sse_path = v.into();
        self
    }

    /// POST path of the 2024-11-05 transport (default `/messages`).
    pub fn messages_path(mut self, v: impl Into<String>) -> Self {
        self.config.messages_path = v.into();
        self
    }

    /// A legacy session unused this long is closed (default 30 min).
    pub fn session_idle(mut self, v: Duration) -> Self {
        self.config.session_idle = v;
        self
    }

    /// How often the sweeper looks for idle sessions (default: a quarter of `session_idle`,
    /// at most 30 s).
    pub fn sweep_interval(mut self, v: Duration) -> Self {
        self.config.sweep_interval = Some(v);
        self
    }

    /// Live legacy sessions at most (default 1,024). An `initialize` beyond it closes the
    /// session idle longest, or gets 503 with `Retry-After` when every session is busy.
    pub fn max_sessions(mut self, v: usize) -> Self {
        self.config.max_sessions = v;
        self
    }

    /// Open SSE streams per legacy session at most (default 16); beyond it 429.
    pub fn max_streams_per_session(mut self, v: usize) -> Self {
        self.config.max_streams_per_session = v;
        self
    }

    /// Largest request body (default 4 MiB); larger gets 413.
    pub fn max_body(mut self, v: usize) -> Self {
        self.config.max_body = v;
        self
    }

    /// Largest total size of request header names and values (default 16 KiB); larger gets 431.
    pub fn max_header_bytes(mut self, v: usize) -> Self {
        self.config.max_header_bytes = v;
        self
    }

    /// Capacity of each stream's channel (default 64 messages).
    pub fn stream_buffer(mut self, v: usize) -> Self {
        self.config.stream_buffer = v;
        self
    }

    /// How long a sender waits on a full stream before it gives the stream up as a slow or
    /// gone reader (default 10 s).
    pub fn send_timeout(mut self, v: Duration) -> Self {
        self.config.send_timeout = v;
        self
    }

    /// Interval of `:` keep-alive comments on idle streams (default 15 s).
    pub fn keepalive(mut self, v: Duration) -> Self {
        self.config.keepalive = v;
        self
    }

    /// The `retry:` hint (milliseconds) sent in priming events (default 1,000).
    pub fn retry_ms(mut self, v: u64) -> Self {
        self.config.retry_ms = v;
        self
    }

    /// Events kept per stream for resumption by the default store (default 1,000).
    pub fn history(mut self, v: usize) -> Self {
        self.config.history = v;
        self
    }

    /// The store behind resumption (default: in memory, `history` events per stream).
    pub fn event_store(mut self, v: Arc<dyn EventStore>) -> Self {
        self.config.event_store = Some(v);
        self
    }

    /// How long a POST waits for the first message before it commits to an SSE answer; an
    /// answer that arrives first and alone within this window goes back as plain JSON, which
    /// also lets error answers carry their HTTP status (default 100 ms).
    pub fn json_window(mut self, v: Duration) -> Self {
        self.config.json_window = v;
        self
    }

    /// Longest wait for an answer when the client accepts only JSON (default 5 min).
    pub fn request_timeout(mut self, v: Duration) -> Self {
        self.config.request_timeout = v;
        self
    }

    /// Accepted `Host` header values (host part, no port). `None`: loopback names only
    /// (`localhost`, `127.0.0.1`, `[::1]`), which defeats DNS rebinding for a local server.
    pub fn allowed_hosts(mut self, v: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.config.allowed_hosts = Some(v.into_iter().map(Into::into).collect());
        self
    }

    /// Accepted `Origin` values (a request with another Origin gets 403).
    pub fn allowed_origins(mut self, v: OriginPolicy) -> Self {
        self.config.allowed_origins = v;
        self
    }

    /// Answer CORS preflights and add CORS headers for allowed origins (default true).
    pub fn cors(mut self, v: bool) -> Self {
        self.config.cors = v;
        self
    }

    /// Bearer-token authorization (default none).
    pub fn auth(mut self, v: AuthConfig) -> Self {
        self.config.auth = Some(v);
        self
    }

    /// Prefix of the legacy session ids this instance mints, `TAG.<random>` (default none).
    pub fn instance_tag(mut self, v: InstanceTag) -> Self {
        self.config.instance_tag = Some(v);
        self
    }

    /// Seals 2026-07-28 `requestState` and pagination cursors under a key derived from
    /// `secret` instead of one drawn at random when the transport starts, so that every
    /// instance of this server configured with the same secret continues the others'
    /// `input_required` retries and pages (behind a load balancer, any request may land on any
    /// instance). See [`StateSealer`](crate::StateSealer).
    pub fn state_secret(mut self, secret: StateSecret) -> Self {
        self.config.state_secret = Some(secret);
        self
    }

    /// During a rotation: states and cursors sealed under `secret` are still accepted (until
    /// they expire), while new ones are sealed under [`HttpConfigBuilder::state_secret`].
    /// Ignored without a current secret.
    pub fn previous_state_secret(mut self, secret: StateSecret) -> Self {
        self.config.previous_state_secret = Some(secret);
        self
    }

    /// A sealer of your own (a key held in a KMS, say) in place of the built-in
    /// XChaCha20-Poly1305 one; the secrets above are then unused.
    pub fn sealer(mut self, sealer: Arc<dyn Sealer>) -> Self {
        self.config.sealer = Some(sealer);
        self
    }

    /// The finished [`HttpConfig`].
    pub fn build(self) -> HttpConfig {
        self.config
    }
}

/// OAuth resource-server settings.
#[derive(Clone)]
#[non_exhaustive]
pub struct AuthConfig {
    /// Validates tokens.
    pub(crate) authorizer: Arc<dyn Authorizer>,
    /// The authorization servers listed in the protected resource metadata (RFC 9728).
    pub(crate) authorization_servers: Vec<String>,
    /// Scopes listed in the metadata and in the `WWW-Authenticate` challenge.
    pub(crate) scopes: Vec<String>,
    /// The public base URL (`https://example.com`) used to build the resource and metadata
    /// URLs; `None`: `http://` plus the request's Host header.
    pub(crate) public_url: Option<String>,
}

impl AuthConfig {
    /// A builder starting from the defaults, with the settings that have none.
    pub fn builder(authorizer: Arc<dyn Authorizer>) -> AuthConfigBuilder {
        AuthConfigBuilder {
            config: AuthConfig {
                authorizer,
                authorization_servers: Vec::new(),
                scopes: Vec::new(),
                public_url: None,
            },
        }
    }

    /// Validates tokens.
    pub fn authorizer(&self) -> &Arc<dyn Authorizer> {
        &self.authorizer
    }

    /// The authorization servers listed in the protected resource metadata (RFC 9728).
    pub fn authorization_servers(&self) -> &[String] {
        &self.authorization_servers
    }

    /// Scopes listed in the metadata and in the `WWW-Authenticate` challenge.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The public base URL (`https://example.com`) used to build the resource and metadata
    /// URLs; `None`: `http://` plus the request's Host header.
    pub fn public_url(&self) -> Option<&str> {
        self.public_url.as_deref()
    }
}

/// Builds a [`AuthConfig`]: one method per setting, named after it, then
/// [`build`](AuthConfigBuilder::build).
#[derive(Clone)]
#[must_use]
pub struct AuthConfigBuilder {
    config: AuthConfig,
}

impl AuthConfigBuilder {
    /// The authorization servers listed in the protected resource metadata (RFC 9728).
    /// Without any (tokens issued out of band, a fixed one), no metadata is served and the
    /// `WWW-Authenticate` challenge points at none: MCP wants the metadata to name at least
    /// one.
    pub fn authorization_servers(mut self, v: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.config.authorization_servers = v.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes listed in the metadata and in the `WWW-Authenticate` challenge.
    pub fn scopes(mut self, v: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.config.scopes = v.into_iter().map(Into::into).collect();
        self
    }

    /// The public base URL (`https://example.com`) used to build the resource and metadata
    /// URLs, and so the audience tokens are checked for. Unset: `http://` plus the request's
    /// `Host`, accepted only when `Host` is an allowed name and (on [`crate::HttpServer`])
    /// names the port it listens on, else 421; with every `Host` allowed (`*`) it must be
    /// set ([`crate::HttpServer`] refuses to build without it). Set it behind a proxy or TLS
    /// terminator.
    pub fn public_url(mut self, v: impl Into<String>) -> Self {
        self.config.public_url = Some(v.into());
        self
    }

    /// The finished [`AuthConfig`].
    pub fn build(self) -> AuthConfig {
        self.config
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".to_owned(),
            versions: VersionSet::all(),
            enable_get_stream: true,
            enable_delete: true,
            enable_legacy_sse: true,
            sse_path: "/sse".to_owned(),
            messages_path: "/messages".to_owned(),
            session_idle: Duration::from_secs(30 * 60),
            sweep_interval: None,
            max_sessions: 1024,
            max_streams_per_session: 16,
            max_body: 4 * 1024 * 1024,
            max_header_bytes: 16 * 1024,
            stream_buffer: 64,
            send_timeout: Duration::from_secs(10),
            keepalive: Duration::from_secs(15),
            retry_ms: 1000,
            history: 1000,
            event_store: None,
            json_window: Duration::from_millis(100),
            request_timeout: Duration::from_secs(300),
            allowed_hosts: None,
            allowed_origins: OriginPolicy::default(),
            cors: true,
            auth: None,
            instance_tag: None,
            state_secret: None,
            previous_state_secret: None,
            sealer: None,
        }
    }
}

/// The name of one instance of a server, put in front of the legacy session ids it mints
/// (`node-a.3f9c…`).
///
/// Several instances behind a load balancer: a legacy session lives in the memory of the
/// instance that created it, so every request of the session must reach that instance. With
/// the tag in the session id, a plain proxy can route on the `Mcp-Session-Id` header alone
/// (nginx: a `map` from the part before the first `.` to an upstream), with no sticky-session
/// module and no shared session store; `initialize`, which has no id yet, goes anywhere. When
/// the instance is gone, the proxy has nowhere to send the session and the client gets 404,
/// which tells a conforming client to start a new session.
///
/// 1 to 64 characters of the HTTP token set (RFC 9110 `tchar`) other than `.`, which separates
/// the tag from the random part; so the id stays a valid header value and splits unambiguously.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceTag(String);

impl InstanceTag {
    /// Checks and wraps a tag.
    ///
    /// # Errors
    /// Empty, longer than 64 characters, or a character outside the token set (or a `.`):
    /// [`Error::InvalidInstanceTag`](crate::Error::InvalidInstanceTag).
    pub fn new(tag: impl Into<String>) -> Result<InstanceTag, crate::Error> {
        let tag = tag.into();
        let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-^_`|~".contains(&b);
        if tag.is_empty() || tag.len() > 64 || !tag.bytes().all(tchar) {
            return Err(crate::Error::InvalidInstanceTag { tag });
        }
        Ok(InstanceTag(tag))
    }

    /// The tag.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl HttpConfig {
    /// The effective sweep interval.
    pub(crate) fn sweep_every(&self) -> Duration {
        self.sweep_interval.unwrap_or_else(|| {
            (self.session_idle / 4)
                .min(Duration::from_secs(30))
                .max(Duration::from_millis(10))
        })
    }
}
