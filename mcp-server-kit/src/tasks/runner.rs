//! Running tasks: creating one for a `tools/call`, running its handler on the executor,
//! answering `tasks/get`, `tasks/update` and `tasks/cancel`, and the handler's input waits.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crossbeam_channel::{Sender, after, bounded, select};
use mcp_core::engine::RequestContext;
use mcp_core::executor::Reason;
use mcp_core::jsonrpc::{ErrorObject, RequestId, codes};
use mcp_core::types::tasks_ext::{
    self, DetailedTask, TaskResult, TaskSupport, UpdateTaskRequestParams,
};
use mcp_core::types::{
    CallToolRequestParams, CallToolResult, InputRequest, InputResponse, LoggingLevel, ResultType,
    TaskIdParams, TaskStatus,
};
use mcp_core::version::{Era, ProtocolVersion};
use serde_json::{Map, Value, json};

use super::store::{MemoryTaskStore, TaskRecord, TaskStore};
use super::time::{Ids, iso_now};
use crate::context::{Call, Cancel, Context, Continuation, Link, check_answer};
use crate::dispatch::{self, Outcome};
use crate::error::Error;
use crate::shared::Shared;
use crate::tool::Tool;

/// The server's tasks: the store, the settings, and what only this process holds about the
/// tasks it runs (each one's call, for its cancellation and input waits).
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    /// How long a task is kept from its creation (`ttlMs`); `None`: until the process ends.
    pub(crate) ttl: Option<Duration>,
    /// The polling interval suggested to clients (`pollIntervalMs`).
    pub(crate) poll_interval: Duration,
    /// Tasks whose handler runs in this process. Bounded by the store's cap: an entry exists
    /// only for a task the store accepted, and goes when its handler returns.
    running: Mutex<HashMap<String, Arc<Call>>>,
    ids: Ids,
}

/// The task settings of a `ServerBuilder`, from which `build` makes the server's [`Tasks`].
pub(crate) struct Settings {
    /// A store of the application's own; `None`: a [`MemoryTaskStore`] of `max_tasks`.
    pub(crate) store: Option<Arc<dyn TaskStore>>,
    pub(crate) max_tasks: usize,
    pub(crate) ttl: Option<Duration>,
    pub(crate) poll_interval: Duration,
    pub(crate) id_prefix: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            store: None,
            max_tasks: 1000,
            ttl: Some(Duration::from_secs(3600)),
            poll_interval: Duration::from_millis(500),
            id_prefix: None,
        }
    }
}

impl Settings {
    /// Whether the server declares the extension: some tool supports tasks, or the
    /// application gave a store (for tools added after `build`).
    pub(crate) fn declared(&self, tools: &[Arc<Tool>]) -> bool {
        self.store.is_some() || tools.iter().any(|t| t.task_support != TaskSupport::Never)
    }
}

