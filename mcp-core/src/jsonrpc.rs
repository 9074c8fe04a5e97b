//! JSON-RPC 2.0 as MCP uses it: the four message shapes, request ids, error objects and the
//! codec that turns bytes into [`Message`]s with the exact error mapping the spec asks for.
//!
//! `params` and `result` are kept as raw JSON text ([`RawValue`]): the envelope is decoded once,
//! and the payload is parsed straight into the typed struct that the method calls for, with no
//! intermediate `serde_json::Value` tree. That is what makes a typed round trip cheaper than a
//! `Value` round trip of the same bytes.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

mod json_text;
#[cfg(test)]
mod mutation;
mod quick;

pub use quick::RequestView;

/// Where the JSON value starting at byte `start` of `text` (white space first allowed) ends,
/// if it is valid: what serde_json accepts as a `RawValue`, nested at most 64 deep (a deeper
/// value is `None`, left to serde_json). It builds nothing and allocates nothing, for a reader
/// that takes a message apart in place (see [`RequestView::read_with`]).
pub fn json_value_end(text: &[u8], start: usize) -> Option<usize> {
    json_text::value_end(text, start)
}

/// The JSON-RPC protocol version string every message carries.
pub const JSONRPC_VERSION: &str = "2.0";

/// Standard and MCP-specific error codes.
pub mod codes {
    /// Invalid JSON was received (not UTF-8, or not JSON at all).
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error (also: a handler that panicked).
    pub const INTERNAL_ERROR: i64 = -32603;
    /// 2026-07-28: an HTTP header disagrees with the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// 2026-07-28: the request needs a client capability the client did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// 2026-07-28: the requested protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// Up to 2025-11-25: resource not found (retired in 2026-07-28, which uses -32602).
    pub const RESOURCE_NOT_FOUND_LEGACY: i64 = -32002;
    /// 2025-11-25 only: URL-mode elicitation is required before the request can go on.
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
    /// This project's code for a request refused by a rate limit (the server kit's token
    /// buckets), with `data.retryAfterMs`. It lies in -32000..-32019, the range the 2026-07-28
    /// revision leaves to implementations (the rest of the server-error range is MCP's own);
    /// -32000 and -32001 are avoided because other SDKs use them for closed connections and
    /// timeouts. Over HTTP a lone answer with this code goes out as `429` with `Retry-After`.
    pub const RATE_LIMITED: i64 = -32005;
    /// This project's code for a request refused because the server has no thread left to run
    /// it without stalling its input: over stdio, every handler thread it may start is already
    /// blocked in a handler (waiting for the client, or slow), and a handler run on the
    /// reading thread could wait for an answer that nobody would read. Transient: retry once
    /// earlier requests are answered. In the range of [`RATE_LIMITED`].
    pub const SERVER_BUSY: i64 = -32006;
}

