//! The MCP stdio transport, on plain threads and blocking I/O: newline-delimited JSON-RPC over
//! a pipe pair.
//!
//! What it is for:
//! - **Serving** any [`mcp_core::service::Service`] on the process's stdin and stdout
//!   ([`serve`]), or on any `Read`/`Write` pair ([`serve_on`]). One session per process; the
//!   server returns `Ok(())` when stdin reaches EOF, after closing the session and letting the
//!   last answers out.
//! - **Starting a server as a child process** and talking to it through a pair of bounded
//!   channels ([`ChildBuilder`], [`Connection`]), with the stop sequence the MCP spec asks for
//!   (close stdin, SIGTERM, SIGKILL).
//! - **Framing** for anyone with their own loop ([`MessageReader`],
//!   [`MessageWriter`]): CRLF and blank lines tolerated, bad lines reported for an
//!   answer rather than fatal, over-long lines discarded in bounded memory.
//!
//! What it is not for: it knows nothing of MCP methods, lifecycle or capabilities (that is the
//! service's job, usually `mcp-server-kit`), nor of HTTP (`mcp-http-blocking`). It starts no
//! async runtime and depends only on `mcp-core`, `crossbeam-channel`, `log` and `serde_json`.
//!
//! While a server runs, stdout belongs to the protocol: log to stderr, never `println!`.
//!
//! # A request's path through the crate
//!
//! 1. [`serve_on`] (`server`) opens the service's session and reads on the calling thread
//!    (on a worker of an executor, `mcp_core::executor`, for a service that ends idle
//!    sessions itself).
//! 2. The reader (`reading`) reads a line with [`MessageReader`] and hands the
//!    message to `Session::handle`; a session about to block there says so
//!    (`Outbound::will_block`) and the reading goes on in a worker.
//! 3. The session answers through its `Outbound` (`output`): written at once when nothing is
//!    queued, else queued for the writer, a worker started by the first message that has to
//!    queue, both through [`MessageWriter`].
//!
//! On the client side, [`ChildBuilder`] (`child`) starts the server and a [`Connection`]
//! (`connection`) carries the messages, framed the same way.
//!
//! ```no_run
//! use std::sync::Arc;
//! use mcp_core::jsonrpc::{ErrorObject, Message};
//! use mcp_core::service::{Outbound, Service, Session, SessionInfo};
//!
//! /// Answers every request with "method not found"; a real server uses mcp-server-kit.
//! struct Nothing;
//! struct NothingSession(Arc<dyn Outbound>);
//!
//! impl Service for Nothing {
//!     fn open(&self, _: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
//!         Arc::new(NothingSession(out))
//!     }
//! }
//!
//! impl Session for NothingSession {
//!     fn handle(&self, msg: Message) {
//!         if let Message::Request(r) = msg {
//!             let reply = Message::error(Some(r.id.clone()), ErrorObject::method_not_found(&r.method));
//!             let _ = self.0.send(reply, Some(&r.id));
//!         }
//!     }
//!     fn close(&self) {}
//! }
//!
//! fn main() -> Result<(), mcp_stdio::Error> {
//!     mcp_stdio::serve(Nothing)
//! }
//! ```
//!
//! And the client side, starting a server:
//!
//! ```no_run
//! use mcp_core::jsonrpc::{Message, Request};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (conn, mut child) = mcp_stdio::ChildBuilder::new("my-mcp-server").arg("--stdio").spawn()?;
//! conn.sender.send(Request::new(1, "ping", &serde_json::json!({}))?.into())?;
//! let reply = conn.receiver.recv()??;
//! assert!(reply.is_response());
//! let status = child.shutdown()?;
//! # let _ = status;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod child;
mod connection;
mod ending;
mod error;
mod framing;
mod id_scan;
mod negotiated;
mod output;
mod process_io;
mod reading;
mod server;

pub use child::{ChildBuilder, ChildHandle};
pub use connection::{Connection, memory};
pub use error::Error;
pub use framing::{DEFAULT_MAX_LINE_LEN, FrameError, MessageReader, MessageWriter};
pub use mcp_core::queue::DEFAULT_MAX_QUEUED_BYTES;
pub use server::{Config, ConfigBuilder, serve, serve_on, serve_with};

/// What a framed pipe's error means to a client reading it: an undecodable line is
/// [`Incoming::Malformed`](mcp_core::transport::Incoming::Malformed) (with the request id when
/// it could be read), a failed read is [`Incoming::Broken`](mcp_core::transport::Incoming::Broken):
/// nothing more will come.
impl From<FrameError> for mcp_core::transport::Incoming {
    fn from(e: FrameError) -> Self {
        use mcp_core::transport::Incoming;
        match e {
            FrameError::Decode(d) => Incoming::Malformed {
                id: d.id.clone(),
                error: Box::new(FrameError::Decode(d)),
            },
            FrameError::Io(e) => Incoming::Broken(Box::new(e)),
            // An answer too large to read fails the call it answers, at once.
            FrameError::TooLarge { ref id, method, .. } => Incoming::Malformed {
                id: id.clone().filter(|_| !method),
                error: Box::new(e),
            },
        }
    }
}
