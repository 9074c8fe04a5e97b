//! One bounded pool of threads for every server of the workspace: the stdio server's reader and
//! writer, the HTTP server's connections and answer writers, and the kit's handlers.
//!
//! The policy, the same everywhere and with no timer anywhere in it:
//! - a job goes to an idle worker when there is one;
//! - when none is idle, a new worker starts with the job, up to [`ExecutorBuilder::max_threads`];
//! - at the maximum, [`Executor::execute`] queues the job in a bounded queue and blocks while
//!   that queue is full (back-pressure on whoever submits), and [`Executor::try_execute`]
//!   refuses it (the HTTP server answers 503);
//! - a worker beyond [`ExecutorBuilder::min_threads`] that has had no work for
//!   [`ExecutorBuilder::idle_timeout`] ends;
//! - a job that panics ends with the panic caught: the worker survives (a job that must answer
//!   something on a panic catches it itself);
//! - dropping the executor lets the queued jobs run, then joins every worker (except the one
//!   it is dropped from, when the last handle goes away inside a job).
//!
//! Why no "stuck" detection: a job is only ever given to a worker that is idle at that moment
//! (each idle worker is claimed by at most one job), so a job never waits behind one that
//! blocks while a new worker could have taken it. Growth is decided when a job arrives, not by
//! a watchdog that guesses which running job is blocked.
//!
//! This module starts threads, which the rest of `mcp-core` never does; it does no I/O.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError, bounded};

/// A unit of work.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// Builds an [`Executor`]. Start from [`Executor::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ExecutorBuilder {
    name: String,
    min_threads: usize,
    max_threads: usize,
    queue: usize,
    idle_timeout: Duration,
    prestart: bool,
}

impl ExecutorBuilder {
    /// The name of the worker threads (default `mcp-worker`), as debuggers and `top -H` show.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Workers kept however idle (default 0), started by [`build`](Self::build) unless
    /// [`prestart`](Self::prestart) says otherwise.
    pub fn min_threads(mut self, n: usize) -> Self {
        self.min_threads = n;
        self
    }

    /// Whether `build` starts the `min_threads` workers (default true). When false they start
    /// as jobs first need them, and are kept once started: a pool that may never be used
    /// (a stdio server whose handlers run on its reader) then costs no idle threads.
    pub fn prestart(mut self, prestart: bool) -> Self {
        self.prestart = prestart;
        self
    }

    /// The most workers alive at once (default 64, at least 1 and at least `min_threads`).
    pub fn max_threads(mut self, n: usize) -> Self {
        self.max_threads = n.max(1);
        self
    }

    /// How many jobs may wait when every worker is busy and no more may start (default 256,
    /// at least 1); beyond it [`Executor::execute`] blocks.
    pub fn queue(mut self, n: usize) -> Self {
        self.queue = n.max(1);
        self
    }

    /// How long a worker beyond `min_threads` waits for work before it ends (default 10 s).
    pub fn idle_timeout(mut self, d: Duration) -> Self {
        self.idle_timeout = d;
        self
    }

    /// Starts the `min_threads` workers (unless told not to, [`prestart`](Self::prestart)).
    ///
    /// # Errors
    /// The error of the operating system when a thread cannot be started.
    pub fn build(self) -> std::io::Result<Executor> {
        let max = self.max_threads.max(self.min_threads).max(1);
        // Claimed jobs never outnumber idle workers, so `max` places always suffice.
        let (direct_tx, direct_rx) = bounded::<Option<Job>>(max);
        let (backlog_tx, backlog_rx) = bounded::<Job>(self.queue.max(1));
        let inner = Arc::new(Inner {
            name: self.name,
            direct: direct_rx,
            backlog: backlog_rx,
            min_threads: self.min_threads.min(max),
            max_threads: max,
            idle_timeout: self.idle_timeout,
            threads: AtomicUsize::new(0),
            idle: AtomicUsize::new(0),
            handles: Mutex::new(Vec::new()),
            counted_out: (Mutex::new(()), Condvar::new()),
            retired: Mutex::new(Vec::new()),
            #[cfg(test)]
            events: Mutex::new(None),
        });
        let exec = Executor {
            inner,
            direct: Some(direct_tx),
            backlog: Some(backlog_tx),
        };
        let prestarted = if self.prestart {
            exec.inner.min_threads
        } else {
            0
        };
        for _ in 0..prestarted {
            if !exec.inner.reserve_thread() {
                break;
            }
            exec.inner.start_worker(None).map_err(|(e, _)| e)?;
        }
        Ok(exec)
    }
}

