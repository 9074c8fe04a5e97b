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

#[cfg(any(feature = "server", feature = "client"))]
mod base64;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "oauth")]
pub mod oauth;
#[cfg(feature = "server")]
mod server;

use std::fmt;

#[cfg(feature = "server")]
pub use server::{
    AuthConfig, AuthError, Authorizer, Body, EventStore, HttpConfig, HttpRequest, HttpResponse,
    HttpServer, HttpServerBuilder, MemoryEventStore, OriginPolicy, ServerHandle, SseBody, SseNext,
    StreamEnd, StreamableHttp, Sweeper, decode_header_value,
};

/// The header carrying the legacy session id.
pub const SESSION_HEADER: &str = "Mcp-Session-Id";
/// The header carrying the protocol revision.
pub const VERSION_HEADER: &str = "MCP-Protocol-Version";

/// Errors of this crate.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The address could not be resolved or bound.
    Bind(std::io::Error),
    /// Another I/O failure (starting a thread, cloning the listener).
    Io(std::io::Error),
    /// A URL this crate cannot use (the client's endpoint is not `http://` or `https://`).
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Bind(e) => write!(f, "cannot bind: {e}"),
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::InvalidUrl { url, reason } => write!(f, "invalid URL {url:?}: {reason}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Bind(e) | Error::Io(e) => Some(e),
            Error::InvalidUrl { .. } => None,
        }
    }
}