impl Tasks {
    pub(crate) fn new(settings: Settings) -> Tasks {
        let Settings {
            store,
            max_tasks,
            ttl,
            poll_interval,
            id_prefix,
        } = settings;
        Tasks {
            store: store.unwrap_or_else(|| Arc::new(MemoryTaskStore::new(max_tasks))),
            ttl,
            poll_interval,
            running: Mutex::new(HashMap::new()),
            ids: Ids::new(id_prefix),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Call>>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What the session does with a `tools/call`.
pub(crate) enum Route {
    /// Answer this now (a task handle, or -32021).
    Answer(Outcome),
    /// Run the handler as an ordinary call.
    Call(CallToolRequestParams),
}

/// The requester a task is bound to: who the transport's authorization claims name, when
/// there are any (the same requester with a refreshed token still sees its tasks).
fn owner_of(auth: Option<&Value>) -> Option<String> {
    auth.map(|c| mcp_core::service::requester(c).to_string())
}

/// Decides how a `tools/call` runs: as a task when the tool supports tasks and the request's
/// client declared the extension (2026-07-28 only), refused with -32021 when the tool runs
/// only as a task and the client cannot follow one, as an ordinary call otherwise (also for a
/// tool whose handler starts the task itself).
/// Whether a call of tool `name` is an ordinary call whatever the client declared (so
/// [`on_call`] would route it to `Route::Call`): any call before 2026-07-28, and a tool that
/// never runs as a task (or no such tool: the call then fails as an unknown tool).
pub(crate) fn plain_call(shared: &Shared, rc: &RequestContext, name: &str) -> bool {
    rc.protocol_version.era() != Era::Modern
        || shared
            .registry()
            .tools
            .iter()
            .find(|t| t.def.name == name)
            .is_none_or(|t| matches!(t.task_support, TaskSupport::Never))
}

pub(crate) fn on_call(
    shared: &Arc<Shared>,
    rc: &RequestContext,
    auth: Option<&Value>,
    param_headers: Option<&Vec<(String, String)>>,
    p: CallToolRequestParams,
) -> Route {
    if rc.protocol_version.era() != Era::Modern {
        return Route::Call(p);
    }
    // Arguments that do not fit the schema get their error at once (from `call_tool`), not a
    // task that can only fail.
    let (support, by_handler) = shared
        .registry()
        .tools
        .iter()
        .find(|t| t.def.name == p.name)
        .filter(|t| {
            matches!(t.task_support, TaskSupport::Never) || {
                let args = Value::Object(p.arguments.clone().unwrap_or_default());
                t.check_arguments(&args).is_ok()
            }
        })
        .map_or((TaskSupport::Never, false), |t| {
            (t.task_support, t.task_by_handler)
        });
    let declared = tasks_ext::declared_by(&rc.client_capabilities);
    match (support, declared) {
        (TaskSupport::Never, _) | (TaskSupport::Optional, false) => Route::Call(p),
        (TaskSupport::Required, false) => {
            Route::Answer(Outcome::Error(tasks_ext::missing_extension_error()))
        }
        (_, true) if by_handler => Route::Call(p),
        (_, true) => {
            let origin = Origin {
                id: &rc.id,
                version: rc.protocol_version,
                client_info: rc.client_info.clone(),
                client_capabilities: &rc.client_capabilities,
                auth,
                param_headers,
            };
            let me = Arc::clone(shared);
            let work: Work = Box::new(move |ctx| dispatch::call_tool(&me, p, ctx));
            Route::Answer(launch(shared, origin, work))
        }
    }
}

/// The request a task comes from: what its handler's `Context` reports about it.
struct Origin<'a> {
    id: &'a RequestId,
    version: ProtocolVersion,
    client_info: Option<Arc<Value>>,
    client_capabilities: &'a Arc<Value>,
    auth: Option<&'a Value>,
    param_headers: Option<&'a Vec<(String, String)>>,
}

type Work = Box<dyn FnOnce(&Context) -> Outcome + Send + 'static>;

/// The answer to a `tools/call` whose handler `dispatch` ran: when the handler returned after
/// leaving the rest of its work to a task ([`Context::continue_as_task`]), that task is
/// launched and its handle replaces the handler's placeholder result; otherwise `outcome` as it
/// is. The session asks this, not `dispatch`, so that the runner stays above `dispatch` (it runs
/// its tasks' handlers through it). A task's own call never holds a continuation.
pub(crate) fn continued(shared: &Shared, ctx: &Context, outcome: Outcome) -> Outcome {
    // Only a handler's `Ok` result, not cancelled, becomes `Outcome::Tool` (a continuation
    // needs 2026-07-28): a failed or cancelled call drops what it left, as it always did.
    if let Outcome::Tool(_) = outcome {
        let rest = ctx
            .call
            .continuation
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(rest) = rest {
            return continue_as_task(shared, &ctx.call, rest);
        }
    }
    outcome
}

/// A handler's continuation becomes a task of its own; the `tools/call` it came from is
/// answered with the handle.
fn continue_as_task(shared: &Shared, from: &Call, rest: Continuation) -> Outcome {
    let origin = Origin {
        id: &from.id,
        version: from.version,
        client_info: from.client_info_raw.clone(),
        client_capabilities: &from.client_capabilities,
        auth: from.auth.as_ref(),
        param_headers: from.param_headers.as_ref(),
    };
    let version = from.version;
    launch(
        shared,
        origin,
        Box::new(move |ctx| {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rest(ctx)));
            match r {
                Err(_) => Outcome::Error(ErrorObject::internal("handler panicked")),
                Ok(_) if ctx.is_cancelled() => Outcome::Nothing,
                Ok(Ok(result)) => dispatch::tool_result(&result, version),
                Ok(Err(Error::Cancelled)) => Outcome::Nothing,
                Ok(Err(Error::Protocol(e))) => Outcome::Error(e),
                Ok(Err(e)) => dispatch::tool_result(&CallToolResult::error(e.to_string()), version),
            }
        }),
    )
}

