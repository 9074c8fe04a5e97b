//! The request headers an outgoing message needs, derived from the message itself: a
//! 2026-07-28 request names its revision in `_meta`, so its `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name` come from the body; anything else belongs to a legacy session.

use mcp_core::base64::base64;
use mcp_core::jsonrpc::Message;
use mcp_core::types::methods;
use serde_json::Value;

/// The `_meta` key of a 2026-07-28 request's protocol revision.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// What the client must know about an outgoing message to send it.
#[derive(Debug, Default)]
pub(crate) struct Shape {
    /// The 2026-07-28-era revision the request names in `_meta` (None: legacy message).
    pub modern_version: Option<String>,
    /// `Mcp-Method` and `Mcp-Name` (modern requests only), already encoded.
    pub method: Option<String>,
    pub name: Option<String>,
    /// True for `initialize` (its answer carries the session id and the revision).
    pub is_initialize: bool,
    /// For `notifications/cancelled`: the request it cancels.
    pub cancels: Option<mcp_core::jsonrpc::RequestId>,
    /// A request's method, unencoded.
    pub rpc_method: Option<String>,
    /// A modern `tools/call`'s tool name and arguments (for `Mcp-Param-*` headers).
    pub call: Option<(String, Value)>,
}

/// Reads what [`Shape`] says off a message (parsing its params only when needed).
pub(crate) fn shape(msg: &Message) -> Shape {
    match msg {
        Message::Request(r) => {
            let params = r.params_value();
            let modern_version = params
                .get("_meta")
                .and_then(|m| m.get(META_VERSION))
                .and_then(Value::as_str)
                .map(str::to_owned);
            let name_key = methods::name_param(&r.method);
            let modern = modern_version.is_some();
            let call = (modern && r.method == methods::TOOLS_CALL)
                .then(|| {
                    let name = params.get("name").and_then(Value::as_str)?;
                    let args = params.get("arguments").cloned().unwrap_or(Value::Null);
                    Some((name.to_owned(), args))
                })
                .flatten();
            Shape {
                rpc_method: Some(r.method.clone()),
                call,
                method: modern.then(|| encode_value(&r.method)),
                name: name_key
                    .filter(|_| modern)
                    .and_then(|k| params.get(k).and_then(Value::as_str))
                    .map(encode_value),
                modern_version,
                is_initialize: r.method == methods::INITIALIZE,
                cancels: None,
            }
        }
        Message::Notification(n) if n.method == methods::NOTIFICATION_CANCELLED => Shape {
            cancels: n
                .params_value()
                .get("requestId")
                .and_then(mcp_core::jsonrpc::RequestId::from_value),
            ..Shape::default()
        },
        _ => Shape::default(),
    }
}

/// A header value as 2026-07-28 wants it: plain when it is visible ASCII (spaces inside
/// allowed) that cannot be mistaken for the sentinel, `=?base64?...?=` otherwise.
pub fn encode_value(v: &str) -> String {
    let plain = !v.starts_with("=?base64?")
        && !v.starts_with(' ')
        && !v.ends_with(' ')
        && v.bytes().all(|b| (0x20..0x7f).contains(&b));
    if plain {
        v.to_owned()
    } else {
        format!("=?base64?{}?=", base64(v.as_bytes()))
    }
}

#[cfg(all(test, feature = "server"))]
mod tests {
    use super::*;
    use crate::server::decode_header_value;
    use mcp_core::jsonrpc::{Request, RequestId};
    use serde_json::json;

    #[test]
    fn values_round_trip_through_the_server_decoder() {
        for v in [
            "tools/call",
            "日本語",
            "a",
            "ab",
            "abc",
            "=?base64?x?=",
            " lead",
            "tab\t",
            "",
        ] {
            let enc = encode_value(v);
            assert_eq!(
                decode_header_value(&enc).as_deref(),
                Some(v),
                "{v:?} -> {enc}"
            );
        }
        assert_eq!(encode_value("echo tool"), "echo tool");
        assert_eq!(encode_value("日本語"), "=?base64?5pel5pys6Kqe?=");
    }

    #[test]
    fn modern_requests_carry_method_and_name() {
        let msg = Message::Request(
            Request::new(
                RequestId::Number(1),
                "tools/call",
                &json!({"name": "ünï", "_meta": {META_VERSION: "2026-07-28"}}),
            )
            .unwrap(),
        );
        let s = shape(&msg);
        assert_eq!(s.modern_version.as_deref(), Some("2026-07-28"));
        assert_eq!(s.method.as_deref(), Some("tools/call"));
        assert_eq!(
            s.name.as_deref().and_then(decode_header_value).as_deref(),
            Some("ünï")
        );
        let legacy = Message::Request(
            Request::new(RequestId::Number(2), "tools/call", &json!({"name": "x"})).unwrap(),
        );
        let s = shape(&legacy);
        assert!(s.modern_version.is_none() && s.method.is_none() && s.name.is_none());
    }
}
