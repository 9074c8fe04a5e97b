//! One session: the engine for one peer, the requests in flight, and the waits of handlers
//! that asked the client something.
//!
//! Locking rule: the session's state lock is never held while sending, because a send may block
//! on a back-pressured transport, and the transport's reader must still be able to deliver the
//! messages (answers, cancellations) that unblock it.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use crossbeam_channel::{RecvTimeoutError, Sender, bounded};
use mcp_core::engine::{
    ClientNotice, ListKind, Outcome as EngineOutcome, PlainRequest, RequestContext, ServerEngine,
    ServerStep, Timeout,
};
use mcp_core::id_map::{IdMap, id_map};
use mcp_core::jsonrpc::{ErrorObject, Message, Notification, RequestId, RequestView, codes};
use mcp_core::service::{Outbound, Session, SessionInfo, TransportKind};
use mcp_core::types::{
    ClientRequest, LoggingLevel, PaginatedRequestParams, ResultType, SubscriptionFilter,
    TextToolResult, methods,
};
use mcp_core::version::{Era, ProtocolVersion};
use serde_json::{Value, json};

use crate::call_text::CallText;
use crate::context::{Call, Cancel, Context, Link};
use crate::cursor::Cursors;
use crate::cursor::ListKind as Page;
use crate::dispatch::{self, Outcome};
use crate::error::{BadAnswer, Error};
use crate::rate::{self, Buckets, ClientKey, Kind as Limited};
use crate::shared::Shared;
use crate::tasks::runner as tasks;
use crate::tool::{ToolLimit, ToolOutput};

type Waiter = Sender<Result<Value, Error>>;

/// A 2026-07-28 `subscriptions/listen` stream and what it opted in to.
struct Listen {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: HashSet<String>,
}

struct State {
    engine: ServerEngine,
    calls: IdMap<Arc<Call>>,
    /// Our requests to the client: who waits for the answer, and for which client request.
    waiters: IdMap<(RequestId, Waiter)>,
    subscriptions: HashSet<String>,
    /// The bytes of the URIs in `subscriptions`.
    subscription_bytes: usize,
    listens: IdMap<Listen>,
    /// Request states kept in the session (see `dispatch::seal_state`), newest last.
    stash: VecDeque<(u64, Vec<u8>)>,
    /// The bytes the stash holds (see `STASH_BYTES`).
    stash_bytes: usize,
    stash_next: u64,
    initialized: bool,
    closed: bool,
    /// Our ping in flight (`ServerBuilder::ping_every`), and how many were missed in a row.
    ping: Option<RequestId>,
    missed: u32,
    /// The context of the last quick call run on the stdio reader, kept for the next one
    /// (see `handle_line`). It holds the session (its link), so `close` lets it go.
    spare: Option<Arc<Call>>,
    /// Dropped once the session is drained, so a transport waiting for its last sender can
    /// finish at once. Here rather than under a lock of its own: an answer takes it under
    /// the lock that marks its request answered (one atomic pair fewer a call).
    out: Option<Arc<dyn Outbound>>,
}

/// How a quick call's context is come by (see `KitSession::handle_line`).
enum Taken {
    /// The last quick call's, to renew if nothing kept it.
    Spare(Arc<Call>),
    /// The engine's facts for a new one.
    Head(PlainRequest),
}

/// The kit's side of one session.
pub(crate) struct KitSession {
    shared: Arc<Shared>,
    info: SessionInfo,
    me: Weak<KitSession>,
    state: Mutex<State>,
    /// This session's rate-limit buckets (see `rate`; unused by 2026-07-28 HTTP exchanges,
    /// whose buckets are the server's, per client).
    buckets: Mutex<Buckets>,
    /// When the session opened: the time handed to the engine with a message it reads no time
    /// for (see `handle`).
    opened: Instant,
}

