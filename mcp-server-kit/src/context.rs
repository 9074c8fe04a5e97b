//! The handler context: what a handler may ask of the request it serves and of the client.
//!
//! The same handler code works in both protocol eras. In the legacy era a call such as
//! [`Context::elicit`] sends a JSON-RPC request to the client and blocks until the answer (or a
//! timeout, or cancellation). In the 2026-07-28 era the server cannot call the client
//! mid-request: the first time through, `elicit` returns [`Error::InputRequired`], the handler
//! passes it on with `?`, and the kit answers `InputRequiredResult`; when the client retries
//! with the answers, the handler runs again from the top and `elicit` now returns the answer.
//! Handlers should therefore do their side effects after their input calls, and make the same
//! calls in the same order on every run: they are matched by position (`input-0`, `input-1`,
//! ...), or by the key a handler names with [`Context::elicit_as`] and its siblings, for
//! clients and tests that expect particular keys.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};

use mcp_core::jsonrpc::RequestId;
#[cfg(feature = "tasks")]
use mcp_core::types::CallToolResult;
#[cfg(feature = "tasks")]
use mcp_core::types::tasks_ext;
use mcp_core::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, Implementation, ListRootsResult, LoggingLevel, methods,
};
use mcp_core::version::{Era, ProtocolVersion};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::error::{BadAnswer, Error};
#[cfg(feature = "tasks")]
use crate::results::IntoToolResult;

/// What the user did with a form asked for by [`Context::elicit_form`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// They submitted it: the answer, decoded.
    Accepted(T),
    /// They turned it down.
    Declined,
    /// They dismissed it without choosing.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The answer, if the form was submitted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accepted(t) => Some(t),
            Elicited::Declined | Elicited::Cancelled => None,
        }
    }
}

/// How a request's context reaches back to its session (implemented by the session).
pub(crate) trait Link: Send + Sync {
    /// The handler of `call` is about to wait for the client (an answer, a cancellation): the
    /// transport keeps reading elsewhere (and the call is listed first, so that what is read
    /// meanwhile can cancel it). False when nobody could read meanwhile (see
    /// `Outbound::will_await_peer`): the handler must not wait then.
    fn will_await_peer(&self, call: &Arc<Call>) -> bool;
    fn progress(&self, call: &Call, progress: f64, total: Option<f64>, message: Option<&str>);
    fn log(&self, call: &Call, level: LoggingLevel, logger: Option<&str>, data: Value);
    /// Keeps a request state in the session (when states cannot be sealed); returns its handle.
    fn stash(&self, payload: Vec<u8>) -> String;
    /// The state kept under `handle`, if this session still has it.
    fn unstash(&self, handle: &str) -> Option<Vec<u8>>;
    /// The transport's sealer, where states travel with the client instead of being stashed
    /// (see `request_state`).
    fn sealer(&self) -> Option<&dyn mcp_core::service::Sealer> {
        None
    }
    /// Ends the connection carrying this request's stream, keeping the stream resumable.
    fn close_stream(&self, call: &Call) -> bool;
    /// The application's values (`ServerBuilder::state`).
    fn states(&self) -> Option<&crate::shared::States> {
        None
    }
    /// Legacy era: send a request to the client and wait for its answer.
    fn request(
        &self,
        call: &Arc<Call>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, Error>;
}

/// Input gathered for a 2026-07-28 request across its rounds.
#[derive(Debug, Default)]
pub(crate) struct Inputs {
    /// Answers the client has given so far, by key.
    pub(crate) answers: Map<String, Value>,
    /// Input requests this run made that have no answer yet, by key.
    pub(crate) needed: Map<String, Value>,
    /// How many unnamed input calls this run has made (their keys are positional).
    pub(crate) next: usize,
    /// The first answer of this run that did not read as an answer to its request (key and
    /// why): the client's mistake, so the request fails with -32602 rather than the handler
    /// reporting a failure of its own.
    pub(crate) bad: Option<(String, String)>,
}

/// A request's cancellation: a flag to poll, and a channel whose sender is dropped when it
/// fires, so that a handler can also block on it (alone, with a timeout, or in a `select!`
/// beside its own channels) and wake at once.
///
/// The channel is made when a handler first asks to wait on it: most handlers never do, and
/// making it (and dropping it) was a tenth of the kit's own cost of a quick `tools/call`.
pub(crate) struct Cancel {
    fired: AtomicBool,
    /// Fired by the session's end (not by the client): an answer still made goes out.
    by_close: AtomicBool,
    /// Fired because the handler could not wait for the client (no thread left to read what
    /// it waits for): the call is answered busy (-32006), whatever the handler returns.
    by_busy: AtomicBool,
    /// The sender (dropped when the cancellation fires: every receiver then reports
    /// disconnection) and the receiver handed out, once a handler asked for it.
    channel: Mutex<Option<CancelChannel>>,
}

/// The sender (taken at the cancellation) and the receiver of a [`Cancel`]'s channel.
type CancelChannel = (Option<Sender<()>>, Receiver<()>);

impl Cancel {
    pub(crate) fn new() -> Cancel {
        Cancel {
            fired: AtomicBool::new(false),
            by_close: AtomicBool::new(false),
            by_busy: AtomicBool::new(false),
            channel: Mutex::new(None),
        }
    }

