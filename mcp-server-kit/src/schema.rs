//! A small builder for the JSON Schemas that describe tool inputs and outputs.
//!
//! Tools must publish an `inputSchema` (an object schema). Writing it by hand as `json!` is
//! easy to get subtly wrong; this builder covers the common shapes and still lets any keyword
//! through with [`Schema::keyword`]. For full control pass a `serde_json::Value` instead.
//!
//! ```
//! use mcp_server_kit::schema::Schema;
//!
//! let s = Schema::object()
//!     .property("message", Schema::string().description("What to echo"))
//!     .optional("times", Schema::integer().minimum(1.0))
//!     .into_value();
//! assert_eq!(s["required"], serde_json::json!(["message"]));
//! ```
//!
//! Rather than writing the schema beside the type, derive it from the type:
//! [`JsonSchema`] (`#[derive(JsonSchema)]`, feature `derive`) reads the serde attributes, and
//! [`Tool::typed`](crate::Tool::typed) publishes the result. A schema set with
//! [`Tool::input_schema`](crate::Tool::input_schema) still overrides the derived one.

use serde_json::{Map, Value, json};

mod form;
mod json_schema;

pub use form::elicitation_form;
#[doc(hidden)]
pub use json_schema::__private;
pub use json_schema::JsonSchema;
/// Derives [`JsonSchema`](trait@JsonSchema) from a struct or enum and its serde attributes
/// (see the `mcp-derive` crate for what it reads).
#[cfg(feature = "derive")]
pub use mcp_derive::JsonSchema;

/// A JSON Schema under construction.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema(Map<String, Value>);

impl Schema {
    fn typed(t: &str) -> Schema {
        let mut m = Map::new();
        m.insert("type".into(), Value::from(t));
        Schema(m)
    }

    /// `{"type": "object"}`; add members with [`Schema::property`] and [`Schema::optional`].
    pub fn object() -> Schema {
        let mut s = Schema::typed("object");
        s.0.insert("properties".into(), Value::Object(Map::new()));
        s
    }

    /// `{"type": "string"}`.
    pub fn string() -> Schema {
        Schema::typed("string")
    }

    /// `{"type": "integer"}`.
    pub fn integer() -> Schema {
        Schema::typed("integer")
    }

    /// `{"type": "number"}`.
    pub fn number() -> Schema {
        Schema::typed("number")
    }

    /// `{"type": "boolean"}`.
    pub fn boolean() -> Schema {
        Schema::typed("boolean")
    }

    /// `{"type": "array", "items": items}`.
    pub fn array(items: Schema) -> Schema {
        Schema::typed("array").keyword("items", items.into_value())
    }

    /// A string restricted to `values`.
    pub fn string_enum<I: IntoIterator<Item = S>, S: Into<String>>(values: I) -> Schema {
        let v: Vec<Value> = values.into_iter().map(|s| Value::from(s.into())).collect();
        Schema::string().keyword("enum", Value::Array(v))
    }

    /// Adds a required member to an object schema.
    pub fn property(self, name: &str, schema: Schema) -> Schema {
        let mut s = self.optional(name, schema);
        let req = s.0.entry("required").or_insert_with(|| json!([]));
        if let Value::Array(a) = req {
            a.push(Value::from(name));
        }
        s
    }

    /// Adds an optional member to an object schema.
    pub fn optional(mut self, name: &str, schema: Schema) -> Schema {
        let props = self
            .0
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(p) = props {
            p.insert(name.to_owned(), schema.into_value());
        }
        self
    }

    /// Sets `description`.
    pub fn description(self, text: &str) -> Schema {
        self.keyword("description", Value::from(text))
    }

    /// Sets `title`.
    pub fn title(self, text: &str) -> Schema {
        self.keyword("title", Value::from(text))
    }

    /// Sets `default`.
    pub fn default_value(self, v: Value) -> Schema {
        self.keyword("default", v)
    }

    /// Sets `minimum`.
    pub fn minimum(self, v: f64) -> Schema {
        self.keyword("minimum", json!(v))
    }

    /// Sets `maximum`.
    pub fn maximum(self, v: f64) -> Schema {
        self.keyword("maximum", json!(v))
    }

    /// Forbids members not listed (`additionalProperties: false`).
    pub fn closed(self) -> Schema {
        self.keyword("additionalProperties", Value::Bool(false))
    }

    /// Sets any other keyword.
    pub fn keyword(mut self, key: &str, value: Value) -> Schema {
        self.0.insert(key.to_owned(), value);
        self
    }

    /// The schema as JSON.
    pub fn into_value(self) -> Value {
        Value::Object(self.0)
    }
}

impl From<Schema> for Value {
    fn from(s: Schema) -> Value {
        s.into_value()
    }
}
