//! The two request tables every peer keeps, whichever its role: the requests it sent and still
//! waits on (with their deadlines), and the requests it received and has not answered yet (with
//! their progress tokens and log levels).
//!
//! Both roles share this code so that id allocation, deadlines and the "a cancelled request
//! gets no answer" rule behave the same on both sides of a connection.

use crate::id_map::IdMap;
use std::time::{Duration, Instant};

use crate::jsonrpc::{Message, RequestId};
use crate::version::Era;

use super::meta::{LoggingLevel, ProgressToken};

/// How long to wait for the answer to an outgoing request, as data: the engine never reads a
/// clock, it compares these against the `Instant`s the caller passes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeout {
    /// The time allowed from the send (and, with `reset_on_progress`, from the latest progress).
    pub initial: Duration,
    /// Whether a progress notification from the peer restarts the `initial` window, so a long
    /// task that keeps reporting progress is not cut off.
    pub reset_on_progress: bool,
    /// The hard limit from the send that no amount of progress extends.
    pub max_total: Duration,
}

/// A plain duration is a fixed timeout ([`Timeout::fixed`]).
impl From<Duration> for Timeout {
    fn from(limit: Duration) -> Self {
        Timeout::fixed(limit)
    }
}

impl Timeout {
    /// A fixed timeout: progress does not extend it.
    pub const fn fixed(limit: Duration) -> Self {
        Timeout {
            initial: limit,
            reset_on_progress: false,
            max_total: limit,
        }
    }

    /// A timeout that progress resets, never beyond `max_total` after the send.
    pub const fn resetting(initial: Duration, max_total: Duration) -> Self {
        Timeout {
            initial,
            reset_on_progress: true,
            max_total,
        }
    }
}

impl Default for Timeout {
    /// 60 seconds, reset by progress up to 10 minutes: long enough for a sampling or
    /// elicitation round trip with a human in the loop, short enough to free a stuck request.
    fn default() -> Self {
        Timeout::resetting(Duration::from_secs(60), Duration::from_secs(600))
    }
}

/// An outgoing request whose deadline passed; the engine has forgotten it already.
#[derive(Debug, Clone)]
pub struct Expired {
    /// The id of the request.
    pub id: RequestId,
    /// Its method.
    pub method: String,
    /// The incoming request it was made on behalf of (server role), if any.
    pub related_to: Option<RequestId>,
    /// The `notifications/cancelled` to send so the peer stops working on it. Over 2026-07-28
    /// HTTP the transport closes the response stream instead of sending this.
    pub cancel: Message,
}

/// One request this side sent and waits on.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    pub method: String,
    pub related_to: Option<RequestId>,
    pub started: Instant,
    pub deadline: Instant,
    pub timeout: Timeout,
    pub progress_token: Option<ProgressToken>,
    pub last_progress: Option<f64>,
}

impl Outgoing {
    fn hard_deadline(&self) -> Instant {
        self.started + self.timeout.max_total
    }
}

/// The requests this side sent, keyed by id, with an id allocator that never repeats an id in
/// the table's lifetime.
#[derive(Debug, Default)]
pub(crate) struct OutgoingTable {
    next_id: i64,
    entries: IdMap<Outgoing>,
    /// Progress tokens point back at request ids. Tokens are allocated from the same counter as
    /// ids, so they are unique too; kept apart so a token is never mistaken for an id.
    tokens: IdMap<RequestId>,
}

impl OutgoingTable {
    /// A fresh id, never handed out before by this table.
    pub fn allocate_id(&mut self) -> RequestId {
        loop {
            self.next_id = self.next_id.wrapping_add(1);
            let id = RequestId::Number(self.next_id);
            if !self.entries.contains_key(&id) {
                return id;
            }
        }
    }

    /// A fresh progress token for `id`.
    pub fn allocate_token(&mut self) -> ProgressToken {
        self.allocate_id()
    }

    /// Tracks a sent request.
    pub fn insert(
        &mut self,
        id: RequestId,
        method: &str,
        related_to: Option<RequestId>,
        progress_token: Option<ProgressToken>,
        now: Instant,
        timeout: Timeout,
    ) {
        let first = now + timeout.initial.min(timeout.max_total);
        if let Some(t) = &progress_token {
            self.tokens.insert(t.clone(), id.clone());
        }
        self.entries.insert(
            id,
            Outgoing {
                method: method.to_owned(),
                related_to,
                started: now,
                deadline: first,
                timeout,
                progress_token,
                last_progress: None,
            },
        );
    }

    /// Forgets a request (answered, cancelled or timed out).
    pub fn remove(&mut self, id: &RequestId) -> Option<Outgoing> {
        let entry = self.entries.remove(id)?;
        if let Some(t) = &entry.progress_token {
            self.tokens.remove(t);
        }
        Some(entry)
    }

