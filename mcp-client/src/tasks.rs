//! The tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663) on the client.
//!
//! The client declares the extension in every request's capabilities (a builder option, on by
//! default), and a server may then answer a `tools/call` with a task handle
//! (`resultType: "task"`) instead of the result. Two ways to deal with that:
//!
//! - [`Client::call_tool`] follows the task to its end, so the caller sees an ordinary result:
//!   it polls `tasks/get` at the server's `pollIntervalMs` (clamped between
//!   [`MIN_POLL_INTERVAL`] and [`MAX_POLL_INTERVAL`](crate::MAX_POLL_INTERVAL)), waiting on
//!   channels that a cancellation or the connection's end wake at once; answers
//!   `input_required` through the same handlers as elicitation, sampling and roots
//!   (`tasks/update`); reports each change of the task's status to the progress callback; and
//!   sends `tasks/cancel` when the call is cancelled, times out or fails, so that no task is
//!   left running for a caller who gave up.
//! - [`Client::call_tool_as_task`] returns the [`TaskHandle`], plain data that serializes, so
//!   a host can poll ([`Client::task_get`]), answer ([`Client::task_update`]), stop
//!   ([`Client::task_cancel`]) or follow ([`Client::task_wait`]) it later, from another
//!   connection or another process.
//!
//! Every wait is bounded by the call's timeout, and so is the number of polls: each poll is at
//! least [`MIN_POLL_INTERVAL`] after the previous one.
//!
//! The experimental tasks of 2025-11-25 are client-requested instead: on a 2025-11-25
//! connection to a server that declares `tasks.requests.tools.call`,
//! [`Client::call_tool_as_task`] asks for a task (`params.task`), and [`Client::task_get`],
//! [`Client::task_cancel`] and [`Client::task_wait`] work on it (the last polls `tasks/get`,
//! then takes the result from `tasks/result`, during which the server's input requests come as
//! ordinary requests to the same handlers). [`Client::call_tool`] never asks for one there.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crossbeam_channel::{never, select};
use mcp_core::engine::{Outcome, ProgressUpdate, Refused, Timeout};
use mcp_core::jsonrpc::{ErrorObject, RequestId};
use mcp_core::types::tasks_ext::{DetailedTask, TaskResult};
use mcp_core::types::{CallToolResult, InputResponses, TaskStatus, methods};
use mcp_core::version::{Era, ProtocolVersion};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::tool_tasks::Support;
use serde_json::{Map, Value, json};

use crate::call::{self, CallOptions, CancelHandle};
use crate::client::{Client, Reply};
use crate::error::{Error, Unexpected};
use crate::task_handle::{MIN_POLL_INTERVAL, TaskHandle};

/// How many input requests one task may make of a call that follows it: enough for any
/// honest dialogue, few enough that a server inventing new keys on every poll is cut off.
pub const MAX_TASK_INPUTS: usize = 64;
/// How long a cancelled call waits for the server to acknowledge its `tasks/cancel`.
const CANCEL_ACK_WAIT: Duration = Duration::from_secs(2);

/// How [`Client::call_tool_as_task`] started: the server decides, per request, whether a call
/// becomes a task.
#[derive(Debug, Clone)]
pub enum Started {
    /// The server runs the call as a task.
    Task(TaskHandle),
    /// The server answered at once.
    Complete(Box<CallToolResult>),
}

/// A call's deadline while it follows a task: the call's timeout from its start, restarted by
/// each change of the task (when the timeout resets on progress) but never past `max_total`.
#[derive(Debug, Clone, Copy)]
struct Clock {
    started: Instant,
    timeout: Timeout,
    until: Instant,
}

impl Clock {
    fn start(timeout: Timeout) -> Self {
        Clock::since(Instant::now(), timeout)
    }

    fn since(started: Instant, timeout: Timeout) -> Self {
        Clock {
            started,
            timeout,
            until: started + timeout.initial.min(timeout.max_total),
        }
    }

