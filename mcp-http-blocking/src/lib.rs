//! Streamable HTTP for MCP on plain threads: a transport core that any HTTP server can mount,
//! a ready server (our own HTTP/1.1 connection layer over std sockets, one thread per
//! connection), and (feature `client`, on ureq) the client side of the transport that
//! `mcp-client` drives.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use mcp_core::service::{Service, Session, Outbound, SessionInfo};
//! # struct Svc;
//! # impl Service for Svc {
//! #     fn open(&self, _: SessionInfo, _: Arc<dyn Outbound>) -> Arc<dyn Session> { panic!("only compiled, never run") }
//! # }
//! use mcp_http_blocking::HttpServer;
//! let server = HttpServer::builder().bind("127.0.0.1:8080").build(Svc)?.spawn()?;
//! println!("serving on http://{}/mcp", server.local_addr());
//! server.shutdown();
//! # Ok::<(), mcp_http_blocking::Error>(())
//! ```
//!
//! Both eras on one endpoint (default `/mcp`): legacy sessions (2025-03-26 .. 2025-11-25,
//! `Mcp-Session-Id`, GET stream, DELETE, resumable streams), the 2024-11-05 HTTP+SSE transport
//! (`/sse` + `/messages`), and 2026-07-28 exchanges (one POST, one session of the service).
//! A POST is answered with plain JSON when the answer comes alone within
//! [`HttpConfig::json_window`] (or the client accepts only JSON), and with an SSE stream
//! otherwise.
#![deny(missing_docs)]

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "oauth")]
pub mod oauth;
#[cfg(feature = "server")]
mod server;

use std::fmt;

#[cfg(feature = "server")]
pub use server::{
    AuthConfig, AuthConfigBuilder, AuthError, Authorizer, Body, EventBytes, EventStore, HttpConfig,
    HttpConfigBuilder, HttpRequest, HttpResponse, HttpServer, HttpServerBuilder, InstanceTag,
    MemoryEventStore, OriginPolicy, ServerHandle, SseBody, SseNext, StateSealer, StateSecret,
    StreamEnd, StreamableHttp, Sweeper,
};

/// The header carrying the legacy session id.
pub const SESSION_HEADER: &str = "Mcp-Session-Id";
/// The header carrying the protocol revision.
pub const VERSION_HEADER: &str = "MCP-Protocol-Version";