    /// Cancels: the flag first, so a handler woken by the channel sees it set, and so that a
    /// channel made after this (under the same lock) is made already disconnected.
    pub(crate) fn fire(&self) {
        self.fired.store(true, Ordering::Release);
        if let Some((sender, _)) = self
            .channel
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            sender.take();
        }
    }

    /// A receiver that reports disconnection once the cancellation fires (at once if it has).
    pub(crate) fn receiver(&self) -> Receiver<()> {
        let mut channel = self.channel.lock().unwrap_or_else(|p| p.into_inner());
        let (_, rx) = channel.get_or_insert_with(|| {
            // Nothing is ever sent: the channel only carries its disconnection.
            let (tx, rx) = bounded(0);
            let sender = (!self.fired.load(Ordering::Acquire)).then_some(tx);
            (sender, rx)
        });
        rx.clone()
    }

    pub(crate) fn is_fired(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }

    /// Cancels because the session ended (end of input): the handler should stop, but an
    /// answer it still returns is sent (the client may be reading what it asked for).
    pub(crate) fn fire_on_close(&self) {
        if !self.is_fired() {
            self.by_close.store(true, Ordering::Release);
        }
        self.fire();
    }

    /// Cancels because the handler may not wait for the client: every other thread waits for
    /// it too and none is left to read (see `Link::will_await_peer`). The handler stops, and
    /// the call is answered busy (`refused_busy`).
    pub(crate) fn fire_busy(&self) {
        if !self.is_fired() {
            self.by_busy.store(true, Ordering::Release);
        }
        self.fire();
    }

    /// Fired by `fire_busy` (before anything else fired it): the answer is -32006.
    pub(crate) fn refused_busy(&self) -> bool {
        self.by_busy.load(Ordering::Acquire)
    }

    /// Whatever the handler returns now is dropped: the client cancelled the request.
    pub(crate) fn drops_answer(&self) -> bool {
        self.is_fired()
            && !self.by_close.load(Ordering::Acquire)
            && !self.by_busy.load(Ordering::Acquire)
    }
}

