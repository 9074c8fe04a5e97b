//! Server pings ([`ServerBuilder::ping_every`](crate::ServerBuilder::ping_every)): one thread
//! per server, whatever the number of sessions, wakes every interval and has each open
//! session check its last ping and send the next.
//!
//! A session (legacy era: the 2026-07-28 revision has no server-to-client requests) keeps the
//! id of its ping in flight and a count of pings missed in a row. At each tick, a ping still
//! unanswered is a miss (forgotten, not cancelled: a cancellation would only be one more
//! message to a peer that does not read); any answer to a ping, even an error, resets the
//! count. After `misses` in a row the session ends through `Outbound::end_session`, which the
//! transport turns into the end of serving (stdio) or the close of the session (HTTP).
//!
//! The thread never sends itself: a send may block on a peer that stopped reading (stdio
//! back-pressure), which is exactly the peer being looked for, so each ping goes out from the
//! kit's executor and the thread only does bookkeeping. It waits on a channel with a timeout,
//! and ends when the last [`Server`](crate::Server) handle is dropped (the channel
//! disconnects) or its sessions are gone.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};

/// When and how often to ping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PingConfig {
    pub(crate) interval: Duration,
    pub(crate) misses: u32,
}

/// Kept by every [`Server`](crate::Server) handle: dropping the last one stops the thread.
pub(crate) struct Stop(#[allow(dead_code)] Sender<()>);

/// Starts the thread: every `interval`, `tick` runs with the server's sessions, as long as
/// they exist.
pub(crate) fn start<S: Send + 'static>(
    interval: Duration,
    sessions: Weak<Mutex<S>>,
    tick: fn(&Mutex<S>),
) -> std::io::Result<Arc<Stop>> {
    let (tx, rx) = bounded::<()>(1);
    std::thread::Builder::new()
        .name("mcp-pinger".into())
        .spawn(move || run(&rx, interval, &sessions, tick))?;
    Ok(Arc::new(Stop(tx)))
}

fn run<S>(stop: &Receiver<()>, interval: Duration, sessions: &Weak<Mutex<S>>, tick: fn(&Mutex<S>)) {
    loop {
        match stop.recv_timeout(interval) {
            Err(RecvTimeoutError::Timeout) => match sessions.upgrade() {
                Some(s) => tick(&s),
                None => return,
            },
            // The server is gone.
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}