/// A request id: a string or an integer. `null` is not a valid request id.
///
/// An integer id is read by value, wherever it is read (the codec, [`RequestId::from_value`],
/// `Deserialize`): any JSON number whose value is an integer that fits `i64` is that integer,
/// however it is written (`7`, `7.0`, `0.7e1`, `-0`), because a peer's JSON library may write
/// integers as floats and JSON-RPC only asks that ids not carry fractional parts. Anything else
/// (`1.5`, `1e19`, `true`, an object) is not an id. The codec applies the rule to the number's
/// text, exactly; `serde_json` hands `from_value` and `Deserialize` a number with a fraction
/// or an exponent as an `f64` already rounded, and the same rule is applied to that value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl RequestId {
    /// Reads an id out of a JSON value: a string, or a number whose value is an integer that
    /// fits `i64` (see [`RequestId`]); nothing else.
    pub fn from_value(v: &Value) -> Option<RequestId> {
        match v {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Some(RequestId::Number(i)),
                // A u64 above i64::MAX is not an id; only a float goes on to the float rule.
                (None, Some(f)) if n.is_f64() => integer_from_f64(f).map(RequestId::Number),
                _ => None,
            },
            _ => None,
        }
    }

    /// Appends the id's JSON text.
    fn encode_into(&self, out: &mut Vec<u8>) {
        // Writing a number or a string into a Vec cannot fail; serde_json escapes the string.
        let _ = serde_json::to_writer(&mut *out, self);
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_str()),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer request id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom("request id out of range"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RequestId, E> {
                integer_from_f64(v)
                    .map(RequestId::Number)
                    .ok_or_else(|| E::custom("a numeric request id must be an integer"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<RequestId, E> {
                Ok(RequestId::String(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// The integer an `f64` holds, when it holds one that fits `i64`: the float side of the
/// [`RequestId`] rule.
fn integer_from_f64(f: f64) -> Option<i64> {
    /// 2^63, exactly representable: the first float past `i64::MAX`.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    // NaN and the infinities fail every comparison or have a NaN fraction; in range, an
    // integral float converts exactly.
    (f.fract() == 0.0 && (-LIMIT..LIMIT).contains(&f)).then_some(f as i64)
}

/// The integer a JSON number's text denotes, when it denotes one that fits `i64`: the exact
/// side of the [`RequestId`] rule, used by the codec on the raw text so that nothing is lost
/// to float rounding and a valid number too large for an `f64` (`1e400`) is simply not an id
/// (`serde_json` refuses to parse it at all). `None` also for text that is not a JSON number.
fn integer_from_json_number(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let (negative, rest) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    let (mantissa, exponent) = match rest.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (int, frac) = match mantissa.iter().position(|&b| b == b'.') {
        Some(i) => (&mantissa[..i], Some(&mantissa[i + 1..])),
        None => (mantissa, None),
    };
    let all_digits = |d: &[u8]| !d.is_empty() && d.iter().all(u8::is_ascii_digit);
    if !all_digits(int) || frac.is_some_and(|f| !all_digits(f)) {
        return None;
    }
    let frac = frac.unwrap_or_default();
    // The exponent saturates: past a billion either way, only zero could be an integer in
    // range, and zero is decided before the exponent matters.
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let (sign, digits) = match e.split_first() {
                Some((b'-', d)) => (-1, d),
                Some((b'+', d)) => (1, d),
                _ => (1, e),
            };
            if !all_digits(digits) {
                return None;
            }
            let magnitude = digits.iter().fold(0i64, |acc, &d| {
                acc.saturating_mul(10)
                    .saturating_add(i64::from(d - b'0'))
                    .min(1_000_000_000)
            });
            sign * magnitude
        }
    };
    // value = digits(int ++ frac) × 10^(exponent − len(frac)); drop the zeros at both ends.
    let digits = || int.iter().chain(frac.iter());
    let Some(first) = digits().position(|&d| d != b'0') else {
        return Some(0);
    };
    let len = int.len() + frac.len();
    let trailing = digits().rev().take_while(|&&d| d == b'0').count();
    let significant = len - first - trailing;
    let scale = exponent
        .saturating_sub(i64::try_from(frac.len()).unwrap_or(i64::MAX))
        .saturating_add(i64::try_from(trailing).unwrap_or(i64::MAX));
    // A nonzero last digit below the units: not an integer. More than 19 digits: out of range.
    let digits_before_point = i64::try_from(significant).map(|s| s.saturating_add(scale));
    if scale < 0 || !digits_before_point.is_ok_and(|n| n <= 19) {
        return None;
    }
    let mut magnitude: u128 = 0;
    for &d in digits().skip(first).take(significant) {
        magnitude = magnitude * 10 + u128::from(d - b'0');
    }
    for _ in 0..scale {
        magnitude *= 10;
    }
    let signed = i128::try_from(magnitude).ok()?;
    i64::try_from(if negative { -signed } else { signed }).ok()
}

/// The `error` member of an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`codes`]).
    pub code: i64,
    /// A short, one-sentence description.
    pub message: String,
    /// Extra information defined by the sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and a message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32700.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(codes::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// -32600.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(codes::INVALID_REQUEST, format!("Invalid request: {detail}"))
    }

    /// -32601.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// -32602.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(codes::INVALID_PARAMS, format!("Invalid params: {detail}"))
    }

    /// -32603.
    pub fn internal(detail: impl fmt::Display) -> Self {
        Self::new(codes::INTERNAL_ERROR, format!("Internal error: {detail}"))
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// Parses a JSON text into a boxed raw value; used for `params` and `result`.
/// Serializes any value into raw JSON text.
///
/// # Errors
/// Fails only when the value's `Serialize` impl fails (for example a map with non-string keys).
pub fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, serde_json::Error> {
    // Unlike `RawValue::from_string`, this does not parse the text it just wrote to check it.
    serde_json::value::to_raw_value(value)
}

/// Reads raw JSON text (or its absence, as `{}`) into a typed value.
fn from_raw<'a, T: Deserialize<'a>>(v: Option<&'a RawValue>) -> Result<T, serde_json::Error> {
    match v {
        Some(r) => serde_json::from_str(r.get()),
        None => serde_json::from_str("{}"),
    }
}

/// A request: it carries an id and expects exactly one response.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id the response must echo.
    pub id: RequestId,
    /// The method name, such as `tools/call`.
    pub method: String,
    /// The parameters, as raw JSON (an object in MCP).
    pub params: Option<Box<RawValue>>,
}

impl Request {
    /// Builds a request, serializing `params`.
    ///
    /// # Errors
    /// When `params` cannot be serialized.
    pub fn new<P: Serialize + ?Sized>(
        id: impl Into<RequestId>,
        method: impl Into<String>,
        params: &P,
    ) -> Result<Self, serde_json::Error> {
        Ok(Request {
            id: id.into(),
            method: method.into(),
            params: Some(to_raw(params)?),
        })
    }

    /// Decodes the params into `T` (absent params read as `{}`).
    ///
    /// # Errors
    /// When the params do not fit `T`; the caller usually answers -32602.
    pub fn params<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        from_raw(self.params.as_deref())
    }

    /// The params as a JSON value (`Value::Null` when absent).
    pub fn params_value(&self) -> Value {
        self.params
            .as_deref()
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .unwrap_or(Value::Null)
    }
}

/// A notification: no id, no response.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name, such as `notifications/progress`.
    pub method: String,
    /// The parameters, as raw JSON.
    pub params: Option<Box<RawValue>>,
}

impl Notification {
    /// Builds a notification, serializing `params`.
    ///
    /// # Errors
    /// When `params` cannot be serialized.
    pub fn new<P: Serialize + ?Sized>(
        method: impl Into<String>,
        params: &P,
    ) -> Result<Self, serde_json::Error> {
        Ok(Notification {
            method: method.into(),
            params: Some(to_raw(params)?),
        })
    }

    /// A notification without params.
    pub fn bare(method: impl Into<String>) -> Self {
        Notification {
            method: method.into(),
            params: None,
        }
    }

    /// Decodes the params into `T` (absent params read as `{}`).
    ///
    /// # Errors
    /// When the params do not fit `T`.
    pub fn params<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        from_raw(self.params.as_deref())
    }

    /// The params as a JSON value (`Value::Null` when absent).
    pub fn params_value(&self) -> Value {
        self.params
            .as_deref()
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .unwrap_or(Value::Null)
    }
}

/// A successful response.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result, as raw JSON.
    pub result: Box<RawValue>,
}

impl Response {
    /// Builds a response, serializing `result`.
    ///
    /// # Errors
    /// When `result` cannot be serialized.
    pub fn new<R: Serialize + ?Sized>(
        id: RequestId,
        result: &R,
    ) -> Result<Self, serde_json::Error> {
        Ok(Response {
            id,
            result: to_raw(result)?,
        })
    }

    /// Decodes the result into `T`.
    ///
    /// # Errors
    /// When the result does not fit `T`.
    pub fn result<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.result.get())
    }

    /// The answer to `id` with `result`, as a message (for a transport that does not write
    /// [`ResultValue`]s itself; see [`encode_result_into`](Response::encode_result_into)).
    /// A result that cannot be serialized becomes a -32603 error.
    pub fn message(id: &RequestId, result: &dyn ResultValue) -> Message {
        match result.to_raw() {
            Ok(result) => Message::Response(Response {
                id: id.clone(),
                result,
            }),
            Err(e) => Message::error(Some(id.clone()), ErrorObject::internal(e)),
        }
    }

    /// Appends the answer to `id` with `result` to `out`: the bytes
    /// [`Message::encode_into`] writes for [`Response::message`], with the result serialized
    /// straight into them (no raw text made, copied and dropped on the way).
    ///
    /// # Errors
    /// When `result` cannot be serialized; `out` is then as it was.
    pub fn encode_result_into(
        id: &RequestId,
        result: &dyn ResultValue,
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        let start = out.len();
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        id.encode_into(out);
        out.extend_from_slice(br#","result":"#);
        if let Err(e) = result.write_json(out) {
            out.truncate(start);
            return Err(e);
        }
        out.push(b'}');
        Ok(())
    }
}

/// A result a transport may serialize into its answer itself
/// ([`Outbound::send_result`](crate::service::Outbound::send_result)). Sealed: it is
/// implemented for results whose text serde_json writes from a derived or `Value` form (a
/// tool's [`CallToolResult`](crate::types::CallToolResult), a `Value`), so the text is always
/// one compact JSON value, with no newline a line-framed transport would have to mind.
pub trait ResultValue: sealed::Sealed + Send + Sync {
    /// Appends the result's JSON text to `out`.
    ///
    /// # Errors
    /// When serialization fails.
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error>;

    /// The result as raw JSON text of its own.
    ///
    /// # Errors
    /// When serialization fails.
    fn to_raw(&self) -> Result<Box<RawValue>, serde_json::Error>;
}

pub(crate) mod sealed {
    /// Keeps [`ResultValue`](super::ResultValue) to this crate's types.
    pub trait Sealed {}
}

