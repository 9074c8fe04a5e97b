//! Where SSE events are kept so a client can resume a cut stream with `Last-Event-ID`.
//!
//! Event ids have the form `<stream>-<seq>`: `seq` comes from one counter per session, so ids are
//! unique across the session, and within one stream they grow, so an id is also a cursor into
//! that stream's history. Histories are bounded per stream (the oldest events fall off first)
//! and all together (the largest histories shed first), and a resumption replays the kept
//! events without copying them.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Storage for resumable streams. Keys are opaque strings chosen by the transport (session id
/// plus stream number); implementations may persist them elsewhere (a database, a shared cache)
/// so a resumed stream could even be served by another process.
pub trait EventStore: Send + Sync {
    /// Records event `seq` of `stream`, with its complete SSE bytes.
    fn append(&self, stream: &str, seq: u64, event: &[u8]);
    /// The events of `stream` after `seq`, oldest first.
    fn after(&self, stream: &str, seq: u64) -> Vec<Vec<u8>>;
    /// Drops the history of `stream` (the stream or its session is over).
    fn forget(&self, stream: &str);
    /// [`after`](Self::after), shared rather than copied: a store that keeps its events in
    /// memory can hand out the same bytes to every resumption (by default, `after`'s copies).
    /// Each resumption of a stream replays its history; copies made a 200-byte request cost
    /// the server the whole history, again for every connection that asked.
    fn after_shared(&self, stream: &str, seq: u64) -> Vec<Arc<[u8]>> {
        self.after(stream, seq).into_iter().map(Arc::from).collect()
    }
}

/// One stream's events, oldest first, and their bytes.
#[derive(Debug, Default)]
struct History {
    events: VecDeque<(u64, Arc<[u8]>)>,
    bytes: usize,
}

type Histories = HashMap<String, History>;

/// The default store: a bounded in-memory history per stream.
#[derive(Debug)]
pub struct MemoryEventStore {
    per_stream: usize,
    max_bytes: usize,
    max_total: usize,
    /// The bytes of every history together.
    total: AtomicUsize,
    /// Streams spread over several maps by a hash of their key, so the threads of different
    /// sessions rarely meet on a lock (every answer of a resumable stream is appended).
    shards: [Mutex<Histories>; SHARDS],
}

const SHARDS: usize = 16;

impl MemoryEventStore {
    /// Keeps at most `per_stream` events of each stream (at least one), and at most
    /// [`DEFAULT_MAX_BYTES`](Self::DEFAULT_MAX_BYTES) of them.
    pub fn new(per_stream: usize) -> Self {
        MemoryEventStore {
            per_stream: per_stream.max(1),
            max_bytes: Self::DEFAULT_MAX_BYTES,
            max_total: Self::DEFAULT_MAX_TOTAL_BYTES,
            total: AtomicUsize::new(0),
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
        }
    }

    /// The bytes of events kept per stream by default: 8 MiB. A stream's history is what a
    /// client resuming it may still get; a client that stays away (or a flood sent meanwhile)
    /// must not grow it past this.
    pub const DEFAULT_MAX_BYTES: usize = 8 * 1024 * 1024;

    /// Keeps at most `bytes` of events per stream (the newest event is kept whatever its size,
    /// within [`max_total_bytes`](Self::max_total_bytes)).
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// The bytes of events kept by default, every stream of every session together: 64 MiB.
    /// Per-stream bounds alone let one client grow the server by a quarter of a gigabyte a
    /// session (64 finished streams of large answers each), and a thousand sessions without
    /// end; past this, the largest histories shed their oldest events first.
    pub const DEFAULT_MAX_TOTAL_BYTES: usize = 64 * 1024 * 1024;

    /// Keeps at most `bytes` of events over all streams together.
    pub fn max_total_bytes(mut self, bytes: usize) -> Self {
        self.max_total = bytes;
        self
    }

    /// The bytes of events kept now, every stream together.
    pub fn total_bytes(&self) -> usize {
        self.total.load(Ordering::Relaxed)
    }

    /// Sheds events until the histories fit [`max_total_bytes`](Self::max_total_bytes): the
    /// oldest events of the largest history go first (the client that stored the most loses
    /// the most), down to half that history at a time so one scan frees a good deal. Runs
    /// only past the bound; a scan takes each shard's lock in turn, never two at once.
    fn shed(&self) {
        while self.total.load(Ordering::Relaxed) > self.max_total {
            let mut largest: Option<(usize, String, usize)> = None;
            for (i, shard) in self.shards.iter().enumerate() {
                let map = crate::server::lock(shard);
                for (key, h) in map.iter() {
                    if largest.as_ref().is_none_or(|(_, _, b)| h.bytes > *b) {
                        largest = Some((i, key.clone(), h.bytes));
                    }
                }
            }
            let Some((i, key, _)) = largest else { return };
            let mut map = crate::server::lock(&self.shards[i]);
            let Some(h) = map.get_mut(&key) else { continue };
            let keep = h.bytes / 2;
            while h.bytes > keep && self.total.load(Ordering::Relaxed) > self.max_total {
                let Some((_, old)) = h.events.pop_front() else {
                    break;
                };
                h.bytes -= old.len();
                self.total.fetch_sub(old.len(), Ordering::Relaxed);
            }
            if h.events.is_empty() {
                map.remove(&key);
            }
        }
    }