/// Why a job was not taken; the job comes back with it ([`Rejected::into_job`]).
pub struct Rejected {
    job: Job,
    reason: Reason,
}

/// Why a job was not taken.
#[derive(Debug)]
#[non_exhaustive]
pub enum Reason {
    /// [`Executor::try_execute`]: every worker is busy and no more may start.
    Saturated,
    /// The executor is shutting down.
    ShutDown,
    /// No worker was idle and a new thread could not be started.
    Spawn(std::io::Error),
}

impl Rejected {
    /// Why the job was not taken.
    pub fn reason(&self) -> &Reason {
        &self.reason
    }

    /// The job, to run some other way (or drop).
    pub fn into_job(self) -> Job {
        self.job
    }
}

impl fmt::Debug for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rejected")
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            Reason::Saturated => f.write_str("every worker is busy"),
            Reason::ShutDown => f.write_str("the executor is shutting down"),
            Reason::Spawn(e) => write!(f, "cannot start a worker thread: {e}"),
        }
    }
}

impl std::error::Error for Rejected {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.reason {
            Reason::Spawn(e) => Some(e),
            _ => None,
        }
    }
}

/// A bounded, growing pool of worker threads (see the module documentation for its policy).
/// Share it with an `Arc`; dropping the last handle joins the workers.
pub struct Executor {
    inner: Arc<Inner>,
    /// Jobs for workers that were claimed idle; `None` asks a worker to look at the backlog.
    direct: Option<Sender<Option<Job>>>,
    /// Jobs that arrived at the maximum.
    backlog: Option<Sender<Job>>,
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executor")
            .field("name", &self.inner.name)
            .field("threads", &self.threads())
            .field("max_threads", &self.inner.max_threads)
            .finish_non_exhaustive()
    }
}

/// What the executor's handle and its workers share.
struct Inner {
    name: String,
    direct: Receiver<Option<Job>>,
    backlog: Receiver<Job>,
    min_threads: usize,
    max_threads: usize,
    idle_timeout: Duration,
    /// Workers alive (or being started).
    threads: AtomicUsize,
    /// Workers waiting for work that no job has claimed yet.
    idle: AtomicUsize,
    handles: Mutex<Vec<JoinHandle<()>>>,
    /// Signalled (under its lock) each time a worker is counted out, for
    /// [`Executor::wait_threads_at_most`].
    counted_out: (Mutex<()>, Condvar),
    /// Workers counted out whose threads may still be returning: joined by
    /// [`Executor::wait_threads_at_most`], so that once it says "at most n", the process
    /// really has no more of these threads.
    retired: Mutex<Vec<std::thread::ThreadId>>,
    /// Tests learn here when a worker goes idle or retires (events, not sleeps).
    #[cfg(test)]
    events: Mutex<Option<Sender<Event>>>,
}

/// What a worker just did (tests only).
#[cfg(test)]
#[derive(Debug, PartialEq, Eq)]
enum Event {
    Idle,
    Retired,
}

impl Executor {
    /// A builder with the defaults: `mcp-worker`, 0 to 64 threads, a queue of 256, 10 s idle
    /// timeout.
    pub fn builder() -> ExecutorBuilder {
        ExecutorBuilder {
            name: "mcp-worker".to_owned(),
            min_threads: 0,
            max_threads: 64,
            queue: 256,
            idle_timeout: Duration::from_secs(10),
            prestart: true,
        }
    }

