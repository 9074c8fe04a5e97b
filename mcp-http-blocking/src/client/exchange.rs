//! The HTTP exchanges behind [`super::HttpClient`]: a request's POST and its JSON or SSE answer
//! (resumed with `Last-Event-ID` when a legacy stream breaks), one-way POSTs, the legacy GET
//! stream, and the DELETE that ends a session.

use std::io::{self, BufRead, BufReader};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::select;
use mcp_core::jsonrpc::{ErrorObject, Message, RequestId, codes, decode};
use mcp_core::types::methods;
use serde_json::Value;
use ureq::http::Response;
use ureq::{Body, BodyReader, RequestBuilder};

use super::auth::{AUTH_ROUNDS, AuthError, Challenge};
use super::headers::Shape;
use super::sse::SseReader;
use super::{Lease, Shared};
use crate::Error;
use crate::{SESSION_HEADER, VERSION_HEADER};
use mcp_core::transport::Incoming;

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// Most of an error body kept for the error message.
const ERROR_BODY_LIMIT: u64 = 64 * 1024;
/// The error code given to "the server forgot this session" (the code servers commonly use).
pub const SESSION_NOT_FOUND: i64 = -32001;

pub(super) fn with_headers<B>(
    mut rb: RequestBuilder<B>,
    hs: &[(String, String)],
) -> RequestBuilder<B> {
    for (n, v) in hs {
        rb = rb.header(n.as_str(), v.as_str());
    }
    rb
}

