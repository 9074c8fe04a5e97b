//! What the client engine hands its caller: the step to take for each incoming message, the
//! server's requests, and how a handshake ended.

use serde_json::Value;
use serde_json::value::RawValue;

use crate::jsonrpc::{ErrorObject, Message, Notification, RequestId, codes};
use crate::version::{Era, ProtocolVersion};

use super::Answer;
use super::meta::ProgressToken;
use super::progress::ProgressUpdate;

/// A request from the server (legacy era: sampling, elicitation, roots, ...) for the
/// application to answer through [`ClientEngine::respond`](super::ClientEngine::respond).
#[derive(Debug, Clone)]
pub struct PeerRequest {
    /// The server's id.
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// The params as sent.
    pub params: Option<Box<RawValue>>,
    /// The token to report progress with, if the server asked for progress.
    pub progress_token: Option<ProgressToken>,
}

/// The handshake finished: requests may go out.
#[derive(Debug, Clone)]
pub struct Ready {
    /// The era chosen.
    pub era: Era,
    /// The revision both sides speak.
    pub version: ProtocolVersion,
    /// The server's `Implementation`, when it said.
    pub server_info: Option<Value>,
    /// The server's capabilities.
    pub capabilities: Value,
    /// The server's instructions for the model.
    pub instructions: Option<String>,
    /// Legacy era: the `notifications/initialized` to send before anything else.
    pub send: Option<Message>,
}

/// Why a handshake failed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The server answered `initialize` with a revision this client does not speak; the spec
    /// says to disconnect.
    UnsupportedVersion {
        /// What the server answered.
        answered: String,
    },
    /// `server/discover` listed no 2026-07-28-era revision this client speaks.
    NoCommonVersion {
        /// What the server listed.
        server_supports: Vec<String>,
    },
    /// The server answered the handshake with an error.
    Rejected(ErrorObject),
    /// The handshake result did not have the required shape: the decoding error (shared, so
    /// the error stays `Clone`).
    Malformed(std::sync::Arc<serde_json::Error>),
}

impl HandshakeError {
    /// The revisions a -32022 (unsupported protocol version) refusal lists in its
    /// `data.supported`; empty for every other failure, and when the server listed none.
    /// A client retries `server/discover` with a modern one of these it speaks
    /// ([`ClientEngine::retry_version`](super::ClientEngine::retry_version)) before it
    /// considers falling back.
    pub fn supported_versions(&self) -> Vec<&str> {
        match self {
            HandshakeError::Rejected(e) if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION => e
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// After a failed `server/discover`: whether the server is probably a legacy one, so
    /// trying `initialize` makes sense. Any error that is not one of the 2026-07-28 errors
    /// (-32020, -32021), and any result that is not a `DiscoverResult`, means "not a modern
    /// server"; -32022 and an empty intersection mean "no modern revision in common". A
    /// -32022 that lists a modern revision both sides speak calls for a retry with it first
    /// ([`HandshakeError::supported_versions`]); only when that fails too is falling back
    /// the remaining way.
    pub fn should_fall_back(&self) -> bool {
        match self {
            HandshakeError::NoCommonVersion { .. } => true,
            HandshakeError::Rejected(e) => !matches!(
                e.code,
                codes::HEADER_MISMATCH | codes::MISSING_REQUIRED_CLIENT_CAPABILITY
            ),
            // A result that is no `DiscoverResult` (some legacy servers answer every unknown
            // method with `{}`) is not a modern server either.
            HandshakeError::Malformed(_) => true,
            HandshakeError::UnsupportedVersion { .. } => false,
        }
    }
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandshakeError::UnsupportedVersion { answered } => {
                write!(
                    f,
                    "the server answered protocol version {answered:?}, which this client does not speak"
                )
            }
            HandshakeError::NoCommonVersion { server_supports } => write!(
                f,
                "no 2026-07-28-era protocol version in common (server supports {server_supports:?})"
            ),
            HandshakeError::Rejected(e) => write!(f, "the server refused the handshake: {e}"),
            HandshakeError::Malformed(why) => write!(f, "malformed handshake result: {why}"),
        }
    }
}

impl std::error::Error for HandshakeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HandshakeError::Malformed(e) => Some(e.as_ref()),
            HandshakeError::Rejected(e) => Some(e),
            _ => None,
        }
    }
}

/// What the caller should do with one incoming message.
#[derive(Debug)]
pub enum ClientStep {
    /// Send this back now (a ping answer, or an error for a request we cannot take).
    Reply(Message),
    /// The handshake succeeded.
    Ready(Ready),
    /// The handshake failed; the engine is back where it started.
    HandshakeFailed(HandshakeError),
    /// A server request for the application.
    Dispatch(PeerRequest),
    /// The server cancelled its request `id`: stop working on it; no answer will be sent.
    Cancel {
        /// The cancelled request.
        id: RequestId,
        /// The server's reason.
        reason: Option<String>,
    },
    /// The server ended our `subscriptions/listen` (2026-07-28) itself with
    /// `notifications/cancelled`, how a server closes that stream on stdio. The request is no
    /// longer pending. Any other cancellation from the server names a request of the
    /// server's, never one of ours, even when the ids are equal.
    EndedByServer {
        /// Our request.
        id: RequestId,
        /// Its method.
        method: String,
        /// The server's reason.
        reason: Option<String>,
    },
    /// The server reported progress on one of our requests.
    Progress(ProgressUpdate),
    /// The answer to one of our requests (results of `resultType` `"input_required"` come as
    /// [`Outcome::InputRequired`](super::Outcome::InputRequired)).
    Answer(Answer),
    /// Any other notification from the server (log messages, list changes, ...).
    Notification(Notification),
    /// Nothing to do.
    Nothing,
}
