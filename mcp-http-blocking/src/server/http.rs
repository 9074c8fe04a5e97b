//! The HTTP shapes the transport core speaks, independent of any HTTP server: a request head,
//! and a response that is either complete bytes or a stream of Server-Sent Events.
//!
//! A host with its own HTTP server mounts the transport by filling an [`HttpRequest`], calling
//! [`crate::StreamableHttp::handle`] with the body reader, and writing the [`HttpResponse`] back:
//! bytes as they are, an [`SseBody`] event by event (flushing after each one, and writing a `:`
//! comment whenever [`SseBody::next_event`] reports [`SseNext::Idle`]).

use std::io::Read;
use std::net::SocketAddr;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};
use mcp_core::jsonrpc::{ErrorObject, Message, RequestId, codes};
use serde_json::json;

/// The head of one HTTP request.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// The method, upper case (`GET`, `POST`, ...).
    pub method: String,
    /// The request target: path plus optional `?query`.
    pub target: String,
    /// Header fields in arrival order; names are matched ignoring case.
    pub headers: Vec<(String, String)>,
    /// The declared `Content-Length`, if any (checked against the body limit before reading).
    pub content_length: Option<u64>,
    /// The peer, when known (for logs).
    pub remote_addr: Option<SocketAddr>,
}

impl HttpRequest {
    /// A request with no headers and no body.
    pub fn new(method: impl Into<String>, target: impl Into<String>) -> Self {
        HttpRequest {
            method: method.into(),
            target: target.into(),
            headers: Vec::new(),
            content_length: None,
            remote_addr: None,
        }
    }

    /// Adds a header (builder style, handy in tests and adapters).
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The first value of header `name`, ignoring the case of the name.
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// The path part of the target.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    /// The value of query parameter `name` (no percent-decoding: MCP only puts tokens there).
    pub fn query_param(&self, name: &str) -> Option<&str> {
        let q = self.target.split_once('?')?.1;
        q.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (k == name).then_some(v)
        })
    }

    /// Sum of the header names and values, to enforce the header size limit.
    pub(crate) fn header_bytes(&self) -> usize {
        self.headers
            .iter()
            .map(|(n, v)| n.len() + v.len() + 4)
            .sum()
    }
}

/// The first value of header `name` among `headers`, ignoring the case of the name.
fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// One HTTP response produced by the transport core.
#[derive(Debug)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// Header fields to send (the adapter adds framing headers itself).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Body,
}

/// A response body.
#[derive(Debug)]
pub enum Body {
    /// Complete bytes (possibly empty).
    Bytes(Vec<u8>),
    /// A Server-Sent Events stream, written event by event until it ends.
    Sse(SseBody),
}

impl HttpResponse {
    /// A response with a complete body.
    pub fn bytes(status: u16, content_type: Option<&str>, body: Vec<u8>) -> Self {
        let mut headers = Vec::new();
        if let Some(ct) = content_type {
            headers.push(("Content-Type".to_owned(), ct.to_owned()));
        }
        HttpResponse {
            status,
            headers,
            body: Body::Bytes(body),
        }
    }

    /// An empty response.
    pub fn empty(status: u16) -> Self {
        Self::bytes(status, None, Vec::new())
    }

    /// A JSON body.
    pub fn json(status: u16, body: Vec<u8>) -> Self {
        Self::bytes(status, Some("application/json"), body)
    }

    /// A JSON-RPC error response as the body (the spec lets HTTP errors carry one).
    pub fn rpc_error(status: u16, id: Option<RequestId>, error: ErrorObject) -> Self {
        Self::json(status, Message::error(id, error).to_vec())
    }

    /// Adds a header.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The first value of header `name`, ignoring case.
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

/// How an SSE stream ended, reported to the stream's owner exactly once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// The server side finished it (the last message was written).
    Completed,
    /// Writing failed: the client is gone or stopped reading.
    ClientGone,
}

