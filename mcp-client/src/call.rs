//! Per-call options (a timeout, a progress callback, a cancel handle, a task-status callback),
//! and one call's send-and-wait on the connection.

use std::fmt;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use mcp_core::engine::{Outcome, ProgressUpdate, Timeout};
use mcp_core::jsonrpc::RequestId;
use mcp_core::types::tasks_ext::DetailedTask;
use serde_json::Value;

use crate::connection::{ProgressCallback, Shared};
use crate::error::Error;
use crate::task_handle::TaskHandle;

/// The task-status callback of [`CallOptions::on_task_status`].
pub type TaskCallback = Arc<dyn Fn(&TaskHandle, &DetailedTask) + Send + Sync>;

/// How one call is made; `CallOptions::default()` uses the client's default timeout, no
/// progress and no cancel handle.
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(crate) timeout: Option<Timeout>,
    pub(crate) progress: Option<ProgressCallback>,
    pub(crate) cancel: Option<CancelHandle>,
    pub(crate) on_task: Option<TaskCallback>,
}

impl CallOptions {
    /// The default options.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// This call's timeout instead of the client's default. With
    /// [`Timeout::resetting`], each progress report from the server extends it (up to its
    /// `max_total`). A plain `Duration` is a fixed timeout.
    pub fn timeout(mut self, timeout: impl Into<Timeout>) -> Self {
        self.timeout = Some(timeout.into());
        self
    }

    /// Asks the server for progress reports (a progress token goes in the request's `_meta`)
    /// and passes each to `f`. `f` runs on the client's reader thread: keep it short, since
    /// nothing else from the server is read while it runs.
    pub fn on_progress(mut self, f: impl Fn(&ProgressUpdate) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Lets another thread cancel the call through `handle`.
    pub fn cancel_handle(mut self, handle: CancelHandle) -> Self {
        self.cancel = Some(handle);
        self
    }

    /// When the server runs the call as a task (the tasks extension), passes `f` the task's
    /// handle and state when it starts and after each `tasks/get`, so that a host can keep
    /// the handle somewhere durable (the extension asks clients to, so that polling can
    /// resume after a crash) or show the task's status. Runs on the calling thread.
    pub fn on_task_status(
        mut self,
        f: impl Fn(&TaskHandle, &DetailedTask) + Send + Sync + 'static,
    ) -> Self {
        self.on_task = Some(Arc::new(f));
        self
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            .field("on_task", &self.on_task.is_some())
            .finish()
    }
}

#[derive(Default)]
struct CancelState {
    cancelled: bool,
    reason: Option<String>,
    current: Option<(Weak<Shared>, RequestId)>,
    /// Dropped on cancel, which wakes every wait on [`CancelHandle::fired`] (a task's poll
    /// interval) at once.
    fire: Option<Sender<()>>,
}

/// Cancels a call from another thread: `notifications/cancelled` goes to the server and the
/// call returns [`Error::Cancelled`] at once, whatever the server does next.
///
/// A handle is one-shot: once cancelled, every call made with it fails with
/// [`Error::Cancelled`] (including later rounds of a 2026-07-28 `input_required` exchange).
#[derive(Clone)]
pub struct CancelHandle {
    state: Arc<Mutex<CancelState>>,
    fired: Receiver<()>,
}

impl Default for CancelHandle {
    fn default() -> Self {
        let (fire, fired) = crossbeam_channel::bounded(0);
        CancelHandle {
            state: Arc::new(Mutex::new(CancelState {
                fire: Some(fire),
                ..CancelState::default()
            })),
            fired,
        }
    }
}

impl CancelHandle {
    /// A handle that has not been cancelled.
    pub fn new() -> Self {
        CancelHandle::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CancelState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A channel that disconnects when the handle is cancelled: a wait between two polls
    /// selects on it, so a cancellation ends the wait at once.
    pub(crate) fn fired(&self) -> &Receiver<()> {
        &self.fired
    }

    /// Cancels the call.
    pub fn cancel(&self) {
        self.cancel_because(None);
    }

    /// Cancels the call, telling the server why.
    pub fn cancel_with_reason(&self, reason: impl Into<String>) {
        self.cancel_because(Some(reason.into()));
    }

    fn cancel_because(&self, reason: Option<String>) {
        let current = {
            let mut st = self.lock();
            if st.cancelled {
                return;
            }
            st.cancelled = true;
            st.reason = reason.clone();
            st.fire = None;
            st.current.take()
        };
        if let Some((shared, id)) = current {
            if let Some(shared) = shared.upgrade() {
                shared.cancel_call(&id, reason.as_deref(), Error::Cancelled);
            }
        }
    }

    /// Whether [`CancelHandle::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.lock().cancelled
    }

