//! The client: typed methods for every client-to-server request of both eras, and the
//! 2026-07-28 `input_required` retry loop that makes server-side input requests transparent.

use std::process::ExitStatus;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mcp_core::engine::{Outcome, Refused, Timeout};
use mcp_core::types::LoggingLevel;
use mcp_core::types::{
    CallToolResult, CompleteArgument, CompleteRequestParams, CompleteResult, EmptyResult,
    GetPromptResult, InputRequiredResult, PromptReference, ReadResourceResult, Reference,
    ResourceTemplateReference, SubscriptionFilter, methods,
};
use mcp_core::version::{Era, ProtocolVersion};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::apps::{self, AppView};
use crate::call::{self, CallOptions};
use crate::connection::Shared;
use crate::error::{Closed, Error, Unexpected};
use crate::list_limits::ListLimits;
use crate::listen::Subscription;
use crate::tool_tasks::ToolTasks;
use mcp_core::jsonrpc::RequestId;
use mcp_core::types::tasks_ext::DetailedTask;

/// How many `input_required` rounds one call may take before the client gives up: enough for
/// any honest multi-step exchange, few enough that a looping server cannot keep a call alive.
pub const MAX_INPUT_ROUNDS: usize = 8;
/// How many input requests one `input_required` round may hold: each runs a handler of the
/// client's (a user prompt, a model call) and its answer goes back in the retry, so a server
/// asking for 300,000 at once would hold the call, the user and the client's memory for as
/// long as it liked. Enough for any honest form.
pub const MAX_INPUT_REQUESTS: usize = 64;
/// No prompt arguments, for [`Client::get_prompt`]: an empty `[]` leaves the pairs' types to
/// guess, so `client.get_prompt("simple", NO_ARGUMENTS)` instead.
pub const NO_ARGUMENTS: [(&str, &str); 0] = [];

/// What one request ended with, before any task is followed.
pub(crate) enum Reply {
    /// The final result.
    Complete(Box<RawValue>),
    /// A task (the tasks extension) that will produce it.
    Task {
        /// The request that the task answers.
        call_id: RequestId,
        /// The task as the server created it.
        task: Box<DetailedTask>,
    },
}

/// What the handshake told us about the server.
#[derive(Debug, Clone)]
pub(crate) struct ServerSummary {
    /// The transport's name for the server (a task handle carries it).
    pub server_key: Option<String>,
    pub era: Era,
    pub version: ProtocolVersion,
    pub server_info: Option<Value>,
    pub capabilities: Value,
    pub instructions: Option<String>,
}

/// A connection to one MCP server.
///
/// Every method blocks the calling thread until the answer, an error, the timeout or a
/// cancellation; the client is `Send + Sync`, so several threads may call it at once (each call
/// waits on its own channel). Closing (or dropping) the client fails every call still waiting,
/// and stops a child-process server with the MCP stdio shutdown sequence.
pub struct Client {
    pub(crate) shared: Arc<Shared>,
    reader: Option<JoinHandle<()>>,
    pub(crate) summary: ServerSummary,
    timeout: Timeout,
    list_limits: ListLimits,
    /// The ping thread, and the sender whose drop stops it.
    pinger: Option<(crossbeam_channel::Sender<()>, JoinHandle<()>)>,
    /// The tools' 2025-11-25 task support, as far as a listing showed it.
    pub(crate) tool_tasks: ToolTasks,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("era", &self.summary.era)
            .field("version", &self.summary.version)
            .field("server_info", &self.summary.server_info)
            .finish_non_exhaustive()
    }
}

fn object(params: Value) -> Result<Value, Error> {
    match params {
        Value::Null => Ok(Value::Object(Map::new())),
        Value::Object(_) => Ok(params),
        other => Err(Error::Refused(Refused::InvalidParams(format!(
            "params must be a JSON object, not {other}"
        )))),
    }
}

fn decode<R: DeserializeOwned>(method: &str, raw: &RawValue) -> Result<R, Error> {
    serde_json::from_str(raw.get()).map_err(|source| Error::Decode {
        what: format!("{method} result"),
        source,
    })
}