impl sealed::Sealed for Value {}

impl ResultValue for Value {
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        serde_json::to_writer(out, self)
    }

    fn to_raw(&self) -> Result<Box<RawValue>, serde_json::Error> {
        to_raw(self)
    }
}

/// An error response. The id is absent when the request's id could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorResponse {
    /// The id of the request this answers, when known.
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: ErrorObject,
}

/// One JSON-RPC message.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A successful response.
    Response(Response),
    /// An error response.
    Error(ErrorResponse),
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}
impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}
impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Message::Response(r)
    }
}
impl From<ErrorResponse> for Message {
    fn from(r: ErrorResponse) -> Self {
        Message::Error(r)
    }
}

impl Message {
    /// An error response for `id`.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Message::Error(ErrorResponse { id, error })
    }

    /// The method, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            _ => None,
        }
    }

    /// The id, for requests and responses.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Message::Request(r) => Some(&r.id),
            Message::Response(r) => Some(&r.id),
            Message::Error(e) => e.id.as_ref(),
            Message::Notification(_) => None,
        }
    }

    /// True for responses and error responses.
    pub fn is_response(&self) -> bool {
        matches!(self, Message::Response(_) | Message::Error(_))
    }

    /// Encodes the message as compact JSON with no newline inside it (one stdio line, one
    /// HTTP body, one SSE `data:` field).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        self.encode_into(&mut out);
        out
    }

    /// Appends the compact JSON encoding of the message to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let start = out.len();
        match self {
            // Every answer to a request takes this path: its frame is fixed text around the id
            // and the raw result, so it is written as such (the same bytes as through serde,
            // without the serializer's map state machine).
            Message::Response(r) => {
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                r.id.encode_into(out);
                out.extend_from_slice(br#","result":"#);
                out.extend_from_slice(r.result.get().as_bytes());
                out.push(b'}');
            }
            // Serializing into a Vec cannot fail: every field is a string, a number, raw JSON
            // or a `Value`, all of which serialize.
            _ => {
                let _ = serde_json::to_writer(&mut *out, self);
            }
        }
        // Raw payloads that were decoded from pretty-printed input keep their whitespace, which
        // may include newlines; re-encode those compactly so framing stays intact.
        if out[start..].contains(&b'\n') {
            let compact: Option<Value> = serde_json::from_slice(&out[start..]).ok();
            out.truncate(start);
            if let Some(v) = compact {
                let _ = serde_json::to_writer(&mut *out, &v);
            }
        }
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(r) => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
                m.serialize_entry("id", &r.id)?;
                m.serialize_entry("method", &r.method)?;
                if let Some(p) = &r.params {
                    m.serialize_entry("params", p)?;
                }
                m.end()
            }
            Message::Notification(n) => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
                m.serialize_entry("method", &n.method)?;
                if let Some(p) = &n.params {
                    m.serialize_entry("params", p)?;
                }
                m.end()
            }
            Message::Response(r) => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
                m.serialize_entry("id", &r.id)?;
                m.serialize_entry("result", &r.result)?;
                m.end()
            }
            Message::Error(e) => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
                // JSON-RPC 2.0 requires `id: null` when the request id is unknown; the
                // 2026-07-28 schema also allows leaving it out. `null` satisfies both.
                m.serialize_entry("id", &e.id)?;
                m.serialize_entry("error", &e.error)?;
                m.end()
            }
        }
    }
}

/// Why bytes could not be decoded into a message.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// The id of the offending request, when it could be recovered.
    pub id: Option<RequestId>,
    /// The JSON-RPC error to send back (-32700 or -32600).
    pub error: ErrorObject,
    /// See [`DecodeError::is_notification`].
    notification: bool,
    /// See [`DecodeError::is_response`].
    response: bool,
}

impl DecodeError {
    fn parse(detail: impl fmt::Display) -> Self {
        DecodeError {
            id: None,
            error: ErrorObject::parse_error(detail),
            notification: false,
            response: false,
        }
    }

    fn invalid(id: Option<RequestId>, detail: impl fmt::Display) -> Self {
        DecodeError {
            id,
            error: ErrorObject::invalid_request(detail),
            notification: false,
            response: false,
        }
    }

    /// True when the bytes were not JSON at all (-32700).
    pub fn is_parse_error(&self) -> bool {
        self.error.code == codes::PARSE_ERROR
    }

    /// True when the offending message is a notification, which must not be answered.
    ///
    /// A notification is a JSON object with a `method` member whose value is a string (any of
    /// them, if the member is repeated: peers disagree on which one counts, and a message with
    /// no id cannot be matched to an answer anyway) and no `id` member at all. Such an object is a
    /// notification even when something else about it is wrong (a `jsonrpc` other than
    /// `"2.0"`, `params` that are neither an object nor an array, a repeated member): JSON-RPC
    /// 2.0 forbids replying to a notification, even with an error, and its sender would not
    /// expect or be able to match a reply. A transport drops such a message (it may log it)
    /// instead of sending [`DecodeError::to_response`]. An `"id": null` member, or a `method`
    /// that is not a string, makes the object an (invalid) request, which is answered.
    pub fn is_notification(&self) -> bool {
        self.notification
    }

    /// True when the offending message is a response: a JSON object with a `result` or an
    /// `error` member and no `method` (a bad id or `jsonrpc`, both `result` and `error`, an
    /// `error` that is not a well-formed error object). It is not answered either: JSON-RPC
    /// answers requests, and an error sent back for a peer's response could start an
    /// exchange of errors between two peers. Over Streamable HTTP such a body gets a bare
    /// HTTP 400, as the transport asks for a response the server cannot accept.
    pub fn is_response(&self) -> bool {
        self.response
    }

    /// Whether the peer gets [`DecodeError::to_response`]: false for an invalid notification
    /// ([`DecodeError::is_notification`]) or response ([`DecodeError::is_response`]), which a
    /// transport drops (it may log them).
    pub fn is_answered(&self) -> bool {
        !self.notification && !self.response
    }

