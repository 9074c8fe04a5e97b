//! The 2026-07-28 era: every POST is one exchange. The transport opens a session of the service
//! for it, delivers the one message, relays what the service sends about it, and closes the
//! session after the answer, or when the client hangs up (which is the cancellation).

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_core::jsonrpc::{ErrorObject, Message, RequestId, codes};
use mcp_core::service::{Closed, Outbound};
use serde::Deserialize;
use serde_json::Value;

use crate::http::{Frame, HttpRequest, HttpResponse, sse_event};
use crate::inline::Escape;
use crate::security::decode_header_value;

/// Relays one exchange's messages into its channel; dropping the sender after the answer ends
/// the stream.
pub(crate) struct ExchangeOutbound {
    id: Option<RequestId>,
    tx: Mutex<Option<Sender<Frame>>>,
    send_timeout: Duration,
    /// While the handler runs inline on the request's thread: its pending answer, started
    /// elsewhere by the first message that is not the final answer (see `inline`).
    escape: Mutex<Option<Arc<Escape>>>,
}

impl ExchangeOutbound {
    pub fn new(
        id: Option<RequestId>,
        buffer: usize,
        send_timeout: Duration,
    ) -> (Arc<Self>, Receiver<Frame>) {
        let (tx, rx) = bounded(buffer.max(1));
        (
            Arc::new(ExchangeOutbound {
                id,
                tx: Mutex::new(Some(tx)),
                send_timeout,
                escape: Mutex::new(None),
            }),
            rx,
        )
    }

    pub fn set_escape(&self, e: Arc<Escape>) {
        *self.escape.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
    }

    pub fn clear_escape(&self) {
        self.escape.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

impl Outbound for ExchangeOutbound {
    fn send(&self, msg: Message, related: Option<&RequestId>) -> Result<(), Closed> {
        // No server-to-client requests travel on 2026-07-28 streams, and nothing unrelated to
        // the exchange's request has anywhere to go.
        if matches!(msg, Message::Request(_)) {
            return Err(Closed);
        }
        let mine = match &msg {
            Message::Response(_) | Message::Error(_) => msg.id() == self.id.as_ref(),
            _ => related.is_some() && related == self.id.as_ref(),
        };
        if !mine {
            return Err(Closed);
        }
        if !msg.is_response() {
            let escape = self.escape.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(e) = escape {
                e.fire(false);
            }
        }
        let mut guard = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        let Some(tx) = guard.as_ref() else {
            return Err(Closed);
        };
        let json = msg.to_vec();
        let last = msg.is_response();
        let frame = Frame {
            event: sse_event(None, None, &json),
            json,
            last,
            is_response: last,
            error_code: match &msg {
                Message::Error(e) => Some(e.error.code),
                _ => None,
            },
        };
        let ok = tx.send_timeout(frame, self.send_timeout).is_ok();
        if last || !ok {
            *guard = None;
        }
        if ok { Ok(()) } else { Err(Closed) }
    }
}

/// What the header checks read from a message's params, borrowed where the text allows: the
/// params (a tool's arguments, say) are not parsed into a `Value` for it.
#[derive(Deserialize, Default)]
struct Head<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<MetaHead<'a>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    uri: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct MetaHead<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    version: Option<Cow<'a, str>>,
}

/// The [`Head`] of some params; when they do not fit its types (a name that is not a string,
/// a duplicate key, no object at all), read the way a `Value` reads them, where anything that
/// is not a string counts as absent.
fn head<'a>(typed: Result<Head<'a>, serde_json::Error>, value: impl FnOnce() -> Value) -> Head<'a> {
    if let Ok(h) = typed {
        return h;
    }
    let v = value();
    let text = |x: Option<&Value>| x.and_then(Value::as_str).map(|s| Cow::Owned(s.to_owned()));
    Head {
        meta: Some(MetaHead {
            version: text(
                v.get("_meta")
                    .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion")),
            ),
        }),
        name: text(v.get("name")),
        uri: text(v.get("uri")),
    }
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

fn mismatch(id: Option<RequestId>, detail: String) -> HttpResponse {
    HttpResponse::rpc_error(400, id, ErrorObject::new(codes::HEADER_MISMATCH, detail))
}

/// Checks the 2026-07-28 request headers against the body: `MCP-Protocol-Version` equals
/// `_meta` protocolVersion, `Mcp-Method` equals `method`, `Mcp-Name` equals `params.name` /
/// `params.uri` where the method has one. Values may use the `=?base64?...?=` form.
pub(crate) fn check_headers(
    req: &HttpRequest,
    msg: &Message,
    header_version: &str,
) -> Result<(), HttpResponse> {
    let id = msg.id().cloned();
    let (method, head) = match msg {
        Message::Request(r) => (r.method.as_str(), head(r.params(), || r.params_value())),
        Message::Notification(n) => (n.method.as_str(), head(n.params(), || n.params_value())),
        // Responses carry no method; nothing to compare.
        _ => return Ok(()),
    };
    if let Message::Request(_) = msg {
        let meta_version = head.meta.as_ref().and_then(|m| m.version.as_deref());
        if meta_version != Some(header_version) {
            return Err(mismatch(
                id,
                format!(
                    "MCP-Protocol-Version header {header_version:?} does not match _meta protocolVersion {meta_version:?}"
                ),
            ));
        }
    }
    match req.header("Mcp-Method").map(decode_header_value) {
        Some(Some(h)) if h == method => {}
        Some(Some(h)) => {
            return Err(mismatch(
                id,
                format!("Mcp-Method header {h:?} does not match method {method:?}"),
            ));
        }
        Some(None) => return Err(mismatch(id, "Mcp-Method header is not valid base64".into())),
        None => return Err(mismatch(id, "the Mcp-Method header is required".into())),
    }
    let name_key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(key) = name_key {
        let body_name = if key == "name" {
            head.name.as_deref()
        } else {
            head.uri.as_deref()
        };
        match req.header("Mcp-Name").map(decode_header_value) {
            Some(Some(h)) if Some(h.as_str()) == body_name => {}
            Some(Some(h)) => {
                return Err(mismatch(
                    id,
                    format!("Mcp-Name header {h:?} does not match params.{key} {body_name:?}"),
                ));
            }
            Some(None) => return Err(mismatch(id, "Mcp-Name header is not valid base64".into())),
            None => {
                return Err(mismatch(
                    id,
                    format!("the Mcp-Name header is required for {method}"),
                ));
            }
        }
    }
    Ok(())
}
