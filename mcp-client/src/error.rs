//! The crate's one error type, and the small enums that say why a connection closed or a
//! server's answer made no sense.

use std::fmt;
use std::io;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use mcp_core::engine::{HandshakeError, Refused};
use mcp_core::jsonrpc::ErrorObject;

/// Why a client operation failed.
///
/// The variants say what the caller can do about it: [`Error::Closed`] means the connection is
/// gone for good (reconnect), [`Error::Timeout`] and [`Error::Cancelled`] end one call only,
/// [`Error::Rpc`] is the server's own answer, [`Error::Refused`] was decided locally without
/// sending anything (the protocol forbids the request).
/// [`std::error::Error::source`] gives the underlying error where there is one.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Starting or talking to the transport failed (for example the server program could not
    /// be started).
    Io(io::Error),
    /// The connection is closed: the server exited, closed its output, or the client was
    /// closed.
    Closed(Closed),
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
    Handshake(HandshakeError),
    /// The request was not sent: the protocol forbids it on this connection (wrong era,
    /// capability the server did not declare, handshake not done, params not an object).
    Refused(Refused),
    /// A result or notification from the server is not valid JSON for its type.
    Decode {
        /// What was being decoded (`"tools/call result"`, a notification's method).
        what: String,
        /// The decoder's error.
        source: serde_json::Error,
    },
    /// The server's answer decoded but makes no sense in the protocol.
    Unexpected(Unexpected),
    /// The server asked for input (2026-07-28 `input_required`) that this client cannot give:
    /// no handler for it, or the handler failed.
    Input {
        /// The input request's method (`sampling/createMessage`, ...).
        method: String,
        /// Its key in the `inputRequests` map.
        key: String,
        /// Why there is no answer: the handler's [`ErrorObject`], or the answer's encoding
        /// error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The server kept asking for more input beyond the client's limit of rounds.
    TooManyInputRounds(usize),
    /// The task the server ran the call as ended `failed`: a JSON-RPC error during its
    /// execution (a tool's own failure is a result with `isError` set instead).
    TaskFailed {
        /// The task.
        task_id: String,
        /// The error the task carries.
        error: ErrorObject,
    },
    /// The task the server ran the call as ended `cancelled` (stopped by the server, or by
    /// someone else holding its handle); a call cancelled through its own
    /// [`CancelHandle`](crate::CancelHandle) is [`Error::Cancelled`].
    TaskCancelled {
        /// The task.
        task_id: String,
        /// The server's status message, if it gave one.
        message: Option<String>,
    },
    /// The server did not take a message within the client's send timeout (it stopped
    /// reading).
    SendTimeout(Duration),
    /// The transport (stdio child process, HTTP) failed: its own error
    /// ([`mcp_stdio::Error`], `mcp_http_blocking::Error`, or the failure a transport reported
    /// for one request).
    Transport(Box<dyn std::error::Error + Send + Sync>),
}

/// A transport's own error, shared by every call it fails (see
/// [`Closed::Broken`], [`Unexpected::Malformed`]).
pub type SharedError = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// Why the connection is closed ([`Error::Closed`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Closed {
    /// The server process exited.
    Exited {
        /// The program.
        program: String,
        /// Its exit status.
        status: ExitStatus,
    },
    /// The server process closed its output (and had not exited a moment later).
    OutputClosed {
        /// The program.
        program: String,
    },
    /// The transport ended with nothing to add (the server closed the connection).
    Ended,
    /// The listen stream's channel ended with the connection.
    StreamEnded,
    /// The client was closed ([`Client::close`](crate::Client::close)).
    ByClient,
    /// The server does not read its input (a send found it closed or full).
    NotReading,
    /// The transport broke: its own error (a read failed, an HTTP session was forgotten).
    Broken(SharedError),
    /// The client could not start its threads.
    ThreadsNotStarted,
    /// The client's reader thread panicked.
    ReaderPanicked,
    /// The server left `missed` pings in a row unanswered, one sent every `interval`
    /// ([`ClientBuilder::ping_every`](crate::ClientBuilder::ping_every)): it hangs without
    /// exiting, and every call would only wait out its own timeout.
    NoPingAnswer {
        /// Pings unanswered in a row.
        missed: u32,
        /// The ping interval (each ping's timeout too).
        interval: std::time::Duration,
    },
}

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Closed::Exited { program, status } => {
                write!(f, "the server process {program:?} exited ({status})")
            }
            Closed::OutputClosed { program } => {
                write!(f, "the server process {program:?} closed its output")
            }
            Closed::Ended => f.write_str("the server closed the connection"),
            Closed::StreamEnded => f.write_str("the listen stream ended"),
            Closed::ByClient => f.write_str("the client was closed"),
            Closed::NotReading => f.write_str("the server does not read its input"),
            Closed::Broken(why) => write!(f, "the transport broke: {why}"),
            Closed::ThreadsNotStarted => f.write_str("the client could not start its threads"),
            Closed::ReaderPanicked => f.write_str("the client's reader thread panicked"),
            Closed::NoPingAnswer { missed, interval } => write!(
                f,
                "the server left {missed} pings in a row unanswered (one every {interval:?}): it hangs"
            ),
        }
    }
}