pub(super) fn header(resp: &Response<Body>, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

pub(super) fn mime(resp: &Response<Body>) -> String {
    header(resp, "content-type")
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Where a stream is, for resuming it: the last event id and the server's retry hint.
pub(super) struct Cursor {
    pub(super) last_id: Option<String>,
    pub(super) retry: Duration,
    /// Events delivered: a resumption that delivered one made progress.
    pub(super) events: usize,
    pub(super) seen: Seen,
    /// The stream being read resumes an earlier one (`Last-Event-ID`): it may replay events
    /// delivered before.
    pub(super) resumed: bool,
    /// The `Last-Event-ID` the stream being read resumes from.
    pub(super) resumed_from: Option<String>,
    /// The stream being read replays what was delivered before (it sent an event this
    /// stream already delivered): everything up to and with this id, the last delivered,
    /// goes undelivered.
    pub(super) skip_to: Option<String>,
    /// `events` when the stream being read last replayed an event delivered before (one
    /// remembered, or the very event it was resumed from): what it delivered up to there is
    /// no progress (see [`Cursor::progressed`]).
    pub(super) replayed_at: Option<usize>,
}

impl Cursor {
    pub(super) fn new(retry: Duration) -> Cursor {
        Cursor {
            last_id: None,
            retry,
            events: 0,
            seen: Seen::default(),
            resumed: false,
            resumed_from: None,
            skip_to: None,
            replayed_at: None,
        }
    }

    /// Starts reading another stream, resumed from `from` (its `Last-Event-ID`) or not.
    pub(super) fn start(&mut self, from: Option<String>) {
        self.resumed = from.is_some();
        self.resumed_from = from;
        self.skip_to = None;
        self.replayed_at = None;
    }

    /// Whether the stream just read delivered something new since `before` (its `events`
    /// when it opened). What it delivered before it showed itself a replay does not count
    /// (those were the oldest events again, too old to be known), so a server that replays
    /// its stream on every resumption meets the bound on failed resumptions rather than being
    /// resumed for ever.
    pub(super) fn progressed(&self, before: usize) -> bool {
        self.events > self.replayed_at.unwrap_or(before).max(before)
    }
}

/// The ids of the events a stream delivered (as keyed hashes), so that a server that sends
/// them again after a resumption delivers nothing twice: the last [`SEEN`] ids, and one in
/// [`ANCHOR_EVERY`] of the older ones as far back as [`SEEN`] of those reach (262,144
/// events). A resumed stream that sends one of them is replaying what was delivered, and
/// everything up to the event it was resumed from goes undelivered; an old event between two
/// anchors can come again at most [`ANCHOR_EVERY`] - 1 times in a row before an anchor shows
/// the replay.
#[derive(Default)]
pub(super) struct Seen {
    keys: std::collections::hash_map::RandomState,
    recent: Fifo,
    anchors: Fifo,
    count: u64,
}

/// How many recent ids, and how many anchors, a stream remembers (8 bytes each, and the
/// sets' own: at most about 100 KiB each, reached only by a long stream).
const SEEN: usize = 4096;
/// One delivered id in this many is kept as an anchor.
const ANCHOR_EVERY: u64 = 64;

/// A set of at most [`SEEN`] hashes, the oldest forgotten first.
#[derive(Default)]
struct Fifo {
    order: std::collections::VecDeque<u64>,
    set: std::collections::HashSet<u64>,
}

impl Fifo {
    fn insert(&mut self, h: u64) -> bool {
        if !self.set.insert(h) {
            return false;
        }
        self.order.push_back(h);
        if self.order.len() > SEEN {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        true
    }
}

impl Seen {
    fn hash(&self, id: &str) -> u64 {
        use std::hash::BuildHasher;
        self.keys.hash_one(id)
    }

    /// Whether `id` was delivered before (as far as remembered).
    fn known(&self, id: &str) -> bool {
        let h = self.hash(id);
        self.recent.set.contains(&h) || self.anchors.set.contains(&h)
    }

    /// Remembers a delivered `id`.
    fn remember(&mut self, id: &str) {
        let h = self.hash(id);
        if self.recent.insert(h) {
            if self.count % ANCHOR_EVERY == 0 {
                self.anchors.insert(h);
            }
            self.count += 1;
        }
    }
}

/// Whether `data` (an event that did not decode) is, read leniently (its invalid UTF-8
/// replaced), the response to `id`.
fn answers(data: &[u8], id: &RequestId) -> bool {
    let text = String::from_utf8_lossy(data);
    matches!(decode(text.as_bytes()), Ok(m) if m.is_response() && m.id() == Some(id))
}

/// The longest a closing client waits for the server to acknowledge the end of its session.
const DELETE_WAIT: Duration = Duration::from_secs(2);

/// The shortest wait before a stream is opened again, whatever `retry:` the server asks for:
/// a server that ends its streams at once with `retry: 0` would otherwise have the client
/// reconnect as fast as the network allows.
const MIN_RETRY: Duration = Duration::from_millis(100);

/// How reading a stream ended.
pub(super) enum PumpEnd {
    /// The answer to the exchange's request arrived.
    Answered,
    /// The client is closing or the exchange was cancelled.
    Stopped,
    /// The stream ended (`None`) or broke (the read error).
    Ended(Option<Error>),
    /// The stream cannot go on (an oversized event).
    Invalid(Error),
}

/// Why a request could not be sent (or was refused for good by the authorization provider).
pub(super) enum SendFail {
    /// The request did not get an answer.
    Http(ureq::Error),
    /// The server refused (401/403) and the provider could not help: why.
    Auth(u16, AuthError),
}

impl std::fmt::Display for SendFail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendFail::Http(e) => write!(f, "{e}"),
            SendFail::Auth(status, why) => {
                write!(f, "HTTP {status}, and authorization failed: {why}")
            }
        }
    }
}

/// Why a GET stream could not be opened.
enum GetFail {
    /// 405 (or 409, a stream already open): nothing to retry.
    NotSupported(u16),
    /// 404: the session is gone.
    SessionGone,
    /// A transient failure worth another attempt.
    Failed(Error),
}

impl Shared {
    /// A request that got no usable answer, as this crate's error.
    pub(super) fn send_error(&self, e: SendFail) -> Error {
        match e {
            SendFail::Http(source) => Error::Http {
                url: self.url.clone(),
                source,
            },
            SendFail::Auth(status, source) => Error::Unauthorized { status, source },
        }
    }

