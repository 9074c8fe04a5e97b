//! Elicitation forms from types: a [`JsonSchema`] type's schema cut down to what
//! `elicitation/create` can carry.
//!
//! A form is flat: each property is a string (with length bounds and a format), a number or an
//! integer (with bounds), a boolean, a single choice among strings or a list of such choices.
//! Clients render nothing else, so a type with a nested object, a map or a list of free values
//! is refused here, when the handler builds the question, rather than by the client.

use std::collections::BTreeMap;

use mcp_core::types::{
    BooleanSchema, ElicitRequestedSchema, NumberSchema, PrimitiveSchemaDefinition, StringSchema,
    UntitledEnumItems, UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema,
};
use serde_json::{Map, Number, Value};

use super::JsonSchema;
use crate::error::Error;

/// The elicitation form for `T`: its fields, their descriptions (doc comments with the derive),
/// bounds and choices, and which are required (those serde cannot leave out).
///
/// [`Context::elicit_form`](crate::Context::elicit_form) asks with it; build it yourself to add
/// what a type cannot say, such as defaults, and ask with [`Context::elicit`](crate::Context::elicit).
///
/// ```
/// # #[cfg(feature = "derive")] {
/// use mcp_server_kit::schema::{JsonSchema, elicitation_form};
/// use mcp_server_kit::types::PrimitiveSchemaDefinition;
///
/// #[derive(serde::Deserialize, JsonSchema)]
/// #[serde(rename_all = "lowercase")]
/// enum Size { Small, Large }
///
/// #[derive(serde::Deserialize, JsonSchema)]
/// struct Order {
///     /// How many to send.
///     count: u8,
///     size: Size,
///     /// Gift wrapped?
///     gift: Option<bool>,
/// }
///
/// let form = elicitation_form::<Order>().unwrap();
/// assert_eq!(form.required, Some(vec!["count".to_owned(), "size".to_owned()]));
/// assert!(matches!(form.properties["size"], PrimitiveSchemaDefinition::UntitledSingleSelect(_)));
/// assert!(matches!(form.properties["gift"], PrimitiveSchemaDefinition::Boolean(_)));
/// # }
/// ```
///
/// # Errors
/// [`Error::Unsupported`] naming the first field a form cannot carry (and why), or when `T` is
/// not a struct of named fields.
pub fn elicitation_form<T: JsonSchema + ?Sized>() -> Result<ElicitRequestedSchema, Error> {
    let name = std::any::type_name::<T>();
    let refuse =
        |why: String| Error::Unsupported(format!("an elicitation form of `{name}`: {why}"));
    let Value::Object(mut top) = T::schema() else {
        return Err(refuse("its schema is not an object".into()));
    };
    if top.get("type").and_then(Value::as_str) != Some("object") {
        return Err(refuse("it is not a struct of named fields".into()));
    }
    if let Some(k) = ["oneOf", "anyOf", "allOf"]
        .iter()
        .find(|k| top.contains_key(**k))
    {
        return Err(refuse(format!(
            "its fields are alternatives (`{k}`), a form is one set of fields"
        )));
    }
    let mut properties = BTreeMap::new();
    if let Some(Value::Object(props)) = top.remove("properties") {
        for (field, schema) in props {
            let def = property(schema).map_err(|why| refuse(format!("field `{field}` {why}")))?;
            properties.insert(field, def);
        }
    }
    let required: Vec<String> = match top.remove("required") {
        Some(Value::Array(r)) => r
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    let mut form = ElicitRequestedSchema::new(properties);
    form.required = (!required.is_empty()).then_some(required);
    Ok(form)
}

/// One field's schema as a form property; `Err` says why it cannot be one.
fn property(schema: Value) -> Result<PrimitiveSchemaDefinition, String> {
    let Value::Object(mut m) = not_null(schema) else {
        return Err("has no schema a form can show".into());
    };
    let ty = match m.remove("type") {
        Some(Value::String(t)) => t,
        _ => return Err("takes any value (a form field has one type)".into()),
    };
    let description = take_str(&mut m, "description");
    let title = take_str(&mut m, "title");
    let def = match ty.as_str() {
        "string" => match m.remove("enum").or_else(|| m.remove("const").map(one)) {
            Some(choices) => {
                PrimitiveSchemaDefinition::UntitledSingleSelect(UntitledSingleSelectEnumSchema {
                    type_: ty,
                    title,
                    description,
                    enum_: strings(choices)?,
                    default: None,
                    extra: Map::new(),
                })
            }
            None => PrimitiveSchemaDefinition::String(StringSchema {
                title,
                description,
                min_length: m.get("minLength").and_then(Value::as_u64),
                max_length: m.get("maxLength").and_then(Value::as_u64),
                format: take_str(&mut m, "format"),
                ..StringSchema::default()
            }),
        },
        "integer" | "number" => PrimitiveSchemaDefinition::Number(NumberSchema {
            type_: ty,
            title,
            description,
            minimum: number(&m, "minimum"),
            maximum: number(&m, "maximum"),
            default: None,
            extra: Map::new(),
        }),
        "boolean" => PrimitiveSchemaDefinition::Boolean(BooleanSchema {
            type_: ty,
            title,
            description,
            default: None,
            extra: Map::new(),
        }),
        "array" => {
            let choices = match m.remove("items").map(not_null) {
                Some(Value::Object(mut items))
                    if items.get("type").and_then(Value::as_str) == Some("string") =>
                {
                    items
                        .remove("enum")
                        .or_else(|| items.remove("const").map(one))
                }
                _ => None,
            };
            let Some(choices) = choices else {
                return Err("is a list of something other than string choices".into());
            };
            PrimitiveSchemaDefinition::UntitledMultiSelect(UntitledMultiSelectEnumSchema {
                type_: ty,
                title,
                description,
                min_items: m.get("minItems").and_then(Value::as_u64),
                max_items: m.get("maxItems").and_then(Value::as_u64),
                items: UntitledEnumItems {
                    type_: "string".into(),
                    enum_: strings(choices)?,
                    extra: Map::new(),
                },
                default: None,
                extra: Map::new(),
            })
        }
        other => return Err(format!("is of type `{other}`, which a form cannot show")),
    };
    Ok(def)
}

/// An `Option`'s schema without its `null`: a form field is left empty instead (and serde's
/// `Option` fields are never required).
fn not_null(schema: Value) -> Value {
    let Value::Object(mut m) = schema else {
        return schema;
    };
    if let Some(Value::Array(types)) = m.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let t = types.remove(0);
            m.insert("type".into(), t);
        }
    }
    if let Some(Value::Array(arms)) = m.get("anyOf") {
        let kept: Vec<&Value> = arms
            .iter()
            .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if kept.len() == 1 && arms.len() == 2 {
            let mut inner = kept[0].clone();
            // The field's description sits beside the `anyOf`.
            if let (Value::Object(i), Some(d)) = (&mut inner, m.get("description")) {
                i.insert("description".into(), d.clone());
            }
            return inner;
        }
    }
    Value::Object(m)
}