    fn progressed(&mut self) {
        if self.timeout.reset_on_progress {
            let cap = self.started + self.timeout.max_total;
            self.until = (Instant::now() + self.timeout.initial).min(cap);
        }
    }

    /// The time left, `None` once it is up.
    fn remaining(&self) -> Option<Duration> {
        let left = self.until.saturating_duration_since(Instant::now());
        (!left.is_zero()).then_some(left)
    }

    /// The most polls that fit in the longest this call may last.
    fn max_polls(&self) -> usize {
        let longest = self.timeout.max_total.max(self.timeout.initial);
        usize::try_from(longest.as_millis() / MIN_POLL_INTERVAL.as_millis())
            .unwrap_or(usize::MAX)
            .saturating_add(2)
    }
}

/// One task being followed to its end.
struct Follow<'a> {
    client: &'a Client,
    handle: TaskHandle,
    options: &'a CallOptions,
    clock: Clock,
    /// The `tools/call` the task answers: progress reports are about it.
    call_id: Option<RequestId>,
    /// Whether the task is ours to stop when the wait ends without it (a followed
    /// `call_tool`), or the host's ([`Client::task_wait`]).
    owned: bool,
    /// A 2025-11-25 task: its result comes from `tasks/result`.
    legacy: bool,
}

impl Follow<'_> {
    fn timed_out(&self) -> Error {
        Error::Timeout {
            method: self.handle.method.clone(),
        }
    }

    /// The timeout of one `tasks/*` request: what is left of the call.
    fn request_timeout(&self) -> Result<Timeout, Error> {
        self.clock
            .remaining()
            .map(Timeout::fixed)
            .ok_or_else(|| self.timed_out())
    }

    fn run(&mut self, first: DetailedTask) -> Result<Map<String, Value>, Error> {
        let result = self.poll(first);
        if let Err(e) = &result {
            let ended = matches!(
                e,
                Error::Closed(_) | Error::TaskFailed { .. } | Error::TaskCancelled { .. }
            );
            if self.owned && !ended {
                // The call gives up on the task: the server should too. After a timeout the
                // caller is not kept waiting for the acknowledgement.
                let wait = !matches!(e, Error::Timeout { .. });
                self.client.send_task_cancel(&self.handle, wait);
            }
        }
        result
    }

    fn poll(&mut self, mut task: DetailedTask) -> Result<Map<String, Value>, Error> {
        let mut answered = HashSet::new();
        let mut last: Option<(TaskStatus, Option<String>, String)> = None;
        let mut changes = 0u32;
        for _ in 0..self.clock.max_polls() {
            self.handle.refresh(&task);
            let now = (
                task.status,
                task.status_message.clone(),
                task.last_updated_at.clone(),
            );
            if last.as_ref() != Some(&now) {
                if last.is_some() {
                    self.clock.progressed();
                }
                last = Some(now);
                changes += 1;
                self.report(&task, changes);
            }
            if self.legacy
                && matches!(
                    task.status,
                    TaskStatus::Completed | TaskStatus::Failed | TaskStatus::InputRequired
                )
            {
                return self.legacy_result();
            }
            match task.status {
                TaskStatus::Completed => {
                    return task.result.ok_or_else(|| {
                        Unexpected::TaskWithoutResult {
                            task_id: task.task_id.clone(),
                        }
                        .into()
                    });
                }
                TaskStatus::Failed => return Err(failed(task)),
                TaskStatus::Cancelled => {
                    return Err(Error::TaskCancelled {
                        task_id: task.task_id,
                        message: task.status_message,
                    });
                }
                TaskStatus::InputRequired => self.answer(&task, &mut answered)?,
                TaskStatus::Working => {}
            }
            self.pause()?;
            task = self.get()?;
        }
        Err(self.timed_out())
    }

    /// Tells the caller's callbacks about a change: the task itself, and a progress report
    /// (the count of changes seen, with the status message) so that a host's progress
    /// display keeps moving while a task runs (the extension carries no progress
    /// notifications for tasks; servers put their progress in `statusMessage`).
    fn report(&self, task: &DetailedTask, changes: u32) {
        if let Some(f) = &self.options.on_task {
            f(&self.handle, task);
        }
        if let (Some(f), Some(id)) = (&self.options.progress, &self.call_id) {
            f(&ProgressUpdate {
                id: id.clone(),
                progress: f64::from(changes),
                total: None,
                message: task.status_message.clone(),
            });
        }
    }

    /// Answers the outstanding input requests not answered yet (a server repeats them until
    /// its task takes the answers in) through the client's handlers, in one `tasks/update`.
    fn answer(&mut self, task: &DetailedTask, answered: &mut HashSet<String>) -> Result<(), Error> {
        let Some(requests) = task.input_requests.clone() else {
            return Ok(());
        };
        let mut answers = Map::new();
        for (key, req) in requests {
            if answered.contains(&key) {
                continue;
            }
            if answered.len() >= MAX_TASK_INPUTS {
                return Err(Error::TooManyInputRounds(MAX_TASK_INPUTS));
            }
            let method = req.method();
            let answer = self.client.shared.handlers.answer_input(&key, req)?;
            let answer = serde_json::to_value(answer).map_err(|e| Error::Input {
                method: method.to_owned(),
                key: key.clone(),
                source: Box::new(e),
            })?;
            answers.insert(key.clone(), answer);
            answered.insert(key);
        }
        if answers.is_empty() {
            return Ok(());
        }
        if self
            .options
            .cancel
            .as_ref()
            .is_some_and(|c| c.is_cancelled())
        {
            return Err(Error::Cancelled);
        }
        let params = json!({"taskId": self.handle.task_id, "inputResponses": answers});
        let outcome = call::call(
            &self.client.shared,
            methods::TASKS_UPDATE,
            &params,
            self.request_timeout()?,
            None,
            self.options.cancel.as_ref(),
        )?;
        complete(methods::TASKS_UPDATE, outcome)?;
        // A person may have taken a while to answer: that was the task moving on.
        self.clock.progressed();
        Ok(())
    }

    /// Waits one poll interval (never past the deadline), on channels that a cancellation or
    /// the connection's end wakes at once.
    fn pause(&self) -> Result<(), Error> {
        let left = self.clock.remaining().ok_or_else(|| self.timed_out())?;
        let wait = self.handle.poll_interval().min(left);
        let idle = never();
        let cancelled = self.options.cancel.as_ref().map_or(&idle, |c| c.fired());
        let shared = &self.client.shared;
        select! {
            recv(cancelled) -> _ => Err(Error::Cancelled),
            recv(shared.closed) -> _ => Err(shared.closed_error()),
            default(wait) => match self.clock.remaining() {
                Some(_) => Ok(()),
                None => Err(self.timed_out()),
            },
        }
    }

    /// 2025-11-25: the result from `tasks/result`, which waits for the task to end; a task
    /// waiting for input gets it meanwhile through ordinary server requests (answered by the
    /// client's handlers on its handler thread).
    fn legacy_result(&self) -> Result<Map<String, Value>, Error> {
        let params = json!({"taskId": self.handle.task_id});
        let outcome = call::call(
            &self.client.shared,
            methods::TASKS_RESULT,
            &params,
            self.request_timeout()?,
            None,
            self.options.cancel.as_ref(),
        );
        let raw = match outcome {
            Ok(Outcome::Error(error)) => {
                return Err(Error::TaskFailed {
                    task_id: self.handle.task_id.clone(),
                    error,
                });
            }
            Ok(o) => complete(methods::TASKS_RESULT, o)?,
            Err(Error::Timeout { .. }) => return Err(self.timed_out()),
            Err(e) => return Err(e),
        };
        serde_json::from_str(raw.get()).map_err(|source| Error::Decode {
            what: format!("{} result", methods::TASKS_RESULT),
            source,
        })
    }

    fn get(&self) -> Result<DetailedTask, Error> {
        let timeout = self.request_timeout()?;
        let r = self
            .client
            .get_task(&self.handle, timeout, self.options.cancel.as_ref());
        match r {
            Err(Error::Timeout { .. }) => Err(self.timed_out()),
            other => other,
        }
    }
}

