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

use mcp_core::jsonrpc::ErrorObject;
use mcp_core::types::TaskStatus;
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
    /// The requester holds as many tasks as one requester may, so that one client cannot
    /// take every place under the store's cap.
    OwnerFull {
        /// The cap of one requester.
        cap: usize,
    },
    /// The tasks held take as many bytes as the store may hold.
    NoRoom {
        /// The store's bound, in bytes.
        max_bytes: usize,
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
            TaskStoreError::OwnerFull { cap } => write!(
                f,
                "too many tasks: one requester may hold at most {cap} at once; retry once older tasks expire"
            ),
            TaskStoreError::NoRoom { max_bytes } => write!(
                f,
                "the tasks held take all of the task store's {max_bytes} bytes; retry once older tasks expire"
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
    /// What the record weighs (see [`weight`]).
    bytes: usize,
}

#[derive(Default)]
struct Memory {
    tasks: HashMap<String, Entry>,
    /// When each task with a ttl ends, soonest first (the number breaks ties).
    expiries: BTreeMap<(Instant, u64), String>,
    next: u64,
    /// The weight of every record held.
    bytes: usize,
    /// How many tasks each identified requester holds.
    owners: HashMap<String, usize>,
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
            self.take(&id);
        }
    }

    /// Removes a task and what it counted for.
    fn take(&mut self, id: &str) -> Option<Entry> {
        let e = self.tasks.remove(id)?;
        self.bytes -= e.bytes;
        if let Some(owner) = &e.record.owner {
            if let Some(n) = self.owners.get_mut(owner) {
                *n -= 1;
                if *n == 0 {
                    self.owners.remove(owner);
                }
            }
        }
        Some(e)
    }
}

/// The bytes a record holds, as its JSON text measures them (nothing is allocated to count).
fn weight(record: &TaskRecord) -> usize {
    mcp_core::jsonrpc::json_len(&record.task)
        + record.owner.as_ref().map_or(0, String::len)
        + record.task.task_id.len()
}

/// The default bound on the bytes an in-memory store holds (results, errors and input
/// requests included): a thousand tasks whose tools answer a few megabytes each must not take
/// gigabytes.
pub const DEFAULT_TASK_STORE_BYTES: usize = 64 * 1024 * 1024;

/// The in-memory store: bounded by a cap on the tasks it holds (working or finished; a finished
/// task is kept, with its result, until its ttl ends), each freed when its ttl ends; by a cap
/// on the tasks of one identified requester (a quarter of the store's by default, so that
/// one client cannot take every place); and by the bytes the tasks hold
/// ([`DEFAULT_TASK_STORE_BYTES`] by default). A result that would take the store past its
/// bytes is not kept: its task fails with an error that says so.
pub struct MemoryTaskStore {
    cap: usize,
    per_owner: usize,
    max_bytes: usize,
    inner: Mutex<Memory>,
}

impl MemoryTaskStore {
    /// A store that holds at most `cap` tasks at once (at least 1), at most a quarter of them
    /// (at least 1) for one requester, in at most [`DEFAULT_TASK_STORE_BYTES`].
    pub fn new(cap: usize) -> MemoryTaskStore {
        let cap = cap.max(1);
        MemoryTaskStore {
            cap,
            per_owner: cap.div_ceil(4),
            max_bytes: DEFAULT_TASK_STORE_BYTES,
            inner: Mutex::new(Memory::default()),
        }
    }

    /// How many tasks one requester (a task's [`TaskRecord::owner`]) may hold at once (at
    /// least 1). Tasks without an owner (no authorization: a stdio server's single client, an
    /// open HTTP server's clients, whom nothing tells apart) count only against the store's
    /// cap.
    pub fn per_owner(mut self, n: usize) -> MemoryTaskStore {
        self.per_owner = n.max(1);
        self
    }

    /// How many bytes the tasks held may take (their JSON text: results, errors and input
    /// requests included).
    pub fn max_bytes(mut self, n: usize) -> MemoryTaskStore {
        self.max_bytes = n;
        self
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
            .field("per_owner", &self.per_owner)
            .field("max_bytes", &self.max_bytes)
            .field("len", &self.len())
            .finish()
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord, ttl: Option<Duration>) -> Result<(), TaskStoreError> {
        let now = Instant::now();
        let bytes = weight(&record);
        let mut m = self.lock();
        m.purge(now);
        if m.tasks.len() >= self.cap {
            return Err(TaskStoreError::Full { cap: self.cap });
        }
        if let Some(owner) = &record.owner {
            if m.owners.get(owner).copied().unwrap_or(0) >= self.per_owner {
                return Err(TaskStoreError::OwnerFull {
                    cap: self.per_owner,
                });
            }
        }
        if m.bytes + bytes > self.max_bytes {
            return Err(TaskStoreError::NoRoom {
                max_bytes: self.max_bytes,
            });
        }
        let id = record.task.task_id.clone();
        // Ids are fresh; were one not, the old task goes first, with what it counted for.
        if let Some(old) = m.take(&id) {
            if let Some(key) = old.expiry {
                m.expiries.remove(&key);
            }
        }
        let expiry = ttl.and_then(|t| now.checked_add(t)).map(|at| {
            m.next += 1;
            (at, m.next)
        });
        if let Some(key) = expiry {
            m.expiries.insert(key, id.clone());
        }
        if let Some(owner) = &record.owner {
            *m.owners.entry(owner.clone()).or_default() += 1;
        }
        m.bytes += bytes;
        m.tasks.insert(
            id,
            Entry {
                record,
                expiry,
                bytes,
            },
        );
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
        let held = m.bytes;
        let e = m.tasks.get_mut(task_id)?;
        change(&mut e.record);
        let mut bytes = weight(&e.record);
        let others = held - e.bytes;
        if others + bytes > self.max_bytes {
            // The change (a result, an error, input requests) does not fit: the task fails
            // instead, and says why; what it held before goes too.
            let t = &mut e.record.task;
            let error = ErrorObject::internal(format!(
                "the task's outcome takes {bytes} bytes, more than the task store has room \
                 for ({} of {} bytes)",
                self.max_bytes.saturating_sub(others),
                self.max_bytes
            ));
            t.input_requests = None;
            t.result = None;
            t.error = match serde_json::to_value(error) {
                Ok(serde_json::Value::Object(map)) => Some(map),
                _ => None,
            };
            t.status = TaskStatus::Failed;
            bytes = weight(&e.record);
        }
        e.bytes = bytes;
        let record = e.record.clone();
        m.bytes = others + bytes;
        Some(record)
    }