/// One request being handled.
pub(crate) struct Call {
    pub(crate) id: RequestId,
    pub(crate) version: ProtocolVersion,
    /// The client's `Implementation` as sent; parsed only if a handler asks.
    pub(crate) client_info_raw: Option<Arc<Value>>,
    pub(crate) client_info: OnceLock<Option<Implementation>>,
    pub(crate) client_capabilities: Arc<Value>,
    pub(crate) auth: Option<Value>,
    /// The request's `Mcp-Param-*` headers, where the transport has them (see
    /// `param_headers`).
    pub(crate) param_headers: Option<Vec<(String, String)>>,
    pub(crate) cancel: Cancel,
    /// Whether the session's table of calls (what a cancellation looks in) holds this call,
    /// or no longer may. A quick handler run on the stdio reader is listed only if it blocks:
    /// until then the reading waits for it, so nothing can be read that would cancel it.
    pub(crate) listed: AtomicBool,
    pub(crate) timeout: Duration,
    pub(crate) link: Arc<dyn Link>,
    /// Made on the call's first input: most calls never ask for any, and an empty one would
    /// cost every call its two maps' drops.
    pub(crate) inputs: Mutex<Option<Box<Inputs>>>,
    /// The task this call runs as (tasks extension), whose input calls wait for `tasks/update`.
    pub(crate) task: Option<Arc<crate::tasks::TaskRun>>,
    /// Whether this is a `tools/call` (the only request that can continue as a task).
    #[cfg(feature = "tasks")]
    pub(crate) tool_call: bool,
    /// What the handler left to run as a task ([`Context::continue_as_task`]).
    #[cfg(feature = "tasks")]
    pub(crate) continuation: Mutex<Option<Continuation>>,
    /// The tool a renewed call (see `renew`) will run, with the registry's version it was
    /// found in: the spare call keeps it, so a client calling one tool over and over finds
    /// it without the registry's lock and reference count (see `quick_tool`).
    pub(crate) tool: Option<(u64, Arc<crate::tool::Tool>)>,
}

impl Call {
    /// Makes this finished call, which nothing else holds any more, the context of request
    /// `id` of the same session: what a quick call on the stdio reader does instead of a new
    /// call (see `KitSession::handle_line`). The session's facts stay (revision, client,
    /// link); what belongs to one request starts afresh, and a field added to `Call` must be
    /// placed on one side or the other here before this compiles.
    pub(crate) fn renew(&mut self, id: RequestId) {
        let Call {
            id: own_id,
            version: _,
            client_info_raw: _,
            client_info: _,
            client_capabilities: _,
            auth: _,
            param_headers: _,
            cancel,
            listed,
            timeout: _,
            link: _,
            inputs,
            task,
            #[cfg(feature = "tasks")]
                tool_call: _,
            #[cfg(feature = "tasks")]
            continuation,
            tool: _,
        } = self;
        *own_id = id;
        *cancel = Cancel::new();
        *listed.get_mut() = false;
        *inputs.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
        *task = None;
        #[cfg(feature = "tasks")]
        {
            *continuation.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
        }
    }

    /// Keeps tool `name` for this call, unless the one kept is still the registry's.
    pub(crate) fn keep_tool(&mut self, shared: &crate::shared::Shared, name: &str) {
        if self.quick_tool(shared, name).is_none() {
            let (version, tool) = shared.find_tool(name);
            self.tool = tool.map(|t| (version, t));
        }
    }

    /// The tool kept for this call (`keep_tool`), if it is `name` and the registry has not
    /// changed since it was found.
    pub(crate) fn quick_tool(
        &self,
        shared: &crate::shared::Shared,
        name: &str,
    ) -> Option<&Arc<crate::tool::Tool>> {
        let (version, tool) = self.tool.as_ref()?;
        (*version == shared.registry_version() && tool.def.name == name).then_some(tool)
    }

    /// The session's facts this call was made with, for a new call of the same session.
    pub(crate) fn head(&self) -> mcp_core::engine::PlainRequest {
        mcp_core::engine::PlainRequest {
            protocol_version: self.version,
            client_capabilities: Arc::clone(&self.client_capabilities),
            client_info: self.client_info_raw.clone(),
        }
    }
}

/// The rest of a tool handler's work, run as a task.
#[cfg(feature = "tasks")]
pub(crate) type Continuation =
    Box<dyn FnOnce(&Context) -> Result<CallToolResult, Error> + Send + 'static>;

/// What a handler knows about the request it serves, and how it talks back to the client.
#[derive(Clone)]
pub struct Context {
    pub(crate) call: Arc<Call>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("id", &self.call.id)
            .field("version", &self.call.version)
            .finish()
    }
}