    /// Puts back an entry taken out by [`OutgoingTable::remove`].
    pub fn restore(&mut self, id: RequestId, entry: Outgoing) {
        if let Some(t) = &entry.progress_token {
            self.tokens.insert(t.clone(), id.clone());
        }
        self.entries.insert(id, entry);
    }

    /// Progress arrived for `token`: returns the request id when the token is ours and the
    /// value strictly increased, and moves the deadline when the timeout allows it. Stale or
    /// repeated progress is dropped so a peer cannot keep a request alive by repeating itself.
    pub fn on_progress(
        &mut self,
        token: &ProgressToken,
        progress: f64,
        now: Instant,
    ) -> Option<RequestId> {
        let id = self.tokens.get(token)?;
        let entry = self.entries.get_mut(id)?;
        if entry.last_progress.is_some_and(|last| progress <= last) {
            return None;
        }
        entry.last_progress = Some(progress);
        if entry.timeout.reset_on_progress {
            let hard = entry.hard_deadline();
            entry.deadline = (now + entry.timeout.initial).min(hard).max(entry.deadline);
        }
        Some(id.clone())
    }

    /// The earliest deadline, so the caller knows how long it may block.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.entries.values().map(|e| e.deadline).min()
    }

    /// The deadline of one request now (progress may have moved it); `None` once it is gone.
    pub fn deadline_of(&self, id: &RequestId) -> Option<Instant> {
        self.entries.get(id).map(|e| e.deadline)
    }

    /// Removes and returns every request whose deadline is at or before `now`, oldest first.
    pub fn expire(&mut self, now: Instant) -> Vec<(RequestId, Outgoing)> {
        let mut due: Vec<RequestId> = self
            .entries
            .iter()
            .filter(|(_, e)| e.deadline <= now)
            .map(|(id, _)| id.clone())
            .collect();
        due.sort();
        let mut out: Vec<(RequestId, Outgoing)> = due
            .into_iter()
            .filter_map(|id| self.remove(&id).map(|e| (id, e)))
            .collect();
        out.sort_by_key(|(_, e)| e.started);
        out
    }

    /// How many requests are waiting.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// One request this side received and has not answered.
#[derive(Debug, Clone)]
pub(crate) struct InFlight {
    pub era: Era,
    pub progress_token: Option<ProgressToken>,
    pub last_progress: Option<f64>,
    /// 2026-07-28: the level the request asked for; `None` means no log messages at all.
    pub log_level: Option<LoggingLevel>,
    /// The peer cancelled it while its handler still runs: nothing more goes out for it, and
    /// its id stays taken until the handler ends, so that a request reusing the id meanwhile
    /// is refused as a duplicate instead of being taken for the old one (whose end would
    /// then swallow the new one's answer, or send the old answer under the new request).
    pub cancelled: bool,
}

impl InFlight {
    /// A request of `era` that asked for no progress and named no log level.
    pub fn plain(era: Era) -> InFlight {
        InFlight {
            era,
            progress_token: None,
            last_progress: None,
            log_level: None,
            cancelled: false,
        }
    }
}

/// The requests this side received and still owes an answer, keyed by the peer's id.
///
/// One entry is kept beside the map: a client that waits for each answer before it sends the
/// next request (the usual case over stdio) never has more than one request in flight, and its
/// requests then cost a comparison instead of hashing, inserting into and removing from the
/// map, code that a request one at a time would otherwise run through each time. An id is in
/// one place at most.
#[derive(Debug, Default)]
pub(crate) struct IncomingTable {
    first: Option<(RequestId, InFlight)>,
    rest: IdMap<InFlight>,
}

impl IncomingTable {
    pub fn contains(&self, id: &RequestId) -> bool {
        self.get(id).is_some()
    }

    pub fn insert(&mut self, id: RequestId, entry: InFlight) {
        match &mut self.first {
            Some((held, e)) if *held == id => *e = entry,
            None if !self.rest.contains_key(&id) => self.first = Some((id, entry)),
            _ => {
                self.rest.insert(id, entry);
            }
        }
    }

    pub fn get(&self, id: &RequestId) -> Option<&InFlight> {
        match &self.first {
            Some((held, e)) if held == id => Some(e),
            _ if self.rest.is_empty() => None,
            _ => self.rest.get(id),
        }
    }

    fn get_mut(&mut self, id: &RequestId) -> Option<&mut InFlight> {
        match &mut self.first {
            Some((held, e)) if held == id => Some(e),
            _ if self.rest.is_empty() => None,
            _ => self.rest.get_mut(id),
        }
    }