impl KitSession {
    pub(crate) fn new(
        shared: Arc<Shared>,
        info: SessionInfo,
        out: Arc<dyn Outbound>,
    ) -> Arc<KitSession> {
        let engine = ServerEngine::from_shared(Arc::clone(&shared.engine_config));
        Arc::new_cyclic(|me| KitSession {
            shared,
            info,
            me: me.clone(),
            state: Mutex::new(State {
                engine,
                calls: id_map(),
                waiters: id_map(),
                subscriptions: HashSet::new(),
                subscription_bytes: 0,
                listens: id_map(),
                stash: VecDeque::new(),
                stash_bytes: 0,
                stash_next: 0,
                initialized: false,
                closed: false,
                ping: None,
                missed: 0,
                spare: None,
                out: Some(out),
            }),
            buckets: Mutex::default(),
            opened: Instant::now(),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn outbound(&self) -> Option<Arc<dyn Outbound>> {
        self.state().out.clone()
    }

    fn send(&self, msg: Option<Message>, related: Option<&RequestId>) {
        if let (Some(m), Some(out)) = (msg, self.outbound()) {
            // A closed peer is normal at shutdown; there is no one left to tell.
            let _ = out.send(m, related);
        }
    }

    /// Sends a broadcast (a list or a resource changed): the caller may be another session's
    /// handler or a timer, which a client that stopped reading must not hold (its stream is
    /// cut instead; see `Outbound::send_nowait`).
    fn broadcast(&self, msg: Option<Message>, related: Option<&RequestId>) {
        if let (Some(m), Some(out)) = (msg, self.outbound()) {
            let _ = out.send_nowait(m, related);
        }
    }

    /// Tells the transport that request `id` gets no answer (it was cancelled).
    fn unanswered(&self, id: &RequestId) {
        if let Some(out) = self.outbound() {
            out.unanswered(id);
        }
    }

    /// HTTP (either transport) rather than a pipe: the limits of the network apply.
    fn networked(&self) -> bool {
        matches!(
            self.info.transport,
            TransportKind::StreamableHttp | TransportKind::LegacySse
        )
    }

    /// Takes a rate-limit token for `kind` (a tool call names its tool), or says how long until
    /// one is free. A 2026-07-28 HTTP exchange counts against its client's buckets in the
    /// server's table; any other session against its own.
    fn take(
        &self,
        kind: Limited,
        tool: Option<&str>,
        limit: rate::RateLimit,
        version: ProtocolVersion,
    ) -> Result<(), Duration> {
        let now = Instant::now();
        if self.info.transport == TransportKind::StreamableHttp && version.era() == Era::Modern {
            let key = ClientKey::of(self.info.auth.as_ref(), self.info.peer);
            self.shared.limiter.take_shared(key, kind, tool, limit, now)
        } else {
            rate::take_local(&self.buckets, kind, tool, limit, now)
        }
    }

    /// Whether a `tools/call` of `name` may run now: the tool's own limit if it has one, else
    /// the server's. With neither (stdio by default) it costs one atomic load.
    fn admit_call(&self, name: &str, version: ProtocolVersion) -> Result<(), Duration> {
        let server = self.shared.limiter.limits(self.networked()).tool_calls();
        if server.is_none()
            && !self
                .shared
                .tool_limits
                .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Ok(());
        }
        let own = self
            .shared
            .registry()
            .tools
            .iter()
            .find(|t| t.def.name == name)
            .map_or(ToolLimit::Server, |t| t.rate_limit);
        match own {
            ToolLimit::Unlimited => Ok(()),
            ToolLimit::Own(l) => self.take(Limited::ToolCall, Some(name), l, version),
            ToolLimit::Server => match server {
                Some(l) => self.take(Limited::ToolCall, None, l, version),
                None => Ok(()),
            },
        }
    }

    /// Whether a request of `kind` (a completion) may run now.
    fn admit(&self, kind: Limited, version: ProtocolVersion) -> Result<(), Duration> {
        let limits = self.shared.limiter.limits(self.networked());
        let limit = match kind {
            Limited::Completion => limits.completions(),
            Limited::Log => limits.log_messages(),
            Limited::Progress => limits.progress(),
            Limited::ToolCall => limits.tool_calls(),
        };
        match limit {
            Some(l) => self.take(kind, None, l, version),
            None => Ok(()),
        }
    }

    /// Answers a request the rate limit refused, and counts it.
    fn refuse(&self, rc: &RequestContext, method: &str, kind: Limited, wait: Duration) {
        self.refuse_id(&rc.id, rc.protocol_version, method, kind, wait);
    }

    fn refuse_id(
        &self,
        id: &RequestId,
        version: ProtocolVersion,
        method: &str,
        kind: Limited,
        wait: Duration,
    ) {
        self.shared.limiter.count(kind);
        let e = rate::refused(method, wait);
        self.finish(id, method, version, Outcome::Error(e));
    }

    /// Whether a notification of `kind` may go out now; one that may not is dropped and
    /// counted here (never queued: a flood must not grow memory).
    fn notice_allowed(&self, kind: Limited, version: ProtocolVersion) -> bool {
        if self.shared.limiter.off(self.networked()) {
            return true;
        }
        let ok = self.admit(kind, version).is_ok();
        if !ok {
            self.shared.limiter.count(kind);
        }
        ok
    }

    /// Types the request once (params straight from their raw text) and answers it from the
    /// one match over every client request: no method string is compared here.
    fn dispatch(&self, mut rc: RequestContext) {
        let version = rc.protocol_version;
        if rc.method == methods::TOOLS_CALL {
            // The usual call goes from its params text to the handler in one read.
            let quick = rc.params.take().and_then(|params| {
                match CallText::read_valid(params.get())
                    .filter(|c| tasks::plain_call(&self.shared, &rc, c.name(params.get())))
                {
                    Some(call) => Some((params, call)),
                    None => {
                        rc.params = Some(params);
                        None
                    }
                }
            });
            if let Some((params, call)) = quick {
                if let Err(wait) = self.admit_call(call.name(params.get()), version) {
                    return self.refuse(&rc, methods::TOOLS_CALL, Limited::ToolCall, wait);
                }
                return self.spawn_handler(rc, methods::TOOLS_CALL, move |s, ctx| {
                    let outcome = dispatch::call_tool_text(s, params.get(), &call, ctx);
                    #[cfg(feature = "tasks")]
                    let outcome = tasks::continued(s, ctx, outcome);
                    outcome
                });
            }
        }
        self.dispatch_typed(rc);
    }

    /// Every request but the usual `tools/call`, typed and answered (out of line, so that the
    /// usual call's path stays short).
    #[inline(never)]
    fn dispatch_typed(&self, rc: RequestContext) {
        let version = rc.protocol_version;
        let req = match rc.typed_without_meta() {
            Ok(req) => req,
            Err(e) => {
                self.finish(&rc.id, &rc.method, version, Outcome::Error(e));
                return;
            }
        };
        let method = req.method();
        match req {
            ClientRequest::ListTools(p) => self.list(&rc, method, Page::Tools, p),
            ClientRequest::ListPrompts(p) => self.list(&rc, method, Page::Prompts, p),
            ClientRequest::ListResources(p) => self.list(&rc, method, Page::Resources, p),
            ClientRequest::ListResourceTemplates(p) => self.list(&rc, method, Page::Templates, p),
            ClientRequest::Subscribe(p) => {
                let outcome = match self.state().subscribe(p.uri) {
                    Ok(()) => Outcome::Result(json!({})),
                    Err(e) => Outcome::Error(e),
                };
                self.finish(&rc.id, method, version, outcome);
            }
            ClientRequest::Unsubscribe(p) => {
                self.state().unsubscribe(&p.uri);
                self.finish(&rc.id, method, version, Outcome::Result(json!({})));
            }
            ClientRequest::SubscriptionsListen(p) => self.listen(&rc, &p.notifications),
            ClientRequest::CallTool(p) => {
                if let Err(wait) = self.admit_call(&p.name, version) {
                    return self.refuse(&rc, method, Limited::ToolCall, wait);
                }
                let auth = self.info.auth.as_ref();
                let headers = self.info.param_headers.as_ref();
                match tasks::on_call(&self.shared, &rc, auth, headers, p) {
                    tasks::Route::Answer(o) => self.finish(&rc.id, method, version, o),
                    tasks::Route::Call(p) => self.spawn_handler(rc, method, move |s, ctx| {
                        let outcome = dispatch::call_tool(s, p, ctx);
                        #[cfg(feature = "tasks")]
                        let outcome = tasks::continued(s, ctx, outcome);
                        outcome
                    }),
                }
            }
            // The tasks extension (2026-07-28); the experimental tasks of 2025-11-25 are not
            // served (below).
            ClientRequest::GetTask(p) if version.era() == Era::Modern => {
                let o = tasks::get(&self.shared, &rc, self.info.auth.as_ref(), &p);
                self.finish(&rc.id, method, version, o);
            }
            ClientRequest::CancelTask(p) if version.era() == Era::Modern => {
                let o = tasks::cancel(&self.shared, &rc, self.info.auth.as_ref(), &p);
                self.finish(&rc.id, method, version, o);
            }
            ClientRequest::UpdateTask(p) if version.era() == Era::Modern => {
                let o = tasks::update(&self.shared, &rc, self.info.auth.as_ref(), p);
                self.finish(&rc.id, method, version, o);
            }
            // The skills extension, when the server serves skills: answered from the
            // in-memory catalog on this thread, like the lists (-32601 without skills).
            ClientRequest::ListSkills(p) => {
                let o = dispatch::skills_list(
                    &self.shared,
                    self.cursors(),
                    p.cursor.as_deref(),
                    version,
                );
                self.finish(&rc.id, method, version, o);
            }
            ClientRequest::GetSkill(p) => {
                let o = dispatch::skills_get(&self.shared, &p.uri, version);
                self.finish(&rc.id, method, version, o);
            }
            ClientRequest::ReadResourceDirectory(p) => {
                let o = dispatch::read_directory(
                    &self.shared,
                    self.cursors(),
                    &p.uri,
                    p.cursor.as_deref(),
                    version,
                );
                self.finish(&rc.id, method, version, o);
            }
            ClientRequest::GetPrompt(p) => {
                self.spawn_handler(rc, method, move |s, ctx| dispatch::get_prompt(s, p, ctx))
            }
            ClientRequest::ReadResource(p) => {
                self.spawn_handler(rc, method, move |s, ctx| dispatch::read_resource(s, p, ctx))
            }
            ClientRequest::Complete(p) => {
                if let Err(wait) = self.admit(Limited::Completion, version) {
                    return self.refuse(&rc, method, Limited::Completion, wait);
                }
                self.spawn_handler(rc, method, move |s, ctx| dispatch::complete(s, p, ctx))
            }
            // The engine answers the lifecycle itself (these never reach here); `tasks/result`
            // and `tasks/list` are gone from the tasks extension, and the legacy era's
            // experimental tasks are not run: for the kit they are methods it does not have.
            ClientRequest::Initialize(_)
            | ClientRequest::Ping(_)
            | ClientRequest::Discover(_)
            | ClientRequest::SetLevel(_)
            | ClientRequest::GetTask(_)
            | ClientRequest::GetTaskPayload(_)
            | ClientRequest::ListTasks(_)
            | ClientRequest::CancelTask(_)
            | ClientRequest::UpdateTask(_) => {
                let e = ErrorObject::method_not_found(method);
                self.finish(&rc.id, method, version, Outcome::Error(e));
            }
        }
    }

    /// Sends what the engine answered itself (the lifecycle, `ping`, refusals).
    #[inline(never)]
    fn reply(&self, m: Message) {
        let related = m.id().cloned();
        self.send(Some(m), related.as_ref());
    }

    /// The client cancelled request `id`.
    #[inline(never)]
    fn on_cancel(&self, id: &RequestId) {
        self.cancel_call(id);
        // No answer will go out for it, whenever its handler notices: the transport may end
        // its exchange now rather than when the handler returns.
        self.unanswered(id);
    }

    /// The client answered one of our requests: its waiter gets the outcome.
    #[inline(never)]
    fn on_answer(&self, a: mcp_core::engine::Answer) {
        let waiter = {
            let mut st = self.state();
            // Any answer to our ping, even an error, shows the client is there.
            if st.ping.as_ref() == Some(&a.id) {
                st.ping = None;
                st.missed = 0;
            }
            st.waiters.remove(&a.id)
        };
        if let Some((_, w)) = waiter {
            let r = match a.outcome {
                EngineOutcome::Complete(raw) | EngineOutcome::Other { result: raw, .. } => {
                    serde_json::from_str(raw.get())
                        .map_err(|e| Error::BadAnswer(BadAnswer::decoding("not a result", e)))
                }
                EngineOutcome::InputRequired(_) => Err(Error::BadAnswer(BadAnswer::new(
                    "the client answered with input_required",
                ))),
                EngineOutcome::Error(e) => Err(Error::Peer(e)),
            };
            let _ = w.try_send(r);
        }
    }

    /// This session's cursors: sealed by the transport's sealer when it has one.
    fn cursors(&self) -> Cursors<'_> {
        Cursors {
            local: &self.shared.cursors,
            sealer: self.info.sealer.as_deref(),
        }
    }

    fn list(&self, rc: &RequestContext, method: &str, kind: Page, p: PaginatedRequestParams) {
        let version = rc.protocol_version;
        let outcome = dispatch::list(
            &self.shared,
            self.cursors(),
            kind,
            p.cursor.as_deref(),
            version,
        );
        self.finish(&rc.id, method, version, outcome);
    }

    fn spawn_handler<F>(&self, rc: RequestContext, method: &'static str, run: F)
    where
        F: FnOnce(&Shared, &Context) -> Outcome + Send + 'static,
    {
        let head = PlainRequest {
            protocol_version: rc.protocol_version,
            client_capabilities: rc.client_capabilities,
            client_info: rc.client_info,
        };
        if self.info.handle_may_block {
            return self.run_here(rc.id, head, method, run);
        }
        let Some(me) = self.me.upgrade() else { return };
        let call = self.new_call(rc.id, head, method, me.clone(), false);
        let job = move || {
            let ctx = Context { call };
            let mut outcome = run(&me.shared, &ctx);
            settled(&ctx, &mut outcome);
            me.finish(&ctx.call.id, method, ctx.call.version, outcome);
        };
        if let Err(rejected) = self.shared.pool.execute(job) {
            // Shutting down, or no thread could start: run it here rather than leave the
            // request unanswered.
            log::debug!("handler runs inline: {rejected}");
            rejected.into_job()();
        }
    }

    /// Runs a handler on this thread, a transport's reader that may block in `handle`: user
    /// code may block, and the transport keeps reading elsewhere once told (stdio hands its
    /// reading to another thread), with no hand-off to a worker on the answer's path.
    fn run_here(
        &self,
        id: RequestId,
        head: PlainRequest,
        method: &'static str,
        run: impl FnOnce(&Shared, &Context) -> Outcome,
    ) {
        let Some(me) = self.me.upgrade() else { return };
        // Run here, the handler needs no handle of its own on the session.
        let call = self.new_call(id, head, method, me, self.lazy_calls());
        self.run_call(call, self.shared.config.quick_handlers, method, run);
    }

    /// Whether a call run on this session's reader is a quick handler's on the stdio reader,
    /// listed only if it blocks (see `Call::listed`). Not over HTTP, whose other connections
    /// may carry a cancellation at any time.
    fn lazy_calls(&self) -> bool {
        self.shared.config.quick_handlers && self.info.transport == TransportKind::Stdio
    }

    /// `run_here` with the call made; one not listed is kept for the next (see
    /// `handle_line`).
    fn run_call(
        &self,
        call: Arc<Call>,
        quick: bool,
        method: &'static str,
        run: impl FnOnce(&Shared, &Context) -> Outcome,
    ) {
        if !quick && self.outbound().is_some_and(|out| !out.will_block()) {
            return self.refuse_busy(&call, method);
        }
        let ctx = Context { call };
        let mut outcome = run(&self.shared, &ctx);
        settled(&ctx, &mut outcome);
        // Over: from now on nothing lists it (a context the handler kept that blocks later
        // has no request left to cancel). Stored before `finish` takes the state lock, under
        // which a late listing looks at the flag.
        ctx.call.listed.store(true, Ordering::Release);
        let Context { call } = ctx;
        if method == methods::TOOLS_CALL && self.lazy_calls() {
            let (id, version) = (call.id.clone(), call.version);
            self.finish_keeping(&id, method, version, outcome, Some(call));
        } else {
            self.finish(&call.id, method, call.version, outcome);
        }
    }

    /// A call's context, listed in the session's calls unless `lazy` (see `Call::listed`).
    fn new_call(
        &self,
        id: RequestId,
        head: PlainRequest,
        method: &'static str,
        link: Arc<dyn Link>,
        lazy: bool,
    ) -> Arc<Call> {
        #[cfg(not(feature = "tasks"))]
        let _ = method;
        let call = Arc::new(Call {
            id,
            version: head.protocol_version,
            client_info_raw: head.client_info,
            client_info: OnceLock::new(),
            client_capabilities: head.client_capabilities,
            auth: self.info.auth.clone(),
            param_headers: self.info.param_headers.clone(),
            cancel: Cancel::new(),
            listed: AtomicBool::new(!lazy),
            timeout: self.shared.config.client_request_timeout,
            link,
            inputs: Mutex::new(None),
            task: None,
            #[cfg(feature = "tasks")]
            tool_call: method == methods::TOOLS_CALL,
            #[cfg(feature = "tasks")]
            continuation: Mutex::new(None),
            tool: None,
        });
        if !lazy {
            self.state()
                .calls
                .insert(call.id.clone(), Arc::clone(&call));
        }
        call
    }

    /// Blocking now could leave nobody to read while the other handlers wait for the client:
    /// the call is answered busy, unrun (out of line: the rare case it is).
    #[cold]
    #[inline(never)]
    fn refuse_busy(&self, call: &Call, method: &str) {
        call.listed.store(true, Ordering::Release);
        self.finish(&call.id, method, call.version, Outcome::Error(busy()));
    }

    /// Sends the answer to client request `id` (or, when it was cancelled, nothing).
    fn finish(&self, id: &RequestId, method: &str, version: ProtocolVersion, outcome: Outcome) {
        self.finish_keeping(id, method, version, outcome, None);
    }

    /// `finish`, keeping `spare` for the next quick call (see `handle_line`) while the
    /// session is open and keeps none yet.
    fn finish_keeping(
        &self,
        id: &RequestId,
        method: &str,
        version: ProtocolVersion,
        outcome: Outcome,
        spare: Option<Arc<Call>>,
    ) {
        let outcome = match outcome {
            Outcome::Tool(output) => return self.finish_tool(id, output, spare),
            Outcome::Result(v) => match dispatch::shape(method, v, version) {
                Ok(v) => Outcome::Result(v),
                Err(e) => Outcome::Error(e),
            },
            other => other,
        };
        let (msg, drained, _unkept) = {
            let mut st = self.state();
            if !st.calls.is_empty() {
                st.calls.remove(id);
            }
            let unkept = st.keep(spare);
            let msg = match outcome {
                Outcome::Result(v) => st.engine.respond_value(id, Ok(v)),
                Outcome::Error(e) => st.engine.respond_value(id, Err(e)),
                Outcome::Raw(r) => st.engine.respond(id, Ok(r)),
                // Answered above.
                Outcome::Tool(t) => st.engine.respond(
                    id,
                    mcp_core::jsonrpc::ResultValue::to_raw(&t.into_result())
                        .map_err(ErrorObject::internal),
                ),
                Outcome::Nothing => {
                    st.engine.abandon(id);
                    None
                }
            };
            (msg, st.drained(), unkept)
        };
        match msg {
            Some(m) => self.send(Some(m), Some(id)),
            // Cancelled: the transport ends the request's exchange (see `Outbound::unanswered`).
            None => self.unanswered(id),
        }
        if drained {
            self.release_outbound();
        }
    }

    /// The session's last request after its end is answered: the outbound goes (see
    /// `close`).
    #[cold]
    fn release_outbound(&self) {
        // Dropped after the lock: its drop may wake the transport's writer.
        let out = self.state().out.take();
        drop(out);
    }

    /// A tool's result (2025-11-25 on), written by the transport straight into the answer.
    fn finish_tool(&self, id: &RequestId, output: ToolOutput, spare: Option<Arc<Call>>) {
        // One not kept is dropped after the lock: it may hold the last handle on the session.
        let (era, drained, _unkept, out) = {
            let mut st = self.state();
            if !st.calls.is_empty() {
                st.calls.remove(id);
            }
            let unkept = st.keep(spare);
            (st.engine.answer(id), st.drained(), unkept, st.out.clone())
        };
        match (era, out) {
            (Some(era), Some(out)) => {
                // What the engine's `respond` adds to a 2026-07-28 result.
                let complete = (era == Era::Modern).then_some(ResultType::Complete);
                // A closed peer is normal at shutdown; there is no one left to tell.
                let _ = match output {
                    ToolOutput::Text(text) => {
                        let result = TextToolResult {
                            text: &text,
                            result_type: complete,
                        };
                        out.send_result(id, &result, Some(id))
                    }
                    ToolOutput::Result(mut result) => {
                        if result.result_type.is_none() {
                            result.result_type = complete;
                        }
                        out.send_result(id, &result, Some(id))
                    }
                };
            }
            (Some(_), None) => {}
            // Cancelled: the transport ends the request's exchange.
            (None, _) => self.unanswered(id),
        }
        if drained {
            self.release_outbound();
        }
    }

    /// 2026-07-28 `subscriptions/listen`: acknowledge what we honour, then keep the request
    /// open; notifications for it carry its id as the subscription id.
    fn listen(&self, rc: &RequestContext, filter: &SubscriptionFilter) {
        // The tasks extension: "Servers MUST return this error [-32021] for non-declaring
        // clients requesting task notifications on `subscriptions/listen`."
        if filter.extra.get("taskIds").is_some_and(|v| !v.is_null())
            && !mcp_core::types::tasks_ext::declared_by(&rc.client_capabilities)
        {
            let e = mcp_core::types::tasks_ext::missing_extension_error();
            return self.finish(&rc.id, &rc.method, rc.protocol_version, Outcome::Error(e));
        }
        let flag = |f: Option<bool>| f.unwrap_or(false);
        let caps = self.shared.engine_config.capabilities();
        let listen = Listen {
            tools: flag(filter.tools_list_changed) && caps.get("tools").is_some(),
            prompts: flag(filter.prompts_list_changed) && caps.get("prompts").is_some(),
            resources: flag(filter.resources_list_changed) && caps.get("resources").is_some(),
            uris: honoured_uris(filter.resource_subscriptions.as_deref().unwrap_or_default()),
        };
        let mut honoured = serde_json::Map::new();
        if listen.tools {
            honoured.insert("toolsListChanged".into(), json!(true));
        }
        if listen.prompts {
            honoured.insert("promptsListChanged".into(), json!(true));
        }
        if listen.resources {
            honoured.insert("resourcesListChanged".into(), json!(true));
        }
        if !listen.uris.is_empty() {
            let uris: Vec<&String> = listen.uris.iter().collect();
            honoured.insert("resourceSubscriptions".into(), json!(uris));
        }
        self.state().listens.insert(rc.id.clone(), listen);
        let ack = Notification::new(
            methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
            &json!({
                "notifications": honoured,
                "_meta": { "io.modelcontextprotocol/subscriptionId": rc.id.to_value() },
            }),
        )
        .ok()
        .map(Message::from);
        self.send(ack, Some(&rc.id));
    }

    pub(crate) fn list_changed(&self, kind: ListKind) {
        let msgs: Vec<(Option<Message>, Option<RequestId>)> = {
            let st = self.state();
            if st.closed {
                return;
            }
            let mut v = Vec::new();
            if st.initialized {
                v.push((st.engine.list_changed(kind, None), None));
            }
            for (id, l) in &st.listens {
                let wanted = match kind {
                    ListKind::Tools => l.tools,
                    ListKind::Prompts => l.prompts,
                    ListKind::Resources => l.resources,
                };
                if wanted {
                    v.push((st.engine.list_changed(kind, Some(id)), Some(id.clone())));
                }
            }
            v
        };
        for (m, related) in msgs {
            self.broadcast(m, related.as_ref());
        }
    }

    pub(crate) fn resource_updated(&self, uri: &str) {
        let msgs: Vec<(Option<Message>, Option<RequestId>)> = {
            let st = self.state();
            if st.closed {
                return;
            }
            let mut v = Vec::new();
            if st.subscriptions.contains(uri) {
                v.push((st.engine.resource_updated(uri, None), None));
            }
            for (id, l) in &st.listens {
                if l.uris.contains(uri) {
                    v.push((st.engine.resource_updated(uri, Some(id)), Some(id.clone())));
                }
            }
            v
        };
        for (m, related) in msgs {
            self.broadcast(m, related.as_ref());
        }
    }

    /// One tick of the server's pinger (see `ping`): a ping still unanswered is a miss; after
    /// the configured number in a row the session ends, else the next ping goes out (from the
    /// executor: a send may block on a client that stopped reading).
    pub(crate) fn ping_tick(&self) {
        let Some(cfg) = self.shared.config.ping else {
            return;
        };
        let (msg, gone) = {
            let mut st = self.state();
            if st.closed {
                return;
            }
            if let Some(id) = st.ping.take() {
                // Forgotten, not cancelled: the client is not listening.
                let _ = st.engine.cancel(&id, None);
                st.missed += 1;
            }
            if st.missed >= cfg.misses {
                (None, true)
            } else {
                // Refused before `initialize` and in the 2026-07-28 era: nothing to ping.
                let sent = st.engine.request(
                    methods::PING,
                    &json!({}),
                    None,
                    Instant::now(),
                    Timeout::fixed(cfg.interval),
                );
                match sent {
                    Ok((id, m)) => {
                        st.ping = Some(id);
                        (Some(m), false)
                    }
                    Err(_) => (None, false),
                }
            }
        };
        if gone {
            let why = format!(
                "the client left {} pings in a row unanswered ({} ms apart)",
                cfg.misses,
                cfg.interval.as_millis()
            );
            log::warn!("ending the session: {why}");
            if let Some(out) = self.outbound() {
                out.end_session(&why);
            }
            Session::close(self);
            return;
        }
        if let (Some(m), Some(me)) = (msg, self.me.upgrade()) {
            // Refused when every worker is busy: then this ping counts as missed.
            let _ = self.shared.pool.try_execute(move || me.send(Some(m), None));
        }
    }

    fn cancel_call(&self, id: &RequestId) {
        let mut st = self.state();
        if let Some(call) = st.calls.get(id) {
            call.cancel.fire();
        }
        st.listens.remove(id);
        // Wake the handler if it waits for the client on this request's behalf.
        let waiting: Vec<RequestId> = st
            .waiters
            .iter()
            .filter(|(_, (rel, _))| rel == id)
            .map(|(k, _)| k.clone())
            .collect();
        for k in waiting {
            if let Some((_, w)) = st.waiters.remove(&k) {
                let _ = w.try_send(Err(Error::Cancelled));
            }
        }
    }
}

impl Session for KitSession {
    fn handle(&self, msg: Message) {
        // Only a notification's handling reads the time (a progress report restarts its
        // request's timeout): a request or an answer costs no clock read.
        let now = match msg {
            Message::Notification(_) => Instant::now(),
            _ => self.opened,
        };
        let step = self.state().engine.handle(msg, now);
        match step {
            ServerStep::Reply(m) => self.reply(m),
            ServerStep::Dispatch(rc) => self.dispatch(rc),
            ServerStep::Notice(ClientNotice::Initialized) => self.state().initialized = true,
            ServerStep::Notice(_) => {}
            ServerStep::Cancel { id, .. } => self.on_cancel(&id),
            ServerStep::Answer(a) => self.on_answer(a),
            ServerStep::Progress(_) | ServerStep::Nothing => {}
        }
    }

    /// The usual `tools/call` of a legacy session (no `_meta`, no task, nothing escaped),
    /// served from the line it came in: nothing of the envelope is built, and the handler's
    /// arguments are typed straight from the text. Only where handlers run on the reader
    /// (stdio), since the handler borrows the line. Everything this declines (before acting
    /// on the line in any way) reaches `handle` decoded, and takes the general way.
    fn handle_line(&self, line: &str) -> bool {
        if !self.info.handle_may_block {
            return false;
        }
        // The params are checked and taken apart as a call's in one scan (any method's:
        // which one it is may come after them).
        let Some((view, Some(Some(call)))) = RequestView::read_with(line, CallText::read_checked)
        else {
            return false;
        };
        let (true, Some(params), false) = (
            view.method == methods::TOOLS_CALL,
            view.params,
            call.has_meta(),
        ) else {
            return false;
        };
        let method = methods::TOOLS_CALL;
        // A legacy session's call is never a task (`tasks::plain_call`). The last quick
        // call's context, if nothing kept it, serves this one: the session's facts are in it
        // already, and taking them anew (the link, the client's capabilities and
        // `Implementation`) would be three reference counts up and down, atomic operations
        // that cost a call on this path more than its JSON does.
        let lazy = self.lazy_calls();
        let taken = {
            let mut st = self.state();
            match st.spare.take().filter(|_| lazy) {
                Some(spare) => match st.engine.admit_plain(&view.id, method) {
                    Some(_) => Some(Taken::Spare(spare)),
                    None => {
                        st.spare = Some(spare);
                        None
                    }
                },
                None => st.engine.take_plain(&view.id, method).map(Taken::Head),
            }
        };
        let Some(taken) = taken else {
            return false;
        };
        let version = match &taken {
            Taken::Spare(c) => c.version,
            Taken::Head(h) => h.protocol_version,
        };
        let name = call.name(params);
        if let Err(wait) = self.admit_call(name, version) {
            self.refuse_id(&view.id, version, method, Limited::ToolCall, wait);
            return true;
        }
        let run = |s: &Shared, ctx: &Context| {
            let args = dispatch::CallArgs::Text(call.arguments(params));
            let outcome = dispatch::call_tool_with(s, name, args, (None, None), ctx);
            #[cfg(feature = "tasks")]
            let outcome = tasks::continued(s, ctx, outcome);
            outcome
        };
        let head = match taken {
            Taken::Spare(mut spare) => match Arc::get_mut(&mut spare) {
                Some(free) => {
                    free.renew(view.id);
                    free.keep_tool(&self.shared, name);
                    self.run_call(spare, true, method, run);
                    return true;
                }
                // A handler kept its context: this call gets its own.
                None => spare.head(),
            },
            Taken::Head(head) => head,
        };
        self.run_here(view.id, head, method, run);
        true
    }

    fn close(&self) {
        // The spare call holds the session: dropped after the lock, which is the session's.
        let (idle, _spare) = {
            let mut st = self.state();
            st.closed = true;
            let spare = st.spare.take();
            for call in st.calls.values() {
                call.cancel.fire_on_close();
            }
            for (_, (_, w)) in st.waiters.drain() {
                let _ = w.try_send(Err(Error::Cancelled));
            }
            // Open subscriptions end with the session: nothing more is sent on them.
            let State {
                listens, engine, ..
            } = &mut *st;
            for id in listens.keys() {
                engine.abandon(id);
            }
            listens.clear();
            (st.drained(), spare)
        };
        // Requests read before the end are still answered (JSON-RPC: every request gets its
        // response): the outbound stays until the last of them is, and then goes, which lets
        // the transport's writer end (it drains until every sender is gone or its grace ends).
        if idle {
            self.release_outbound();
        }
    }

    fn stream_closed(&self, id: &RequestId) {
        // Over 2026-07-28 HTTP a closed response stream is the cancellation; a legacy stream
        // may be resumed, so its request goes on.
        let modern = {
            let st = self.state();
            st.listens.contains_key(id)
                || st
                    .calls
                    .get(id)
                    .is_some_and(|c| c.version.era() == Era::Modern)
        };
        if modern || self.info.transport != TransportKind::StreamableHttp {
            self.cancel_call(id);
            self.state().engine.abandon(id);
        }
    }
}

/// The most resources one session may be subscribed to, and the most bytes their URIs may
/// take in all: a client (any of up to a thousand HTTP sessions) must not grow the server's
/// memory one `resources/subscribe` at a time.
const MAX_SUBSCRIPTIONS: usize = 1024;
const MAX_SUBSCRIPTION_BYTES: usize = 128 * 1024;

impl State {
    /// Closed, with no request left in flight: nothing more will be answered.
    fn drained(&self) -> bool {
        self.closed && self.engine.load().0 == 0
    }

    /// Keeps `spare` for the next quick call while the session is open and has none; returns
    /// it otherwise, for the caller to drop once the lock is let go.
    fn keep(&mut self, spare: Option<Arc<Call>>) -> Option<Arc<Call>> {
        if self.closed || self.spare.is_some() {
            return spare;
        }
        self.spare = spare;
        None
    }

    /// Adds a subscription; -32602 beyond the session's limits (one already held is fine).
    fn subscribe(&mut self, uri: String) -> Result<(), ErrorObject> {
        if self.subscriptions.contains(&uri) {
            return Ok(());
        }
        if self.subscriptions.len() >= MAX_SUBSCRIPTIONS
            || self.subscription_bytes + uri.len() > MAX_SUBSCRIPTION_BYTES
        {
            return Err(ErrorObject::invalid_params(format!(
                "too many subscriptions: a session may hold {MAX_SUBSCRIPTIONS} resources, \
                 {MAX_SUBSCRIPTION_BYTES} bytes of URIs in all"
            )));
        }
        self.subscription_bytes += uri.len();
        self.subscriptions.insert(uri);
        Ok(())
    }

    /// Drops a subscription, and the table's room once it is mostly empty.
    fn unsubscribe(&mut self, uri: &str) {
        if self.subscriptions.remove(uri) {
            self.subscription_bytes -= uri.len();
            if self.subscriptions.len() < self.subscriptions.capacity() / 4 {
                self.subscriptions.shrink_to_fit();
            }
        }
    }
}

/// The URIs of a `subscriptions/listen` the server honours: the first ones, within the limits
/// of `resources/subscribe` (the acknowledgement names them, as the spec lets a server honour
/// a subset), so that one request cannot grow the server's memory without bound.
fn honoured_uris(asked: &[String]) -> HashSet<String> {
    let mut uris = HashSet::new();
    let mut bytes = 0;
    for uri in asked {
        if uris.len() >= MAX_SUBSCRIPTIONS || bytes + uri.len() > MAX_SUBSCRIPTION_BYTES {
            break;
        }
        if uris.insert(uri.clone()) {
            bytes += uri.len();
        }
    }
    uris
}

/// How many session-kept request states live at once; the oldest go first.
const STASH_LIMIT: usize = 64;

/// And how many bytes they hold: a state binds the call's arguments, so 64 of a client's
/// 4 MiB calls that it never retries held 390 MB. The newest is kept whatever its size (its
/// exchange is the one under way).
const STASH_BYTES: usize = 16 * 1024 * 1024;

impl Link for KitSession {
    fn will_await_peer(&self, call: &Arc<Call>) -> bool {
        if !call.listed.load(Ordering::Acquire) {
            // Listed before the reading moves on, under the lock `finish` takes after it
            // marks the call over: a call is never listed after its answer.
            let mut st = self.state();
            if !call.listed.swap(true, Ordering::AcqRel) {
                st.calls.insert(call.id.clone(), Arc::clone(call));
            }
        }
        self.outbound().is_none_or(|out| out.will_await_peer())
    }

    fn stash(&self, payload: Vec<u8>) -> String {
        let mut st = self.state();
        let n = st.stash_next;
        st.stash_next += 1;
        st.stash_bytes += payload.len();
        st.stash.push_back((n, payload));
        while st.stash.len() > STASH_LIMIT || (st.stash_bytes > STASH_BYTES && st.stash.len() > 1) {
            if let Some((_, old)) = st.stash.pop_front() {
                st.stash_bytes -= old.len();
            }
        }
        n.to_string()
    }

    fn sealer(&self) -> Option<&dyn mcp_core::service::Sealer> {
        self.info.sealer.as_deref()
    }

    fn unstash(&self, handle: &str) -> Option<Vec<u8>> {
        let n: u64 = handle.parse().ok()?;
        let st = self.state();
        st.stash
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, p)| p.clone())
    }

