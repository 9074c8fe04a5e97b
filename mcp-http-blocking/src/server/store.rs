//! Where SSE events are kept so a client can resume a cut stream with `Last-Event-ID`.
//!
//! Event ids have the form `<stream>-<seq>`: `seq` comes from one counter per session, so ids are
//! unique across the session, and within one stream they grow, so an id is also a cursor into
//! that stream's history. Histories are bounded per stream; the oldest events fall off first.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

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
}

/// One stream's events, oldest first, and their bytes.
#[derive(Debug, Default)]
struct History {
    events: VecDeque<(u64, Vec<u8>)>,
    bytes: usize,
}

type Histories = HashMap<String, History>;

/// The default store: a bounded in-memory history per stream.
#[derive(Debug)]
pub struct MemoryEventStore {
    per_stream: usize,
    max_bytes: usize,
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
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
        }
    }

    /// The bytes of events kept per stream by default: 8 MiB. A stream's history is what a
    /// client resuming it may still get; a client that stays away (or a flood sent meanwhile)
    /// must not grow it past this.
    pub const DEFAULT_MAX_BYTES: usize = 8 * 1024 * 1024;

    /// Keeps at most `bytes` of events per stream (the newest event is kept whatever its size).
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
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
        let mut map = self.lock(stream);
        let h = map.entry(stream.to_owned()).or_default();
        h.bytes += event.len();
        h.events.push_back((seq, event.to_vec()));
        while h.events.len() > self.per_stream || (h.bytes > self.max_bytes && h.events.len() > 1) {
            if let Some((_, old)) = h.events.pop_front() {
                h.bytes -= old.len();
            }
        }
    }

    fn after(&self, stream: &str, seq: u64) -> Vec<Vec<u8>> {
        let map = self.lock(stream);
        map.get(stream)
            .map(|h| {
                h.events
                    .iter()
                    .filter(|(s, _)| *s > seq)
                    .map(|(_, e)| e.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn forget(&self, stream: &str) {
        self.lock(stream).remove(stream);
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
    }
}