    pub fn remove(&mut self, id: &RequestId) -> Option<InFlight> {
        if self.first.as_ref().is_some_and(|(held, _)| held == id) {
            return self.first.take().map(|(_, e)| e);
        }
        if self.rest.is_empty() {
            return None;
        }
        self.rest.remove(id)
    }

    /// Marks `id` cancelled; false when it is unknown or was cancelled already.
    pub fn cancel(&mut self, id: &RequestId) -> bool {
        match self.get_mut(id) {
            Some(e) if !e.cancelled => {
                e.cancelled = true;
                true
            }
            _ => false,
        }
    }

    /// Ends `id` (its handler returned) and frees its id: the entry, unless it was cancelled
    /// (then nothing may be sent for it).
    pub fn finish(&mut self, id: &RequestId) -> Option<InFlight> {
        self.remove(id).filter(|e| !e.cancelled)
    }

    /// `id` when it still waits for its answer (known and not cancelled).
    pub fn live(&self, id: &RequestId) -> Option<&InFlight> {
        self.get(id).filter(|e| !e.cancelled)
    }

    /// Checks that a progress report for `id` may go out (the request asked for progress and
    /// the value strictly increased) and records it. Returns the token to use.
    pub fn advance_progress(&mut self, id: &RequestId, progress: f64) -> Option<ProgressToken> {
        let entry = self.get_mut(id).filter(|e| !e.cancelled)?;
        let token = entry.progress_token.clone()?;
        if !progress.is_finite() || entry.last_progress.is_some_and(|last| progress <= last) {
            return None;
        }
        entry.last_progress = Some(progress);
        Some(token)
    }

    pub fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table (one entry beside a map) answers as a plain map would, over random runs of
    /// inserts, removals and look-ups among a few ids, so that the entry beside the map and
    /// the map take turns holding the same id.
    #[test]
    fn the_incoming_table_acts_as_a_map() {
        use std::collections::HashMap;
        let entry = |n: u64| InFlight {
            era: Era::Legacy,
            progress_token: Some(RequestId::Number(n as i64)),
            last_progress: None,
            log_level: None,
            cancelled: false,
        };
        let mut table = IncomingTable::default();
        let mut model: HashMap<RequestId, u64> = HashMap::new();
        let mut seed = 3u64;
        for step in 0..50_000u64 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let id = match (seed >> 40) % 5 {
                4 => RequestId::String("s".into()),
                n => RequestId::Number(n as i64),
            };
            match (seed >> 50) % 4 {
                0 | 1 => {
                    table.insert(id.clone(), entry(step));
                    model.insert(id.clone(), step);
                }
                2 => {
                    let got = table.remove(&id).and_then(|e| e.progress_token);
                    let want = model.remove(&id).map(|n| RequestId::Number(n as i64));
                    assert_eq!(got, want);
                }
                _ => {
                    let first = table.advance_progress(&id, step as f64);
                    assert_eq!(first.is_some(), model.contains_key(&id));
                }
            }
            assert_eq!(table.contains(&id), model.contains_key(&id));
            assert_eq!(
                table.get(&id).and_then(|e| e.progress_token.clone()),
                model.get(&id).map(|n| RequestId::Number(*n as i64))
            );
            assert_eq!(table.len(), model.len());
        }
    }

    #[test]
    fn ids_are_unique() {
        let mut t = OutgoingTable::default();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            assert!(seen.insert(t.allocate_id()));
        }
    }

    #[test]
    fn progress_resets_up_to_the_hard_limit() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut t = OutgoingTable::default();
        let id = t.allocate_id();
        let tok = t.allocate_token();
        t.insert(
            id.clone(),
            "x",
            None,
            Some(tok.clone()),
            t0,
            Timeout::resetting(10 * s, 25 * s),
        );
        assert_eq!(t.next_deadline(), Some(t0 + 10 * s));
        assert_eq!(t.on_progress(&tok, 1.0, t0 + 8 * s), Some(id.clone()));
        assert_eq!(t.next_deadline(), Some(t0 + 18 * s));
        // Not increasing: ignored, deadline unchanged.
        assert_eq!(t.on_progress(&tok, 1.0, t0 + 9 * s), None);
        assert_eq!(t.next_deadline(), Some(t0 + 18 * s));
        assert_eq!(t.on_progress(&tok, 2.0, t0 + 17 * s), Some(id.clone()));
        assert_eq!(t.next_deadline(), Some(t0 + 25 * s));
        assert!(t.expire(t0 + 24 * s).is_empty());
        assert_eq!(t.expire(t0 + 25 * s).len(), 1);
        assert_eq!(t.len(), 0);
    }
}