impl Client {
    pub(crate) fn new(
        shared: Arc<Shared>,
        reader: JoinHandle<()>,
        summary: ServerSummary,
        timeout: Timeout,
        list_limits: ListLimits,
    ) -> Self {
        Client {
            shared,
            reader: Some(reader),
            summary,
            timeout,
            list_limits,
            pinger: None,
            tool_tasks: ToolTasks::default(),
        }
    }

    /// Starts pinging the server every `interval` (each ping's timeout too); after `misses`
    /// pings in a row without an answer the connection is closed with
    /// [`Closed::NoPingAnswer`], so every waiting call fails at once with that reason. Any
    /// answer counts, an error too: the server is alive. A ping the server refuses outright
    /// (`ping` unknown to the revision) stops the pinging.
    pub(crate) fn start_pinger(&mut self, interval: Duration, misses: u32) -> Result<(), Error> {
        let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
        let shared = Arc::clone(&self.shared);
        let misses = misses.max(1);
        let handle = std::thread::Builder::new()
            .name("mcp-client-ping".into())
            .spawn(move || {
                let mut missed = 0;
                loop {
                    crossbeam_channel::select! {
                        recv(stop_rx) -> _ => return,
                        default(interval) => {}
                    }
                    let r = call::call(
                        &shared,
                        methods::PING,
                        &json!({}),
                        Timeout::fixed(interval),
                        None,
                        None,
                    );
                    match r {
                        Ok(_) => missed = 0,
                        Err(Error::Timeout { .. } | Error::SendTimeout(_)) => {
                            missed += 1;
                            if missed >= misses {
                                log::warn!(target: "mcp_client", "{missed} pings unanswered: the server hangs");
                                shared.shut(Closed::NoPingAnswer { missed, interval });
                                return;
                            }
                        }
                        Err(e) => {
                            log::debug!(target: "mcp_client", "pinging stops: {e}");
                            return;
                        }
                    }
                }
            })
            .map_err(Error::Io)?;
        self.pinger = Some((stop_tx, handle));
        Ok(())
    }

    /// The timeout of a request that sets none.
    pub(crate) fn default_timeout(&self) -> Timeout {
        self.timeout
    }

    /// The bounds of a listing.
    pub(crate) fn list_limits(&self) -> ListLimits {
        self.list_limits
    }

    /// The era the handshake chose.
    pub fn era(&self) -> Era {
        self.summary.era
    }

