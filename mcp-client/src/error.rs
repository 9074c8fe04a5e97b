//! The crate's one error type.

use std::fmt;
use std::io;

use mcp_core::engine::{HandshakeError, Refused};
use mcp_core::jsonrpc::ErrorObject;

/// Why a client operation failed.
///
/// The variants say what the caller can do about it: [`Error::Closed`] means the connection is
/// gone for good (reconnect), [`Error::Timeout`] and [`Error::Cancelled`] end one call only,
/// [`Error::Rpc`] is the server's own answer, [`Error::Refused`] was decided locally without
/// sending anything (the protocol forbids the request).
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Starting or talking to the transport failed (for example the server program could not
    /// be started).
    Io(io::Error),
    /// The connection is closed: the server exited, closed its output, or the client was
    /// closed. The text says which (with the exit status when known).
    Closed(String),
    /// No answer within the request's timeout; `notifications/cancelled` was sent.
    Timeout {
        /// The method that timed out.
        method: String,
    },
    /// The call was cancelled through its [`CancelHandle`](crate::CancelHandle).
    Cancelled,
    /// The server ended the request itself (`notifications/cancelled` from the server).
    EndedByServer {
        /// The server's reason, if it gave one.
        reason: Option<String>,
    },
    /// The server answered with a JSON-RPC error.
    Rpc(ErrorObject),
    /// The handshake (`server/discover` or `initialize`) failed.
    Handshake(String),
    /// The request was not sent: the protocol forbids it on this connection (wrong era,
    /// capability the server did not declare, handshake not done, params not an object).
    Refused(Refused),
    /// A result from the server did not have the expected shape.
    Decode(String),
    /// The server asked for input (2026-07-28 `input_required`) that this client cannot give:
    /// no handler for it, or the handler failed.
    Input(String),
    /// The server kept asking for more input beyond the client's limit of rounds.
    TooManyInputRounds(usize),
    /// The transport (stdio child process, HTTP) failed.
    Transport(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::Closed(why) => write!(f, "the MCP connection is closed: {why}"),
            Error::Timeout { method } => write!(f, "{method} timed out"),
            Error::Cancelled => f.write_str("the request was cancelled"),
            Error::EndedByServer { reason: Some(r) } => {
                write!(f, "the server ended the request: {r}")
            }
            Error::EndedByServer { reason: None } => f.write_str("the server ended the request"),
            Error::Rpc(e) => write!(f, "the server answered with an error: {e}"),
            Error::Handshake(why) => write!(f, "MCP handshake failed: {why}"),
            Error::Refused(r) => write!(f, "request not sent: {r}"),
            Error::Decode(why) => write!(f, "unexpected result from the server: {why}"),
            Error::Input(why) => write!(f, "cannot give the input the server asked for: {why}"),
            Error::TooManyInputRounds(n) => write!(
                f,
                "the server still asked for input after {n} rounds; giving up"
            ),
            Error::Transport(why) => write!(f, "transport error: {why}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Rpc(e) => Some(e),
            Error::Refused(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<Refused> for Error {
    fn from(e: Refused) -> Self {
        Error::Refused(e)
    }
}

impl From<HandshakeError> for Error {
    fn from(e: HandshakeError) -> Self {
        Error::Handshake(e.to_string())
    }
}

impl From<mcp_stdio::Error> for Error {
    fn from(e: mcp_stdio::Error) -> Self {
        match e {
            mcp_stdio::Error::Io(e) => Error::Io(e),
            mcp_stdio::Error::Closed => Error::Closed("the server's input is closed".to_owned()),
            other => Error::Transport(other.to_string()),
        }
    }
}