impl Context {
    /// The application's value of type `T`, given to the server with
    /// [`ServerBuilder::state`](crate::ServerBuilder::state): how handlers, `#[tool]`
    /// functions among them, share a database handle, a cache or settings without statics
    /// or a clone captured in every closure.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use mcp_server_kit::{Context, Error, NoArgs, Server, Tool};
    ///
    /// #[derive(Default)]
    /// struct Counter(Mutex<u64>);
    ///
    /// let server = Server::builder("counter", "1")
    ///     .state(Counter::default())
    ///     .tool(Tool::new("bump", |_: NoArgs, ctx: &Context| {
    ///         let mut n = ctx.state::<Counter>()?.0.lock().unwrap_or_else(|p| p.into_inner());
    ///         *n += 1;
    ///         Ok::<_, Error>(n.to_string())
    ///     }))
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Unsupported`] naming `T` when the server was given no value of that type
    /// (a tool error the model sees, as any handler error).
    pub fn state<T: std::any::Any + Send + Sync>(&self) -> Result<&T, Error> {
        self.call
            .link
            .states()
            .and_then(|s| s.get::<T>())
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "the server holds no `{}` (ServerBuilder::state)",
                    std::any::type_name::<T>()
                ))
            })
    }

    /// The id of the request being handled.
    pub fn request_id(&self) -> &RequestId {
        &self.call.id
    }

    /// The protocol revision of this request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.call.version
    }

    /// The client's name and version, when it said.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.call
            .client_info
            .get_or_init(|| {
                let raw = self.call.client_info_raw.as_deref()?;
                serde_json::from_value(raw.clone()).ok()
            })
            .as_ref()
    }

    /// The client's declared capabilities (for this request in the 2026-07-28 era, for the
    /// session before that).
    pub fn client_capabilities(&self) -> &Value {
        &self.call.client_capabilities
    }

    /// Claims the transport's authorization step attached (HTTP with an auth hook).
    pub fn auth(&self) -> Option<&Value> {
        self.call.auth.as_ref()
    }

    /// True once the client cancelled the request (or the session closed). Long handlers
    /// should check it and stop; whatever they return after the client's cancellation is not
    /// sent (after the session's end, an answer returned while the transport still drains
    /// its output goes out: the client may be reading what it asked for).
    pub fn is_cancelled(&self) -> bool {
        self.call.cancel.is_fired()
    }

    /// Blocks until the request is cancelled (true) or `timeout` passes (false). For a handler
    /// that waits anyway (a retry delay, a poll interval of its own): it wakes the moment the
    /// client cancels or the session closes, instead of at its next look at
    /// [`Context::is_cancelled`].
    ///
    /// Over stdio, when every handler thread already waits for the client and none is left to
    /// read the cancellation, this call does not wait: it returns true at once, as for a
    /// cancellation, and the request is answered -32006 (server busy) whatever the handler
    /// returns.
    pub fn wait_cancelled(&self, timeout: Duration) -> bool {
        if self.is_cancelled() {
            return true;
        }
        if !self.may_wait() {
            return true;
        }
        match self.call.cancel.receiver().recv_timeout(timeout) {
            // Nothing is ever sent: only the disconnection at cancel ends the wait early.
            Err(RecvTimeoutError::Disconnected) | Ok(()) => true,
            Err(RecvTimeoutError::Timeout) => self.is_cancelled(),
        }
    }

    /// A receiver that becomes ready (disconnected: `recv` returns `Err`) when the request is
    /// cancelled; nothing is ever received on it. Put it in a `crossbeam_channel::select!` beside
    /// the handler's own channels to stop waiting for them on cancellation.
    ///
    /// ```no_run
    /// # fn f(ctx: &mcp_server_kit::Context, work: crossbeam_channel::Receiver<u32>) -> Option<u32> {
    /// let cancelled = ctx.cancelled_signal();
    /// crossbeam_channel::select! {
    ///     recv(work) -> n => n.ok(),
    ///     recv(cancelled) -> _ => None,
    /// }
    /// # }
    /// ```
    ///
    /// As with [`Context::wait_cancelled`], when no thread would be left to read the
    /// cancellation the request is cancelled at once (the receiver is ready) and answered
    /// -32006 (server busy).
    pub fn cancelled_signal(&self) -> Receiver<()> {
        // The caller is about to wait on it (see `wait_cancelled`).
        if !self.is_cancelled() {
            self.may_wait();
        }
        self.call.cancel.receiver()
    }