    /// The revision both sides speak.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.summary.version
    }

    /// The server's `Implementation` (`name`, `version`, ...), when it said.
    pub fn server_info(&self) -> Option<&Value> {
        self.summary.server_info.as_ref()
    }

    /// The server's capabilities.
    pub fn server_capabilities(&self) -> &Value {
        &self.summary.capabilities
    }

    /// The server's instructions for the model, when it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.summary.instructions.as_deref()
    }

    /// Whether the connection is closed (the server went away or [`Client::close`] ran).
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// Any request, by method name, with the default options; the result is decoded as `R`
    /// (use `serde_json::Value` for anything). 2026-07-28 `input_required` answers are
    /// handled as for the typed methods.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn request<R: DeserializeOwned>(&self, method: &str, params: Value) -> Result<R, Error> {
        self.request_with(method, params, &CallOptions::default())
    }

    /// [`Client::request`] with per-call options.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn request_with<R: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        options: &CallOptions,
    ) -> Result<R, Error> {
        let raw = self.exchange(method, object(params)?, options)?;
        decode(method, &raw)
    }

    /// One request through to its final result: the `input_required` rounds, and the task
    /// the server may run it as (followed to its end).
    fn exchange(
        &self,
        method: &str,
        params: Value,
        options: &CallOptions,
    ) -> Result<Box<RawValue>, Error> {
        // A task gets what is left of the call's timeout once the rounds are over.
        let started = Instant::now();
        match self.exchange_rounds(method, params, options)? {
            Reply::Complete(raw) => Ok(raw),
            Reply::Task { call_id, task } => {
                self.follow_task(method, call_id, *task, options, started)
            }
        }
    }

    /// One request through to its final result or a task: each `input_required` answer is
    /// met by the registered handlers and the request retried with a new id, the same params,
    /// the answers under the same keys and the server's `requestState` echoed.
    pub(crate) fn exchange_rounds(
        &self,
        method: &str,
        params: Value,
        options: &CallOptions,
    ) -> Result<Reply, Error> {
        let timeout = options.timeout.unwrap_or(self.timeout);
        // The rounds share the call's timeout: each gets what the server's earlier rounds left
        // of it (the time this client's own handlers take to answer is the user's, not
        // counted), so a server that keeps asking cannot stretch a call to rounds x timeout.
        let mut left = timeout.max_total;
        let mut round_params = params.clone();
        for round in 0..=MAX_INPUT_ROUNDS {
            if round > 0 && left.is_zero() {
                return Err(Error::Timeout {
                    method: method.to_owned(),
                });
            }
            let this_round = Timeout {
                initial: timeout.initial.min(left),
                max_total: left,
                ..timeout
            };
            let sent = Instant::now();
            let (call_id, outcome) = call::call_tracked(
                &self.shared,
                method,
                &round_params,
                this_round,
                options.progress.clone(),
                options.cancel.as_ref(),
            )?;
            left = left.saturating_sub(sent.elapsed());
            let raw = match outcome {
                Outcome::Complete(r) => return Ok(Reply::Complete(r)),
                Outcome::Error(e) => return Err(Error::Rpc(e)),
                Outcome::Other {
                    result_type,
                    result,
                } if result_type == "task" && self.follows_tasks(method) => {
                    let task = Box::new(Client::task_of(method, &result)?);
                    return Ok(Reply::Task { call_id, task });
                }
                Outcome::Other { result_type, .. } => {
                    return Err(Unexpected::ResultType {
                        method: method.to_owned(),
                        result_type,
                    }
                    .into());
                }
                Outcome::InputRequired(r) => r,
            };
            if self.summary.era != Era::Modern {
                return Err(Unexpected::InputOnLegacy {
                    method: method.to_owned(),
                }
                .into());
            }
            let asked: InputRequiredResult = decode(method, &raw)?;
            if asked.input_requests.is_none() && asked.request_state.is_none() {
                return Err(Unexpected::EmptyInputRequired {
                    method: method.to_owned(),
                }
                .into());
            }
            round_params = params.clone();
            if let Some(requests) = asked.input_requests {
                if requests.len() > MAX_INPUT_REQUESTS {
                    return Err(Unexpected::TooManyInputRequests {
                        method: method.to_owned(),
                        count: requests.len(),
                    }
                    .into());
                }
                let mut answers = Map::new();
                for (key, req) in requests {
                    let method = req.method();
                    let answer = self.shared.handlers.answer_input(&key, req)?;
                    let answer = serde_json::to_value(answer).map_err(|e| Error::Input {
                        method: method.to_owned(),
                        key: key.clone(),
                        source: Box::new(e),
                    })?;
                    answers.insert(key, answer);
                }
                round_params["inputResponses"] = Value::Object(answers);
            }
            if let Some(state) = asked.request_state {
                round_params["requestState"] = Value::String(state);
            }
        }
        Err(Error::TooManyInputRounds(MAX_INPUT_ROUNDS))
    }

    /// The params of a `tools/call`.
    pub(crate) fn tool_call_params(name: &str, arguments: Value) -> Result<Value, Error> {
        let mut params = json!({"name": name});
        if !arguments.is_null() {
            params["arguments"] = object(arguments)?;
        }
        Ok(params)
    }

    /// Calls a tool. `arguments` is a JSON object (or `null` for none). A tool's own failure
    /// is a result with `isError` set, not an `Err`.
    ///
    /// When the server runs the call as a task (the tasks extension, declared by default),
    /// the call follows it to its end and returns its result the same way: see
    /// [`Client::call_tool_as_task`] to get the task's handle instead. On 2025-11-25, with a
    /// server that runs tools as tasks, a tool whose `execution.taskSupport` is `"required"`
    /// is called as a task and followed the same way (the client reads the server's tool
    /// list to know, once until the server says its tools changed).
    ///
    /// # Errors
    /// See [`Error`].
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, &CallOptions::default())
    }

    /// [`Client::call_tool`] with a timeout, a progress callback or a cancel handle.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        if self.legacy_tasks() {
            return self.call_tool_legacy(name, arguments, options);
        }
        let params = Client::tool_call_params(name, arguments)?;
        self.request_with(methods::TOOLS_CALL, params, options)
    }

    /// Reads a resource.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.read_resource_with(uri, &CallOptions::default())
    }

    /// [`Client::read_resource`] with per-call options.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn read_resource_with(
        &self,
        uri: &str,
        options: &CallOptions,
    ) -> Result<ReadResourceResult, Error> {
        self.request_with(methods::RESOURCES_READ, json!({"uri": uri}), options)
    }

    /// Reads the MCP Apps view ([`apps`]) at `uri` with `resources/read`: the part of the
    /// result with that URI (or the only part), which must have the extension's MIME type.
    ///
    /// # Errors
    /// The errors of [`Client::read_resource`], and [`Unexpected::NotAView`] when the answer
    /// holds no part for `uri`, the part is not `text/html;profile=mcp-app`, or a blob is not
    /// base64 of UTF-8: a host must not render something else as a view.
    pub fn read_app_view(&self, uri: &str) -> Result<AppView, Error> {
        let result = self.read_resource(uri)?;
        apps::view_from(uri, result.contents)
    }

    /// Gets a prompt with these arguments (names to string values): an array of pairs, a
    /// `Vec`, a map, [`NO_ARGUMENTS`] for none.
    ///
    /// ```no_run
    /// # fn f(client: &mcp_client::Client) -> Result<(), mcp_client::Error> {
    /// let review = client.get_prompt("code_review", [("language", "rust")])?;
    /// let simple = client.get_prompt("simple", mcp_client::NO_ARGUMENTS)?;
    /// # let _ = (review, simple); Ok(()) }
    /// ```
    ///
    /// # Errors
    /// See [`Error`].
    pub fn get_prompt<I, K, V>(&self, name: &str, arguments: I) -> Result<GetPromptResult, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.get_prompt_with(name, arguments, &CallOptions::default())
    }

    /// [`Client::get_prompt`] with per-call options.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn get_prompt_with<I, K, V>(
        &self,
        name: &str,
        arguments: I,
        options: &CallOptions,
    ) -> Result<GetPromptResult, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let args: Map<String, Value> = arguments
            .into_iter()
            .map(|(k, v)| (k.into(), Value::String(v.into())))
            .collect();
        let mut params = json!({"name": name});
        if !args.is_empty() {
            params["arguments"] = Value::Object(args);
        }
        self.request_with(methods::PROMPTS_GET, params, options)
    }

    /// `completion/complete` with full params.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn complete(&self, params: &CompleteRequestParams) -> Result<CompleteResult, Error> {
        let params = serde_json::to_value(params)
            .map_err(|e| Error::Refused(Refused::InvalidParams(e.to_string())))?;
        self.request(methods::COMPLETION_COMPLETE, params)
    }

    /// Completes argument `argument` of prompt `prompt`, given what was typed so far.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn complete_prompt_argument(
        &self,
        prompt: &str,
        argument: &str,
        value: &str,
    ) -> Result<CompleteResult, Error> {
        self.complete(&complete_params(
            Reference::Prompt(PromptReference {
                name: prompt.to_owned(),
                ..Default::default()
            }),
            argument,
            value,
        ))
    }

    /// Completes variable `argument` of a resource template.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn complete_resource_argument(
        &self,
        uri_template: &str,
        argument: &str,
        value: &str,
    ) -> Result<CompleteResult, Error> {
        self.complete(&complete_params(
            Reference::Resource(ResourceTemplateReference {
                uri: uri_template.to_owned(),
                ..Default::default()
            }),
            argument,
            value,
        ))
    }

    /// Legacy era: asks for `notifications/resources/updated` about `uri` (they arrive on the
    /// [`on_notification`](crate::ClientBuilder::on_notification) callback). In 2026-07-28 use
    /// [`Client::listen`].
    ///
    /// # Errors
    /// [`Error::Refused`] in the 2026-07-28 era or when the server cannot subscribe.
    pub fn subscribe(&self, uri: &str) -> Result<(), Error> {
        self.request::<EmptyResult>(methods::RESOURCES_SUBSCRIBE, json!({"uri": uri}))
            .map(drop)
    }

    /// Legacy era: stops the updates about `uri`.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        self.request::<EmptyResult>(methods::RESOURCES_UNSUBSCRIBE, json!({"uri": uri}))
            .map(drop)
    }

    /// 2026-07-28: opens a `subscriptions/listen` stream for the notifications in `filter`,
    /// and waits for the server's acknowledgement (what it will actually send).
    ///
    /// # Errors
    /// [`Error::Refused`] on a legacy connection (use [`Client::subscribe`] and
    /// [`ClientBuilder::on_notification`](crate::ClientBuilder::on_notification)),
    /// [`Error::Rpc`] when the server refuses, [`Error::Timeout`] when no acknowledgement comes
    /// within the default timeout.
    pub fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, Error> {
        let params = json!({"notifications": filter});
        Subscription::open(&self.shared, &params, self.timeout.initial)
    }

    /// Sets the level of the server's log messages. Legacy: `logging/setLevel`. 2026-07-28:
    /// every later request carries the level in its `_meta` (there is no such request).
    ///
    /// # Errors
    /// See [`Error`].
    pub fn set_logging_level(&self, level: LoggingLevel) -> Result<(), Error> {
        if self.summary.era == Era::Modern {
            self.shared.state().engine.set_log_level(Some(level));
            return Ok(());
        }
        self.request::<EmptyResult>(methods::LOGGING_SET_LEVEL, json!({"level": level.as_str()}))
            .map(drop)
    }

    /// Legacy era: `ping`.
    ///
    /// # Errors
    /// [`Error::Refused`] in 2026-07-28, which removed `ping`.
    pub fn ping(&self) -> Result<(), Error> {
        self.request::<EmptyResult>(methods::PING, json!({}))
            .map(drop)
    }

    /// Legacy era: tells the server the roots changed (`notifications/roots/list_changed`).
    /// Does nothing in 2026-07-28 or without a roots provider.
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection is gone.
    pub fn roots_list_changed(&self) -> Result<(), Error> {
        let msg = self.shared.state().engine.roots_list_changed();
        match msg {
            Some(m) => self.shared.notify_server(m),
            None => Ok(()),
        }
    }

    /// Closes the connection: every call still waiting fails with [`Error::Closed`], open
    /// listen streams end, and the transport closes (a child-process server gets its stdin
    /// closed, then SIGTERM, then SIGKILL, as the MCP stdio transport says). Returns the
    /// server process's exit status when there is a process.
    ///
    /// # Errors
    /// When the transport could not be closed cleanly.
    pub fn close(mut self) -> Result<Option<ExitStatus>, Error> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<Option<ExitStatus>, Error> {
        let Some(reader) = self.reader.take() else {
            return Ok(None);
        };
        self.shared.shut(Closed::ByClient);
        // A ping in flight failed with the shut; the thread sees its stop channel close.
        if let Some((stop, pinger)) = self.pinger.take() {
            drop(stop);
            if pinger.join().is_err() {
                log::warn!(target: "mcp_client", "the ping thread panicked");
            }
        }
        // The reader keeps draining the server's output while it shuts down, so a server
        // blocked writing to us can still see its stdin close and exit.
        let control = self
            .shared
            .control
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let result = match control {
            Some(mut c) => c.close(),
            None => Ok(None),
        };
        self.shared.stop_reader();
        if reader.join().is_err() {
            log::warn!(target: "mcp_client", "the reader thread panicked");
        }
        result
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            log::warn!(target: "mcp_client", "closing the connection: {e}");
        }
    }
}

fn complete_params(reference: Reference, argument: &str, value: &str) -> CompleteRequestParams {
    CompleteRequestParams {
        reference,
        argument: CompleteArgument {
            name: argument.to_owned(),
            value: value.to_owned(),
            ..Default::default()
        },
        context: None,
        meta: None,
        extra: Map::new(),
    }
}
