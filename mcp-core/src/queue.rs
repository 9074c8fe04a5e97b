//! A queue bounded in bytes as well as in messages, in front of a channel a transport's user
//! reads: the receiving side of the stdio child transport and of the HTTP client.
//!
//! A channel bounded by count alone lets a peer fill memory with few, large messages (256
//! messages of up to 16 MiB each) whenever the reader falls behind. Here the thread that read a
//! message must first reserve room for its size: while the queued messages already hold the
//! byte budget it waits, so it stops reading and the peer's writes block in turn
//! (back-pressure through the pipe or the socket), and the memory held stays within the budget
//! (or one message, when a single one is larger). A forwarding thread hands the messages on
//! through a rendezvous channel and frees their room only once the user took them: the user
//! sees an ordinary [`Receiver`].
//!
//! Like [`crate::executor`], this module starts a thread; it does no I/O.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded, select};

use crate::jsonrpc::Message;

/// The default budget of a receiving queue: 16 MiB (the largest message an HTTP client takes
/// by default, four of the largest stdio lines), far below what a host can spare per peer.
pub const DEFAULT_MAX_QUEUED_BYTES: usize = 16 << 20;

#[derive(Default)]
struct Room {
    /// Bytes of the messages queued or being handed over.
    used: usize,
    /// The forwarder stopped: nothing more will be taken.
    closed: bool,
}

struct Budget {
    room: Mutex<Room>,
    freed: Condvar,
    max: usize,
}

impl Budget {
    fn lock(&self) -> MutexGuard<'_, Room> {
        self.room.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn release(&self, bytes: usize) {
        let mut r = self.lock();
        r.used = r.used.saturating_sub(bytes);
        drop(r);
        self.freed.notify_all();
    }

    fn close(&self) {
        self.lock().closed = true;
        self.freed.notify_all();
    }
}

/// The producing end: [`Feeder::send`] waits for room in bytes and in messages.
pub struct Feeder<T> {
    tx: Sender<(T, usize)>,
    budget: Arc<Budget>,
}

impl<T> Clone for Feeder<T> {
    /// Another feeder of the same queue (the queue ends once every feeder is gone).
    fn clone(&self) -> Self {
        Feeder {
            tx: self.tx.clone(),
            budget: Arc::clone(&self.budget),
        }
    }
}

impl<T> Feeder<T> {
    /// Queues `item`, which holds about `size` bytes: waits while the queue is full (in bytes
    /// or in messages), at most `give_up` (`None`: as long as it takes). A message is let in
    /// whenever the queue is empty, however large, so one over the budget still passes. False
    /// (the item dropped) when the reading side has gone, `stop` disconnected or `give_up`
    /// passed.
    pub fn send(
        &self,
        item: T,
        size: usize,
        stop: &Receiver<()>,
        give_up: Option<Duration>,
    ) -> bool {
        let deadline = give_up.map(|d| Instant::now() + d);
        {
            let mut r = self.budget.lock();
            loop {
                if r.closed {
                    return false;
                }
                if r.used == 0 || r.used.saturating_add(size) <= self.budget.max {
                    r.used = r.used.saturating_add(size);
                    break;
                }
                r = match deadline {
                    None => self.budget.freed.wait(r).unwrap_or_else(|p| p.into_inner()),
                    Some(d) => {
                        let left = d.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            return false;
                        }
                        match self.budget.freed.wait_timeout(r, left) {
                            Ok((g, _)) => g,
                            Err(p) => p.into_inner().0,
                        }
                    }
                };
            }
        }
        let sent = match deadline {
            None => select! {
                send(self.tx, (item, size)) -> r => r.is_ok(),
                recv(stop) -> _ => false,
            },
            Some(d) => select! {
                send(self.tx, (item, size)) -> r => r.is_ok(),
                recv(stop) -> _ => false,
                default(d.saturating_duration_since(Instant::now())) => false,
            },
        };
        if !sent {
            self.budget.release(size);
        }
        sent
    }
}

/// The queue: the feeder for the reading thread, the receiver for the user, and the
/// forwarding thread between them (it ends when `stop` disconnects, when the user drops the
/// receiver, or once every feeder is gone and the queue is empty).
pub fn byte_bounded<T: Send + 'static>(
    capacity: usize,
    max_bytes: usize,
    stop: Receiver<()>,
    name: &str,
) -> std::io::Result<(Feeder<T>, Receiver<T>, JoinHandle<()>)> {
    let (tx, rx) = bounded::<(T, usize)>(capacity.max(1));
    let (out, user) = bounded::<T>(0);
    let budget = Arc::new(Budget {
        room: Mutex::new(Room::default()),
        freed: Condvar::new(),
        max: max_bytes.max(1),
    });
    let b = Arc::clone(&budget);
    let forwarder = thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            forward(&rx, &out, &b, &stop);
            b.close();
        })?;
    Ok((Feeder { tx, budget }, user, forwarder))
}

fn forward<T>(rx: &Receiver<(T, usize)>, out: &Sender<T>, budget: &Budget, stop: &Receiver<()>) {
    loop {
        let (item, size) = select! {
            recv(rx) -> m => match m {
                Ok(m) => m,
                Err(_) => return,
            },
            recv(stop) -> _ => return,
        };
        let handed = select! {
            send(out, item) -> r => r.is_ok(),
            recv(stop) -> _ => false,
        };
        budget.release(size);
        if !handed {
            return;
        }
    }
}

/// The bytes a message holds, about: its raw `params` or `result` text and its method, plus a
/// little for the envelope. Computed from what the message already holds, without encoding it.
pub fn message_size(m: &Message) -> usize {
    const ENVELOPE: usize = 64;
    ENVELOPE
        + match m {
            Message::Request(r) => r.method.len() + r.params.as_ref().map_or(0, |p| p.get().len()),
            Message::Notification(n) => {
                n.method.len() + n.params.as_ref().map_or(0, |p| p.get().len())
            }
            Message::Response(r) => r.result.get().len(),
            Message::Error(e) => {
                e.error.message.len() + e.error.data.as_ref().map_or(0, crate::jsonrpc::json_len)
            }
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAFETY: Duration = Duration::from_secs(10);

    #[test]
    fn a_full_budget_holds_the_feeder_back_until_the_user_takes_a_message() {
        let (_stop_tx, stop) = bounded::<()>(0);
        let (feeder, user, _forwarder) = byte_bounded::<u32>(8, 10, stop.clone(), "q").unwrap();
        assert!(feeder.send(1, 6, &stop, Some(SAFETY)));
        // 6 + 6 > 10 while the first is not taken: the second waits, here until it gives up.
        assert!(!feeder.send(2, 6, &stop, Some(Duration::from_millis(20))));
        assert_eq!(user.recv_timeout(SAFETY), Ok(1));
        assert!(feeder.send(3, 6, &stop, Some(SAFETY)));
        assert_eq!(user.recv_timeout(SAFETY), Ok(3));
        // One message over the whole budget still passes alone.
        assert!(feeder.send(4, 1_000, &stop, Some(SAFETY)));
        assert_eq!(user.recv_timeout(SAFETY), Ok(4));
    }

    #[test]
    fn a_dropped_user_ends_the_forwarder_and_fails_the_feeder() {
        let (_stop_tx, stop) = bounded::<()>(0);
        let (feeder, user, forwarder) = byte_bounded::<u32>(8, 10, stop.clone(), "q").unwrap();
        assert!(feeder.send(1, 6, &stop, None));
        drop(user);
        forwarder.join().unwrap();
        assert!(!feeder.send(2, 6, &stop, None));
    }
}
