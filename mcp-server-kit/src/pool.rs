//! The worker threads that run handlers, fed by a bounded queue, with as many threads as the
//! work needs between a core count and a maximum.
//!
//! Handlers run here so the thread that reads the transport never blocks on user code: `ping`,
//! cancellation and the answers to server-to-client requests keep flowing while tools work.
//! The queue is bounded; when it is full, `submit` blocks, which back-pressures the transport
//! instead of growing memory.
//!
//! Why the pool is elastic: a fixed pool must be sized for handlers that block (on I/O, on the
//! client's answer to a sampling request), which means many more threads than cores; but with
//! fast handlers those extra runnable threads only compete with the transport's reader and
//! writer for the cores, and a preempted thread stalls the pipeline for a scheduler slice. So
//! the pool starts with `core` workers and a watcher adds one whenever jobs are waiting and
//! fewer than `core` workers are free to take them: a worker that has run the same job for
//! longer than [`STUCK_AFTER`] counts as blocked. Extra workers leave after [`RETIRE_AFTER`]
//! without work. The watcher sleeps on a channel while the queue is empty and ticks every
//! [`STUCK_AFTER`] only while jobs wait, so an idle server costs no wake-ups.
//!
//! The queue is a crossbeam channel shared by all workers: an idle worker spins briefly before
//! it parks, so under a stream of small requests the workers pick up jobs without a futex
//! wake-up per request.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError, bounded};

type Job = Box<dyn FnOnce() + Send + 'static>;

/// How long a worker may run one job before the watcher counts it as blocked.
pub(crate) const STUCK_AFTER: Duration = Duration::from_millis(2);
/// How long an extra worker waits for work before it leaves.
pub(crate) const RETIRE_AFTER: Duration = Duration::from_secs(10);
/// A slot's `busy_since` value while its worker waits for a job.
const IDLE: u64 = 0;
/// A slot's `busy_since` value while no worker owns it.
const FREE: u64 = u64::MAX;

/// The pool; dropping it lets queued jobs finish and joins the threads.
pub(crate) struct WorkerPool {
    shared: Arc<PoolState>,
    sender: Option<Sender<Job>>,
    /// Wakes the watcher; dropped to stop it.
    wake: Option<Sender<()>>,
    watcher: Option<JoinHandle<()>>,
}

/// What the pool handle, its workers and its watcher share.
struct PoolState {
    queue: Receiver<Job>,
    core: usize,
    /// One slot per possible worker: when its current job started (nanoseconds since
    /// `epoch`, plus one), [`IDLE`], or [`FREE`].
    slots: Vec<AtomicU64>,
    epoch: Instant,
    /// Workers waiting for a job.
    idle: AtomicUsize,
    /// Set while the watcher is awake (or about to be), so submitters wake it at most once.
    watching: AtomicBool,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl WorkerPool {
    /// Starts `core` workers (at least one), which may grow to `max` (at least `core`), behind
    /// a queue of `queue` jobs.
    pub(crate) fn new(core: usize, max: usize, queue: usize) -> std::io::Result<WorkerPool> {
        let core = core.max(1);
        let max = max.max(core);
        let (sender, receiver) = bounded::<Job>(queue.max(1));
        let shared = Arc::new(PoolState {
            queue: receiver,
            core,
            slots: (0..max).map(|_| AtomicU64::new(FREE)).collect(),
            epoch: Instant::now(),
            idle: AtomicUsize::new(0),
            watching: AtomicBool::new(false),
            workers: Mutex::new(Vec::new()),
        });
        for _ in 0..core {
            shared.spawn_worker(false)?;
        }
        let (wake, wake_rx) = bounded::<()>(1);
        let s2 = Arc::clone(&shared);
        let watcher = std::thread::Builder::new()
            .name("mcp-pool-watch".into())
            .spawn(move || s2.watch(&wake_rx))?;
        Ok(WorkerPool {
            shared,
            sender: Some(sender),
            wake: Some(wake),
            watcher: Some(watcher),
        })
    }

    /// Queues a job, blocking while the queue is full. Returns the job back when the pool is
    /// shutting down.
    pub(crate) fn submit(&self, job: Job) -> Result<(), Job> {
        let Some(sender) = &self.sender else {
            return Err(job);
        };
        let sent = match sender.try_send(job) {
            Ok(()) => Ok(()),
            Err(TrySendError::Disconnected(job)) => return Err(job),
            Err(TrySendError::Full(job)) => {
                // Every worker is busy and the queue is full: make sure the watcher looks,
                // then wait for room.
                self.wake_watcher();
                return sender.send(job).map_err(|e| e.0);
            }
        };
        // More jobs waiting than workers waiting for them: some worker may be stuck.
        if self.shared.queue.len() > self.shared.idle.load(Ordering::Acquire) {
            self.wake_watcher();
        }
        sent
    }

    fn wake_watcher(&self) {
        if !self.shared.watching.swap(true, Ordering::AcqRel) {
            if let Some(w) = &self.wake {
                let _ = w.try_send(());
            }
        }
    }

    /// Worker threads alive now.
    #[cfg(test)]
    fn threads(&self) -> usize {
        self.shared
            .slots
            .iter()
            .filter(|s| s.load(Ordering::Acquire) != FREE)
            .count()
    }
}

impl PoolState {
    fn lock_workers(&self) -> MutexGuard<'_, Vec<JoinHandle<()>>> {
        self.workers.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now(&self) -> u64 {
        // Plus one, so a job started at the epoch is not IDLE.
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(FREE - 1) + 1
    }

