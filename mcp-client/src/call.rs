//! Per-call options: a timeout, a progress callback and a cancel handle.

use std::fmt;
use std::sync::{Arc, Mutex, Weak};

use mcp_core::engine::{ProgressUpdate, Timeout};
use mcp_core::jsonrpc::RequestId;

use crate::error::Error;
use crate::shared::{ProgressCallback, Shared};

/// How one call is made; `CallOptions::default()` uses the client's default timeout, no
/// progress and no cancel handle.
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(crate) timeout: Option<Timeout>,
    pub(crate) progress: Option<ProgressCallback>,
    pub(crate) cancel: Option<CancelHandle>,
}

impl CallOptions {
    /// The default options.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// This call's timeout instead of the client's default. With
    /// [`Timeout::resetting`], each progress report from the server extends it (up to its
    /// `max_total`).
    pub fn timeout(mut self, timeout: Timeout) -> Self {
        self.timeout = Some(timeout);
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
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            .finish()
    }
}

#[derive(Default)]
struct CancelState {
    cancelled: bool,
    reason: Option<String>,
    current: Option<(Weak<Shared>, RequestId)>,
}

/// Cancels a call from another thread: `notifications/cancelled` goes to the server and the
/// call returns [`Error::Cancelled`] at once, whatever the server does next.
///
/// A handle is one-shot: once cancelled, every call made with it fails with
/// [`Error::Cancelled`] (including later rounds of a 2026-07-28 `input_required` exchange).
#[derive(Clone, Default)]
pub struct CancelHandle(Arc<Mutex<CancelState>>);

impl CancelHandle {
    /// A handle that has not been cancelled.
    pub fn new() -> Self {
        CancelHandle::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CancelState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
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