/// A 2025-11-25 `Task` as the extension's [`DetailedTask`]: the same fields but for the unit
/// suffixes (`ttl`, `pollInterval` became `ttlMs`, `pollIntervalMs`).
/// The task a 2025-11-25 `tools/call` that asked for one (`asked`) was answered with, if the
/// answer is a task (`{"task": {...}}`) rather than the tool's result.
fn legacy_created(raw: &RawValue, asked: bool) -> Result<Option<DetailedTask>, Error> {
    #[derive(Deserialize)]
    struct Created {
        task: Value,
    }
    if !asked {
        return Ok(None);
    }
    match serde_json::from_str::<Created>(raw.get()) {
        Ok(Created { task }) => legacy_task(task).map(Some).map_err(|source| Error::Decode {
            what: format!("{} task", methods::TOOLS_CALL),
            source,
        }),
        Err(_) => Ok(None),
    }
}

fn decode_call_result(raw: &RawValue) -> Result<CallToolResult, Error> {
    serde_json::from_str(raw.get()).map_err(|source| Error::Decode {
        what: format!("{} result", methods::TOOLS_CALL),
        source,
    })
}

fn legacy_task(mut v: Value) -> Result<DetailedTask, serde_json::Error> {
    if let Some(o) = v.as_object_mut() {
        for (old, new) in [("ttl", "ttlMs"), ("pollInterval", "pollIntervalMs")] {
            if let Some(x) = o.remove(old) {
                o.insert(new.to_owned(), x);
            }
        }
        o.entry("ttlMs").or_insert(Value::Null);
    }
    serde_json::from_value(v)
}

