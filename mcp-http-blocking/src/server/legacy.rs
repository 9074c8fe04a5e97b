//! The legacy era's handlers (2024-11-05 .. 2025-11-25): a session's POST, its GET stream and
//! DELETE, and the 2024-11-05 HTTP+SSE pair (`/sse` + `/messages`).

use std::io::Read;
use std::sync::Arc;

use mcp_core::jsonrpc::{
    DecodeError, ErrorObject, Message, Payload as Incoming, RequestId, codes, decode_incoming,
};
use mcp_core::service::{SessionInfo, TransportKind};
use mcp_core::version::{Era, ProtocolVersion};
use serde_json::Value;

use crate::server::answer::{
    Answer, Deferred, Escape, Frames, OnEnd, Reply, Via, json_array, sse_response,
};
use crate::server::context::ServerContext;
use crate::server::http::{
    HttpRequest, HttpResponse, SseBody, accepts, err400, method_not_allowed, read_body,
    session_not_found, sse_event, unsupported_version,
};
use crate::server::sessions::{
    Kind, LegacySession, StreamError, new_session_id, parse_event_id, priming_event,
};
use crate::{SESSION_HEADER, VERSION_HEADER};

/// 503 when every session the server may hold is busy: the client may try again shortly.
/// 429 for a stream beyond the session's `max_streams_per_session`.
fn too_many_streams() -> HttpResponse {
    HttpResponse::rpc_error(
        429,
        None,
        ErrorObject::new(
            codes::INTERNAL_ERROR,
            "too many streams open in this session",
        ),
    )
}

pub(crate) fn too_many_sessions(id: Option<RequestId>) -> HttpResponse {
    HttpResponse::rpc_error(
        503,
        id,
        ErrorObject::new(codes::INTERNAL_ERROR, "too many sessions"),
    )
    .with_header("Retry-After", "5")
}

pub(crate) fn open(
    ctx: &Arc<ServerContext>,
    kind: Kind,
    claims: Option<Value>,
) -> Result<Arc<LegacySession>, HttpResponse> {
    let Some(id) = new_session_id() else {
        return Err(HttpResponse::empty(500));
    };
    let sess = LegacySession::new(id, kind, ctx.cfg.clone(), ctx.store.clone());
    sess.bind_owner(claims.as_ref());
    match ctx.sessions.insert(sess.clone(), ctx.cfg.max_sessions) {
        // The longest idle session made room: its client gets 404 next time, and starts anew.
        Some(evicted) => {
            if let Some(old) = evicted {
                log::info!("session limit reached: closed the longest idle session");
                old.close();
            }
        }
        None => return Err(too_many_sessions(None)),
    }
    let transport = match kind {
        Kind::Streamable => TransportKind::StreamableHttp,
        Kind::OldSse => TransportKind::LegacySse,
    };
    let mut info = SessionInfo::new(transport).with_sealer(ctx.sealer.clone());
    if let Some(c) = claims {
        info = info.with_auth(c);
    }
    if ctx.watch.is_some() && kind == Kind::Streamable {
        // Every request of this session can escape (see `answer::escape`). A 2024-11-05 session
        // is not run inline: its POST is answered 202 once the message is delivered, and
        // a client that sends the next message after that 202 relies on that order.
        info = info.with_blocking_handle();
    }
    let svc = ctx.service.open(info, sess.outbound());
    sess.set_service(svc);
    Ok(sess)
}

