//! Rate limits per client: token buckets for the requests a client makes (`tools/call`,
//! `completion/complete`) and for the notifications a server sends it (log messages, progress).
//!
//! The spec's security rules say servers MUST rate limit tool invocations and SHOULD rate limit
//! completions, log messages and progress. A bucket holds up to `burst` tokens and gains one
//! every `interval`; each request or notification takes one. It is kept as the theoretical
//! time at which the bucket is empty enough to take the next token (the generic cell rate
//! algorithm): one `Instant` per bucket, integer arithmetic on it, no timer thread, no refill
//! job. A request that finds no token is refused at once with [`codes::RATE_LIMITED`] and
//! `data.retryAfterMs` (HTTP: `429` with `Retry-After`); a notification that finds none is
//! dropped and counted, never queued, so a handler that floods cannot grow memory anywhere.
//!
//! Who is a client: a legacy session (stdio, a legacy HTTP session) keeps its buckets itself;
//! a 2026-07-28 HTTP exchange is a session of its own, so its buckets live in a table shared
//! by the server, keyed by the authorized client (`client_id` and `sub` of the claims) or,
//! without authorization, by the peer's IP address, except for a loopback peer, which is
//! keyed by its connection (address and port): a loopback peer is either a process of the
//! same machine or a reverse proxy in front of this server, and behind a proxy every client
//! would otherwise share one set of buckets. The table is bounded
//! ([`RateLimitsBuilder::max_clients`]): when full, buckets that have refilled (an idle client
//! loses nothing by being forgotten) go first, then the least recently used.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_core::jsonrpc::{ErrorObject, codes};
use serde_json::{Value, json};

/// One limit: `burst` at once, then one per `interval` (a token bucket).
///
/// ```
/// use mcp_server_kit::RateLimit;
/// let l = RateLimit::per_second(50, 100);
/// assert_eq!(l.interval(), std::time::Duration::from_millis(20));
/// assert_eq!(l.burst(), 100);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimit {
    interval: Duration,
    burst: u32,
}

impl RateLimit {
    /// `rate` per second on average, `burst` at once (both at least 1).
    pub fn per_second(rate: u32, burst: u32) -> RateLimit {
        RateLimit::new(rate, Duration::from_secs(1), burst)
    }

    /// `count` per `period` on average, `burst` at once (both at least 1). A zero period
    /// limits nothing.
    pub fn new(count: u32, period: Duration, burst: u32) -> RateLimit {
        RateLimit {
            interval: period / count.max(1),
            burst: burst.max(1),
        }
    }

    /// The time one token takes to come back.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// How many may come at once.
    pub fn burst(&self) -> u32 {
        self.burst
    }
}

/// A server's rate limits for one kind of transport (see [`ServerBuilder::rate_limits`] and
/// [`ServerBuilder::stdio_rate_limits`]). `None` for a setting means not limited.
///
/// [`ServerBuilder::rate_limits`]: crate::ServerBuilder::rate_limits
/// [`ServerBuilder::stdio_rate_limits`]: crate::ServerBuilder::stdio_rate_limits
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimits {
    tool_calls: Option<RateLimit>,
    completions: Option<RateLimit>,
    log_messages: Option<RateLimit>,
    progress: Option<RateLimit>,
    max_clients: usize,
}

impl Default for RateLimits {
    /// The defaults over HTTP: 50 tool calls a second per client with bursts of 100, the same
    /// for completions, 100 log messages a second (bursts of 500) and 50 progress
    /// notifications a second (bursts of 100), for at most 10,000 clients at once. No
    /// interactive client comes near them (a model calls a tool every few hundred
    /// milliseconds at most; a user types fewer than 20 keys a second; nobody reads more than
    /// a few dozen updates a second), while a runaway loop or a flood is stopped within a
    /// fraction of a second.
    fn default() -> Self {
        RateLimits {
            tool_calls: Some(RateLimit::per_second(50, 100)),
            completions: Some(RateLimit::per_second(50, 100)),
            log_messages: Some(RateLimit::per_second(100, 500)),
            progress: Some(RateLimit::per_second(50, 100)),
            max_clients: 10_000,
        }
    }
}

impl RateLimits {
    /// A builder starting from the defaults ([`RateLimits::default`]).
    pub fn builder() -> RateLimitsBuilder {
        RateLimitsBuilder {
            limits: RateLimits::default(),
        }
    }