    /// Starts a worker in a free slot; false when every slot is taken.
    fn spawn_worker(self: &Arc<Self>, extra: bool) -> std::io::Result<bool> {
        let Some(slot) = self.slots.iter().position(|s| {
            s.compare_exchange(FREE, IDLE, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        }) else {
            return Ok(false);
        };
        let me = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name(format!("mcp-worker-{slot}"))
            .spawn(move || me.work(slot, extra));
        match spawned {
            Ok(h) => {
                let mut ws = self.lock_workers();
                ws.retain(|h| !h.is_finished());
                ws.push(h);
                Ok(true)
            }
            Err(e) => {
                self.slots[slot].store(FREE, Ordering::Release);
                Err(e)
            }
        }
    }

    fn work(&self, slot: usize, extra: bool) {
        let busy = &self.slots[slot];
        loop {
            self.idle.fetch_add(1, Ordering::AcqRel);
            let next = if extra {
                self.queue.recv_timeout(RETIRE_AFTER)
            } else {
                self.queue
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected)
            };
            self.idle.fetch_sub(1, Ordering::AcqRel);
            let Ok(job) = next else {
                // Shut down, or an extra worker without work for a while.
                break;
            };
            busy.store(self.now(), Ordering::Release);
            // Jobs catch their own panics (see the session), so a worker survives them.
            job();
            busy.store(IDLE, Ordering::Release);
        }
        busy.store(FREE, Ordering::Release);
    }

    /// Workers neither waiting nor stuck in a long job.
    fn free_workers(&self) -> usize {
        let now = self.now();
        let stuck = STUCK_AFTER.as_nanos() as u64;
        self.slots
            .iter()
            .map(|s| s.load(Ordering::Acquire))
            .filter(|&t| t != FREE && (t == IDLE || now.saturating_sub(t) < stuck))
            .count()
    }

