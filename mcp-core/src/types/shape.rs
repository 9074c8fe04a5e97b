//! Shaping a serialized message for the revision a peer speaks.
//!
//! The types of this crate are the union of all revisions. Before a message goes to a peer,
//! [`request_params`], [`result`] or [`notification_params`] fits its JSON to that peer's
//! revision:
//!
//! - **Left out** (harmless to drop: the peer would ignore it, or a fallback carries the
//!   meaning): `title` before 2025-06-18; `icons`, `description`/`websiteUrl` of
//!   implementations before 2025-11-25; `_meta` on nested objects (content, tools, resources,
//!   prompts, roots) before 2025-06-18; `annotations.lastModified` before 2025-06-18; tool
//!   `annotations` before 2025-03-26; `outputSchema` and `structuredContent` before 2025-06-18
//!   (the spec has tools put the same JSON in a text block); `execution`, `tasks`
//!   capabilities outside 2025-11-25; `extensions` capabilities and `resultType`, `ttlMs`,
//!   `cacheScope` before 2026-07-28; capability sub-fields a revision does not define;
//!   progress `message` before 2025-03-26; completion `context` before 2025-06-18; form-mode
//!   `mode: "form"` before 2025-11-25; elicitation `default`s and `$schema` before 2025-11-25;
//!   `elicitationId` in 2026-07-28; the 2026-07-28 reserved request `_meta` keys and
//!   `subscriptionId` for legacy peers.
//! - **Added** where 2026-07-28 requires it: `resultType` (`"complete"`) on every result,
//!   `ttlMs` (0: immediately stale) and `cacheScope` (`"private"`: the safe choice) on
//!   cacheable results, and on requests `_meta` with the protocol version and (when absent)
//!   empty client capabilities, which declares none.
//! - **Rewritten** without loss: a titled single-select elicitation enum (`oneOf`) becomes the
//!   2025-06-18 `enum` + `enumNames`; a one-block sampling content array becomes the block.
//! - **Refused** with a [`ShapeError`], because dropping it would change what the message
//!   means: a method the revision does not have; audio content before 2025-03-26;
//!   `resource_link` content before 2025-06-18; `tool_use` / `tool_result` content, multi-block
//!   sampling content, sampling `tools`/`toolChoice`, URL-mode elicitation, multi-select
//!   enums before 2025-11-25; task augmentation (`task`) outside 2025-11-25; MRTR fields
//!   (`inputResponses`, `requestState`) and `InputRequiredResult` / task-handle results
//!   before 2026-07-28; a `_meta` protocol version that disagrees with the target; a
//!   cancellation without `requestId` outside 2025-11-25; a URL elicitation without
//!   `elicitationId` in 2025-11-25.

use std::fmt;

use serde_json::{Map, Value};

use super::common::meta_keys;
use super::methods as m;
use crate::version::ProtocolVersion;
use crate::version::ProtocolVersion::{V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28};

/// Why a message cannot be sent to a peer of a given revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeError {
    /// The revision has no such method.
    MethodNotInRevision {
        /// The method.
        method: String,
        /// The peer's revision.
        version: ProtocolVersion,
    },
    /// The message carries something the revision cannot express.
    Unrepresentable {
        /// What it is.
        what: String,
        /// The peer's revision.
        version: ProtocolVersion,
    },
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::MethodNotInRevision { method, version } => {
                write!(f, "method {method} does not exist in MCP {version}")
            }
            ShapeError::Unrepresentable { what, version } => {
                write!(f, "{what} cannot be sent to an MCP {version} peer")
            }
        }
    }
}

impl std::error::Error for ShapeError {}

type Obj = Map<String, Value>;

fn refuse(what: impl Into<String>, v: ProtocolVersion) -> ShapeError {
    ShapeError::Unrepresentable {
        what: what.into(),
        version: v,
    }
}

fn check_method(method: &str, v: ProtocolVersion) -> Result<(), ShapeError> {
    if m::ALL.contains(&method) && !m::known_in(method, v) {
        return Err(ShapeError::MethodNotInRevision {
            method: method.to_owned(),
            version: v,
        });
    }
    Ok(())
}