fn one(v: Value) -> Value {
    Value::Array(vec![v])
}

fn strings(choices: Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = choices else {
        return Err("has choices that are not a list".into());
    };
    items
        .into_iter()
        .map(|v| match v {
            Value::String(s) => Ok(s),
            other => Err(format!("has a choice that is not a string ({other})")),
        })
        .collect()
}

fn take_str(m: &mut Map<String, Value>, key: &str) -> Option<String> {
    match m.remove(key) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

fn number(m: &Map<String, Value>, key: &str) -> Option<Number> {
    match m.get(key) {
        Some(Value::Number(n)) => Some(n.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Raw;
    impl JsonSchema for Raw {
        fn schema() -> Value {
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Who", "maxLength": 40},
                    "email": {"type": ["string", "null"], "format": "email"},
                    "age": {"type": "integer", "minimum": 0, "maximum": 255},
                    "ok": {"type": "boolean"},
                    "size": {"type": "string", "enum": ["s", "l"]},
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                    "note": {"anyOf": [{"type": "string", "enum": ["x"]}, {"type": "null"}],
                             "description": "Maybe"}
                },
                "required": ["name", "age"],
                "additionalProperties": false
            })
        }
    }

    #[test]
    fn every_kind_of_form_field_comes_through() {
        let form = elicitation_form::<Raw>().unwrap();
        let v = serde_json::to_value(&form).unwrap();
        assert_eq!(
            v,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Who", "maxLength": 40},
                    "email": {"type": "string", "format": "email"},
                    "age": {"type": "integer", "minimum": 0, "maximum": 255},
                    "ok": {"type": "boolean"},
                    "size": {"type": "string", "enum": ["s", "l"]},
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                    "note": {"type": "string", "enum": ["x"], "description": "Maybe"}
                },
                "required": ["name", "age"]
            })
        );
        // What goes out reads back as the same form (the client's view of it).
        let back: ElicitRequestedSchema = serde_json::from_value(v).unwrap();
        assert_eq!(back, form);
    }

    struct Nested;
    impl JsonSchema for Nested {
        fn schema() -> Value {
            json!({"type": "object", "properties": {
                "ok": {"type": "boolean"},
                "address": {"type": "object", "properties": {}}
            }})
        }
    }

    #[test]
    fn a_field_a_form_cannot_show_is_named() {
        let Err(Error::Unsupported(why)) = elicitation_form::<Nested>() else {
            panic!("a nested object is not a form field");
        };
        assert!(why.contains("field `address` is of type `object`"), "{why}");
        let Err(Error::Unsupported(why)) = elicitation_form::<Vec<String>>() else {
            panic!("a list is not a form");
        };
        assert!(why.contains("not a struct of named fields"), "{why}");
        let Err(Error::Unsupported(why)) = elicitation_form::<Value>() else {
            panic!("any value is not a form");
        };
        assert!(why.contains("not a struct"), "{why}");
    }
}
