//! Argument completion (`completion/complete`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Meta, ResultType};

/// What is being completed: a prompt's argument or a resource template's variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Reference {
    /// `ref/prompt`.
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// `ref/resource` (`ResourceTemplateReference`; `ResourceReference` before 2025-06-18).
    #[serde(rename = "ref/resource")]
    Resource(ResourceTemplateReference),
}

/// A prompt, by name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PromptReference {
    /// Prompt name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource template, by URI (template).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResourceTemplateReference {
    /// URI or URI template.
    pub uri: String,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompleteArgument {
    /// Argument name.
    pub name: String,
    /// What the user typed so far.
    pub value: String,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Already-resolved arguments (2025-06-18+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompleteContext {
    /// Argument values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequestParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument.
    pub argument: CompleteArgument,
    /// Context (2025-06-18+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The completion values.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// Total number of matches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// More than `values` exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The values.
    pub completion: Completion,
    /// 2026-07-28 discriminator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CompleteResult {
    /// A result with these values (truncated to the 100 the spec allows, with `hasMore`).
    pub fn new(mut values: Vec<String>) -> Self {
        let total = values.len() as u64;
        let has_more = values.len() > 100;
        values.truncate(100);
        CompleteResult {
            completion: Completion {
                values,
                total: Some(total),
                has_more: Some(has_more),
                extra: Map::new(),
            },
            ..Default::default()
        }
    }
}
