//! The reader: reads messages and hands each to `Session::handle` on its own thread, and
//! hands the reading to another executor worker when the session says it is about to block
//! (leader/followers).
//!
//! The cheapest way to serve a quick request is on the thread that read it: no hand-off to a
//! worker (a futex wake-up and a context switch, several times the cost of parsing the line),
//! and the answer is written at once by the same thread. A session may also block in `handle`
//! (a slow tool, or one waiting for the client's answer to a sampling request, which only a
//! reader can deliver) provided it first calls `Outbound::will_block`: the reading role (the
//! `MessageReader`, left with the thread while `handle` runs) then goes to a job on the
//! executor, which reads on while this thread carries on with the handler. When `handle`
//! returns, the thread reads on if it still holds the role, and otherwise returns to the
//! executor. There is no timer: the hand-off happens when the session announces the block,
//! and costs one wake-up of a worker, which is not on the path of the answer.
//!
//! Workers are bounded, so the reading may have to wait in the executor's queue for one to
//! finish its handler. That is back-pressure while some handler will finish on its own (slow
//! work, a client slow to read the output), and a deadlock if every one of them waits for the
//! client (`Outbound::will_await_peer`: the answer to a sampling request, a cancellation),
//! since nobody would read what they wait for. So the reading counts the threads it handed
//! over (`Load`), and refuses, rather than make, the step that would leave nobody to read
//! with everyone waiting for the client: a hand-off that would queue behind only such
//! handlers, or a handler that would become the last of them while the reading is queued.
//! Refused, `will_block` returns false and the session answers busy instead of blocking.
//!
//! While `handle` runs, the role waits in a thread-local cell rather than in a shared slot:
//! only the holding thread can hand it off (`will_block` is called from inside `handle`), so
//! no other thread ever looks for it, and a message costs no lock and no copy of the role.

use std::any::Any;
use std::cell::Cell;
use std::io::{BufReader, Read};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use mcp_core::executor::{Executor, Reason};
use mcp_core::jsonrpc::Message;
use mcp_core::service::{Outbound, Session};

use crate::ending::{Closer, DoneSignal, PanicReport};
use crate::framing::{FrameError, MessageReader, Next};
use crate::output::{HandOff, SharedOutput};

/// The right to read the input; its `done` reports the end of reading (a panic too, when it
/// is dropped unfinished).
pub(crate) struct Role<R> {
    pub(crate) reader: MessageReader<BufReader<R>>,
    pub(crate) done: DoneSignal,
    /// Held by a worker of the executor (not by the thread that called `serve_on`, which
    /// frees no worker when its `handle` returns).
    pub(crate) on_worker: bool,
}

/// What a thread inside `handle` holds of a reading (which one: its address).
enum Slot {
    /// The reading's role (a `Box<Role<R>>`; the cell cannot be generic): the thread reads
    /// on when `handle` returns.
    Reader(usize, Box<dyn Any + Send>),
    /// The reading went to another thread from here: this worker's `handle` counts in the
    /// reading's `Load`, as waiting for the peer (true) or not.
    Busy(usize, bool),
}

thread_local! {
    /// Set while this thread runs `handle` for a reading; changed by `hand_off`.
    static SLOT: Cell<Option<Slot>> = const { Cell::new(None) };
}

/// The threads a reading handed over, still in `handle` (see the module documentation).
#[derive(Default)]
struct Load {
    /// Workers inside `handle` that handed the reading over.
    busy: usize,
    /// Of those, the ones waiting for the peer (until their `handle` returns).
    awaiting: usize,
    /// The reading waits in the executor's queue for a worker: nobody reads now.
    queued: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the reading threads share.
pub(crate) struct Reading<R> {
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
    /// Closes the session when reading ends.
    closer: Arc<Closer>,
    panicked: AtomicBool,
    load: Mutex<Load>,
    me: Weak<Reading<R>>,
    /// The type of the role its threads hold (kept with them, not here).
    role: PhantomData<fn(Role<R>)>,
}

impl<R> Reading<R> {
    /// Which reading a held role belongs to.
    fn id(&self) -> usize {
        self as *const Self as usize
    }
}

impl<R: Read + Send + 'static> Reading<R> {
    pub(crate) fn new(
        output: Arc<SharedOutput>,
        session: Arc<dyn Session>,
        outbound: Weak<dyn Outbound>,
        stopped: Arc<AtomicBool>,
        executor: Arc<Executor>,
        on_panic: PanicReport,
        closer: Arc<Closer>,
    ) -> Arc<Reading<R>> {
        Arc::new_cyclic(|me| Reading {
            output,
            session,
            outbound,
            stopped,
            executor,
            on_panic,
            closer,
            panicked: AtomicBool::new(false),
            load: Mutex::new(Load::default()),
            me: me.clone(),
            role: PhantomData,
        })
    }

