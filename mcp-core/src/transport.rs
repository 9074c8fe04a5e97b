//! What a client-side transport delivers: the one event type every transport of the client
//! (stdio child, in-memory pipe, Streamable HTTP) puts on its receiving channel.
//!
//! It lives here, beside the codec, so that the HTTP client (`mcp-http-blocking`) and the
//! client that consumes it (`mcp-client`) share one type instead of converting between two
//! copies, and so that neither depends on the other. Failures carry the transport's own error
//! value (an `io::Error`, a [`DecodeError`](crate::jsonrpc::DecodeError), an HTTP crate's
//! error), boxed, so that [`std::error::Error::source`] still reaches the cause.

use crate::jsonrpc::{Message, RequestId};

/// The error a transport reports, as the transport produced it (downcast to inspect it).
pub type TransportError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// One item on a client transport's receiving channel: a message, or the transport's account
/// of something that was not one.
#[derive(Debug)]
pub enum Incoming {
    /// A JSON-RPC message from the server.
    Message(Message),
    /// The server sent something that is not a message (an undecodable line or body, an
    /// unexpected content type, an SSE event over the size limit). With an `id`, the call
    /// waiting for that request fails with this error.
    Malformed {
        /// The request it answered, when that could be recovered.
        id: Option<RequestId>,
        /// What was wrong.
        error: TransportError,
    },
    /// Nothing more can arrive (reading the pipe failed, the one SSE stream of a 2024-11-05
    /// server ended): every pending call fails with this error.
    Broken(TransportError),
    /// The exchange of one request failed below MCP (a refused or broken connection, a
    /// stream that ended before the answer and could not be resumed): that call fails. Not an
    /// answer from the server.
    Failed {
        /// The request that got no answer.
        id: RequestId,
        /// What went wrong.
        error: TransportError,
    },
}

impl From<Message> for Incoming {
    fn from(m: Message) -> Self {
        Incoming::Message(m)
    }
}

/// A channel of `Result<Message, E>` (a framed byte stream's output) delivers the message, or
/// whatever event the error type says it stands for.
impl<E: Into<Incoming>> From<Result<Message, E>> for Incoming {
    fn from(item: Result<Message, E>) -> Self {
        match item {
            Ok(m) => Incoming::Message(m),
            Err(e) => e.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{DecodeError, decode};

    struct Gone;
    impl From<Gone> for Incoming {
        fn from(_: Gone) -> Self {
            Incoming::Broken("gone".into())
        }
    }

    #[test]
    fn a_result_becomes_the_message_or_the_errors_event() {
        let m = decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert!(matches!(
            Incoming::from(Ok::<_, Gone>(m)),
            Incoming::Message(_)
        ));
        match Incoming::from(Err::<Message, _>(Gone)) {
            Incoming::Broken(e) => assert_eq!(e.to_string(), "gone"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_error_stays_inspectable() {
        let e = decode(b"{").unwrap_err();
        let ev = Incoming::Malformed {
            id: None,
            error: Box::new(e),
        };
        let Incoming::Malformed { error, .. } = ev else {
            unreachable!()
        };
        assert!(error.downcast_ref::<DecodeError>().is_some());
    }
}