/// Creates the task (in the store first, so a `tasks/get` right after the handle finds it),
/// hands `work` to the executor, and returns the handle.
fn launch(shared: &Shared, origin: Origin<'_>, work: Work) -> Outcome {
    let tasks = &shared.tasks;
    let id = tasks.ids.fresh();
    let mut task = DetailedTask::working(
        id.clone(),
        iso_now(),
        tasks.ttl.map(|d| d.as_millis() as u64),
    );
    task.poll_interval_ms = Some(tasks.poll_interval.as_millis().max(1) as u64);
    let record = TaskRecord {
        task: task.clone(),
        owner: owner_of(origin.auth),
    };
    stop_expired(tasks);
    if let Err(e) = tasks.store.create(record, tasks.ttl) {
        return Outcome::Error(ErrorObject::internal(e.to_string()));
    }
    let run = Arc::new(TaskRun {
        id: id.clone(),
        store: Arc::clone(&tasks.store),
        waiters: Mutex::new(HashMap::new()),
        next: AtomicUsize::new(0),
        used: Mutex::new(HashSet::new()),
        input_timeout: tasks.ttl.unwrap_or(Duration::from_secs(24 * 3600)),
    });
    let call = Arc::new(Call {
        id: origin.id.clone(),
        version: origin.version,
        client_info_raw: origin.client_info,
        client_info: OnceLock::new(),
        client_capabilities: Arc::clone(origin.client_capabilities),
        auth: origin.auth.cloned(),
        param_headers: origin.param_headers.cloned(),
        cancel: Cancel::new(),
        listed: AtomicBool::new(true),
        timeout: shared.config.client_request_timeout,
        link: Arc::new(TaskLink),
        inputs: Mutex::new(None),
        task: Some(run),
        tool_call: true,
        continuation: Mutex::new(None),
        tool: None,
    });
    tasks.running().insert(id.clone(), Arc::clone(&call));
    let owner = Arc::clone(tasks);
    let job_id = id.clone();
    let job: Box<dyn FnOnce() + Send> = Box::new(move || {
        let ctx = Context { call };
        let outcome = work(&ctx);
        settle(&owner, &job_id, outcome);
    });
    // Never waits for room: the `tools/call` that creates the task must be answered now (it
    // hung, its SSE head already sent, while 64 long tasks ran and 256 waited).
    if let Err(rejected) = shared.pool.try_queue(job) {
        let busy = matches!(rejected.reason(), Reason::Saturated);
        drop(rejected);
        let why = if busy {
            ErrorObject::new(
                codes::SERVER_BUSY,
                "server busy: every task worker is taken and the queue is full; retry later",
            )
        } else {
            ErrorObject::internal("the server is shutting down")
        };
        // The task cannot run: the call is refused, and the task it never learnt of goes
        // (kept, failed, it held a place under the store's cap for its whole ttl).
        tasks.running().remove(&id);
        settle(tasks, &id, Outcome::Error(why.clone()));
        tasks.store.remove(&id);
        return Outcome::Error(why);
    }
    let handle = TaskResult {
        result_type: ResultType::Task,
        meta: None,
        task,
    };
    match serde_json::to_value(&handle) {
        Ok(v) => Outcome::Result(v),
        Err(e) => Outcome::Error(ErrorObject::internal(e)),
    }
}

/// Cancels the handlers of tasks whose ttl ended while they ran (or waited for a worker):
/// the store dropped them, so no client can see or cancel them any more, and their work must
/// not hold a worker for nothing. Looked at whenever a task is created: the running table is
/// bounded by the pool (workers and queue), each looked up once.
fn stop_expired(tasks: &Tasks) {
    let ids: Vec<String> = tasks.running().keys().cloned().collect();
    for id in ids {
        if tasks.store.get(&id).is_none() {
            if let Some(call) = tasks.running().remove(&id) {
                call.cancel.fire();
            }
        }
    }
}