    /// The watcher: asleep until a submitter finds more jobs waiting than idle workers, then a
    /// look every
    /// [`STUCK_AFTER`] while jobs wait, adding a worker when too few can take them.
    fn watch(self: &Arc<Self>, wake: &Receiver<()>) {
        while wake.recv().is_ok() {
            loop {
                match wake.recv_timeout(STUCK_AFTER) {
                    Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return,
                }
                if self.queue.is_empty() {
                    self.watching.store(false, Ordering::Release);
                    // A job queued just before the flag cleared would not have woken us.
                    if self.queue.is_empty() || self.watching.swap(true, Ordering::AcqRel) {
                        break;
                    }
                }
                if self.free_workers() < self.core {
                    match self.spawn_worker(true) {
                        Ok(_) => {}
                        Err(e) => log::warn!("cannot start another handler thread: {e}"),
                    }
                }
            }
        }
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.sender.take();
        self.wake.take();
        let me = std::thread::current().id();
        if let Some(w) = self.watcher.take() {
            let _ = w.join();
        }
        // The watcher has stopped, so no worker starts any more.
        let handles: Vec<JoinHandle<()>> = self.shared.lock_workers().drain(..).collect();
        for w in handles {
            // The last reference to the server may be dropped from inside a handler; a thread
            // cannot join itself.
            if w.thread().id() != me {
                let _ = w.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::{channel, sync_channel};

    #[test]
    fn runs_jobs_on_several_threads() {
        let pool = WorkerPool::new(2, 2, 4).unwrap();
        let (tx, rx) = channel();
        let (gate_tx, gate_rx) = sync_channel::<()>(0);
        let gate_rx = Mutex::new(gate_rx);
        // The first job blocks until released; the second must still run meanwhile.
        let t1 = tx.clone();
        pool.submit(Box::new(move || {
            let _ = gate_rx.lock().unwrap().recv();
            t1.send("slow").unwrap();
        }))
        .map_err(|_| ())
        .unwrap();
        let t2 = tx.clone();
        pool.submit(Box::new(move || t2.send("fast").unwrap()))
            .map_err(|_| ())
            .unwrap();
        assert_eq!(rx.recv().unwrap(), "fast");
        gate_tx.send(()).unwrap();
        assert_eq!(rx.recv().unwrap(), "slow");
    }

    #[test]
    fn blocked_workers_are_joined_by_new_ones() {
        // One core worker, blocked; the jobs behind it still run on added workers.
        let pool = WorkerPool::new(1, 8, 16).unwrap();
        let (gate_tx, gate_rx) = crossbeam_channel::bounded::<()>(0);
        let (tx, rx) = channel();
        for _ in 0..3 {
            let g = gate_rx.clone();
            pool.submit(Box::new(move || {
                let _ = g.recv();
            }))
            .map_err(|_| ())
            .unwrap();
        }
        let t = tx.clone();
        pool.submit(Box::new(move || t.send("fast").unwrap()))
            .map_err(|_| ())
            .unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok("fast"));
        assert!(pool.threads() >= 4, "{} threads", pool.threads());
        drop(gate_tx);
        drop(pool);
    }

    #[test]
    fn growth_stops_at_the_maximum() {
        let pool = WorkerPool::new(1, 3, 16).unwrap();
        let (gate_tx, gate_rx) = crossbeam_channel::bounded::<()>(0);
        let (tx, rx) = channel();
        for _ in 0..6 {
            let g = gate_rx.clone();
            let t = tx.clone();
            pool.submit(Box::new(move || {
                t.send(()).unwrap();
                let _ = g.recv();
            }))
            .map_err(|_| ())
            .unwrap();
        }
        // Three jobs start (one per possible worker); the other three wait.
        for _ in 0..3 {
            rx.recv_timeout(Duration::from_secs(10)).unwrap();
        }
        assert_eq!(pool.threads(), 3);
        assert!(rx.recv_timeout(STUCK_AFTER * 20).is_err());
        drop(gate_tx);
        for _ in 0..3 {
            rx.recv_timeout(Duration::from_secs(10)).unwrap();
        }
    }

    #[test]
    fn every_job_runs_once_under_load() {
        let pool = WorkerPool::new(3, 6, 8).unwrap();
        let (tx, rx) = channel();
        for i in 0..10_000u32 {
            let tx = tx.clone();
            pool.submit(Box::new(move || tx.send(i).unwrap()))
                .map_err(|_| ())
                .unwrap();
        }
        drop(pool);
        drop(tx);
        let mut seen: Vec<u32> = rx.iter().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..10_000).collect::<Vec<_>>());
    }
}
