//! Sessions of the legacy era (2024-11-05 .. 2025-11-25): one per `Mcp-Session-Id`, each with
//! its streams (one per POST that carried requests, plus the standalone GET stream, number 0),
//! the routes from request ids to streams, and resumption from the event store.
//!
//! Locks: the session's state lock may be held while a stream's lock is taken, never the other
//! way round. A stream's lock is held while a frame is sent, so frames reach a stream's channel
//! in the order of their sequence numbers, and attaching a resumed connection (replay, then
//! live) cannot lose or repeat an event.

use crate::server::lock;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_core::jsonrpc::{Message, RequestId};
use mcp_core::service::{Closed, Outbound, Session};
use mcp_core::version::ProtocolVersion;
use serde_json::Value;

use crate::server::answer::Escape;
use crate::server::config::HttpConfig;
use crate::server::http::{Frame, StreamEnd, sse_head};
use crate::server::store::EventStore;

/// A fresh session id: 24 bytes of OS randomness, hex; `None` when the OS has none to give.
pub(crate) fn new_session_id() -> Option<String> {
    let mut b = [0u8; 24];
    getrandom::fill(&mut b).ok()?;
    Some(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// How many finished POST streams keep their history for late resumption.
const KEEP_FINISHED_STREAMS: usize = 64;

/// What [`LegacySession::open_post_stream`] opened: the POST's stream, unless every request
/// it carries reused the id of one in flight (`taken`, to be refused).
pub(crate) struct PostStream {
    pub(crate) opened: Option<(Arc<Stream>, Attached)>,
    pub(crate) taken: Vec<RequestId>,
}

/// Which legacy transport a session belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Streamable HTTP, 2025-03-26 .. 2025-11-25: per-request streams, resumable.
    Streamable,
    /// HTTP+SSE of 2024-11-05: everything on the one GET stream, `event: message`.
    OldSse,
}

pub(crate) struct LegacySession {
    pub id: String,
    pub kind: Kind,
    state: Mutex<State>,
    service: OnceLock<Arc<dyn Session>>,
    seq: AtomicU64,
    /// Who the session belongs to (see `bind_owner`): a session id is no credential, so a
    /// valid token of another user does not open someone else's session.
    owner: OnceLock<Option<Value>>,
    cfg: Arc<HttpConfig>,
    store: Arc<dyn EventStore>,
}

struct State {
    last_active: Instant,
    version: Option<ProtocolVersion>,
    init_id: Option<RequestId>,
    closed: bool,
    streams: HashMap<u64, Arc<Stream>>,
    routes: mcp_core::id_map::IdMap<u64>,
    next_stream: u64,
    finished: VecDeque<u64>,
}

pub(crate) struct Stream {
    pub no: u64,
    /// A POST stream that carried one message, a request: its answer may go back as JSON.
    single: bool,
    /// Some event of the stream went to the event store (most answers go back as plain JSON
    /// and leave nothing there to forget), or a priming event gave the client an id of it: the
    /// client can resume the stream.
    stored: AtomicBool,
    inner: Mutex<StreamInner>,
}

struct StreamInner {
    tx: Option<Sender<Frame>>,
    generation: u64,
    pending: usize,
    done: bool,
    /// The client can resume this stream (an SSE answer that began with a priming event id),
    /// so the server may let go of its connection early.
    pollable: bool,
    /// Some message went out on the stream.
    sent: bool,
    /// The POST accepts only JSON: its answer holds responses only, so a request of the
    /// server's cannot travel on it.
    json_only: bool,
    /// While the POST's requests are handled inline on its thread: the pending answer,
    /// started elsewhere by the first message that is not the stream's last (see `answer::escape`).
    escape: Option<Arc<Escape>>,
}

/// What a connection gets when it attaches to a stream.
pub(crate) struct Attached {
    pub replay: Vec<Arc<[u8]>>,
    pub rx: Option<Receiver<Frame>>,
    pub generation: u64,
}

/// Why a stream could not be opened or attached.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StreamError {
    /// A live connection already holds the standalone stream.
    Busy,
    /// The per-session stream limit is reached.
    TooMany,
    /// The session is closed.
    Closed,
}