    fn remove(&self, task_id: &str) {
        let mut m = self.lock();
        if let Some(key) = m.take(task_id).and_then(|e| e.expiry) {
            m.expiries.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value, json};

    fn record(id: &str, owner: Option<&str>) -> TaskRecord {
        TaskRecord {
            task: DetailedTask::working(id, "2026-11-25T10:00:00Z", None),
            owner: owner.map(str::to_owned),
        }
    }

    fn text_result(len: usize) -> Map<String, Value> {
        match json!({"content": [{"type": "text", "text": "x".repeat(len)}]}) {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn one_requester_cannot_take_every_place() {
        let store = MemoryTaskStore::new(8);
        for i in 0..2 {
            store
                .create(record(&format!("a{i}"), Some("alice")), None)
                .unwrap();
        }
        assert_eq!(
            store.create(record("a2", Some("alice")), None),
            Err(TaskStoreError::OwnerFull { cap: 2 })
        );
        // Others still get their places, and alice gets one back when one of hers goes.
        store.create(record("b0", Some("bob")), None).unwrap();
        store.create(record("n0", None), None).unwrap();
        store.remove("a0");
        store.create(record("a2", Some("alice")), None).unwrap();
        assert_eq!(store.len(), 4);
    }

    #[test]
    fn tasks_without_an_owner_count_only_against_the_cap() {
        let store = MemoryTaskStore::new(3);
        for i in 0..3 {
            store.create(record(&format!("n{i}"), None), None).unwrap();
        }
        assert_eq!(
            store.create(record("n3", None), None),
            Err(TaskStoreError::Full { cap: 3 })
        );
    }

    #[test]
    fn a_result_past_the_stores_bytes_fails_its_task_and_frees_the_room() {
        let store = MemoryTaskStore::new(100).max_bytes(10_000);
        store.create(record("t1", None), None).unwrap();
        store.create(record("t2", None), None).unwrap();
        let small = store
            .update("t1", &mut |r| {
                r.task.status = TaskStatus::Completed;
                r.task.result = Some(text_result(4_000));
            })
            .unwrap();
        assert_eq!(small.task.status, TaskStatus::Completed);
        // 8,000 more bytes do not fit beside the first result: the task fails, saying why.
        let big = store
            .update("t2", &mut |r| {
                r.task.status = TaskStatus::Completed;
                r.task.result = Some(text_result(8_000));
            })
            .unwrap();
        assert_eq!(big.task.status, TaskStatus::Failed);
        assert!(big.task.result.is_none());
        let message = big.task.error.as_ref().unwrap()["message"]
            .as_str()
            .unwrap();
        assert!(
            message.contains("more than the task store has room for"),
            "{message}"
        );
        assert_eq!(store.get("t2").unwrap(), big);
        // The bytes held are the records' own: once the first task goes, a big result fits.
        store.remove("t1");
        let fits = store
            .update("t2", &mut |r| {
                r.task.status = TaskStatus::Completed;
                r.task.error = None;
                r.task.result = Some(text_result(8_000));
            })
            .unwrap();
        assert_eq!(fits.task.status, TaskStatus::Completed);
        // And a store whose bytes are taken refuses new tasks until some go.
        let one = weight(&record("t1", None));
        let full = MemoryTaskStore::new(100).max_bytes(one + one / 2);
        full.create(record("t1", None), None).unwrap();
        assert_eq!(
            full.create(record("t2", None), None),
            Err(TaskStoreError::NoRoom {
                max_bytes: one + one / 2
            })
        );
    }

    #[test]
    fn expired_tasks_give_back_their_bytes_and_places() {
        let store = MemoryTaskStore::new(4).per_owner(1).max_bytes(1_000);
        store
            .create(record("t1", Some("alice")), Some(Duration::ZERO))
            .unwrap();
        // Expired at once: its place under alice's cap and its bytes are free again.
        store
            .create(record("t2", Some("alice")), Some(Duration::from_secs(60)))
            .unwrap();
        assert!(store.get("t1").is_none());
        assert_eq!(store.len(), 1);
        let t2 = weight(&store.get("t2").unwrap());
        assert_eq!(store.lock().bytes, t2);
    }
}
