//! Notifications that every instance of a server must hear.
//!
//! A client listening for `notifications/resources/updated` or `…/list_changed` (on a
//! `subscriptions/listen` stream in the 2026-07-28 era, on the GET stream of a legacy session)
//! is connected to one instance, while the change may be made on another. A [`Broadcast`]
//! carries such events between instances: the server publishes each one, and a thread of the
//! server's own hears every event (its own included) and hands it to the sessions open on this
//! instance.
//!
//! Without a broadcast (the default) a server hands its events straight to its own sessions,
//! as it always has. [`LocalBroadcast`] joins servers in one process; with the `redis` feature,
//! `RedisBroadcast` joins processes through Redis pub/sub.
//!
//! Every subscription is bounded: a listener that falls behind by more than its capacity loses
//! the events that did not fit and then gets [`Event::Resync`] once, so memory never grows with
//! a slow listener and it still learns that it must look again.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError, bounded};
pub use mcp_core::engine::ListKind;

#[cfg(feature = "redis")]
mod redis_impl;
#[cfg(feature = "redis")]
pub use redis_impl::RedisBroadcast;

/// What one instance tells the others.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The resource at this URI changed (`notifications/resources/updated` to its subscribers).
    ResourceUpdated(String),
    /// A list changed (`notifications/…/list_changed`).
    ListChanged(ListKind),
    /// Events were lost (the listener fell behind, or the connection to the other instances
    /// was down for a while): whatever was heard before may be stale. The kit answers it with
    /// `list_changed` for every list, so clients list again.
    Resync,
}

/// Carries [`Event`]s between the instances of a server.
pub trait Broadcast: Send + Sync {
    /// Sends `event` to every subscriber, on every instance (this one included).
    ///
    /// # Errors
    /// The event could not be handed on (a connection is down). It is lost; subscribers of a
    /// broadcast that reconnects get [`Event::Resync`].
    fn publish(&self, event: &Event) -> io::Result<()>;

    /// A new subscriber that holds at most `capacity` events not yet received.
    ///
    /// # Errors
    /// The subscription could not be set up (a connection could not be made).
    fn subscribe(&self, capacity: usize) -> io::Result<Subscription>;
}

/// One subscriber's bounded queue of events.
pub struct Subscription {
    rx: Receiver<Event>,
    lagged: Arc<AtomicBool>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("queued", &self.rx.len())
            .finish()
    }
}

impl Subscription {
    /// The next event, waiting up to `timeout`; `None` on timeout or when the broadcast is
    /// gone. Events that did not fit are replaced by one [`Event::Resync`], after the events
    /// queued before them.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Event> {
        if let Ok(e) = self.rx.try_recv() {
            return Some(e);
        }
        if self.lagged.swap(false, Ordering::AcqRel) {
            return Some(Event::Resync);
        }
        match self.rx.recv_timeout(timeout) {
            Ok(e) => Some(e),
            Err(RecvTimeoutError::Timeout) => None,
            // Gone: a last lag still counts.
            Err(RecvTimeoutError::Disconnected) => self
                .lagged
                .swap(false, Ordering::AcqRel)
                .then_some(Event::Resync),
        }
    }

    /// The next event, waiting as long as it takes; `None` when the broadcast is gone.
    pub fn recv(&self) -> Option<Event> {
        if let Ok(e) = self.rx.try_recv() {
            return Some(e);
        }
        if self.lagged.swap(false, Ordering::AcqRel) {
            return Some(Event::Resync);
        }
        match self.rx.recv() {
            Ok(e) => Some(e),
            Err(_) => self
                .lagged
                .swap(false, Ordering::AcqRel)
                .then_some(Event::Resync),
        }
    }
}

/// The sending side of one subscription.
struct Lane {
    tx: Sender<Event>,
    lagged: Arc<AtomicBool>,
}

/// The subscribers of one process, for a broadcast to deliver to.
#[derive(Default)]
pub(crate) struct Hub {
    lanes: Mutex<Vec<Lane>>,
}

impl Hub {
    pub(crate) fn subscribe(&self, capacity: usize) -> Subscription {
        let (tx, rx) = bounded(capacity.max(1));
        let lagged = Arc::new(AtomicBool::new(false));
        self.lanes().push(Lane {
            tx,
            lagged: lagged.clone(),
        });
        Subscription { rx, lagged }
    }