impl LegacySession {
    pub fn new(
        id: String,
        kind: Kind,
        cfg: Arc<HttpConfig>,
        store: Arc<dyn EventStore>,
    ) -> Arc<Self> {
        let mut streams = HashMap::new();
        streams.insert(0, Arc::new(Stream::new(0, 0, false)));
        // The instance tag goes in front, so a proxy routes the session to this instance.
        let id = match &cfg.instance_tag {
            Some(tag) => format!("{}.{id}", tag.as_str()),
            None => id,
        };
        Arc::new(LegacySession {
            id,
            kind,
            state: Mutex::new(State {
                last_active: Instant::now(),
                version: None,
                init_id: None,
                closed: false,
                streams,
                routes: mcp_core::id_map::id_map(),
                next_stream: 1,
                finished: VecDeque::new(),
            }),
            service: OnceLock::new(),
            seq: AtomicU64::new(0),
            owner: OnceLock::new(),
            cfg,
            store,
        })
    }

    /// Binds the session to the user whose claims opened it (see [`owner_of`]): from then on
    /// only requests of that user reach it.
    pub fn bind_owner(&self, claims: Option<&Value>) {
        let _ = self.owner.set(owner_of(claims));
    }

    /// Whether a request with `claims` comes from the user the session is bound to (always,
    /// without authorization: both sides are `None`).
    pub fn owned_by(&self, claims: Option<&Value>) -> bool {
        self.owner.get().is_none_or(|o| *o == owner_of(claims))
    }

    /// The outbound handle given to the service: it holds the session weakly, so a session
    /// the registry dropped is not kept alive by the service.
    pub fn outbound(self: &Arc<Self>) -> Arc<dyn Outbound> {
        Arc::new(LegacyOutbound(Arc::downgrade(self)))
    }

    pub fn set_service(&self, s: Arc<dyn Session>) {
        let _ = self.service.set(s);
    }

    pub fn set_init_id(&self, id: RequestId) {
        lock(&self.state).init_id = Some(id);
    }

    /// The revision negotiated by `initialize`, once the answer went out.
    pub fn version(&self) -> Option<ProtocolVersion> {
        lock(&self.state).version
    }

    pub fn touch(&self) {
        lock(&self.state).last_active = Instant::now();
    }

    /// Idle since `now - last_active`, with no connection attached to any stream.
    pub fn idle_since(&self) -> Option<Instant> {
        let st = lock(&self.state);
        if st.streams.values().any(|s| s.attached()) {
            None
        } else {
            Some(st.last_active)
        }
    }

    pub fn deliver(&self, msg: Message) {
        if let Some(s) = self.service.get() {
            s.handle(msg);
        }
    }

    fn key(&self, no: u64) -> String {
        format!("{}/{}", self.id, no)
    }

    /// Allocates a session-wide sequence number (for event ids and priming events).
    pub fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Opens the stream of one POST carrying `ids` (`single`: and nothing else), attached to
    /// a fresh channel. An id routed to a stream still open (a request of another POST in
    /// flight) is not taken from it: such ids come back in `taken`, for the caller to refuse,
    /// and the stream waits for the others only (`None` when there are none). Rerouted, the
    /// request in flight would lose its answer to the refusal of the one that reused its id.
    pub fn open_post_stream(
        &self,
        ids: &[RequestId],
        single: bool,
    ) -> Result<PostStream, StreamError> {
        let mut st = lock(&self.state);
        if st.closed {
            return Err(StreamError::Closed);
        }
        let (fresh, taken): (Vec<&RequestId>, Vec<&RequestId>) = ids.iter().partition(|id| {
            st.routes
                .get(*id)
                .is_none_or(|no| st.finished.contains(no) || !st.streams.contains_key(no))
        });
        let taken: Vec<RequestId> = taken.into_iter().cloned().collect();
        if fresh.is_empty() {
            return Ok(PostStream {
                opened: None,
                taken,
            });
        }
        let live = st.live_streams();
        if live >= self.cfg.max_streams_per_session {
            return Err(StreamError::TooMany);
        }
        let no = st.next_stream;
        st.next_stream += 1;
        let stream = Arc::new(Stream::new(no, fresh.len(), single && taken.is_empty()));
        for id in fresh {
            st.routes.insert(id.clone(), no);
        }
        st.streams.insert(no, stream.clone());
        drop(st);
        let att = stream.attach(None, self.cfg.stream_buffer, |_| Vec::new());
        Ok(PostStream {
            opened: Some((stream, att)),
            taken,
        })
    }

