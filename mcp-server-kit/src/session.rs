//! One session: the engine for one peer, the requests in flight, and the waits of handlers
//! that asked the client something.
//!
//! Locking rule: the session's state lock is never held while sending, because a send may block
//! on a back-pressured transport, and the transport's reader must still be able to deliver the
//! messages (answers, cancellations) that unblock it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use mcp_core::engine::{
    ClientNotice, ListKind, Outcome as EngineOutcome, RequestContext, ServerEngine, ServerStep,
    Timeout,
};
use mcp_core::jsonrpc::{ErrorObject, Message, Notification, RequestId};
use mcp_core::service::{Outbound, Session, SessionInfo, TransportKind};
use mcp_core::types::LoggingLevel;
use mcp_core::{Era, ProtocolVersion};
use serde_json::{Value, json};

use crate::context::{Call, Context, Inputs, Link};
use crate::dispatch::{self, Outcome};
use crate::error::Error;
use crate::shared::Shared;

type Waiter = SyncSender<Result<Value, Error>>;

/// A 2026-07-28 `subscriptions/listen` stream and what it opted in to.
struct Listen {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: HashSet<String>,
}

struct State {
    engine: ServerEngine,
    calls: HashMap<RequestId, Arc<Call>>,
    /// Our requests to the client: who waits for the answer, and for which client request.
    waiters: HashMap<RequestId, (RequestId, Waiter)>,
    subscriptions: HashSet<String>,
    listens: HashMap<RequestId, Listen>,
    /// Request states kept in the session (see `dispatch::seal_state`), newest last.
    stash: VecDeque<(u64, Vec<u8>)>,
    stash_next: u64,
    initialized: bool,
    closed: bool,
}