    /// The error response to send back to the peer, when [`DecodeError::is_answered`].
    pub fn to_response(&self) -> Message {
        Message::error(self.id.clone(), self.error.clone())
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for DecodeError {}

/// What one decoded payload held: a single message or a batch.
#[derive(Debug)]
pub enum Payload {
    /// One message.
    Single(Message),
    /// A JSON-RPC batch (only where the negotiated revision allows it: 2025-03-26). Each
    /// element decodes on its own; a bad element gets its own error response, with its id when
    /// the id could be read, unless [`DecodeError::is_notification`] says not to answer it.
    ///
    /// Request ids must be unique within a batch, or answers could not be told apart and the
    /// receiver's bookkeeping of requests in flight would be confused. The first request with
    /// a given id is kept; each later request in the same batch reusing it (compared by
    /// value: `1` and `1.0` are the same id, `"1"` is not) comes back here as an
    /// `Err` with that id and -32600 "duplicate id N in batch", so it is refused, never run,
    /// and its refusal is still answered like any invalid element. Responses and
    /// notifications are not checked.
    Batch(Vec<Result<Message, DecodeError>>),
}

/// Decodes one message; a JSON array (batch) is refused with -32600.
///
/// # Errors
/// -32700 when the bytes are not UTF-8 or not JSON; -32600 when they are JSON but not a valid
/// JSON-RPC message, with the request id when one can be recovered (see
/// [`DecodeError::is_notification`] for the invalid messages that must not be answered).
pub fn decode(bytes: &[u8]) -> Result<Message, DecodeError> {
    match decode_incoming(bytes, false)? {
        Payload::Single(m) => Ok(m),
        // decode_incoming refuses batches when they are not allowed.
        Payload::Batch(_) => Err(DecodeError::invalid(None, "batches are not supported")),
    }
}

/// Bytes that are not UTF-8: -32700. When they would be an answer with the bad sequences
/// replaced, the error is that answer's, as for any other invalid answer
/// ([`DecodeError::is_response`], its `id` the request it answers): the peer that sent the
/// request fails that call at once rather than at its timeout, and nothing is sent back.
#[cold]
#[inline(never)]
fn not_utf8(bytes: &[u8], e: std::str::Utf8Error) -> DecodeError {
    let mut err = DecodeError::parse(e);
    let answered = match decode_object(&String::from_utf8_lossy(bytes)) {
        Ok(Message::Response(r)) => Some(r.id),
        Ok(Message::Error(r)) => r.id,
        _ => None,
    };
    if answered.is_some() {
        err.id = answered;
        err.response = true;
    }
    err
}

/// Decodes one payload, accepting a batch only when `allow_batch` is true.
///
/// Every member is judged by its value, not its spelling: `"\u0032.0"` is `"2.0"`, a member
/// name may be escaped, an id written `1.0` or `1e0` is the integer 1 (see [`RequestId`]).
/// Only a JSON object is a message, in a batch or alone.
///
/// # Errors
/// As [`decode`]; an empty batch, or a batch where batches are not allowed, is -32600.
pub fn decode_incoming(bytes: &[u8], allow_batch: bool) -> Result<Payload, DecodeError> {
    let text = std::str::from_utf8(bytes).map_err(|e| not_utf8(bytes, e))?;
    match first_byte(text) {
        Some(b'{') => decode_object(text).map(Payload::Single),
        Some(b'[') => {
            // Checked as JSON first, with nothing built (nesting of any depth is scanned
            // without recursion): what is not JSON is -32700 whatever else it is, and a batch
            // where none is allowed costs no more than that.
            serde_json::from_str::<&RawValue>(text).map_err(|e| classify_json_error(text, e))?;
            if !allow_batch {
                return Err(DecodeError::invalid(
                    None,
                    "JSON-RPC batches are not supported by the negotiated protocol revision",
                ));
            }
            // Raw elements, at most MAX_BATCH_LEN of them: each decoded element costs far more
            // than its text (a line of `0,0,0,…` would grow a hundredfold).
            let items = serde_json::from_str::<CappedBatch<'_>>(text)
                .map_err(|_| {
                    DecodeError::invalid(
                        None,
                        format!("a JSON-RPC batch may hold at most {MAX_BATCH_LEN} messages"),
                    )
                })?
                .0;
            if items.is_empty() {
                return Err(DecodeError::invalid(None, "empty batch"));
            }
            let mut items: Vec<_> = items.into_iter().map(|r| decode_value(r.get())).collect();
            refuse_duplicate_ids(&mut items);
            Ok(Payload::Batch(items))
        }
        _ => {
            // Not an object or array: find out whether it is JSON at all.
            match serde_json::from_str::<de::IgnoredAny>(text) {
                Ok(_) => Err(DecodeError::invalid(
                    None,
                    "a message must be a JSON object",
                )),
                Err(e) => Err(DecodeError::parse(e)),
            }
        }
    }
}

/// The length of a value's JSON text, counted without keeping the text (what bounds in bytes
/// weigh: a queued message, a stored task). A value that does not serialize weighs what it
/// wrote before failing.
pub fn json_len<T: Serialize + ?Sized>(v: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, v);
    count.0
}

/// The most messages one JSON-RPC batch may hold; a longer batch is refused whole (-32600).
/// No client needs more in one line or body, and each element decoded costs far more memory
/// than its text.
pub const MAX_BATCH_LEN: usize = 1024;

/// A batch's elements as raw text, refused (a serde error) past [`MAX_BATCH_LEN`]: the text
/// was checked as JSON before, so the error can only be the length.
struct CappedBatch<'a>(Vec<&'a RawValue>);

impl<'de> Deserialize<'de> for CappedBatch<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Elements;
        impl<'de> de::Visitor<'de> for Elements {
            type Value = CappedBatch<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON array")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<&'de RawValue>()? {
                    if items.len() == MAX_BATCH_LEN {
                        return Err(de::Error::custom("batch too long"));
                    }
                    items.push(item);
                }
                Ok(CappedBatch(items))
            }
        }
        d.deserialize_seq(Elements)
    }
}

/// The one rule on batches, for every transport: a batch is taken only where the revision the
/// session negotiated has batches (2025-03-26; `None`, nothing negotiated yet, has none, since
/// the first message must be `initialize` alone), and never with an `initialize` request in it
/// (2025-03-26 lifecycle: "The initialization request MUST NOT be part of a JSON-RPC batch").
/// Transports decode with [`decode_incoming`] and then ask this, so stdio and HTTP refuse the
/// same batches with the same error.
///
/// An `initialize` in a batch is refused on its own (-32600 with its id, in place), the rest
/// of the batch served: JSON-RPC answers a valid batch with one response per request.
///
/// # Errors
/// -32600 (id null: the batch as a whole is refused) when the revision has no batches.
pub fn check_batch(
    negotiated: Option<crate::version::ProtocolVersion>,
    items: &mut [Result<Message, DecodeError>],
) -> Result<(), DecodeError> {
    if !negotiated.is_some_and(crate::version::ProtocolVersion::allows_batches) {
        return Err(DecodeError::invalid(
            None,
            "JSON-RPC batches are not supported by the negotiated protocol revision",
        ));
    }
    for item in items.iter_mut() {
        if let Ok(Message::Request(r)) = item {
            if r.method == "initialize" {
                let id = r.id.clone();
                *item = Err(DecodeError::invalid(
                    Some(id),
                    "initialize must not be part of a JSON-RPC batch",
                ));
            }
        }
    }
    Ok(())
}

