//! The 2026-07-28 request headers checked against the body: `MCP-Protocol-Version` against
//! `_meta`'s protocolVersion, `Mcp-Method` against the method, `Mcp-Name` against the tool,
//! prompt or resource the params name. The envelope itself (`_meta` with protocolVersion and
//! clientCapabilities) is checked here too, because its absence is an HTTP 400 that the
//! engine's -32602, answered like any result, would not give.

use std::borrow::Cow;

use mcp_core::jsonrpc::{ErrorObject, Message, RequestId, codes};
use mcp_core::types::methods;
use serde::Deserialize;
use serde_json::Value;

use crate::server::http::{HttpRequest, HttpResponse};
use crate::server::security::decode_header_value;

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
    #[serde(rename = "taskId", borrow, default)]
    task_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct MetaHead<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    version: Option<Cow<'a, str>>,
    /// Read only to tell an object from anything else; a client's capabilities are small.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    capabilities: Option<Value>,
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
    let meta = v.get("_meta");
    Head {
        meta: meta.map(|m| MetaHead {
            version: text(m.get("io.modelcontextprotocol/protocolVersion")),
            capabilities: m
                .get("io.modelcontextprotocol/clientCapabilities")
                .filter(|c| !c.is_null())
                .cloned(),
        }),
        name: text(v.get("name")),
        uri: text(v.get("uri")),
        task_id: text(v.get("taskId")),
    }
}

fn mismatch(id: Option<RequestId>, detail: String) -> HttpResponse {
    HttpResponse::rpc_error(400, id, ErrorObject::new(codes::HEADER_MISMATCH, detail))
}

/// A request without the envelope 2026-07-28 requires: -32602 (the params are wrong, not the
/// headers), with 400 because the request was never processed.
fn bad_envelope(id: Option<RequestId>, detail: &str) -> HttpResponse {
    HttpResponse::rpc_error(400, id, ErrorObject::invalid_params(detail))
}

/// Checks the 2026-07-28 request headers against the body: a request carries `_meta` with a
/// protocolVersion (else -32602) equal to `MCP-Protocol-Version` (else -32020) and a
/// clientCapabilities object (else -32602), `Mcp-Method` equals `method`, `Mcp-Name` equals
/// `params.name` / `params.uri` where the method has one. Values may use the `=?base64?...?=`
/// form (a notification may leave `Mcp-Method` out). Every refusal is a 400 carrying the
/// request's id.
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
        let Some(meta) = head.meta.as_ref() else {
            return Err(bad_envelope(
                id,
                "2026-07-28 requests carry params._meta with io.modelcontextprotocol/protocolVersion \
                 and io.modelcontextprotocol/clientCapabilities",
            ));
        };
        let Some(meta_version) = meta.version.as_deref() else {
            return Err(bad_envelope(
                id,
                "_meta io.modelcontextprotocol/protocolVersion is required (a string)",
            ));
        };
        if meta_version != header_version {
            return Err(mismatch(
                id,
                format!(
                    "MCP-Protocol-Version header {header_version:?} does not match _meta protocolVersion {meta_version:?}"
                ),
            ));
        }
        if !meta.capabilities.as_ref().is_some_and(Value::is_object) {
            return Err(bad_envelope(
                id,
                "_meta io.modelcontextprotocol/clientCapabilities is required (an object)",
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
        // Required on requests; 2026-07-28 defines no header requirements for a notification
        // POST (the TypeScript SDK's client sends `notifications/cancelled` without one), so
        // one without is taken, and one with a wrong value still refused.
        None if matches!(msg, Message::Notification(_)) => {}
        None => return Err(mismatch(id, "the Mcp-Method header is required".into())),
    }
    let name_key = methods::name_param(method);
    if let Some(key) = name_key {
        let body_name = match key {
            "name" => head.name.as_deref(),
            "uri" => head.uri.as_deref(),
            _ => head.task_id.as_deref(),
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

/// The prefix of the headers that mirror tool arguments (SEP-2243).
const PARAM_PREFIX: &str = "mcp-param-";

/// The request's `Mcp-Param-*` headers as `(name after the prefix, decoded value)`, for the
/// service to compare with the arguments they mirror. A value in the `=?base64?...?=` form
/// that is not strict base64 of UTF-8 is refused here (400, -32020): it cannot equal anything.
pub(crate) fn param_headers(
    req: &HttpRequest,
    msg: &Message,
) -> Result<Vec<(String, String)>, HttpResponse> {
    let mut out = Vec::new();
    for (name, value) in &req.headers {
        let Some(prefix) = name.get(..PARAM_PREFIX.len()) else {
            continue;
        };
        if !prefix.eq_ignore_ascii_case(PARAM_PREFIX) {
            continue;
        }
        let param = &name[PARAM_PREFIX.len()..];
        match decode_header_value(value) {
            Some(v) => out.push((param.to_owned(), v)),
            None => {
                return Err(mismatch(
                    msg.id().cloned(),
                    format!("the {name} header is not valid base64"),
                ));
            }
        }
    }
    Ok(out)
}
