//! Cursor-based pagination shared by every `*/list` request.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Cursor, Meta};

/// Params of a paginated request (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`, `tasks/list`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// Where to start (the previous result's `nextCursor`); absent for the first page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata (required in 2026-07-28).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl PaginatedRequestParams {
    /// The page after `cursor`.
    pub fn after(cursor: impl Into<Cursor>) -> Self {
        PaginatedRequestParams {
            cursor: Some(cursor.into()),
            ..Default::default()
        }
    }
}