    /// Attaches a connection to stream `no`, replaying what came after `cursor`.
    pub fn attach(
        &self,
        no: u64,
        cursor: Option<u64>,
    ) -> Result<(Arc<Stream>, Attached), StreamError> {
        let st = lock(&self.state);
        if st.closed {
            return Err(StreamError::Closed);
        }
        let stream = st.streams.get(&no).cloned().ok_or(StreamError::Closed)?;
        if cursor.is_none() && stream.attached() {
            return Err(StreamError::Busy);
        }
        if !stream.attached() {
            let live = st.live_streams();
            if live >= self.cfg.max_streams_per_session {
                return Err(StreamError::TooMany);
            }
        }
        drop(st);
        let key = self.key(no);
        let store = self.store.clone();
        let att = stream.attach(cursor, self.cfg.stream_buffer, |c| {
            store.after_shared(&key, c)
        });
        Ok((stream, att))
    }

    /// Called when the connection of `generation` stopped writing stream `no`.
    pub fn detach(&self, stream: &Stream, generation: u64, how: StreamEnd) {
        let mut s = lock(&stream.inner);
        if s.generation == generation && how == StreamEnd::ClientGone {
            s.tx = None;
        }
    }

    /// Sends `msg` on the stream it belongs to; `wait`: for room while the reader is
    /// behind (up to the send timeout), else it is cut off at once.
    fn route(&self, msg: Message, related: Option<&RequestId>, wait: bool) -> Result<(), Closed> {
        let (stream, is_answer) = {
            let mut st = lock(&self.state);
            if st.closed {
                return Err(Closed);
            }
            if let (Message::Response(r), Some(init)) = (&msg, &st.init_id) {
                if r.id == *init {
                    st.version = r.result::<serde_json::Value>().ok().and_then(|v| {
                        v.get("protocolVersion")?
                            .as_str()
                            .and_then(ProtocolVersion::parse)
                    });
                    st.init_id = None;
                }
            }
            let (target, is_answer) = if self.kind == Kind::OldSse {
                (0, false)
            } else if msg.is_response() {
                match msg.id().and_then(|id| st.routes.remove(id)) {
                    Some(no) => (no, true),
                    None => (0, false),
                }
            } else {
                (
                    related.and_then(|r| st.routes.get(r).copied()).unwrap_or(0),
                    false,
                )
            };
            (st.streams.get(&target).cloned().ok_or(Closed)?, is_answer)
        };
        let resumable = self.kind == Kind::Streamable;
        let last = stream.push(self, &msg, is_answer, resumable, wait)?;
        if last {
            self.finish_stream(stream.no);
        }
        Ok(())
    }

    /// Request `id` gets no answer (it was cancelled): its stream ends once none of its
    /// requests is pending, as if its last answer had gone out, so its connection, its place
    /// under the per-session stream limit and its pending JSON answer are freed at once and a
    /// later resumption finds it over. The route stays (until the stream is forgotten) so that
    /// late messages about the request are dropped rather than sent on the standalone stream.
    pub fn unanswered(&self, id: &RequestId) {
        if self.kind != Kind::Streamable {
            return;
        }
        let stream = {
            let st = lock(&self.state);
            match st.routes.get(id).and_then(|no| st.streams.get(no)) {
                Some(s) if s.no != 0 => s.clone(),
                _ => return,
            }
        };
        if stream.end_unanswered() {
            self.finish_stream(stream.no);
        }
    }