    /// Hands `event` to every subscriber without ever waiting: a full queue marks its
    /// subscriber as lagged instead; a dropped subscriber is forgotten.
    pub(crate) fn deliver(&self, event: &Event) {
        self.lanes().retain(|l| match l.tx.try_send(event.clone()) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                l.lagged.store(true, Ordering::Release);
                true
            }
            Err(TrySendError::Disconnected(_)) => false,
        });
    }

    /// Every subscriber must look again (after a gap in what was heard). The resync is
    /// queued like an event, which wakes a subscriber waiting in `recv` (a flag alone would
    /// only be seen at its next event, however late that comes); a full queue gets the flag,
    /// which its subscriber reads once it has taken what is queued.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn lag_all(&self) {
        self.lanes().retain(|l| match l.tx.try_send(Event::Resync) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                l.lagged.store(true, Ordering::Release);
                true
            }
            Err(TrySendError::Disconnected(_)) => false,
        });
    }

    fn lanes(&self) -> std::sync::MutexGuard<'_, Vec<Lane>> {
        self.lanes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A broadcast within one process: every server given a clone hears the events of all.
#[derive(Clone, Default)]
pub struct LocalBroadcast {
    hub: Arc<Hub>,
}

impl std::fmt::Debug for LocalBroadcast {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalBroadcast")
            .field("subscribers", &self.hub.lanes().len())
            .finish()
    }
}

impl LocalBroadcast {
    /// A broadcast with no subscribers yet.
    pub fn new() -> LocalBroadcast {
        LocalBroadcast::default()
    }
}

impl Broadcast for LocalBroadcast {
    fn publish(&self, event: &Event) -> io::Result<()> {
        self.hub.deliver(event);
        Ok(())
    }

    fn subscribe(&self, capacity: usize) -> io::Result<Subscription> {
        Ok(self.hub.subscribe(capacity))
    }
}

/// Events a server's listener holds before it starts skipping (with a resync hint).
pub(crate) const LISTENER_CAPACITY: usize = 1024;

/// Runs `deliver` for every event of `sub` on a thread of its own, until `alive` is gone (the
/// server was dropped) or the broadcast ends.
pub(crate) fn listen<T: Send + Sync + 'static>(
    sub: Subscription,
    alive: Weak<T>,
    deliver: impl Fn(&T, &Event) + Send + 'static,
) -> io::Result<()> {
    std::thread::Builder::new()
        .name("mcp-broadcast".into())
        .spawn(move || {
            while let Some(event) = sub.recv() {
                let Some(target) = alive.upgrade() else {
                    return;
                };
                deliver(&target, &event);
            }
        })
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_wakes_a_waiting_subscriber_with_one_resync() {
        let hub = Arc::new(Hub::default());
        let sub = hub.subscribe(4);
        let (tx, rx) = bounded(1);
        let waiter = std::thread::spawn(move || {
            let _ = tx.send(());
            sub.recv_timeout(Duration::from_secs(20))
        });
        // The subscriber has started (and is waiting, or about to): the resync must reach it
        // either way, not only with its next event.
        rx.recv().unwrap();
        hub.lag_all();
        assert_eq!(waiter.join().unwrap(), Some(Event::Resync));

        // A full queue keeps its events and gets the resync after them.
        let full = hub.subscribe(1);
        hub.deliver(&Event::ListChanged(ListKind::Tools));
        hub.lag_all();
        let t = Duration::from_secs(5);
        assert_eq!(
            full.recv_timeout(t),
            Some(Event::ListChanged(ListKind::Tools))
        );
        assert_eq!(full.recv_timeout(t), Some(Event::Resync));
        assert_eq!(full.recv_timeout(Duration::ZERO), None);
    }

    #[test]
    fn a_slow_subscriber_skips_with_one_resync_and_memory_stays_bounded() {
        let b = LocalBroadcast::new();
        let slow = b.subscribe(2).unwrap();
        let fast = b.subscribe(100).unwrap();
        for i in 0..50 {
            b.publish(&Event::ResourceUpdated(format!("r{i}"))).unwrap();
        }
        // The slow one kept the first two, then learns it missed some; nothing more is queued.
        let t = Duration::from_secs(5);
        assert_eq!(
            slow.recv_timeout(t),
            Some(Event::ResourceUpdated("r0".into()))
        );
        assert_eq!(
            slow.recv_timeout(t),
            Some(Event::ResourceUpdated("r1".into()))
        );
        assert_eq!(slow.recv_timeout(t), Some(Event::Resync));
        assert_eq!(slow.recv_timeout(Duration::ZERO), None);
        assert_eq!(fast.rx.len(), 50);
        // After the resync it hears new events again.
        b.publish(&Event::ListChanged(ListKind::Tools)).unwrap();
        assert_eq!(
            slow.recv_timeout(t),
            Some(Event::ListChanged(ListKind::Tools))
        );
        // A dropped subscriber is forgotten on the next publish.
        drop(fast);
        b.publish(&Event::Resync).unwrap();
        assert_eq!(b.hub.lanes().len(), 1);
    }
}
