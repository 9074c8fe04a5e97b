//! The crate's one error type.

use std::fmt;
use std::io;

/// Why serving or talking to a child process failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing the stream failed (for stdout: the client went away).
    Io(io::Error),
    /// The peer is gone; nothing more can be sent.
    Closed,
    /// The child process could not be started.
    Spawn {
        /// The program that was to run.
        program: String,
        /// Why it did not start.
        source: io::Error,
    },
    /// One of the transport's own threads panicked (for the server's reader thread, usually
    /// the session's `handle` panicked).
    ThreadPanicked {
        /// The thread's name.
        thread: &'static str,
    },
    /// The service ended the session although the peer's pipes are open (the client stopped
    /// answering its pings): the peer is taken as gone.
    SessionEnded {
        /// The service's reason.
        reason: String,
    },
    /// A child process was still alive after SIGKILL and the last grace period.
    ChildDidNotExit {
        /// Its process id.
        pid: u32,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "stdio transport I/O failed: {e}"),
            Error::Closed => f.write_str("the connection to the peer is closed"),
            Error::Spawn { program, source } => {
                write!(f, "could not start MCP server {program:?}: {source}")
            }
            Error::ThreadPanicked { thread } => write!(f, "the {thread} thread panicked"),
            Error::SessionEnded { reason } => write!(f, "the server ended the session: {reason}"),
            Error::ChildDidNotExit { pid } => {
                write!(f, "child process {pid} did not exit even after SIGKILL")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) | Error::Spawn { source: e, .. } => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<mcp_core::service::Closed> for Error {
    fn from(_: mcp_core::service::Closed) -> Self {
        Error::Closed
    }
}
