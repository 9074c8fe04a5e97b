//! The threads that take requests off tiny_http's queue and answer them.
//!
//! Each generation of `tiny_http::Server` has its own set of recv threads. A recv thread that
//! takes a request answers it itself, on the spot (the service may even run the handler right
//! there, see `answer::escape`): handing every request to another thread cost a wake-up and a context
//! switch per request, which on a busy machine was the larger part of a small request's cost.
//! Two rules keep a recv thread from holding up others:
//! - When a thread takes a request and no other thread of its generation is left waiting in
//!   `recv`, it starts one more before it serves while there are fewer than [`min_threads`];
//!   beyond that, the helper thread starts one when none of the generation's requests has
//!   finished for [`STUCK_AFTER`] while no thread waits, so a slow request (a blocking handler,
//!   or a JSON answer that waits up to `request_timeout`) never leaves queued requests without
//!   a taker for long. Starting a thread whenever none waited kept one thread per connection
//!   under load, most of them asleep, and every request then paid for waking one of them. The
//!   helper ticks only while the threads are all busy, and sleeps otherwise. The in-flight cap
//!   bounds how many can be busy at once; a thread idle for [`THREAD_IDLE`] ends, as long as
//!   another one is still waiting.
//! - A long-lived answer, an SSE stream, is written by a stream thread (reused through a
//!   rendezvous channel), never by a recv thread.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::Shared;
use crate::server::answer::{Deferred, Handoff, Reply};
use crate::server::http::{Body, HttpRequest, HttpResponse, SseBody, SseNext, StreamEnd};

/// How long a recv thread waits in `recv` before it looks at the server's state again.
pub(super) const POLL: Duration = Duration::from_millis(250);

/// How long a spare thread (recv or stream) waits for work before it ends.
const THREAD_IDLE: Duration = Duration::from_secs(5);

/// How long every recv thread of a generation may be busy with none of their requests
/// finished before the helper starts one more.
pub(super) const STUCK_AFTER: Duration = Duration::from_millis(2);

/// How long the helper ticks after the last time it saw a generation with no waiting thread.
const HELPER_IDLE: Duration = Duration::from_millis(50);

/// Recv threads a generation starts without waiting to see them stuck: one per core. More
/// waiting threads only means that a request more often wakes a sleeping one.
pub(super) fn min_threads() -> usize {
    thread::available_parallelism().map_or(2, |n| n.get())
}

/// One generation: a `tiny_http::Server` on a clone of the listener, and the counts its recv
/// threads share.
pub(super) struct Gen {
    pub(super) server: tiny_http::Server,
    born: Instant,
    /// Milliseconds after `born` when the last request was taken.
    last: AtomicU64,
    /// tiny_http's accept thread has ended: this generation only serves the connections it has.
    accept_dead: AtomicBool,
    /// Set once this generation has nothing left to serve; its threads end.
    retired: AtomicBool,
    /// Threads waiting in `recv` (or about to).
    idle: AtomicUsize,
    /// Threads alive.
    pub(super) threads: AtomicUsize,
    /// Requests of this generation holding an in-flight slot.
    busy: AtomicUsize,
    /// Requests served to the end (the helper's measure of progress).
    served: AtomicU64,
}

impl Gen {
    fn touch(&self) {
        let ms = self.born.elapsed().as_millis() as u64;
        self.last.store(ms, Ordering::Relaxed);
    }

    fn quiet_for(&self) -> Duration {
        let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
        self.born.elapsed().saturating_sub(last)
    }

    /// Leaves the idle set unless this is the last thread in it.
    fn leave_idle(&self) -> bool {
        self.idle
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n > 1).then(|| n - 1)
            })
            .is_ok()
    }
}

