//! The `io.modelcontextprotocol/tasks` extension of 2026-07-28 (SEP-2663). Not part of the
//! core schema: the server may answer `tools/call` with a task handle
//! (`resultType: "task"`) when the request's client capabilities list the extension, and the
//! client polls with `tasks/get`, answers input with `tasks/update` and cancels with
//! `tasks/cancel`. Names here follow the extension's spec, so they are not re-exported at
//! the top of [`crate::types`] (they would clash with the 2025-11-25 types).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Meta, ResultType};
use super::input_required::{InputRequests, InputResponses};
use super::tasks::TaskStatus;

/// The extension identifier, as a key of `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";

/// Whether a tool runs as a task. The extension leaves the choice to the server, per tool:
/// the client never asks for a task, it only declares that it can follow one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TaskSupport {
    /// Always answered at once, never as a task (the default).
    #[default]
    Never,
    /// A task when the request's client declared the extension, a plain answer otherwise.
    Optional,
    /// Only as a task: a client that did not declare the extension gets -32021
    /// ([`missing_extension_error`]).
    Required,
}

/// Whether a client's capabilities (an object, as sent) declare the tasks extension.
pub fn declared_by(client_capabilities: &Value) -> bool {
    client_capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION_ID))
        .is_some_and(|v| !v.is_null())
}

/// The server's `capabilities.extensions` entry for the extension (an empty object: the
/// extension has no settings yet).
pub fn server_capability() -> Value {
    Value::Object(Map::new())
}

/// -32021: the request needs the extension (a tool that runs only as a task, a `tasks/*`
/// method, task notifications on `subscriptions/listen`) and the client did not declare it.
/// `data.requiredCapabilities` names it, shaped like the client's capabilities.
pub fn missing_extension_error() -> crate::jsonrpc::ErrorObject {
    crate::jsonrpc::ErrorObject::new(
        crate::jsonrpc::codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "This request needs the {EXTENSION_ID} extension, which the client did not declare"
        ),
    )
    .with_data(serde_json::json!({
        "requiredCapabilities": { "extensions": { EXTENSION_ID: {} } }
    }))
}

/// A task, with the status-specific fields inlined (`DetailedTask`): `inputRequests` when
/// `input_required`, `result` when `completed`, `error` when `failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// Id.
    pub task_id: String,
    /// State.
    pub status: TaskStatus,
    /// Human-readable detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last change.
    pub last_updated_at: String,
    /// Lifetime in milliseconds; `null` (None) for unlimited. Always sent.
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// Outstanding input requests (`input_required`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// The final result (`completed`), shaped like the original request's result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Map<String, Value>>,
    /// The JSON-RPC error (`failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Map<String, Value>>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl DetailedTask {
    /// A freshly created, working task.
    pub fn working(
        task_id: impl Into<String>,
        created_at: impl Into<String>,
        ttl_ms: Option<u64>,
    ) -> Self {
        let created_at = created_at.into();
        DetailedTask {
            task_id: task_id.into(),
            status: TaskStatus::Working,
            status_message: None,
            last_updated_at: created_at.clone(),
            created_at,
            ttl_ms,
            poll_interval_ms: None,
            input_requests: None,
            result: None,
            error: None,
            extra: Map::new(),
        }
    }
}

/// A task handle returned in lieu of a result (`resultType: "task"`). Must not carry
/// `result`/`error`/`inputRequests`; also the shape of `tasks/get` results (with
/// `resultType: "complete"`) and of `notifications/tasks` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskResult {
    /// `task` for a handle, `complete` for `tasks/get`.
    pub result_type: ResultType,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
}

/// `CreateTaskResult`: the handle (`resultType: "task"`).
pub type CreateTaskResult = TaskResult;
/// `GetTaskResult`: the detailed task (`resultType: "complete"`).
pub type GetTaskResult = TaskResult;

/// Params of `tasks/get` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `tasks/update`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskRequestParams {
    /// The task.
    pub task_id: String,
    /// Answers to outstanding input requests.
    pub input_responses: InputResponses,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `notifications/tasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatusNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_extension_is_declared_only_by_a_non_null_entry_under_extensions() {
        assert!(declared_by(&json!({"extensions": {EXTENSION_ID: {}}})));
        assert!(!declared_by(&json!({"extensions": {EXTENSION_ID: null}})));
        assert!(!declared_by(&json!({"extensions": {}})));
        assert!(!declared_by(&json!({EXTENSION_ID: {}})));
    }

    #[test]
    fn the_missing_extension_error_is_32021_naming_the_extension_like_capabilities() {
        let e = missing_extension_error();
        assert_eq!(e.code, -32021);
        let data = e.data.expect("data");
        assert_eq!(
            data["requiredCapabilities"]["extensions"][EXTENSION_ID],
            json!({})
        );
    }
}
