//! The watchdog of requests whose handler runs inline: it fires the [`Escape`] of one that has
//! run for longer than the JSON window, so its client gets the SSE head and keep-alives.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};

use super::escape::Escape;
use crate::server::lock;

/// The watchdog of inline requests: fires the escape of a request whose `handle` has run for
/// longer than the JSON window. It ticks (every quarter window, between 1 and 50 ms) while
/// requests come, and sleeps on a channel once none has been inside `handle` for
/// [`SLEEP_AFTER`]; only then does a request have to wake it. Requests register in one of
/// [`SHARDS`] maps, so the threads serving them rarely meet on a lock.
pub(crate) struct Watch {
    shared: Arc<WatchShared>,
    /// Wakes the watchdog; dropping it (with the transport) ends the thread.
    wake: Sender<()>,
}

/// How many maps requests register in (by a running count).
const SHARDS: usize = 8;
/// How long the watchdog ticks with no request inside `handle` before it sleeps.
const SLEEP_AFTER: Duration = Duration::from_secs(1);

type Running = HashMap<u64, (Instant, Arc<Escape>)>;

struct WatchShared {
    shards: [Mutex<Running>; SHARDS],
    next: AtomicU64,
    /// Set while the watchdog sleeps (or is about to): the next request wakes it.
    asleep: AtomicBool,
}

/// Unregisters a request from the [`Watch`] when dropped (also when `handle` panics).
pub(crate) struct Watched<'a> {
    watch: &'a Watch,
    key: u64,
}

impl Drop for Watched<'_> {
    fn drop(&mut self) {
        lock(self.watch.shared.shard(self.key)).remove(&self.key);
    }
}

impl WatchShared {
    fn shard(&self, key: u64) -> &Mutex<Running> {
        &self.shards[key as usize % SHARDS]
    }

    fn is_empty(&self) -> bool {
        self.shards.iter().all(|s| lock(s).is_empty())
    }
}

impl Watch {
    /// Starts the watchdog thread.
    pub(crate) fn start(window: Duration) -> std::io::Result<Watch> {
        let shared = Arc::new(WatchShared {
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
            next: AtomicU64::new(0),
            asleep: AtomicBool::new(true),
        });
        let (wake, rx) = bounded(1);
        let s2 = shared.clone();
        let tick = (window / 4).clamp(Duration::from_millis(1), Duration::from_millis(50));
        thread::Builder::new()
            .name("mcp-http-watch".into())
            .spawn(move || watch_loop(&s2, &rx, window, tick))?;
        Ok(Watch { shared, wake })
    }

    /// Watches `escape` until the returned guard is dropped.
    pub(crate) fn watch(&self, escape: &Arc<Escape>) -> Watched<'_> {
        let key = self.shared.next.fetch_add(1, Ordering::Relaxed);
        lock(self.shared.shard(key)).insert(key, (Instant::now(), escape.clone()));
        if self.shared.asleep.load(Ordering::SeqCst)
            && self.shared.asleep.swap(false, Ordering::SeqCst)
        {
            // Full means a wake-up is already pending.
            let _ = self.wake.try_send(());
        }
        Watched { watch: self, key }
    }
}

fn watch_loop(shared: &WatchShared, wake: &Receiver<()>, window: Duration, tick: Duration) {
    let mut busy_at = Instant::now();
    loop {
        let woke = if shared.asleep.load(Ordering::SeqCst) {
            wake.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            wake.recv_timeout(tick)
        };
        if let Err(RecvTimeoutError::Disconnected) = woke {
            return;
        }
        let now = Instant::now();
        let mut due = Vec::new();
        let mut any = false;
        for shard in &shared.shards {
            let mut r = lock(shard);
            any |= !r.is_empty();
            let keys: Vec<u64> = r
                .iter()
                .filter(|(_, (t, _))| now.saturating_duration_since(*t) >= window)
                .map(|(k, _)| *k)
                .collect();
            due.extend(keys.iter().filter_map(|k| r.remove(k)).map(|(_, e)| e));
        }
        for e in due {
            e.fire(true);
        }
        if any {
            busy_at = now;
        } else if now.saturating_duration_since(busy_at) >= SLEEP_AFTER {
            shared.asleep.store(true, Ordering::SeqCst);
            // A request that registered before it saw the flag would not wake us: look again.
            if !shared.is_empty() && shared.asleep.swap(false, Ordering::SeqCst) {
                busy_at = now;
            }
        }
    }
}
