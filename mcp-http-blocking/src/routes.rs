//! The era-specific handlers of [`StreamableHttp`]: legacy sessions (POST, GET, DELETE), the
//! 2024-11-05 HTTP+SSE pair, 2026-07-28 exchanges, and the choice between a JSON and an SSE
//! answer that they share.

use std::io::Read;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use mcp_core::jsonrpc::{
    DecodeError, ErrorObject, Incoming, Message, RequestId, codes, decode_incoming,
};
use mcp_core::service::{SessionInfo, TransportKind};
use mcp_core::version::{Era, ProtocolVersion};
use serde_json::Value;

use crate::config::HttpConfig;
use crate::http::{Frame, HttpRequest, HttpResponse, SseBody, StreamEnd, accepts, sse_event};
use crate::inline::{Deferred, Escape, Frames, Reply, Via};
use crate::legacy::{Kind, LegacySession, StreamError, parse_event_id, priming_event};
use crate::modern::{ExchangeOutbound, check_headers, status_for};
use crate::transport::{
    Answer, OnEnd, SESSION_HEADER, StreamableHttp, VERSION_HEADER, err400, new_session_id,
    session_not_found, sse_response, unsupported_version,
};

impl StreamableHttp {
    pub(crate) fn open_legacy(
        &self,
        kind: Kind,
        claims: Option<Value>,
    ) -> Result<Arc<LegacySession>, HttpResponse> {
        let Some(id) = new_session_id() else {
            return Err(HttpResponse::empty(500));
        };
        let sess = LegacySession::new(id, kind, self.inner.cfg.clone(), self.inner.store.clone());
        if !self
            .inner
            .sessions
            .insert(sess.clone(), self.inner.cfg.max_sessions)
        {
            return Err(HttpResponse::rpc_error(
                503,
                None,
                ErrorObject::new(codes::INTERNAL_ERROR, "too many sessions"),
            ));
        }
        let transport = match kind {
            Kind::Streamable => TransportKind::StreamableHttp,
            Kind::OldSse => TransportKind::LegacySse,
        };
        let mut info = SessionInfo::new(transport);
        if let Some(c) = claims {
            info = info.with_auth(c);
        }
        if self.inner.watch.is_some() && kind == Kind::Streamable {
            // Every request of this session can escape (see `inline`). A 2024-11-05 session
            // is not run inline: its POST is answered 202 once the message is delivered, and
            // a client that sends the next message after that 202 relies on that order.
            info = info.with_blocking_handle();
        }
        let svc = self.inner.service.open(info, sess.outbound());
        sess.set_service(svc);
        Ok(sess)
    }