    /// Stream `no` is over: it joins the finished ones (no longer counted as live), and the
    /// oldest finished ones are forgotten.
    fn finish_stream(&self, no: u64) {
        let mut st = lock(&self.state);
        st.finished.push_back(no);
        while st.finished.len() > KEEP_FINISHED_STREAMS {
            if let Some(old) = st.finished.pop_front() {
                st.routes.retain(|_, n| *n != old);
                if st.streams.remove(&old).is_some_and(|s| s.stored()) {
                    self.store.forget(&self.key(old));
                }
            }
        }
    }

    /// Lets go of the connection that writes the stream of request `related` (its writer sees
    /// the channel end and finishes the response); the stream stays open for a resumption.
    /// Only a Streamable HTTP POST stream can be resumed.
    pub fn release_stream(&self, related: &RequestId) -> bool {
        if self.kind != Kind::Streamable {
            return false;
        }
        let stream = {
            let st = lock(&self.state);
            match st.routes.get(related).and_then(|no| st.streams.get(no)) {
                Some(s) if s.no != 0 => s.clone(),
                _ => return false,
            }
        };
        let (released, escape) = {
            let mut i = lock(&stream.inner);
            if i.done || !i.pollable {
                return false;
            }
            (i.tx.take().is_some(), i.escape.take())
        };
        // A handler running inline lets go of the connection: the (now short) answer is
        // written at once rather than when the handler returns.
        if let Some(e) = escape {
            e.fire(false);
        }
        released
    }

    /// True once the session was closed (by DELETE, expiry, or the service).
    pub fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }

    /// Ends the session: every stream closes, the service session is told.
    pub fn close(&self) {
        let streams: Vec<Arc<Stream>> = {
            let mut st = lock(&self.state);
            if st.closed {
                return;
            }
            st.closed = true;
            st.routes.clear();
            st.streams.drain().map(|(_, s)| s).collect()
        };
        for s in streams {
            {
                let mut i = lock(&s.inner);
                i.tx = None;
                i.done = true;
            }
            if s.stored() {
                self.store.forget(&self.key(s.no));
            }
        }
        if let Some(s) = self.service.get() {
            s.close();
        }
    }
}

impl State {
    /// Streams counting against the per-session limit (see [`Stream::live`]). A POST stream is
    /// live until its last answer went out, which is when it joins `finished` (and it leaves
    /// `streams` when it leaves `finished`), so the count needs no look at each stream: with
    /// up to [`KEEP_FINISHED_STREAMS`] finished ones kept, that was a lock per kept stream on
    /// every POST.
    fn live_streams(&self) -> usize {
        let standalone = self.streams.get(&0).is_some_and(|s| s.live());
        let posts = self.streams.len().saturating_sub(1 + self.finished.len());
        posts + usize::from(standalone)
    }
}

impl Stream {
    fn new(no: u64, pending: usize, single: bool) -> Self {
        Stream {
            no,
            single,
            stored: AtomicBool::new(false),
            inner: Mutex::new(StreamInner {
                tx: None,
                generation: 0,
                pending,
                done: false,
                pollable: false,
                sent: false,
                json_only: false,
                escape: None,
            }),
        }
    }

    /// One request of the stream will get no answer; true when that made the stream end (no
    /// request left pending). Its connection is told by [`Frame::unanswered`]; an answer still
    /// held by an inline handler's thread starts elsewhere, so it does not wait for a handler
    /// that may not notice its cancellation soon.
    fn end_unanswered(&self) -> bool {
        let (ended, escape) = {
            let mut i = lock(&self.inner);
            if i.done || i.pending == 0 {
                return false;
            }
            i.pending -= 1;
            if i.pending > 0 {
                return false;
            }
            i.done = true;
            if let Some(tx) = i.tx.take() {
                // A full channel belongs to a reader that is behind: dropping the sender
                // ends its stream all the same.
                let _ = tx.try_send(Frame::unanswered());
            }
            (true, i.escape.take())
        };
        if let Some(e) = escape {
            e.fire(false);
        }
        ended
    }

