//! The `_meta` envelope of a request, log levels, capability look-ups and the MCP-specific
//! error objects: the small pieces of JSON both roles read and write.
//!
//! The engine reads only the few `_meta` keys it needs, through private serde structs, so a
//! request's payload is never turned into a `Value` tree just to find its revision.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::{ErrorObject, RequestId, codes};
use crate::word_scan;

/// `_meta` key: the revision a 2026-07-28 request speaks.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this one request (2026-07-28).
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's `Implementation` (2026-07-28).
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the lowest log level the client wants for this request (2026-07-28).
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key on results: the server's `Implementation` (2026-07-28).
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key on notifications sent on a `subscriptions/listen` stream (2026-07-28).
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// A progress token: a string or an integer, the same shape as a request id.
pub type ProgressToken = RequestId;

pub use crate::types::LoggingLevel;

/// What the engine reads out of a request's `params._meta`.
#[derive(Debug, Default)]
pub(crate) struct RequestMeta {
    /// Present only on 2026-07-28 requests: the marker of the modern era.
    pub protocol_version: Option<Value>,
    pub client_capabilities: Option<Value>,
    pub client_info: Option<Value>,
    pub log_level: Option<Value>,
    pub progress_token: Option<ProgressToken>,
}

#[derive(Deserialize)]
struct ParamsHead {
    #[serde(rename = "_meta", default)]
    meta: Option<MetaHead>,
}

#[derive(Deserialize)]
struct MetaHead {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    protocol_version: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    client_capabilities: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default)]
    client_info: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", default)]
    log_level: Option<Value>,
    #[serde(rename = "progressToken", default)]
    progress_token: Option<Value>,
}

/// Reads the envelope of a request's params.
///
/// Params that are absent or an array (JSON-RPC allows positional params; MCP never uses them)
/// carry no `_meta`. A `_meta` that is not an object is the client's mistake: -32602.
pub(crate) fn read_request_meta(params: Option<&RawValue>) -> Result<RequestMeta, ErrorObject> {
    let Some(raw) = params else {
        return Ok(RequestMeta::default());
    };
    let text = raw.get();
    // A `RawValue` starts at its value; the look past white space is cheap insurance.
    if text.bytes().find(|b| !b.is_ascii_whitespace()) != Some(b'{') {
        return Ok(RequestMeta::default());
    }
    // Most requests of the legacy era carry no `_meta`: when the name cannot be in the text
    // (not even escaped), one byte scan replaces a parse of the whole params.
    if !may_name_meta(text.as_bytes()) {
        return Ok(RequestMeta::default());
    }
    let head: ParamsHead = serde_json::from_str(text)
        .map_err(|e| ErrorObject::invalid_params(format!("malformed _meta: {e}")))?;
    let Some(m) = head.meta else {
        return Ok(RequestMeta::default());
    };
    Ok(RequestMeta {
        // A JSON null reads as "absent" so `"key": null` does not switch eras.
        protocol_version: m.protocol_version.filter(|v| !v.is_null()),
        client_capabilities: m.client_capabilities.filter(|v| !v.is_null()),
        client_info: m.client_info.filter(|v| !v.is_null()),
        log_level: m.log_level.filter(|v| !v.is_null()),
        // A token of the wrong type (a float, a bool) is ignored rather than failing the whole
        // request: progress is advisory.
        progress_token: m.progress_token.as_ref().and_then(RequestId::from_value),
    })
}

/// Whether `text` holds `_meta` or a backslash (behind which an escaped `_meta` could hide):
/// one pass, eight bytes a step, instead of a search for each. Every byte flagged as `_` or
/// `\` is looked at (a flag above the lowest may be false), and the scan goes on past it.
fn may_name_meta(text: &[u8]) -> bool {
    let at = |i: usize| match text[i] {
        b'\\' => true,
        b'_' => text[i..].starts_with(b"_meta"),
        _ => false,
    };
    let mut base = 0;
    for chunk in text.chunks_exact(8) {
        let x = word_scan::word(chunk);
        let mut flags = word_scan::bytes_equal(x, b'_') | word_scan::bytes_equal(x, b'\\');
        while flags != 0 {
            if at(base + word_scan::flagged_byte(flags)) {
                return true;
            }
            flags &= flags - 1;
        }
        base += 8;
    }
    (base..text.len()).any(at)
}