    fn lock(&self, stream: &str) -> std::sync::MutexGuard<'_, Histories> {
        // FNV-1a: the keys are ours (session id and stream number), no need for a keyed hash.
        let h = stream.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        crate::server::lock(&self.shards[(h % SHARDS as u64) as usize])
    }
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        MemoryEventStore::new(1000)
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, stream: &str, seq: u64, event: &[u8]) {
        {
            let mut map = self.lock(stream);
            let h = map.entry(stream.to_owned()).or_default();
            h.bytes += event.len();
            self.total.fetch_add(event.len(), Ordering::Relaxed);
            h.events.push_back((seq, Arc::from(event)));
            while h.events.len() > self.per_stream
                || (h.bytes > self.max_bytes && h.events.len() > 1)
            {
                if let Some((_, old)) = h.events.pop_front() {
                    h.bytes -= old.len();
                    self.total.fetch_sub(old.len(), Ordering::Relaxed);
                }
            }
        }
        if self.total.load(Ordering::Relaxed) > self.max_total {
            self.shed();
        }
    }

    fn after(&self, stream: &str, seq: u64) -> Vec<Vec<u8>> {
        self.after_shared(stream, seq)
            .iter()
            .map(|e| e.to_vec())
            .collect()
    }

    fn after_shared(&self, stream: &str, seq: u64) -> Vec<Arc<[u8]>> {
        let map = self.lock(stream);
        map.get(stream)
            .map(|h| {
                h.events
                    .iter()
                    .filter(|(s, _)| *s > seq)
                    .map(|(_, e)| Arc::clone(e))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn forget(&self, stream: &str) {
        if let Some(h) = self.lock(stream).remove(stream) {
            self.total.fetch_sub(h.bytes, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_is_bounded_and_replays_after_cursor() {
        let s = MemoryEventStore::new(3);
        for seq in [1, 4, 6, 9] {
            s.append("a", seq, seq.to_string().as_bytes());
        }
        s.append("b", 5, b"other");
        assert_eq!(s.after("a", 4), vec![b"6".to_vec(), b"9".to_vec()]);
        // 1 fell off: the history keeps only the 3 newest.
        assert_eq!(s.after("a", 0).len(), 3);
        s.forget("a");
        assert!(s.after("a", 0).is_empty());
        assert_eq!(s.after("b", 0), vec![b"other".to_vec()]);
    }

    #[test]
    fn history_is_bounded_in_bytes_too() {
        let s = MemoryEventStore::new(1000).max_bytes(10);
        for seq in 1..=5 {
            s.append("a", seq, b"1234");
        }
        // 5 x 4 bytes: the two newest fit in 10.
        assert_eq!(s.after("a", 0).len(), 2);
        // A single event larger than the bound is still kept: it is the newest.
        s.append("a", 6, &[0; 64]);
        assert_eq!(s.after("a", 0), vec![vec![0; 64]]);
        assert_eq!(s.total_bytes(), 64);
    }

    #[test]
    fn all_histories_together_are_bounded_and_the_largest_sheds_first() {
        let s = MemoryEventStore::new(1000).max_total_bytes(100);
        for seq in 1..=4 {
            s.append("small", seq, &[1; 5]);
        }
        for seq in 5..=20 {
            s.append("big", seq, &[2; 10]);
        }
        assert!(s.total_bytes() <= 100, "{}", s.total_bytes());
        // The large history lost its oldest events; the small one kept all of its own.
        assert_eq!(s.after("small", 0).len(), 4);
        let big = s.after("big", 0);
        assert!(big.len() < 16 && !big.is_empty(), "{}", big.len());
        assert_eq!(s.after("big", 19), vec![vec![2; 10]], "the newest is kept");
        s.forget("big");
        s.forget("small");
        assert_eq!(s.total_bytes(), 0);
    }

    #[test]
    fn a_replay_shares_the_kept_bytes() {
        let s = MemoryEventStore::new(10);
        s.append("a", 1, &[7; 1000]);
        let (one, two) = (s.after_shared("a", 0), s.after_shared("a", 0));
        assert!(Arc::ptr_eq(&one[0], &two[0]));
    }
}