/// One frame on a stream's channel: a message plus what the core needs to decide between a
/// JSON and an SSE answer. The SSE event is built only when it is needed (most answers go back
/// as plain JSON).
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    /// The SSE event's `id:` and `event:` lines, if any.
    pub sse_head: Option<Box<str>>,
    /// The complete SSE event, once something needed it.
    pub event: Option<Vec<u8>>,
    /// The JSON-RPC message alone.
    pub json: Vec<u8>,
    /// True for the last message of the stream.
    pub last: bool,
    /// True for responses and error responses.
    pub is_response: bool,
    /// The error code, when the message is an error response.
    pub error_code: Option<i64>,
}

impl Frame {
    /// The end of a stream whose requests were cancelled before their answers: the last frame,
    /// carrying no message (a real message is never empty). The writer ends the stream on it
    /// without writing anything; an answer not started yet becomes `204 No Content`.
    pub fn unanswered() -> Self {
        Frame {
            sse_head: None,
            event: None,
            json: Vec::new(),
            last: true,
            is_response: false,
            error_code: None,
        }
    }

    /// True for [`Frame::unanswered`].
    pub fn is_unanswered(&self) -> bool {
        self.json.is_empty()
    }

    /// The message as one SSE event, built once.
    pub fn event(&mut self) -> &[u8] {
        let (head, json) = (&self.sse_head, &self.json);
        self.event
            .get_or_insert_with(|| sse_event_after(head.as_deref().unwrap_or(""), json))
    }

    /// The message as one SSE event.
    pub fn into_event(mut self) -> Vec<u8> {
        self.event();
        self.event.unwrap_or_default()
    }
}

/// The bytes of one SSE event (in SSE syntax): the stream's own, or shared with the event
/// store's history, which a resumption replays without copying. Dereferences to `[u8]`.
#[derive(Debug, Clone)]
pub enum EventBytes {
    /// Bytes of this stream alone.
    Owned(Vec<u8>),
    /// Bytes shared with the event store (see [`crate::EventStore::after_shared`]).
    Shared(std::sync::Arc<[u8]>),
}

impl std::ops::Deref for EventBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            EventBytes::Owned(v) => v,
            EventBytes::Shared(a) => a,
        }
    }
}

/// What [`SseBody::next_event`] produced.
#[derive(Debug)]
pub enum SseNext {
    /// Event bytes to write (already in SSE syntax).
    Event(EventBytes),
    /// Nothing for the keep-alive interval: write a `:` comment (this is also how a gone client
    /// is noticed).
    Idle,
    /// The stream is over.
    End,
}

/// A stream of SSE events fed by a bounded channel. The writer of the adapter drains it; when
/// the writer stops draining (a slow or gone client), the senders time out and give up on it.
pub struct SseBody {
    initial: std::collections::VecDeque<EventBytes>,
    rx: Option<Receiver<Frame>>,
    keepalive: Duration,
    on_end: Option<Box<dyn FnOnce(StreamEnd) + Send>>,
    /// Set when the stream's end is the cancellation of its request (a 2026-07-28 exchange):
    /// its writer should watch the connection for the client's hang-up (see
    /// [`SseBody::set_hangup`]) rather than learn of it at the next keep-alive. Boxed: every
    /// response carries a body, and few need this.
    hangup: Option<Box<Hangup>>,
}

/// The watch on a stream's connection (see [`SseBody::set_hangup`]).
#[derive(Default)]
struct Hangup {
    /// Gets a message (or disconnects) when the client hung up.
    watch: Option<Receiver<()>>,
    /// The client hung up: the stream ended without a last write.
    hung_up: bool,
}

impl std::fmt::Debug for SseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseBody")
            .field("initial", &self.initial.len())
            .field("keepalive", &self.keepalive)
            .finish_non_exhaustive()
    }
}