impl std::error::Error for Closed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Closed::Broken(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

/// A server answer that decoded but breaks the protocol ([`Error::Unexpected`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Unexpected {
    /// A result of a `resultType` this client does not handle.
    ResultType {
        /// The request's method.
        method: String,
        /// The `resultType` the server sent.
        result_type: String,
    },
    /// `input_required` on a legacy connection, where it does not exist.
    InputOnLegacy {
        /// The request's method.
        method: String,
    },
    /// `input_required` with neither `inputRequests` nor `requestState`.
    EmptyInputRequired {
        /// The request's method.
        method: String,
    },
    /// `input_required` asking for more than
    /// [`MAX_INPUT_REQUESTS`](crate::MAX_INPUT_REQUESTS) inputs at once: none is asked of
    /// the handlers.
    TooManyInputRequests {
        /// The request's method.
        method: String,
        /// How many the server asked for.
        count: usize,
    },
    /// A list request returned the same cursor twice (the iterator would never end).
    RepeatedCursor {
        /// The list method.
        method: &'static str,
        /// The cursor.
        cursor: String,
    },
    /// A list went past one of the client's bounds (its pages, its items, or its time as a
    /// whole): a server that pages without end would otherwise keep the caller iterating, and
    /// its memory growing, forever. The items before the bound were yielded.
    ListTooLong {
        /// The list method.
        method: &'static str,
        /// The bound reached, and the builder setting that raises it.
        reached: String,
    },
    /// The resource read as an MCP Apps view is not one (no part for its URI, another MIME
    /// type than `text/html;profile=mcp-app`, a blob that is not base64 of UTF-8 text).
    NotAView {
        /// The view's URI.
        uri: String,
        /// What is wrong.
        why: String,
    },
    /// The transport delivered something for this call that was not a message
    /// ([`Incoming::Malformed`](mcp_core::transport::Incoming::Malformed)): its error.
    Malformed(SharedError),
    /// A task ended `completed` without its `result`.
    TaskWithoutResult {
        /// The task.
        task_id: String,
    },
    /// `tasks/get` answered about another task than the one asked for.
    OtherTask {
        /// The task asked about.
        asked: String,
        /// The task the answer is about.
        got: String,
    },
}

impl fmt::Display for Unexpected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unexpected::ResultType {
                method,
                result_type,
            } => write!(
                f,
                "{method} returned a result of type {result_type:?}, which this client does not handle"
            ),
            Unexpected::InputOnLegacy { method } => {
                write!(f, "{method} returned input_required on a legacy connection")
            }
            Unexpected::TooManyInputRequests { method, count } => write!(
                f,
                "{method}: input_required asked for {count} inputs at once (at most {} are answered)",
                crate::MAX_INPUT_REQUESTS
            ),
            Unexpected::EmptyInputRequired { method } => write!(
                f,
                "{method}: input_required with neither inputRequests nor requestState"
            ),
            Unexpected::RepeatedCursor { method, cursor } => {
                write!(f, "{method} returned the cursor {cursor:?} twice")
            }
            Unexpected::ListTooLong { method, reached } => write!(
                f,
                "{method}: the list was cut off at {reached}; the server may be paging without end"
            ),
            Unexpected::NotAView { uri, why } => write!(f, "{uri} is not an app view: {why}"),
            Unexpected::Malformed(why) => write!(f, "not a message: {why}"),
            Unexpected::TaskWithoutResult { task_id } => {
                write!(f, "task {task_id:?} completed without a result")
            }
            Unexpected::OtherTask { asked, got } => {
                write!(f, "tasks/get of task {asked:?} answered about task {got:?}")
            }
        }
    }
}

impl std::error::Error for Unexpected {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Unexpected::Malformed(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

/// An error that ended a listen stream, repeated to later calls as [`Closed::Broken`] (the
/// first caller got the error itself; the later ones get what it said).
#[derive(Debug)]
pub(crate) struct EndedEarlier(pub(crate) String);

impl fmt::Display for EndedEarlier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the stream ended earlier: {}", self.0)
    }
}

