//! Multi round-trip requests (2026-07-28): instead of sending its own requests, the server
//! answers `tools/call`, `prompts/get` or `resources/read` with an [`InputRequiredResult`];
//! the client retries with `inputResponses` (same keys) and the `requestState` echoed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Meta, RequestParams, ResultType};
use super::elicitation::{ElicitRequestParams, ElicitResult};
use super::methods;
use super::roots::ListRootsResult;
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};

/// A request the server needs the client to fulfil, as `{method, params}`.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// `elicitation/create`.
    Elicit(ElicitRequestParams),
    /// `sampling/createMessage` (deprecated).
    CreateMessage(CreateMessageRequestParams),
    /// `roots/list` (deprecated).
    ListRoots(Option<RequestParams>),
}

impl InputRequest {
    /// The method name.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => methods::ELICITATION_CREATE,
            InputRequest::CreateMessage(_) => methods::SAMPLING_CREATE_MESSAGE,
            InputRequest::ListRoots(_) => methods::ROOTS_LIST,
        }
    }
}

// Read by hand so that the method names come from `methods` (a derive would need them
// spelled out again as literals).
impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        struct Parts {
            method: String,
            #[serde(default)]
            params: Option<Value>,
        }
        let Parts { method, params } = Parts::deserialize(d)?;
        let params = params.unwrap_or(Value::Null);
        let r = match method.as_str() {
            methods::ELICITATION_CREATE => serde_json::from_value(params).map(InputRequest::Elicit),
            methods::SAMPLING_CREATE_MESSAGE => {
                serde_json::from_value(params).map(InputRequest::CreateMessage)
            }
            methods::ROOTS_LIST => serde_json::from_value(params).map(InputRequest::ListRoots),
            other => {
                return Err(D::Error::unknown_variant(
                    other,
                    &[
                        methods::ELICITATION_CREATE,
                        methods::SAMPLING_CREATE_MESSAGE,
                        methods::ROOTS_LIST,
                    ],
                ));
            }
        };
        r.map_err(D::Error::custom)
    }
}

// Written by hand so that `roots/list` without params has no `"params": null`.
impl Serialize for InputRequest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("method", self.method())?;
        match self {
            InputRequest::Elicit(p) => m.serialize_entry("params", p)?,
            InputRequest::CreateMessage(p) => m.serialize_entry("params", p)?,
            InputRequest::ListRoots(Some(p)) => m.serialize_entry("params", p)?,
            InputRequest::ListRoots(None) => {}
        }
        m.end()
    }
}

/// The client's answer to one [`InputRequest`]. Told apart by shape: a sampling result has
/// `model`, a roots result `roots`, an elicitation result `action`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)] // built once per retry; boxing buys nothing
pub enum InputResponse {
    /// Answer to `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// Answer to `elicitation/create`.
    Elicit(ElicitResult),
    /// Anything else under a key (`null`, a malformed or unknown answer), kept as it came: a
    /// server must still read the rest of the retry, and it alone knows whether it asked for
    /// that key (an answer to a key it never asked for is ignored, a `null` one is no answer,
    /// a malformed answer to its own question is the client's error).
    Other(Value),
}

/// Server-chosen keys to requests.
pub type InputRequests = BTreeMap<String, InputRequest>;
/// The same keys to answers.
pub type InputResponses = BTreeMap<String, InputResponse>;

/// "I need more input before I can answer": retry with the answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// The requests (at least one of this and `requestState`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client echoes exactly. Attacker-controlled when it comes back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Always `input_required`.
    #[serde(default = "input_required")]
    pub result_type: ResultType,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn input_required() -> ResultType {
    ResultType::InputRequired
}

impl InputRequiredResult {
    /// A result asking for these inputs.
    pub fn new(input_requests: InputRequests) -> Self {
        InputRequiredResult {
            input_requests: Some(input_requests),
            request_state: None,
            result_type: ResultType::InputRequired,
            meta: None,
            extra: Map::new(),
        }
    }

    /// Adds request state.
    pub fn with_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

/// Params of the input-required retry as its own definition (`InputResponseRequestParams`): the
/// fields every retry adds to the original params.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResponseRequestParams {
    /// The answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The echoed state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
