//! The kit's one error type, shared by handlers and by the server-to-client calls they make.

use std::fmt;
use std::sync::Arc;

use mcp_core::engine::Refused;
use mcp_core::jsonrpc::{ErrorObject, codes};

/// What a handler (or a call it made back to the client) can fail with.
///
/// Handlers return `Result<_, Error>`, and the calls on [`Context`](crate::Context) return the
/// same type, so `?` passes a failure straight through. The kit turns each variant into the
/// answer the protocol revision in use prescribes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The operation failed; for a tool this becomes a result with `isError: true` (the model
    /// sees the message), elsewhere a -32603 error.
    Message(String),
    /// The request's parameters are wrong (-32602; for tools on 2025-11-25 and later, an
    /// `isError: true` result, as the spec asks for input validation errors).
    InvalidParams(String),
    /// The resource does not exist (-32002 up to 2025-11-25, -32602 from 2026-07-28).
    ResourceNotFound(String),
    /// Send exactly this JSON-RPC error.
    Protocol(ErrorObject),
    /// 2026-07-28: the client must supply input and retry. Returned by the calls on
    /// `Context`; pass it on with `?` and the kit answers `InputRequiredResult`.
    InputRequired,
    /// The client did not declare the capability this call needs (`sampling`, `elicitation`,
    /// `elicitation.url`, `roots`).
    MissingCapability(String),
    /// The client did not answer in time (a `notifications/cancelled` was sent).
    Timeout,
    /// The request this handler serves was cancelled, or the session closed.
    Cancelled,
    /// The client answered a server-to-client request with an error.
    Peer(ErrorObject),
    /// The client's answer could not be read.
    BadAnswer(BadAnswer),
    /// The protocol forbids the server-to-client request in this session (the engine's
    /// refusal: the wrong era, a revision that predates the method, ...).
    Refused(Refused),
    /// The operation cannot be done in this configuration (a feature is off, or the
    /// transport cannot carry server-to-client requests).
    Unsupported(String),
    /// The server could not start: the operating system refused a thread.
    Start(StartError),
}

/// Why the client's answer to a server-to-client request could not be used: what was wrong,
/// and the decoding error behind it when there is one ([`std::error::Error::source`]).
#[derive(Debug, Clone)]
pub struct BadAnswer {
    what: String,
    source: Option<Arc<serde_json::Error>>,
}

impl BadAnswer {
    /// An answer that decoded but is not what was asked for.
    pub(crate) fn new(what: impl Into<String>) -> BadAnswer {
        BadAnswer {
            what: what.into(),
            source: None,
        }
    }

    /// An answer whose JSON does not fit the expected result type.
    pub(crate) fn decoding(what: impl Into<String>, source: serde_json::Error) -> BadAnswer {
        BadAnswer {
            what: what.into(),
            source: Some(Arc::new(source)),
        }
    }
}

impl PartialEq for BadAnswer {
    fn eq(&self, other: &BadAnswer) -> bool {
        self.to_string() == other.to_string()
    }
}

impl fmt::Display for BadAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(e) => write!(f, "{}: {e}", self.what),
            None => f.write_str(&self.what),
        }
    }
}

