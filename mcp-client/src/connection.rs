//! One client's connection: the state every thread of the client shares (the engine, the calls
//! waiting for an answer, the open listen streams) and the reader thread that drives the
//! engine with what the server sends. A caller's side of a call (the wait, the cancel handle)
//! is in `call`, above this module.
//!
//! One mutex guards the engine and the tables; nothing blocks while holding it (no send on a
//! channel that can be full, no user callback), so the reader thread is never held up by a
//! caller and a slow server never freezes the callers.

use mcp_core::id_map::{IdMap, id_map};
use mcp_core::types::methods;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{
    Receiver, SendTimeoutError, Sender, TrySendError, at, bounded, never, select,
};
use mcp_core::engine::{
    ClientEngine, ClientStep, Outcome, PeerRequest, ProgressUpdate, SUBSCRIPTION_ID_KEY, Timeout,
};
use mcp_core::jsonrpc::{ErrorObject, Message, Notification, RequestId};
use serde_json::Value;

use crate::error::{Closed, Error, Unexpected};
use crate::handlers::Handlers;
use crate::transport::Transport;
use mcp_core::transport::Incoming;

/// A per-call progress callback.
pub type ProgressCallback = Arc<dyn Fn(&ProgressUpdate) + Send + Sync>;
/// The callback for server notifications that belong to no call and no listen stream.
pub type NotificationCallback = Arc<dyn Fn(&Notification) + Send + Sync>;

/// How many server requests (legacy era) may wait for the handler thread; more are refused
/// with an error rather than queued without bound.
const HANDLER_QUEUE: usize = 16;
/// How many notifications a listen stream buffers for a slow reader; more are dropped (with a
/// warning) so that one forgotten stream cannot stall the whole connection.
pub(crate) const LISTEN_BUFFER: usize = 256;

/// What a listen stream receives.
#[derive(Debug)]
pub(crate) enum ListenEvent {
    Notification(Notification),
    Ended(Error),
}

struct Waiter {
    reply: Sender<Result<Outcome, Error>>,
    progress: Option<ProgressCallback>,
}

pub(crate) struct State {
    pub engine: ClientEngine,
    out: Option<Sender<Message>>,
    pending: IdMap<Waiter>,
    listeners: IdMap<Sender<ListenEvent>>,
    closed: Option<Closed>,
}

/// The transport's close and end-reason, without its type.
pub(crate) trait Control: Send {
    fn close(&mut self) -> Result<Option<std::process::ExitStatus>, Error>;
    fn end_reason(&mut self) -> Option<Closed>;
}

impl<T: Transport> Control for T {
    fn close(&mut self) -> Result<Option<std::process::ExitStatus>, Error> {
        Transport::close(self)
    }
    fn end_reason(&mut self) -> Option<Closed> {
        Transport::end_reason(self)
    }
}

