//! What the client needs from a transport, and the two transports this crate ships: any pair of
//! channels (an in-memory pipe, for tests) and a server started as a child process (stdio).
//!
//! A transport is a pair of bounded channels of [`Message`]s plus a way to close it. The
//! client never sees bytes, sockets or pipes, so the Streamable HTTP client (which turns each
//! outgoing request into a POST and feeds the JSON or SSE answer back into the receiving
//! channel) plugs in behind the same trait, in its own crate, without this one depending on
//! any HTTP library.

use std::process::ExitStatus;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use mcp_core::jsonrpc::Message;
use mcp_core::transport::Incoming;
use mcp_core::version::{Era, ProtocolVersion};
use mcp_stdio::{ChildBuilder, ChildHandle, Connection, FrameError};

use crate::error::{Closed, Error};

/// A connection to one MCP server, as the client drives it.
///
/// Both channels must be bounded. The receiving channel disconnecting (every sender of it
/// dropped) means the server is gone: the client then fails every pending call with
/// [`Error::Closed`], using [`Transport::end_reason`] for the reason.
///
/// What a transport that is not a byte stream (Streamable HTTP) is expected to do with it:
/// turn each outgoing request into an exchange (a POST whose headers it derives from the
/// message itself: `Mcp-Method`, `Mcp-Name`, the `_meta` protocol version) and feed the
/// answer, and any notifications streamed before it, into the receiving channel; report a
/// failed exchange as an error response for that request id (so the handshake's fallback
/// rules apply to HTTP 400/404/405 too) or as [`Incoming::Malformed`]; and treat an outgoing
/// `notifications/cancelled` as "close that request's stream".
pub trait Transport: Send + 'static {
    /// What the receiving channel carries: [`Incoming`] itself, or anything that converts
    /// into it (a framed pipe's `Result<Message, FrameError>`).
    type Item: Into<Incoming> + Send + 'static;

    /// Where the client puts messages for the server (a clone; the client drops its clones
    /// when it closes).
    fn sender(&self) -> Sender<Message>;

    /// Where the server's messages come from (a clone).
    fn receiver(&self) -> Receiver<Self::Item>;

    /// Ends the connection (for a child process: the MCP stdio shutdown sequence) and returns
    /// the server process's exit status when there is a process. Called once.
    ///
    /// # Errors
    /// When the transport could not be closed cleanly.
    fn close(&mut self) -> Result<Option<ExitStatus>, Error>;

    /// The handshake chose this era and revision (an HTTP transport needs it for the
    /// `MCP-Protocol-Version` header of legacy sessions). Called once, before any other
    /// request goes out.
    fn handshake_done(&mut self, era: Era, version: ProtocolVersion) {
        let _ = (era, version);
    }

    /// Why the server stopped talking, once the receiving channel disconnected: for example
    /// [`Closed::Exited`] with the process's status. `None` when there is nothing to add.
    fn end_reason(&mut self) -> Option<Closed> {
        None
    }

    /// A name for the server at the other end, the key of an [`EraCache`](crate::EraCache)
    /// (the command line of a child process, the URL of an HTTP endpoint). `None`: nothing
    /// is remembered.
    fn server_key(&self) -> Option<String> {
        None
    }
}

/// A transport over a plain [`Connection`], such as one end of [`mcp_stdio::memory`]: for
/// tests, and for servers running in the same process.
#[derive(Debug)]
pub struct ChannelTransport {
    conn: Option<Connection>,
    sender: Sender<Message>,
    receiver: Receiver<Result<Message, FrameError>>,
    name: Option<String>,
}

impl ChannelTransport {
    /// Wraps a connection.
    pub fn new(conn: Connection) -> Self {
        ChannelTransport {
            sender: conn.sender.clone(),
            receiver: conn.receiver.clone(),
            conn: Some(conn),
            name: None,
        }
    }

    /// Names the server at the other end (its key in an [`EraCache`](crate::EraCache)).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

impl Transport for ChannelTransport {
    type Item = Result<Message, FrameError>;

    fn sender(&self) -> Sender<Message> {
        self.sender.clone()
    }

    fn receiver(&self) -> Receiver<Self::Item> {
        self.receiver.clone()
    }

    /// Drops this side's ends, so the peer sees its input end once the client's clones are
    /// gone too.
    fn close(&mut self) -> Result<Option<ExitStatus>, Error> {
        self.conn.take();
        let (s, _) = crossbeam_channel::bounded(0);
        let (_, r) = crossbeam_channel::bounded(0);
        self.sender = s;
        self.receiver = r;
        Ok(None)
    }

    fn server_key(&self) -> Option<String> {
        self.name.clone()
    }
}

/// How long to wait for the exit status of a server whose output just ended, for the error
/// message: the exit normally follows the end of output at once.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);

/// An MCP server started as a child process, spoken to over its stdin and stdout.
///
/// [`Transport::close`] follows the MCP stdio shutdown: close the server's stdin, wait, then
/// SIGTERM, wait, then SIGKILL (the graces are set on the [`ChildBuilder`]).
#[derive(Debug)]
pub struct StdioTransport {
    command_line: String,
    conn: Option<Connection>,
    sender: Sender<Message>,
    receiver: Receiver<Result<Message, FrameError>>,
    child: ChildHandle,
}

impl StdioTransport {
    /// Starts the server.
    ///
    /// # Errors
    /// [`Error::Io`] or [`Error::Transport`] when the program could not be started.
    pub fn spawn(builder: ChildBuilder) -> Result<Self, Error> {
        let command_line = builder.command_line();
        let (conn, child) = builder.spawn()?;
        Ok(StdioTransport {
            command_line,
            sender: conn.sender.clone(),
            receiver: conn.receiver.clone(),
            conn: Some(conn),
            child,
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Transport for StdioTransport {
    type Item = Result<Message, FrameError>;

    fn sender(&self) -> Sender<Message> {
        self.sender.clone()
    }

    fn receiver(&self) -> Receiver<Self::Item> {
        self.receiver.clone()
    }

    fn close(&mut self) -> Result<Option<ExitStatus>, Error> {
        self.conn.take();
        let status = self.child.shutdown()?;
        Ok(Some(status))
    }

    fn end_reason(&mut self) -> Option<Closed> {
        let program = self.child.program().to_owned();
        Some(match self.child.wait_timeout(EXIT_STATUS_WAIT) {
            Ok(Some(status)) => Closed::Exited { program, status },
            _ => Closed::OutputClosed { program },
        })
    }

    fn server_key(&self) -> Option<String> {
        Some(format!("stdio:{}", self.command_line))
    }
}