/// The first byte after JSON whitespace.
fn first_byte(text: &str) -> Option<u8> {
    text.bytes()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// Turns every request after the first with the same id into a -32600 with that id (see
/// [`Payload::Batch`]).
fn refuse_duplicate_ids(items: &mut [Result<Message, DecodeError>]) {
    if items.len() < 2 {
        return;
    }
    let mut seen = std::collections::HashSet::new();
    for item in items.iter_mut() {
        let Ok(Message::Request(r)) = item else {
            continue;
        };
        if !seen.insert(r.id.clone()) {
            let id = r.id.clone();
            let detail = format!("duplicate id {id} in batch");
            *item = Err(DecodeError::invalid(Some(id), detail));
        }
    }
}

/// serde_json reports syntax errors and type errors alike; a syntax error is -32700, a valid
/// JSON text of the wrong shape is -32600. Whether the text is JSON is checked again on its
/// own (error path only): serde_json files a few troubles with valid JSON under syntax, such
/// as a number too large for an `f64` or a lone surrogate escape.
fn classify_json_error(text: &str, e: serde_json::Error) -> DecodeError {
    if serde_json::from_str::<de::IgnoredAny>(text).is_ok() {
        DecodeError::invalid(None, e)
    } else {
        DecodeError::parse(e)
    }
}

/// The members the codec looks at, each kept as raw JSON text borrowed from the input: every
/// check below is made on the member's value, and a member of any depth or size costs one
/// scan and no allocation.
#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
    /// The first member that appeared more than once (the first value of each is kept).
    repeated: Option<&'static str>,
    /// Some `method` member (there may be several) is a string.
    method_string: bool,
}

/// A member name, by value (`"\u0069d"` is `id`).
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl Member {
    fn named(name: &str) -> Member {
        match name {
            "jsonrpc" => Member::Jsonrpc,
            "id" => Member::Id,
            "method" => Member::Method,
            "params" => Member::Params,
            "result" => Member::Result,
            "error" => Member::Error,
            _ => Member::Other,
        }
    }
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The name as raw text: serde_json checks that it is a valid JSON string, and a name
        // with a lone surrogate escape (valid JSON, but no Rust string) is merely unknown
        // instead of failing the whole message.
        let raw = <&'de RawValue>::deserialize(d)?;
        Ok(read_str(raw.get()).map_or(Member::Other, |name| Member::named(&name)))
    }
}

/// A member name read as a plain string: the fast way, for the names of nearly every message.
/// A name serde_json cannot hand over as a Rust string (a lone surrogate escape) fails the
/// parse, and the message is read again with [`Member`]'s raw names (see [`decode_object`]).
struct PlainMember(Member);

impl<'de> Deserialize<'de> for PlainMember {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = PlainMember;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<PlainMember, E> {
                Ok(PlainMember(Member::named(name)))
            }
        }
        d.deserialize_str(V)
    }
}

/// The envelope, with names read by [`PlainMember`] (`PLAIN`) or by [`Member`].
struct EnvelopeOf<'a, const PLAIN: bool>(Envelope<'a>);

impl<'de, const PLAIN: bool> Deserialize<'de> for EnvelopeOf<'de, PLAIN> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const PLAIN: bool>;
        impl<'de, const PLAIN: bool> de::Visitor<'de> for V<PLAIN> {
            type Value = EnvelopeOf<'de, PLAIN>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            // Only `visit_map`: serde's derived code would also take a positional array for
            // the struct, and an array is not a message.
            fn visit_map<A: de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<EnvelopeOf<'de, PLAIN>, A::Error> {
                let mut env = Envelope::default();
                loop {
                    let member = if PLAIN {
                        map.next_key::<PlainMember>()?.map(|m| m.0)
                    } else {
                        map.next_key::<Member>()?
                    };
                    let Some(member) = member else { break };
                    let (slot, name) = match member {
                        Member::Jsonrpc => (&mut env.jsonrpc, "jsonrpc"),
                        Member::Id => (&mut env.id, "id"),
                        Member::Method => (&mut env.method, "method"),
                        Member::Params => (&mut env.params, "params"),
                        Member::Result => (&mut env.result, "result"),
                        Member::Error => (&mut env.error, "error"),
                        Member::Other => {
                            map.next_value::<de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    let value: &'de RawValue = map.next_value()?;
                    if name == "method" && value.get().starts_with('"') {
                        env.method_string = true;
                    }
                    if slot.is_none() {
                        *slot = Some(value);
                    } else if env.repeated.is_none() {
                        env.repeated = Some(name);
                    }
                }
                Ok(EnvelopeOf(env))
            }
        }
        d.deserialize_map(V::<PLAIN>)
    }
}

/// A JSON string's value from its raw text (quotes included); `None` for text that is not a
/// string or holds a lone surrogate escape (valid JSON, but no Rust string). Only a string
/// with escapes is decoded; any other is borrowed from the text.
fn read_str(raw: &str) -> Option<Cow<'_, str>> {
    if !raw.starts_with('"') {
        return None;
    }
    if raw.contains('\\') {
        serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
    } else {
        // No escapes: a valid JSON string's value is its text between the quotes.
        raw.get(1..raw.len().saturating_sub(1)).map(Cow::Borrowed)
    }
}

/// An id from its raw JSON text: a string, or a number whose value is an integer in `i64`.
fn read_id(raw: &RawValue) -> Option<RequestId> {
    let text = raw.get();
    match text.as_bytes().first()? {
        b'"' => read_str(text).map(|s| RequestId::String(s.into_owned())),
        b'-' | b'0'..=b'9' => match text.parse::<i64>() {
            // The common case, a plain integer, costs one parse.
            Ok(n) => Some(RequestId::Number(n)),
            Err(_) => integer_from_json_number(text).map(RequestId::Number),
        },
        _ => None,
    }
}

/// Whether the `jsonrpc` member says "2.0", however it is escaped.
fn is_version_2(raw: &RawValue) -> bool {
    let text = raw.get();
    // The common spelling is compared as text; only an escaped one is decoded.
    text == "\"2.0\"" || (text.contains('\\') && read_str(text).as_deref() == Some("2.0"))
}

/// Decodes one JSON value already known to be valid JSON (a batch element).
fn decode_value(text: &str) -> Result<Message, DecodeError> {
    if first_byte(text) == Some(b'{') {
        decode_object(text)
    } else {
        Err(DecodeError::invalid(
            None,
            "a message must be a JSON object",
        ))
    }
}

/// Decodes a text that starts with `{`.
fn decode_object(text: &str) -> Result<Message, DecodeError> {
    // The usual message, in one pass; anything else (errors included) is read by the general
    // decoder, kept out of line so that the usual path stays a few cache lines long.
    match quick::message(text) {
        Some(m) => Ok(m),
        None => decode_general(text),
    }
}