    /// Only a reader can deliver the cancellation: says the handler is about to wait for it
    /// (a handler on the stdio reader hands the reading over first). When it may not (every
    /// other handler thread waits for the client, and nobody would read: the wait would last
    /// its whole timeout, with the input unread), the request is cancelled as busy.
    fn may_wait(&self) -> bool {
        if self.call.link.will_await_peer(&self.call) {
            return true;
        }
        self.call.cancel.fire_busy();
        false
    }

    /// Finishes a tool call as a task (the tasks extension): the kit answers the `tools/call`
    /// with a task handle and runs `rest` on its executor, whose result becomes the task's.
    /// For a tool that gathers input first (2026-07-28 input rounds, each answered at once)
    /// and only then starts its long work: call the input methods, then return
    /// `ctx.continue_as_task(move |ctx| ...)` from the handler. Declare such a tool with
    /// [`Tool::task_started_by_handler`](crate::Tool::task_started_by_handler).
    ///
    /// Where no task can be made (a client that did not declare the extension, a revision
    /// before 2026-07-28, a request that is not a tool call, a handler already running as a
    /// task) `rest` runs right here and its result is the answer.
    ///
    /// Feature `tasks`.
    ///
    /// # Errors
    /// Those of `rest` when it runs here.
    #[cfg(feature = "tasks")]
    pub fn continue_as_task<R, F>(&self, rest: F) -> Result<CallToolResult, Error>
    where
        R: IntoToolResult,
        F: FnOnce(&Context) -> Result<R, Error> + Send + 'static,
    {
        let possible = self.call.tool_call
            && self.call.task.is_none()
            && self.call.version.era() == Era::Modern
            && tasks_ext::declared_by(&self.call.client_capabilities);
        if !possible {
            return rest(self).map(IntoToolResult::into_tool_result);
        }
        let cont: Continuation =
            Box::new(move |ctx| rest(ctx).map(IntoToolResult::into_tool_result));
        *self
            .call
            .continuation
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(cont);
        // Replaced by the task handle: the kit sees the continuation when the handler returns.
        Ok(CallToolResult::text("continued as a task"))
    }

    /// Reports progress, if the client asked for it (a `progressToken`); otherwise does
    /// nothing. `done` must grow from call to call; a value that does not is dropped.
    pub fn progress(&self, done: f64, total: Option<f64>, message: Option<&str>) {
        self.call.link.progress(&self.call, done, total, message);
    }

    /// Over Streamable HTTP (legacy era), ends the connection that carries this request's SSE
    /// stream without ending the stream: the client reconnects after the server's `retry:`
    /// delay and resumes from the last event id, and whatever the handler sends meanwhile
    /// (its result included) is replayed to it then. For long calls, so that no connection is
    /// held open throughout (SSE polling). Returns false when the transport cannot do it
    /// (stdio, a JSON answer, the 2026-07-28 era); the call then simply goes on.
    pub fn close_stream(&self) -> bool {
        self.call.link.close_stream(&self.call)
    }

    /// Sends a log message to the client, if it asked for this level or a lower one.
    pub fn log(&self, level: LoggingLevel, data: impl Serialize) {
        let data = serde_json::to_value(data).unwrap_or(Value::Null);
        self.call.link.log(&self.call, level, None, data);
    }