    /// Runs `job` on an idle worker, or a new one; at the maximum, queues it and blocks while
    /// the queue is full.
    ///
    /// # Errors
    /// [`Reason::ShutDown`], or [`Reason::Spawn`] when a needed thread cannot start; the job
    /// comes back in the error.
    pub fn execute(&self, job: impl FnOnce() + Send + 'static) -> Result<(), Rejected> {
        self.submit(Box::new(job), true)
    }

    /// Runs `job` on an idle worker, or a new one; at the maximum, queues it if the queue has
    /// room. Never blocks: for a caller that must answer at once whether the job was taken
    /// (a server creating a task, which may not hang its request on a full queue).
    ///
    /// # Errors
    /// [`Reason::Saturated`] at the maximum with the queue full, [`Reason::ShutDown`],
    /// [`Reason::Spawn`]; the job comes back in the error.
    pub fn try_queue(&self, job: impl FnOnce() + Send + 'static) -> Result<(), Rejected> {
        self.submit(Box::new(job), false)
    }

    /// [`Executor::execute`] (`wait`: for room in the queue) or [`Executor::try_queue`].
    fn submit(&self, job: Job, wait: bool) -> Result<(), Rejected> {
        let job = match self.start(job) {
            Ok(()) => return Ok(()),
            Err(Rejected {
                job,
                reason: Reason::Saturated,
            }) => job,
            Err(e) => return Err(e),
        };
        let Some(backlog) = &self.backlog else {
            return Err(rejected(job, Reason::ShutDown));
        };
        if wait {
            backlog
                .send(job)
                .map_err(|e| rejected(e.0, Reason::ShutDown))?;
        } else {
            match backlog.try_send(job) {
                Ok(()) => {}
                Err(crossbeam_channel::TrySendError::Full(job)) => {
                    return Err(rejected(job, Reason::Saturated));
                }
                Err(crossbeam_channel::TrySendError::Disconnected(job)) => {
                    return Err(rejected(job, Reason::ShutDown));
                }
            }
        }
        // A worker may have gone idle after it last looked at the backlog: wake one.
        self.wake_for_backlog();
        Ok(())
    }

    /// Runs `job` only if a worker can take it now (an idle one, or a new one under the
    /// maximum); never queues it.
    ///
    /// # Errors
    /// [`Reason::Saturated`] at the maximum with every worker busy, [`Reason::ShutDown`],
    /// [`Reason::Spawn`]; the job comes back in the error.
    pub fn try_execute(&self, job: impl FnOnce() + Send + 'static) -> Result<(), Rejected> {
        self.start(Box::new(job))
    }

    /// Workers alive now.
    pub fn threads(&self) -> usize {
        self.inner.threads.load(Ordering::SeqCst)
    }

    /// Workers waiting for work now.
    pub fn idle_threads(&self) -> usize {
        self.inner.idle.load(Ordering::SeqCst)
    }

