//! Elicitation: the server asks the user for input, through a form (2025-06-18+) or by
//! sending them to a URL (2025-11-25+).
//!
//! The form schema is a restricted JSON Schema: flat properties of primitive types. Each kind
//! of property is its own type; [`PrimitiveSchemaDefinition`] tells them apart by `type` and
//! by which of `enum` / `enumNames` / `oneOf` / `items` is present, the same way the spec's
//! anyOf does.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::common::{Meta, ResultType};
use super::tasks::TaskMetadata;

/// A string field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// `email`, `uri`, `date` or `date-time`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Default (2025-11-25+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for StringSchema {
    fn default() -> Self {
        StringSchema {
            type_: "string".into(),
            title: None,
            description: None,
            min_length: None,
            max_length: None,
            format: None,
            default: None,
            extra: Map::new(),
        }
    }
}

/// A number or integer field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<Number>,
    /// Maximum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<Number>,
    /// Default (2025-11-25+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Number>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A boolean field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BooleanSchema {
    /// Always `"boolean"`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Single choice among plain values: `{type: "string", enum: [...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UntitledSingleSelectEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values.
    #[serde(rename = "enum")]
    pub enum_: Vec<String>,
    /// Default (2025-11-25+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A value with a display title.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TitledOption {
    /// The value.
    #[serde(rename = "const")]
    pub const_: String,
    /// Display title.
    pub title: String,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Single choice with titles: `{type: "string", oneOf: [{const, title}]}` (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The options.
    pub one_of: Vec<TitledOption>,
    /// Default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Items of an untitled multi-select.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UntitledEnumItems {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The values.
    #[serde(rename = "enum")]
    pub enum_: Vec<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Items of a titled multi-select.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// The options.
    pub any_of: Vec<TitledOption>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Multiple choice among plain values (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// Always `"array"`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum selections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum selections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The values.
    pub items: UntitledEnumItems,
    /// Default selection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Multiple choice with titles (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// Always `"array"`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum selections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum selections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The options.
    pub items: TitledEnumItems,
    /// Default selection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The legacy titled enum: `enum` plus parallel `enumNames` (the 2025-06-18 `EnumSchema`;
/// `LegacyTitledEnumSchema` since 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values.
    #[serde(rename = "enum")]
    pub enum_: Vec<String>,
    /// Display names, parallel to `enum`.
    pub enum_names: Vec<String>,
    /// Default (2025-11-25+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One property of an elicitation form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PrimitiveSchemaDefinition {
    /// Free text.
    String(StringSchema),
    /// Number or integer.
    Number(NumberSchema),
    /// Boolean.
    Boolean(BooleanSchema),
    /// Plain single select.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// Titled single select.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Plain multi select.
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Titled multi select.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// `enum` + `enumNames`.
    LegacyTitledEnum(LegacyTitledEnumSchema),
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Map::<String, Value>::deserialize(d)?;
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        let has = |k: &str| v.contains_key(k);
        let items_has = |k: &str| {
            v.get("items")
                .and_then(Value::as_object)
                .is_some_and(|i| i.contains_key(k))
        };
        let obj = Value::Object(v.clone());
        let r = match ty {
            "string" if has("enumNames") => {
                serde_json::from_value(obj).map(PrimitiveSchemaDefinition::LegacyTitledEnum)
            }
            "string" if has("enum") => {
                serde_json::from_value(obj).map(PrimitiveSchemaDefinition::UntitledSingleSelect)
            }
            "string" if has("oneOf") => {
                serde_json::from_value(obj).map(PrimitiveSchemaDefinition::TitledSingleSelect)
            }
            "string" => serde_json::from_value(obj).map(PrimitiveSchemaDefinition::String),
            "number" | "integer" => {
                serde_json::from_value(obj).map(PrimitiveSchemaDefinition::Number)
            }
            "boolean" => serde_json::from_value(obj).map(PrimitiveSchemaDefinition::Boolean),
            "array" if items_has("anyOf") => {
                serde_json::from_value(obj).map(PrimitiveSchemaDefinition::TitledMultiSelect)
            }
            "array" => {
                serde_json::from_value(obj).map(PrimitiveSchemaDefinition::UntitledMultiSelect)
            }
            other => {
                return Err(de::Error::custom(format!(
                    "unsupported elicitation property type `{other}`"
                )));
            }
        };
        r.map_err(de::Error::custom)
    }
}

/// The form of a form-mode elicitation: flat properties only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitRequestedSchema {
    /// Always `"object"`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The fields.
    pub properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    /// Required field names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// `$schema` (2025-11-25+).
    #[serde(rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ElicitRequestedSchema {
    /// A form with these fields.
    pub fn new(properties: BTreeMap<String, PrimitiveSchemaDefinition>) -> Self {
        ElicitRequestedSchema {
            type_: "object".into(),
            properties,
            required: None,
            schema: None,
            extra: Map::new(),
        }
    }
}

/// The `mode` value `"form"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FormMode {
    /// `"form"`.
    #[serde(rename = "form")]
    Form,
}

/// The `mode` value `"url"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UrlMode {
    /// `"url"`.
    #[serde(rename = "url")]
    Url,
}

/// Form-mode params (`mode` is optional: absent means form).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// `"form"` (2025-11-25+; omitted before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What is asked, for the user.
    pub message: String,
    /// The form.
    pub requested_schema: ElicitRequestedSchema,
    /// Run as a task (2025-11-25 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// URL-mode params (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestUrlParams {
    /// `"url"`.
    pub mode: UrlMode,
    /// What is asked, for the user.
    pub message: String,
    /// Where to send the user.
    pub url: String,
    /// Id echoed by `notifications/elicitation/complete` (2025-11-25, required there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Run as a task (2025-11-25 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// URL mode (tried first: it is the one with a required `mode`).
    Url(ElicitRequestUrlParams),
    /// Form mode.
    Form(ElicitRequestFormParams),
}

impl ElicitRequestParams {
    /// A form-mode request.
    pub fn form(message: impl Into<String>, schema: ElicitRequestedSchema) -> Self {
        ElicitRequestParams::Form(ElicitRequestFormParams {
            mode: None,
            message: message.into(),
            requested_schema: schema,
            task: None,
            meta: None,
            extra: Map::new(),
        })
    }

    /// A URL-mode request.
    pub fn url(message: impl Into<String>, url: impl Into<String>) -> Self {
        ElicitRequestParams::Url(ElicitRequestUrlParams {
            mode: UrlMode::Url,
            message: message.into(),
            url: url.into(),
            elicitation_id: None,
            task: None,
            meta: None,
            extra: Map::new(),
        })
    }
}

/// What the user did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted / confirmed.
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed.
    Cancel,
}

/// Result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The form data (form mode, accept only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
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

impl ElicitResult {
    /// A result with only an action.
    pub fn action(action: ElicitAction) -> Self {
        ElicitResult {
            action,
            content: None,
            result_type: None,
            meta: None,
            extra: Map::new(),
        }
    }

    /// Accepted with form data.
    pub fn accept(content: Map<String, Value>) -> Self {
        ElicitResult {
            content: Some(content),
            ..ElicitResult::action(ElicitAction::Accept)
        }
    }
}

/// Params of `notifications/elicitation/complete` (2025-11-25 only).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteNotificationParams {
    /// The URL elicitation that finished.
    pub elicitation_id: String,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