    /// The headers of a message POSTed (or, for the legacy GET stream, the GET) to `url`:
    /// 2026-07-28 ones from the message, or the legacy session's.
    pub(super) fn headers_for(
        &self,
        shape: &Shape,
        method: &str,
        url: &str,
    ) -> Vec<(String, String)> {
        let mut hs = self.base_headers(method, url);
        match &shape.modern_version {
            Some(v) => {
                hs.push((VERSION_HEADER.into(), v.clone()));
                if let Some(m) = &shape.method {
                    hs.push(("Mcp-Method".into(), m.clone()));
                }
                if let Some(n) = &shape.name {
                    hs.push(("Mcp-Name".into(), n.clone()));
                }
                if let Some((tool, args)) = &shape.call {
                    if let Some(m) = self.state().marks.get(tool) {
                        hs.extend(super::params::headers(m, args));
                    }
                }
            }
            None => {
                let st = self.state();
                if let Some(s) = &st.session {
                    hs.push((SESSION_HEADER.into(), s.clone()));
                }
                if let Some(v) = &st.version {
                    hs.push((VERSION_HEADER.into(), v.clone()));
                }
            }
        }
        hs
    }

    /// The configured headers, plus the provider's authorization headers for a request with
    /// HTTP `method` to `url` (a DPoP proof is bound to both).
    pub(super) fn base_headers(&self, method: &str, url: &str) -> Vec<(String, String)> {
        let mut hs = self.cfg.headers.clone();
        if let Some(auth) = &self.cfg.auth {
            hs.extend(auth.request_headers(method, url));
        }
        hs
    }

