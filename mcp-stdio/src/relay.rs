//! Reading the input on whichever thread is free, so the session may do its work inside
//! `Session::handle` on the reading thread.
//!
//! The cheapest way to serve a quick request is on the thread that read it: no hand-off to a
//! worker (a futex wake-up and a context switch, several times the cost of parsing the line),
//! and the answer is written at once by the same thread. The danger is a `handle` that blocks
//! (a slow tool, or one waiting for the client's answer to a sampling request, which only a
//! reader can deliver): nothing would be read meanwhile, not even `ping` or the cancellation.
//!
//! So reading is a role passed between threads, in the spirit of a runtime handing its
//! processor to a new thread when one blocks in a system call. Before it calls `handle`, the
//! reading thread leaves the role (the `MessageReader`) in a slot; afterwards it takes the role
//! back and reads on. A watchdog thread looks every [`TICK`] while input flows: when the
//! holder has been inside `handle` for longer than [`STUCK_AFTER`], it takes the role from the
//! slot and starts a new reading thread with it. The old thread finishes its `handle`, finds the
//! role gone, and ends. At most `max_threads` threads read or handle at once; beyond that the
//! input waits (back-pressure). The watchdog sleeps on a channel once the input has been quiet
//! for [`IDLE_AFTER`] with no `handle` running, so an idle server costs no wake-ups.

use std::io::{self, BufReader, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded, select};
use mcp_core::jsonrpc::Message;
use mcp_core::service::{Outbound, Session};

use crate::framing::{FrameError, MessageReader};
use crate::output::{DEFER_FLUSH, SharedOutput};

/// How often the watchdog looks while input flows.
pub(crate) const TICK: Duration = Duration::from_millis(2);
/// How long a `handle` may run before another thread takes over the reading.
pub(crate) const STUCK_AFTER: Duration = Duration::from_millis(2);
/// How long the input must be quiet (with no `handle` running) before the watchdog sleeps.
pub(crate) const IDLE_AFTER: Duration = Duration::from_millis(20);

/// The right to read the input. Dropping it (at EOF, on a read error, or when its thread
/// panics) reports the end of reading through `done`.
pub(crate) struct Role<R> {
    pub(crate) reader: MessageReader<BufReader<R>>,
    pub(crate) _done: Box<dyn Send>,
}

/// What the reading threads share.
pub(crate) struct Relay<R> {
    slot: Mutex<Option<Role<R>>>,
    /// The output; its `reading` generation is bumped (under the slot's lock) whenever a new
    /// thread takes the role over.
    output: Arc<SharedOutput>,
    /// When the role's holder entered `handle` (nanoseconds since `epoch`, plus one); 0 while
    /// it reads.
    busy_since: AtomicU64,
    last_input: AtomicU64,
    epoch: Instant,
    /// Set while the watchdog ticks (or is about to).
    active: AtomicBool,
    wake: Sender<()>,
    threads: AtomicUsize,
    max_threads: usize,
    session: Arc<dyn Session>,
    /// Weak: the writer's drain at shutdown ends once the service lets go of its outbound,
    /// and the reading threads (which may outlive `serve`) must not keep it alive.
    outbound: Weak<dyn Outbound>,
    stopped: Arc<AtomicBool>,
    outcome: Mutex<Option<io::Result<()>>>,
    panicked: AtomicBool,
    /// Reports a panic in `handle` (reading may still go on in another thread, blocked on
    /// input; the transport shuts down as for the end of input).
    on_panic: Box<dyn Fn() + Send + Sync>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Ends the watchdog when dropped.
pub(crate) struct Watchdog {
    _stop: Sender<()>,
}

impl<R: Read + Send + 'static> Relay<R> {
    /// Starts reading on a new thread with `role`, and the watchdog. The reading ends when the
    /// role is dropped; [`Relay::outcome`] then says how.
    pub(crate) fn start(
        role: Role<R>,
        output: Arc<SharedOutput>,
        session: Arc<dyn Session>,
        outbound: Arc<dyn Outbound>,
        stopped: Arc<AtomicBool>,
        max_threads: usize,
        on_panic: Box<dyn Fn() + Send + Sync>,
    ) -> io::Result<(Arc<Self>, Watchdog)> {
        let (wake, wake_rx) = bounded(1);
        let (stop, stop_rx) = bounded::<()>(0);
        let relay = Arc::new(Relay {
            slot: Mutex::new(None),
            output,
            busy_since: AtomicU64::new(0),
            last_input: AtomicU64::new(0),
            epoch: Instant::now(),
            active: AtomicBool::new(false),
            wake,
            threads: AtomicUsize::new(0),
            max_threads: max_threads.max(1),
            session,
            outbound: Arc::downgrade(&outbound),
            stopped,
            outcome: Mutex::new(None),
            panicked: AtomicBool::new(false),
            on_panic,
        });
        let r2 = Arc::clone(&relay);
        thread::Builder::new()
            .name("mcp-stdio-watch".into())
            .spawn(move || r2.watch(&wake_rx, &stop_rx))?;
        relay.spawn_reader(role)?;
        Ok((relay, Watchdog { _stop: stop }))
    }

