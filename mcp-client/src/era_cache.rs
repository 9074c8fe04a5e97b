//! Which era each server spoke, so the next connection skips the probe. A dual-era client
//! ([`Revision::Auto`](crate::Revision::Auto)) first asks `server/discover` and falls back to
//! `initialize`; against a legacy server that costs a round trip (and over HTTP a refused
//! request) on every connection. The spec asks clients to remember the outcome per server.
//!
//! The cache is a value the host owns and hands to each [`ClientBuilder`](crate::ClientBuilder)
//! (no global state); clones share the same entries. It only changes the order of attempts:
//! a server remembered as legacy is sent `initialize` first, and when that fails the entry is
//! dropped so the next connection probes again.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_core::version::Era;

/// Remembered eras, keyed by server (a child's command line, `stdio:PROGRAM ARGS`, or an
/// HTTP endpoint URL). Cheap to clone; clones share entries.
///
/// ```
/// use mcp_client::{Client, EraCache};
/// let cache = EraCache::new();
/// let builder = Client::builder().era_cache(cache.clone());
/// # let _ = builder;
/// assert!(cache.is_empty());
/// ```
#[derive(Clone, Default)]
pub struct EraCache {
    entries: Arc<Mutex<HashMap<String, Era>>>,
}

impl EraCache {
    /// An empty cache.
    pub fn new() -> Self {
        EraCache::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Era>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The era `server` spoke last time, if known.
    pub fn get(&self, server: &str) -> Option<Era> {
        self.lock().get(server).copied()
    }

    /// Remembers that `server` speaks `era` (the builder does this after each handshake; a
    /// host may also fill the cache from its own configuration).
    pub fn insert(&self, server: impl Into<String>, era: Era) {
        self.lock().insert(server.into(), era);
    }

    /// Forgets `server`.
    pub fn remove(&self, server: &str) {
        self.lock().remove(server);
    }

    /// How many servers are remembered.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

impl fmt::Debug for EraCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.lock().iter()).finish()
    }
}