    /// Nothing limited (the default over stdio).
    pub fn off() -> RateLimits {
        RateLimits {
            tool_calls: None,
            completions: None,
            log_messages: None,
            progress: None,
            max_clients: 10_000,
        }
    }

    /// `tools/call` per client (a tool's own limit, [`Tool::rate_limit`](crate::Tool::rate_limit),
    /// takes its place for that tool).
    pub fn tool_calls(&self) -> Option<RateLimit> {
        self.tool_calls
    }

    /// `completion/complete` per client.
    pub fn completions(&self) -> Option<RateLimit> {
        self.completions
    }

    /// `notifications/message` sent to a client.
    pub fn log_messages(&self) -> Option<RateLimit> {
        self.log_messages
    }

    /// `notifications/progress` sent to a client.
    pub fn progress(&self) -> Option<RateLimit> {
        self.progress
    }

    /// The most clients whose buckets are kept at once (2026-07-28 HTTP).
    pub fn max_clients(&self) -> usize {
        self.max_clients
    }

    fn any(&self) -> bool {
        self.tool_calls.is_some()
            || self.completions.is_some()
            || self.log_messages.is_some()
            || self.progress.is_some()
    }
}

/// Builds [`RateLimits`].
#[derive(Debug, Clone)]
pub struct RateLimitsBuilder {
    limits: RateLimits,
}

impl RateLimitsBuilder {
    /// See [`RateLimits::tool_calls`].
    pub fn tool_calls(mut self, limit: Option<RateLimit>) -> Self {
        self.limits.tool_calls = limit;
        self
    }

    /// See [`RateLimits::completions`].
    pub fn completions(mut self, limit: Option<RateLimit>) -> Self {
        self.limits.completions = limit;
        self
    }

    /// See [`RateLimits::log_messages`].
    pub fn log_messages(mut self, limit: Option<RateLimit>) -> Self {
        self.limits.log_messages = limit;
        self
    }

    /// See [`RateLimits::progress`].
    pub fn progress(mut self, limit: Option<RateLimit>) -> Self {
        self.limits.progress = limit;
        self
    }

    /// See [`RateLimits::max_clients`] (at least 1).
    pub fn max_clients(mut self, n: usize) -> Self {
        self.limits.max_clients = n.max(1);
        self
    }

    /// The finished limits.
    pub fn build(self) -> RateLimits {
        self.limits
    }
}

/// How many requests were refused and notifications dropped by rate limits since the server
/// started ([`Server::rate_limited`](crate::Server::rate_limited)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimited {
    /// `tools/call` requests refused.
    pub tool_calls: u64,
    /// `completion/complete` requests refused.
    pub completions: u64,
    /// Log messages dropped.
    pub log_messages: u64,
    /// Progress notifications dropped.
    pub progress: u64,
}

/// What a token is taken for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    ToolCall,
    Completion,
    Log,
    Progress,
}

/// One token bucket, as the time at which it next has room (`None`: full).
#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    tat: Option<Instant>,
}

impl Bucket {
    /// Takes a token at `now`, or says how long until one is free.
    fn take(&mut self, limit: RateLimit, now: Instant) -> Result<(), Duration> {
        if limit.interval.is_zero() {
            return Ok(());
        }
        let tat = self.tat.map_or(now, |t| t.max(now));
        let ahead = tat - now;
        let tolerance = limit.interval.saturating_mul(limit.burst - 1);
        if ahead > tolerance {
            return Err(ahead - tolerance);
        }
        self.tat = Some(tat.checked_add(limit.interval).unwrap_or(tat));
        Ok(())
    }

    /// True when the bucket is full again: forgetting it changes nothing.
    fn full(&self, now: Instant) -> bool {
        self.tat.is_none_or(|t| t <= now)
    }
}

/// One client's buckets.
#[derive(Debug, Default)]
pub(crate) struct Buckets {
    tool_calls: Bucket,
    completions: Bucket,
    logs: Bucket,
    progress: Bucket,
    /// Tools with a limit of their own (few: only those that declare one).
    tools: Vec<(String, Bucket)>,
}