/// Records a handler's outcome in its task, unless the task already ended (cancelled).
fn settle(tasks: &Tasks, id: &str, outcome: Outcome) {
    let now = iso_now();
    let mut outcome = Some(outcome);
    tasks.store.update(id, &mut |r| {
        let Some(outcome) = outcome.take() else {
            return;
        };
        if r.task.status.is_terminal() {
            return;
        }
        r.task.input_requests = None;
        r.task.last_updated_at.clone_from(&now);
        match outcome {
            Outcome::Result(v) => complete(&mut r.task, v),
            Outcome::Raw(raw) => match serde_json::from_str(raw.get()) {
                Ok(v) => complete(&mut r.task, v),
                Err(e) => fail(&mut r.task, &ErrorObject::internal(e)),
            },
            Outcome::Tool(t) => match serde_json::to_value(t.into_result()) {
                Ok(v) => complete(&mut r.task, v),
                Err(e) => fail(&mut r.task, &ErrorObject::internal(e)),
            },
            Outcome::Error(e) => fail(&mut r.task, &e),
            Outcome::Nothing => r.task.status = TaskStatus::Cancelled,
        }
    });
    tasks.running().remove(id);
}

fn complete(task: &mut DetailedTask, v: Value) {
    let mut result = match v {
        Value::Object(m) => m,
        other => {
            let mut m = Map::new();
            m.insert("value".into(), other);
            m
        }
    };
    // The task's own envelope says it is complete; the inlined result is the tool's.
    result.remove("resultType");
    task.status = TaskStatus::Completed;
    task.result = Some(result);
}

fn fail(task: &mut DetailedTask, e: &ErrorObject) {
    task.status = TaskStatus::Failed;
    task.status_message = Some(e.message.clone());
    task.error = match serde_json::to_value(e) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    };
}

/// The task a `tasks/*` request names, if the requester may see it. Another requester's task
/// reads as unknown, so ids cannot be probed across requesters.
fn find(tasks: &Tasks, id: &str, auth: Option<&Value>) -> Result<TaskRecord, ErrorObject> {
    match tasks.store.get(id) {
        Some(r) if r.owner == owner_of(auth) => Ok(r),
        _ => Err(ErrorObject::invalid_params(format!("Unknown task: {id}"))),
    }
}

/// Refuses a `tasks/*` request whose client did not declare the extension (-32021).
fn gate(rc: &RequestContext) -> Result<(), ErrorObject> {
    if tasks_ext::declared_by(&rc.client_capabilities) {
        Ok(())
    } else {
        Err(tasks_ext::missing_extension_error())
    }
}

fn ack() -> Outcome {
    Outcome::Result(json!({ "resultType": "complete" }))
}

/// `tasks/get`: the task as it stands, with its result, error or input requests inlined.
pub(crate) fn get(
    shared: &Shared,
    rc: &RequestContext,
    auth: Option<&Value>,
    p: &TaskIdParams,
) -> Outcome {
    let r = match gate(rc).and_then(|()| find(&shared.tasks, &p.task_id, auth)) {
        Ok(r) => r,
        Err(e) => return Outcome::Error(e),
    };
    let answer = TaskResult {
        result_type: ResultType::Complete,
        meta: None,
        task: r.task,
    };
    match serde_json::to_value(&answer) {
        Ok(v) => Outcome::Result(v),
        Err(e) => Outcome::Error(ErrorObject::internal(e)),
    }
}

