//! Lifecycle: capabilities, the legacy `initialize` handshake, the modern `server/discover`,
//! and the per-request `_meta` keys that replace the handshake in 2026-07-28.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{
    CacheScope, Implementation, LoggingLevel, Meta, ProgressToken, ResultType, meta_keys,
};

/// Capability with only a `listChanged` flag (`prompts`, `tools`, legacy `roots`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChangedCapability {
    /// Whether list-changed notifications are sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `resources` server capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Supports `resources/subscribe` (legacy) or resource subscriptions (modern).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Sends `notifications/resources/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `sampling` client capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SamplingCapability {
    /// Supports `includeContext` other than `none` (2025-11-25+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
    /// Supports `tools` / `toolChoice` (2025-11-25+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Map<String, Value>>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `elicitation` client capability (2025-06-18+). `{}` means form mode only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ElicitationCapability {
    /// Form mode (2025-11-25+ spelling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<Map<String, Value>>,
    /// URL mode (2025-11-25+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<Map<String, Value>>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ElicitationCapability {
    /// Whether form mode is supported (`{}` counts as form).
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

/// What a client can do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Non-standard capabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// Can list roots (deprecated in 2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roots: Option<ListChangedCapability>,
    /// Can sample an LLM (deprecated in 2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Can elicit input from the user (2025-06-18+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Experimental tasks (2025-11-25 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Map<String, Value>>,
    /// Extensions keyed by identifier (2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a server can do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Non-standard capabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// Sends log messages (deprecated in 2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logging: Option<Map<String, Value>>,
    /// Argument completion (2025-03-26+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completions: Option<Map<String, Value>>,
    /// Offers prompts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// Offers resources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Offers tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Experimental tasks (2025-11-25 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Map<String, Value>>,
    /// Extensions keyed by identifier, such as `io.modelcontextprotocol/tasks` (2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `initialize` (legacy era).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// The revision the client proposes. A string, not a
    /// [`ProtocolVersion`](crate::version::ProtocolVersion): the client may propose one we do not know.
    pub protocol_version: String,
    /// The client's capabilities.
    pub capabilities: ClientCapabilities,
    /// The client.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Result of `initialize`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the server will speak.
    pub protocol_version: String,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// The server.
    pub server_info: Implementation,
    /// How to use the server, for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Result of `server/discover` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Revisions the server speaks.
    pub supported_versions: Vec<String>,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Cache lifetime hint (required on the wire).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (required on the wire).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Discriminator (required on the wire).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata (`io.modelcontextprotocol/serverInfo`).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The reserved keys of a 2026-07-28 request's `_meta`, typed. Requests keep `_meta` as a
/// plain [`Meta`] map (so unknown keys pass through); this view reads and writes the keys the
/// protocol defines.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion` (required in 2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// `io.modelcontextprotocol/clientCapabilities` (required in 2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<ClientCapabilities>,
    /// `io.modelcontextprotocol/clientInfo`.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/logLevel` (deprecated).
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// `progressToken`.
    #[serde(rename = "progressToken", skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<ProgressToken>,
    /// Every other key.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl RequestMeta {
    /// The `_meta` a modern request needs: revision and capabilities.
    pub fn modern(
        version: crate::version::ProtocolVersion,
        capabilities: ClientCapabilities,
    ) -> Self {
        RequestMeta {
            protocol_version: Some(version.as_str().to_owned()),
            client_capabilities: Some(capabilities),
            ..Default::default()
        }
    }

    /// Reads the typed view out of a `_meta` map.
    ///
    /// # Errors
    /// When a reserved key holds a value of the wrong shape.
    pub fn from_meta(meta: &Meta) -> Result<Self, serde_json::Error> {
        serde_json::from_value(Value::Object(meta.clone()))
    }

    /// Turns the view back into a `_meta` map.
    pub fn into_meta(self) -> Meta {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Meta::new(),
        }
    }

    /// The protocol version key of a raw `_meta`, without decoding the rest.
    pub fn protocol_version_of(meta: &Meta) -> Option<&str> {
        meta.get(meta_keys::PROTOCOL_VERSION)
            .and_then(Value::as_str)
    }
}
