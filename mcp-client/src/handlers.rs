//! The application's answers to what a server may ask of its client: sampling an LLM,
//! eliciting input from the user, listing roots. The same handlers serve both eras: legacy
//! servers send JSON-RPC requests, 2026-07-28 servers embed them in an `input_required` result.
//!
//! The client's capabilities are derived from which handlers are registered, so a client never
//! declares something it cannot do.

use mcp_core::types::methods::{ELICITATION_CREATE, ROOTS_LIST, SAMPLING_CREATE_MESSAGE};
use std::sync::Arc;

use mcp_core::jsonrpc::{ErrorObject, to_raw};
use mcp_core::types::tasks_ext;
use mcp_core::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    InputRequest, InputResponse, ListRootsResult, Root,
};
use mcp_core::version::{Era, ProtocolVersion};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::error::Error;

/// Answers `sampling/createMessage`: runs the prompt through a model.
pub type SamplingHandler =
    dyn Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> + Send + Sync;

/// Answers `elicitation/create` (form mode, and URL mode when declared): asks the user.
/// Declining or dismissing is an answer ([`ElicitResult::action`]), not an error.
pub type ElicitationHandler =
    dyn Fn(ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync;

/// Answers `roots/list`: the directories the client exposes.
pub type RootsProvider = dyn Fn() -> Vec<Root> + Send + Sync;

/// The registered handlers.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub sampling: Option<Arc<SamplingHandler>>,
    pub elicitation: Option<Arc<ElicitationHandler>>,
    pub elicitation_url: bool,
    pub roots: Option<Arc<RootsProvider>>,
    /// Whether the client declares the tasks extension (and follows tasks).
    pub tasks: bool,
    /// Whether the client declares MCP Apps (renders `ui://` views).
    pub apps: bool,
}

impl Handlers {
    /// The `ClientCapabilities` these handlers make true in revision `version`: what that
    /// revision does not have is left out (elicitation before 2025-06-18, its URL mode before
    /// 2025-11-25). Servers register tools by what the client declares, whatever revision was
    /// negotiated, and the client refuses a request its revision lacks: declaring it anyway
    /// would offer tools that can only fail.
    pub fn capabilities_for(&self, version: ProtocolVersion) -> Map<String, Value> {
        let mut caps = self.capabilities();
        if version.era() != Era::Modern {
            without_tasks_extension(&mut caps);
        }
        if !version.at_least(ProtocolVersion::V2025_06_18) {
            caps.remove("elicitation");
        } else if !version.at_least(ProtocolVersion::V2025_11_25) {
            if let Some(e) = caps.get_mut("elicitation") {
                // Form mode was the only mode, declared as `{}`.
                *e = json!({});
            }
        }
        caps
    }

    /// The `ClientCapabilities` these handlers make true.
    pub fn capabilities(&self) -> Map<String, Value> {
        let mut caps = Map::new();
        if self.sampling.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if self.elicitation.is_some() {
            // `{}` is form mode in every revision that has elicitation; the explicit spelling
            // is only needed when URL mode is declared too.
            let e = if self.elicitation_url {
                json!({"form": {}, "url": {}})
            } else {
                json!({})
            };
            caps.insert("elicitation".into(), e);
        }
        if self.roots.is_some() {
            caps.insert("roots".into(), json!({"listChanged": true}));
        }
        let mut extensions = Map::new();
        if self.tasks {
            extensions.insert(
                tasks_ext::EXTENSION_ID.into(),
                tasks_ext::server_capability(),
            );
        }
        if self.apps {
            extensions.insert(
                crate::apps::EXTENSION_ID.into(),
                crate::apps::client_capability(),
            );
        }
        if !extensions.is_empty() {
            caps.insert("extensions".into(), Value::Object(extensions));
        }
        caps
    }

    fn sample(&self, p: CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> {
        match &self.sampling {
            Some(h) => h(p),
            None => Err(ErrorObject::method_not_found(SAMPLING_CREATE_MESSAGE)),
        }
    }

    fn elicit(&self, p: ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
        let url = matches!(p, ElicitRequestParams::Url(_));
        match &self.elicitation {
            Some(h) if !url || self.elicitation_url => h(p),
            _ => Err(ErrorObject::method_not_found(ELICITATION_CREATE)),
        }
    }

    fn list_roots(&self) -> Result<ListRootsResult, ErrorObject> {
        match &self.roots {
            Some(h) => Ok(ListRootsResult {
                roots: h(),
                ..Default::default()
            }),
            None => Err(ErrorObject::method_not_found(ROOTS_LIST)),
        }
    }

    /// A legacy server's request: the result to send back, or the error.
    pub fn answer_request(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        fn parse<T: serde::de::DeserializeOwned>(p: Option<&RawValue>) -> Result<T, ErrorObject> {
            let text = p.map_or("{}", RawValue::get);
            serde_json::from_str(text).map_err(ErrorObject::invalid_params)
        }
        let raw = match method {
            SAMPLING_CREATE_MESSAGE => to_raw(&self.sample(parse(params)?)?),
            ELICITATION_CREATE => to_raw(&self.elicit(parse(params)?)?),
            ROOTS_LIST => to_raw(&self.list_roots()?),
            other => return Err(ErrorObject::method_not_found(other)),
        };
        raw.map_err(ErrorObject::internal)
    }

    /// One entry of a 2026-07-28 `inputRequests` map.
    pub fn answer_input(&self, key: &str, req: InputRequest) -> Result<InputResponse, Error> {
        let method = req.method();
        let failed = |e: ErrorObject| Error::Input {
            method: method.to_owned(),
            key: key.to_owned(),
            source: Box::new(e),
        };
        Ok(match req {
            InputRequest::CreateMessage(p) => {
                InputResponse::CreateMessage(self.sample(p).map_err(failed)?)
            }
            InputRequest::Elicit(p) => InputResponse::Elicit(self.elicit(p).map_err(failed)?),
            InputRequest::ListRoots(_) => {
                InputResponse::ListRoots(self.list_roots().map_err(failed)?)
            }
        })
    }
}

/// Takes the tasks extension out of `caps` (and `extensions` when nothing else is left): the
/// tasks extension is a 2026-07-28 one, and a legacy server has no use for it. MCP Apps stays:
/// the extension is negotiated in every revision (its specification shows it in a 2024-11-05
/// `initialize`), and legacy hosts are where views are rendered today.
pub(crate) fn without_tasks_extension(caps: &mut Map<String, Value>) -> bool {
    let Some(Value::Object(ext)) = caps.get_mut("extensions") else {
        return caps.remove("extensions").is_some();
    };
    let removed = ext.remove(tasks_ext::EXTENSION_ID).is_some();
    if ext.is_empty() {
        caps.remove("extensions");
        return true;
    }
    removed
}