impl Buckets {
    fn take(
        &mut self,
        kind: Kind,
        tool: Option<&str>,
        limit: RateLimit,
        now: Instant,
    ) -> Result<(), Duration> {
        let bucket = match (kind, tool) {
            (Kind::ToolCall, Some(name)) => match self.tools.iter().position(|(n, _)| n == name) {
                Some(i) => &mut self.tools[i].1,
                None => {
                    self.tools.push((name.to_owned(), Bucket::default()));
                    let last = self.tools.len() - 1;
                    &mut self.tools[last].1
                }
            },
            (Kind::ToolCall, None) => &mut self.tool_calls,
            (Kind::Completion, _) => &mut self.completions,
            (Kind::Log, _) => &mut self.logs,
            (Kind::Progress, _) => &mut self.progress,
        };
        bucket.take(limit, now)
    }

    fn full(&self, now: Instant) -> bool {
        self.tool_calls.full(now)
            && self.completions.full(now)
            && self.logs.full(now)
            && self.progress.full(now)
            && self.tools.iter().all(|(_, b)| b.full(now))
    }
}

/// Who a 2026-07-28 HTTP exchange counts as.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ClientKey {
    /// The authorized client (from the claims).
    Auth(String),
    /// The peer's address, without authorization (port 0 unless it is a loopback peer).
    Peer(SocketAddr),
    /// Neither is known (a transport core mounted without the peer's address): all such
    /// exchanges share one set of buckets rather than go unlimited.
    Unknown,
}

impl ClientKey {
    /// The key for an exchange: `client_id` and `sub` of the claims when there are any (the
    /// whole claims otherwise), else the peer's IP (not its port: one client opens many
    /// connections), or for a loopback peer (a local process, or a proxy relaying many
    /// clients) its connection.
    pub(crate) fn of(auth: Option<&Value>, peer: Option<SocketAddr>) -> ClientKey {
        if let Some(claims) = auth {
            let part = |k: &str| claims.get(k).and_then(Value::as_str);
            return match (part("client_id"), part("sub")) {
                (None, None) => ClientKey::Auth(claims.to_string()),
                (c, s) => ClientKey::Auth(format!("{}\u{0}{}", c.unwrap_or(""), s.unwrap_or(""))),
            };
        }
        match peer {
            Some(p) if p.ip().is_loopback() => ClientKey::Peer(p),
            Some(p) => ClientKey::Peer(SocketAddr::new(p.ip(), 0)),
            None => ClientKey::Unknown,
        }
    }
}

/// A table entry: the buckets and when they were last used.
struct Entry {
    buckets: Buckets,
    used: Instant,
}

/// The limiter a server shares between its sessions: the limits per kind of transport, the
/// table of 2026-07-28 clients, the counts.
pub(crate) struct Limiter {
    pub(crate) network: RateLimits,
    pub(crate) stdio: RateLimits,
    table: Mutex<HashMap<ClientKey, Entry>>,
    counts: [AtomicU64; 4],
}

impl Limiter {
    pub(crate) fn new(network: RateLimits, stdio: RateLimits) -> Limiter {
        Limiter {
            network,
            stdio,
            table: Mutex::new(HashMap::new()),
            counts: Default::default(),
        }
    }

    /// The limits of the transport (`network`: HTTP, the HTTP+SSE transport).
    pub(crate) fn limits(&self, network: bool) -> &RateLimits {
        if network { &self.network } else { &self.stdio }
    }

    /// True when nothing at all is limited for this kind of transport (tool overrides aside).
    pub(crate) fn off(&self, network: bool) -> bool {
        !self.limits(network).any()
    }