    /// Sends a request built from fresh headers each time; a 401 (or a 403 asking for more
    /// scopes) goes to the authorization provider, and once it has a new token the request is
    /// sent again, at most [`AUTH_ROUNDS`] times.
    pub(super) fn send_authorized(
        &self,
        headers: impl Fn() -> Vec<(String, String)>,
        send: impl Fn(&[(String, String)]) -> Result<Response<Body>, ureq::Error>,
    ) -> Result<Response<Body>, SendFail> {
        let mut rounds = 0;
        loop {
            let hs = headers();
            let resp = send(&hs).map_err(SendFail::Http)?;
            let status = resp.status().as_u16();
            let Some(auth) = self.cfg.auth.as_ref() else {
                return Ok(resp);
            };
            if rounds >= AUTH_ROUNDS || !matches!(status, 401 | 403) {
                return Ok(resp);
            }
            let values: Vec<&str> = resp
                .headers()
                .get_all("www-authenticate")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            let sent = hs
                .iter()
                .find(|(n, _)| n == "Authorization")
                .map(|(_, v)| v.clone());
            let nonce = resp
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            // The revision the refused request spoke, else the session's, else the one its
            // `initialize` asks for: discovery sends it on (see `Challenge::protocol_version`).
            let version = hs
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(VERSION_HEADER))
                .map(|(_, v)| v.clone())
                .or_else(|| {
                    let st = self.state();
                    st.version.clone().or_else(|| st.wanted_version.clone())
                });
            let challenge = Challenge::new(status, &self.url, sent, &values)
                .with_dpop_nonce(nonce)
                .with_protocol_version(version);
            if status == 403 && !challenge.insufficient_scope() {
                return Ok(resp);
            }
            drop(resp);
            auth.challenged(&challenge)
                .map_err(|why| SendFail::Auth(status, why))?;
            rounds += 1;
        }
    }

    /// Learns the negotiated revision from the `initialize` answer (the next POSTs, including
    /// `notifications/initialized`, need it before the client calls `set_protocol`).
    fn note_answer(&self, shape: &Shape, msg: &Message) {
        if !shape.is_initialize && (msg.id().is_none() || self.state().init_id.as_ref() != msg.id())
        {
            return;
        }
        if let Message::Response(r) = msg {
            let v = r.result::<Value>().ok().and_then(|v| {
                v.get("protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
            let mut st = self.state();
            if v.is_some() {
                st.version = v;
            }
            st.legacy_ready = true;
            st.session_lost = false;
        }
    }

    /// A 2026-07-28 `tools/list` answer: learn the tools' `x-mcp-header` marks, and drop the
    /// tools whose marks are invalid.
    fn inspect_answer(&self, shape: &Shape, msg: Message) -> Message {
        let Message::Response(r) = &msg else {
            return msg;
        };
        if shape.modern_version.is_none()
            || shape.rpc_method.as_deref() != Some(methods::TOOLS_LIST)
        {
            return msg;
        }
        let Ok(mut result) = r.result::<Value>() else {
            return msg;
        };
        let changed = super::params::filter_tools(&mut result, &mut self.state().marks);
        if !changed {
            return msg;
        }
        match mcp_core::jsonrpc::Response::new(r.id.clone(), &result) {
            Ok(r) => Message::Response(r),
            Err(_) => msg,
        }
    }

    /// POSTs request `msg` and relays its answer.
    pub(super) fn request_exchange(
        self: &Arc<Self>,
        lease: &Lease,
        id: &RequestId,
        msg: &Message,
        shape: &Shape,
    ) {
        let body = msg.to_vec();
        let target = self.post_url();
        let mut renewed = false;
        let resp = loop {
            let sent = self.send_authorized(
                || self.headers_for(shape, "POST", &target),
                |hs| {
                    with_headers(lease.agent.post(&target), hs)
                        .header("Accept", ACCEPT_BOTH)
                        .header("Content-Type", "application/json")
                        .send(&body[..])
                },
            );
            let resp = match sent {
                Ok(r) => r,
                Err(e) => {
                    if !lease.cancelled() {
                        self.fail(id, self.send_error(e));
                    }
                    return;
                }
            };
            // A forgotten legacy session: start a new one and send the request again (once).
            let stale = self.state().session.clone();
            match stale {
                Some(stale)
                    if resp.status().as_u16() == 404
                        && self.cfg.renew_session
                        && !renewed
                        && !shape.is_initialize
                        && shape.modern_version.is_none() =>
                {
                    drop(resp);
                    renewed = true;
                    if let Err(why) = self.renew_session(lease, &stale) {
                        log::warn!("a new session with {}: {why}", self.url);
                        self.session_gone(id, &format!("a new one could not be started: {why}"));
                        return;
                    }
                }
                _ => break resp,
            }
        };
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            // A server of the 2024-11-05 era does not take POSTs at its SSE URL. The
            // backwards-compatibility rule: any 4xx to the `initialize` POST means try the old
            // transport (a 410 or a 415 as much as a 404), except 401 and 403, which belong to
            // the authorization flow (the old transport would meet the same refusal).
            if shape.is_initialize
                && (400..500).contains(&status)
                && !matches!(status, 401 | 403)
                && self.may_use_old_sse()
                && self.old_sse_fallback(lease, id, msg, shape)
            {
                return;
            }
            self.http_failure(id, shape, resp);
            return;
        }
        if shape.is_initialize {
            if let Some(sid) = header(&resp, SESSION_HEADER) {
                self.state().session = Some(sid);
            }
        }
        match mime(&resp).as_str() {
            "application/json" => {
                let bytes = resp
                    .into_body()
                    .into_with_config()
                    .limit(self.cfg.max_message as u64)
                    .read_to_vec();
                match bytes {
                    Ok(b) => self.relay_json(id, shape, &b),
                    Err(e) if !lease.cancelled() => {
                        self.malformed(
                            Some(id.clone()),
                            Error::Http {
                                url: self.url.clone(),
                                source: e,
                            },
                        );
                    }
                    Err(_) => {}
                }
            }
            "text/event-stream" => self.follow_stream(lease, id, shape, resp.into_body()),
            // HTTP+SSE (2024-11-05): the answer comes on the one SSE stream.
            _ if status == 202 && self.state().old_endpoint.is_some() => {}
            _ if status == 202 => {
                // The server accepted the request without answering it.
                self.fail(
                    id,
                    Error::UnexpectedAnswer {
                        status,
                        content_type: None,
                    },
                );
            }
            other => {
                self.malformed(
                    Some(id.clone()),
                    Error::UnexpectedAnswer {
                        status,
                        content_type: Some(other.to_owned()),
                    },
                );
            }
        }
    }

    fn relay_json(&self, id: &RequestId, shape: &Shape, bytes: &[u8]) {
        match decode(bytes) {
            Ok(Message::Error(mut e)) if e.id.is_none() => {
                e.id = Some(id.clone());
                self.forward(Incoming::Message(Message::Error(e)));
            }
            Ok(m) => {
                let answers = match &m {
                    Message::Response(r) => r.id == *id,
                    Message::Error(e) => e.id.as_ref() == Some(id),
                    _ => false,
                };
                self.note_answer(shape, &m);
                let m = self.inspect_answer(shape, m);
                self.forward(Incoming::Message(m));
                if !answers {
                    // The exchange is over and the request has no answer: it fails now, as
                    // when an SSE answer ends early, not at its timeout.
                    self.fail(
                        id,
                        Error::StreamEnded {
                            attempts: 0,
                            source: None,
                        },
                    );
                }
            }
            Err(e) => {
                self.malformed(Some(id.clone()), Error::Decode(e));
            }
        }
    }

    /// Request `id` met a 404 for its legacy session: it fails with [`SESSION_NOT_FOUND`].
    fn session_gone(&self, id: &RequestId, then: &str) {
        self.state().session_lost = true;
        self.fail_with(
            id,
            ErrorObject::new(
                SESSION_NOT_FOUND,
                format!(
                    "the server at {} no longer knows this session (HTTP 404); {then}",
                    self.url
                ),
            ),
        );
    }

    /// A 4xx/5xx answer becomes an error response for the request: the server's own JSON-RPC
    /// error when it sent one, otherwise one that names the HTTP status.
    fn http_failure(&self, id: &RequestId, shape: &Shape, resp: Response<Body>) {
        let status = resp.status().as_u16();
        let challenge = header(&resp, "www-authenticate");
        let legacy_session = shape.modern_version.is_none() && self.state().session.is_some();
        let body = resp
            .into_body()
            .into_with_config()
            .limit(ERROR_BODY_LIMIT)
            .read_to_vec()
            .unwrap_or_default();
        if status == 404 && legacy_session {
            self.session_gone(id, "connect again to start a new one");
            return;
        }
        if let Ok(Message::Error(mut e)) = decode(&body) {
            if e.id.is_none() || e.id.as_ref() == Some(id) {
                e.id = Some(id.clone());
                self.forward(Incoming::Message(Message::Error(e)));
                return;
            }
        }
        let code = match status {
            404 | 405 => codes::METHOD_NOT_FOUND,
            400 => codes::INVALID_REQUEST,
            _ => codes::INTERNAL_ERROR,
        };
        let mut message = format!("HTTP {status} from {}", self.url);
        if status == 404 || status == 405 {
            // Nothing MCP answered there: the likeliest mistake is the endpoint's path.
            message.push_str(" (no MCP endpoint at this URL? servers commonly serve /mcp)");
        }
        if let Some(c) = challenge {
            message.push_str(&format!(" (WWW-Authenticate: {c})"));
        }
        let text = String::from_utf8_lossy(&body);
        let text = text.trim();
        if !text.is_empty() {
            let cut: String = text.chars().take(200).collect();
            message.push_str(&format!(": {cut}"));
        }
        self.fail_with(id, ErrorObject::new(code, message));
    }

    /// Reads a request's SSE answer; when it breaks before the answer and carried event ids,
    /// resumes it with GET + `Last-Event-ID` after the retry delay, at most
    /// `max_reconnects` times in a row without progress.
    fn follow_stream(&self, lease: &Lease, id: &RequestId, shape: &Shape, body: Body) {
        let mut cur = Cursor::new(self.cfg.default_retry);
        let mut body = Some(body);
        let mut attempts = 0u32;
        let mut failed: Option<Error> = None;
        loop {
            let before = cur.events;
            let why = match body.take() {
                Some(b) => match self.pump(&mut self.sse(b), lease, Some(id), shape, &mut cur) {
                    PumpEnd::Answered | PumpEnd::Stopped => return,
                    PumpEnd::Invalid(error) => {
                        self.malformed(Some(id.clone()), error);
                        return;
                    }
                    PumpEnd::Ended(why) => why,
                },
                // The last attempt to resume failed; `failed` holds why.
                None => failed.take(),
            };
            if lease.cancelled() {
                return;
            }
            let Some(last) = cur.last_id.clone().filter(|s| !s.is_empty()) else {
                self.fail(
                    id,
                    Error::StreamEnded {
                        attempts: 0,
                        source: why.map(Box::new),
                    },
                );
                return;
            };
            // A stream that made progress before breaking (a server that closes streams
            // on purpose, SSE polling) starts the count again: the bound is on failures in a
            // row.
            if cur.progressed(before) {
                attempts = 0;
            }
            attempts += 1;
            if attempts > self.cfg.max_reconnects {
                self.fail(
                    id,
                    Error::StreamEnded {
                        attempts: attempts - 1,
                        source: why.map(Box::new),
                    },
                );
                return;
            }
            select! {
                recv(lease.cancel) -> _ => return,
                recv(self.stop_rx) -> _ => return,
                default(cur.retry) => {}
            }
            match self.open_get(lease, Some(&last)) {
                Ok(b) => {
                    cur.start(Some(last));
                    body = Some(b);
                }
                Err(GetFail::Failed(why)) => {
                    log::debug!("resuming the stream: {why}");
                    failed = Some(why);
                }
                Err(GetFail::NotSupported(status)) => {
                    self.fail(
                        id,
                        Error::StreamEnded {
                            attempts,
                            source: Some(Box::new(Error::UnexpectedAnswer {
                                status,
                                content_type: None,
                            })),
                        },
                    );
                    return;
                }
                Err(GetFail::SessionGone) => {
                    self.fail_with(
                        id,
                        ErrorObject::new(
                            SESSION_NOT_FOUND,
                            "the session ended while the request was in flight",
                        ),
                    );
                    return;
                }
            }
        }
    }

    /// Relays the events of one SSE body until it ends or the request is answered.
    /// An SSE reader over a response body, bounded by the message size limit.
    pub(super) fn sse(&self, body: Body) -> SseReader<BufReader<BodyReader<'static>>> {
        SseReader::new(BufReader::new(body.into_reader()), self.cfg.max_message)
    }

    pub(super) fn pump<R: BufRead>(
        &self,
        rd: &mut SseReader<R>,
        lease: &Lease,
        answer_to: Option<&RequestId>,
        shape: &Shape,
        cur: &mut Cursor,
    ) -> PumpEnd {
        loop {
            let ev = match rd.next_event() {
                Ok(Some(ev)) => ev,
                Ok(None) => return PumpEnd::Ended(None),
                Err(_) if lease.cancelled() => return PumpEnd::Stopped,
                Err(e) if e.kind() == io::ErrorKind::FileTooLarge => {
                    return PumpEnd::Invalid(Error::Io(e));
                }
                Err(e) => return PumpEnd::Ended(Some(Error::Io(e))),
            };
            if let Some(ms) = ev.retry {
                cur.retry = Duration::from_millis(ms)
                    .min(self.cfg.max_retry)
                    .max(MIN_RETRY);
            }
            if let Some(to) = &cur.skip_to {
                // Replaying: up to and with the last event delivered before, nothing goes on.
                if ev.id.as_ref() == Some(to) {
                    cur.skip_to = None;
                }
                continue;
            }
            if let Some(i) = ev.id {
                // Every id is remembered; one seen before is dropped only from a resumed
                // stream (a replay of what was delivered). On the stream that carries it
                // first, a repeat is the server's own mistake, and its message is delivered
                // rather than lost (an answer dropped there would leave its call waiting).
                let again =
                    !i.is_empty() && (cur.seen.known(&i) || cur.resumed_from.as_ref() == Some(&i));
                if cur.resumed && again {
                    // A replay: nothing up to the event resumed from is delivered again, and
                    // what came before this point was no progress.
                    cur.replayed_at = Some(cur.events);
                    if cur.resumed_from.as_ref() != Some(&i) {
                        cur.skip_to.clone_from(&cur.resumed_from);
                    }
                    continue;
                }
                if !i.is_empty() {
                    cur.seen.remember(&i);
                }
                cur.last_id = Some(i);
            }
            if ev.data.is_empty() || ev.event.as_deref().is_some_and(|e| e != "message") {
                continue;
            }
            cur.events += 1;
            let item = match decode(&ev.data) {
                Ok(m) => m,
                Err(e) => {
                    // No id read: when the text, its bad bytes replaced, is this request's
                    // answer, the answer is what came broken, and the call fails now rather
                    // than at the stream's end or its timeout.
                    let id =
                        e.id.clone()
                            .or_else(|| answer_to.filter(|want| answers(&ev.data, want)).cloned());
                    let ok = self.malformed(id, Error::Decode(e));
                    if !ok {
                        return PumpEnd::Stopped;
                    }
                    continue;
                }
            };
            if let (Some(call), Message::Request(_)) = (answer_to, &item) {
                self.note_asked(&item, call);
            }
            let answered = answer_to.is_some_and(|i| item.is_response() && item.id() == Some(i));
            let item = if answered {
                self.note_answer(shape, &item);
                self.inspect_answer(shape, item)
            } else {
                item
            };
            if !self.forward(Incoming::Message(item)) {
                return PumpEnd::Stopped;
            }
            if answered {
                return PumpEnd::Answered;
            }
        }
    }

    /// Opens the legacy GET stream (to resume `last_id`, or the standalone one).
    fn open_get(&self, lease: &Lease, last_id: Option<&str>) -> Result<Body, GetFail> {
        let resp = self
            .send_authorized(
                || self.headers_for(&Shape::default(), "GET", &self.url),
                |hs| {
                    let mut rb = with_headers(lease.agent.get(&self.url), hs)
                        .header("Accept", "text/event-stream");
                    if let Some(l) = last_id {
                        rb = rb.header("Last-Event-ID", l);
                    }
                    rb.call()
                },
            )
            .map_err(|e| GetFail::Failed(self.send_error(e)))?;
        let status = resp.status().as_u16();
        match status {
            200 if mime(&resp) == "text/event-stream" => Ok(resp.into_body()),
            404 if self.state().session.is_some() => {
                self.state().session_lost = true;
                Err(GetFail::SessionGone)
            }
            405 | 409 | 404 | 400 => Err(GetFail::NotSupported(status)),
            _ => Err(GetFail::Failed(Error::UnexpectedAnswer {
                status,
                content_type: Some(mime(&resp)),
            })),
        }
    }

    /// The legacy standalone GET stream: server requests and notifications that belong to no
    /// request. Reopened when the server ends it (SSE polling), from the last event id, with
    /// a bound on failures in a row.
    pub(super) fn get_stream(self: &Arc<Self>, mut ready: Option<crossbeam_channel::Sender<()>>) {
        let mut cur = Cursor::new(self.cfg.default_retry);
        let mut failures = 0u32;
        loop {
            let Some(lease) = self.lease(None, false) else {
                return;
            };
            let before = cur.events;
            let last = cur.last_id.clone().filter(|s| !s.is_empty());
            let opened = self.open_get(&lease, last.as_deref());
            // The first attempt is over: whoever waits for the stream may go on.
            ready.take();
            cur.start(last);
            let stop = match opened {
                Ok(body) => match self.pump(
                    &mut self.sse(body),
                    &lease,
                    None,
                    &Shape::default(),
                    &mut cur,
                ) {
                    PumpEnd::Stopped | PumpEnd::Answered => true,
                    PumpEnd::Invalid(why) => {
                        log::warn!("the GET stream of {}: {why}", self.url);
                        true
                    }
                    PumpEnd::Ended(why) => {
                        log::debug!("the GET stream of {} ended: {why:?}", self.url);
                        if cur.progressed(before) {
                            failures = 0;
                        } else {
                            failures += 1;
                        }
                        false
                    }
                },
                Err(GetFail::NotSupported(status)) => {
                    log::debug!("{} has no GET stream (HTTP {status})", self.url);
                    true
                }
                Err(GetFail::SessionGone) => true,
                Err(GetFail::Failed(why)) => {
                    log::debug!("opening the GET stream of {}: {why}", self.url);
                    failures += 1;
                    false
                }
            };
            let cancelled = lease.cancelled();
            self.release(lease);
            if stop || cancelled {
                return;
            }
            if failures > self.cfg.max_reconnects {
                log::warn!(
                    "giving up on the GET stream of {} after {failures} failures",
                    self.url
                );
                return;
            }
            select! {
                recv(self.stop_rx) -> _ => return,
                default(cur.retry) => {}
            }
        }
    }

    /// POSTs a notification or a response: `Ok` when the server accepted it, else the HTTP
    /// status of its refusal (`None` when none came: the connection failed).
    pub(super) fn post_one_way(&self, lease: &Lease, msg: &Message) -> Result<(), Option<u16>> {
        let target = self.post_url();
        let body = msg.to_vec();
        let sent = self.send_authorized(
            || self.headers_for(&Shape::default(), "POST", &target),
            |hs| {
                with_headers(lease.agent.post(&target), hs)
                    .config()
                    .timeout_recv_response(Some(self.cfg.ack_timeout))
                    .build()
                    .header("Accept", ACCEPT_BOTH)
                    .header("Content-Type", "application/json")
                    .send(&body[..])
            },
        );
        match sent {
            Ok(resp) => {
                let status = resp.status().as_u16();
                if (200..300).contains(&status) {
                    return Ok(());
                }
                if status == 404 && self.state().session.is_some() {
                    self.state().session_lost = true;
                }
                log::warn!(
                    "{} refused a {}: HTTP {status}",
                    self.url,
                    msg.method().unwrap_or("response")
                );
                Err(Some(status))
            }
            Err(e) => {
                if !lease.cancelled() {
                    log::warn!("POST {}: {e}", self.url);
                }
                Err(None)
            }
        }
    }

    /// Ends a legacy session (405 means the server does not let clients end them: fine). A
    /// courtesy the closing client waits for briefly: at most `DELETE_WAIT` (or the connect
    /// timeout, when shorter), so that a server that stalls it cannot hold `close` up.
    pub(super) fn delete_session(&self, sid: &str, version: Option<&str>) {
        let agent = self.agent_cfg.new_agent();
        let mut rb = with_headers(
            agent.delete(&self.url),
            &self.base_headers("DELETE", &self.url),
        )
        .config()
        .timeout_global(Some(self.cfg.connect_timeout.min(DELETE_WAIT)))
        .build()
        .header(SESSION_HEADER, sid);
        if let Some(v) = version {
            rb = rb.header(VERSION_HEADER, v);
        }
        match rb.call() {
            Ok(r) => log::debug!("DELETE {}: HTTP {}", self.url, r.status().as_u16()),
            Err(e) => log::debug!("DELETE {}: {e}", self.url),
        }
    }
}
