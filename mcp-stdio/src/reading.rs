//! The reader: reads messages and hands each to `Session::handle` on its own thread, and
//! hands the reading to another executor worker when the session says it is about to block
//! (leader/followers).
//!
//! The cheapest way to serve a quick request is on the thread that read it: no hand-off to a
//! worker (a futex wake-up and a context switch, several times the cost of parsing the line),
//! and the answer is written at once by the same thread. A session may also block in `handle`
//! (a slow tool, or one waiting for the client's answer to a sampling request, which only a
//! reader can deliver) provided it first calls `Outbound::will_block`: the reading role (the
//! `MessageReader`, left in a slot while `handle` runs) then goes to a job on the executor,
//! which reads on while this thread carries on with the handler. When `handle` returns, the
//! thread takes the role back if it still lies in the slot, and otherwise returns to the
//! executor. There is no timer: the hand-off happens when the session announces the block,
//! and costs one wake-up of a worker, which is not on the path of the answer.

use std::cell::Cell;
use std::io::{BufReader, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use mcp_core::executor::Executor;
use mcp_core::service::{Outbound, Session};

use crate::framing::{FrameError, MessageReader};
use crate::output::SharedOutput;
use crate::server::{DoneSignal, PanicReport};

/// The right to read the input; its `done` reports the end of reading (a panic too, when it
/// is dropped unfinished).
pub(crate) struct Role<R> {
    pub(crate) reader: MessageReader<BufReader<R>>,
    pub(crate) done: DoneSignal,
}

/// Hands the reading over (the outbound calls it from `Outbound::will_block`).
pub(crate) trait HandOff: Send + Sync {
    /// If the calling thread is a reader inside `handle`, the reading goes on in another.
    fn hand_off(&self);
}

thread_local! {
    /// Set while this thread runs `handle` as the reader: which reading (its address) and
    /// which generation of the role it holds.
    static HOLDING: Cell<Option<(usize, u64)>> = const { Cell::new(None) };
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the reading threads share.
pub(crate) struct Reading<R> {
    /// The role while its holder runs `handle`.
    slot: Mutex<Option<Role<R>>>,
    /// Bumped each time the role moves to another thread.
    generation: AtomicU64,
    pub(crate) output: Arc<SharedOutput>,
    pub(crate) session: Arc<dyn Session>,
    /// Weak: the writer's drain at shutdown ends once the service lets go of its outbound,
    /// and the readers (which may outlive `serve_on` after an output failure) must not keep it
    /// alive.
    pub(crate) outbound: Weak<dyn Outbound>,
    pub(crate) stopped: Arc<AtomicBool>,
    pub(crate) executor: Arc<Executor>,
    /// Reports a panic in `handle` (reading may go on in another thread, blocked on input;
    /// serving shuts down as for the end of input).
    pub(crate) on_panic: PanicReport,
    panicked: AtomicBool,
    me: Weak<Reading<R>>,
}

impl<R: Read + Send + 'static> Reading<R> {
    pub(crate) fn new(
        output: Arc<SharedOutput>,
        session: Arc<dyn Session>,
        outbound: Weak<dyn Outbound>,
        stopped: Arc<AtomicBool>,
        executor: Arc<Executor>,
        on_panic: PanicReport,
    ) -> Arc<Reading<R>> {
        Arc::new_cyclic(|me| Reading {
            slot: Mutex::new(None),
            generation: AtomicU64::new(0),
            output,
            session,
            outbound,
            stopped,
            executor,
            on_panic,
            panicked: AtomicBool::new(false),
            me: me.clone(),
        })
    }

    fn id(&self) -> usize {
        self as *const Self as usize
    }

    /// Reads and handles messages while this thread holds the role.
    pub(crate) fn run(self: Arc<Self>, mut role: Role<R>) {
        loop {
            if !role.reader.has_buffered() {
                // About to wait for input: answers held back until now go out.
                self.output.end_burst();
            }
            let msg = match role.reader.read_message() {
                None => return self.finish(role, Ok(())),
                Some(_) if self.stopped.load(Ordering::Acquire) => {
                    return self.finish(role, Ok(()));
                }
                Some(Err(FrameError::Io(e))) => return self.finish(role, Err(e)),
                Some(Err(e)) => {
                    if self.refuse(&e) {
                        continue;
                    }
                    return self.finish(role, Ok(()));
                }
                Some(Ok(msg)) => msg,
            };
            if role.reader.has_buffered() {
                self.output.begin_burst();
            } else {
                // The last message at hand: what is held back goes out before `handle`.
                self.output.end_burst();
            }
            let generation = {
                let mut slot = lock(&self.slot);
                *slot = Some(role);
                self.generation.load(Ordering::Acquire)
            };
            HOLDING.with(|h| h.set(Some((self.id(), generation))));
            let guard = PanicGuard {
                reading: &self,
                generation,
            };
            self.session.handle(msg);
            std::mem::forget(guard);
            HOLDING.with(|h| h.set(None));
            let mut slot = lock(&self.slot);
            if self.generation.load(Ordering::Acquire) != generation {
                // Another thread reads now; this one goes back to the executor.
                return;
            }
            match slot.take() {
                Some(r) => role = r,
                None => return,
            }
        }
    }

    /// Answers a line that is no message (out of line, as the rare case it is); false when
    /// the answer cannot go out, which ends the reading.
    #[cold]
    #[inline(never)]
    fn refuse(&self, e: &FrameError) -> bool {
        match e {
            FrameError::Decode(d) if d.is_notification() => {
                log::warn!("stdio input: dropped an invalid notification: {d}");
            }
            _ => log::warn!("stdio input: {e}"),
        }
        // None for an invalid notification: it is never answered.
        match e.to_response() {
            Some(resp) => {
                let sent = self.outbound.upgrade().map(|o| o.send(resp, None));
                matches!(sent, Some(Ok(())))
            }
            None => true,
        }
    }

    fn finish(&self, role: Role<R>, result: std::io::Result<()>) {
        // Nothing may stay held back once reading ends.
        self.output.end_burst();
        role.done.finish(result);
    }
}

impl<R: Read + Send + 'static> HandOff for Reading<R> {
    fn hand_off(&self) {
        let Some((id, generation)) = HOLDING.with(Cell::get) else {
            return;
        };
        if id != self.id() {
            return;
        }
        let Some(me) = self.me.upgrade() else { return };
        // Only this thread (the holder, inside `handle`) touches the slot now.
        let Some(role) = lock(&self.slot).take() else {
            return;
        };
        // The role travels in a cell, so that it comes back if the job cannot be started.
        let cell = Arc::new(Mutex::new(Some(role)));
        let c2 = Arc::clone(&cell);
        // The generation moves on before the new reader can start: a reader that finished its
        // first `handle` before a later bump would read it as "the role moved on" and leave,
        // with this thread (still inside `handle`) leaving too, and nobody reading.
        self.generation.store(generation + 1, Ordering::Release);
        let started = self.executor.execute(move || {
            if let Some(role) = lock(&c2).take() {
                me.run(role);
            }
        });
        match started {
            Ok(()) => HOLDING.with(|h| h.set(None)),
            Err(e) => {
                // Reading waits for this `handle` then, as it would without the hand-off.
                log::warn!("stdio: cannot hand the reading to another thread: {e}");
                *lock(&self.slot) = lock(&cell).take();
                self.generation.store(generation, Ordering::Release);
            }
        }
    }
}

/// When `handle` panics: serving ends, as it does when reading ends. A thread that took the
/// reading over meanwhile hands nothing more to the session.
struct PanicGuard<'a, R> {
    reading: &'a Reading<R>,
    generation: u64,
}

impl<R> Drop for PanicGuard<'_, R> {
    fn drop(&mut self) {
        HOLDING.with(|h| h.set(None));
        let r = self.reading;
        r.stopped.store(true, Ordering::Release);
        if !r.panicked.swap(true, Ordering::AcqRel) {
            r.on_panic.report_panic();
        }
        let mut slot = lock(&r.slot);
        if r.generation.load(Ordering::Acquire) == self.generation {
            // Dropping the role ends the reading (reported as a panic).
            slot.take();
        }
    }
}