pub(crate) struct Shared {
    state: Mutex<State>,
    wake: Sender<()>,
    stop: Mutex<Option<Sender<()>>>,
    pub control: Mutex<Option<Box<dyn Control>>>,
    pub handlers: Handlers,
    notify: Option<NotificationCallback>,
    send_timeout: Duration,
    /// Dropped when the connection shuts, which wakes every wait on `closed` (a task's poll
    /// interval) at once.
    closing: Mutex<Option<Sender<()>>>,
    /// Disconnects when the connection shuts.
    pub closed: Receiver<()>,
    /// How many times the server said its tools changed (what the client learned of them
    /// before is stale).
    tools_generation: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks except on a bug; the data stays consistent
    // (every update is a single insert or remove), so keep going rather than cascade.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The parts the reader thread needs besides the shared state.
pub(crate) struct ReaderParts<I> {
    pub incoming: Receiver<I>,
    wake: Receiver<()>,
    stop: Receiver<()>,
}

impl Shared {
    pub fn new<I>(
        engine: ClientEngine,
        out: Sender<Message>,
        incoming: Receiver<I>,
        control: Box<dyn Control>,
        handlers: Handlers,
        notify: Option<NotificationCallback>,
        send_timeout: Duration,
    ) -> (Arc<Shared>, ReaderParts<I>) {
        let (wake_tx, wake_rx) = bounded(1);
        let (stop_tx, stop_rx) = bounded(0);
        let (closing, closed) = bounded(0);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                engine,
                out: Some(out),
                pending: id_map(),
                listeners: id_map(),
                closed: None,
            }),
            wake: wake_tx,
            stop: Mutex::new(Some(stop_tx)),
            control: Mutex::new(Some(control)),
            handlers,
            notify,
            send_timeout,
            closing: Mutex::new(Some(closing)),
            closed,
            tools_generation: AtomicU64::new(0),
        });
        let parts = ReaderParts {
            incoming,
            wake: wake_rx,
            stop: stop_rx,
        };
        (shared, parts)
    }

    /// The generation of the server's tool list (see `tool_tasks`).
    pub fn tools_generation(&self) -> u64 {
        self.tools_generation.load(Ordering::Acquire)
    }

    pub fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    pub fn closed_error(&self) -> Error {
        let why = self.state().closed.clone();
        Error::Closed(why.unwrap_or(Closed::Ended))
    }

    /// Sends one message, giving up after the send timeout (a server that stopped reading).
    fn send(&self, msg: Message) -> Result<(), Error> {
        self.send_within(msg, self.send_timeout)
    }

    /// Sends one message, giving up after `wait`.
    fn send_within(&self, msg: Message, wait: Duration) -> Result<(), Error> {
        let Some(out) = self.state().out.clone() else {
            return Err(self.closed_error());
        };
        match out.send_timeout(msg, wait) {
            Ok(()) => Ok(()),
            Err(SendTimeoutError::Timeout(_)) => Err(Error::SendTimeout(wait)),
            Err(SendTimeoutError::Disconnected(_)) => Err(self.closed_error()),
        }
    }

    /// Sends a `notifications/cancelled` without waiting: it follows a call that already
    /// ended (timed out, cancelled by the caller), on the caller's thread or the reader's, and
    /// neither may wait on a server that stopped reading (a `--timeout 3` call returned after
    /// 37 s when this waited the 30 s send timeout). When the way out is full, the server is
    /// not reading, and the cancellation is dropped: it would not be read either.
    fn send_cancel(&self, msg: Message) {
        let Some(out) = self.state().out.clone() else {
            return;
        };
        if out.try_send(msg).is_err() {
            log::debug!(target: "mcp_client", "a cancellation was dropped: the server is not reading");
        }
    }

    /// Sends a notification of our own.
    pub fn notify_server(&self, msg: Message) -> Result<(), Error> {
        self.send(msg)
    }

    fn send_best_effort(&self, msg: Message) {
        if let Err(e) = self.send(msg) {
            log::debug!(target: "mcp_client", "could not send: {e}");
        }
    }

    /// Sends an answer of the reader thread's own (to a `ping`, a refusal) without waiting:
    /// the reader must never stop reading for the way out, or a server slow to take our
    /// messages (one that acknowledges each POST late) would hold back the answers it already
    /// sent to our calls until they time out. When the way out is full the answer is dropped:
    /// the server is not taking what we send, and its request ends at its own timeout.
    fn reply_from_reader(&self, msg: Message) {
        let Some(out) = self.state().out.clone() else {
            return;
        };
        if out.try_send(msg).is_err() {
            log::debug!(target: "mcp_client", "an answer to the server was dropped: it is not taking our messages");
        }
    }

    /// Sends a request and registers its waiter.
    pub fn start(
        &self,
        method: &str,
        params: &Value,
        timeout: Timeout,
        progress: Option<ProgressCallback>,
    ) -> Result<(RequestId, Receiver<Result<Outcome, Error>>), Error> {
        let (tx, rx) = bounded(1);
        let (id, msg) = {
            let mut st = self.state();
            if let Some(why) = &st.closed {
                return Err(Error::Closed(why.clone()));
            }
            let (id, msg) =
                st.engine
                    .request(method, params, Instant::now(), timeout, progress.is_some())?;
            st.pending.insert(
                id.clone(),
                Waiter {
                    reply: tx,
                    progress,
                },
            );
            (id, msg)
        };
        // The reader may be sleeping until a later deadline than this request's.
        let _ = self.wake.try_send(());
        // Sending is part of the call: it may not outlast the call's own timeout.
        if let Err(e) = self.send_within(msg, self.send_timeout.min(timeout.initial)) {
            self.forget(&id);
            return Err(e);
        }
        Ok((id, rx))
    }

    /// Drops a call without telling the server (it never got it, or it is gone).
    fn forget(&self, id: &RequestId) {
        let mut st = self.state();
        st.pending.remove(id);
        let _ = st.engine.cancel(id, None);
    }

    /// Gives up on a call: tells the server (`notifications/cancelled`) and fails the waiter.
    pub fn cancel_call(&self, id: &RequestId, reason: Option<&str>, error: Error) {
        let (waiter, msg) = {
            let mut st = self.state();
            (st.pending.remove(id), st.engine.cancel(id, reason))
        };
        if let Some(m) = msg {
            self.send_cancel(m);
        }
        if let Some(w) = waiter {
            let _ = w.reply.try_send(Err(error));
        }
    }

    /// Opens a listen stream's slot: the request goes out, events come on the receiver.
    pub fn start_listen(
        &self,
        params: &Value,
        timeout: Timeout,
    ) -> Result<(RequestId, Receiver<ListenEvent>), Error> {
        let (tx, rx) = bounded(LISTEN_BUFFER);
        let (id, msg) = {
            let mut st = self.state();
            if let Some(why) = &st.closed {
                return Err(Error::Closed(why.clone()));
            }
            let (id, msg) = st.engine.request(
                methods::SUBSCRIPTIONS_LISTEN,
                params,
                Instant::now(),
                timeout,
                false,
            )?;
            st.listeners.insert(id.clone(), tx);
            (id, msg)
        };
        let _ = self.wake.try_send(());
        if let Err(e) = self.send(msg) {
            let mut st = self.state();
            st.listeners.remove(&id);
            let _ = st.engine.cancel(&id, None);
            return Err(e);
        }
        Ok((id, rx))
    }

    /// Closes a listen stream from our side.
    pub fn close_listen(&self, id: &RequestId) {
        let msg = {
            let mut st = self.state();
            st.listeners.remove(id);
            st.engine.cancel(id, None)
        };
        if let Some(m) = msg {
            self.send_cancel(m);
        }
    }

    /// Marks the connection closed and fails everything waiting on it. The first reason wins.
    pub fn shut(&self, reason: Closed) {
        let (pending, listeners, reason) = {
            let mut st = self.state();
            let reason = st.closed.get_or_insert(reason).clone();
            st.out = None;
            (
                std::mem::take(&mut st.pending),
                std::mem::take(&mut st.listeners),
                reason,
            )
        };
        lock(&self.closing).take();
        for (_, w) in pending {
            let _ = w.reply.try_send(Err(Error::Closed(reason.clone())));
        }
        for (_, l) in listeners {
            let _ = l.try_send(ListenEvent::Ended(Error::Closed(reason.clone())));
        }
    }

    /// Stops the reader thread (dropping its stop channel wakes it).
    pub fn stop_reader(&self) {
        lock(&self.stop).take();
    }

    pub fn is_closed(&self) -> bool {
        self.state().closed.is_some()
    }
}