    fn progress(&self, call: &Call, progress: f64, total: Option<f64>, message: Option<&str>) {
        let m = self
            .state()
            .engine
            .progress(&call.id, progress, total, message);
        // Only what would go out takes a token (not a notification the engine left out).
        if m.is_some() && !self.notice_allowed(Limited::Progress, call.version) {
            return;
        }
        self.send(m, Some(&call.id));
    }

    fn log(&self, call: &Call, level: LoggingLevel, logger: Option<&str>, data: Value) {
        let m = self.state().engine.log(level, logger, data, Some(&call.id));
        // Only what passes the client's log level takes a token.
        if m.is_some() && !self.notice_allowed(Limited::Log, call.version) {
            return;
        }
        self.send(m, Some(&call.id));
    }

    fn close_stream(&self, call: &Call) -> bool {
        self.outbound()
            .is_some_and(|out| out.close_stream(&call.id))
    }

    fn states(&self) -> Option<&crate::shared::States> {
        Some(&self.shared.config.states)
    }

    fn request(
        &self,
        call: &Arc<Call>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, Error> {
        // Only a reader can deliver the answer: if this runs on the stdio reader (a quick
        // handler), the reading goes to another thread first; with none free, nothing is
        // asked (the answer could not be read).
        if !self.will_await_peer(call) {
            return Err(Error::Protocol(busy()));
        }
        let (tx, rx) = bounded(1);
        let (oid, msg) = {
            let mut st = self.state();
            if st.closed || call.cancel.is_fired() {
                return Err(Error::Cancelled);
            }
            let (oid, msg) = st
                .engine
                .request(
                    method,
                    &params,
                    Some(call.id.clone()),
                    Instant::now(),
                    Timeout::fixed(timeout),
                )
                .map_err(refused)?;
            st.waiters.insert(oid.clone(), (call.id.clone(), tx));
            (oid, msg)
        };
        let sent = self
            .outbound()
            .is_some_and(|out| out.send(msg, Some(&call.id)).is_ok());
        if !sent {
            let mut st = self.state();
            st.waiters.remove(&oid);
            if st.closed || call.cancel.is_fired() {
                return Err(Error::Cancelled);
            }
            // Still open, yet the question could not go out: this exchange cannot carry it
            // (an HTTP client that accepts only JSON). Said now, not after the timeout.
            return Err(Error::Unsupported(format!(
                "{method} cannot reach the client: its connection for this request carries no \
                 requests of the server's (it accepts only JSON)"
            )));
        }
        match rx.recv_timeout(timeout) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => {
                let cancel = {
                    let mut st = self.state();
                    st.waiters.remove(&oid);
                    st.engine.cancel(&oid, Some("timed out"))
                };
                self.send(cancel, Some(&call.id));
                Err(Error::Timeout)
            }
            Err(RecvTimeoutError::Disconnected) => Err(Error::Cancelled),
        }
    }
}