impl std::error::Error for EndedEarlier {}

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
            Error::Handshake(e) => write!(f, "MCP handshake failed: {e}"),
            Error::Refused(r) => write!(f, "request not sent: {r}"),
            Error::Decode { what, source } => {
                write!(f, "unexpected result from the server: {what}: {source}")
            }
            Error::Unexpected(why) => write!(f, "unexpected result from the server: {why}"),
            Error::Input {
                method,
                key,
                source,
            } => write!(
                f,
                "cannot give the input the server asked for: {method} ({key:?}): {source}"
            ),
            Error::TooManyInputRounds(n) => write!(
                f,
                "the server still asked for input after {n} rounds; giving up"
            ),
            Error::SendTimeout(waited) => write!(
                f,
                "transport error: the server did not take a message within {waited:?}"
            ),
            Error::Transport(e) => write!(f, "transport error: {e}"),
            Error::TaskFailed { task_id, error } => {
                write!(f, "the server's task {task_id:?} failed: {error}")
            }
            Error::TaskCancelled {
                task_id,
                message: Some(m),
            } => write!(f, "the server's task {task_id:?} was cancelled: {m}"),
            Error::TaskCancelled {
                task_id,
                message: None,
            } => write!(f, "the server's task {task_id:?} was cancelled"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Rpc(e) | Error::TaskFailed { error: e, .. } => Some(e),
            Error::Refused(e) => Some(e),
            Error::Handshake(e) => Some(e),
            Error::Decode { source, .. } => Some(source),
            Error::Input { source, .. } => Some(source.as_ref()),
            Error::Transport(e) => Some(e.as_ref()),
            Error::Closed(e) => Some(e),
            Error::Unexpected(e) => Some(e),
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
        Error::Handshake(e)
    }
}

impl From<Closed> for Error {
    fn from(why: Closed) -> Self {
        Error::Closed(why)
    }
}

impl From<Unexpected> for Error {
    fn from(why: Unexpected) -> Self {
        Error::Unexpected(why)
    }
}

impl From<mcp_stdio::Error> for Error {
    fn from(e: mcp_stdio::Error) -> Self {
        match e {
            mcp_stdio::Error::Io(e) => Error::Io(e),
            mcp_stdio::Error::Closed => Error::Closed(Closed::NotReading),
            other => Error::Transport(Box::new(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn source_is_the_inner_error() {
        let json = serde_json::from_str::<u8>("x").unwrap_err();
        let e = Error::Decode {
            what: "tools/list result".into(),
            source: json,
        };
        assert!(e.source().unwrap().is::<serde_json::Error>());
        assert!(e.to_string().contains("tools/list result"), "{e}");

        let e = Error::from(mcp_stdio::Error::ThreadPanicked { thread: "reader" });
        let inner = e.source().unwrap().downcast_ref::<mcp_stdio::Error>();
        assert!(
            matches!(inner, Some(mcp_stdio::Error::ThreadPanicked { .. })),
            "{e}"
        );

        let e = Error::Input {
            method: "roots/list".into(),
            key: "r".into(),
            source: Box::new(ErrorObject::internal("no roots")),
        };
        assert!(e.source().unwrap().is::<ErrorObject>());
        assert!(
            Error::Closed(Closed::ByClient)
                .source()
                .unwrap()
                .source()
                .is_none()
        );

        let io = std::io::Error::other("pipe gone");
        let e = Error::Closed(Closed::Broken(Arc::new(io)));
        let inner = e.source().unwrap().source().unwrap();
        assert!(inner.is::<std::io::Error>(), "{e}");
        let e = Error::Unexpected(Unexpected::Malformed(Arc::new(
            mcp_core::jsonrpc::decode(b"{").unwrap_err(),
        )));
        let inner = e.source().unwrap().source().unwrap();
        assert!(inner.is::<mcp_core::jsonrpc::DecodeError>(), "{e}");
    }

    #[cfg(feature = "http")]
    #[test]
    fn a_url_that_is_not_http_is_the_http_crates_invalid_url() {
        let e = crate::Client::builder()
            .connect_http("ftp://example.com/mcp")
            .unwrap_err();
        let inner = e
            .source()
            .unwrap()
            .downcast_ref::<mcp_http_blocking::Error>();
        assert!(
            matches!(inner, Some(mcp_http_blocking::Error::InvalidUrl { .. })),
            "{e}"
        );
    }
}