/// Any JSON object as a message, judged member by member, every error worded.
#[inline(never)]
fn decode_general(text: &str) -> Result<Message, DecodeError> {
    // Names as plain strings first; only a text that fails that way (a lone surrogate escape
    // in a name, or no JSON object at all) is read again with raw names, which decides.
    let env = match serde_json::from_str::<EnvelopeOf<'_, true>>(text) {
        Ok(EnvelopeOf(env)) => env,
        Err(_) => match serde_json::from_str::<EnvelopeOf<'_, false>>(text) {
            Ok(EnvelopeOf(env)) => env,
            Err(e) => return Err(classify_json_error(text, e)),
        },
    };
    // An id we can echo back in an error response: the member's, if it is one id.
    let echo_id = match env.repeated {
        Some("id") => None,
        _ => env.id.and_then(read_id),
    };
    let notification = env.id.is_none() && env.method_string;
    let response = env.method.is_none() && (env.result.is_some() || env.error.is_some());
    let refuse = |id: Option<RequestId>, detail: &dyn fmt::Display| DecodeError {
        id,
        error: ErrorObject::invalid_request(detail),
        notification,
        response,
    };

    if let Some(name) = env.repeated {
        let detail = format!("the {name} member appears more than once");
        return Err(refuse(echo_id, &detail));
    }
    match env.jsonrpc {
        Some(v) if is_version_2(v) => {}
        Some(_) => return Err(refuse(echo_id, &"jsonrpc must be \"2.0\"")),
        None => return Err(refuse(echo_id, &"missing jsonrpc member")),
    }

    if let Some(method_raw) = env.method {
        let Some(method) = read_str(method_raw.get()).map(Cow::into_owned) else {
            return Err(refuse(echo_id, &"method must be a string"));
        };
        if env.result.is_some() || env.error.is_some() {
            let detail = "a message cannot carry both method and result/error";
            return Err(refuse(echo_id, &detail));
        }
        let params = match env.params {
            None => None,
            Some(p) if matches!(first_byte(p.get()), Some(b'{' | b'[')) => Some(p.to_owned()),
            Some(_) => return Err(refuse(echo_id, &"params must be an object or an array")),
        };
        return match (env.id, echo_id) {
            (None, _) => Ok(Message::Notification(Notification { method, params })),
            (Some(_), Some(id)) => Ok(Message::Request(Request { id, method, params })),
            (Some(_), None) => Err(refuse(None, &"request id must be a string or an integer")),
        };
    }

    match (env.result, env.error) {
        (Some(_), Some(_)) => Err(refuse(
            echo_id,
            &"a response cannot carry both result and error",
        )),
        (Some(result), None) => match echo_id {
            Some(id) => Ok(Message::Response(Response {
                id,
                result: result.to_owned(),
            })),
            None => Err(refuse(
                None,
                &"a response must carry a string or integer id",
            )),
        },
        (None, Some(error)) => {
            // An object only: serde's derived code would also take `[code, message]`.
            if first_byte(error.get()) != Some(b'{') {
                return Err(refuse(echo_id, &"error must be an object"));
            }
            let error: ErrorObject =
                serde_json::from_str(error.get()).map_err(|e| refuse(echo_id.clone(), &e))?;
            match (env.id, echo_id) {
                (None, _) => Ok(Message::Error(ErrorResponse { id: None, error })),
                (Some(raw), _) if raw.get() == "null" => {
                    Ok(Message::Error(ErrorResponse { id: None, error }))
                }
                (Some(_), Some(id)) => Ok(Message::Error(ErrorResponse {
                    id: Some(id),
                    error,
                })),
                (Some(_), None) => Err(refuse(None, &"response id must be a string or an integer")),
            }
        }
        (None, None) => Err(refuse(echo_id, &"not a request, notification or response")),
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: &RawValue = <&RawValue>::deserialize(d)?;
        decode_value(raw.get()).map_err(|e| de::Error::custom(e.error.message))
    }
}

/// A request id read from its raw text by the same exact rule as [`decode`], for the one-pass
/// typed decoders (which read from a `serde_json` slice, where raw values can be borrowed).
struct WireId(RequestId);

impl<'de> Deserialize<'de> for WireId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        read_id(raw)
            .map(WireId)
            .ok_or_else(|| de::Error::custom("request id must be a string or an integer"))
    }
}

/// The `"jsonrpc": "2.0"` member, checked while decoding.
struct Version2;

impl<'de> Deserialize<'de> for Version2 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if v == JSONRPC_VERSION {
            Ok(Version2)
        } else {
            Err(de::Error::custom("jsonrpc must be \"2.0\""))
        }
    }
}

#[derive(Deserialize)]
#[serde(bound = "P: Deserialize<'de>")]
struct TypedRequestIn<P> {
    #[allow(dead_code)]
    jsonrpc: Version2,
    id: WireId,
    method: String,
    #[serde(default, deserialize_with = "present_params")]
    params: Option<P>,
    /// Only noticed (even as `null`): a request carrying either is refused, as [`decode`]
    /// refuses it.
    #[serde(default, deserialize_with = "noticed")]
    result: Option<()>,
    #[serde(default, deserialize_with = "noticed")]
    error: Option<()>,
}

/// A member that is present, whatever its value.
fn noticed<'de, D: Deserializer<'de>>(d: D) -> Result<Option<()>, D::Error> {
    de::IgnoredAny::deserialize(d).map(|_| Some(()))
}

/// Params that are present must not be `null` (absent params read as `{}`, `null` ones are
/// refused, as [`decode`] does).
fn present_params<'de, D, P>(d: D) -> Result<Option<P>, D::Error>
where
    D: Deserializer<'de>,
    P: Deserialize<'de>,
{
    match Option::<P>::deserialize(d)? {
        Some(p) => Ok(Some(p)),
        None => Err(de::Error::custom("params must be an object or an array")),
    }
}

#[derive(Deserialize)]
#[serde(bound = "R: Deserialize<'de>")]
struct TypedResponseIn<R> {
    #[allow(dead_code)]
    jsonrpc: Version2,
    id: WireId,
    result: Option<R>,
    #[serde(default, deserialize_with = "error_object")]
    error: Option<ErrorObject>,
}

/// An `error` member, which must be an object (serde's derived code would take an array).
fn error_object<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ErrorObject>, D::Error> {
    let raw = <&'de RawValue>::deserialize(d)?;
    if first_byte(raw.get()) != Some(b'{') {
        return Err(de::Error::custom("error must be an object"));
    }
    serde_json::from_str(raw.get())
        .map(Some)
        .map_err(de::Error::custom)
}

/// A request whose params were decoded straight into `P`.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedRequest<P> {
    /// The request id.
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// The params (absent params read as `{}`).
    pub params: P,
}

