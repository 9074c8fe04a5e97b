//! A fixed-size pool of worker threads fed by a bounded queue.
//!
//! Handlers run here so the thread that reads the transport never blocks on user code: `ping`,
//! cancellation and the answers to server-to-client requests keep flowing while tools work.
//! The queue is bounded; when every worker is busy and the queue is full, `submit` blocks, which
//! back-pressures the transport instead of growing memory.
//!
//! The queue is a crossbeam channel shared by all workers: an idle worker spins briefly before
//! it parks, so under a stream of small requests the workers pick up jobs without a futex
//! wake-up per request (a plain mutex-and-condvar queue costs one), and a submit to a pool
//! whose workers all sleep wakes exactly one.

use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, bounded};

type Job = Box<dyn FnOnce() + Send + 'static>;

/// The pool; dropping it lets queued jobs finish and joins the workers.
pub(crate) struct WorkerPool {
    sender: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl WorkerPool {
    /// Starts `threads` workers (at least one) behind a queue of `queue` jobs.
    pub(crate) fn new(threads: usize, queue: usize) -> std::io::Result<WorkerPool> {
        let (sender, receiver) = bounded::<Job>(queue.max(1));
        let mut workers = Vec::new();
        for i in 0..threads.max(1) {
            let rx = receiver.clone();
            workers.push(
                std::thread::Builder::new()
                    .name(format!("mcp-worker-{i}"))
                    .spawn(move || worker_loop(&rx))?,
            );
        }
        Ok(WorkerPool {
            sender: Some(sender),
            workers,
        })
    }

    /// Queues a job, blocking while the queue is full. Returns the job back when the pool is
    /// shutting down.
    pub(crate) fn submit(&self, job: Job) -> Result<(), Job> {
        match &self.sender {
            Some(s) => s.send(job).map_err(|e| e.0),
            None => Err(job),
        }
    }
}

fn worker_loop(rx: &Receiver<Job>) {
    // Jobs catch their own panics (see the session), so a worker survives them. The loop ends
    // when the pool drops its sender and the queue is empty.
    for job in rx {
        job();
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.sender.take();
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
    use std::sync::Mutex;
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