fn drop_before(o: &mut Obj, key: &str, v: ProtocolVersion, since: ProtocolVersion) {
    if v < since {
        o.remove(key);
    }
}

fn each_obj(
    o: &mut Obj,
    key: &str,
    mut f: impl FnMut(&mut Obj) -> Result<(), ShapeError>,
) -> Result<(), ShapeError> {
    if let Some(Value::Array(items)) = o.get_mut(key) {
        for item in items {
            if let Value::Object(io) = item {
                f(io)?;
            }
        }
    }
    Ok(())
}

fn with_obj(
    o: &mut Obj,
    key: &str,
    f: impl FnOnce(&mut Obj) -> Result<(), ShapeError>,
) -> Result<(), ShapeError> {
    match o.get_mut(key) {
        Some(Value::Object(io)) => f(io),
        _ => Ok(()),
    }
}

/// Fields common to named, listed things (tools, resources, templates, prompts, links).
fn named(o: &mut Obj, v: ProtocolVersion) {
    drop_before(o, "title", v, V2025_06_18);
    drop_before(o, "_meta", v, V2025_06_18);
    drop_before(o, "icons", v, V2025_11_25);
    if let Some(Value::Object(a)) = o.get_mut("annotations") {
        drop_before(a, "lastModified", v, V2025_06_18);
    }
}

fn implementation(o: &mut Obj, v: ProtocolVersion) {
    drop_before(o, "title", v, V2025_06_18);
    for k in ["description", "websiteUrl", "icons"] {
        drop_before(o, k, v, V2025_11_25);
    }
}

fn resource_contents(o: &mut Obj, v: ProtocolVersion) -> Result<(), ShapeError> {
    drop_before(o, "_meta", v, V2025_06_18);
    Ok(())
}

fn content_block(o: &mut Obj, v: ProtocolVersion) -> Result<(), ShapeError> {
    let kind = o
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    match kind.as_str() {
        "audio" if v < V2025_03_26 => return Err(refuse("audio content", v)),
        "resource_link" if v < V2025_06_18 => return Err(refuse("resource_link content", v)),
        "tool_use" | "tool_result" if v < V2025_11_25 => {
            return Err(refuse(format!("{kind} content"), v));
        }
        "resource" => with_obj(o, "resource", |r| resource_contents(r, v))?,
        "tool_result" => each_obj(o, "content", |c| content_block(c, v))?,
        _ => {}
    }
    named(o, v);
    Ok(())
}

fn sampling_content(msg: &mut Obj, key: &str, v: ProtocolVersion) -> Result<(), ShapeError> {
    let Some(content) = msg.get_mut(key) else {
        return Ok(());
    };
    if let Value::Array(items) = content {
        if v < V2025_11_25 {
            if items.len() != 1 {
                return Err(refuse("multi-block sampling content", v));
            }
            let single = items.remove(0);
            *content = single;
        } else {
            for item in items.iter_mut() {
                if let Value::Object(io) = item {
                    content_block(io, v)?;
                }
            }
            return Ok(());
        }
    }
    if let Value::Object(io) = content {
        content_block(io, v)?;
    }
    Ok(())
}

fn tool(o: &mut Obj, v: ProtocolVersion) {
    named(o, v);
    drop_before(o, "outputSchema", v, V2025_06_18);
    drop_before(o, "annotations", v, V2025_03_26);
    if v != V2025_11_25 {
        o.remove("execution");
    }
}

fn client_capabilities(o: &mut Obj, v: ProtocolVersion) {
    drop_before(o, "elicitation", v, V2025_06_18);
    if v < V2025_11_25 {
        if let Some(Value::Object(e)) = o.get_mut("elicitation") {
            let url_only = e.contains_key("url") && !e.contains_key("form");
            e.remove("form");
            e.remove("url");
            if url_only {
                o.remove("elicitation");
            }
        }
        if let Some(Value::Object(s)) = o.get_mut("sampling") {
            s.remove("context");
            s.remove("tools");
        }
    }
    if v != V2025_11_25 {
        o.remove("tasks");
    }
    extensions(o, v);
}