    /// Reads and handles messages while this thread holds the role.
    pub(crate) fn run(self: Arc<Self>, role: Role<R>) {
        self.run_boxed(Box::new(role));
    }

    fn run_boxed(self: Arc<Self>, mut role: Box<Role<R>>) {
        // A line the session declined to serve from its text, to decode.
        let mut declined = None;
        loop {
            let next = match declined.take() {
                Some(line) => role.reader.decode_taken(line).map(|r| r.map(Next::Message)),
                None => {
                    if !role.reader.has_buffered() {
                        // About to wait for input: answers held back until now go out.
                        self.output.end_burst();
                    }
                    // While a batch waits for answers, every line is decoded, so that its
                    // id can be looked at (below).
                    role.reader.read_next(!self.output.batches.is_open())
                }
            };
            if let Some(owed) = role.reader.take_batch_answers() {
                // A batch: its answers go out together, as one array.
                self.output.batches.open(owed);
            }
            let next = match next {
                None => return self.finish(*role, Ok(())),
                Some(_) if self.stopped.load(Ordering::Acquire) => {
                    return self.finish(*role, Ok(()));
                }
                Some(Err(FrameError::Io(e))) => return self.finish(*role, Err(e)),
                Some(Err(e)) => {
                    if self.refuse(&e) {
                        continue;
                    }
                    return self.finish(*role, Ok(()));
                }
                Some(Ok(next)) => next,
            };
            if let Next::Message(Message::Request(r)) = &next {
                if !role.reader.batched() {
                    // A single request reusing an id a batch owes: its answer goes alone.
                    self.output.batches.expect_alone(&r.id);
                }
            }
            if role.reader.has_buffered() {
                self.output.begin_burst();
            } else {
                // The last message at hand: what is held back goes out before `handle`.
                self.output.end_burst();
            }
            // The role waits with this thread while `handle` runs (a handler that blocks
            // hands it off from there); a reading already held here (one nested in a handler)
            // is set aside and put back after.
            let mut holding = Holding {
                reading: &self,
                outer: SLOT.replace(Some(Slot::Reader(self.id(), role))),
                returned: false,
            };
            // A line is offered to the session as text first (see `Session::handle_line`).
            let line = match next {
                Next::Message(msg) => {
                    self.session.handle(msg);
                    None
                }
                Next::Line(line) => {
                    let served = self.session.handle_line(&line);
                    Some((line, served))
                }
            };
            holding.returned = true;
            match holding.take_back() {
                // The answers can no longer go out (the client stopped listening): reading
                // ends, and serving with it, as at the end of input.
                Back::Role(r) if self.output.is_lost() => return self.finish(*r, Ok(())),
                Back::Role(r) => role = r,
                // Another thread reads now; this one returns (to the executor, or to the
                // `serve_on` that called it), a worker free again.
                Back::Busy(awaited) => return self.handled(awaited),
                Back::Gone => return,
            }
            match line {
                Some((line, true)) => role.reader.give_back(line),
                Some((line, false)) => declined = Some(line),
                None => {}
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
            FrameError::Decode(d) if d.is_response() => {
                log::warn!("stdio input: dropped an invalid response: {d}");
            }
            _ => log::warn!("stdio input: {e}"),
        }
        // None for an invalid notification or response: neither is answered.
        match e.to_response() {
            Some(resp) => {
                let sent = self.outbound.upgrade().map(|o| o.send(resp, None));
                matches!(sent, Some(Ok(())))
            }
            None => true,
        }
    }

    /// A worker's `handle` that handed the reading over has returned: the worker is free.
    fn handled(&self, awaited: bool) {
        let mut load = lock(&self.load);
        load.busy -= 1;
        load.awaiting -= usize::from(awaited);
    }

    /// A worker that handed the reading over says its `handle` now waits for the peer; false
    /// when that would leave nobody to read what it waits for.
    fn await_peer(&self) -> bool {
        let mut load = lock(&self.load);
        if load.queued && load.awaiting + 1 >= load.busy {
            return false;
        }
        load.awaiting += 1;
        true
    }

    fn finish(&self, role: Role<R>, result: std::io::Result<()>) {
        // Nothing may stay held back once reading ends.
        self.output.end_burst();
        // Closed here, not only by `serve_on` once it hears of the end: the thread running it
        // may be a reader that handed the reading over and now waits, in a handler, for
        // exactly this close.
        self.closer.close();
        role.done.finish(result);
    }
}

impl<R: Read + Send + 'static> HandOff for Reading<R> {
    fn hand_off(&self, awaits: bool) -> bool {
        let id = self.id();
        let held = match SLOT.take() {
            Some(Slot::Reader(of, held)) if of == id => held,
            // A worker of this reading that handed it over already, now to wait for the peer.
            Some(Slot::Busy(of, false)) if of == id && awaits => {
                let counted = self.await_peer();
                SLOT.set(Some(Slot::Busy(id, counted)));
                return counted;
            }
            // Counted already, or not a thread of this reading's (a task's, another
            // reading's): someone else reads.
            other => {
                SLOT.set(other);
                return true;
            }
        };
        // The address is this reading's, so the role is of its type.
        let role = match held.downcast::<Role<R>>() {
            Ok(role) => role,
            Err(held) => {
                SLOT.set(Some(Slot::Reader(id, held)));
                return true;
            }
        };
        let Some(me) = self.me.upgrade() else {
            SLOT.set(Some(Slot::Reader(id, role)));
            return true;
        };
        // The reading leaves this thread (to a worker, or to the queue when every worker is
        // busy, where it may wait for as long as a handler runs): what this burst held back
        // goes out now, and later writes flush at once until a reader takes a burst up again.
        self.output.end_burst();
        // The role travels in a cell, so that it comes back if the job cannot be started.
        let worker = role.on_worker;
        let cell = Arc::new(Mutex::new(Some(role)));
        let c2 = Arc::clone(&cell);
        let job = move || {
            lock(&me.load).queued = false;
            if let Some(mut role) = lock(&c2).take() {
                role.on_worker = true;
                me.run_boxed(role);
            }
        };
        let mut load = lock(&self.load);
        let started = match self.executor.try_execute(job) {
            Err(e) if matches!(e.reason(), Reason::Saturated) => {
                // Every worker runs a handler. The reading may wait for one of them only if
                // one will end without the peer's help: this one, if it is a worker that does
                // not wait for the peer, or one of the others.
                if (awaits || !worker) && load.awaiting >= load.busy {
                    Err(e)
                } else {
                    let queued = self.executor.execute(e.into_job());
                    load.queued = queued.is_ok();
                    queued
                }
            }
            other => other,
        };
        match started {
            Ok(()) => {
                // Only workers are counted: the thread that called `serve_on` frees none.
                if worker {
                    load.busy += 1;
                    load.awaiting += usize::from(awaits);
                    SLOT.set(Some(Slot::Busy(id, awaits)));
                }
                true
            }
            Err(e) => {
                // This thread keeps reading; the session must not block (it answers busy).
                drop(load);
                log::debug!("stdio: no thread can take the reading over: {e}");
                if let Some(role) = lock(&cell).take() {
                    SLOT.set(Some(Slot::Reader(id, role)));
                }
                false
            }
        }
    }
}

