//! A task's handle: what a host keeps to reach a task again (plain data that serializes),
//! and the polling interval it implies.
//!
//! Apart from `tasks`, which follows tasks through the [`Client`](crate::Client), because the
//! handle is also what [`CallOptions::on_task_status`](crate::CallOptions::on_task_status)
//! reports: the options of one call sit below the client, and so must the handle.

use std::time::Duration;

use mcp_core::types::methods;
use mcp_core::types::tasks_ext::DetailedTask;
use serde::{Deserialize, Serialize};

/// The shortest wait between two polls, whatever the server suggests: a server that says
/// `pollIntervalMs: 0` cannot make the client spin.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest wait between two polls, whatever the server suggests: a task that ends is
/// noticed within this time.
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);
/// The wait between two polls when the server suggests none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// A task the server runs for a request: what is needed to reach it again, as plain data.
///
/// It serializes (camelCase JSON), so a host can store it and use it from another connection
/// or another process: connect to the same server (`server` says which, as the transport
/// names it: the URL, or `stdio:` and the command line), with the same credentials (a server
/// binds a task to its requester), and pass the handle to
/// [`Client::task_get`](crate::Client::task_get), [`Client::task_wait`](crate::Client::task_wait),
/// [`Client::task_cancel`](crate::Client::task_cancel).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskHandle {
    /// The server's id for the task.
    pub task_id: String,
    /// The request the task runs (`tools/call`, the only one the extension has so far).
    #[serde(default = "tools_call")]
    pub method: String,
    /// The server, as the transport that created the task names it, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The polling interval the server last suggested, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// How long the server keeps the task from its creation, in milliseconds (`None`: no
    /// limit, or not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// When the server created the task (ISO 8601), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

fn tools_call() -> String {
    methods::TOOLS_CALL.to_owned()
}

impl TaskHandle {
    /// A handle from a bare task id (of a `tools/call`), for example one typed by a user.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskHandle {
            task_id: task_id.into(),
            method: tools_call(),
            server: None,
            poll_interval_ms: None,
            ttl_ms: None,
            created_at: None,
        }
    }

    pub(crate) fn of(task: &DetailedTask, method: &str, server: Option<String>) -> Self {
        let mut handle = TaskHandle::new(task.task_id.clone());
        method.clone_into(&mut handle.method);
        handle.server = server;
        handle.created_at = Some(task.created_at.clone());
        handle.refresh(task);
        handle
    }

    /// Takes what the server may change over the task's life (its interval, its ttl).
    pub(crate) fn refresh(&mut self, task: &DetailedTask) {
        if task.poll_interval_ms.is_some() {
            self.poll_interval_ms = task.poll_interval_ms;
        }
        self.ttl_ms = task.ttl_ms;
    }

    /// The wait between two polls: the server's suggestion, clamped between
    /// [`MIN_POLL_INTERVAL`] and [`MAX_POLL_INTERVAL`].
    pub fn poll_interval(&self) -> Duration {
        self.poll_interval_ms
            .map_or(DEFAULT_POLL_INTERVAL, Duration::from_millis)
            .clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
    }
}
