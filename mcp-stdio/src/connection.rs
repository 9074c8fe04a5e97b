//! A connection to a peer as a pair of bounded channels, and an in-memory pair for tests.

use std::thread;

use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_core::jsonrpc::Message;

use crate::error::Error;
use crate::framing::FrameError;

/// One end of a message stream, as plain channels: the caller owns the loop
/// (`for msg in &conn.receiver`), as with rust-analyzer's `lsp-server`.
///
/// Both channels are bounded: a full `sender` blocks (the peer reads slowly), a full `receiver`
/// stops the transport from reading (the caller reads slowly). The `receiver` yields
/// `Err(FrameError)` for a line the peer sent that was not a message (its id, when recoverable,
/// lets a client fail the matching call) and disconnects when the peer's output ends. A send on
/// `sender` fails once the peer's input is closed.
#[derive(Debug)]
pub struct Connection {
    /// Messages to the peer.
    pub sender: Sender<Message>,
    /// Messages from the peer, or why a line from it was not one.
    pub receiver: Receiver<Result<Message, FrameError>>,
}

/// Two connected in-process endpoints: what one sends, the other receives. For tests of a
/// client or a protocol loop without a process. Each direction holds up to `capacity` messages
/// (twice that counting the forwarding step) and runs one small forwarding thread. Dropping an
/// endpoint's `sender` ends the other endpoint's `receiver` once what was sent is read; a
/// forwarding thread whose receiving endpoint is gone ends at its next message.
///
/// # Errors
/// [`Error::Io`] when a forwarding thread cannot be started.
///
/// ```
/// use mcp_core::jsonrpc::{Message, Notification};
///
/// let (a, b) = mcp_stdio::memory(8).unwrap();
/// a.sender.send(Notification::bare("notifications/initialized").into()).unwrap();
/// let got = b.receiver.recv().unwrap().unwrap();
/// assert_eq!(got.method(), Some("notifications/initialized"));
/// drop(a);
/// assert!(b.receiver.recv().is_err());
/// ```
pub fn memory(capacity: usize) -> Result<(Connection, Connection), Error> {
    let (a_tx, a_to_b) = bounded::<Message>(capacity);
    let (b_tx, b_to_a) = bounded::<Message>(capacity);
    let (to_a, a_rx) = bounded(capacity);
    let (to_b, b_rx) = bounded(capacity);
    forward("mcp-memory-a-to-b", a_to_b, to_b)?;
    forward("mcp-memory-b-to-a", b_to_a, to_a)?;
    Ok((
        Connection {
            sender: a_tx,
            receiver: a_rx,
        },
        Connection {
            sender: b_tx,
            receiver: b_rx,
        },
    ))
}

fn forward(
    name: &str,
    from: Receiver<Message>,
    to: Sender<Result<Message, FrameError>>,
) -> Result<(), Error> {
    thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            for msg in from {
                if to.send(Ok(msg)).is_err() {
                    break;
                }
            }
        })
        .map(drop)
        .map_err(Error::Io)
}