impl SseBody {
    pub(crate) fn new(
        initial: Vec<Vec<u8>>,
        rx: Option<Receiver<Frame>>,
        keepalive: Duration,
        on_end: Option<Box<dyn FnOnce(StreamEnd) + Send>>,
    ) -> Self {
        SseBody {
            initial: initial.into_iter().map(EventBytes::Owned).collect(),
            rx,
            keepalive,
            on_end,
            hangup: None,
        }
    }

    /// Adds events kept by the event store after the initial ones (a resumption's replay),
    /// shared rather than copied.
    pub(crate) fn with_replay(mut self, replay: Vec<std::sync::Arc<[u8]>>) -> Self {
        self.initial
            .extend(replay.into_iter().map(EventBytes::Shared));
        self
    }

    /// Marks the stream as one whose client's hang-up must be noticed at once (its request's
    /// cancellation in the 2026-07-28 era).
    pub(crate) fn hangup_matters(mut self) -> Self {
        self.hangup = Some(Box::default());
        self
    }

    /// Whether the writer should watch for the client's hang-up.
    pub(crate) fn wants_hangup_watch(&self) -> bool {
        self.hangup.is_some() && self.rx.is_some()
    }

    /// The writer's watch on the connection: a message or a disconnection on `rx` means that
    /// the client hung up, and the stream ends at once.
    pub(crate) fn set_hangup(&mut self, rx: Receiver<()>) {
        if let Some(h) = &mut self.hangup {
            h.watch = Some(rx);
        }
    }

    /// The stream ended because the client hung up (see [`SseBody::set_hangup`]).
    pub(crate) fn hung_up(&self) -> bool {
        self.hangup.as_ref().is_some_and(|h| h.hung_up)
    }

    /// The next thing to write; waits at most the keep-alive interval.
    pub fn next_event(&mut self) -> SseNext {
        if let Some(e) = self.initial.pop_front() {
            return SseNext::Event(e);
        }
        let Some(rx) = &self.rx else {
            return SseNext::End;
        };
        let watch = self.hangup.as_ref().and_then(|h| h.watch.as_ref());
        let got = match watch {
            None => rx.recv_timeout(self.keepalive),
            Some(hangup) => crossbeam_channel::select! {
                recv(rx) -> f => f.map_err(|_| RecvTimeoutError::Disconnected),
                recv(hangup) -> _ => {
                    if let Some(h) = &mut self.hangup {
                        h.hung_up = true;
                    }
                    self.rx = None;
                    return SseNext::End;
                }
                default(self.keepalive) => Err(RecvTimeoutError::Timeout),
            },
        };
        match got {
            Ok(f) if f.is_unanswered() => {
                self.rx = None;
                SseNext::End
            }
            Ok(f) => SseNext::Event(EventBytes::Owned(f.into_event())),
            Err(RecvTimeoutError::Timeout) => SseNext::Idle,
            Err(RecvTimeoutError::Disconnected) => SseNext::End,
        }
    }

    /// Reports how the stream ended; the adapter calls it once when it stops writing. Dropping
    /// the body without calling it counts as [`StreamEnd::ClientGone`].
    pub fn finish(mut self, how: StreamEnd) {
        if let Some(f) = self.on_end.take() {
            f(how);
        }
    }
}

impl Drop for SseBody {
    fn drop(&mut self) {
        if let Some(f) = self.on_end.take() {
            f(StreamEnd::ClientGone);
        }
    }
}

/// Encodes one SSE event. `data` must not contain a newline (our JSON never does).
pub(crate) fn sse_event(id: Option<&str>, event: Option<&str>, data: &[u8]) -> Vec<u8> {
    sse_event_after(&sse_head(id, event), data)
}

/// The `id:` and `event:` lines of an SSE event (empty when it has neither).
pub(crate) fn sse_head(id: Option<&str>, event: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(id) = id {
        out.push_str("id: ");
        out.push_str(id);
        out.push('\n');
    }
    if let Some(ev) = event {
        out.push_str("event: ");
        out.push_str(ev);
        out.push('\n');
    }
    out
}

