//! Every knob of the transport, with defaults that are safe for a local server.

use std::sync::Arc;
use std::time::Duration;

use mcp_core::version::VersionSet;

use crate::server::security::{Authorizer, OriginPolicy};
use crate::server::store::EventStore;

/// Settings of the transport core (the HTTP-server-independent part).
#[derive(Clone)]
pub struct HttpConfig {
    /// The MCP endpoint path (default `/mcp`).
    pub path: String,
    /// Which protocol revisions are served (default: all, both eras).
    pub versions: VersionSet,
    /// Serve the standalone GET stream of legacy sessions (otherwise GET is 405).
    pub enable_get_stream: bool,
    /// Let clients end legacy sessions with DELETE (otherwise 405).
    pub enable_delete: bool,
    /// Serve the deprecated HTTP+SSE transport of 2024-11-05 at `sse_path` / `messages_path`.
    pub enable_legacy_sse: bool,
    /// GET path of the 2024-11-05 transport (default `/sse`).
    pub sse_path: String,
    /// POST path of the 2024-11-05 transport (default `/messages`).
    pub messages_path: String,
    /// A legacy session unused this long is closed (default 30 min).
    pub session_idle: Duration,
    /// How often the sweeper looks for idle sessions (default: a quarter of `session_idle`,
    /// at most 30 s).
    pub sweep_interval: Option<Duration>,
    /// Live legacy sessions at most (default 1,024); `initialize` beyond it gets 503.
    pub max_sessions: usize,
    /// Open SSE streams per legacy session at most (default 16); beyond it 429.
    pub max_streams_per_session: usize,
    /// Largest request body (default 4 MiB); larger gets 413.
    pub max_body: usize,
    /// Largest total size of request header names and values (default 16 KiB); larger gets 431.
    pub max_header_bytes: usize,
    /// Capacity of each stream's channel (default 64 messages).
    pub stream_buffer: usize,
    /// How long a sender waits on a full stream before it gives the stream up as a slow or
    /// gone reader (default 10 s).
    pub send_timeout: Duration,
    /// Interval of `:` keep-alive comments on idle streams (default 15 s).
    pub keepalive: Duration,
    /// The `retry:` hint (milliseconds) sent in priming events (default 1,000).
    pub retry_ms: u64,
    /// Events kept per stream for resumption by the default store (default 1,000).
    pub history: usize,
    /// The store behind resumption (default: in memory, `history` events per stream).
    pub event_store: Option<Arc<dyn EventStore>>,
    /// How long a POST waits for the first message before it commits to an SSE answer; an
    /// answer that arrives first and alone within this window goes back as plain JSON, which
    /// also lets error answers carry their HTTP status (default 100 ms).
    pub json_window: Duration,
    /// Longest wait for an answer when the client accepts only JSON (default 5 min).
    pub request_timeout: Duration,
    /// Accepted `Host` header values (host part, no port). `None`: loopback names only
    /// (`localhost`, `127.0.0.1`, `[::1]`), which defeats DNS rebinding for a local server.
    pub allowed_hosts: Option<Vec<String>>,
    /// Accepted `Origin` values (a request with another Origin gets 403).
    pub allowed_origins: OriginPolicy,
    /// Answer CORS preflights and add CORS headers for allowed origins (default true).
    pub cors: bool,
    /// Bearer-token authorization (default none).
    pub auth: Option<AuthConfig>,
}

/// OAuth resource-server settings.
#[derive(Clone)]
pub struct AuthConfig {
    /// Validates tokens.
    pub authorizer: Arc<dyn Authorizer>,
    /// The authorization servers listed in the protected resource metadata (RFC 9728).
    pub authorization_servers: Vec<String>,
    /// Scopes listed in the metadata and in the `WWW-Authenticate` challenge.
    pub scopes: Vec<String>,
    /// The public base URL (`https://example.com`) used to build the resource and metadata
    /// URLs; `None`: `http://` plus the request's Host header.
    pub public_url: Option<String>,
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
        }
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