fn server_capabilities(o: &mut Obj, v: ProtocolVersion) {
    drop_before(o, "completions", v, V2025_03_26);
    if v != V2025_11_25 {
        o.remove("tasks");
    }
    extensions(o, v);
}

/// `capabilities.extensions` (SEP-1724) is in the schema from 2026-07-28 on, but the
/// extensions are negotiated there in every revision: hosts that speak 2025-06-18 or
/// 2025-11-25 declare MCP Apps and skills under it today, and older schemas allow the extra
/// key (their capabilities do not forbid additional properties), so it is kept. Except the
/// tasks extension before 2026-07-28: 2025-11-25 has tasks of its own (`capabilities.tasks`),
/// and a peer of an older revision must not take the declaration for the extension's methods.
fn extensions(o: &mut Obj, v: ProtocolVersion) {
    if v >= V2026_07_28 {
        return;
    }
    if let Some(Value::Object(e)) = o.get_mut("extensions") {
        e.remove(super::tasks_ext::EXTENSION_ID);
        if e.is_empty() {
            o.remove("extensions");
        }
    }
}

fn elicitation_property(p: &mut Obj, v: ProtocolVersion) -> Result<(), ShapeError> {
    if v >= V2025_11_25 {
        return Ok(());
    }
    let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
    if ty == "array" {
        return Err(refuse("a multi-select elicitation field", v));
    }
    if ty != "boolean" {
        p.remove("default");
    }
    if let Some(Value::Array(options)) = p.remove("oneOf") {
        let mut values = Vec::new();
        let mut names = Vec::new();
        for opt in options {
            values.push(opt.get("const").cloned().unwrap_or(Value::Null));
            names.push(opt.get("title").cloned().unwrap_or(Value::Null));
        }
        p.insert("enum".into(), Value::Array(values));
        p.insert("enumNames".into(), Value::Array(names));
    }
    Ok(())
}

fn request_meta(params: &mut Obj, v: ProtocolVersion) -> Result<(), ShapeError> {
    if v == V2026_07_28 {
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(meta) = meta else {
            return Err(refuse("a non-object _meta", v));
        };
        match meta
            .get(meta_keys::PROTOCOL_VERSION)
            .and_then(Value::as_str)
        {
            Some(p) if p != v.as_str() => {
                return Err(refuse(format!("a request for protocol version {p}"), v));
            }
            _ => {}
        }
        meta.insert(
            meta_keys::PROTOCOL_VERSION.into(),
            Value::String(v.as_str().into()),
        );
        meta.entry(meta_keys::CLIENT_CAPABILITIES)
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(Value::Object(c)) = meta.get_mut(meta_keys::CLIENT_CAPABILITIES) {
            client_capabilities(c, v);
        }
    } else if let Some(Value::Object(meta)) = params.get_mut("_meta") {
        for k in [
            meta_keys::PROTOCOL_VERSION,
            meta_keys::CLIENT_CAPABILITIES,
            meta_keys::CLIENT_INFO,
            meta_keys::LOG_LEVEL,
        ] {
            meta.remove(k);
        }
    }
    Ok(())
}