impl std::error::Error for BadAnswer {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// The operating system's refusal to start the server's threads; [`std::error::Error::source`]
/// gives the `io::Error`.
#[derive(Debug, Clone)]
pub struct StartError(Arc<std::io::Error>);

impl StartError {
    pub(crate) fn new(e: std::io::Error) -> StartError {
        StartError(Arc::new(e))
    }
}

impl PartialEq for StartError {
    fn eq(&self, other: &StartError) -> bool {
        self.0.kind() == other.0.kind()
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot start the handler threads: {}", self.0)
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

impl Error {
    /// A failure with a message (see [`Error::Message`]).
    pub fn msg(text: impl Into<String>) -> Error {
        Error::Message(text.into())
    }

    /// The JSON-RPC error for this failure, for a request that is not a tool call.
    pub(crate) fn to_error_object(&self, modern: bool) -> ErrorObject {
        match self {
            Error::Message(m) => ErrorObject::new(codes::INTERNAL_ERROR, m.clone()),
            Error::InvalidParams(m) => ErrorObject::invalid_params(m),
            Error::ResourceNotFound(uri) => {
                let code = if modern {
                    codes::INVALID_PARAMS
                } else {
                    codes::RESOURCE_NOT_FOUND_LEGACY
                };
                ErrorObject::new(code, format!("Resource not found: {uri}"))
                    .with_data(serde_json::json!({ "uri": uri }))
            }
            Error::Protocol(e) | Error::Peer(e) => e.clone(),
            Error::MissingCapability(cap) => ErrorObject::new(
                codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                format!("This request needs the client capability `{cap}`"),
            )
            .with_data(serde_json::json!({ "requiredCapabilities": required_caps(cap) })),
            other => ErrorObject::new(codes::INTERNAL_ERROR, other.to_string()),
        }
    }
}

/// `elicitation.url` -> `{"elicitation": {"url": {}}}`.
fn required_caps(path: &str) -> serde_json::Value {
    let mut v = serde_json::json!({});
    for part in path.rsplit('.') {
        v = serde_json::json!({ part: v });
    }
    v
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Message(m) => f.write_str(m),
            Error::InvalidParams(m) => write!(f, "invalid parameters: {m}"),
            Error::ResourceNotFound(uri) => write!(f, "resource not found: {uri}"),
            Error::Protocol(e) => write!(f, "{e}"),
            Error::InputRequired => f.write_str("the client must provide input and retry"),
            Error::MissingCapability(c) => {
                write!(f, "the client did not declare the `{c}` capability")
            }
            Error::Timeout => f.write_str("the client did not answer in time"),
            Error::Cancelled => f.write_str("the request was cancelled"),
            Error::Peer(e) => write!(f, "the client answered with an error: {e}"),
            Error::BadAnswer(m) => write!(f, "the client's answer could not be read: {m}"),
            Error::Refused(r) => write!(f, "the protocol does not allow it here: {r}"),
            Error::Unsupported(m) => write!(f, "not supported: {m}"),
            Error::Start(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::BadAnswer(e) => Some(e),
            Error::Refused(e) => Some(e),
            Error::Start(e) => Some(e),
            _ => None,
        }
    }
}

impl From<String> for Error {
    fn from(s: String) -> Error {
        Error::Message(s)
    }
}

impl From<&str> for Error {
    fn from(s: &str) -> Error {
        Error::Message(s.to_owned())
    }
}

impl From<ErrorObject> for Error {
    fn from(e: ErrorObject) -> Error {
        Error::Protocol(e)
    }
}

/// `?` on a file or socket operation in a handler: the failure becomes the message (for a tool,
/// an `isError` result the model can read).
/// Any error, boxed (a `#[tool]` function's `Result<T, Box<dyn Error + ...>>`): its text,
/// with its sources', as [`Error::Message`].
impl From<Box<dyn std::error::Error + Send + Sync>> for Error {
    fn from(e: Box<dyn std::error::Error + Send + Sync>) -> Self {
        Error::Message(chain(&*e))
    }
}

/// As the `Send + Sync` box above.
impl From<Box<dyn std::error::Error>> for Error {
    fn from(e: Box<dyn std::error::Error>) -> Self {
        Error::Message(chain(&*e))
    }
}

/// An error's text followed by each source's that it does not already contain.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        next = s.source();
    }
    text
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Message(e.to_string())
    }
}

/// `?` on JSON a handler reads or writes itself: the failure becomes the message.
impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Error {
        Error::Message(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_and_json_failures_pass_through_question_marks() {
        fn read(path: &str) -> Result<String, Error> {
            Ok(std::fs::read_to_string(path)?)
        }
        fn parse(text: &str) -> Result<serde_json::Value, Error> {
            Ok(serde_json::from_str(text)?)
        }
        assert!(matches!(read("/no/such/file"), Err(Error::Message(m)) if !m.is_empty()));
        assert!(matches!(parse("{"), Err(Error::Message(m)) if m.contains("EOF")));
    }

    #[test]
    fn capability_paths_nest() {
        assert_eq!(
            required_caps("elicitation.url"),
            serde_json::json!({"elicitation": {"url": {}}})
        );
        let e = Error::ResourceNotFound("x://y".into());
        assert_eq!(e.to_error_object(false).code, -32002);
        assert_eq!(e.to_error_object(true).code, -32602);
    }

    #[test]
    fn failures_keep_their_cause() {
        use std::error::Error as _;
        let json = serde_json::from_str::<u8>("x").unwrap_err();
        let e = Error::BadAnswer(BadAnswer::decoding("no roots/list result", json));
        let cause = e
            .source()
            .and_then(|s| s.source())
            .expect("the decoding error");
        assert!(cause.is::<serde_json::Error>(), "{cause:?}");
        let io = std::io::Error::new(std::io::ErrorKind::OutOfMemory, "no threads");
        let e = Error::Start(StartError::new(io));
        let cause = e.source().and_then(|s| s.source()).expect("the io error");
        assert!(cause.is::<std::io::Error>(), "{cause:?}");
        assert!(e.to_string().contains("no threads"), "{e}");
    }
}