/// `tasks/update`: delivers answers to the task's outstanding input requests (answers to keys
/// it is not waiting for are ignored) and acknowledges; the task goes on, observed by the next
/// `tasks/get`.
pub(crate) fn update(
    shared: &Shared,
    rc: &RequestContext,
    auth: Option<&Value>,
    p: UpdateTaskRequestParams,
) -> Outcome {
    let tasks = &shared.tasks;
    if let Err(e) = gate(rc).and_then(|()| find(tasks, &p.task_id, auth)) {
        return Outcome::Error(e);
    }
    let Some(call) = tasks.running().get(&p.task_id).cloned() else {
        return ack();
    };
    let Some(run) = call.task.as_ref() else {
        return ack();
    };
    // Every answer to a question the task still asks is checked before any is delivered: a
    // malformed one is the client's error (-32602), and the task keeps waiting for all of
    // them, as if this update had not come.
    let mut answers = Vec::new();
    {
        let waiters = run.waiters();
        for (key, response) in p.input_responses {
            let Some(waiter) = waiters.get(&key) else {
                // Not outstanding (never asked, answered already): ignored, as the spec says.
                continue;
            };
            let value = match response {
                InputResponse::Other(Value::Null) => continue,
                InputResponse::Other(v) => v,
                typed => match serde_json::to_value(typed) {
                    Ok(v) => v,
                    Err(_) => continue,
                },
            };
            let method = &waiter.method;
            let checked = match check_shape(method, &value) {
                Err(e) => Err(format!(
                    "inputResponses[{key:?}] is no {method} result: {e}"
                )),
                Ok(()) => check_answer(method, waiter.form.as_ref(), &value)
                    .map_err(|why| format!("inputResponses[{key:?}]: {why}")),
            };
            if let Err(why) = checked {
                return Outcome::Error(ErrorObject::invalid_params(why));
            }
            answers.push((key, value));
        }
    }
    for (key, value) in answers {
        let waiter = run.waiters().remove(&key);
        if let Some(Waiter { tx, .. }) = waiter {
            // The request leaves the task now, so the next `tasks/get` shows only what is
            // still outstanding.
            run.forget(&key);
            let _ = tx.try_send(value);
        }
    }
    ack()
}

/// Whether `answer` reads as the result of `method`, the request it answers, as the handler
/// will read it.
fn check_shape(method: &str, answer: &Value) -> Result<(), serde_json::Error> {
    use mcp_core::types::{CreateMessageResult, ElicitResult, ListRootsResult, methods};
    use serde::Deserialize;
    match method {
        methods::SAMPLING_CREATE_MESSAGE => CreateMessageResult::deserialize(answer).map(drop),
        methods::ELICITATION_CREATE => ElicitResult::deserialize(answer).map(drop),
        methods::ROOTS_LIST => ListRootsResult::deserialize(answer).map(drop),
        _ => Ok(()),
    }
}

/// `tasks/cancel`: ends a task that is still going (`cancelled`), and tells its handler;
/// a task that already ended is left as it is. Either way an empty acknowledgement.
pub(crate) fn cancel(
    shared: &Shared,
    rc: &RequestContext,
    auth: Option<&Value>,
    p: &TaskIdParams,
) -> Outcome {
    let tasks = &shared.tasks;
    if let Err(e) = gate(rc).and_then(|()| find(tasks, &p.task_id, auth)) {
        return Outcome::Error(e);
    }
    let now = iso_now();
    tasks.store.update(&p.task_id, &mut |r| {
        if !r.task.status.is_terminal() {
            r.task.status = TaskStatus::Cancelled;
            r.task.status_message = Some("cancelled by the client".into());
            r.task.input_requests = None;
            r.task.last_updated_at.clone_from(&now);
        }
    });
    if let Some(call) = tasks.running().get(&p.task_id) {
        call.cancel.fire();
    }
    ack()
}

/// An input request of a task's handler that waits for its answer.
struct Waiter {
    method: String,
    /// The requested schema of a form (`elicitation/create`), which its answer must match.
    form: Option<Value>,
    tx: Sender<Value>,
}

/// A running task, as its handler's `Context` sees it: input calls park the task in
/// `input_required` and wait for `tasks/update`.
pub(crate) struct TaskRun {
    id: String,
    store: Arc<dyn TaskStore>,
    /// Outstanding input requests of the handler, by key.
    waiters: Mutex<HashMap<String, Waiter>>,
    /// Positional keys for input calls that name none.
    next: AtomicUsize,
    /// Every input key the task used: a key is unique over the task's lifetime (the spec: a
    /// server MUST NOT reuse one after its answer came), and a client skips keys it answered.
    used: Mutex<HashSet<String>>,
    /// How long an input call waits for its answer.
    input_timeout: Duration,
}

