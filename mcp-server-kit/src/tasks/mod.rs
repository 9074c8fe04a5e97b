//! The tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663) on the server:
//! a tool that declares task support answers `tools/call` with a task handle at once and runs
//! its ordinary handler on the kit's executor; the client polls `tasks/get`, answers input with
//! `tasks/update` and stops it with `tasks/cancel`.
//!
//! - `store`: the [`TaskStore`] seam (data only) and the bounded in-memory default.
//! - `runner`: a task's handler run (its `Context` asks for input by parking the task in
//!   `input_required` and waiting for `tasks/update`), and what only this process holds about
//!   running tasks (their cancellation, their waits).
//!
//! Built with the `tasks` feature only; without it `off.rs` stands in (no task is ever made).
//!
//! Only the 2026-07-28 era gets tasks: the experimental tasks of 2025-11-25 are a different
//! protocol (`tasks/result`, `tasks/list`, client-requested tasks), answered -32601 as before.

pub(crate) mod runner;
mod store;
mod time;

pub use store::{DEFAULT_TASK_STORE_BYTES, MemoryTaskStore, TaskRecord, TaskStore, TaskStoreError};

pub(crate) use runner::{Settings, TaskRun, Tasks};