    fn stored(&self) -> bool {
        self.stored.load(Ordering::Relaxed)
    }

    /// A priming event gave the client an id of this stream: from now on it can resume it,
    /// so what comes while it is away is kept for it (see `push`).
    pub fn primed(&self) {
        self.stored.store(true, Ordering::Relaxed);
    }

    /// Registers the pending answer of the POST that opened the stream.
    pub fn set_escape(&self, e: Arc<Escape>) {
        lock(&self.inner).escape = Some(e);
    }

    /// Marks the stream as one the client can resume (see [`LegacySession::release_stream`]).
    pub fn set_pollable(&self) {
        lock(&self.inner).pollable = true;
    }

    /// Marks the stream as a JSON-only answer (the client does not accept SSE).
    pub fn set_json_only(&self) {
        lock(&self.inner).json_only = true;
    }

    fn attached(&self) -> bool {
        lock(&self.inner).tx.is_some()
    }

    /// Counts against the per-session limit: a POST stream until its answers went out, the
    /// standalone stream while a connection holds it.
    fn live(&self) -> bool {
        let i = lock(&self.inner);
        if self.no == 0 {
            i.tx.is_some()
        } else {
            !i.done
        }
    }

    fn attach(
        &self,
        cursor: Option<u64>,
        buffer: usize,
        replay: impl FnOnce(u64) -> Vec<Arc<[u8]>>,
    ) -> Attached {
        let mut i = lock(&self.inner);
        let replay = cursor.map(replay).unwrap_or_default();
        i.generation += 1;
        if i.done {
            return Attached {
                replay,
                rx: None,
                generation: i.generation,
            };
        }
        let (tx, rx) = bounded(buffer.max(1));
        // Replacing a previous sender ends that connection's writer; whatever it had not
        // written yet is in the replay above.
        i.tx = Some(tx);
        Attached {
            replay,
            rx: Some(rx),
            generation: i.generation,
        }
    }

    /// Stores and sends one message; true when it was the stream's last. Without `wait`, a
    /// reader that is behind is cut off at once rather than waited for.
    fn push(
        &self,
        sess: &LegacySession,
        msg: &Message,
        is_answer: bool,
        resumable: bool,
        wait: bool,
    ) -> Result<bool, Closed> {
        let (escape, final_escape) = {
            let mut i = lock(&self.inner);
            if i.json_only && matches!(msg, Message::Request(_)) {
                // A question to the client that its JSON answer cannot carry: refused now,
                // so the handler fails at once instead of waiting for an answer that cannot
                // come.
                return Err(Closed);
            }
            if is_answer && i.pending <= 1 {
                (None, i.escape.take())
            } else {
                (i.escape.take(), None)
            }
        };
        if let Some(e) = escape {
            // The answer must start before this message can be read: on another thread,
            // while the handler goes on. Nothing is in the channel yet (every earlier message
            // would have fired this), so the send below cannot block on it.
            e.fire(false);
        }
        let mut i = lock(&self.inner);
        // The standalone stream while no connection holds it: what it would carry is dropped
        // (and the caller knows) unless the client can resume it (it holds an event id of
        // it), in which case it is kept for the reconnection like any resumable event.
        let away = self.no == 0 && i.tx.is_none();
        if i.done || (away && !(resumable && self.stored())) {
            return Err(Closed);
        }
        let json = msg.to_vec();
        let seq = sess.next_seq();
        let id = resumable.then(|| format!("{}-{}", self.no, seq));
        let head = sse_head(
            id.as_deref(),
            (sess.kind == Kind::OldSse).then_some("message"),
        );
        if is_answer {
            i.pending = i.pending.saturating_sub(1);
        }
        let last = is_answer && i.pending == 0;
        let first = !i.sent;
        i.sent = true;
        let mut frame = Frame {
            sse_head: (!head.is_empty()).then(|| head.into_boxed_str()),
            event: None,
            json,
            last,
            is_response: msg.is_response(),
            error_code: match msg {
                Message::Error(e) => Some(e.error.code),
                _ => None,
            },
        };
        let store = |f: &mut Frame| {
            if resumable {
                self.stored.store(true, Ordering::Relaxed);
                sess.store.append(&sess.key(self.no), seq, f.event());
            }
        };
        let send = |f: Frame, tx: &Option<Sender<Frame>>| match tx {
            Some(tx) if wait => tx
                .send_timeout(f, sess.cfg.send_timeout)
                .map_err(|e| e.into_inner()),
            Some(tx) => tx.try_send(f).map_err(|e| e.into_inner()),
            None => Err(f),
        };
        let quiet = final_escape.filter(|_| last && first && self.single);
        let delivered = match quiet {
            // The lone answer of a one-request POST whose answer nobody started elsewhere:
            // the request's own thread sends it as plain JSON, so no event id reaches the
            // client and there is nothing it could resume. Held so that it cannot start
            // elsewhere meanwhile; such an answer is not kept in the store.
            Some(e) => match e.while_pending(frame, |f| send(f, &i.tx)) {
                Ok(Ok(())) => true,
                Ok(Err(mut f)) => {
                    store(&mut f);
                    false
                }
                Err(mut f) => {
                    store(&mut f);
                    send(f, &i.tx).is_ok()
                }
            },
            None => {
                store(&mut frame);
                send(frame, &i.tx).is_ok()
            }
        };
        if !delivered {
            // A reader that does not keep up is cut off rather than buffered for; a resumable
            // stream keeps the event in its history for the client's reconnection.
            i.tx = None;
        }
        if last {
            i.done = true;
            i.tx = None;
        }
        // Kept in the history, the event reaches a client that resumes the stream.
        if delivered || (resumable && (self.no != 0 || self.stored())) {
            Ok(last)
        } else {
            Err(Closed)
        }
    }
}