/// An SSE event made of its `head` lines (see [`sse_head`]) and one `data:` line.
fn sse_event_after(head: &str, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len() + data.len() + 8);
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
    out
}

/// True when the Accept header admits `mime` (or a wildcard covering it).
pub(crate) fn accepts(accept: Option<&str>, mime: &str) -> bool {
    let Some(accept) = accept else {
        return false;
    };
    let major = mime.split('/').next().unwrap_or("");
    // The most specific range that covers `mime` decides (RFC 9110 §12.5.1), and a weight of
    // zero in it means "not acceptable": `*/*, application/json;q=0` refuses JSON.
    let mut best: Option<(u8, bool)> = None;
    for part in accept.split(',') {
        let mut fields = part.split(';');
        let m = fields.next().unwrap_or("").trim();
        let specificity = if m.eq_ignore_ascii_case(mime) {
            2
        } else if m.ends_with("/*") && m[..m.len() - 2].eq_ignore_ascii_case(major) {
            1
        } else if m == "*/*" {
            0
        } else {
            continue;
        };
        let refused = fields.any(|f| {
            f.trim()
                .split_once('=')
                .is_some_and(|(k, v)| k.trim().eq_ignore_ascii_case("q") && is_zero_weight(v))
        });
        if best.is_none_or(|(s, _)| specificity > s) {
            best = Some((specificity, !refused));
        }
    }
    best.is_some_and(|(_, ok)| ok)
}

/// A `q` value of zero (`0`, `0.`, `0.0` .. `0.000`).
fn is_zero_weight(v: &str) -> bool {
    let v = v.trim();
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    int == "0" && frac.len() <= 3 && frac.bytes().all(|b| b == b'0')
}

/// A request target in absolute-form (`POST http://127.0.0.1:8080/mcp`, as a proxy sends it),
/// made origin-form (`/mcp`): RFC 9112 §3.2.2 has a server accept it, ignore the `Host`
/// header and take the host from the target, so the target's authority becomes the `Host`
/// that the checks against DNS rebinding look at.
pub(crate) fn to_origin_form(target: &mut String, headers: &mut Vec<(String, String)>) {
    let prefix = ["http://", "https://"].into_iter().find(|p| {
        target
            .get(..p.len())
            .is_some_and(|t| t.eq_ignore_ascii_case(p))
    });
    let Some(prefix) = prefix else {
        return;
    };
    let rest = &target[prefix.len()..];
    let (authority, path) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    // Userinfo is deprecated in http URIs; the host is what follows it.
    let host = authority.rsplit('@').next().unwrap_or(authority).to_owned();
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    headers.retain(|(n, _)| !n.eq_ignore_ascii_case("host"));
    headers.push(("Host".to_owned(), host));
    *target = path;
}

/// 400 with a JSON-RPC invalid-request error saying `detail`.
pub(crate) fn err400(detail: impl Into<String>) -> HttpResponse {
    bad_request(None, detail)
}

/// 400 with a JSON-RPC invalid-request error for the request `id` (when it could be read).
pub(crate) fn bad_request(id: Option<RequestId>, detail: impl Into<String>) -> HttpResponse {
    HttpResponse::rpc_error(
        400,
        id,
        ErrorObject::new(codes::INVALID_REQUEST, detail.into()),
    )
}

/// 404 for a legacy session id that names no live session.
pub(crate) fn session_not_found(id: Option<RequestId>) -> HttpResponse {
    HttpResponse::rpc_error(404, id, ErrorObject::new(-32001, "Session not found"))
}