/// Turns a handler's outcome into busy when it was stopped because it could not wait for the
/// client (`Cancel::fire_busy`): it may have returned `Cancelled`, which would leave the request
/// unanswered, or anything else after it was told to stop. (In place: an outcome is large, and
/// passing it through would copy it.)
#[inline]
fn settled(ctx: &Context, outcome: &mut Outcome) {
    if ctx.call.cancel.refused_busy() {
        *outcome = Outcome::Error(busy());
    }
}

/// The answer to a request refused because no thread could read while it blocked.
fn busy() -> ErrorObject {
    ErrorObject::new(
        codes::SERVER_BUSY,
        "server busy: every handler thread waits for the client; retry once earlier requests \
         are answered",
    )
}

fn refused(r: mcp_core::engine::Refused) -> Error {
    use mcp_core::engine::Refused as R;
    match r {
        R::MissingCapability { capability, .. } => Error::MissingCapability(capability),
        other => Error::Refused(other),
    }
}

#[cfg(test)]
mod listen_tests {
    use super::*;

    #[test]
    fn a_listen_honours_the_first_uris_within_the_subscription_limits() {
        let many: Vec<String> = (0..5000).map(|i| format!("test://u/{i}")).collect();
        let honoured = honoured_uris(&many);
        assert_eq!(honoured.len(), MAX_SUBSCRIPTIONS);
        assert!(honoured.contains("test://u/0") && !honoured.contains("test://u/4999"));
        let big: Vec<String> = (0..40)
            .map(|i| format!("test://x/{i}/{}", "a".repeat(100_000)))
            .collect();
        let honoured = honoured_uris(&big);
        assert_eq!(honoured.len(), 1, "128 KiB of URI text holds one of 100 KB");
        // Repeats count once.
        let same = vec!["test://a".to_owned(); 3000];
        assert_eq!(honoured_uris(&same).len(), 1);
    }
}