struct LegacyOutbound(Weak<LegacySession>);

impl Outbound for LegacyOutbound {
    fn send(&self, msg: Message, related: Option<&RequestId>) -> Result<(), Closed> {
        self.0.upgrade().ok_or(Closed)?.route(msg, related, true)
    }

    fn send_nowait(&self, msg: Message, related: Option<&RequestId>) -> Result<(), Closed> {
        self.0.upgrade().ok_or(Closed)?.route(msg, related, false)
    }

    fn close_stream(&self, related: &RequestId) -> bool {
        self.0.upgrade().is_some_and(|s| s.release_stream(related))
    }

    fn unanswered(&self, id: &RequestId) {
        if let Some(s) = self.0.upgrade() {
            s.unanswered(id);
        }
    }

    /// The service gave up on the client (it stopped answering pings): the session closes at
    /// once (its streams end), later requests for it get 404, and the next sweep removes it.
    fn end_session(&self, why: &str) {
        if let Some(s) = self.0.upgrade() {
            log::info!("session {} ended by the server: {why}", s.id);
            s.close();
        }
    }
}

/// The live sessions, by id. Every request looks its session up, so lookups share the lock.
#[derive(Default)]
pub(crate) struct Registry {
    map: RwLock<HashMap<String, Arc<LegacySession>>>,
}