/// A role left with its thread while `handle` runs. When `handle` panics (the holding is
/// dropped before it returned), serving ends, as it does when reading ends: the role, if it is
/// still here, is dropped (which reports the panic), and a thread that took the reading over
/// meanwhile hands nothing more to the session.
struct Holding<'a, R> {
    reading: &'a Reading<R>,
    /// What the cell held before (a reading nested in a handler's), put back after.
    outer: Option<Slot>,
    returned: bool,
}

/// What a thread has of the reading once its `handle` returned.
enum Back<R> {
    /// The role: no hand-off happened inside `handle`.
    Role(Box<Role<R>>),
    /// The reading went to another thread, and this worker was counted (waiting for the peer
    /// or not).
    Busy(bool),
    /// The reading went to another thread, and this one was not counted.
    Gone,
}

impl<R: 'static> Holding<'_, R> {
    fn take_back(&mut self) -> Back<R> {
        let id = self.reading.id();
        match SLOT.replace(self.outer.take()) {
            Some(Slot::Reader(of, held)) if of == id => {
                held.downcast::<Role<R>>().map_or(Back::Gone, Back::Role)
            }
            Some(Slot::Busy(of, awaited)) if of == id => Back::Busy(awaited),
            _ => Back::Gone,
        }
    }
}

impl<R> Drop for Holding<'_, R> {
    fn drop(&mut self) {
        if self.returned {
            return;
        }
        let r = self.reading;
        r.stopped.store(true, Ordering::Release);
        if !r.panicked.swap(true, Ordering::AcqRel) {
            r.on_panic.report_panic();
        }
        // Dropping the role (when it is still here) ends the reading, reported as a panic.
        drop(SLOT.replace(self.outer.take()));
    }
}