/// Starts a generation: a fresh `tiny_http::Server` on a clone of the listener, and its first
/// recv thread. `token` is cloned into every recv thread; the server's handle waits for all
/// clones to be gone.
pub(super) fn start_generation(shared: &Arc<Shared>, token: &Sender<()>) -> io::Result<()> {
    let listener = shared.listener.try_clone()?;
    let server = tiny_http::Server::from_listener(listener, None)
        .map_err(|e| io::Error::other(e.to_string()))?;
    let generation = Arc::new(Gen {
        server,
        born: Instant::now(),
        last: AtomicU64::new(0),
        accept_dead: AtomicBool::new(false),
        retired: AtomicBool::new(false),
        idle: AtomicUsize::new(0),
        threads: AtomicUsize::new(0),
        busy: AtomicUsize::new(0),
        served: AtomicU64::new(0),
    });
    add_thread(shared, &generation, token)?;
    shared.generations.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut gens) = shared.gens.lock() {
        gens.retain(|g| g.strong_count() > 0);
        gens.push(Arc::downgrade(&generation));
    }
    Ok(())
}

/// Starts one more recv thread for `generation`, counted as idle from the start.
fn add_thread(shared: &Arc<Shared>, generation: &Arc<Gen>, token: &Sender<()>) -> io::Result<()> {
    generation.idle.fetch_add(1, Ordering::SeqCst);
    generation.threads.fetch_add(1, Ordering::SeqCst);
    let (s, g, t) = (shared.clone(), generation.clone(), token.clone());
    let spawned = thread::Builder::new()
        .name("mcp-http-recv".into())
        .spawn(move || recv_loop(&s, &g, &t));
    if let Err(e) = spawned {
        generation.idle.fetch_sub(1, Ordering::SeqCst);
        generation.threads.fetch_sub(1, Ordering::SeqCst);
        return Err(e);
    }
    Ok(())
}

/// Takes requests of one generation and serves them. When tiny_http's accept thread dies (an
/// idle `accept()` timed out, or a real error such as EMFILE), the thread that hears of it
/// starts the next generation; this one keeps serving the connections it already has until
/// they have been quiet long enough to have timed out.
fn recv_loop(shared: &Arc<Shared>, generation: &Arc<Gen>, token: &Sender<()>) {
    let g = &**generation;
    let mut idle_since = Instant::now();
    let mut in_idle_set = true;
    loop {
        if shared.stopping.load(Ordering::SeqCst) || g.retired.load(Ordering::SeqCst) {
            break;
        }
        match g.server.recv_timeout(POLL) {
            Ok(Some(rq)) => {
                g.touch();
                if g.idle.fetch_sub(1, Ordering::SeqCst) == 1 {
                    // Nobody else is waiting: keep a taker for the requests behind this one,
                    // at once while there are few threads, else once these look stuck.
                    if g.threads.load(Ordering::SeqCst) < shared.min_threads {
                        if let Err(e) = add_thread(shared, generation, token) {
                            log::error!("cannot start a request thread: {e}");
                        }
                    } else {
                        wake_helper(shared);
                    }
                }
                let served = catch_unwind(AssertUnwindSafe(|| dispatch(shared, g, rq)));
                if served.is_err() {
                    log::error!("serving a request panicked");
                }
                g.served.fetch_add(1, Ordering::SeqCst);
                g.idle.fetch_add(1, Ordering::SeqCst);
                idle_since = Instant::now();
            }
            Ok(None) => {
                let quiet = g.quiet_for() > shared.io_timeout * 2 + POLL;
                if g.accept_dead.load(Ordering::SeqCst)
                    && quiet
                    && g.busy.load(Ordering::SeqCst) == 0
                {
                    g.retired.store(true, Ordering::SeqCst);
                    break;
                }
                if idle_since.elapsed() >= THREAD_IDLE && g.leave_idle() {
                    in_idle_set = false;
                    break;
                }
            }
            Err(e) => {
                if g.accept_dead.swap(true, Ordering::SeqCst) {
                    continue;
                }
                g.touch();
                restart(shared, token, &e);
            }
        }
    }
    if in_idle_set {
        g.idle.fetch_sub(1, Ordering::SeqCst);
    }
    g.threads.fetch_sub(1, Ordering::SeqCst);
}