    pub(crate) fn reason(&self) -> Option<String> {
        self.lock().reason.clone()
    }

    /// Records the request in flight; `false` when the handle was cancelled already (the
    /// caller then cancels the request itself).
    pub(crate) fn attach(&self, shared: Weak<Shared>, id: RequestId) -> bool {
        let mut st = self.lock();
        if st.cancelled {
            return false;
        }
        st.current = Some((shared, id));
        true
    }

    pub(crate) fn detach(&self) {
        self.lock().current = None;
    }
}

impl fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelHandle")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// Extra time a caller waits beyond its request's hard deadline before giving up on the reader
/// thread (which enforces the deadline itself).
const DEADLINE_SLACK: Duration = Duration::from_secs(2);

/// One request, start to answer: sends, waits (with the reader enforcing the timeout and
/// this wait as a backstop), honours the cancel handle.
pub(crate) fn call(
    conn: &Arc<Shared>,
    method: &str,
    params: &Value,
    timeout: Timeout,
    progress: Option<ProgressCallback>,
    cancel: Option<&CancelHandle>,
) -> Result<Outcome, Error> {
    call_tracked(conn, method, params, timeout, progress, cancel).map(|(_, outcome)| outcome)
}

/// [`call`], also returning the request's id (the id a task's progress reports are about).
pub(crate) fn call_tracked(
    conn: &Arc<Shared>,
    method: &str,
    params: &Value,
    timeout: Timeout,
    progress: Option<ProgressCallback>,
    cancel: Option<&CancelHandle>,
) -> Result<(RequestId, Outcome), Error> {
    if cancel.is_some_and(CancelHandle::is_cancelled) {
        return Err(Error::Cancelled);
    }
    let started = Instant::now();
    let (id, rx) = conn.start(method, params, timeout, progress)?;
    if let Some(c) = cancel {
        if !c.attach(Arc::downgrade(conn), id.clone()) {
            conn.cancel_call(&id, c.reason().as_deref(), Error::Cancelled);
        }
    }
    // The reader thread expires the request at its deadline, but it may be held up (a server
    // that stopped reading while it queues an answer of ours): the caller keeps the deadline
    // itself, re-reading it when it passes (progress may have moved it).
    let backstop = started + timeout.max_total + DEADLINE_SLACK;
    let result = loop {
        let due = conn
            .state()
            .engine
            .deadline_of(&id)
            .map_or(backstop, |d| d.min(backstop));
        match rx.recv_deadline(due) {
            Ok(r) => break r,
            Err(RecvTimeoutError::Timeout) => {
                let now = Instant::now();
                let due = conn.state().engine.deadline_of(&id);
                match due {
                    // Progress moved the deadline.
                    Some(d) if d > now && now < backstop => continue,
                    // The reader took it out (answered or expired): its word is on the way.
                    None if now < backstop => continue,
                    _ => {}
                }
                conn.cancel_call(&id, Some("timed out"), Error::Cancelled);
                break Err(Error::Timeout {
                    method: method.to_owned(),
                });
            }
            Err(RecvTimeoutError::Disconnected) => break Err(conn.closed_error()),
        }
    };
    if let Some(c) = cancel {
        c.detach();
    }
    result.map(|outcome| (id, outcome))
}