/// A `failed` task as an error: the JSON-RPC error it carries (or one made of its status
/// message when it carries none that decodes).
fn failed(task: DetailedTask) -> Error {
    let error = task
        .error
        .and_then(|e| serde_json::from_value::<ErrorObject>(Value::Object(e)).ok())
        .unwrap_or_else(|| {
            ErrorObject::internal(
                task.status_message
                    .unwrap_or_else(|| "the task failed".to_owned()),
            )
        });
    Error::TaskFailed {
        task_id: task.task_id,
        error,
    }
}

/// The result of a request that must complete (`tasks/get`, `tasks/update`, `tasks/cancel`).
fn complete(method: &str, outcome: Outcome) -> Result<Box<RawValue>, Error> {
    match outcome {
        Outcome::Complete(r) => Ok(r),
        Outcome::Error(e) => Err(Error::Rpc(e)),
        Outcome::InputRequired(_) => Err(Unexpected::ResultType {
            method: method.to_owned(),
            result_type: "input_required".to_owned(),
        }
        .into()),
        Outcome::Other { result_type, .. } => Err(Unexpected::ResultType {
            method: method.to_owned(),
            result_type,
        }
        .into()),
    }
}

impl Client {
    /// Whether a `resultType: "task"` answer to `method` is one this client follows: the
    /// extension declared, a 2026-07-28 connection, a method the extension covers.
    pub(crate) fn follows_tasks(&self, method: &str) -> bool {
        self.shared.handlers.tasks && self.era() == Era::Modern && method == methods::TOOLS_CALL
    }

    /// The task of a `resultType: "task"` answer.
    pub(crate) fn task_of(method: &str, raw: &RawValue) -> Result<DetailedTask, Error> {
        let handle: TaskResult =
            serde_json::from_str(raw.get()).map_err(|source| Error::Decode {
                what: format!("{method} task handle"),
                source,
            })?;
        Ok(handle.task)
    }