    /// Waits until at most `n` workers are alive (idle ones beyond the minimum retire after
    /// the idle timeout), for at most `timeout`; true if that happened. For hosts that want a
    /// quiet process before they measure or unload something, and for tests, which wait on
    /// this event instead of polling a thread count. A worker is counted out just before its
    /// thread returns.
    pub fn wait_threads_at_most(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let (lock, changed) = &self.inner.counted_out;
        let mut guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if self.threads() <= n {
                drop(guard);
                self.inner.join_retired();
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            guard = changed
                .wait_timeout(guard, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// The most workers alive at once.
    pub fn max_threads(&self) -> usize {
        self.inner.max_threads
    }

    fn start(&self, job: Job) -> Result<(), Rejected> {
        let Some(direct) = &self.direct else {
            return Err(rejected(job, Reason::ShutDown));
        };
        if self.inner.claim_idle() {
            return match direct.try_send(Some(job)) {
                Ok(()) => Ok(()),
                // Cannot be full (claims never outnumber places); disconnected is shutdown.
                Err(TrySendError::Full(j) | TrySendError::Disconnected(j)) => {
                    self.inner.idle.fetch_add(1, Ordering::SeqCst);
                    Err(rejected(
                        j.unwrap_or_else(|| Box::new(|| {})),
                        Reason::ShutDown,
                    ))
                }
            };
        }
        if !self.inner.reserve_thread() {
            return Err(rejected(job, Reason::Saturated));
        }
        self.inner
            .start_worker(Some(job))
            .map_err(|(e, job)| rejected(job, Reason::Spawn(e)))
    }

    /// After a job went to the backlog: a worker may have gone idle, or retired and freed a
    /// place, after the submitter last looked. Wake an idle one, or start one in that place.
    /// (Pairs with the worker's own look at the backlog after it counts itself idle or out.)
    fn wake_for_backlog(&self) {
        if self.inner.claim_idle() {
            if let Some(d) = &self.direct {
                if d.try_send(None).is_err() {
                    self.inner.idle.fetch_add(1, Ordering::SeqCst);
                }
            }
        } else if self.inner.reserve_thread() {
            // If no thread can start, the queued job runs when a busy worker is done.
            let _ = self.inner.start_worker(None);
        }
    }
}

fn rejected(job: Job, reason: Reason) -> Rejected {
    Rejected { job, reason }
}

impl Inner {
    #[cfg(test)]
    fn event(&self, e: Event) {
        if let Some(tx) = &*self.events.lock().unwrap_or_else(|p| p.into_inner()) {
            let _ = tx.send(e);
        }
    }

    fn lock_handles(&self) -> MutexGuard<'_, Vec<JoinHandle<()>>> {
        self.handles.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Joins the threads of workers already counted out (each is returning from `work`).
    fn join_retired(&self) {
        let ids: Vec<_> =
            std::mem::take(&mut *self.retired.lock().unwrap_or_else(|p| p.into_inner()));
        if ids.is_empty() {
            return;
        }
        let me = std::thread::current().id();
        let done: Vec<JoinHandle<()>> = {
            let mut hs = self.lock_handles();
            let (done, keep) = hs
                .drain(..)
                .partition(|h| ids.contains(&h.thread().id()) && h.thread().id() != me);
            *hs = keep;
            done
        };
        for h in done {
            let _ = h.join();
        }
    }

    /// A worker thread is about to return: counted out, and its thread is joinable.
    fn retire_me(&self) {
        self.retired
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(std::thread::current().id());
        self.counted_out();
    }

    /// Wakes [`Executor::wait_threads_at_most`] after a worker was counted out. The lock is
    /// taken so that a waiter between its check and its wait cannot miss this.
    fn counted_out(&self) {
        let (lock, changed) = &self.counted_out;
        drop(lock.lock().unwrap_or_else(|p| p.into_inner()));
        changed.notify_all();
    }

    /// Takes one idle worker for a job about to be sent; false when none is idle.
    fn claim_idle(&self) -> bool {
        self.idle
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Counts in a worker about to start; false at the maximum.
    fn reserve_thread(&self) -> bool {
        let max = self.max_threads;
        self.threads
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok()
    }

    /// Starts a reserved worker, running `first` before anything else.
    fn start_worker(self: &Arc<Self>, first: Option<Job>) -> Result<(), (std::io::Error, Job)> {
        // The job travels in a slot so that it comes back if the thread cannot start.
        let slot = Arc::new(Mutex::new(first));
        let (me, s2) = (Arc::clone(self), Arc::clone(&slot));
        let spawned = std::thread::Builder::new()
            .name(self.name.clone())
            .spawn(move || {
                let first = s2.lock().unwrap_or_else(|p| p.into_inner()).take();
                me.work(first);
            });
        match spawned {
            Ok(h) => {
                let mut hs = self.lock_handles();
                hs.retain(|h| !h.is_finished());
                hs.push(h);
                // Ended threads need no join: forget them here too, so this list stays as
                // short as the handles.
                self.retired
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .retain(|id| hs.iter().any(|h| h.thread().id() == *id));
                Ok(())
            }
            Err(e) => {
                self.threads.fetch_sub(1, Ordering::SeqCst);
                self.counted_out();
                let job = slot
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take()
                    .unwrap_or_else(|| Box::new(|| {}));
                Err((e, job))
            }
        }
    }

    /// Retires this worker if more than `min_threads` are alive.
    fn may_retire(&self) -> bool {
        let min = self.min_threads;
        self.threads
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n > min).then(|| n - 1)
            })
            .is_ok()
    }

    fn work(&self, first: Option<Job>) {
        if let Some(job) = first {
            run(job);
        }
        loop {
            // Jobs that arrived at the maximum come first.
            while let Ok(job) = self.backlog.try_recv() {
                run(job);
            }
            self.idle.fetch_add(1, Ordering::SeqCst);
            #[cfg(test)]
            self.event(Event::Idle);
            // A job queued just before we counted ourselves idle woke nobody: take it back
            // unless a submitter claimed us meanwhile (then its job or wake-up is on its way).
            if !self.backlog.is_empty() && self.claim_idle() {
                continue;
            }
            let next = if self.threads.load(Ordering::SeqCst) > self.min_threads {
                self.direct.recv_timeout(self.idle_timeout)
            } else {
                self.direct
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected)
            };
            match next {
                Ok(Some(job)) => run(job),
                Ok(None) => {}
                Err(RecvTimeoutError::Timeout) => {
                    // Un-count ourselves as idle; if a job claimed us, it is on its way.
                    if self.claim_idle() {
                        if self.may_retire() {
                            // A job queued meanwhile found no place: take it after all.
                            if self.backlog.is_empty() || !self.reserve_thread() {
                                self.retire_me();
                                #[cfg(test)]
                                self.event(Event::Retired);
                                return;
                            }
                        }
                    } else {
                        // Wait for the job that claimed us.
                        match self.direct.recv() {
                            Ok(Some(job)) => run(job),
                            Ok(None) => {}
                            Err(_) => break,
                        }
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        // Shut down: what is still queued runs before the worker ends.
        while let Ok(job) = self.backlog.try_recv() {
            run(job);
        }
        self.threads.fetch_sub(1, Ordering::SeqCst);
        self.retire_me();
    }
}

fn run(job: Job) {
    // The worker survives a panicking job; the job's owner reports it where it matters.
    let _ = catch_unwind(AssertUnwindSafe(job));
}

impl Drop for Executor {
    fn drop(&mut self) {
        self.direct.take();
        self.backlog.take();
        let me = std::thread::current().id();
        let handles: Vec<JoinHandle<()>> = self.inner.lock_handles().drain(..).collect();
        for h in handles {
            // The last handle may be dropped inside a job; a thread cannot join itself.
            if h.thread().id() != me {
                let _ = h.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAFETY: Duration = Duration::from_secs(10);

    #[test]
    fn a_job_runs_beside_a_blocked_one_on_a_new_worker() {
        let exec = Executor::builder().max_threads(4).build().unwrap();
        let (gate_tx, gate_rx) = bounded::<()>(0);
        let (tx, rx) = bounded(64);
        let t1 = tx.clone();
        exec.execute(move || {
            t1.send("blocked").unwrap();
            let _ = gate_rx.recv();
            t1.send("released").unwrap();
        })
        .unwrap();
        assert_eq!(rx.recv_timeout(SAFETY), Ok("blocked"));
        exec.execute(move || tx.send("quick").unwrap()).unwrap();
        assert_eq!(rx.recv_timeout(SAFETY), Ok("quick"));
        assert_eq!(exec.threads(), 2);
        drop(gate_tx);
        assert_eq!(rx.recv_timeout(SAFETY), Ok("released"));
    }

    fn watched(b: ExecutorBuilder) -> (Executor, crossbeam_channel::Receiver<Event>) {
        let exec = b.build().unwrap();
        let (tx, rx) = bounded(64);
        *exec.inner.events.lock().unwrap() = Some(tx);
        (exec, rx)
    }

    #[test]
    fn an_idle_worker_is_reused_rather_than_a_new_one_started() {
        let (exec, events) = watched(Executor::builder().max_threads(8));
        let (tx, rx) = bounded(64);
        for i in 0..50 {
            let tx = tx.clone();
            exec.execute(move || tx.send(i).unwrap()).unwrap();
            assert_eq!(rx.recv_timeout(SAFETY), Ok(i));
            assert_eq!(events.recv_timeout(SAFETY), Ok(Event::Idle));
        }
        assert_eq!(exec.threads(), 1);
    }

    #[test]
    fn at_the_maximum_try_execute_refuses_and_execute_queues() {
        let exec = Executor::builder().max_threads(2).queue(4).build().unwrap();
        let (gate_tx, gate_rx) = bounded::<()>(0);
        let (tx, rx) = bounded(64);
        for _ in 0..2 {
            let (g, t) = (gate_rx.clone(), tx.clone());
            exec.execute(move || {
                t.send("started").unwrap();
                let _ = g.recv();
            })
            .unwrap();
        }
        for _ in 0..2 {
            assert_eq!(rx.recv_timeout(SAFETY), Ok("started"));
        }
        let refused = exec.try_execute(|| {}).unwrap_err();
        assert!(matches!(refused.reason(), Reason::Saturated));
        let t = tx.clone();
        exec.execute(move || t.send("queued").unwrap()).unwrap();
        assert_eq!(exec.threads(), 2);
        drop(gate_tx);
        assert_eq!(rx.recv_timeout(SAFETY), Ok("queued"));
    }

    #[test]
    fn a_full_queue_blocks_the_submitter_until_a_worker_frees() {
        let exec = Arc::new(Executor::builder().max_threads(1).queue(1).build().unwrap());
        let (gate_tx, gate_rx) = bounded::<()>(0);
        let (tx, rx) = bounded(64);
        let t = tx.clone();
        exec.execute(move || {
            t.send("running").unwrap();
            let _ = gate_rx.recv();
        })
        .unwrap();
        assert_eq!(rx.recv_timeout(SAFETY), Ok("running"));
        let t = tx.clone();
        exec.try_queue(move || t.send("first queued").unwrap())
            .unwrap();
        // The queue is full now: a job offered without waiting is refused (whether or not it
        // may queue)...
        let refused = exec.try_execute(|| {});
        assert!(refused.is_err(), "a full queue took a job without waiting");
        let refused = exec.try_queue(|| {}).unwrap_err();
        assert!(matches!(refused.reason(), Reason::Saturated));
        // ...and a submitter that may wait waits until the worker frees, on a thread of its
        // own: it can only get through after the gate opened.
        let opened = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (e2, t2, o2) = (Arc::clone(&exec), tx.clone(), Arc::clone(&opened));
        let submitter = std::thread::spawn(move || {
            let t3 = t2.clone();
            e2.execute(move || t3.send("second queued").unwrap())
                .unwrap();
            let after_the_gate = o2.load(std::sync::atomic::Ordering::SeqCst);
            t2.send(if after_the_gate {
                "submitted"
            } else {
                "submitted before the worker freed"
            })
            .unwrap();
        });
        opened.store(true, std::sync::atomic::Ordering::SeqCst);
        drop(gate_tx);
        let mut seen: Vec<&str> = (0..3).map(|_| rx.recv_timeout(SAFETY).unwrap()).collect();
        seen.sort_unstable();
        assert_eq!(seen, ["first queued", "second queued", "submitted"]);
        submitter.join().unwrap();
    }

    #[test]
    fn a_panicking_job_leaves_its_worker_alive() {
        let exec = Executor::builder().max_threads(1).build().unwrap();
        let (tx, rx) = bounded(64);
        exec.execute(|| panic!("a job panics")).unwrap();
        exec.execute(move || tx.send(()).unwrap()).unwrap();
        assert_eq!(rx.recv_timeout(SAFETY), Ok(()));
        assert_eq!(exec.threads(), 1);
    }

    #[test]
    fn idle_workers_beyond_the_minimum_retire() {
        let (exec, events) = watched(
            Executor::builder()
                .min_threads(1)
                .max_threads(4)
                .idle_timeout(Duration::from_millis(1)),
        );
        let (gate_tx, gate_rx) = bounded::<()>(0);
        let (started_tx, started_rx) = bounded(64);
        // Three jobs that block together need three workers.
        for _ in 0..3 {
            let (g, s) = (gate_rx.clone(), started_tx.clone());
            exec.execute(move || {
                s.send(()).unwrap();
                let _ = g.recv();
            })
            .unwrap();
            started_rx.recv_timeout(SAFETY).unwrap();
        }
        // Three at least; a fourth may exist for a moment (the first job found the initial
        // worker not idle yet, and the extra one has not retired yet).
        let busy = exec.threads();
        assert!((3..=4).contains(&busy), "{busy} workers");
        drop(gate_tx);
        // Every worker beyond the minimum retires once idle (each retirement is an event).
        while exec.threads() > 1 {
            assert!(
                events.recv_timeout(SAFETY).is_ok(),
                "{} workers still, none retiring",
                exec.threads()
            );
        }
        assert_eq!(exec.threads(), 1);
    }

    /// Without prestart, no worker exists until a job needs one, and those started up to the
    /// minimum are kept like prestarted ones.
    #[test]
    fn a_pool_not_prestarted_starts_workers_as_jobs_need_them_and_keeps_them() {
        let exec = Executor::builder()
            .min_threads(2)
            .max_threads(4)
            .prestart(false)
            .idle_timeout(Duration::from_millis(1))
            .build()
            .unwrap();
        assert_eq!(exec.threads(), 0);
        let (done_tx, done_rx) = bounded(1);
        exec.execute(move || done_tx.send(()).unwrap()).unwrap();
        done_rx.recv_timeout(SAFETY).unwrap();
        assert_eq!(exec.threads(), 1);
        // Within the minimum: it does not retire, however long it idles.
        assert!(!exec.wait_threads_at_most(0, Duration::from_millis(50)));
        assert_eq!(exec.threads(), 1);
        assert_eq!(
            Executor::builder()
                .min_threads(2)
                .build()
                .unwrap()
                .threads(),
            2
        );
    }

    #[test]
    fn wait_threads_at_most_wakes_when_workers_retire_and_never_goes_below_the_minimum() {
        let exec = Executor::builder()
            .min_threads(1)
            .max_threads(4)
            .idle_timeout(Duration::from_millis(1))
            .build()
            .unwrap();
        let (gate_tx, gate_rx) = bounded::<()>(0);
        let (started_tx, started_rx) = bounded(64);
        for _ in 0..3 {
            let (g, s) = (gate_rx.clone(), started_tx.clone());
            exec.execute(move || {
                s.send(()).unwrap();
                let _ = g.recv();
            })
            .unwrap();
            started_rx.recv_timeout(SAFETY).unwrap();
        }
        // Busy workers do not retire: the wait ends at its timeout.
        assert!(!exec.wait_threads_at_most(1, Duration::from_millis(20)));
        drop(gate_tx);
        assert!(exec.wait_threads_at_most(1, SAFETY));
        assert_eq!(exec.threads(), 1);
        // The minimum stays.
        assert!(!exec.wait_threads_at_most(0, Duration::from_millis(20)));
    }

    #[test]
    fn drop_runs_the_queue_and_joins_every_worker() {
        let exec = Executor::builder()
            .max_threads(3)
            .queue(64)
            .build()
            .unwrap();
        // Room for every answer: the jobs must never wait on the test.
        let (tx, rx) = bounded(10_000);
        for i in 0..10_000u32 {
            let tx = tx.clone();
            exec.execute(move || tx.send(i).unwrap()).unwrap();
        }
        drop(exec);
        drop(tx);
        let mut seen: Vec<u32> = rx.iter().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..10_000).collect::<Vec<_>>());
    }

    #[test]
    fn dropping_the_last_handle_inside_a_job_does_not_join_itself() {
        let exec = Arc::new(Executor::builder().max_threads(1).build().unwrap());
        let (tx, rx) = bounded(64);
        let mine = Arc::clone(&exec);
        exec.execute(move || {
            drop(mine);
            tx.send(()).unwrap();
        })
        .unwrap();
        drop(exec);
        assert_eq!(rx.recv_timeout(SAFETY), Ok(()));
    }
}