    /// How the reading ended: `Ok` at EOF, the read error, or `None` when a `handle` panicked.
    pub(crate) fn outcome(&self) -> Option<io::Result<()>> {
        if self.panicked.load(Ordering::Acquire) {
            return None;
        }
        Some(lock(&self.outcome).take().unwrap_or(Ok(())))
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX - 1) + 1
    }

    fn spawn_reader(self: &Arc<Self>, role: Role<R>) -> io::Result<()> {
        self.threads.fetch_add(1, Ordering::AcqRel);
        let me = Arc::clone(self);
        // The role travels into the thread; if the thread cannot start, it is dropped with
        // the closure, which ends the reading (rather than leaving it with nobody).
        let spawned = thread::Builder::new()
            .name("mcp-stdio-reader".into())
            .spawn(move || me.read(role));
        if let Err(e) = spawned {
            self.threads.fetch_sub(1, Ordering::AcqRel);
            return Err(e);
        }
        Ok(())
    }

    /// One reading thread: reads and handles messages while it holds the role.
    fn read(self: Arc<Self>, mut role: Role<R>) {
        let _count = Leaving(&self.threads);
        loop {
            if !role.reader.has_buffered() {
                // About to wait for input: answers held back until now go out.
                if let Err(e) = self.output.flush_deferred() {
                    log::debug!("stdio output: {e}");
                }
            }
            let msg = match role.reader.read_message() {
                None => {
                    // EOF right after a partial line: nothing may stay held back.
                    if let Err(e) = self.output.flush_deferred() {
                        log::debug!("stdio output: {e}");
                    }
                    return;
                }
                Some(_) if self.stopped.load(Ordering::Acquire) => return,
                Some(Err(FrameError::Io(e))) => {
                    *lock(&self.outcome) = Some(Err(e));
                    return;
                }
                Some(Err(e)) => {
                    match &e {
                        FrameError::Decode(d) if d.is_notification() => {
                            log::warn!("stdio input: dropped an invalid notification: {d}");
                        }
                        _ => log::warn!("stdio input: {e}"),
                    }
                    // None for an invalid notification: it is never answered.
                    if let Some(resp) = e.to_response() {
                        let sent = self.outbound.upgrade().map(|o| o.send(resp, None));
                        if !matches!(sent, Some(Ok(()))) {
                            return;
                        }
                    }
                    continue;
                }
                Some(Ok(msg)) => msg,
            };
            self.note_input();
            match self.handle(role, msg) {
                Some(r) => role = r,
                // Another thread reads now.
                None => return,
            }
        }
    }

    /// Hands `msg` to the session with the role left in the slot; returns the role, or None
    /// when another thread took it meanwhile.
    fn handle(&self, role: Role<R>, msg: Message) -> Option<Role<R>> {
        let more = role.reader.has_buffered();
        if !more {
            // The last message at hand: what is held back goes out before `handle`, which may
            // take long.
            if let Err(e) = self.output.flush_deferred() {
                log::debug!("stdio output: {e}");
            }
        }
        let generation = {
            let mut slot = lock(&self.slot);
            *slot = Some(role);
            self.busy_since.store(self.now(), Ordering::Release);
            self.output.reading.load(Ordering::Acquire)
        };
        let guard = PanicGuard {
            relay: self,
            generation,
        };
        DEFER_FLUSH.with(|d| d.set(more.then_some(generation)));
        self.session.handle(msg);
        DEFER_FLUSH.with(|d| d.set(None));
        std::mem::forget(guard);
        let mut slot = lock(&self.slot);
        if self.output.reading.load(Ordering::Acquire) != generation {
            drop(slot);
            // Lost the reading while in `handle`: nothing written here may wait for a flush.
            if let Err(e) = self.output.flush_deferred() {
                log::debug!("stdio output: {e}");
            }
            return None;
        }
        self.busy_since.store(0, Ordering::Release);
        slot.take()
    }

    fn note_input(&self) {
        self.last_input.store(self.now(), Ordering::Release);
        if !self.active.load(Ordering::Acquire) && !self.active.swap(true, Ordering::AcqRel) {
            let _ = self.wake.try_send(());
        }
    }

    /// Takes the role from a holder stuck in `handle` and gives it to a new thread.
    fn take_over(self: &Arc<Self>) {
        if self.threads.load(Ordering::Acquire) >= self.max_threads {
            return;
        }
        let role = {
            let mut slot = lock(&self.slot);
            let since = self.busy_since.load(Ordering::Acquire);
            if since == 0 || self.now().saturating_sub(since) < STUCK_AFTER.as_nanos() as u64 {
                return;
            }
            let Some(role) = slot.take() else { return };
            self.output.reading.fetch_add(1, Ordering::AcqRel);
            self.busy_since.store(0, Ordering::Release);
            role
        };
        if let Err(e) = self.spawn_reader(role) {
            log::error!("stdio: cannot start a reading thread ({e}); input ends");
        }
    }

    fn watch(self: &Arc<Self>, wake: &Receiver<()>, stop: &Receiver<()>) {
        loop {
            // Asleep until input arrives.
            select! {
                recv(stop) -> _ => return,
                recv(wake) -> _ => {}
            }
            loop {
                select! {
                    recv(stop) -> _ => return,
                    recv(wake) -> _ => {}
                    default(TICK) => {}
                }
                let now = self.now();
                let since = self.busy_since.load(Ordering::Acquire);
                if since != 0 {
                    if now.saturating_sub(since) >= STUCK_AFTER.as_nanos() as u64 {
                        self.take_over();
                    }
                    continue;
                }
                let quiet = now.saturating_sub(self.last_input.load(Ordering::Acquire));
                if quiet >= IDLE_AFTER.as_nanos() as u64 {
                    self.active.store(false, Ordering::Release);
                    // Input that came just before the flag cleared did not wake us: look again.
                    let last = self.last_input.load(Ordering::Acquire);
                    if self.now().saturating_sub(last) < IDLE_AFTER.as_nanos() as u64
                        && !self.active.swap(true, Ordering::AcqRel)
                    {
                        continue;
                    }
                    break;
                }
            }
        }
    }
}

/// Counts a reading thread out when it ends.
struct Leaving<'a>(&'a AtomicUsize);

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// When `handle` panics: serving ends, as it did when the reading thread itself died. A thread
/// that took the reading over meanwhile hands nothing more to the session.
struct PanicGuard<'a, R> {
    relay: &'a Relay<R>,
    generation: u64,
}

impl<R> Drop for PanicGuard<'_, R> {
    fn drop(&mut self) {
        self.relay.panicked.store(true, Ordering::Release);
        self.relay.stopped.store(true, Ordering::Release);
        let mut slot = lock(&self.relay.slot);
        if self.relay.output.reading.load(Ordering::Acquire) == self.generation {
            // Dropping the role reports the end of reading.
            slot.take();
        }
        drop(slot);
        (self.relay.on_panic)();
    }
}