/// Looks up a capability by path (`["resources", "subscribe"]`). Present means: the key exists
/// and is not `null` or `false`.
pub(crate) fn has_capability(caps: &Value, path: &[&str]) -> bool {
    let mut cur = caps;
    for key in path {
        match cur.get(key) {
            Some(v) => cur = v,
            None => return false,
        }
    }
    !matches!(cur, Value::Null | Value::Bool(false))
}

/// Turns any serializable params into a JSON object (absent -> `{}`), so `_meta` can be added.
pub(crate) fn params_object<P: Serialize + ?Sized>(
    params: &P,
) -> Result<Map<String, Value>, String> {
    match serde_json::to_value(params) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(other) => Err(format!(
            "params must be a JSON object, not {}",
            kind_of(&other)
        )),
        Err(e) => Err(format!("params cannot be serialized: {e}")),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Inserts `key: value` into `params._meta`, creating `_meta` when absent.
pub(crate) fn set_meta(params: &mut Map<String, Value>, key: &str, value: Value) {
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(m) = meta {
        m.insert(key.to_owned(), value);
    }
}

/// -32022: the request names a revision this side does not speak. `data.supported` lets the
/// client pick one and retry.
pub fn unsupported_version_error(requested: &str, supported: &[&str]) -> ErrorObject {
    ErrorObject::new(
        codes::UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version: {requested}"),
    )
    .with_data(serde_json::json!({ "supported": supported, "requested": requested }))
}

/// -32021: the request needs client capabilities the request did not declare (2026-07-28);
/// `required` is a `ClientCapabilities` object naming them, for example
/// `{"elicitation": {}}`. Handlers return this when they would need input the client cannot
/// give.
pub fn missing_client_capability_error(required: Value) -> ErrorObject {
    ErrorObject::new(
        codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
    )
    .with_data(serde_json::json!({ "requiredCapabilities": required }))
}

/// The `resultType` of a result, `"complete"` when absent (a legacy server's result).
pub(crate) fn result_type(result: &RawValue) -> String {
    #[derive(Deserialize)]
    struct Head {
        #[serde(rename = "resultType", default)]
        result_type: Option<String>,
    }
    serde_json::from_str::<Head>(result.get())
        .ok()
        .and_then(|h| h.result_type)
        .unwrap_or_else(|| "complete".to_owned())
}

/// Adds `resultType: "complete"` to a 2026-07-28 result object that lacks it (the field is
/// required from that revision on, and handlers written for both eras should not have to know).
/// The key is spliced into the text, so the result is neither rebuilt as a `Value` tree nor
/// reordered.
pub(crate) fn ensure_result_type(result: Box<RawValue>) -> Box<RawValue> {
    #[derive(Deserialize)]
    struct Head {
        #[serde(rename = "resultType", default)]
        result_type: Option<serde::de::IgnoredAny>,
    }
    let text = result.get().trim_start();
    let Some(rest) = text.strip_prefix('{') else {
        return result;
    };
    // Where the key appears nowhere in the text it is not at the top: no need to parse. (A
    // key written with escapes, `"result\u0054ype"`, would not match, so the parse decides
    // whenever the plain spelling is absent but a backslash is present.)
    let maybe_there = text.contains("\"resultType\"") || text.contains('\\');
    if maybe_there {
        match serde_json::from_str::<Head>(text) {
            Ok(Head {
                result_type: Some(_),
            })
            | Err(_) => return result,
            Ok(_) => {}
        }
    }
    const KEY: &str = r#"{"resultType":"complete""#;
    let mut spliced = String::with_capacity(KEY.len() + 1 + rest.len());
    spliced.push_str(KEY);
    if rest.trim_start().starts_with('}') {
        spliced.push('}');
    } else {
        spliced.push(',');
        spliced.push_str(rest);
    }
    RawValue::from_string(spliced).unwrap_or(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    /// The one-pass look finds `_meta` or a backslash wherever a plain search finds one: at
    /// every offset, across the eight-byte steps, behind other underscores.
    #[test]
    fn the_quick_look_for_meta_misses_nothing() {
        let pieces: &[&str] = &["_", "_meta", "_met", "\\", "a", "\"", "é", "__meta", "m"];
        let mut seed = 11u64;
        for _ in 0..20_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut text = String::new();
            let mut s = seed;
            for _ in 0..(seed >> 59) {
                text.push_str(pieces[(s % pieces.len() as u64) as usize]);
                s /= 7;
            }
            let want = text.contains("_meta") || text.contains('\\');
            assert_eq!(may_name_meta(text.as_bytes()), want, "{text:?}");
        }
    }

    #[test]
    fn reads_the_modern_envelope() {
        let p = raw(
            r#"{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{"roots":{}},
            "io.modelcontextprotocol/logLevel":"info","progressToken":"t1"}}"#,
        );
        let m = read_request_meta(Some(&p)).unwrap();
        assert_eq!(m.protocol_version, Some(Value::from("2026-07-28")));
        assert!(has_capability(
            m.client_capabilities.as_ref().unwrap(),
            &["roots"]
        ));
        assert_eq!(m.log_level, Some(Value::from("info")));
        assert_eq!(m.progress_token, Some(RequestId::from("t1")));
        let none = read_request_meta(Some(&raw(r#"{"name":"x"}"#))).unwrap();
        assert!(none.protocol_version.is_none() && none.progress_token.is_none());
        assert!(read_request_meta(Some(&raw(r#"{"_meta":3}"#))).is_err());
        assert!(
            read_request_meta(Some(&raw("[1,2]")))
                .unwrap()
                .protocol_version
                .is_none()
        );
    }

    #[test]
    fn an_escaped_meta_name_is_still_read() {
        // The scan that skips params without `_meta` must not miss an escaped spelling of it.
        let p = raw(
            r#"{"name":"x","\u005fmeta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
        );
        let m = read_request_meta(Some(&p)).unwrap();
        assert_eq!(m.protocol_version, Some(Value::from("2026-07-28")));
        // And a `_meta` that is not an object is refused, escaped or not.
        assert!(read_request_meta(Some(&raw(r#"{"\u005fmeta":3}"#))).is_err());
    }

    #[test]
    fn capability_paths() {
        let caps = serde_json::json!({"resources":{"subscribe":false},"tools":{}});
        assert!(has_capability(&caps, &["tools"]));
        assert!(has_capability(&caps, &["resources"]));
        assert!(!has_capability(&caps, &["resources", "subscribe"]));
        assert!(!has_capability(&caps, &["prompts"]));
    }

    #[test]
    fn levels_order_by_severity() {
        assert!(LoggingLevel::Error > LoggingLevel::Warning);
        assert!(LoggingLevel::Debug < LoggingLevel::Info);
        assert_eq!(LoggingLevel::parse("notice"), Some(LoggingLevel::Notice));
        assert_eq!(LoggingLevel::parse("verbose"), None);
        assert_eq!(
            serde_json::to_string(&LoggingLevel::Alert).unwrap(),
            "\"alert\""
        );
    }

    #[test]
    fn result_type_defaults_to_complete() {
        assert_eq!(result_type(&raw(r#"{"content":[]}"#)), "complete");
        assert_eq!(
            result_type(&raw(r#"{"resultType":"input_required"}"#)),
            "input_required"
        );
        let r = ensure_result_type(raw(r#"{"a":1}"#));
        assert_eq!(r.get(), r#"{"resultType":"complete","a":1}"#);
        let r = ensure_result_type(raw(r#" { } "#));
        assert_eq!(r.get(), r#"{"resultType":"complete"}"#);
        let kept = r#"{"resultType":"input_required","requestState":"s"}"#;
        assert_eq!(ensure_result_type(raw(kept)).get(), kept);
        // A key spelled with an escape is the same key.
        let escaped = r#"{"result\u0054ype":"input_required"}"#;
        assert_eq!(ensure_result_type(raw(escaped)).get(), escaped);
        // A nested resultType does not count.
        let nested = ensure_result_type(raw(r#"{"x":{"resultType":"y"}}"#));
        assert_eq!(result_type(&nested), "complete");
        assert!(nested.get().starts_with(r#"{"resultType":"complete","#));
    }
}