impl Registry {
    fn read(&self) -> RwLockReadGuard<'_, HashMap<String, Arc<LegacySession>>> {
        // Each write is one insert or remove: a poisoned map is still consistent.
        self.map.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, HashMap<String, Arc<LegacySession>>> {
        self.map.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds `s`. With `cap` sessions open, the one idle longest (no connection on any of its
    /// streams) makes room and is returned, for the caller to close: a client that opened
    /// sessions and forgot them (most never DELETE theirs) must not lock out new ones until
    /// they expire. `None` when every open session is busy.
    pub fn insert(&self, s: Arc<LegacySession>, cap: usize) -> Option<Option<Arc<LegacySession>>> {
        let mut m = self.write();
        let mut evicted = None;
        if m.len() >= cap {
            let (_, id) = m
                .values()
                .filter_map(|x| x.idle_since().map(|t| (t, x.id.clone())))
                .min_by_key(|(t, _)| *t)?;
            evicted = m.remove(&id);
        }
        m.insert(s.id.clone(), s);
        Some(evicted)
    }

    pub fn get(&self, id: &str) -> Option<Arc<LegacySession>> {
        self.read().get(id).cloned()
    }

    pub fn remove(&self, id: &str) -> Option<Arc<LegacySession>> {
        self.write().remove(id)
    }

    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Removes and returns sessions idle for longer than `idle` at `now`.
    pub fn expired(&self, now: Instant, idle: std::time::Duration) -> Vec<Arc<LegacySession>> {
        let mut m = self.write();
        let dead: Vec<String> = m
            .values()
            .filter(|s| {
                s.is_closed()
                    || s.idle_since()
                        .is_some_and(|t| now.saturating_duration_since(t) >= idle)
            })
            .map(|s| s.id.clone())
            .collect();
        dead.iter().filter_map(|id| m.remove(id)).collect()
    }

    pub fn drain(&self) -> Vec<Arc<LegacySession>> {
        self.write().drain().map(|(_, s)| s).collect()
    }
}

/// Parses a `Last-Event-ID` of the form `<stream>-<seq>`.
pub(crate) fn parse_event_id(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.trim().split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// A priming event: an id (the stream's cursor start) and empty data, plus the retry hint.
pub(crate) fn priming_event(no: u64, seq: u64, retry_ms: u64) -> Vec<u8> {
    format!("id: {no}-{seq}\nretry: {retry_ms}\ndata: \n\n").into_bytes()
}

/// The user behind a request's claims, as a session is bound to it (see
/// [`mcp_core::service::requester`]).
pub(crate) fn owner_of(claims: Option<&Value>) -> Option<Value> {
    claims.map(mcp_core::service::requester)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::answer::{Answer, Deferred, Frames};
    use mcp_core::jsonrpc::Response;

    /// Counts what the session asks of its store.
    #[derive(Default)]
    struct Counting {
        appended: Mutex<Vec<String>>,
        forgotten: Mutex<Vec<String>>,
    }

    impl EventStore for Counting {
        fn append(&self, stream: &str, _seq: u64, _event: &[u8]) {
            lock(&self.appended).push(stream.to_owned());
        }
        fn after(&self, _stream: &str, _seq: u64) -> Vec<Vec<u8>> {
            Vec::new()
        }
        fn forget(&self, stream: &str) {
            lock(&self.forgotten).push(stream.to_owned());
        }
    }

    fn answer(id: i64) -> Message {
        Message::Response(Response::new(RequestId::from(id), &serde_json::json!({})).unwrap())
    }

    /// Opens a one-request POST stream and answers it; `quiet`: as a lone JSON answer whose
    /// POST still holds its response (nothing is stored), else as a resumable SSE stream.
    fn exchange(sess: &LegacySession, id: i64, quiet: bool) {
        let (stream, att) = sess
            .open_post_stream(&[RequestId::from(id)], true)
            .unwrap()
            .opened
            .unwrap();
        let rx = att.rx.unwrap();
        let escape = quiet.then(|| {
            let deferred = Deferred::new(
                sess.cfg.clone(),
                Frames::Channel(bounded(1).1),
                Answer {
                    accept_sse: true,
                    single: true,
                    modern: false,
                    prefix: Vec::new(),
                    refused: Vec::new(),
                },
                Box::new(|_| {}),
            );
            let e = Escape::new(Box::new(|_| {}), deferred);
            stream.set_escape(e.clone());
            e
        });
        sess.route(answer(id), None, true).unwrap();
        assert!(rx.try_recv().unwrap().last);
        drop(escape);
    }

    /// A broadcast reaching a client that stopped reading its GET stream must not hold the
    /// sender (another session's handler, a timer) for the send timeout: the stream is cut at
    /// once, with the event kept for the client's reconnection; `send` still waits.
    #[test]
    fn a_broadcast_cuts_a_stream_that_is_behind_instead_of_waiting_for_it() {
        use mcp_core::jsonrpc::Notification;
        use std::time::Duration;
        let store = Arc::new(Counting::default());
        let cfg = HttpConfig::builder()
            .stream_buffer(2)
            .send_timeout(Duration::from_secs(60))
            .build();
        let sess = LegacySession::new("s".into(), Kind::Streamable, Arc::new(cfg), store.clone());
        let (_stream, att) = sess.attach(0, None).unwrap();
        // The client's connection: attached, never read.
        let rx = att.rx.unwrap();
        let out = sess.outbound();
        let changed =
            || Message::Notification(Notification::bare("notifications/tools/list_changed"));
        out.send_nowait(changed(), None).unwrap();
        out.send_nowait(changed(), None).unwrap();
        let started = Instant::now();
        // The stream's buffer is full: cut, not waited for (60 s), the event kept for the
        // reconnection.
        out.send_nowait(changed(), None).unwrap();
        assert!(started.elapsed() < Duration::from_secs(30));
        // The connection sees its end after what it was sent; the third event is stored.
        assert_eq!(rx.iter().count(), 2);
        assert_eq!(lock(&store.appended).len(), 3);
        sess.close();
    }

    /// A client that holds an event id of its GET stream can resume it: what the stream
    /// would have carried while no connection held it is replayed on the resumption, every
    /// event once (it used to be dropped from the moment the server saw the connection gone).
    #[test]
    fn a_standalone_stream_keeps_what_comes_while_its_client_is_away() {
        use crate::server::store::MemoryEventStore;
        use mcp_core::jsonrpc::Notification;
        let sess = LegacySession::new(
            "s".into(),
            Kind::Streamable,
            Arc::new(HttpConfig::default()),
            Arc::new(MemoryEventStore::new(100)),
        );
        let out = sess.outbound();
        let note = |n: u32| {
            Message::Notification(
                Notification::new(
                    "notifications/message",
                    &serde_json::json!({"level": "info", "data": n}),
                )
                .unwrap(),
            )
        };
        // No GET stream yet: nobody could resume it, the message has nowhere to go.
        assert!(out.send(note(0), None).is_err());
        let (stream, att) = sess.attach(0, None).unwrap();
        out.send(note(1), None).unwrap();
        let first = att.rx.unwrap().try_recv().unwrap();
        let head = first.sse_head.unwrap();
        let cursor: u64 = head
            .strip_prefix("id: 0-")
            .and_then(|h| h.trim_end().parse().ok())
            .unwrap();
        sess.detach(&stream, att.generation, StreamEnd::ClientGone);
        for n in 2..=4 {
            out.send(note(n), None).unwrap();
        }
        let (_, again) = sess.attach(0, Some(cursor)).unwrap();
        let replayed: Vec<String> = again
            .replay
            .iter()
            .map(|e| String::from_utf8_lossy(e).into_owned())
            .collect();
        assert_eq!(replayed.len(), 3, "{replayed:?}");
        for (event, n) in replayed.iter().zip(2..) {
            assert!(event.contains(&format!("\"data\":{n}")), "{event}");
        }
        // Live again.
        out.send(note(5), None).unwrap();
        assert!(again.rx.unwrap().try_recv().is_ok());
        sess.close();
    }

    #[test]
    fn finished_streams_leave_the_store_only_when_they_put_something_there() {
        let store = Arc::new(Counting::default());
        let sess = LegacySession::new(
            "s".into(),
            Kind::Streamable,
            Arc::new(HttpConfig::default()),
            store.clone(),
        );
        // Streams 1..=10 are SSE (stored), 11..=80 quiet JSON answers (not stored).
        for id in 1..=80 {
            exchange(&sess, id, id > 10);
        }
        assert_eq!(lock(&store.appended).len(), 10);
        // 80 finished, 64 kept: streams 1..=16 left, and only the stored ones are forgotten.
        let forgotten = lock(&store.forgotten).clone();
        let expected: Vec<String> = (1..=10).map(|n| format!("s/{n}")).collect();
        assert_eq!(forgotten, expected);
        sess.close();
        // Closing forgets nothing more: the kept streams stored nothing.
        assert_eq!(lock(&store.forgotten).len(), 10);
    }
}