#[cfg(test)]
mod typed_dispatch_tests {
    use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

    use mcp_core::jsonrpc::decode;
    use mcp_core::service::{Closed, Service};

    use super::*;
    use crate::{NoArgs, Server, Tool};

    struct Collect(Mutex<SyncSender<Message>>);

    impl Outbound for Collect {
        fn send(&self, msg: Message, _related: Option<&RequestId>) -> Result<(), Closed> {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .send(msg)
                .map_err(|_| Closed)
        }
    }

    fn open() -> (Arc<dyn Session>, Receiver<Message>) {
        let tool = Tool::new("quiet", |_: NoArgs, _: &Context| Ok::<_, Error>("ok"));
        let server = Server::builder("t", "1").tool(tool).build().unwrap();
        // Each test reads every answer before it sends the next request: one slot would do.
        let (tx, rx) = sync_channel(8);
        let s = server.open(
            SessionInfo::new(TransportKind::Memory),
            Arc::new(Collect(Mutex::new(tx))),
        );
        (s, rx)
    }

    /// Sends one request and returns the answer's `error` (the handlers are quick and run
    /// inline, so the answer is the next message).
    fn error_of(s: &dyn Session, rx: &Receiver<Message>, method: &str, params: Value) -> Value {
        let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        s.handle(decode(msg.to_string().as_bytes()).unwrap());
        let m = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let v: Value = serde_json::from_slice(&m.to_vec()).unwrap();
        v["error"].clone()
    }

