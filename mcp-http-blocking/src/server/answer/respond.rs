//! The choice between a JSON and an SSE answer, shared by both eras: a stream's channel in, the
//! HTTP response out.

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use mcp_core::jsonrpc::{ErrorObject, codes};

use crate::server::config::HttpConfig;
use crate::server::http::{Body, Frame, HttpResponse, SseBody, StreamEnd, sse_event};

/// Told how a stream ended, once.
pub(crate) type OnEnd = Box<dyn FnOnce(StreamEnd) + Send>;

/// What shapes an answer.
pub(crate) struct Answer {
    /// The client accepts `text/event-stream`.
    pub(crate) accept_sse: bool,
    /// The POST carried one request (its answer may go back alone as JSON).
    pub(crate) single: bool,
    /// A 2026-07-28 exchange (errors map to HTTP statuses).
    pub(crate) modern: bool,
    /// Events written before the stream's own (a priming event).
    pub(crate) prefix: Vec<Vec<u8>>,
    /// Answers the transport made itself, for the batch elements that never reached the
    /// service (invalid ones, repeated ids): JSON, sent before the service's answers.
    pub(crate) refused: Vec<Vec<u8>>,
}

/// An SSE response around `body`.
pub(crate) fn sse_response(body: SseBody) -> HttpResponse {
    HttpResponse {
        status: 200,
        headers: vec![
            ("Content-Type".into(), "text/event-stream".into()),
            ("Cache-Control".into(), "no-cache".into()),
            ("X-Accel-Buffering".into(), "no".into()),
        ],
        body: Body::Sse(body),
    }
}

/// A finished exchange's one message as an SSE stream of one event, for a client that takes
/// no plain JSON.
pub(crate) fn lone_event(cfg: &HttpConfig, f: Frame) -> HttpResponse {
    sse_response(SseBody::new(
        vec![f.into_event()],
        None,
        cfg.keepalive,
        None,
    ))
}

/// The HTTP status of a 2026-07-28 error answer sent as JSON.
pub(crate) fn status_for(code: Option<i64>) -> u16 {
    match code {
        Some(codes::METHOD_NOT_FOUND) => 404,
        Some(codes::HEADER_MISMATCH)
        | Some(codes::MISSING_REQUIRED_CLIENT_CAPABILITY)
        | Some(codes::UNSUPPORTED_PROTOCOL_VERSION) => 400,
        _ => 200,
    }
}

/// A JSON array of the given JSON texts (a batch's answers).
pub(crate) fn json_array(items: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut out = b"[".to_vec();
    for (i, j) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&j);
    }
    out.push(b']');
    out
}

/// A lone final answer as a JSON response. A request refused by the service's rate limit
/// ([`codes::RATE_LIMITED`]) is `429 Too Many Requests` with `Retry-After` in either era: the
/// status is what HTTP clients, proxies and load balancers act on, and the body still carries
/// the JSON-RPC error for the MCP client.
pub(crate) fn json_answer(modern: bool, f: Frame) -> HttpResponse {
    if f.error_code == Some(codes::RATE_LIMITED) {
        let secs = retry_after_secs(&f.json);
        return HttpResponse::json(429, f.json).with_header("Retry-After", secs.to_string());
    }
    let status = if modern {
        status_for(f.error_code)
    } else {
        200
    };
    HttpResponse::json(status, f.json)
}

/// `Retry-After` in whole seconds from the error's `data.retryAfterMs`, rounded up (at least 1:
/// an answer refused now is not accepted at once); 1 when the service gave none.
fn retry_after_secs(json: &[u8]) -> u64 {
    let ms = serde_json::from_slice::<serde_json::Value>(json)
        .ok()
        .and_then(|v| v["error"]["data"]["retryAfterMs"].as_u64())
        .unwrap_or(0);
    ms.div_ceil(1000).max(1)
}

/// The answer to a POST whose every request was cancelled before its answer started:
/// `204 No Content`. Why this one: the client said it no longer wants the answer, and the
/// cancellation rule is that the receiver SHOULD NOT send a response for a cancelled request
/// (and the sender SHOULD ignore one that comes anyway), so no JSON-RPC message fits; a 2xx
/// without a body ends the exchange at once, cannot be mistaken for an answer, and keeps the
/// connection for the next request; `202 Accepted` would say the answer comes elsewhere (the
/// 2024-11-05 transport's meaning), and an error status would report a failure where the
/// client got what it asked for.
fn cancelled_answer() -> HttpResponse {
    HttpResponse::empty(204)
}

/// Turns a stream's channel into the HTTP answer: plain JSON when the client accepts only
/// JSON, or when the answer arrives alone within the JSON window; SSE otherwise. `window` is what is left of that window.
pub(crate) fn answer(
    cfg: &HttpConfig,
    rx: Receiver<Frame>,
    a: Answer,
    on_end: OnEnd,
    window: Duration,
    hangup: Option<Receiver<()>>,
) -> HttpResponse {
    let modern = a.modern;
    let json_of = |f: Frame| json_answer(modern, f);
    if !a.accept_sse {
        let deadline = Instant::now() + cfg.request_timeout;
        let mut answers = Vec::new();
        let mut cancelled = false;
        let hangup = hangup.unwrap_or_else(crossbeam_channel::never);
        loop {
            let next = crossbeam_channel::select! {
                recv(rx) -> f => f.map_err(|_| RecvTimeoutError::Disconnected),
                // The client hung up (a 2026-07-28 cancellation): nobody to answer.
                recv(hangup) -> _ => {
                    on_end(StreamEnd::ClientGone);
                    return cancelled_answer();
                }
                recv(crossbeam_channel::at(deadline)) -> _ => Err(RecvTimeoutError::Timeout),
            };
            match next {
                Ok(f) => {
                    let last = f.last;
                    cancelled |= f.is_unanswered();
                    if f.is_response {
                        answers.push(f);
                    }
                    if last {
                        break;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
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
        if cancelled && answers.is_empty() && a.refused.is_empty() {
            return cancelled_answer();
        }
        return if a.single {
            match answers.into_iter().next() {
                Some(f) => json_of(f),
                None => {
                    HttpResponse::rpc_error(503, None, ErrorObject::internal("the session closed"))
                }
            }
        } else {
            let all = a
                .refused
                .into_iter()
                .chain(answers.into_iter().map(|f| f.json));
            HttpResponse::json(200, json_array(all))
        };
    }
    let mut initial = a.prefix;
    initial.extend(a.refused.iter().map(|j| sse_event(None, None, j)));
    // In 2026-07-28 the client's hang-up is the request's cancellation: its writer watches
    // for it (see `SseBody::set_hangup`).
    let sse = |initial, rx, on_end| {
        let body = SseBody::new(initial, Some(rx), cfg.keepalive, Some(on_end));
        sse_response(if modern { body.hangup_matters() } else { body })
    };
    match rx.recv_timeout(window) {
        Ok(f) if f.is_unanswered() => {
            on_end(StreamEnd::Completed);
            if a.refused.is_empty() {
                cancelled_answer()
            } else {
                HttpResponse::json(200, json_array(a.refused))
            }
        }
        Ok(f) if f.last && a.single => {
            on_end(StreamEnd::Completed);
            json_of(f)
        }
        Ok(f) => {
            initial.push(f.into_event());
            sse(initial, rx, on_end)
        }
        Err(RecvTimeoutError::Timeout) => sse(initial, rx, on_end),
        Err(RecvTimeoutError::Disconnected) => {
            on_end(StreamEnd::Completed);
            sse_response(SseBody::new(initial, None, cfg.keepalive, None))
        }
    }
}