/// Fits the params of a request (`params` may be `Null` for "no params") to revision `v`.
/// For 2026-07-28 a `Null` becomes an object, since `_meta` is required there.
///
/// # Errors
/// [`ShapeError`] when the request cannot be sent to that revision (see the module docs).
pub fn request_params(
    method: &str,
    params: &mut Value,
    v: ProtocolVersion,
) -> Result<(), ShapeError> {
    check_method(method, v)?;
    if params.is_null() {
        if v != V2026_07_28 || m::is_input_request(method) {
            return Ok(());
        }
        *params = Value::Object(Map::new());
    }
    let Value::Object(p) = params else {
        return Err(refuse("non-object params", v));
    };
    if v < V2026_07_28 && (p.contains_key("inputResponses") || p.contains_key("requestState")) {
        return Err(refuse("an MRTR retry (inputResponses/requestState)", v));
    }
    if p.contains_key("task") && v != V2025_11_25 {
        return Err(refuse("a task-augmented request", v));
    }
    match method {
        m::INITIALIZE => {
            with_obj(p, "capabilities", |c| {
                client_capabilities(c, v);
                Ok(())
            })?;
            with_obj(p, "clientInfo", |c| {
                implementation(c, v);
                Ok(())
            })?;
        }
        m::COMPLETION_COMPLETE => {
            drop_before(p, "context", v, V2025_06_18);
            with_obj(p, "ref", |r| {
                drop_before(r, "title", v, V2025_06_18);
                Ok(())
            })?;
        }
        m::SAMPLING_CREATE_MESSAGE => sampling_params(p, v)?,
        m::ELICITATION_CREATE => elicit_params(p, v)?,
        _ => {}
    }
    if v == V2026_07_28 && m::is_input_request(method) {
        // Embedded in an InputRequiredResult: not a JSON-RPC request, no request `_meta`.
        return Ok(());
    }
    request_meta(p, v)
}

/// [`request_params`] for what a server asks of a legacy client (`sampling/createMessage`,
/// `elicitation/create`, `roots/list`, `ping`), whose method the revision was already checked
/// to have: the same fitting with only those methods' cases, so that a server links no more.
pub(crate) fn server_request_params(
    method: &str,
    p: &mut Obj,
    v: ProtocolVersion,
) -> Result<(), ShapeError> {
    if p.contains_key("task") && v != V2025_11_25 {
        return Err(refuse("a task-augmented request", v));
    }
    match method {
        m::SAMPLING_CREATE_MESSAGE => sampling_params(p, v)?,
        m::ELICITATION_CREATE => elicit_params(p, v)?,
        _ => {}
    }
    request_meta(p, v)
}

fn sampling_params(p: &mut Obj, v: ProtocolVersion) -> Result<(), ShapeError> {
    if v < V2025_11_25 && (p.contains_key("tools") || p.contains_key("toolChoice")) {
        return Err(refuse("sampling with tools", v));
    }
    each_obj(p, "messages", |msg| {
        drop_before(msg, "_meta", v, V2025_11_25);
        sampling_content(msg, "content", v)
    })?;
    each_obj(p, "tools", |t| {
        tool(t, v);
        Ok(())
    })
}

fn elicit_params(p: &mut Obj, v: ProtocolVersion) -> Result<(), ShapeError> {
    match p.get("mode").and_then(Value::as_str) {
        Some("url") if v < V2025_11_25 => return Err(refuse("URL-mode elicitation", v)),
        Some("url") if v == V2025_11_25 && !p.contains_key("elicitationId") => {
            return Err(refuse("URL-mode elicitation without elicitationId", v));
        }
        Some("url") if v == V2026_07_28 => {
            p.remove("elicitationId");
        }
        Some("form") if v < V2025_11_25 => {
            p.remove("mode");
        }
        _ => {}
    }
    with_obj(p, "requestedSchema", |s| {
        drop_before(s, "$schema", v, V2025_11_25);
        if let Some(Value::Object(props)) = s.get_mut("properties") {
            for prop in props.values_mut() {
                if let Value::Object(po) = prop {
                    elicitation_property(po, v)?;
                }
            }
        }
        Ok(())
    })
}

/// Whether a method's 2026-07-28 result is a `CacheableResult` (needs `ttlMs`/`cacheScope`).
fn cacheable(method: &str) -> bool {
    matches!(
        method,
        m::SERVER_DISCOVER
            | m::TOOLS_LIST
            | m::PROMPTS_LIST
            | m::RESOURCES_LIST
            | m::RESOURCES_TEMPLATES_LIST
            | m::RESOURCES_READ
    )
}