impl TaskRun {
    fn waiters(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiter>> {
        self.waiters.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Removes an input request from the stored task; with none left, the task is working
    /// again.
    fn forget(&self, key: &str) {
        let now = iso_now();
        self.store.update(&self.id, &mut |r| {
            if let Some(reqs) = r.task.input_requests.as_mut() {
                reqs.remove(key);
                if reqs.is_empty() {
                    r.task.input_requests = None;
                }
            }
            if r.task.input_requests.is_none() && r.task.status == TaskStatus::InputRequired {
                r.task.status = TaskStatus::Working;
                r.task.last_updated_at.clone_from(&now);
            }
        });
    }

    /// The handler asks the client for input (`method`, `params`): the task shows the request
    /// until `tasks/update` answers it, the task is cancelled, or the wait times out.
    pub(crate) fn ask(
        &self,
        call: &Call,
        method: &str,
        params: Value,
        key: Option<&str>,
    ) -> Result<Value, Error> {
        let key = {
            let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
            let key = match key {
                Some(k) if used.contains(k) => {
                    return Err(Error::Message(format!(
                        "input key {k:?} was already used in this task: each input request of \
                         a task needs a key of its own"
                    )));
                }
                Some(k) => k.to_owned(),
                // The next positional key no call named itself.
                None => loop {
                    let k = format!("input-{}", self.next.fetch_add(1, Ordering::Relaxed));
                    if !used.contains(&k) {
                        break k;
                    }
                },
            };
            used.insert(key.clone());
            key
        };
        let form = if method == mcp_core::types::methods::ELICITATION_CREATE {
            params.get("requestedSchema").cloned()
        } else {
            None
        };
        let mut request = Map::new();
        request.insert("method".into(), Value::from(method));
        if method != mcp_core::types::methods::ROOTS_LIST
            || params.as_object().is_some_and(|o| !o.is_empty())
        {
            request.insert("params".into(), params);
        }
        let request: InputRequest = serde_json::from_value(Value::Object(request))
            .map_err(|e| Error::InvalidParams(e.to_string()))?;
        let (tx, rx) = bounded(1);
        let waiter = Waiter {
            method: method.to_owned(),
            form,
            tx,
        };
        self.waiters().insert(key.clone(), waiter);
        let now = iso_now();
        let mut request = Some(request);
        let live = self.store.update(&self.id, &mut |r| {
            if r.task.status.is_terminal() {
                return;
            }
            if let Some(req) = request.take() {
                r.task
                    .input_requests
                    .get_or_insert_with(Default::default)
                    .insert(key.clone(), req);
            }
            r.task.status = TaskStatus::InputRequired;
            r.task.last_updated_at.clone_from(&now);
        });
        if live.is_none_or(|r| r.task.status.is_terminal()) || call.cancel.is_fired() {
            self.waiters().remove(&key);
            return Err(Error::Cancelled);
        }
        let cancelled = call.cancel.receiver();
        let outcome = select! {
            recv(rx) -> v => v.map_err(|_| Error::Cancelled),
            recv(cancelled) -> _ => Err(Error::Cancelled),
            recv(after(self.input_timeout)) -> _ => Err(Error::Timeout),
        };
        if outcome.is_err() {
            self.waiters().remove(&key);
            self.forget(&key);
        }
        outcome
    }
}

/// The link of a task's handler: there is no request stream to talk on any more (the
/// `tools/call` was answered with the handle), so progress becomes the task's status message
/// and log messages are dropped.
struct TaskLink;

impl Link for TaskLink {
    fn will_await_peer(&self, _call: &Arc<Call>) -> bool {
        true
    }
    fn progress(&self, call: &Call, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(run) = call.task.as_ref() else {
            return;
        };
        let text = match (total, message) {
            (Some(t), Some(m)) => format!("{progress}/{t}: {m}"),
            (Some(t), None) => format!("{progress}/{t}"),
            (None, Some(m)) => format!("{progress}: {m}"),
            (None, None) => format!("{progress}"),
        };
        let now = iso_now();
        run.store.update(&run.id, &mut |r| {
            if !r.task.status.is_terminal() {
                r.task.status_message = Some(text.clone());
                r.task.last_updated_at.clone_from(&now);
            }
        });
    }
    fn log(&self, _call: &Call, _level: LoggingLevel, _logger: Option<&str>, _data: Value) {}
    fn stash(&self, _payload: Vec<u8>) -> String {
        String::new()
    }
    fn unstash(&self, _handle: &str) -> Option<Vec<u8>> {
        None
    }
    fn close_stream(&self, _call: &Call) -> bool {
        false
    }
    fn request(
        &self,
        _call: &Arc<Call>,
        _method: &str,
        _params: Value,
        _timeout: Duration,
    ) -> Result<Value, Error> {
        Err(Error::Unsupported(
            "a task asks for input through its task, not by request".into(),
        ))
    }
}