    /// An outbound whose `send` waits (as a client that stopped reading makes it) and whose
    /// `send_nowait` records: the way a broadcast goes out.
    struct Stalled(Mutex<Vec<String>>);

    impl Outbound for Stalled {
        fn send(&self, msg: Message, _related: Option<&RequestId>) -> Result<(), Closed> {
            if msg.is_response() {
                return Ok(());
            }
            panic!("a broadcast waited for room: {:?}", msg.method());
        }
        fn send_nowait(&self, msg: Message, _related: Option<&RequestId>) -> Result<(), Closed> {
            let method = msg.method().unwrap_or_default().to_owned();
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(method);
            Err(Closed)
        }
    }

    /// A list or resource change reaches every session from whichever thread caused it
    /// (another client's handler, a timer): it goes out without waiting for a client that
    /// does not read, which would hold that thread for the send timeout.
    #[test]
    fn broadcasts_never_wait_for_a_client_that_does_not_read() {
        let tool = Tool::new("quiet", |_: NoArgs, _: &Context| Ok::<_, Error>("ok"));
        let server = Server::builder("t", "1").tool(tool).build().unwrap();
        let out = Arc::new(Stalled(Mutex::new(Vec::new())));
        let s = server.open(SessionInfo::new(TransportKind::Memory), out.clone());
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}});
        s.handle(decode(init.to_string().as_bytes()).unwrap());
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        s.handle(decode(done.to_string().as_bytes()).unwrap());
        let sub = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
            "params": {"uri": "test://r"}});
        s.handle(decode(sub.to_string().as_bytes()).unwrap());
        server.list_changed(mcp_core::engine::ListKind::Tools);
        server.resource_updated("test://r");
        let sent = out.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        assert!(
            sent.contains(&"notifications/tools/list_changed".to_owned()),
            "{sent:?}"
        );
    }

    /// Session-kept request states (2026-07-28 `input_required` over stdio) are bounded in
    /// bytes as well as in number: a client that never retries its large calls does not
    /// grow the server by their arguments.
    #[test]
    fn kept_request_states_are_bounded_in_bytes() {
        let server = Server::builder("t", "1").build().unwrap();
        let (tx, _rx) = sync_channel(8);
        let s = KitSession::new(
            server.shared(),
            SessionInfo::new(TransportKind::Memory),
            Arc::new(Collect(Mutex::new(tx))),
        );
        let big = 4 * 1024 * 1024;
        let handles: Vec<String> = (0..20).map(|_| s.stash(vec![7; big])).collect();
        let held: usize = s.state().stash.iter().map(|(_, p)| p.len()).sum();
        assert!(held <= STASH_BYTES, "{held} bytes kept");
        assert_eq!(held, s.state().stash_bytes);
        // The newest are the ones kept; the oldest are gone.
        assert_eq!(s.unstash(&handles[19]).map(|p| p.len()), Some(big));
        assert!(s.unstash(&handles[0]).is_none());
        // One state larger than the bound is still kept: its exchange is under way.
        let huge = s.stash(vec![1; STASH_BYTES + 1]);
        assert!(s.unstash(&huge).is_some());
        assert_eq!(s.state().stash.len(), 1);
        // Small states: the count bound.
        for _ in 0..100 {
            s.stash(vec![0; 10]);
        }
        assert_eq!(s.state().stash.len(), STASH_LIMIT);
    }

    #[test]
    fn methods_outside_the_typed_set_or_not_served_are_not_found() {
        let (s, rx) = open();
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}});
        assert!(error_of(&*s, &rx, "initialize", init).is_null());
        // Unknown; known but for a capability this server lacks; known but run by no kit.
        for (method, params) in [
            ("tools/nope", json!({})),
            ("completion/complete", json!({})),
            ("tasks/get", json!({"taskId": "t"})),
        ] {
            let e = error_of(&*s, &rx, method, params);
            assert_eq!(e["code"], -32601, "{method}: {e}");
        }
    }

    #[test]
    fn params_that_do_not_fit_their_type_are_invalid_params_naming_method_and_field() {
        let (s, rx) = open();
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}});
        assert!(error_of(&*s, &rx, "initialize", init).is_null());
        for (method, params, field) in [
            ("tools/call", json!({"arguments": {}}), "name"),
            (
                "tools/call",
                json!({"name": "quiet", "arguments": 5}),
                "map",
            ),
            ("tools/list", json!({"cursor": 5}), "string"),
        ] {
            let e = error_of(&*s, &rx, method, params);
            assert_eq!(e["code"], -32602, "{method}: {e}");
            let text = e["message"].as_str().unwrap();
            assert!(text.contains(method) && text.contains(field), "{e}");
        }
        // The same session still serves a call whose params fit.
        assert!(error_of(&*s, &rx, "tools/call", json!({"name": "quiet"})).is_null());
    }
}