/// Starts the reader thread, and the thread that runs the handlers for legacy server requests.
pub(crate) fn spawn_reader<I: Into<Incoming> + Send + 'static>(
    shared: Arc<Shared>,
    parts: ReaderParts<I>,
) -> Result<JoinHandle<()>, Error> {
    let (jobs_tx, jobs_rx) = bounded::<PeerRequest>(HANDLER_QUEUE);
    let worker = Arc::downgrade(&shared);
    thread::Builder::new()
        .name("mcp-client-handlers".into())
        .spawn(move || run_handlers(&worker, &jobs_rx))?;
    let reader = thread::Builder::new()
        .name("mcp-client-reader".into())
        .spawn(move || {
            let _guard = ShutOnPanic(Arc::clone(&shared));
            let reason = read_loop(&shared, &parts, &jobs_tx);
            drop(jobs_tx);
            let reason = match reason {
                Some(r) => r,
                // Closed by the client meanwhile: its reason stands.
                None if shared.is_closed() => Closed::ByClient,
                None => {
                    let told = lock(&shared.control).as_mut().and_then(|c| c.end_reason());
                    told.unwrap_or(Closed::Ended)
                }
            };
            shared.shut(reason);
        })?;
    Ok(reader)
}

/// Fails every waiting call if the reader thread unwinds, so no caller waits for an answer
/// that no thread will deliver.
struct ShutOnPanic(Arc<Shared>);