/// 400 for a protocol revision this server does not speak, listing the ones it does.
pub(crate) fn unsupported_version(
    id: Option<RequestId>,
    requested: &str,
    supported: Vec<&'static str>,
) -> HttpResponse {
    HttpResponse::rpc_error(
        400,
        id,
        ErrorObject::new(
            codes::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(json!({ "supported": supported, "requested": requested })),
    )
}

/// 405 for a method the endpoint does not serve.
pub(crate) fn method_not_allowed() -> HttpResponse {
    HttpResponse::empty(405).with_header("Allow", "POST")
}

/// 413 with a JSON-RPC error that names the limit.
fn too_large(max: usize) -> HttpResponse {
    HttpResponse::rpc_error(
        413,
        None,
        ErrorObject::new(
            codes::INVALID_REQUEST,
            format!("the request body is larger than this server takes ({max} bytes)"),
        ),
    )
}

/// 503 with `Retry-After` and a JSON-RPC error saying what is full (every refusal of this
/// server tells an MCP client why, in the body as well as in the status).
pub(crate) fn busy(what: &str, retry_after: &str) -> HttpResponse {
    HttpResponse::rpc_error(
        503,
        None,
        ErrorObject::new(codes::INTERNAL_ERROR, format!("server busy: {what}")),
    )
    .with_header("Retry-After", retry_after)
}

/// Reads a request body of at most `max` bytes; 413 beyond it (checked against the declared
/// length first, so an oversized body is refused before any of it is read).
pub(crate) fn read_body(
    req: &HttpRequest,
    body: &mut dyn Read,
    max: usize,
) -> Result<Vec<u8>, HttpResponse> {
    if req.content_length.is_some_and(|l| l > max as u64) {
        return Err(too_large(max));
    }
    let mut buf = Vec::with_capacity(req.content_length.unwrap_or(0).min(max as u64) as usize);
    match body.take(max as u64 + 1).read_to_end(&mut buf) {
        Ok(_) if buf.len() > max => Err(too_large(max)),
        Ok(_) => Ok(buf),
        Err(e) => Err(err400(format!("could not read the body: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::accepts;

    #[test]
    fn a_zero_weight_refuses_and_the_most_specific_range_decides() {
        let json = "application/json";
        assert!(accepts(Some("application/json, text/event-stream"), json));
        assert!(accepts(Some("*/*"), json));
        assert!(accepts(Some("application/*;q=0.5"), json));
        assert!(!accepts(
            Some("application/json;q=0, text/event-stream"),
            json
        ));
        assert!(!accepts(Some("application/json; q=0.000"), json));
        assert!(!accepts(Some("*/*, application/json;q=0"), json));
        assert!(accepts(Some("*/*;q=0, application/json"), json));
        assert!(accepts(Some("application/json;q=0.001"), json));
        assert!(!accepts(Some("text/event-stream"), json));
        assert!(!accepts(None, json));
    }

    #[test]
    fn an_absolute_form_target_becomes_origin_form_and_names_the_host() {
        let form = |t: &str, host: Option<&str>| {
            let mut target = t.to_owned();
            let mut headers: Vec<(String, String)> = host
                .map(|h| ("host".to_owned(), h.to_owned()))
                .into_iter()
                .collect();
            super::to_origin_form(&mut target, &mut headers);
            (target, headers)
        };
        let host = |h: &str| vec![("Host".to_owned(), h.to_owned())];
        assert_eq!(
            form("http://127.0.0.1:8080/mcp?x=1", Some("evil.example")),
            ("/mcp?x=1".to_owned(), host("127.0.0.1:8080"))
        );
        assert_eq!(
            form("HTTPS://localhost", None),
            ("/".to_owned(), host("localhost"))
        );
        assert_eq!(
            form("http://u@[::1]:9/a", None),
            ("/a".to_owned(), host("[::1]:9"))
        );
        // Origin-form is left alone.
        assert_eq!(
            form("/mcp", Some("localhost")),
            (
                "/mcp".to_owned(),
                vec![("host".to_owned(), "localhost".to_owned())]
            )
        );
    }
}