/// Fits the result of `method` to revision `v`.
///
/// # Errors
/// [`ShapeError`] when the result cannot be sent to that revision (see the module docs).
pub fn result(method: &str, result: &mut Value, v: ProtocolVersion) -> Result<(), ShapeError> {
    check_method(method, v)?;
    let Value::Object(r) = result else {
        return Err(refuse("a non-object result", v));
    };
    let rtype = r
        .get("resultType")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if v < V2026_07_28 {
        match rtype.as_deref() {
            Some("input_required") => return Err(refuse("an InputRequiredResult", v)),
            Some("task") => return Err(refuse("a task handle result", v)),
            _ => {}
        }
        for k in ["resultType", "ttlMs", "cacheScope"] {
            r.remove(k);
        }
    } else {
        if rtype.is_none() {
            r.insert("resultType".into(), Value::String("complete".into()));
        }
        if rtype.as_deref().is_none_or(|t| t == "complete") && cacheable(method) {
            r.entry("ttlMs").or_insert(Value::from(0));
            r.entry("cacheScope")
                .or_insert_with(|| Value::String("private".into()));
        }
    }
    if rtype.as_deref().is_some_and(|t| t != "complete") {
        return Ok(());
    }
    match method {
        m::INITIALIZE => {
            with_obj(r, "capabilities", |c| {
                server_capabilities(c, v);
                Ok(())
            })?;
            with_obj(r, "serverInfo", |c| {
                implementation(c, v);
                Ok(())
            })?;
        }
        m::SERVER_DISCOVER => with_obj(r, "capabilities", |c| {
            server_capabilities(c, v);
            Ok(())
        })?,
        m::TOOLS_LIST => each_obj(r, "tools", |t| {
            tool(t, v);
            Ok(())
        })?,
        m::TOOLS_CALL => {
            drop_before(r, "structuredContent", v, V2025_06_18);
            if v < V2026_07_28 && r.get("structuredContent").is_some_and(|s| !s.is_object()) {
                r.remove("structuredContent");
            }
            each_obj(r, "content", |c| content_block(c, v))?;
        }
        m::RESOURCES_LIST => each_obj(r, "resources", |x| {
            named(x, v);
            Ok(())
        })?,
        m::RESOURCES_TEMPLATES_LIST => each_obj(r, "resourceTemplates", |x| {
            named(x, v);
            Ok(())
        })?,
        m::RESOURCES_READ => each_obj(r, "contents", |c| resource_contents(c, v))?,
        m::PROMPTS_LIST => each_obj(r, "prompts", |x| {
            named(x, v);
            each_obj(x, "arguments", |a| {
                drop_before(a, "title", v, V2025_06_18);
                Ok(())
            })
        })?,
        m::PROMPTS_GET => each_obj(r, "messages", |msg| {
            with_obj(msg, "content", |c| content_block(c, v))
        })?,
        m::SAMPLING_CREATE_MESSAGE => sampling_content(r, "content", v)?,
        m::ROOTS_LIST => each_obj(r, "roots", |x| {
            drop_before(x, "_meta", v, V2025_06_18);
            Ok(())
        })?,
        _ => {}
    }
    Ok(())
}

/// Fits the params of a notification (`Null` for none) to revision `v`.
///
/// # Errors
/// [`ShapeError`] when the notification cannot be sent to that revision.
pub fn notification_params(
    method: &str,
    params: &mut Value,
    v: ProtocolVersion,
) -> Result<(), ShapeError> {
    check_method(method, v)?;
    let Value::Object(p) = params else {
        return Ok(());
    };
    if v < V2026_07_28 {
        if let Some(Value::Object(meta)) = p.get_mut("_meta") {
            meta.remove(meta_keys::SUBSCRIPTION_ID);
        }
    }
    match method {
        m::NOTIFICATION_PROGRESS => drop_before(p, "message", v, V2025_03_26),
        m::NOTIFICATION_CANCELLED if v != V2025_11_25 && !p.contains_key("requestId") => {
            return Err(refuse("a cancellation without requestId", v));
        }
        _ => {}
    }
    Ok(())
}