    pub(crate) fn post_legacy(
        &self,
        sess: &Arc<LegacySession>,
        msgs: Vec<Result<Message, DecodeError>>,
        single: bool,
        accept_sse: bool,
        is_init: bool,
        via: Via,
    ) -> Reply {
        let ids: Vec<RequestId> = msgs
            .iter()
            .filter_map(|m| match m {
                Ok(Message::Request(r)) => Some(r.id.clone()),
                _ => None,
            })
            .collect();
        if ids.is_empty() {
            // Notifications and answers to our own requests: quick to handle anywhere.
            for m in msgs.into_iter().flatten() {
                sess.deliver(m);
            }
            return Reply::Now(HttpResponse::empty(202));
        }
        let (stream, att) = match sess.open_post_stream(&ids, single && ids.len() == 1) {
            Ok(x) => x,
            Err(StreamError::TooMany) => return Reply::Now(HttpResponse::empty(429)),
            Err(_) => return Reply::Now(session_not_found()),
        };
        // The priming id is taken before any message of the stream exists, so it is below all
        // of them as a cursor.
        let priming_seq = sess.next_seq();
        let version = if is_init {
            msgs.first()
                .and_then(|m| m.as_ref().ok())
                .and_then(|m| match m {
                    Message::Request(r) => r
                        .params_value()
                        .get("protocolVersion")
                        .and_then(Value::as_str)
                        .and_then(ProtocolVersion::parse),
                    _ => None,
                })
        } else {
            sess.version()
        };
        let prefix = if version.is_some_and(|v| v.at_least(ProtocolVersion::V2025_11_25)) {
            vec![priming_event(
                stream.no,
                priming_seq,
                self.inner.cfg.retry_ms,
            )]
        } else {
            Vec::new()
        };
        if accept_sse && !prefix.is_empty() {
            stream.set_pollable();
        }
        let s2 = sess.clone();
        let generation = att.generation;
        let st2 = stream.clone();
        let on_end: OnEnd = Box::new(move |how| s2.detach(&st2, generation, how));
        let deliver_all = move |sess: &LegacySession| {
            for m in msgs {
                match m {
                    Ok(m) => sess.deliver(m),
                    Err(e) => log::debug!("dropping an invalid batch element: {e}"),
                }
            }
        };
        let Some(rx) = att.rx else {
            deliver_all(sess);
            return Reply::Now(HttpResponse::empty(202));
        };
        let a = Answer {
            accept_sse,
            single,
            modern: false,
            prefix,
        };
        let deferred = Deferred::new(self.inner.cfg.clone(), Frames::Channel(rx), a, on_end);
        match (via, &self.inner.watch) {
            (Via::Inline(handoff), Some(watch)) => {
                let escape = Escape::new(handoff, deferred);
                stream.set_escape(escape.clone());
                {
                    let _watched = watch.watch(&escape);
                    deliver_all(sess);
                }
                match escape.take() {
                    Some(d) => Reply::Now(d.run()),
                    None => Reply::Handed,
                }
            }
            (Via::Plain, Some(_)) => {
                // The session runs handlers inside `handle`, and nobody could write this
                // answer while that blocks: the delivery gets a thread of its own.
                let s3 = sess.clone();
                if let Err(e) = thread::Builder::new()
                    .name("mcp-http-deliver".into())
                    .spawn(move || deliver_all(&s3))
                {
                    log::error!("cannot start a thread to deliver a request: {e}");
                }
                Reply::Now(deferred.run())
            }
            (_, None) => {
                deliver_all(sess);
                Reply::Now(deferred.run())
            }
        }
    }