pub(crate) fn post(
    ctx: &Arc<ServerContext>,
    sess: &Arc<LegacySession>,
    msgs: Vec<Result<Message, DecodeError>>,
    single: bool,
    accept_sse: bool,
    is_init: bool,
    via: Via,
) -> Reply {
    let Sorted {
        mut msgs,
        ids,
        mut refused,
    } = sort_batch(msgs);
    if ids.is_empty() {
        // Notifications and answers to our own requests: quick to handle anywhere.
        for m in msgs {
            sess.deliver(m);
        }
        return Reply::Now(if refused.is_empty() {
            HttpResponse::empty(202)
        } else {
            HttpResponse::json(200, json_array(refused))
        });
    }
    let opened = match sess.open_post_stream(&ids, single && ids.len() == 1) {
        Ok(x) => x,
        Err(StreamError::TooMany) => return Reply::Now(too_many_streams()),
        Err(_) => return Reply::Now(session_not_found(None)),
    };
    if !opened.taken.is_empty() {
        // Ids of requests in flight on other streams: refused here, as the engine would
        // refuse them, but without touching the route of the request that holds the id.
        msgs.retain(|m| !matches!(m, Message::Request(r) if opened.taken.contains(&r.id)));
        refused.extend(opened.taken.iter().map(|id| {
            let e = ErrorObject::invalid_request(format!(
                "request id {id} is already in use by a request in flight"
            ));
            Message::error(Some(id.clone()), e).to_vec()
        }));
    }
    let Some((stream, att)) = opened.opened else {
        // Every request reused an id in flight: what else came is delivered, and the
        // refusals are the answer.
        for m in msgs {
            sess.deliver(m);
        }
        return Reply::Now(if single {
            HttpResponse::json(200, refused.pop().unwrap_or_default())
        } else if accept_sse {
            let events = refused.iter().map(|j| sse_event(None, None, j)).collect();
            sse_response(SseBody::new(events, None, ctx.cfg.keepalive, None))
        } else {
            HttpResponse::json(200, json_array(refused))
        });
    };
    // The priming id is taken before any message of the stream exists, so it is below all
    // of them as a cursor.
    let priming_seq = sess.next_seq();
    let version = if is_init {
        msgs.first().and_then(|m| match m {
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
        vec![priming_event(stream.no, priming_seq, ctx.cfg.retry_ms)]
    } else {
        Vec::new()
    };
    if accept_sse && !prefix.is_empty() {
        stream.set_pollable();
    }
    if !accept_sse {
        stream.set_json_only();
    }
    let s2 = sess.clone();
    let generation = att.generation;
    let st2 = stream.clone();
    let on_end: OnEnd = Box::new(move |how| s2.detach(&st2, generation, how));
    let deliver_all = move |sess: &LegacySession| {
        for m in msgs {
            sess.deliver(m);
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
        refused,
    };
    let deferred = Deferred::new(ctx.cfg.clone(), Frames::Channel(rx), a, on_end);
    match (via, &ctx.watch) {
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
            // answer while that blocks: the delivery is a job of its own.
            let s3 = sess.clone();
            match &ctx.deliver {
                Some(x) => {
                    if let Err(e) = x.execute(move || deliver_all(&s3)) {
                        log::error!("cannot deliver a request: {e}");
                    }
                }
                None => log::error!("cannot deliver a request: no executor"),
            }
            Reply::Now(deferred.run())
        }
        (_, None) => {
            deliver_all(sess);
            Reply::Now(deferred.run())
        }
    }
}

pub(crate) fn session_for(
    ctx: &Arc<ServerContext>,
    req: &HttpRequest,
    claims: Option<&Value>,
) -> Result<Arc<LegacySession>, HttpResponse> {
    let cfg = &ctx.cfg;
    if let Some(v) = req.header(VERSION_HEADER) {
        match ProtocolVersion::parse(v) {
            Some(pv) if pv.era() == Era::Modern => return Err(method_not_allowed()),
            Some(pv) if cfg.versions.contains(pv) => {}
            _ => {
                return Err(unsupported_version(
                    None,
                    v,
                    cfg.versions.supported_strings(),
                ));
            }
        }
    }
    if !cfg.versions.speaks(Era::Legacy) {
        return Err(method_not_allowed());
    }
    let Some(id) = req.header(SESSION_HEADER) else {
        return Err(err400("Bad Request: Mcp-Session-Id header is required"));
    };
    match ctx.sessions.get(id) {
        // Another user's session is not found, as if it did not exist.
        Some(s) if s.kind == Kind::Streamable && !s.is_closed() && s.owned_by(claims) => {
            s.touch();
            Ok(s)
        }
        _ => Err(session_not_found(None)),
    }
}

pub(crate) fn get(
    ctx: &Arc<ServerContext>,
    req: &HttpRequest,
    claims: Option<&Value>,
) -> HttpResponse {
    let cfg = &ctx.cfg;
    if !cfg.enable_get_stream {
        return method_not_allowed();
    }
    let sess = match session_for(ctx, req, claims) {
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
        Err(StreamError::TooMany) => return too_many_streams(),
        Err(StreamError::Closed) if resume.is_some() => return err400("unknown Last-Event-ID"),
        Err(StreamError::Closed) => return session_not_found(None),
    };
    let mut initial = Vec::new();
    if cursor.is_none()
        && sess
            .version()
            .is_some_and(|v| v.at_least(ProtocolVersion::V2025_11_25))
    {
        initial.push(priming_event(0, sess.next_seq(), cfg.retry_ms));
        stream.primed();
    }
    let generation = att.generation;
    let s2 = sess.clone();
    let on_end: OnEnd = Box::new(move |how| s2.detach(&stream, generation, how));
    sse_response(SseBody::new(initial, att.rx, cfg.keepalive, Some(on_end)).with_replay(att.replay))
}

pub(crate) fn delete(
    ctx: &Arc<ServerContext>,
    req: &HttpRequest,
    claims: Option<&Value>,
) -> HttpResponse {
    if !ctx.cfg.enable_delete {
        return method_not_allowed();
    }
    let sess = match session_for(ctx, req, claims) {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Some(s) = ctx.sessions.remove(&sess.id) {
        s.close();
    }
    HttpResponse::empty(200)
}

pub(crate) fn sse_get(ctx: &Arc<ServerContext>, claims: Option<Value>) -> HttpResponse {
    let cfg = &ctx.cfg;
    if !cfg.versions.contains(ProtocolVersion::V2024_11_05) {
        return HttpResponse::empty(404);
    }
    let sess = match open(ctx, Kind::OldSse, claims) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let (stream, att) = match sess.attach(0, None) {
        Ok(x) => x,
        Err(_) => return HttpResponse::empty(500),
    };
    let _ = stream;
    let endpoint = format!("{}?sessionId={}", cfg.messages_path, sess.id);
    let initial = vec![sse_event(None, Some("endpoint"), endpoint.as_bytes())];
    let ctx = ctx.clone();
    let on_end: OnEnd = Box::new(move |_| {
        // The stream is the session: when it ends, so does the session.
        if let Some(s) = ctx.sessions.remove(&sess.id) {
            s.close();
        }
    });
    sse_response(SseBody::new(initial, att.rx, cfg.keepalive, Some(on_end)))
}

pub(crate) fn sse_post(
    ctx: &Arc<ServerContext>,
    req: &HttpRequest,
    body: &mut dyn Read,
    claims: Option<&Value>,
) -> HttpResponse {
    let Some(id) = req.query_param("sessionId") else {
        return err400("the sessionId query parameter is required");
    };
    let sess = match ctx.sessions.get(id) {
        Some(s) if s.kind == Kind::OldSse && s.owned_by(claims) => s,
        _ => return session_not_found(None),
    };
    let bytes = match read_body(req, body, ctx.cfg.max_body) {
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
        Err(e) if !e.is_answered() => HttpResponse::empty(400),
        Err(e) => HttpResponse::json(400, e.to_response().to_vec()),
    }
}

/// A POST's messages, sorted: what goes to the session, the ids of its requests, and the
/// answers the transport gives itself.
struct Sorted {
    msgs: Vec<Message>,
    ids: Vec<RequestId>,
    refused: Vec<Vec<u8>>,
}

/// Sorts a POST's messages (one, or a 2025-03-26 batch) as the codec judged them: an element
/// that is not a valid message gets its error answer here, as stdio gives it (an invalid
/// notification gets none), and so does a request that repeats an id of its batch (the codec
/// refuses it, so the batch's stream never waits for an answer that cannot come).
fn sort_batch(elements: Vec<Result<Message, DecodeError>>) -> Sorted {
    let mut out = Sorted {
        msgs: Vec::with_capacity(elements.len()),
        ids: Vec::new(),
        refused: Vec::new(),
    };
    for m in elements {
        match m {
            Ok(m) => {
                if let Message::Request(r) = &m {
                    out.ids.push(r.id.clone());
                }
                out.msgs.push(m);
            }
            Err(e) if !e.is_answered() => {
                log::debug!("dropping an invalid notification or response: {e}");
            }
            Err(e) => out.refused.push(e.to_response().to_vec()),
        }
    }
    out
}