    /// Follows the task a request became to its end: the final result, as the request would
    /// have returned it. The call's timeout runs from `started`, when the call began.
    pub(crate) fn follow_task(
        &self,
        method: &str,
        call_id: RequestId,
        task: DetailedTask,
        options: &CallOptions,
        started: Instant,
    ) -> Result<Box<RawValue>, Error> {
        let clock = Clock::since(started, options.timeout.unwrap_or(self.default_timeout()));
        let handle = TaskHandle::of(&task, method, self.summary.server_key.clone());
        let mut follow = Follow {
            client: self,
            handle,
            options,
            clock,
            call_id: Some(call_id),
            owned: true,
            legacy: false,
        };
        let result = follow.run(task)?;
        serde_json::value::to_raw_value(&result).map_err(|source| Error::Decode {
            what: format!("{method} task result"),
            source,
        })
    }

    /// Whether this is a 2025-11-25 connection to a server that runs `tools/call` as
    /// (client-requested) experimental tasks.
    pub(crate) fn legacy_tasks(&self) -> bool {
        self.era() == Era::Legacy
            && self
                .protocol_version()
                .at_least(ProtocolVersion::V2025_11_25)
            && self.server_capabilities()["tasks"]["requests"]["tools"]["call"].is_object()
    }

    fn refuse_legacy(&self, method: &str) -> Result<(), Error> {
        let legacy_ok = matches!(
            method,
            methods::TASKS_GET | methods::TASKS_CANCEL | methods::TASKS_RESULT
        ) && self.legacy_tasks();
        if self.era() == Era::Modern || legacy_ok {
            Ok(())
        } else {
            Err(Refused::WrongEra {
                method: method.to_owned(),
                era: self.era(),
            }
            .into())
        }
    }

    fn get_task(
        &self,
        handle: &TaskHandle,
        timeout: Timeout,
        cancel: Option<&CancelHandle>,
    ) -> Result<DetailedTask, Error> {
        self.refuse_legacy(methods::TASKS_GET)?;
        let params = json!({"taskId": handle.task_id});
        let outcome = call::call(
            &self.shared,
            methods::TASKS_GET,
            &params,
            timeout,
            None,
            cancel,
        )?;
        let raw = complete(methods::TASKS_GET, outcome)?;
        let decoded = if self.era() == Era::Legacy {
            serde_json::from_str(raw.get()).and_then(legacy_task)
        } else {
            serde_json::from_str::<TaskResult>(raw.get()).map(|r| r.task)
        };
        let task = decoded.map_err(|source| Error::Decode {
            what: format!("{} result", methods::TASKS_GET),
            source,
        })?;
        if task.task_id != handle.task_id {
            return Err(Unexpected::OtherTask {
                asked: handle.task_id.clone(),
                got: task.task_id,
            }
            .into());
        }
        Ok(task)
    }

    /// Sends `tasks/cancel` for a call that gives up on its task; with `wait`, waits a
    /// moment for the acknowledgement (so the task is stopped when the call returns).
    /// Failures are only logged: the call already has its own error to return.
    fn send_task_cancel(&self, handle: &TaskHandle, wait: bool) {
        let params = json!({"taskId": handle.task_id});
        let timeout = Timeout::fixed(CANCEL_ACK_WAIT);
        let sent = if wait {
            call::call(
                &self.shared,
                methods::TASKS_CANCEL,
                &params,
                timeout,
                None,
                None,
            )
            .and_then(|o| complete(methods::TASKS_CANCEL, o))
            .map(drop)
        } else {
            // The answer, if any, finds no one waiting and is dropped; the request is
            // forgotten at its timeout at the latest.
            self.shared
                .start(methods::TASKS_CANCEL, &params, timeout, None)
                .map(drop)
        };
        if let Err(e) = sent {
            log::debug!(target: "mcp_client", "tasks/cancel of {}: {e}", handle.task_id);
        }
    }

