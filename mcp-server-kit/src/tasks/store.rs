//! Where tasks live between the requests that create, poll, answer and cancel them: the
//! [`TaskStore`] seam and its bounded in-memory default.
//!
//! A store keeps data only (the task as `tasks/get` shows it, and who may see it). What only
//! this process can hold — the handler's thread, its cancellation, the waits for input — stays
//! in the kit beside the store, so a store that writes to disk or shares tasks between
//! instances need not know about threads.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcp_core::types::tasks_ext::DetailedTask;

/// One task as stored: what `tasks/get` answers, and the requester it is bound to.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// The task, with its result, error or outstanding input requests inlined.
    pub task: DetailedTask,
    /// Who created it (the transport's authorization claims, serialized), when known: only
    /// the same requester may see or change it. `None` binds it to whoever holds the id, which
    /// is unguessable.
    pub owner: Option<String>,
}

/// Why a store refused to create a task.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The store holds as many tasks as it may (its cap); older ones free their place when
    /// their ttl ends.
    Full {
        /// The cap.
        cap: usize,
    },
    /// The store could not write (a durable store's I/O error, say).
    Unavailable(String),
}

impl fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskStoreError::Full { cap } => write!(
                f,
                "too many tasks: the server keeps at most {cap} at once; retry once older tasks expire"
            ),
            TaskStoreError::Unavailable(why) => write!(f, "the task store is unavailable: {why}"),
        }
    }
}

impl std::error::Error for TaskStoreError {}

/// Storage for tasks. Implement it to keep tasks across restarts or share them between
/// instances; [`MemoryTaskStore`] is the default.
///
/// Every method is called with no lock of the kit held, and may block briefly (I/O). A store
/// is `RefUnwindSafe` (a lock-based one is) so that the server handle stays unwind-safe: the
/// kit catches handler panics, and a store must stay consistent across them.
pub trait TaskStore: Send + Sync + std::panic::RefUnwindSafe {
    /// Stores a new task (`record.task.task_id` is fresh). The kit answers `tools/call` with
    /// the task handle only after this returned `Ok`, so a `tasks/get` right after finds it.
    ///
    /// # Errors
    /// [`TaskStoreError::Full`] at the cap; the request then fails with that message.
    fn create(&self, record: TaskRecord, ttl: Option<Duration>) -> Result<(), TaskStoreError>;

    /// The task with this id, unless it is unknown or expired.
    fn get(&self, task_id: &str) -> Option<TaskRecord>;

    /// Changes a stored task in place and returns it as changed (`None`: unknown or expired,
    /// and `change` was not called).
    fn update(&self, task_id: &str, change: &mut dyn FnMut(&mut TaskRecord)) -> Option<TaskRecord>;

    /// Drops a task the client never learnt of: its `tools/call` was refused after the task
    /// was stored (every worker busy), so nobody can ask for it, and it must not hold a place
    /// under the store's cap until its ttl ends. The default does nothing (the task then
    /// stays, failed, until its ttl ends).
    fn remove(&self, task_id: &str) {
        let _ = task_id;
    }
}

struct Entry {
    record: TaskRecord,
    /// The expiry index key, to remove it when the entry goes.
    expiry: Option<(Instant, u64)>,
}

#[derive(Default)]
struct Memory {
    tasks: HashMap<String, Entry>,
    /// When each task with a ttl ends, soonest first (the number breaks ties).
    expiries: BTreeMap<(Instant, u64), String>,
    next: u64,
}

impl Memory {
    /// Drops every task whose ttl has ended: expiry is checked on each use, so no timer thread
    /// is needed and memory is freed by the next request after it.
    fn purge(&mut self, now: Instant) {
        while let Some(entry) = self.expiries.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let id = entry.remove();
            self.tasks.remove(&id);
        }
    }
}

/// The in-memory store: bounded by a cap on the tasks it holds (working or finished; a finished
/// task is kept, with its result, until its ttl ends), each freed when its ttl ends.
pub struct MemoryTaskStore {
    cap: usize,
    inner: Mutex<Memory>,
}

impl MemoryTaskStore {
    /// A store that holds at most `cap` tasks at once (at least 1).
    pub fn new(cap: usize) -> MemoryTaskStore {
        MemoryTaskStore {
            cap: cap.max(1),
            inner: Mutex::new(Memory::default()),
        }
    }

    /// How many tasks it holds now (expired ones are dropped first).
    pub fn len(&self) -> usize {
        let mut m = self.lock();
        m.purge(Instant::now());
        m.tasks.len()
    }

    /// Whether it holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("cap", &self.cap)
            .field("len", &self.len())
            .finish()
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord, ttl: Option<Duration>) -> Result<(), TaskStoreError> {
        let now = Instant::now();
        let mut m = self.lock();
        m.purge(now);
        if m.tasks.len() >= self.cap {
            return Err(TaskStoreError::Full { cap: self.cap });
        }
        let id = record.task.task_id.clone();
        let expiry = ttl.and_then(|t| now.checked_add(t)).map(|at| {
            m.next += 1;
            (at, m.next)
        });
        if let Some(key) = expiry {
            m.expiries.insert(key, id.clone());
        }
        if let Some(old) = m.tasks.insert(id, Entry { record, expiry }) {
            // Ids are fresh, so this does not happen; if it did, the old index entry must go.
            if let Some(key) = old.expiry {
                m.expiries.remove(&key);
            }
        }
        Ok(())
    }

    fn get(&self, task_id: &str) -> Option<TaskRecord> {
        let mut m = self.lock();
        m.purge(Instant::now());
        m.tasks.get(task_id).map(|e| e.record.clone())
    }

    fn update(&self, task_id: &str, change: &mut dyn FnMut(&mut TaskRecord)) -> Option<TaskRecord> {
        let mut m = self.lock();
        m.purge(Instant::now());
        let e = m.tasks.get_mut(task_id)?;
        change(&mut e.record);
        Some(e.record.clone())
    }

    fn remove(&self, task_id: &str) {
        let mut m = self.lock();
        if let Some(key) = m.tasks.remove(task_id).and_then(|e| e.expiry) {
            m.expiries.remove(&key);
        }
    }
}