/// Wakes the helper if it sleeps.
fn wake_helper(shared: &Shared) {
    if shared.helper.asleep.load(Ordering::SeqCst)
        && shared.helper.asleep.swap(false, Ordering::SeqCst)
    {
        // Full means a wake-up is already pending.
        let _ = shared.helper.wake.try_send(());
    }
}

/// Starts the helper thread (see the module docs). It holds no exit token of its own: it
/// borrows the one in `Helper::token` for each thread it starts, and that one is dropped at
/// shutdown.
pub(super) fn start_helper(shared: &Arc<Shared>, wake: Receiver<()>) -> io::Result<()> {
    let s = shared.clone();
    thread::Builder::new()
        .name("mcp-http-helper".into())
        .spawn(move || helper_loop(&s, &wake))
        .map(|_| ())
}

fn helper_loop(shared: &Arc<Shared>, wake: &Receiver<()>) {
    let h = &shared.helper;
    let mut last: HashMap<usize, u64> = HashMap::new();
    let mut starved_at = Instant::now();
    loop {
        let woke = if h.asleep.load(Ordering::SeqCst) {
            last.clear();
            wake.recv_timeout(POLL)
        } else {
            wake.recv_timeout(STUCK_AFTER)
        };
        if shared.stopping.load(Ordering::SeqCst)
            || matches!(woke, Err(RecvTimeoutError::Disconnected))
        {
            return;
        }
        let gens: Vec<Arc<Gen>> = match shared.gens.lock() {
            Ok(g) => g.iter().filter_map(|w| w.upgrade()).collect(),
            Err(_) => Vec::new(),
        };
        let mut now_served = HashMap::new();
        let mut starving = false;
        for g in &gens {
            if g.retired.load(Ordering::SeqCst) || g.idle.load(Ordering::SeqCst) > 0 {
                continue;
            }
            starving = true;
            let key = Arc::as_ptr(g) as usize;
            let served = g.served.load(Ordering::SeqCst);
            if last.get(&key) == Some(&served) {
                // No request finished for a whole tick and nobody waits: they are stuck.
                let token = h.token.lock().ok().and_then(|t| t.clone());
                if let Some(t) = token {
                    if let Err(e) = add_thread(shared, g, &t) {
                        log::error!("cannot start a request thread: {e}");
                    }
                }
            }
            now_served.insert(key, served);
        }
        last = now_served;
        if starving {
            starved_at = Instant::now();
        } else if starved_at.elapsed() >= HELPER_IDLE {
            h.asleep.store(true, Ordering::SeqCst);
            // A thread that took the last waiting place before it saw the flag did not wake
            // us: look once more.
            let stuck = gens
                .iter()
                .any(|g| !g.retired.load(Ordering::SeqCst) && g.idle.load(Ordering::SeqCst) == 0);
            if stuck && h.asleep.swap(false, Ordering::SeqCst) {
                starved_at = Instant::now();
            }
        }
    }
}

/// Starts the next generation after tiny_http's accept thread reported `e` and ended.
fn restart(shared: &Arc<Shared>, token: &Sender<()>, e: &io::Error) {
    let idle = matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    );
    if !idle {
        log::warn!("accept failed ({e}); restarting the accept loop");
        // Back off on real errors (EMFILE ...) without spinning; a stop ends it.
        let _ = shared.stop_rx.recv_timeout(Duration::from_millis(200));
    }
    while !shared.stopping.load(Ordering::SeqCst) {
        match start_generation(shared, token) {
            Ok(()) => break,
            Err(e) => {
                log::error!("cannot restart the accept loop: {e}");
                let _ = shared.stop_rx.recv_timeout(Duration::from_secs(1));
            }
        }
    }
}