    /// Calls a tool and returns as soon as the server has either answered or started a task
    /// for it, so that the host decides how to follow the task (poll it, wait for it on
    /// another thread, store the handle and resume after a restart). The server decides
    /// whether a call becomes a task; this client must declare the extension
    /// ([`ClientBuilder::tasks`](crate::ClientBuilder::tasks), on by default) for it to.
    /// `input_required` rounds before the task starts are answered as in
    /// [`Client::call_tool`].
    ///
    /// On 2025-11-25 the client asks for the task itself, and only of a tool whose
    /// `execution.taskSupport` allows one (`"optional"` or `"required"`; the client lists the
    /// server's tools to know, once until they change): a tool that forbids tasks, the
    /// default, gets a plain call, [`Started::Complete`].
    ///
    /// # Errors
    /// See [`Error`].
    pub fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
    ) -> Result<Started, Error> {
        // 2025-11-25: the client asks for the task, but "clients MUST NOT attempt to invoke
        // the tool as a task" when the tool forbids it (the default): such a tool gets a
        // plain call, answered at once.
        let legacy = self.legacy_tasks() && self.tool_task_support(name) != Support::Forbidden;
        let mut params = Client::tool_call_params(name, arguments)?;
        if legacy {
            // The server keeps the task as long as it likes (no `ttl` asked).
            params["task"] = json!({});
        }
        match self.exchange_rounds(methods::TOOLS_CALL, params, options)? {
            Reply::Complete(raw) => match legacy_created(&raw, legacy)? {
                Some(task) => Ok(Started::Task(TaskHandle::of(
                    &task,
                    methods::TOOLS_CALL,
                    self.summary.server_key.clone(),
                ))),
                None => Ok(Started::Complete(Box::new(decode_call_result(&raw)?))),
            },
            Reply::Task { task, .. } => Ok(Started::Task(TaskHandle::of(
                &task,
                methods::TOOLS_CALL,
                self.summary.server_key.clone(),
            ))),
        }
    }

    /// [`Client::call_tool`] on a 2025-11-25 server that runs tools as tasks: a tool that
    /// requires a task ("clients MUST invoke the tool as a task") is called as one and
    /// followed to its result. Which tools do is learned from the server's tool list, read
    /// once (until the server says its tools changed): a refusal cannot tell, since servers
    /// answer a plain call of such a tool with -32601 as an error or, as the TypeScript SDK
    /// does, as a tool result flagged `isError`.
    pub(crate) fn call_tool_legacy(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let started = Instant::now();
        if self.tool_task_support(name) != Support::Required {
            let params = Client::tool_call_params(name, arguments)?;
            return self.request_with(methods::TOOLS_CALL, params, options);
        }
        let mut params = Client::tool_call_params(name, arguments)?;
        params["task"] = json!({});
        let raw = match self.exchange_rounds(methods::TOOLS_CALL, params, options)? {
            Reply::Complete(raw) => raw,
            Reply::Task { call_id, task } => {
                let raw =
                    self.follow_task(methods::TOOLS_CALL, call_id, *task, options, started)?;
                return decode_call_result(&raw);
            }
        };
        let Some(task) = legacy_created(&raw, true)? else {
            // The server answered at once after all.
            return decode_call_result(&raw);
        };
        let mut follow = Follow {
            client: self,
            handle: TaskHandle::of(&task, methods::TOOLS_CALL, self.summary.server_key.clone()),
            options,
            clock: Clock::since(started, options.timeout.unwrap_or(self.default_timeout())),
            call_id: None,
            owned: true,
            legacy: true,
        };
        let result = follow.run(task)?;
        serde_json::from_value(Value::Object(result)).map_err(|source| Error::Decode {
            what: format!("{} task result", methods::TOOLS_CALL),
            source,
        })
    }

    /// A 2025-11-25 tool's task support: known from an earlier listing of the current tool
    /// list, or looked up now by listing the server's tools (within the client's list
    /// bounds). A tool the listing does not show, or a listing that fails, counts as
    /// forbidding tasks, which never asks a server for a task it may not run.
    fn tool_task_support(&self, name: &str) -> Support {
        let generation = self.shared.tools_generation();
        if let Some(s) = self.tool_tasks.get(generation, name) {
            return s;
        }
        for item in self.list_tools() {
            match item {
                Ok(tool) => self
                    .tool_tasks
                    .record(generation, std::slice::from_ref(&tool)),
                Err(e) => {
                    log::debug!(target: "mcp_client", "tools/list for {name}'s task support: {e}");
                    break;
                }
            }
        }
        self.tool_tasks
            .get(generation, name)
            .unwrap_or(Support::Forbidden)
    }

    /// The task as it stands (`tasks/get`): its status, and its result, error or outstanding
    /// input requests inlined.
    ///
    /// # Errors
    /// [`Error::Rpc`] -32602 when the server does not know the task (or no longer: its ttl
    /// ran out), [`Error::Refused`] on a legacy connection; see [`Error`].
    pub fn task_get(&self, handle: &TaskHandle) -> Result<DetailedTask, Error> {
        self.get_task(handle, self.default_timeout(), None)
    }

    /// Answers some of the task's outstanding input requests (`tasks/update`), keyed as in
    /// its `inputRequests`. The server takes them in eventually; the next
    /// [`Client::task_get`] shows the effect.
    ///
    /// # Errors
    /// As [`Client::task_get`].
    pub fn task_update(&self, handle: &TaskHandle, responses: InputResponses) -> Result<(), Error> {
        self.refuse_legacy(methods::TASKS_UPDATE)?;
        let params = json!({"taskId": handle.task_id, "inputResponses": responses});
        let outcome = call::call(
            &self.shared,
            methods::TASKS_UPDATE,
            &params,
            self.default_timeout(),
            None,
            None,
        )?;
        complete(methods::TASKS_UPDATE, outcome).map(drop)
    }

    /// Asks the server to stop the task (`tasks/cancel`). Cancellation is cooperative: the
    /// task may still end otherwise if it was finishing.
    ///
    /// # Errors
    /// As [`Client::task_get`].
    pub fn task_cancel(&self, handle: &TaskHandle) -> Result<(), Error> {
        self.refuse_legacy(methods::TASKS_CANCEL)?;
        let params = json!({"taskId": handle.task_id});
        let outcome = call::call(
            &self.shared,
            methods::TASKS_CANCEL,
            &params,
            self.default_timeout(),
            None,
            None,
        )?;
        complete(methods::TASKS_CANCEL, outcome).map(drop)
    }

    /// Follows the task to its end, as [`Client::call_tool`] does for a task it started:
    /// polls at the server's interval, answers input requests through the client's handlers,
    /// reports changes to the options' callbacks. The options' timeout (the client's default
    /// otherwise) bounds the wait; when it runs out, or the cancel handle fires, the wait ends
    /// but the task is left running (it is the host's: stop it with [`Client::task_cancel`]).
    ///
    /// # Errors
    /// [`Error::TaskFailed`] and [`Error::TaskCancelled`] when the task ended so,
    /// [`Error::Timeout`] and [`Error::Cancelled`] when the wait ended first; see [`Error`].
    pub fn task_wait(
        &self,
        handle: &TaskHandle,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        self.refuse_legacy(methods::TASKS_RESULT)?;
        let clock = Clock::start(options.timeout.unwrap_or(self.default_timeout()));
        let mut follow = Follow {
            client: self,
            handle: handle.clone(),
            options,
            clock,
            call_id: None,
            owned: false,
            legacy: self.era() == Era::Legacy,
        };
        let first = follow.get()?;
        let result = follow.run(first)?;
        serde_json::from_value(Value::Object(result)).map_err(|source| Error::Decode {
            what: format!("{} task result", handle.method),
            source,
        })
    }
}
