//! The 2026-07-28 era's handler: every POST is one exchange. It opens a session of the service
//! for it, delivers the one message, relays what the service sends about it ([`exchange`]),
//! and closes the session after the answer, or when the client hangs up (which is the
//! cancellation). The request headers are checked against the body first ([`headers`]).

mod exchange;
mod headers;

use std::sync::Arc;

use mcp_core::jsonrpc::{ErrorObject, Message, Payload as Incoming, codes};
use mcp_core::service::{SessionInfo, TransportKind};
use mcp_core::types::methods;
use serde_json::Value;

use crate::server::answer::{Answer, Deferred, Escape, Frames, OnEnd, Reply, Via};
use crate::server::context::ServerContext;
use crate::server::http::{
    HttpRequest, HttpResponse, StreamEnd, accepts, err400, unsupported_version,
};
use exchange::ExchangeOutbound;
use headers::{check_headers, param_headers};

pub(crate) fn post(
    ctx: &Arc<ServerContext>,
    req: &HttpRequest,
    incoming: Incoming,
    header_version: &str,
    accept_sse: bool,
    claims: Option<Value>,
    via: Via,
) -> Reply {
    let cfg = &ctx.cfg;
    let Incoming::Single(msg) = incoming else {
        return Reply::Now(err400("JSON-RPC batches are not supported"));
    };
    let version = match cfg.versions.check_modern(header_version) {
        Ok(v) => v,
        Err(supported) if !header_version.is_empty() => {
            return Reply::Now(unsupported_version(
                msg.id().cloned(),
                header_version,
                supported,
            ));
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
    let params = match param_headers(req, &msg) {
        Ok(p) => p,
        Err(r) => return Reply::Now(r),
    };
    let id = match &msg {
        Message::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    if let (Some(id), false) = (&id, accept_sse) {
        if msg.method() == Some(methods::SUBSCRIPTIONS_LISTEN) {
            // A listen is a stream of notifications with no final answer: as JSON it could only
            // end in the answer timeout (5 min, then 504), holding the connection.
            return Reply::Now(HttpResponse::rpc_error(
                406,
                Some(id.clone()),
                ErrorObject::new(
                    codes::INVALID_REQUEST,
                    "subscriptions/listen is answered as an SSE stream: Accept must include text/event-stream",
                ),
            ));
        }
    }
    let out = ExchangeOutbound::new(id.clone(), cfg.stream_buffer, cfg.send_timeout);
    let mut info = SessionInfo::new(TransportKind::StreamableHttp)
        .with_protocol_version(version)
        .with_param_headers(params)
        .with_sealer(ctx.sealer.clone());
    if let Some(c) = claims {
        info = info.with_auth(c);
    }
    if let Some(peer) = req.remote_addr {
        info = info.with_peer(peer);
    }
    // Every exchange has a session of its own: it runs inline exactly when this request
    // can escape (see `answer::escape`).
    let inline = match (via, &ctx.watch) {
        (Via::Inline(h), Some(w)) if id.is_some() => Some((h, w)),
        _ => None,
    };
    if inline.is_some() {
        info = info.with_blocking_handle();
    }
    let session = ctx.service.open(info, out.clone());
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
    // Plain JSON for the lone answer only where the client takes it (see `streamable`).
    let accept = req.header("Accept");
    let a = Answer {
        accept_sse,
        single: accept.is_none_or(|a| accepts(Some(a), "application/json")),
        modern: true,
        prefix: Vec::new(),
        refused: Vec::new(),
    };
    let deferred = Deferred::new(cfg.clone(), Frames::Lazy(out.clone()), a, on_end);
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