/// A request's place under `max_in_flight`.
struct InFlight<'a>(&'a Shared, &'a Gen);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.1.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether tiny_http may drop a request with `remaining` unread body bytes: its drain
/// allocates `remaining` bytes at once and aborts the process when that fails.
pub(super) fn drain_is_safe(remaining: usize) -> bool {
    if remaining <= 1 << 20 {
        return true;
    }
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(remaining).is_ok()
}

fn dispatch(shared: &Arc<Shared>, g: &Gen, rq: tiny_http::Request) {
    let cfg = shared.core.config();
    let declared = rq.body_length().unwrap_or(0);
    if declared > cfg.max_body && !drain_is_safe(declared) {
        refuse_forever(shared, rq);
        return;
    }
    let n = shared.in_flight.fetch_add(1, Ordering::SeqCst);
    g.busy.fetch_add(1, Ordering::SeqCst);
    let slot = InFlight(shared, g);
    if n >= shared.max_in_flight {
        drop(slot);
        let _ = rq.respond(tiny_http::Response::empty(503).with_header(header("Retry-After", "1")));
        return;
    }
    serve(shared, rq, slot);
}

/// The request declared a body too large to drain: answer 413 and never drop it.
fn refuse_forever(shared: &Shared, rq: tiny_http::Request) {
    log::warn!(
        "request from {:?} declared a {} byte body; refused, connection abandoned",
        rq.remote_addr(),
        rq.body_length().unwrap_or(0)
    );
    // Counted before the client can see the 413, so a caller that got the answer sees it.
    shared.leaked.fetch_add(1, Ordering::SeqCst);
    let stream = rq.upgrade("close", tiny_http::Response::empty(413));
    std::mem::forget(stream);
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).unwrap_or_else(|_| {
        tiny_http::Header::from_bytes(&b"X-Invalid"[..], &b"1"[..]).expect("static header")
    })
}

/// The request while the core handles it: its body is read through here, and the core's
/// handoff may take it to answer from another thread (see `answer::escape`).
type Held = Arc<Mutex<Option<tiny_http::Request>>>;

fn take(held: &Held) -> Option<tiny_http::Request> {
    held.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// Reads the body of a held request (nothing once it is gone).
struct HeldBody<'a>(&'a Held);

impl Read for HeldBody<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            Some(rq) => rq.as_reader().read(buf),
            None => Ok(0),
        }
    }
}

/// Answers one request. `slot` is its place under `max_in_flight`, given back as soon as the
/// answer turns into a long-lived SSE stream: streams have their own bounds (sessions times
/// streams per session), and idle listeners must not lock out ordinary requests.
///
/// The service may run the request's handler right here, inside the core's `handle`; when
/// the answer has to start before the handler is done, the core calls the handoff, which
/// takes the request and answers it on a stream thread.
fn serve(shared: &Arc<Shared>, rq: tiny_http::Request, slot: InFlight<'_>) {
    let head = HttpRequest {
        method: rq.method().as_str().to_ascii_uppercase(),
        target: rq.url().to_owned(),
        headers: rq
            .headers()
            .iter()
            .map(|h| {
                (
                    h.field.as_str().as_str().to_owned(),
                    h.value.as_str().to_owned(),
                )
            })
            .collect(),
        content_length: rq.body_length().map(|l| l as u64),
        remote_addr: rq.remote_addr().copied(),
    };
    let http10 = rq.http_version() == &tiny_http::HTTPVersion(1, 0);
    let held: Held = Arc::new(Mutex::new(Some(rq)));
    let handoff: Handoff = {
        let (held, shared) = (held.clone(), shared.clone());
        Box::new(move |d: Deferred| {
            let Some(rq) = take(&held) else { return };
            stream(&shared, move || write_response(rq, d.run(), http10));
        })
    };
    let reply = shared
        .core
        .handle_inline(&head, &mut HeldBody(&held), handoff);
    let resp = match reply {
        Reply::Now(r) => r,
        Reply::Handed => return,
    };
    if let Some(rq) = take(&held) {
        match resp.body {
            Body::Bytes(_) => write_response(rq, resp, http10),
            Body::Sse(_) => {
                drop(slot);
                stream(shared, move || write_response(rq, resp, http10));
            }
        }
    }
}