impl Drop for ShutOnPanic {
    fn drop(&mut self) {
        if thread::panicking() {
            self.0.shut(Closed::ReaderPanicked);
        }
    }
}

/// Runs user code (a callback) so that its panic is logged, not spread to the client's own
/// threads.
fn guarded<R>(what: &str, f: impl FnOnce() -> R) -> Option<R> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(_) => {
            log::error!(target: "mcp_client", "the {what} panicked");
            None
        }
    }
}

/// Runs until the transport ends (returns `None`: ask the transport why) or the client stops
/// it (returns the reason).
fn read_loop<I: Into<Incoming>>(
    shared: &Shared,
    parts: &ReaderParts<I>,
    jobs: &Sender<PeerRequest>,
) -> Option<Closed> {
    loop {
        let deadline = shared.state().engine.next_deadline();
        let timer = deadline.map_or_else(never, at);
        select! {
            recv(parts.incoming) -> item => match item {
                Ok(item) => {
                    if let Some(why) = on_incoming(shared, item.into(), jobs) {
                        return Some(why);
                    }
                }
                Err(_) => return None,
            },
            recv(parts.wake) -> _ => {}
            recv(parts.stop) -> _ => return Some(Closed::ByClient),
            recv(timer) -> _ => expire(shared),
        }
    }
}

fn expire(shared: &Shared) {
    let (expired, waiters) = {
        let mut st = shared.state();
        let expired = st.engine.poll(Instant::now());
        let waiters: Vec<_> = expired
            .iter()
            .map(|e| {
                let w = st.pending.remove(&e.id);
                let l = st.listeners.remove(&e.id);
                (w, l)
            })
            .collect();
        (expired, waiters)
    };
    for (e, (w, l)) in expired.into_iter().zip(waiters) {
        let timeout = || Error::Timeout {
            method: e.method.clone(),
        };
        if let Some(w) = w {
            let _ = w.reply.try_send(Err(timeout()));
        }
        if let Some(l) = l {
            let _ = l.try_send(ListenEvent::Ended(timeout()));
        }
        shared.send_cancel(e.cancel);
    }
}

/// Ends the call waiting for `id` with `error` (the engine forgets the request).
fn fail_call(shared: &Shared, id: &RequestId, error: Error) {
    let waiter = {
        let mut st = shared.state();
        let _ = st.engine.cancel(id, None);
        st.pending.remove(id)
    };
    if let Some(w) = waiter {
        let _ = w.reply.try_send(Err(error));
    }
}

/// The longest string id of a server's request this client answers. Every answer echoes its
/// request's id, and answers wait in queues bounded by count: a server sending `ping`s with
/// 8 MiB ids and taking none of the answers grew a client by gigabytes. Longer ids are dropped
/// unanswered (their requests end at the server's own timeout).
const MAX_PEER_ID_LEN: usize = 1024;