/// Decodes a request whose params type the caller already knows, in one pass over the bytes
/// (the general [`decode`] keeps params as raw text and parses them a second time). Servers
/// with a hot method and clients reading the answer to their own request use this.
///
/// # Errors
/// The same -32700/-32600 mapping as [`decode`]; params that do not fit `P` are -32602 with the
/// request's id.
pub fn decode_request_as<P: serde::de::DeserializeOwned>(
    bytes: &[u8],
) -> Result<TypedRequest<P>, DecodeError> {
    // Only an object is tried on the fast path: serde's derived code would take an array.
    // UTF-8 is checked first, over all the text: from a slice, serde_json does not check the
    // strings it skips.
    let text = std::str::from_utf8(bytes)
        .ok()
        .filter(|t| first_byte(t) == Some(b'{'));
    let fast = text
        .and_then(|t| serde_json::from_str::<TypedRequestIn<P>>(t).ok())
        .filter(|r| r.result.is_none() && r.error.is_none());
    if let Some(r) = fast {
        let params = match r.params {
            Some(p) => p,
            None => serde_json::from_str("{}").map_err(|e| DecodeError {
                id: Some(r.id.0.clone()),
                error: ErrorObject::invalid_params(e),
                notification: false,
                response: false,
            })?,
        };
        return Ok(TypedRequest {
            id: r.id.0,
            method: r.method,
            params,
        });
    }
    // The fast path only says "no"; the general decoder says precisely why.
    match decode(bytes)? {
        Message::Request(r) => match r.params::<P>() {
            Ok(params) => Ok(TypedRequest {
                id: r.id,
                method: r.method,
                params,
            }),
            Err(e) => Err(DecodeError {
                id: Some(r.id),
                error: ErrorObject::invalid_params(e),
                notification: false,
                response: false,
            }),
        },
        other => Err(DecodeError::invalid(
            other.id().cloned(),
            "expected a request",
        )),
    }
}

/// Decodes a response whose result type the caller knows (the answer to its own request), in
/// one pass. An error response comes back as `Err(ErrorObject)` inside `Ok`.
///
/// # Errors
/// As [`decode`]; a result that does not fit `R` is -32602 with the response's id (for the
/// caller's own reporting: responses are never answered).
#[allow(clippy::type_complexity)]
pub fn decode_response_as<R: serde::de::DeserializeOwned>(
    bytes: &[u8],
) -> Result<(RequestId, Result<R, ErrorObject>), DecodeError> {
    let fast = match std::str::from_utf8(bytes) {
        Ok(t) if first_byte(t) == Some(b'{') => serde_json::from_str::<TypedResponseIn<R>>(t),
        _ => Err(de::Error::custom("not a JSON object in UTF-8")),
    };
    match fast {
        Ok(TypedResponseIn {
            id,
            result: Some(r),
            error: None,
            ..
        }) => Ok((id.0, Ok(r))),
        Ok(TypedResponseIn {
            id,
            result: None,
            error: Some(e),
            ..
        }) => Ok((id.0, Err(e))),
        Ok(r) => Err(DecodeError {
            response: true,
            ..DecodeError::invalid(
                Some(r.id.0),
                "a response carries exactly one of result and error",
            )
        }),
        Err(e) => Err(match decode(bytes) {
            Err(precise) => precise,
            Ok(m) => DecodeError {
                id: m.id().cloned(),
                error: ErrorObject::invalid_params(e),
                notification: false,
                response: true,
            },
        }),
    }
}

#[derive(Serialize)]
struct TypedRequestOut<'a, P: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    params: &'a P,
}

#[derive(Serialize)]
struct TypedResponseOut<'a, R: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a R,
}

/// Appends a request with typed params to `out` in one pass (no intermediate raw text).
///
/// # Errors
/// When `params` cannot be serialized; `out` is left as it was.
pub fn encode_request<P: Serialize + ?Sized>(
    id: &RequestId,
    method: &str,
    params: &P,
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    let start = out.len();
    let msg = TypedRequestOut {
        jsonrpc: JSONRPC_VERSION,
        id,
        method,
        params,
    };
    serde_json::to_writer(&mut *out, &msg).inspect_err(|_| out.truncate(start))
}

/// Appends a response with a typed result to `out` in one pass.
///
/// # Errors
/// When `result` cannot be serialized; `out` is left as it was.
pub fn encode_response<R: Serialize + ?Sized>(
    id: &RequestId,
    result: &R,
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    let start = out.len();
    let msg = TypedResponseOut {
        jsonrpc: JSONRPC_VERSION,
        id,
        result,
    };
    serde_json::to_writer(&mut *out, &msg).inspect_err(|_| out.truncate(start))
}

/// Encodes a batch of messages as one JSON array.
pub fn encode_batch(messages: &[Message]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 * messages.len() + 2);
    out.push(b'[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        m.encode_into(&mut out);
    }
    out.push(b']');
    out
}

#[cfg(test)]
mod batch_rule_tests {
    use super::*;
    use crate::version::ProtocolVersion as V;

    fn batch(text: &str) -> Vec<Result<Message, DecodeError>> {
        match decode_incoming(text.as_bytes(), true).unwrap() {
            Payload::Batch(b) => b,
            Payload::Single(_) => panic!("not a batch"),
        }
    }