    /// Counts one refusal or drop.
    pub(crate) fn count(&self, kind: Kind) {
        self.counts[kind as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn counts(&self) -> RateLimited {
        let c = |k: Kind| self.counts[k as usize].load(Ordering::Relaxed);
        RateLimited {
            tool_calls: c(Kind::ToolCall),
            completions: c(Kind::Completion),
            log_messages: c(Kind::Log),
            progress: c(Kind::Progress),
        }
    }

    /// Takes a token from a client of the shared table.
    pub(crate) fn take_shared(
        &self,
        key: ClientKey,
        kind: Kind,
        tool: Option<&str>,
        limit: RateLimit,
        now: Instant,
    ) -> Result<(), Duration> {
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        if !table.contains_key(&key) && table.len() >= self.network.max_clients {
            evict(&mut table, now);
        }
        let entry = table.entry(key).or_insert_with(|| Entry {
            buckets: Buckets::default(),
            used: now,
        });
        entry.used = now;
        entry.buckets.take(kind, tool, limit, now)
    }

    #[cfg(test)]
    fn clients(&self) -> usize {
        self.table.lock().map_or(0, |t| t.len())
    }
}

/// Makes room in a full table: every client whose buckets refilled goes (nothing is lost), or,
/// when none has, the least recently used one.
fn evict(table: &mut HashMap<ClientKey, Entry>, now: Instant) {
    let before = table.len();
    table.retain(|_, e| !e.buckets.full(now));
    if table.len() < before {
        return;
    }
    let oldest = table
        .iter()
        .min_by_key(|(_, e)| e.used)
        .map(|(k, _)| k.clone());
    if let Some(k) = oldest {
        table.remove(&k);
    }
}

/// A session's own buckets (legacy sessions, stdio).
pub(crate) fn take_local(
    buckets: &Mutex<Buckets>,
    kind: Kind,
    tool: Option<&str>,
    limit: RateLimit,
    now: Instant,
) -> Result<(), Duration> {
    buckets
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take(kind, tool, limit, now)
}

/// The JSON-RPC error for a refused request: [`codes::RATE_LIMITED`], a message that names the
/// method and the wait, and `data.retryAfterMs` (rounded up, so a client that waits that long
/// finds a token).
pub(crate) fn refused(method: &str, wait: Duration) -> ErrorObject {
    let ms = wait.as_nanos().div_ceil(1_000_000).max(1);
    ErrorObject::new(
        codes::RATE_LIMITED,
        format!("rate limited: too many {method} requests; retry in {ms} ms"),
    )
    .with_data(json!({ "retryAfterMs": ms as u64 }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_gives_its_burst_then_one_per_interval() {
        let limit = RateLimit::new(1, Duration::from_millis(100), 3);
        let t0 = Instant::now();
        let mut b = Bucket::default();
        for _ in 0..3 {
            assert!(b.take(limit, t0).is_ok());
        }
        let wait = b.take(limit, t0).unwrap_err();
        assert_eq!(wait, Duration::from_millis(100));
        // Just before the token is back: still refused, with the rest of the wait.
        let early = t0 + Duration::from_millis(60);
        assert_eq!(b.take(limit, early).unwrap_err(), Duration::from_millis(40));
        assert!(b.take(limit, t0 + Duration::from_millis(100)).is_ok());
        assert!(b.take(limit, t0 + Duration::from_millis(100)).is_err());
        // Idle long enough: full again.
        assert!(b.full(t0 + Duration::from_millis(400)));
    }

    #[test]
    fn the_client_table_stays_within_its_cap_and_drops_refilled_buckets_first() {
        let limits = RateLimits::builder().max_clients(4).build();
        let l = Limiter::new(limits, RateLimits::off());
        let limit = RateLimit::per_second(1, 1);
        let t0 = Instant::now();
        let ip = |n: u8| ClientKey::Peer(SocketAddr::from(([10, 0, 0, n], 0)));
        for n in 0..4 {
            assert!(
                l.take_shared(ip(n), Kind::ToolCall, None, limit, t0)
                    .is_ok()
            );
        }
        // Client 0 is still limited at t0; a fifth client evicts the oldest (all are busy).
        assert!(
            l.take_shared(ip(4), Kind::ToolCall, None, limit, t0)
                .is_ok()
        );
        assert_eq!(l.clients(), 4);
        // Two seconds on, every bucket refilled: a new client clears them all out.
        let later = t0 + Duration::from_secs(2);
        assert!(
            l.take_shared(ip(9), Kind::ToolCall, None, limit, later)
                .is_ok()
        );
        assert_eq!(l.clients(), 1);
        for n in 10..200 {
            let _ = l.take_shared(ip(n), Kind::ToolCall, None, limit, later);
            assert!(l.clients() <= 4);
        }
    }

    #[test]
    fn the_refusal_names_the_method_and_rounds_the_wait_up() {
        let e = refused("tools/call", Duration::from_micros(20_001));
        assert_eq!(e.code, codes::RATE_LIMITED);
        assert_eq!(e.data.as_ref().unwrap()["retryAfterMs"], 21);
        assert!(e.message.contains("tools/call"));
    }
}
