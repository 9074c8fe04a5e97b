//! The [`JsonSchema`] trait, its implementations for the standard types, and the helpers the
//! derive's generated code calls.
//!
//! The derive writes one helper call per field or variant and the rules live here, as ordinary
//! code, so that they are tested once and the macro stays small.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use serde_json::{Map, Value, json};

/// A type whose JSON form a JSON Schema (2020-12) describes: tool arguments
/// ([`Tool::typed`](crate::Tool::typed)) and structured results
/// ([`Structured`](crate::Structured)) publish it as `inputSchema` and `outputSchema`.
///
/// Derive it with `#[derive(JsonSchema)]` (feature `derive`, on by default) next to serde's
/// `Deserialize`/`Serialize`: the derive reads the same serde attributes, so the schema says
/// what serde accepts and writes. Or implement it by hand, for a type whose `Deserialize` is
/// hand-written.
///
/// ```
/// # #[cfg(feature = "derive")] {
/// use mcp_server_kit::schema::JsonSchema;
///
/// /// A note to keep.
/// #[derive(serde::Deserialize, JsonSchema)]
/// struct AddNote {
///     /// The note's text.
///     text: String,
///     /// Tags to file it under.
///     #[serde(default)]
///     tags: Vec<String>,
/// }
///
/// let s = AddNote::schema();
/// assert_eq!(s["required"], serde_json::json!(["text"]));
/// assert_eq!(s["properties"]["text"]["description"], "The note's text.");
/// # }
/// ```
pub trait JsonSchema {
    /// The schema, inlined: nested types are written in place rather than under `$defs`, so
    /// that clients which do not follow `$ref` (several do not) still see every field.
    fn schema() -> Value;

    /// Whether a struct field of this type may be left out of the input: serde reads a
    /// missing `Option` member as `None`, so such a field is not `required`. `false` for
    /// everything else.
    fn may_be_absent() -> bool {
        false
    }
}

/// Whether a schema is `{}` (any value, so null already), perhaps with a description.
fn accepts_anything(m: &Map<String, Value>) -> bool {
    m.is_empty() || (m.len() == 1 && m.contains_key("description"))
}

/// The schema of `Option<T>`: `T`'s, with `null` allowed too.
fn nullable(schema: Value) -> Value {
    if let Value::Object(mut m) = schema {
        if accepts_anything(&m) {
            return Value::Object(m);
        }
        // A `type` can take "null" beside it, unless `enum`/`const` would then refuse null.
        if !m.contains_key("enum") && !m.contains_key("const") {
            match m.get_mut("type") {
                Some(Value::String(t)) => {
                    let t = std::mem::take(t);
                    m.insert("type".into(), json!([t, "null"]));
                    return Value::Object(m);
                }
                Some(Value::Array(a)) => {
                    if !a.iter().any(|t| t == "null") {
                        a.push(Value::from("null"));
                    }
                    return Value::Object(m);
                }
                _ => {}
            }
        }
        return json!({"anyOf": [Value::Object(m), {"type": "null"}]});
    }
    schema
}

macro_rules! simple {
    ($($t:ty => $s:expr),* $(,)?) => {
        $(impl JsonSchema for $t {
            fn schema() -> Value {
                $s
            }
        })*
    };
}

simple! {
    bool => json!({"type": "boolean"}),
    f32 => json!({"type": "number"}),
    f64 => json!({"type": "number"}),
    String => json!({"type": "string"}),
    str => json!({"type": "string"}),
    char => json!({"type": "string", "minLength": 1, "maxLength": 1}),
    PathBuf => json!({"type": "string"}),
    Path => json!({"type": "string"}),
    () => json!({"type": "null"}),
    Value => json!({}),
    Map<String, Value> => json!({"type": "object"}),
}

// The bounds are part of the schema: the kit then refuses `300` for a `u8` with a message
// naming the field, before serde would fail on it with a vaguer one.
macro_rules! bounded {
    ($($t:ty),*) => {
        $(impl JsonSchema for $t {
            fn schema() -> Value {
                json!({"type": "integer", "minimum": <$t>::MIN, "maximum": <$t>::MAX})
            }
        })*
    };
}
bounded!(i8, i16, i32, u8, u16, u32);

// 64 and 128 bits: no `maximum`, as JSON numbers that large lose precision in many clients;
// unsigned ones still say they cannot be negative.
macro_rules! unsigned {
    ($($t:ty),*) => {
        $(impl JsonSchema for $t {
            fn schema() -> Value {
                json!({"type": "integer", "minimum": 0})
            }
        })*
    };
}
unsigned!(u64, u128, usize);

macro_rules! signed {
    ($($t:ty),*) => {
        $(impl JsonSchema for $t {
            fn schema() -> Value {
                json!({"type": "integer"})
            }
        })*
    };
}
signed!(i64, i128, isize);

impl<T: JsonSchema> JsonSchema for Option<T> {
    fn schema() -> Value {
        nullable(T::schema())
    }
    fn may_be_absent() -> bool {
        true
    }
}