    #[test]
    fn batches_only_in_2025_03_26_and_never_with_initialize() {
        let mut pings = batch(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert!(check_batch(Some(V::V2025_03_26), &mut pings).is_ok());
        for v in [
            None,
            Some(V::V2024_11_05),
            Some(V::V2025_06_18),
            Some(V::V2025_11_25),
        ] {
            assert!(check_batch(v, &mut pings).is_err(), "{v:?}");
        }
        // The initialize alone is refused, with its id; the ping is served.
        let mut init = batch(
            r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
        );
        assert!(check_batch(Some(V::V2025_03_26), &mut init).is_ok());
        let e = init[0].as_ref().unwrap_err();
        assert_eq!(e.id, Some(RequestId::Number(1)));
        assert!(e.to_string().contains("initialize"), "{e}");
        assert!(matches!(&init[1], Ok(Message::Request(r)) if r.method == "ping"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(bytes: &[u8]) -> (i64, Option<RequestId>) {
        let e = decode(bytes).unwrap_err();
        (e.error.code, e.id)
    }

    #[test]
    fn request_round_trip() {
        let m = decode(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap();
        assert!(
            matches!(&m, Message::Request(r) if r.id == RequestId::Number(7) && r.method == "ping" && r.params.is_none())
        );
        assert_eq!(m.to_vec(), br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
    }

    #[test]
    fn responses_encode_as_serde_would() {
        // The written-out frame of a response must be byte for byte what serializing the
        // message gives, for both kinds of id, a string id that needs escaping, and a pretty
        // raw result (re-encoded on one line).
        let ids = [
            RequestId::Number(-42),
            RequestId::Number(i64::MAX),
            RequestId::from("s-1"),
            RequestId::from("quote \" and \\ and \u{1}"),
        ];
        for id in ids {
            for result in [r#"{"content":[]}"#, "{\n  \"a\": [1,\n 2]\n}", "null"] {
                let m = Message::Response(Response {
                    id: id.clone(),
                    result: RawValue::from_string(result.to_owned()).unwrap(),
                });
                let via_serde = serde_json::to_vec(&m).unwrap();
                let via_serde = if via_serde.contains(&b'\n') {
                    serde_json::to_vec(&serde_json::from_slice::<Value>(&via_serde).unwrap())
                        .unwrap()
                } else {
                    via_serde
                };
                assert_eq!(m.to_vec(), via_serde, "{id} {result}");
                assert!(!m.to_vec().contains(&b'\n'));
            }
        }
    }

    #[test]
    fn notification_and_string_id() {
        let m = decode(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(matches!(m, Message::Notification(_)));
        let m = decode(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert_eq!(m.id(), Some(&RequestId::from("a")));
    }

    #[test]
    fn an_answer_that_is_not_utf8_names_its_request_and_a_request_does_not() {
        // An answer: -32700, but its id, and not answered back (as any invalid answer).
        for bad in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":\"\xff\"}}"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":1,\"message\":\"\xff\"}}",
        ] {
            let e = decode(bad).unwrap_err();
            assert!(
                e.is_parse_error() && e.is_response() && !e.is_answered(),
                "{e:?}"
            );
            assert_eq!(e.id, Some(RequestId::Number(7)));
        }
        // A request: -32700 with a null id, answered, as JSON-RPC says for a parse error.
        let e = decode(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"\xff\"}").unwrap_err();
        assert!(
            e.is_parse_error() && e.is_answered() && e.id.is_none(),
            "{e:?}"
        );
    }

    #[test]
    fn error_mapping() {
        assert_eq!(code(b"not json").0, codes::PARSE_ERROR);
        assert_eq!(code(b"{\"jsonrpc\":").0, codes::PARSE_ERROR);
        assert_eq!(code(b"\xff\xfe").0, codes::PARSE_ERROR);
        assert_eq!(code(b"42").0, codes::INVALID_REQUEST);
        assert_eq!(code(b"[]").0, codes::INVALID_REQUEST);
        assert_eq!(
            code(br#"{"jsonrpc":"1.0","id":3,"method":"x"}"#),
            (codes::INVALID_REQUEST, Some(RequestId::Number(3)))
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#),
            (codes::INVALID_REQUEST, None)
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":"q","method":5}"#),
            (codes::INVALID_REQUEST, Some(RequestId::from("q")))
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#).0,
            codes::INVALID_REQUEST
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#).0,
            codes::INVALID_REQUEST
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1}"#).0,
            codes::INVALID_REQUEST
        );
    }

    #[test]
    fn batches_only_when_allowed() {
        let b = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":5}]"#;
        assert_eq!(code(b).0, codes::INVALID_REQUEST);
        match decode_incoming(b, true).unwrap() {
            Payload::Batch(items) => {
                assert!(items[0].is_ok());
                assert_eq!(
                    items[1].as_ref().unwrap_err().error.code,
                    codes::INVALID_REQUEST
                );
            }
            Payload::Single(_) => panic!("expected a batch"),
        }
        assert_eq!(
            decode_incoming(b"[]", true).unwrap_err().error.code,
            codes::INVALID_REQUEST
        );
    }

    /// A line of `0,0,0,…` within the size limit decoded into millions of errors (600 MB
    /// from 4 MiB): a batch past the cap is refused whole, and where batches are not allowed
    /// an array is refused without its elements being built at all.
    #[test]
    fn a_batch_is_refused_whole_past_its_cap() {
        let batch = |n: usize| {
            let ping = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
            format!("[{}]", vec![ping; n].join(","))
        };
        match decode_incoming(batch(MAX_BATCH_LEN).as_bytes(), true).unwrap() {
            Payload::Batch(items) => assert_eq!(items.len(), MAX_BATCH_LEN),
            Payload::Single(_) => panic!("expected a batch"),
        }
        let e = decode_incoming(batch(MAX_BATCH_LEN + 1).as_bytes(), true).unwrap_err();
        assert_eq!(e.error.code, codes::INVALID_REQUEST);
        assert!(
            e.error.message.contains("at most 1024"),
            "{}",
            e.error.message
        );
        assert!(e.id.is_none());
        // Still -32700 when the long array is not JSON after all, and -32600 where batches
        // are not allowed.
        let broken = format!("{},", batch(MAX_BATCH_LEN + 1));
        assert_eq!(
            decode_incoming(broken.as_bytes(), true)
                .unwrap_err()
                .error
                .code,
            codes::PARSE_ERROR
        );
        let zeros = format!("[{}]", vec!["0"; 100_000].join(","));
        assert_eq!(code(zeros.as_bytes()).0, codes::INVALID_REQUEST);
    }

    #[test]
    fn pretty_params_are_reencoded_on_one_line() {
        let m =
            decode(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\n\"a\": 1\n}}")
                .unwrap();
        let out = m.to_vec();
        assert!(!out.contains(&b'\n'));
        let back = decode(&out).unwrap();
        assert!(matches!(back, Message::Request(r) if r.params_value()["a"] == 1));
    }

    #[test]
    fn typed_one_pass_codec() {
        #[derive(Deserialize, Serialize, Debug, PartialEq)]
        struct P {
            name: String,
        }
        let r = decode_request_as::<P>(
            br#"{"jsonrpc":"2.0","id":"a","method":"m","params":{"name":"x"}}"#,
        )
        .unwrap();
        assert_eq!(
            (r.id.clone(), r.method.as_str(), r.params.name.as_str()),
            (RequestId::from("a"), "m", "x")
        );
        let mut out = Vec::new();
        encode_request(&r.id, &r.method, &r.params, &mut out).unwrap();
        assert_eq!(
            out,
            br#"{"jsonrpc":"2.0","id":"a","method":"m","params":{"name":"x"}}"#
        );
        // The fast path keeps the exact error mapping of `decode`.
        assert_eq!(
            decode_request_as::<P>(b"nope").unwrap_err().error.code,
            codes::PARSE_ERROR
        );
        let e =
            decode_request_as::<P>(br#"{"jsonrpc":"2.0","id":4,"method":"m","params":{"name":1}}"#)
                .unwrap_err();
        assert_eq!(
            (e.error.code, e.id),
            (codes::INVALID_PARAMS, Some(RequestId::Number(4)))
        );
        let e = decode_request_as::<P>(br#"{"jsonrpc":"1.0","id":4,"method":"m"}"#).unwrap_err();
        assert_eq!(e.error.code, codes::INVALID_REQUEST);
        let (id, res) =
            decode_response_as::<P>(br#"{"jsonrpc":"2.0","id":9,"result":{"name":"y"}}"#).unwrap();
        assert_eq!(
            (id, res.unwrap().name),
            (RequestId::Number(9), "y".to_owned())
        );
        let (_, res) = decode_response_as::<P>(
            br#"{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no"}}"#,
        )
        .unwrap();
        assert_eq!(res.unwrap_err().code, codes::METHOD_NOT_FOUND);
        let mut out = Vec::new();
        encode_response(&RequestId::Number(1), &P { name: "z".into() }, &mut out).unwrap();
        assert_eq!(out, br#"{"jsonrpc":"2.0","id":1,"result":{"name":"z"}}"#);
    }
}