    /// Like [`Context::log`], naming the logger.
    pub fn log_as(&self, logger: &str, level: LoggingLevel, data: impl Serialize) {
        let data = serde_json::to_value(data).unwrap_or(Value::Null);
        self.call.link.log(&self.call, level, Some(logger), data);
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    ///
    /// # Errors
    /// See [`Error`]: `InputRequired` in the 2026-07-28 era until the client answers,
    /// `MissingCapability` when the client did not declare `sampling`, `Timeout`, `Cancelled`,
    /// `Peer` for an error answer.
    pub fn sample(&self, params: CreateMessageRequestParams) -> Result<CreateMessageResult, Error> {
        self.ask(
            methods::SAMPLING_CREATE_MESSAGE,
            "sampling",
            to_value(&params)?,
            None,
        )
    }

    /// [`Context::sample`] whose 2026-07-28 input request goes under `key` instead of a
    /// positional one (the key is ignored in the legacy era, where the request is sent at once).
    ///
    /// # Errors
    /// As [`Context::sample`].
    pub fn sample_as(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Error> {
        self.ask(
            methods::SAMPLING_CREATE_MESSAGE,
            "sampling",
            to_value(&params)?,
            Some(key),
        )
    }

    /// Asks the user for input, in form mode or URL mode (`elicitation/create`).
    ///
    /// # Errors
    /// As [`Context::sample`]; the capability is `elicitation` (`elicitation.url` for URL
    /// mode).
    pub fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, Error> {
        self.elicit_under(params, None)
    }

    /// [`Context::elicit`] under the input key `key` (see [`Context::sample_as`]).
    ///
    /// # Errors
    /// As [`Context::elicit`].
    pub fn elicit_as(&self, key: &str, params: ElicitRequestParams) -> Result<ElicitResult, Error> {
        self.elicit_under(params, Some(key))
    }

    /// Asks the user to fill in a form made from `T` ([`elicitation_form`]) and reads the
    /// answer as a `T`: a form the user submitted is [`Elicited::Accepted`], checked against
    /// the form and decoded by serde; one they turned down or dismissed says so.
    ///
    /// ```
    /// # #[cfg(feature = "derive")] {
    /// use mcp_server_kit::schema::JsonSchema;
    /// use mcp_server_kit::{Context, Elicited, Error, Tool};
    ///
    /// #[derive(serde::Deserialize, JsonSchema)]
    /// struct Confirm {
    ///     /// Deploy now?
    ///     confirm: bool,
    /// }
    ///
    /// let tool = Tool::typed("deploy", |_: mcp_server_kit::NoArgs, ctx: &Context| {
    ///     match ctx.elicit_form::<Confirm>("Deploy to production?")? {
    ///         Elicited::Accepted(Confirm { confirm: true }) => Ok("deployed"),
    ///         _ => Ok("not deployed"),
    ///     }
    /// });
    /// # let _ = tool; }
    /// ```
    ///
    /// [`elicitation_form`]: crate::schema::elicitation_form
    ///
    /// # Errors
    /// As [`Context::elicit`]; [`Error::Unsupported`] when `T` is not a flat form
    /// (see [`elicitation_form`]), and [`Error::BadAnswer`] when the submitted content does not
    /// decode as a `T`.
    pub fn elicit_form<T>(&self, message: impl Into<String>) -> Result<Elicited<T>, Error>
    where
        T: DeserializeOwned + crate::schema::JsonSchema,
    {
        self.elicit_form_under(message.into(), None)
    }

    /// [`Context::elicit_form`] under the input key `key` (see [`Context::sample_as`]).
    ///
    /// # Errors
    /// As [`Context::elicit_form`].
    pub fn elicit_form_as<T>(
        &self,
        key: &str,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, Error>
    where
        T: DeserializeOwned + crate::schema::JsonSchema,
    {
        self.elicit_form_under(message.into(), Some(key))
    }

    fn elicit_form_under<T>(&self, message: String, key: Option<&str>) -> Result<Elicited<T>, Error>
    where
        T: DeserializeOwned + crate::schema::JsonSchema,
    {
        let form = crate::schema::elicitation_form::<T>()?;
        let answer = self.elicit_under(ElicitRequestParams::form(message, form), key)?;
        Ok(match answer.action {
            ElicitAction::Accept => {
                let content = Value::Object(answer.content.unwrap_or_default());
                let typed = serde_json::from_value(content).map_err(|e| {
                    let what = format!(
                        "the form's answer is not a `{}`",
                        std::any::type_name::<T>()
                    );
                    Error::BadAnswer(BadAnswer::decoding(what, e))
                })?;
                Elicited::Accepted(typed)
            }
            ElicitAction::Decline => Elicited::Declined,
            ElicitAction::Cancel => Elicited::Cancelled,
        })
    }

    fn elicit_under(
        &self,
        params: ElicitRequestParams,
        key: Option<&str>,
    ) -> Result<ElicitResult, Error> {
        let params = to_value(&params)?;
        let cap = if params.get("mode").and_then(Value::as_str) == Some("url") {
            "elicitation.url"
        } else {
            "elicitation"
        };
        self.ask(methods::ELICITATION_CREATE, cap, params, key)
    }

    /// Asks the client for its roots (`roots/list`).
    ///
    /// # Errors
    /// As [`Context::sample`]; the capability is `roots`.
    pub fn roots(&self) -> Result<ListRootsResult, Error> {
        self.ask(methods::ROOTS_LIST, "roots", json!({}), None)
    }

    /// [`Context::roots`] under the input key `key` (see [`Context::sample_as`]).
    ///
    /// # Errors
    /// As [`Context::roots`].
    pub fn roots_as(&self, key: &str) -> Result<ListRootsResult, Error> {
        self.ask(methods::ROOTS_LIST, "roots", json!({}), Some(key))
    }

    fn ask<T: DeserializeOwned>(
        &self,
        method: &str,
        cap: &str,
        params: Value,
        key: Option<&str>,
    ) -> Result<T, Error> {
        if self.is_cancelled() {
            return Err(Error::Cancelled);
        }
        if !has_capability(&self.call.client_capabilities, cap) {
            return Err(Error::MissingCapability(cap.to_owned()));
        }
        // A form's answer is checked against the form (see `check_form`).
        let form = if method == methods::ELICITATION_CREATE {
            params.get("requestedSchema").cloned()
        } else {
            None
        };
        let form = form.as_ref();
        if let Some(task) = &self.call.task {
            // A task asks through its task: it shows the request as `input_required` and
            // waits here for the answer `tasks/update` brings.
            let answer = task.ask(&self.call, method, params, key)?;
            check_answer(method, form, &answer)
                .map_err(|why| Error::BadAnswer(BadAnswer::new(why)))?;
            return serde_json::from_value(answer).map_err(|e| {
                Error::BadAnswer(BadAnswer::decoding(format!("no {method} result"), e))
            });
        }
        match self.call.version.era() {
            Era::Legacy => {
                let answer =
                    self.call
                        .link
                        .request(&self.call, method, params, self.call.timeout)?;
                check_answer(method, form, &answer)
                    .map_err(|why| Error::BadAnswer(BadAnswer::new(why)))?;
                serde_json::from_value(answer).map_err(|e| {
                    Error::BadAnswer(BadAnswer::decoding(format!("no {method} result"), e))
                })
            }
            Era::Modern => {
                let (key, answer) = self.input(method, params, key)?;
                let decoded = match check_answer(method, form, &answer) {
                    Err(why) => Err(BadAnswer::new(format!("inputResponses[{key:?}]: {why}"))),
                    Ok(()) => serde_json::from_value(answer).map_err(|e| {
                        BadAnswer::decoding(
                            format!("inputResponses[{key:?}] is no {method} result"),
                            e,
                        )
                    }),
                };
                decoded.map_err(|bad| {
                    // The client's error: the request is answered -32602 (`dispatch`).
                    if let Ok(mut inputs) = self.call.inputs.lock() {
                        let inputs = inputs.get_or_insert_with(Box::default);
                        inputs.bad.get_or_insert((key, bad.to_string()));
                    }
                    Error::BadAnswer(bad)
                })
            }
        }
    }

    /// 2026-07-28: the answer to this run's input call (with its key), or a note that it is
    /// needed.
    fn input(
        &self,
        method: &str,
        params: Value,
        key: Option<&str>,
    ) -> Result<(String, Value), Error> {
        let mut inputs = self
            .call
            .inputs
            .lock()
            .map_err(|_| Error::msg("input state poisoned"))?;
        let inputs = inputs.get_or_insert_with(Box::default);
        let key = match key {
            Some(k) => k.to_owned(),
            None => {
                inputs.next += 1;
                format!("input-{}", inputs.next - 1)
            }
        };
        if let Some(answer) = inputs.answers.get(&key) {
            return Ok((key, answer.clone()));
        }
        let mut request = Map::new();
        request.insert("method".into(), Value::from(method));
        if method != methods::ROOTS_LIST || params.as_object().is_some_and(|o| !o.is_empty()) {
            request.insert("params".into(), params);
        }
        inputs.needed.insert(key, Value::Object(request));
        Err(Error::InputRequired)
    }
}

fn to_value<T: Serialize>(v: &T) -> Result<Value, Error> {
    serde_json::to_value(v).map_err(|e| Error::InvalidParams(e.to_string()))
}

/// `elicitation` is satisfied by `{"elicitation": {}}` (form mode is the default);
/// `elicitation.url` needs `{"elicitation": {"url": {}}}`.
pub(crate) fn has_capability(caps: &Value, path: &str) -> bool {
    let mut v = caps;
    for part in path.split('.') {
        match v.get(part) {
            Some(next) if !next.is_null() => v = next,
            _ => return false,
        }
    }
    true
}

/// What an answer to `method` must hold beyond its shape: an accepted form (`elicitation/create`
/// with `requestedSchema` `form`) has content values that are each a string, a number, a
/// boolean or a list of strings (all `ElicitResult` allows), and content that matches the
/// form, so a handler never reads a field the user was not asked for, or misses a required
/// one. Other answers, and answers whose shape is wrong (reported where they are decoded),
/// pass.
pub(crate) fn check_answer(
    method: &str,
    form: Option<&Value>,
    answer: &Value,
) -> Result<(), String> {
    if method != methods::ELICITATION_CREATE {
        return Ok(());
    }
    let Ok(r) = <ElicitResult as serde::Deserialize>::deserialize(answer) else {
        return Ok(());
    };
    if r.action != ElicitAction::Accept {
        return Ok(());
    }
    let content = r.content.unwrap_or_default();
    for (name, v) in &content {
        let fits = match v {
            Value::String(_) | Value::Number(_) | Value::Bool(_) => true,
            Value::Array(items) => items.iter().all(Value::is_string),
            _ => false,
        };
        if !fits {
            return Err(format!(
                "content.{name} is not a string, number, boolean or list of strings"
            ));
        }
    }
    match form {
        Some(schema) => crate::validate::validate(schema, &Value::Object(content))
            .map_err(|e| format!("the content does not match the requested schema: {e}")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_paths() {
        assert!(has_capability(&json!({"elicitation": {}}), "elicitation"));
        assert!(!has_capability(
            &json!({"elicitation": {}}),
            "elicitation.url"
        ));
        assert!(has_capability(
            &json!({"elicitation": {"url": {}}}),
            "elicitation.url"
        ));
        assert!(!has_capability(&json!({}), "sampling"));
    }
}

#[cfg(test)]
mod cancel_tests {
    use super::*;

    #[test]
    fn a_receiver_wakes_at_fire_whether_made_before_or_after() {
        let c = Cancel::new();
        let before = c.receiver();
        assert_eq!(
            before.recv_timeout(Duration::from_millis(1)),
            Err(RecvTimeoutError::Timeout)
        );
        c.fire();
        assert!(c.is_fired());
        assert_eq!(
            before.recv_timeout(Duration::from_secs(5)),
            Err(RecvTimeoutError::Disconnected)
        );
        // Made after the cancellation: disconnected from the start, never a wait.
        let after = Cancel::new();
        after.fire();
        assert_eq!(
            after.receiver().recv_timeout(Duration::from_secs(5)),
            Err(RecvTimeoutError::Disconnected)
        );
    }
}