    pub(crate) fn post_modern(
        &self,
        req: &HttpRequest,
        incoming: Incoming,
        header_version: &str,
        accept_sse: bool,
        claims: Option<Value>,
        via: Via,
    ) -> Reply {
        let cfg = &self.inner.cfg;
        let Incoming::Single(msg) = incoming else {
            return Reply::Now(err400("JSON-RPC batches are not supported"));
        };
        let version = match cfg.versions.check_modern(header_version) {
            Ok(v) => v,
            Err(supported) if !header_version.is_empty() => {
                return Reply::Now(unsupported_version(header_version, supported));
            }
            Err(_) => {
                return Reply::Now(HttpResponse::rpc_error(
                    400,
                    msg.id().cloned(),
                    ErrorObject::new(
                        codes::HEADER_MISMATCH,
                        "the MCP-Protocol-Version header is required",
                    ),
                ));
            }
        };
        if let Err(r) = check_headers(req, &msg, header_version) {
            return Reply::Now(r);
        }
        let id = match &msg {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        let out = ExchangeOutbound::new(id.clone(), cfg.stream_buffer, cfg.send_timeout);
        let mut info =
            SessionInfo::new(TransportKind::StreamableHttp).with_protocol_version(version);
        if let Some(c) = claims {
            info = info.with_auth(c);
        }
        // Every exchange has a session of its own: it runs inline exactly when this request
        // can escape (see `inline`).
        let inline = match (via, &self.inner.watch) {
            (Via::Inline(h), Some(w)) if id.is_some() => Some((h, w)),
            _ => None,
        };
        if inline.is_some() {
            info = info.with_blocking_handle();
        }
        let session = self.inner.service.open(info, out.clone());
        let Some(id) = id else {
            session.handle(msg);
            session.close();
            return Reply::Now(HttpResponse::empty(202));
        };
        let s2 = session.clone();
        let on_end: OnEnd = Box::new(move |how| {
            if how == StreamEnd::ClientGone {
                s2.stream_closed(&id);
            }
            s2.close();
        });
        let a = Answer {
            accept_sse,
            single: true,
            modern: true,
            prefix: Vec::new(),
        };
        let deferred = Deferred::new(cfg.clone(), Frames::Exchange(out.clone()), a, on_end);
        let Some((handoff, watch)) = inline else {
            session.handle(msg);
            return Reply::Now(deferred.run());
        };
        let escape = Escape::new(handoff, deferred);
        out.set_escape(escape.clone());
        {
            let _watched = watch.watch(&escape);
            session.handle(msg);
        }
        out.clear_escape();
        match escape.take() {
            Some(d) => Reply::Now(d.run()),
            None => Reply::Handed,
        }
    }

    pub(crate) fn legacy_session_for(
        &self,
        req: &HttpRequest,
    ) -> Result<Arc<LegacySession>, HttpResponse> {
        let cfg = &self.inner.cfg;
        if let Some(v) = req.header(VERSION_HEADER) {
            match ProtocolVersion::parse(v) {
                Some(pv) if pv.era() == Era::Modern => return Err(self.method_not_allowed()),
                Some(pv) if cfg.versions.contains(pv) => {}
                _ => return Err(unsupported_version(v, cfg.versions.supported_strings())),
            }
        }
        if !cfg.versions.speaks(Era::Legacy) {
            return Err(self.method_not_allowed());
        }
        let Some(id) = req.header(SESSION_HEADER) else {
            return Err(err400("Bad Request: Mcp-Session-Id header is required"));
        };
        match self.inner.sessions.get(id) {
            Some(s) if s.kind == Kind::Streamable => {
                s.touch();
                Ok(s)
            }
            _ => Err(session_not_found()),
        }
    }

    pub(crate) fn get(&self, req: &HttpRequest) -> HttpResponse {
        let cfg = &self.inner.cfg;
        if !cfg.enable_get_stream {
            return self.method_not_allowed();
        }
        let sess = match self.legacy_session_for(req) {
            Ok(s) => s,
            Err(r) => return r,
        };
        if !accepts(req.header("Accept"), "text/event-stream") {
            return HttpResponse::rpc_error(
                406,
                None,
                ErrorObject::new(
                    codes::INVALID_REQUEST,
                    "Accept must include text/event-stream",
                ),
            );
        }
        let resume = match req.header("Last-Event-ID") {
            Some(v) => match parse_event_id(v) {
                Some(x) => Some(x),
                None => return err400("unknown Last-Event-ID"),
            },
            None => None,
        };
        let (no, cursor) = match resume {
            Some((no, seq)) => (no, Some(seq)),
            None => (0, None),
        };
        let (stream, att) = match sess.attach(no, cursor) {
            Ok(x) => x,
            Err(StreamError::Busy) => {
                return HttpResponse::rpc_error(
                    409,
                    None,
                    ErrorObject::new(
                        codes::INVALID_REQUEST,
                        "a GET stream is already open for this session",
                    ),
                );
            }
            Err(StreamError::TooMany) => return HttpResponse::empty(429),
            Err(StreamError::Closed) if resume.is_some() => return err400("unknown Last-Event-ID"),
            Err(StreamError::Closed) => return session_not_found(),
        };
        let mut initial = Vec::new();
        if cursor.is_none()
            && sess
                .version()
                .is_some_and(|v| v.at_least(ProtocolVersion::V2025_11_25))
        {
            initial.push(priming_event(0, sess.next_seq(), cfg.retry_ms));
        }
        initial.extend(att.replay);
        let generation = att.generation;
        let s2 = sess.clone();
        let on_end: OnEnd = Box::new(move |how| s2.detach(&stream, generation, how));
        sse_response(SseBody::new(initial, att.rx, cfg.keepalive, Some(on_end)))
    }

    pub(crate) fn delete(&self, req: &HttpRequest) -> HttpResponse {
        if !self.inner.cfg.enable_delete {
            return self.method_not_allowed();
        }
        let sess = match self.legacy_session_for(req) {
            Ok(s) => s,
            Err(r) => return r,
        };
        if let Some(s) = self.inner.sessions.remove(&sess.id) {
            s.close();
        }
        HttpResponse::empty(200)
    }

    pub(crate) fn old_sse_get(&self, req: &HttpRequest, claims: Option<Value>) -> HttpResponse {
        let cfg = &self.inner.cfg;
        if !cfg.versions.contains(ProtocolVersion::V2024_11_05) {
            return HttpResponse::empty(404);
        }
        let sess = match self.open_legacy(Kind::OldSse, claims) {
            Ok(s) => s,
            Err(r) => return r,
        };
        let (stream, att) = match sess.attach(0, None) {
            Ok(x) => x,
            Err(_) => return HttpResponse::empty(500),
        };
        let _ = stream;
        let endpoint = format!("{}?sessionId={}", cfg.messages_path, sess.id);
        let _ = req;
        let initial = vec![sse_event(None, Some("endpoint"), endpoint.as_bytes())];
        let me = self.clone();
        let on_end: OnEnd = Box::new(move |_| {
            // The stream is the session: when it ends, so does the session.
            if let Some(s) = me.inner.sessions.remove(&sess.id) {
                s.close();
            }
        });
        sse_response(SseBody::new(initial, att.rx, cfg.keepalive, Some(on_end)))
    }

    pub(crate) fn old_sse_post(&self, req: &HttpRequest, body: &mut dyn Read) -> HttpResponse {
        let Some(id) = req.query_param("sessionId") else {
            return err400("the sessionId query parameter is required");
        };
        let sess = match self.inner.sessions.get(id) {
            Some(s) if s.kind == Kind::OldSse => s,
            _ => return session_not_found(),
        };
        let bytes = match self.read_body(req, body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        match decode_incoming(&bytes, false) {
            Ok(Incoming::Single(m)) => {
                sess.touch();
                sess.deliver(m);
                HttpResponse::empty(202)
            }
            Ok(Incoming::Batch(_)) => err400("batches are not supported"),
            Err(e) => HttpResponse::json(400, e.to_response().to_vec()),
        }
    }
}

/// A lone final answer as a JSON response.
pub(crate) fn json_answer(modern: bool, f: Frame) -> HttpResponse {
    let status = if modern {
        status_for(f.error_code)
    } else {
        200
    };
    HttpResponse::json(status, f.json)
}

/// Turns a stream's channel into the HTTP answer: plain JSON when the client accepts only
/// JSON, or when the answer arrives alone within the JSON window; SSE otherwise. `window` is what is left of that window.
pub(crate) fn answer(
    cfg: &HttpConfig,
    rx: Receiver<Frame>,
    a: Answer,
    on_end: OnEnd,
    window: Duration,
) -> HttpResponse {
    let modern = a.modern;
    let json_of = |f: Frame| json_answer(modern, f);
    if !a.accept_sse {
        let deadline = Instant::now() + cfg.request_timeout;
        let mut answers = Vec::new();
        loop {
            match rx.recv_deadline(deadline) {
                Ok(f) => {
                    let last = f.last;
                    if f.is_response {
                        answers.push(f);
                    }
                    if last {
                        break;
                    }
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    on_end(StreamEnd::ClientGone);
                    return HttpResponse::rpc_error(
                        504,
                        None,
                        ErrorObject::internal("no answer in time"),
                    );
                }
            }
        }
        on_end(StreamEnd::Completed);
        return if a.single {
            match answers.into_iter().next() {
                Some(f) => json_of(f),
                None => {
                    HttpResponse::rpc_error(503, None, ErrorObject::internal("the session closed"))
                }
            }
        } else {
            let mut out = b"[".to_vec();
            for (i, f) in answers.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(&f.json);
            }
            out.push(b']');
            HttpResponse::json(200, out)
        };
    }
    let mut initial = a.prefix;
    match rx.recv_timeout(window) {
        Ok(f) if f.last && a.single => {
            on_end(StreamEnd::Completed);
            json_of(f)
        }
        Ok(f) => {
            initial.push(f.into_event());
            sse_response(SseBody::new(initial, Some(rx), cfg.keepalive, Some(on_end)))
        }
        Err(RecvTimeoutError::Timeout) => {
            sse_response(SseBody::new(initial, Some(rx), cfg.keepalive, Some(on_end)))
        }
        Err(RecvTimeoutError::Disconnected) => {
            on_end(StreamEnd::Completed);
            sse_response(SseBody::new(initial, None, cfg.keepalive, None))
        }
    }
}