/// The kit's side of one session.
pub(crate) struct KitSession {
    shared: Arc<Shared>,
    /// Dropped at close, so a transport waiting for its last sender can finish at once.
    out: Mutex<Option<Arc<dyn Outbound>>>,
    info: SessionInfo,
    me: Weak<KitSession>,
    state: Mutex<State>,
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
            out: Mutex::new(Some(out)),
            info,
            me: me.clone(),
            state: Mutex::new(State {
                engine,
                calls: HashMap::new(),
                waiters: HashMap::new(),
                subscriptions: HashSet::new(),
                listens: HashMap::new(),
                stash: VecDeque::new(),
                stash_next: 0,
                initialized: false,
                closed: false,
            }),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn outbound(&self) -> Option<Arc<dyn Outbound>> {
        self.out.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn send(&self, msg: Option<Message>, related: Option<&RequestId>) {
        if let (Some(m), Some(out)) = (msg, self.outbound()) {
            // A closed peer is normal at shutdown; there is no one left to tell.
            let _ = out.send(m, related);
        }
    }

    fn dispatch(&self, rc: RequestContext) {
        let params: Value = match rc.params::<SansMeta>() {
            Ok(p) => p.0,
            // Params that are no object (the kit reads none of those as anything).
            Err(_) => rc.params().unwrap_or(Value::Null),
        };
        let version = rc.protocol_version;
        match rc.method.as_str() {
            "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
                let outcome = dispatch::list(&self.shared, &rc.method, &params, version);
                self.finish(&rc.id, &rc.method, version, outcome);
            }
            "resources/subscribe" | "resources/unsubscribe" => {
                let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                    let e = Outcome::Error(ErrorObject::invalid_params("missing uri"));
                    self.finish(&rc.id, &rc.method, version, e);
                    return;
                };
                {
                    let mut st = self.state();
                    if rc.method == "resources/subscribe" {
                        st.subscriptions.insert(uri.to_owned());
                    } else {
                        st.subscriptions.remove(uri);
                    }
                }
                self.finish(&rc.id, &rc.method, version, Outcome::Result(json!({})));
            }
            "subscriptions/listen" => self.listen(&rc, &params),
            "tools/call" | "prompts/get" | "resources/read" | "completion/complete" => {
                self.spawn_handler(rc, params)
            }
            other => {
                let e = ErrorObject::method_not_found(other);
                self.finish(&rc.id, &rc.method, version, Outcome::Error(e));
            }
        }
    }

    fn spawn_handler(&self, rc: RequestContext, params: Value) {
        let Some(me) = self.me.upgrade() else { return };
        let link: Arc<dyn Link> = me.clone();
        let call = Arc::new(Call {
            id: rc.id.clone(),
            version: rc.protocol_version,
            client_info_raw: rc.client_info.clone(),
            client_info: OnceLock::new(),
            client_capabilities: Arc::clone(&rc.client_capabilities),
            auth: self.info.auth.clone(),
            param_headers: self.info.param_headers.clone(),
            cancelled: AtomicBool::new(false),
            timeout: self.shared.config.client_request_timeout,
            link,
            inputs: Mutex::new(Inputs::default()),
        });
        self.state().calls.insert(rc.id.clone(), Arc::clone(&call));
        let method = rc.method;
        let job: Box<dyn FnOnce() + Send> = Box::new(move || {
            let ctx = Context { call };
            let shared = &me.shared;
            let outcome = match method.as_str() {
                "tools/call" => dispatch::call_tool(shared, params, &ctx),
                "prompts/get" => dispatch::get_prompt(shared, &params, &ctx),
                "resources/read" => dispatch::read_resource(shared, &params, &ctx),
                _ => dispatch::complete(shared, &params, &ctx),
            };
            me.finish(&ctx.call.id, &method, ctx.call.version, outcome);
        });
        if self.info.handle_may_block {
            // The transport hands reading to another thread if this blocks: no hand-off to a
            // worker, which is what a quick handler costs least with.
            job();
        } else if let Err(job) = self.shared.pool.submit(job) {
            // The pool is shutting down; run inline rather than leave the request unanswered.
            job();
        }
    }

    /// Sends the answer to client request `id` (or, when it was cancelled, nothing).
    fn finish(&self, id: &RequestId, method: &str, version: ProtocolVersion, outcome: Outcome) {
        let outcome = match outcome {
            Outcome::Result(v) => match dispatch::shape(method, v, version) {
                Ok(v) => Outcome::Result(v),
                Err(e) => Outcome::Error(e),
            },
            other => other,
        };
        let msg = {
            let mut st = self.state();
            st.calls.remove(id);
            match outcome {
                Outcome::Result(v) => st.engine.respond_value(id, Ok(v)),
                Outcome::Error(e) => st.engine.respond_value(id, Err(e)),
                Outcome::Raw(r) => st.engine.respond(id, Ok(r)),
                Outcome::Nothing => {
                    st.engine.abandon(id);
                    None
                }
            }
        };
        self.send(msg, Some(id));
    }

    /// 2026-07-28 `subscriptions/listen`: acknowledge what we honour, then keep the request
    /// open; notifications for it carry its id as the subscription id.
    fn listen(&self, rc: &RequestContext, params: &Value) {
        let filter = params.get("notifications").cloned().unwrap_or(json!({}));
        let flag = |k: &str| filter.get(k).and_then(Value::as_bool).unwrap_or(false);
        let caps = &self.shared.engine_config.capabilities;
        let listen = Listen {
            tools: flag("toolsListChanged") && caps.get("tools").is_some(),
            prompts: flag("promptsListChanged") && caps.get("prompts").is_some(),
            resources: flag("resourcesListChanged") && caps.get("resources").is_some(),
            uris: filter
                .get("resourceSubscriptions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
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
            "notifications/subscriptions/acknowledged",
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
            self.send(m, related.as_ref());
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
            self.send(m, related.as_ref());
        }
    }

    fn cancel_call(&self, id: &RequestId) {
        let mut st = self.state();
        if let Some(call) = st.calls.get(id) {
            call.cancelled.store(true, Ordering::Release);
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
        let step = self.state().engine.handle(msg, Instant::now());
        match step {
            ServerStep::Reply(m) => {
                let related = m.id().cloned();
                self.send(Some(m), related.as_ref());
            }
            ServerStep::Dispatch(rc) => self.dispatch(rc),
            ServerStep::Notice(ClientNotice::Initialized) => self.state().initialized = true,
            ServerStep::Notice(_) => {}
            ServerStep::Cancel { id, .. } => self.cancel_call(&id),
            ServerStep::Answer(a) => {
                let waiter = self.state().waiters.remove(&a.id);
                if let Some((_, w)) = waiter {
                    let r = match a.outcome {
                        EngineOutcome::Complete(raw) | EngineOutcome::Other { result: raw, .. } => {
                            serde_json::from_str(raw.get())
                                .map_err(|e| Error::BadAnswer(e.to_string()))
                        }
                        EngineOutcome::InputRequired(_) => Err(Error::BadAnswer(
                            "the client answered with input_required".into(),
                        )),
                        EngineOutcome::Error(e) => Err(Error::Peer(e)),
                    };
                    let _ = w.try_send(r);
                }
            }
            ServerStep::Progress(_) | ServerStep::Nothing => {}
        }
    }

    fn close(&self) {
        self.out.lock().unwrap_or_else(|p| p.into_inner()).take();
        let mut st = self.state();
        st.closed = true;
        for call in st.calls.values() {
            call.cancelled.store(true, Ordering::Release);
        }
        for (_, (_, w)) in st.waiters.drain() {
            let _ = w.try_send(Err(Error::Cancelled));
        }
        st.listens.clear();
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

/// How many session-kept request states live at once; the oldest go first.
const STASH_LIMIT: usize = 64;

impl Link for KitSession {
    fn stash(&self, payload: Vec<u8>) -> String {
        let mut st = self.state();
        let n = st.stash_next;
        st.stash_next += 1;
        if st.stash.len() >= STASH_LIMIT {
            st.stash.pop_front();
        }
        st.stash.push_back((n, payload));
        n.to_string()
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
        self.send(m, Some(&call.id));
    }

    fn log(&self, call: &Call, level: LoggingLevel, logger: Option<&str>, data: Value) {
        let m = self.state().engine.log(level, logger, data, Some(&call.id));
        self.send(m, Some(&call.id));
    }

    fn close_stream(&self, call: &Call) -> bool {
        self.outbound()
            .is_some_and(|out| out.close_stream(&call.id))
    }

    fn request(
        &self,
        call: &Call,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, Error> {
        let (tx, rx) = sync_channel(1);
        let (oid, msg) = {
            let mut st = self.state();
            if st.closed || call.cancelled.load(Ordering::Acquire) {
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
            self.state().waiters.remove(&oid);
            return Err(Error::Cancelled);
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

fn refused(r: mcp_core::engine::Refused) -> Error {
    use mcp_core::engine::Refused as R;
    match r {
        R::MissingCapability { capability, .. } => Error::MissingCapability(capability),
        other => Error::Unsupported(format!("{other}")),
    }
}

/// A request's params object without its `_meta`, which the engine has read already (and no
/// handler of the kit reads): in the 2026-07-28 era that envelope is on every request, and
/// building it into a `Value` tree each time is wasted work.
struct SansMeta(Value);

impl<'de> serde::Deserialize<'de> for SansMeta {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = SansMeta;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a params object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<SansMeta, A::Error> {
                let mut m = serde_json::Map::new();
                while let Some(k) = a.next_key::<String>()? {
                    if k == "_meta" {
                        a.next_value::<serde::de::IgnoredAny>()?;
                    } else {
                        let v: Value = a.next_value()?;
                        m.insert(k, v);
                    }
                }
                Ok(SansMeta(Value::Object(m)))
            }
        }
        d.deserialize_map(Fields)
    }
}

#[cfg(test)]
mod sans_meta_tests {
    use super::*;

    #[test]
    fn params_lose_their_meta_and_keep_the_rest() {
        let text = r#"{"name":"echo","_meta":{"progressToken":1,"x":[1,2]},
            "arguments":{"_meta":"kept: not at the top"},"n":null}"#;
        let SansMeta(v) = serde_json::from_str(text).unwrap();
        assert_eq!(
            v,
            json!({"name": "echo", "arguments": {"_meta": "kept: not at the top"}, "n": null})
        );
        // A key written with an escape is the same key.
        let SansMeta(v) = serde_json::from_str(r#"{"_\u006deta":{},"a":1}"#).unwrap();
        assert_eq!(v, json!({"a": 1}));
        // Anything but an object is refused (the caller then reads it as a plain Value).
        assert!(serde_json::from_str::<SansMeta>("[1]").is_err());
    }
}
