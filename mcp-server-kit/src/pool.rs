//! A fixed-size pool of worker threads fed by a bounded queue.
//!
//! Handlers run here so the thread that reads the transport never blocks on user code: `ping`,
//! cancellation and the answers to server-to-client requests keep flowing while tools work.
//! The queue is bounded; when every worker is busy and the queue is full, `submit` blocks, which
//! back-pressures the transport instead of growing memory.
//!
//! A worker that finishes a job takes the next one without sleeping, and a submit wakes a
//! sleeping worker only when none is awake to take the job: under a stream of small requests
//! one or two workers drain the queue and the rest stay asleep, which saves a futex wake-up
//! per request compared with a channel shared by all workers.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send + 'static>;

struct Queue {
    jobs: VecDeque<Job>,
    /// Workers waiting for a job.
    idle: usize,
    /// Jobs queued that no awake worker has claimed yet.
    unclaimed_wakeups: usize,
    closed: bool,
}

struct Inner {
    queue: Mutex<Queue>,
    /// Signalled when a job arrives (workers wait on it).
    work: Condvar,
    /// Signalled when a job leaves a full queue (submitters wait on it).
    room: Condvar,
    capacity: usize,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The pool; dropping it lets queued jobs finish and joins the workers.
pub(crate) struct WorkerPool {
    inner: Arc<Inner>,
    workers: Vec<JoinHandle<()>>,
}

impl WorkerPool {
    /// Starts `threads` workers (at least one) behind a queue of `queue` jobs.
    pub(crate) fn new(threads: usize, queue: usize) -> std::io::Result<WorkerPool> {
        let inner = Arc::new(Inner {
            queue: Mutex::new(Queue {
                jobs: VecDeque::with_capacity(queue.min(1024)),
                idle: 0,
                unclaimed_wakeups: 0,
                closed: false,
            }),
            work: Condvar::new(),
            room: Condvar::new(),
            capacity: queue.max(1),
        });
        let mut workers = Vec::new();
        for i in 0..threads.max(1) {
            let inner = Arc::clone(&inner);
            workers.push(
                std::thread::Builder::new()
                    .name(format!("mcp-worker-{i}"))
                    .spawn(move || worker_loop(&inner))?,
            );
        }
        Ok(WorkerPool { inner, workers })
    }

    /// Queues a job, blocking while the queue is full. Returns the job back when the pool is
    /// shutting down.
    pub(crate) fn submit(&self, job: Job) -> Result<(), Job> {
        let mut q = self.inner.lock();
        while q.jobs.len() >= self.inner.capacity && !q.closed {
            q = self.inner.room.wait(q).unwrap_or_else(|p| p.into_inner());
        }
        if q.closed {
            return Err(job);
        }
        q.jobs.push_back(job);
        // Wake a sleeper only if the sleepers already woken cannot cover the queue.
        if q.idle > q.unclaimed_wakeups && q.jobs.len() > q.unclaimed_wakeups {
            q.unclaimed_wakeups += 1;
            drop(q);
            self.inner.work.notify_one();
        }
        Ok(())
    }
}

fn worker_loop(inner: &Inner) {
    let mut q = inner.lock();
    loop {
        if let Some(job) = q.jobs.pop_front() {
            let was_full = q.jobs.len() + 1 >= inner.capacity;
            drop(q);
            if was_full {
                inner.room.notify_one();
            }
            // Jobs catch their own panics (see the session), so a worker survives them.
            job();
            q = inner.lock();
            continue;
        }
        if q.closed {
            return;
        }
        q.idle += 1;
        q = inner.work.wait(q).unwrap_or_else(|p| p.into_inner());
        q.idle -= 1;
        q.unclaimed_wakeups = q.unclaimed_wakeups.saturating_sub(1);
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        {
            let mut q = self.inner.lock();
            q.closed = true;
        }
        self.inner.work.notify_all();
        self.inner.room.notify_all();
        let me = std::thread::current().id();
        for w in self.workers.drain(..) {
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
        let pool = WorkerPool::new(2, 4).unwrap();
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
    fn every_job_runs_once_under_load() {
        let pool = WorkerPool::new(3, 8).unwrap();
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
