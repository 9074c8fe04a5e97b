//! The sans-I/O protocol engine: the rules of MCP for one peer, as a state machine the caller
//! drives with messages and `Instant`s.
//!
//! [`ServerEngine`] and [`ClientEngine`] know the lifecycle of both eras (the `initialize`
//! handshake of 2024-11-05 .. 2025-11-25, the per-request `_meta` envelope of 2026-07-28),
//! capability gates in both directions, request ids, the pending tables, cancellation, progress
//! and timeouts. They never read a clock, start a thread or touch a socket: every rule is
//! testable by feeding one engine's output into the other, and every transport (stdio, HTTP, an
//! in-memory pipe) drives the same engine.
//!
//! ```
//! use std::time::Instant;
//! use mcp_core::engine::{ServerConfig, ServerEngine, ServerStep};
//! use mcp_core::jsonrpc::decode;
//! use serde_json::json;
//!
//! let mut server = ServerEngine::new(
//!     ServerConfig::builder(json!({"name": "demo", "version": "1.0.0"}))
//!         .capabilities(json!({"tools": {}}))
//!         .build(),
//! );
//! let call = decode(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",
//!     "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!              "io.modelcontextprotocol/clientCapabilities":{}}}}"#).unwrap();
//! let ServerStep::Dispatch(ctx) = server.handle(call, Instant::now()) else { panic!() };
//! assert_eq!(ctx.method, "tools/call");
//! let reply = server.respond_value(&ctx.id, Ok(json!({"content": []}))).unwrap();
//! // 2026-07-28 results always carry a resultType; the engine adds it.
//! assert!(String::from_utf8(reply.to_vec()).unwrap().contains(r#""resultType":"complete""#));
//! ```

use std::fmt;

use serde_json::value::RawValue;

use crate::jsonrpc::{ErrorObject, RequestId};
use crate::version::{Era, ProtocolVersion};

mod client;
mod client_step;
mod gates;
mod meta;
mod pending;
mod progress;
mod server;
mod server_step;

pub use client::{ClientConfig, ClientConfigBuilder, ClientEngine};
pub use client_step::{ClientStep, HandshakeError, PeerRequest, Ready};
pub use meta::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY, ProgressToken,
    SERVER_INFO_KEY, SUBSCRIPTION_ID_KEY, missing_client_capability_error,
    unsupported_version_error,
};
pub use pending::{Expired, Timeout};
pub use progress::ProgressUpdate;
pub use server::{ServerConfig, ServerConfigBuilder, ServerEngine};
pub use server_step::{ClientNotice, ListKind, PlainRequest, RequestContext, ServerStep};

/// An answer held as a `Value`, as the raw text `respond` takes.
fn raw_outcome(
    outcome: Result<serde_json::Value, ErrorObject>,
) -> Result<Box<RawValue>, ErrorObject> {
    outcome.and_then(|v| crate::jsonrpc::to_raw(&v).map_err(ErrorObject::internal))
}

/// How a request this side sent ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// A final result (`resultType` `"complete"`, or absent as from every legacy peer).
    Complete(Box<RawValue>),
    /// 2026-07-28: the server needs input first (`InputRequiredResult`); answer its
    /// `inputRequests` and retry with a new id.
    InputRequired(Box<RawValue>),
    /// A result of another `resultType` (for example `"task"` from the tasks extension).
    Other {
        /// The `resultType`.
        result_type: String,
        /// The result.
        result: Box<RawValue>,
    },
    /// An error response.
    Error(ErrorObject),
}

impl Outcome {
    /// Sorts a result by its `resultType`.
    pub fn from_result(result: Box<RawValue>) -> Outcome {
        let kind = meta::result_type(&result);
        match kind.as_str() {
            "complete" => Outcome::Complete(result),
            "input_required" => Outcome::InputRequired(result),
            _ => Outcome::Other {
                result_type: kind,
                result,
            },
        }
    }
}

/// The answer to one of our own requests, matched to the pending table.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Our request's id.
    pub id: RequestId,
    /// Its method.
    pub method: String,
    /// The peer request it was made for (server role), if any.
    pub related_to: Option<RequestId>,
    /// How it ended.
    pub outcome: Outcome,
}

/// Why the engine will not send a request: the protocol forbids it, so sending it would only
/// earn an error from the peer (or break the session).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refused {
    /// The lifecycle is not there yet (no `initialize` exchanged, or no handshake at all).
    NotReady(&'static str),
    /// The method does not exist in the era of the connection (for example any
    /// server-to-client request in 2026-07-28, or `ping` there).
    WrongEra {
        /// The method.
        method: String,
        /// The era.
        era: Era,
    },
    /// The peer did not declare the capability the method needs.
    MissingCapability {
        /// The method.
        method: String,
        /// The capability, as a dotted path (`elicitation.url`).
        capability: String,
    },
    /// The negotiated revision predates the method (or its mode).
    UnsupportedByVersion {
        /// The method.
        method: String,
        /// The negotiated revision.
        version: ProtocolVersion,
    },
    /// The params are not a JSON object.
    InvalidParams(String),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::NotReady(why) => write!(f, "not ready: {why}"),
            Refused::WrongEra { method, era } => {
                write!(f, "{method} does not exist in the {era:?} era of MCP")
            }
            Refused::MissingCapability { method, capability } => write!(
                f,
                "{method} needs the peer capability `{capability}`, which it did not declare"
            ),
            Refused::UnsupportedByVersion { method, version } => {
                write!(f, "{method} is not part of protocol revision {version}")
            }
            Refused::InvalidParams(why) => write!(f, "invalid params: {why}"),
        }
    }
}

impl std::error::Error for Refused {}