macro_rules! wrapper {
    ($($w:ident),*) => {
        $(impl<T: JsonSchema + ?Sized> JsonSchema for $w<T> {
            fn schema() -> Value {
                T::schema()
            }
            fn may_be_absent() -> bool {
                T::may_be_absent()
            }
        })*
    };
}
wrapper!(Box, Arc, Rc);

impl<T: JsonSchema + ?Sized> JsonSchema for &T {
    fn schema() -> Value {
        T::schema()
    }
}

impl<T: JsonSchema + ToOwned + ?Sized> JsonSchema for Cow<'_, T> {
    fn schema() -> Value {
        T::schema()
    }
}

fn array(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

fn unique_array(items: Value) -> Value {
    json!({"type": "array", "items": items, "uniqueItems": true})
}

impl<T: JsonSchema> JsonSchema for Vec<T> {
    fn schema() -> Value {
        array(T::schema())
    }
}

impl<T: JsonSchema> JsonSchema for [T] {
    fn schema() -> Value {
        array(T::schema())
    }
}

impl<T: JsonSchema> JsonSchema for VecDeque<T> {
    fn schema() -> Value {
        array(T::schema())
    }
}

impl<T: JsonSchema, const N: usize> JsonSchema for [T; N] {
    fn schema() -> Value {
        json!({"type": "array", "items": T::schema(), "minItems": N, "maxItems": N})
    }
}

impl<T: JsonSchema, S> JsonSchema for HashSet<T, S> {
    fn schema() -> Value {
        unique_array(T::schema())
    }
}

impl<T: JsonSchema> JsonSchema for BTreeSet<T> {
    fn schema() -> Value {
        unique_array(T::schema())
    }
}

// JSON object keys are strings whatever the key type, so only the value type shows.
impl<K, V: JsonSchema, S> JsonSchema for HashMap<K, V, S> {
    fn schema() -> Value {
        json!({"type": "object", "additionalProperties": V::schema()})
    }
}

impl<K, V: JsonSchema> JsonSchema for BTreeMap<K, V> {
    fn schema() -> Value {
        json!({"type": "object", "additionalProperties": V::schema()})
    }
}

macro_rules! tuples {
    ($(($($t:ident),+)),*) => {
        $(impl<$($t: JsonSchema),+> JsonSchema for ($($t,)+) {
            fn schema() -> Value {
                __private::tuple(vec![$($t::schema()),+])
            }
        })*
    };
}
tuples!((A), (A, B), (A, B, C), (A, B, C, D), (A, B, C, D, E));

/// What the derive's generated code calls. Not a stable API: only the derive of the same
/// version should use it.
#[doc(hidden)]
pub mod __private {
    use super::*;

    pub use serde_json::Value;

    thread_local! {
        /// The derived types whose schema is being built on this thread, outermost first.
        static BUILDING: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
    }

    /// Pops the type off [`BUILDING`] even if building its schema panicked.
    struct Building;

    impl Drop for Building {
        fn drop(&mut self) {
            BUILDING.with(|b| b.borrow_mut().pop());
        }
    }

    /// Builds `T`'s schema with `f`, unless `T` is already being built further out: a
    /// recursive type (`struct Tree { children: Vec<Tree> }`) would otherwise inline itself
    /// forever. The inner occurrence becomes `{}` (any value; serde still checks it).
    pub fn guard<T: ?Sized>(f: impl FnOnce() -> Value) -> Value {
        let name = std::any::type_name::<T>();
        let recursive = BUILDING.with(|b| {
            let mut b = b.borrow_mut();
            if b.contains(&name) {
                true
            } else {
                b.push(name);
                false
            }
        });
        if recursive {
            return json!({});
        }
        let _pop = Building;
        f()
    }

    /// Sets `description` when there is a doc comment.
    pub fn describe(mut schema: Value, doc: Option<&str>) -> Value {
        if let (Some(d), Value::Object(m)) = (doc, &mut schema) {
            m.insert("description".into(), Value::from(d));
        }
        schema
    }

    /// `{"type": "null"}`: a unit struct, an untagged unit variant.
    pub fn null() -> Value {
        json!({"type": "null"})
    }

    /// One string, as a tag's value or a unit variant.
    pub fn constant(value: &str) -> Value {
        json!({"type": "string", "const": value})
    }

    /// A unit-only enum.
    pub fn string_enum(values: &[&str]) -> Value {
        json!({"type": "string", "enum": values})
    }

    /// A tuple (struct or variant): an array of exactly these items.
    pub fn tuple(items: Vec<Value>) -> Value {
        let n = items.len();
        json!({"type": "array", "prefixItems": items, "minItems": n, "maxItems": n})
    }

    /// Variants of a tagged enum: exactly one fits, since their tags differ.
    pub fn one_of(arms: Vec<Value>) -> Value {
        json!({"oneOf": arms})
    }

    /// Variants of an untagged enum. `anyOf`, not `oneOf`: serde takes the first variant that
    /// fits, so a value may fit two (`{"x": 1}` fits both `A { x }` and `B { x, y: Option }`),
    /// and `oneOf` would make the kit refuse arguments serde accepts.
    pub fn any_of(arms: Vec<Value>) -> Value {
        json!({"anyOf": arms})
    }

    /// An externally tagged variant with data: `{"Name": body}`.
    pub fn external(name: &str, body: Value, doc: Option<&str>) -> Value {
        describe(
            json!({
                "type": "object",
                "properties": {name: body},
                "required": [name],
                "additionalProperties": false
            }),
            doc,
        )
    }

    /// An internally tagged newtype variant: the inner struct's members plus the tag.
    pub fn internal_newtype(tag: &str, name: &str, body: Value, doc: Option<&str>) -> Value {
        let mergeable = body.get("properties").is_some_and(Value::is_object)
            && ["oneOf", "anyOf", "allOf"]
                .iter()
                .all(|k| body.get(k).is_none());
        if let (true, Value::Object(mut m)) = (mergeable, body.clone()) {
            if let Some(Value::Object(p)) = m.get_mut("properties") {
                p.insert(tag.into(), constant(name));
            }
            let req = m.entry("required").or_insert_with(|| json!([]));
            if let Value::Array(r) = req {
                r.insert(0, Value::from(tag));
            }
            return describe(Value::Object(m), doc);
        }
        let tag_only = json!({
            "type": "object",
            "properties": {tag: constant(name)},
            "required": [tag]
        });
        describe(json!({"allOf": [tag_only, body]}), doc)
    }

    /// An adjacently tagged variant: `{tag: name, content: body}` (no content for a unit one).
    pub fn adjacent(
        tag: &str,
        content: &str,
        name: &str,
        body: Option<Value>,
        doc: Option<&str>,
    ) -> Value {
        let mut o = Object::new();
        o.field(tag, constant(name), None, true);
        if let Some(b) = body {
            o.field(content, b, None, true);
        }
        o.finish(doc, false)
    }

    /// An object schema under construction: a struct's, or a struct variant's.
    #[derive(Default)]
    pub struct Object {
        properties: Map<String, Value>,
        required: Vec<Value>,
        all_of: Vec<Value>,
        additional: Option<Value>,
    }

    impl Object {
        /// No members yet.
        pub fn new() -> Object {
            Object::default()
        }

        /// A member; its doc comment, if any, describes it (over the type's own).
        pub fn field(&mut self, name: &str, schema: Value, doc: Option<&str>, required: bool) {
            self.properties.insert(name.into(), describe(schema, doc));
            if required {
                self.required.push(Value::from(name));
            }
        }

        /// A `#[serde(flatten)]` member: its members become this object's (not required if
        /// the member itself may be absent); a flattened map lets other members through with
        /// its value schema; a flattened enum must fit as well (`allOf`).
        pub fn flatten(&mut self, schema: Value, may_be_absent: bool) {
            let Value::Object(mut m) = schema else {
                return;
            };
            if let Some(Value::Object(p)) = m.remove("properties") {
                self.properties.extend(p);
                if !may_be_absent {
                    if let Some(Value::Array(r)) = m.remove("required") {
                        self.required.extend(r);
                    }
                }
            }
            if let Some(extra) = m.remove("additionalProperties") {
                if extra.is_object() {
                    self.additional = Some(extra);
                }
            }
            for k in ["oneOf", "anyOf"] {
                if let Some(Value::Array(mut arms)) = m.remove(k) {
                    if may_be_absent {
                        continue;
                    }
                    // Each arm is checked against the whole object, which holds the outer
                    // members too: an arm may not forbid members it does not list.
                    for arm in &mut arms {
                        if let Value::Object(a) = arm {
                            if a.get("additionalProperties") == Some(&Value::Bool(false)) {
                                a.remove("additionalProperties");
                            }
                        }
                    }
                    self.all_of.push(json!({k: arms}));
                }
            }
        }

        /// The object schema; `deny` (`deny_unknown_fields`) forbids unlisted members.
        pub fn finish(self, doc: Option<&str>, deny: bool) -> Value {
            let mut m = Map::new();
            m.insert("type".into(), Value::from("object"));
            m.insert("properties".into(), Value::Object(self.properties));
            if !self.required.is_empty() {
                m.insert("required".into(), Value::Array(self.required));
            }
            if deny {
                m.insert("additionalProperties".into(), Value::Bool(false));
            } else if let Some(extra) = self.additional {
                m.insert("additionalProperties".into(), extra);
            }
            match self.all_of.len() {
                0 => {}
                1 => {
                    if let Some(Value::Object(one)) = self.all_of.into_iter().next() {
                        m.extend(one);
                    }
                }
                _ => {
                    m.insert("allOf".into(), Value::Array(self.all_of));
                }
            }
            describe(Value::Object(m), doc)
        }
    }
}