fn on_incoming(shared: &Shared, item: Incoming, jobs: &Sender<PeerRequest>) -> Option<Closed> {
    let msg = match item {
        Incoming::Message(Message::Request(r)) if matches!(&r.id, RequestId::String(s) if s.len() > MAX_PEER_ID_LEN) =>
        {
            log::warn!(
                target: "mcp_client",
                "from the server: a {} request with an id over {MAX_PEER_ID_LEN} bytes, not answered",
                r.method
            );
            return None;
        }
        Incoming::Message(m) => m,
        Incoming::Broken(why) => return Some(Closed::Broken(why.into())),
        Incoming::Malformed { id, error } => {
            log::warn!(target: "mcp_client", "from the server: {error}");
            if let Some(id) = id {
                fail_call(shared, &id, Unexpected::Malformed(error.into()).into());
            }
            return None;
        }
        Incoming::Failed { id, error } => {
            fail_call(shared, &id, Error::Transport(error));
            return None;
        }
    };
    let step = shared.state().engine.handle(msg, Instant::now());
    match step {
        ClientStep::Reply(m) => shared.reply_from_reader(m),
        ClientStep::Dispatch(req) => dispatch(shared, req, jobs),
        ClientStep::Progress(p) => {
            let cb = shared
                .state()
                .pending
                .get(&p.id)
                .and_then(|w| w.progress.clone());
            if let Some(cb) = cb {
                guarded("progress callback", || cb(&p));
            }
        }
        ClientStep::Answer(a) => {
            let (waiter, listener) = {
                let mut st = shared.state();
                (st.pending.remove(&a.id), st.listeners.remove(&a.id))
            };
            if let Some(w) = waiter {
                let _ = w.reply.try_send(Ok(a.outcome));
            } else if let Some(l) = listener {
                let end = match a.outcome {
                    Outcome::Error(e) => Error::Rpc(e),
                    _ => Error::EndedByServer { reason: None },
                };
                let _ = l.try_send(ListenEvent::Ended(end));
            }
        }
        ClientStep::EndedByServer { id, reason, .. } => {
            let (waiter, listener) = {
                let mut st = shared.state();
                (st.pending.remove(&id), st.listeners.remove(&id))
            };
            let end = || Error::EndedByServer {
                reason: reason.clone(),
            };
            if let Some(w) = waiter {
                let _ = w.reply.try_send(Err(end()));
            }
            if let Some(l) = listener {
                let _ = l.try_send(ListenEvent::Ended(end()));
            }
        }
        ClientStep::Notification(n) => on_notification(shared, n),
        ClientStep::Cancel { id, .. } => {
            log::debug!(target: "mcp_client", "the server cancelled its request {id}");
        }
        ClientStep::Ready(_) | ClientStep::HandshakeFailed(_) | ClientStep::Nothing => {}
    }
    None
}

fn subscription_of(n: &Notification) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct P {
        #[serde(rename = "_meta")]
        meta: serde_json::Map<String, Value>,
    }
    let p: P = n.params().ok()?;
    RequestId::from_value(p.meta.get(SUBSCRIPTION_ID_KEY)?)
}

fn on_notification(shared: &Shared, n: Notification) {
    if n.method == methods::NOTIFICATION_TOOLS_LIST_CHANGED {
        shared.tools_generation.fetch_add(1, Ordering::AcqRel);
    }
    if let Some(sub) = subscription_of(&n) {
        let listener = shared.state().listeners.get(&sub).cloned();
        if let Some(l) = listener {
            match l.try_send(ListenEvent::Notification(n)) {
                Ok(()) => {}
                Err(TrySendError::Full(ListenEvent::Notification(n))) => log::warn!(
                    target: "mcp_client",
                    "listen stream {sub} is not being read; dropped {}",
                    n.method
                ),
                Err(_) => {}
            }
            return;
        }
    }
    if let Some(cb) = &shared.notify {
        guarded("notification callback", || cb(&n));
    }
}

fn dispatch(shared: &Shared, req: PeerRequest, jobs: &Sender<PeerRequest>) {
    let refuse = |req: PeerRequest, why: &str| {
        let msg = shared
            .state()
            .engine
            .respond(&req.id, Err(ErrorObject::internal(why)));
        if let Some(m) = msg {
            shared.reply_from_reader(m);
        }
    };
    match jobs.try_send(req) {
        Ok(()) => {}
        Err(TrySendError::Full(req)) => refuse(req, "the client is busy with other requests"),
        Err(TrySendError::Disconnected(req)) => refuse(req, "the client is closing"),
    }
}

fn run_handlers(shared: &Weak<Shared>, jobs: &Receiver<PeerRequest>) {
    for req in jobs {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let outcome = guarded("handler", || {
            shared
                .handlers
                .answer_request(&req.method, req.params.as_deref())
        })
        .unwrap_or_else(|| Err(ErrorObject::internal("the client's handler panicked")));
        let msg = shared.state().engine.respond(&req.id, outcome);
        if let Some(m) = msg {
            shared.send_best_effort(m);
        }
    }
}