/// Writes a response on this thread: bytes at once, an SSE stream until it ends.
fn write_response(rq: tiny_http::Request, resp: HttpResponse, http10: bool) {
    let HttpResponse {
        status,
        headers,
        body,
    } = resp;
    match body {
        Body::Bytes(bytes) => {
            let mut r = tiny_http::Response::from_data(bytes).with_status_code(status);
            for (n, v) in &headers {
                r.add_header(header(n, v));
            }
            if let Err(e) = rq.respond(r) {
                log::debug!("writing a response failed: {e}");
            }
        }
        Body::Sse(sse) => write_sse(rq.into_writer(), status, &headers, sse, !http10),
    }
}

/// Runs `write` on a stream thread: an idle one if there is one (the channel has no buffer,
/// so a stream never waits behind a busy thread), else a new one.
fn stream(shared: &Shared, write: impl FnOnce() + Send + 'static) {
    let job = match shared.streams.0.try_send(Box::new(write)) {
        Ok(()) => return,
        Err(e) => e.into_inner(),
    };
    let jobs = shared.streams.1.clone();
    let spawned = thread::Builder::new()
        .name("mcp-http-sse".into())
        .spawn(move || {
            job();
            while let Ok(job) = jobs.recv_timeout(THREAD_IDLE) {
                job();
            }
        });
    if let Err(e) = spawned {
        // The job, and with it the stream, is dropped: the client sees the connection close.
        log::error!("cannot start a stream thread: {e}");
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        _ => "Status",
    }
}

fn chunk(out: &mut Vec<u8>, data: &[u8], chunked: bool) {
    if chunked {
        out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
        out.extend_from_slice(data);
        out.extend_from_slice(b"\r\n");
    } else {
        out.extend_from_slice(data);
    }
}

/// Writes an SSE response by hand: the head, then each event as one chunk followed by a
/// flush, `:` comments when idle, and the terminating chunk. The connection is closed
/// afterwards (`Connection: close`), because tiny_http may already have given up reading
/// from it while the stream ran.
fn write_sse(
    mut w: Box<dyn Write + Send>,
    status: u16,
    headers: &[(String, String)],
    mut sse: SseBody,
    chunked: bool,
) {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    if chunked {
        head.push_str("Transfer-Encoding: chunked\r\n");
    }
    head.push_str("Connection: close\r\n\r\n");
    // The head goes out at once: a client waits for it before it treats the stream as open.
    let mut ok = w.write_all(head.as_bytes()).and_then(|_| w.flush()).is_ok();
    let mut buf = Vec::new();
    while ok {
        let next = sse.next_event();
        let end = matches!(next, SseNext::End);
        match next {
            SseNext::Event(e) => chunk(&mut buf, &e, chunked),
            SseNext::Idle => chunk(&mut buf, b":\n\n", chunked),
            SseNext::End => {
                if chunked {
                    buf.extend_from_slice(b"0\r\n\r\n");
                }
            }
        }
        if w.write_all(&buf).and_then(|_| w.flush()).is_err() {
            ok = false;
            break;
        }
        buf.clear();
        if end {
            break;
        }
    }
    sse.finish(if ok {
        StreamEnd::Completed
    } else {
        StreamEnd::ClientGone
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draining_is_judged_by_whether_the_allocation_could_succeed() {
        assert!(drain_is_safe(0));
        assert!(drain_is_safe(10 << 20));
        assert!(!drain_is_safe(999_999_999_999_999));
    }
}