/// Errors of this crate: the server's (binding, threads) and the HTTP client's (feature
/// `client`). Each variant keeps the error it stands for, reachable through
/// [`source`](std::error::Error::source).
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The address could not be resolved or bound.
    Bind(std::io::Error),
    /// Another I/O failure (starting a thread, cloning the listener, reading a stream).
    Io(std::io::Error),
    /// A URL this crate cannot use (the client's endpoint is not `http://` or `https://`).
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An instance tag ([`InstanceTag::new`]) that cannot stand in a session id: it must be
    /// 1 to 64 HTTP token characters, without `.` (which separates it from the random part).
    InvalidInstanceTag {
        /// The tag as given.
        tag: String,
    },
    /// A server configuration that would be unsafe to run: an authorizing server with every
    /// `Host` allowed and no public URL, say (tokens would be checked for a URL the client
    /// names).
    InvalidConfig {
        /// What is wrong and what to set.
        reason: &'static str,
    },
    /// A request of the HTTP client got no usable answer: the connection was refused, reset
    /// or timed out, or the answer's body could not be read (ureq's error).
    #[cfg(feature = "client")]
    Http {
        /// The URL requested.
        url: String,
        /// What ureq reported.
        source: ureq::Error,
    },
    /// The server refused a request of the HTTP client (401 or 403) and the authorization
    /// provider could not help.
    #[cfg(feature = "client")]
    Unauthorized {
        /// The HTTP status of the refusal.
        status: u16,
        /// Why the provider could not get past it.
        source: crate::client::AuthError,
    },
    /// The server answered with a status or a content type the client cannot use there (a
    /// 202 to a request, `text/html` where JSON or SSE was due, a stream it cannot resume).
    UnexpectedAnswer {
        /// The HTTP status.
        status: u16,
        /// The content type, when there was a body to judge.
        content_type: Option<String>,
    },
    /// A message from the server (a JSON body, an SSE event) is not a JSON-RPC message.
    Decode(mcp_core::jsonrpc::DecodeError),
    /// A stream from the server ended before it could: before the answer of its request,
    /// or (2024-11-05 HTTP+SSE) the one stream of the session. `attempts` counts the failed
    /// resumptions in a row (0: there was nothing to resume from); `source` is the last
    /// failure, `None` when the server simply ended the stream.
    StreamEnded {
        /// Failed attempts to resume the stream.
        attempts: u32,
        /// The last failure.
        source: Option<Box<Error>>,
    },
    /// The server refused (with an HTTP error) the client's answer to a request it sent on
    /// the stream of one of the client's requests: that request fails with this error, as
    /// the server will not get the answer it waits for.
    AnswerRefused {
        /// The method of the server's request.
        method: String,
        /// The HTTP status of the refusal.
        status: u16,
    },
    /// The server no longer knows the client's legacy session (HTTP 404).
    SessionLost {
        /// The server's endpoint.
        url: String,
    },
    /// A key given for `private_key_jwt` is not a PKCS#8 P-256 private key (feature
    /// `oauth-jwt`); the source is the key parser's error.
    #[cfg(feature = "oauth-jwt")]
    InvalidKey(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Bind(e) => write!(f, "cannot bind: {e}"),
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::InvalidUrl { url, reason } => write!(f, "invalid URL {url:?}: {reason}"),
            Error::InvalidInstanceTag { tag } => write!(
                f,
                "invalid instance tag {tag:?}: 1 to 64 of A-Z a-z 0-9 !#$%&'*+-^_`|~ (no '.')"
            ),
            Error::InvalidConfig { reason } => write!(f, "invalid configuration: {reason}"),
            #[cfg(feature = "client")]
            Error::Http { url, source } => write!(f, "{url}: {source}"),
            #[cfg(feature = "client")]
            Error::Unauthorized { status, source } => {
                write!(f, "HTTP {status}, and authorization failed: {source}")
            }
            Error::UnexpectedAnswer {
                status,
                content_type: None,
            } => write!(
                f,
                "the server answered HTTP {status}, which is not an answer here"
            ),
            Error::UnexpectedAnswer {
                status,
                content_type: Some(t),
            } => write!(f, "unexpected answer: HTTP {status}, content type {t:?}"),
            Error::Decode(e) => write!(
                f,
                "the server sent something that is not a JSON-RPC message: {e}"
            ),
            Error::StreamEnded {
                attempts: 0,
                source,
            } => {
                f.write_str("the server's stream ended early")?;
                source.as_ref().map_or(Ok(()), |s| write!(f, " ({s})"))
            }
            Error::StreamEnded { attempts, source } => {
                write!(
                    f,
                    "the server's stream broke; {attempts} attempts to resume it failed"
                )?;
                source
                    .as_ref()
                    .map_or(Ok(()), |s| write!(f, " (the last: {s})"))
            }
            #[cfg(feature = "oauth-jwt")]
            Error::InvalidKey(e) => write!(f, "not a PKCS#8 P-256 private key: {e}"),
            Error::AnswerRefused { method, status } => write!(
                f,
                "the server refused the answer to its {method} request (HTTP {status}), \
                 which this request waited on"
            ),
            Error::SessionLost { url } => {
                write!(
                    f,
                    "the server at {url} no longer knows the session (HTTP 404)"
                )
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Bind(e) | Error::Io(e) => Some(e),
            #[cfg(feature = "client")]
            Error::Http { source, .. } => Some(source),
            #[cfg(feature = "client")]
            Error::Unauthorized { source, .. } => Some(source),
            Error::Decode(e) => Some(e),
            #[cfg(feature = "oauth-jwt")]
            Error::InvalidKey(e) => Some(e.as_ref()),
            Error::StreamEnded {
                source: Some(e), ..
            } => Some(e.as_ref()),
            Error::InvalidUrl { .. }
            | Error::InvalidInstanceTag { .. }
            | Error::InvalidConfig { .. }
            | Error::UnexpectedAnswer { .. }
            | Error::StreamEnded { source: None, .. }
            | Error::AnswerRefused { .. }
            | Error::SessionLost { .. } => None,
        }
    }
}
