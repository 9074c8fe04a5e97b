//! A small JSON Schema validator, for checking a tool's arguments against its `inputSchema`
//! before the handler runs.
//!
//! Tool input schemas are small and use a small part of JSON Schema; a full validator (with a
//! regex engine, remote references and the whole vocabulary) would double a stdio server's
//! dependency tree for little gain. This one covers what tool schemas use:
//!
//! - `type` (one name or an array of names; `integer` is a number with no fractional part, so
//!   `1.0` is one), `enum`, `const` (numbers compare by value);
//! - `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (numbers, and the draft-04
//!   booleans), `multipleOf`;
//! - `minLength`, `maxLength` (counted in characters, as JSON Schema says, not bytes);
//! - `properties`, `required`, `additionalProperties` (a boolean or a schema),
//!   `minProperties`, `maxProperties`, `propertyNames`, `dependentRequired`;
//! - `items`, `prefixItems` (and the draft-07 array form of `items` with `additionalItems`),
//!   `minItems`, `maxItems`, `uniqueItems`, `contains`, `minContains`, `maxContains`;
//! - `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`;
//! - `$ref` to a JSON pointer in the same schema (`#`, `#/$defs/...`, `#/definitions/...`)
//!   or to an `$anchor` in `$defs`/`definitions`.
//!
//! Not checked, on purpose: `pattern` and `patternProperties` (no regex engine here; when a
//! schema has `patternProperties`, `additionalProperties` is not checked either, since which
//! properties are "additional" depends on the patterns), `format` (an annotation by default in
//! 2020-12), `unevaluated*`, `$dynamicRef`, and references outside the schema. Every keyword
//! this module does not know is ignored, and so is a `$ref` it cannot resolve, so a schema
//! never rejects more than it says.
//!
//! The work is bounded, so that a hostile argument cannot make a call slow: at most
//! [`MAX_STEPS`] schema-against-value checks and [`MAX_DEPTH`] nested ones. A value that needs
//! more is refused with a violation that says so. A `$ref` cycle that makes no progress into
//! the value (`{"$ref": "#"}` at the root) is cut where it repeats.
//!
//! ```
//! use mcp_server_kit::validate::validate;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"name": {"type": "string"}},
//!     "required": ["name"],
//!     "additionalProperties": false
//! });
//! assert!(validate(&schema, &json!({"name": "Ada"})).is_ok());
//! let err = validate(&schema, &json!({"name": 5, "bogus": true})).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "bogus: property not allowed; name: expected string, got number"
//! );
//! ```

use std::fmt;

use serde_json::{Map, Value};

mod checked;

/// How many schema-against-value checks one validation may make. A check costs well under a
/// microsecond, so this bounds a call's validation to a few hundred milliseconds at worst,
/// while a legitimate argument of a hundred thousand array items still passes.
pub const MAX_STEPS: usize = 1_000_000;

/// How deeply checks may nest (schema nesting, references and value nesting together). Far
/// above what tool arguments need, far below what would exhaust a worker thread's stack.
pub const MAX_DEPTH: usize = 256;

/// How many violations are reported at most: enough for a model to fix several mistakes at
/// once, few enough to keep the message readable.
const MAX_REPORTED: usize = 10;

/// How many `enum` values a message lists before it says "...".
const MAX_LISTED: usize = 8;

/// One way a value fails its schema: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where in the value, as `name`, `address.city` or `tags[2]` (`$` for the value itself;
    /// a key that is not a plain word is quoted, as `["a b"]`).
    pub path: String,
    /// What is wrong, as `expected string, got number`.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Why a value does not match its schema: one or more [`Violation`]s (at most ten are kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The violations, in the order they were found.
    pub violations: Vec<Violation>,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.violations.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Invalid {}

/// Checks `value` against `schema` (see the [module documentation](self) for what is
/// checked). A schema that is neither an object nor a boolean accepts everything.
pub fn validate(schema: &Value, value: &Value) -> Result<(), Invalid> {
    match schema {
        Value::Object(root) => validate_object(root, value),
        Value::Bool(false) => Err(Invalid {
            violations: vec![Violation {
                path: "$".into(),
                message: "no value is allowed".into(),
            }],
        }),
        _ => Ok(()),
    }
}

/// [`validate`] for a schema held as a map (as a tool definition holds its `inputSchema`).
pub(crate) fn validate_object(root: &Map<String, Value>, value: &Value) -> Result<(), Invalid> {
    let mut v = Validator {
        root,
        steps: 0,
        exhausted: false,
        refs: Vec::new(),
        path: Path::default(),
    };
    let mut errs = Errs::new(MAX_REPORTED);
    v.object(root, value, 0, &mut errs);
    if v.exhausted {
        return Err(Invalid {
            violations: vec![Violation {
                path: "$".into(),
                message: format!(
                    "too large or too deeply nested to check (more than {MAX_STEPS} checks or \
                     {MAX_DEPTH} levels)"
                ),
            }],
        });
    }
    if errs.list.is_empty() {
        Ok(())
    } else {
        Err(Invalid {
            violations: errs.list,
        })
    }
}

/// Keywords that only annotate: the validator ignores them, and so may a [`Plan`].
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "$schema",
    "$comment",
    "examples",
    "default",
    "format",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// A schema of the shape most tools have (an object of named members, each of one JSON type,
/// some required, others allowed or not), read once into a form that checks a value with no
/// keyword look-ups. It only ever says "valid" or "ask the validator": a value it does not
/// accept is checked again by [`validate_object`], which finds and words the violations, so
/// the two can never disagree on a valid value's fate nor on a message.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Each member's name and its `type` (`None`: any value).
    members: Vec<(String, Option<String>)>,
    required: Vec<String>,
    /// `additionalProperties: false`.
    closed: bool,
}

impl Plan {
    /// The plan of `root`, or `None` when the schema uses anything beyond that shape.
    pub(crate) fn of(root: &Map<String, Value>) -> Option<Plan> {
        let mut plan = Plan {
            members: Vec::new(),
            required: Vec::new(),
            closed: false,
        };
        for (key, v) in root {
            match (key.as_str(), v) {
                ("type", Value::String(t)) if t == "object" => {}
                ("properties", Value::Object(props)) => {
                    for (name, schema) in props {
                        plan.members.push((name.clone(), member_type(schema)?));
                    }
                }
                ("required", Value::Array(names)) => {
                    for n in names {
                        plan.required.push(n.as_str()?.to_owned());
                    }
                }
                ("additionalProperties", Value::Bool(allowed)) => plan.closed = !allowed,
                (k, _) if ANNOTATIONS.contains(&k) => {}
                _ => return None,
            }
        }
        Some(plan)
    }

    /// Whether `value` surely matches the schema; false means "ask the validator".
    pub(crate) fn accepts(&self, value: &Value) -> bool {
        let Value::Object(m) = value else {
            return false;
        };
        // The validator's budget counts a check per member: past it, it must be the one to say.
        if m.len() >= MAX_STEPS {
            return false;
        }
        if !self.required.iter().all(|r| m.contains_key(r)) {
            return false;
        }
        m.iter()
            .all(|(k, v)| match self.members.iter().find(|(n, _)| n == k) {
                Some((_, Some(t))) => is_type(t, v),
                Some((_, None)) => true,
                None => !self.closed,
            })
    }

    /// `T` typed from arguments still in their JSON text (an object), if this plan surely
    /// accepts them: the check made while the type reads, in one pass (see `checked`).
    pub(crate) fn typed<T: serde::de::DeserializeOwned>(&self, json: &str) -> Option<T> {
        checked::typed(self, json)
    }
}

/// A member schema's one `type` (`Some(None)`: any value), or `None` when the member's schema
/// has more to check than that.
fn member_type(schema: &Value) -> Option<Option<String>> {
    let Value::Object(m) = schema else {
        return match schema {
            Value::Bool(true) => Some(None),
            _ => None,
        };
    };
    let mut ty = None;
    for (key, v) in m {
        match (key.as_str(), v) {
            ("type", Value::String(t)) => ty = Some(t.clone()),
            (k, _) if ANNOTATIONS.contains(&k) => {}
            _ => return None,
        }
    }
    Some(ty)
}

/// Violations gathered by one check, up to a cap (a branch of `anyOf` only needs to know
/// whether it fails, so it stops at the first).
struct Errs {
    list: Vec<Violation>,
    cap: usize,
}

impl Errs {
    fn new(cap: usize) -> Errs {
        Errs {
            list: Vec::new(),
            cap,
        }
    }

    fn full(&self) -> bool {
        self.list.len() >= self.cap
    }

    fn push(&mut self, v: Violation) {
        if !self.full() {
            self.list.push(v);
        }
    }
}

/// The keywords of one schema object this module checks, found in one pass over its members.
/// A schema names a handful of the ~35 keywords below; looking each of them up in the map
/// (a tree search per keyword, for every value checked) was most of the cost of validating a
/// small tool call, while one walk over the few members that are there costs a string match
/// each.
#[derive(Default)]
struct Keywords<'s> {
    r#ref: Option<&'s Value>,
    ty: Option<&'s Value>,
    enum_: Option<&'s Value>,
    const_: Option<&'s Value>,
    minimum: Option<&'s Value>,
    maximum: Option<&'s Value>,
    exclusive_minimum: Option<&'s Value>,
    exclusive_maximum: Option<&'s Value>,
    multiple_of: Option<&'s Value>,
    min_length: Option<&'s Value>,
    max_length: Option<&'s Value>,
    min_items: Option<&'s Value>,
    max_items: Option<&'s Value>,
    prefix_items: Option<&'s Value>,
    items: Option<&'s Value>,
    additional_items: Option<&'s Value>,
    unique_items: Option<&'s Value>,
    contains: Option<&'s Value>,
    min_contains: Option<&'s Value>,
    max_contains: Option<&'s Value>,
    required: Option<&'s Value>,
    min_properties: Option<&'s Value>,
    max_properties: Option<&'s Value>,
    dependent_required: Option<&'s Value>,
    properties: Option<&'s Value>,
    additional_properties: Option<&'s Value>,
    pattern_properties: Option<&'s Value>,
    property_names: Option<&'s Value>,
    all_of: Option<&'s Value>,
    any_of: Option<&'s Value>,
    one_of: Option<&'s Value>,
    not: Option<&'s Value>,
    if_: Option<&'s Value>,
    then: Option<&'s Value>,
    else_: Option<&'s Value>,
}

impl<'s> Keywords<'s> {
    fn of(s: &'s Map<String, Value>) -> Keywords<'s> {
        let mut k = Keywords::default();
        for (name, v) in s {
            let slot = match name.as_str() {
                "$ref" => &mut k.r#ref,
                "type" => &mut k.ty,
                "enum" => &mut k.enum_,
                "const" => &mut k.const_,
                "minimum" => &mut k.minimum,
                "maximum" => &mut k.maximum,
                "exclusiveMinimum" => &mut k.exclusive_minimum,
                "exclusiveMaximum" => &mut k.exclusive_maximum,
                "multipleOf" => &mut k.multiple_of,
                "minLength" => &mut k.min_length,
                "maxLength" => &mut k.max_length,
                "minItems" => &mut k.min_items,
                "maxItems" => &mut k.max_items,
                "prefixItems" => &mut k.prefix_items,
                "items" => &mut k.items,
                "additionalItems" => &mut k.additional_items,
                "uniqueItems" => &mut k.unique_items,
                "contains" => &mut k.contains,
                "minContains" => &mut k.min_contains,
                "maxContains" => &mut k.max_contains,
                "required" => &mut k.required,
                "minProperties" => &mut k.min_properties,
                "maxProperties" => &mut k.max_properties,
                "dependentRequired" => &mut k.dependent_required,
                "properties" => &mut k.properties,
                "additionalProperties" => &mut k.additional_properties,
                "patternProperties" => &mut k.pattern_properties,
                "propertyNames" => &mut k.property_names,
                "allOf" => &mut k.all_of,
                "anyOf" => &mut k.any_of,
                "oneOf" => &mut k.one_of,
                "not" => &mut k.not,
                "if" => &mut k.if_,
                "then" => &mut k.then,
                "else" => &mut k.else_,
                _ => continue,
            };
            *slot = Some(v);
        }
        k
    }
}

/// One step of the path from the value's root to where a check is.
#[derive(Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// How many steps of the path are kept without allocating: tool arguments are rarely nested
/// deeper, and a validation that allocates nothing costs a small call nothing on the heap.
const INLINE_PATH: usize = 8;

/// The path from the value's root to where a check is: a stack, on the stack up to
/// [`INLINE_PATH`] steps, on the heap beyond.
struct Path<'a> {
    inline: [Seg<'a>; INLINE_PATH],
    len: usize,
    deeper: Vec<Seg<'a>>,
}

impl Default for Path<'_> {
    fn default() -> Self {
        Path {
            inline: [Seg::Index(0); INLINE_PATH],
            len: 0,
            deeper: Vec::new(),
        }
    }
}

impl<'a> Path<'a> {
    fn push(&mut self, seg: Seg<'a>) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = seg,
            None => self.deeper.push(seg),
        }
        self.len += 1;
    }

    fn pop(&mut self) {
        if self.len > INLINE_PATH {
            self.deeper.pop();
        }
        self.len = self.len.saturating_sub(1);
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn iter(&self) -> impl Iterator<Item = &Seg<'a>> {
        self.inline[..self.len.min(INLINE_PATH)]
            .iter()
            .chain(&self.deeper)
    }
}

struct Validator<'s, 'v> {
    root: &'s Map<String, Value>,
    steps: usize,
    /// The step or depth bound was reached: the result is "too large to check", whatever else
    /// was found.
    exhausted: bool,
    /// The references being followed, with the value each was applied to: the same pair again
    /// is a cycle that makes no progress.
    refs: Vec<(*const Map<String, Value>, *const Value)>,
    path: Path<'v>,
}

impl<'s, 'v> Validator<'s, 'v> {
    fn violation(&self, message: String) -> Violation {
        self.violation_at(None, message)
    }

    /// A violation at the current path, or at its member `key`.
    fn violation_at(&self, key: Option<&str>, message: String) -> Violation {
        let mut path = String::new();
        for (i, seg) in self.path.iter().enumerate() {
            match seg {
                Seg::Key(k) => push_key(&mut path, k, i == 0),
                Seg::Index(n) => {
                    path.push('[');
                    path.push_str(&n.to_string());
                    path.push(']');
                }
            }
        }
        if let Some(k) = key {
            push_key(&mut path, k, self.path.is_empty());
        }
        if path.is_empty() {
            path.push('$');
        }
        Violation { path, message }
    }

    /// Counts one check; false once the budget or the depth is spent.
    fn step(&mut self, depth: usize) -> bool {
        if self.exhausted {
            return false;
        }
        self.steps += 1;
        if self.steps > MAX_STEPS || depth > MAX_DEPTH {
            self.exhausted = true;
            return false;
        }
        true
    }

    fn check(&mut self, schema: &'s Value, value: &'v Value, depth: usize, errs: &mut Errs) {
        match schema {
            Value::Object(m) => self.object(m, value, depth, errs),
            Value::Bool(false) if self.step(depth) => {
                errs.push(self.violation("no value is allowed here".into()));
            }
            _ => {}
        }
    }

    /// Whether `value` matches `schema`, without reporting why not.
    fn matches(&mut self, schema: &'s Value, value: &'v Value, depth: usize) -> bool {
        let mut e = Errs::new(1);
        self.check(schema, value, depth, &mut e);
        e.list.is_empty()
    }

    /// The violations of `value` against `schema`, up to `cap`.
    fn failures(
        &mut self,
        schema: &'s Value,
        value: &'v Value,
        depth: usize,
        cap: usize,
    ) -> Vec<Violation> {
        let mut e = Errs::new(cap);
        self.check(schema, value, depth, &mut e);
        e.list
    }

    fn object(
        &mut self,
        s: &'s Map<String, Value>,
        value: &'v Value,
        depth: usize,
        errs: &mut Errs,
    ) {
        if !self.step(depth) {
            return;
        }
        let k = &Keywords::of(s);
        let d = depth + 1;
        if let Some(Value::String(r)) = k.r#ref {
            self.reference(r, value, d, errs);
        }
        if errs.full() || self.exhausted {
            return;
        }
        if let Some(t) = k.ty {
            if !type_matches(t, value) {
                errs.push(self.violation(format!(
                    "expected {}, got {}",
                    type_names(t),
                    kind(value)
                )));
                // The other keywords would only repeat the type mismatch in other words.
                return;
            }
        }
        if let Some(Value::Array(allowed)) = k.enum_ {
            if !allowed.iter().any(|a| json_eq(a, value)) {
                errs.push(self.violation(format!("expected one of {}", listing(allowed))));
            }
        }
        if let Some(c) = k.const_ {
            if !json_eq(c, value) {
                errs.push(self.violation(format!("expected {}", short(c))));
            }
        }
        match value {
            Value::Number(_) => self.number(k, value, errs),
            Value::String(text) => self.string(k, text, errs),
            Value::Array(items) => self.array(k, items, d, errs),
            Value::Object(members) => self.members(k, members, d, errs),
            _ => {}
        }
        self.combinators(k, value, d, errs);
    }

    fn reference(&mut self, r: &str, value: &'v Value, depth: usize, errs: &mut Errs) {
        let Some(target) = resolve(self.root, r) else {
            // Unresolvable: ignored, as the module documentation says.
            return;
        };
        let key = (target as *const Map<String, Value>, value as *const Value);
        if self.refs.contains(&key) {
            // Following it again would check the same value against the same schema forever.
            return;
        }
        self.refs.push(key);
        self.object(target, value, depth, errs);
        self.refs.pop();
    }

    fn number(&mut self, k: &Keywords<'_>, value: &Value, errs: &mut Errs) {
        let Some(x) = value.as_f64() else { return };
        let num = |v: Option<&Value>| v.and_then(Value::as_f64);
        let flag = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
        if let Some(m) = num(k.minimum) {
            if flag(k.exclusive_minimum) && x <= m {
                errs.push(self.violation(format!("must be greater than {}", fmt_num(m))));
            } else if x < m {
                errs.push(self.violation(format!("must be at least {}", fmt_num(m))));
            }
        }
        if let Some(m) = num(k.maximum) {
            if flag(k.exclusive_maximum) && x >= m {
                errs.push(self.violation(format!("must be less than {}", fmt_num(m))));
            } else if x > m {
                errs.push(self.violation(format!("must be at most {}", fmt_num(m))));
            }
        }
        if let Some(m) = num(k.exclusive_minimum) {
            if x <= m {
                errs.push(self.violation(format!("must be greater than {}", fmt_num(m))));
            }
        }
        if let Some(m) = num(k.exclusive_maximum) {
            if x >= m {
                errs.push(self.violation(format!("must be less than {}", fmt_num(m))));
            }
        }
        if let Some(m) = num(k.multiple_of).filter(|m| *m > 0.0) {
            let q = x / m;
            // Decimal steps such as 0.1 are not exact in binary: allow a rounding error.
            if q.is_finite() && (q - q.round()).abs() > 1e-9 * q.abs().max(1.0) {
                errs.push(self.violation(format!("must be a multiple of {}", fmt_num(m))));
            }
        }
    }

    fn string(&mut self, k: &Keywords<'_>, text: &str, errs: &mut Errs) {
        let len = || text.chars().count() as u64;
        if let Some(m) = k.min_length.and_then(Value::as_u64) {
            if len() < m {
                errs.push(self.violation(format!("must be at least {m} characters long")));
            }
        }
        if let Some(m) = k.max_length.and_then(Value::as_u64) {
            if len() > m {
                errs.push(self.violation(format!("must be at most {m} characters long")));
            }
        }
    }

    fn array(&mut self, k: &Keywords<'s>, items: &'v [Value], depth: usize, errs: &mut Errs) {
        let n = items.len() as u64;
        if let Some(m) = k.min_items.and_then(Value::as_u64) {
            if n < m {
                errs.push(self.violation(format!("must have at least {m} items")));
            }
        }
        if let Some(m) = k.max_items.and_then(Value::as_u64) {
            if n > m {
                errs.push(self.violation(format!("must have at most {m} items")));
            }
        }
        // 2020-12: `prefixItems` for the first items, `items` for the rest. Draft 7: `items`
        // as an array for the first items, `additionalItems` for the rest.
        let (prefix, rest) = match (k.prefix_items, k.items) {
            (Some(Value::Array(p)), rest) => (p.as_slice(), rest),
            (_, Some(Value::Array(p))) => (p.as_slice(), k.additional_items),
            (_, rest) => (&[][..], rest),
        };
        for (i, item) in items.iter().enumerate() {
            if errs.full() || self.exhausted {
                return;
            }
            let schema = match prefix.get(i) {
                Some(p) => p,
                None => match rest {
                    Some(r) => r,
                    None => break,
                },
            };
            self.path.push(Seg::Index(i));
            self.check(schema, item, depth, errs);
            self.path.pop();
        }
        if k.unique_items.and_then(Value::as_bool) == Some(true) {
            self.unique(items, depth, errs);
        }
        if let Some(c) = k.contains {
            let min = k.min_contains.and_then(Value::as_u64).unwrap_or(1);
            let max = k.max_contains.and_then(Value::as_u64);
            let mut found = 0u64;
            for (i, item) in items.iter().enumerate() {
                self.path.push(Seg::Index(i));
                let ok = self.matches(c, item, depth);
                self.path.pop();
                if self.exhausted {
                    return;
                }
                found += u64::from(ok);
            }
            if found < min {
                errs.push(self.violation(format!(
                    "must contain at least {min} matching item{}",
                    if min == 1 { "" } else { "s" }
                )));
            }
            if let Some(max) = max.filter(|m| found > *m) {
                errs.push(self.violation(format!("must contain at most {max} matching items")));
            }
        }
    }

    /// `uniqueItems`: pairwise, each comparison counted as a step (so a long list stays within
    /// the budget).
    fn unique(&mut self, items: &[Value], depth: usize, errs: &mut Errs) {
        for (i, a) in items.iter().enumerate() {
            for b in &items[..i] {
                if !self.step(depth) {
                    return;
                }
                if json_eq(a, b) {
                    self.path.push(Seg::Index(i));
                    errs.push(self.violation("repeats an earlier item".into()));
                    self.path.pop();
                    return;
                }
            }
        }
    }

    fn members(
        &mut self,
        k: &Keywords<'s>,
        members: &'v Map<String, Value>,
        depth: usize,
        errs: &mut Errs,
    ) {
        if let Some(Value::Array(req)) = k.required {
            for name in req.iter().filter_map(Value::as_str) {
                if !members.contains_key(name) {
                    errs.push(self.violation_at(Some(name), "required property missing".into()));
                }
            }
        }
        let n = members.len() as u64;
        if let Some(m) = k.min_properties.and_then(Value::as_u64) {
            if n < m {
                errs.push(self.violation(format!("must have at least {m} properties")));
            }
        }
        if let Some(m) = k.max_properties.and_then(Value::as_u64) {
            if n > m {
                errs.push(self.violation(format!("must have at most {m} properties")));
            }
        }
        if let Some(Value::Object(deps)) = k.dependent_required {
            for (name, needs) in deps {
                if !members.contains_key(name) {
                    continue;
                }
                let Value::Array(needs) = needs else { continue };
                for need in needs.iter().filter_map(Value::as_str) {
                    if !members.contains_key(need) {
                        errs.push(self.violation_at(
                            Some(need),
                            format!("required when {name:?} is present"),
                        ));
                    }
                }
            }
        }
        let props = match k.properties {
            Some(Value::Object(p)) => Some(p),
            _ => None,
        };
        // Which members are "additional" depends on `patternProperties`, which is not checked.
        let additional = k
            .additional_properties
            .filter(|_| k.pattern_properties.is_none());
        let names = k.property_names;
        for (key, member) in members {
            if errs.full() || self.exhausted {
                return;
            }
            if let Some(ns) = names {
                // The name is a value of its own, checked by a validator that shares the budget.
                let key_value = Value::String(key.clone());
                let mut sub = Validator {
                    root: self.root,
                    steps: self.steps,
                    exhausted: false,
                    refs: Vec::new(),
                    path: Path::default(),
                };
                let ok = sub.matches(ns, &key_value, depth);
                self.steps = sub.steps;
                self.exhausted = sub.exhausted;
                if !ok && !self.exhausted {
                    errs.push(self.violation_at(Some(key), "property name not allowed".into()));
                }
            }
            let schema = match props.and_then(|p| p.get(key)) {
                Some(p) => p,
                None => match additional {
                    Some(Value::Bool(false)) => {
                        if self.step(depth) {
                            errs.push(self.violation_at(Some(key), "property not allowed".into()));
                        }
                        continue;
                    }
                    Some(a) => a,
                    None => continue,
                },
            };
            self.path.push(Seg::Key(key));
            self.check(schema, member, depth, errs);
            self.path.pop();
        }
    }

    fn combinators(&mut self, k: &Keywords<'s>, value: &'v Value, depth: usize, errs: &mut Errs) {
        if let Some(Value::Array(all)) = k.all_of {
            for sub in all {
                if errs.full() || self.exhausted {
                    return;
                }
                self.check(sub, value, depth, errs);
            }
        }
        if let Some(Value::Array(any)) = k.any_of {
            if !any.is_empty() {
                self.any_of(any, value, depth, errs);
            }
        }
        if let Some(Value::Array(one)) = k.one_of {
            if !one.is_empty() {
                self.one_of(one, value, depth, errs);
            }
        }
        if let Some(not) = k.not {
            if self.matches(not, value, depth) && !self.exhausted {
                errs.push(self.violation("matches a schema it must not match (not)".into()));
            }
        }
        if let Some(cond) = k.if_ {
            let branch = if self.matches(cond, value, depth) {
                k.then
            } else {
                k.else_
            };
            if let Some(b) = branch {
                self.check(b, value, depth, errs);
            }
        }
    }

    fn any_of(&mut self, any: &'s [Value], value: &'v Value, depth: usize, errs: &mut Errs) {
        // The closest alternative (fewest violations) says best what to fix.
        let mut closest: Option<Vec<Violation>> = None;
        for sub in any {
            let f = self.failures(sub, value, depth, MAX_REPORTED);
            if self.exhausted {
                return;
            }
            if f.is_empty() {
                return;
            }
            if closest.as_ref().is_none_or(|c| f.len() < c.len()) {
                closest = Some(f);
            }
        }
        let hint = closest.map(|c| join(&c)).unwrap_or_default();
        errs.push(self.violation(format!(
            "matches none of the allowed alternatives (anyOf); the closest fails with: {hint}"
        )));
    }

    fn one_of(&mut self, one: &'s [Value], value: &'v Value, depth: usize, errs: &mut Errs) {
        let mut matched = Vec::new();
        let mut closest: Option<Vec<Violation>> = None;
        for (i, sub) in one.iter().enumerate() {
            let f = self.failures(sub, value, depth, MAX_REPORTED);
            if self.exhausted {
                return;
            }
            if f.is_empty() {
                matched.push(i);
                if matched.len() > 1 {
                    break;
                }
            } else if closest.as_ref().is_none_or(|c| f.len() < c.len()) {
                closest = Some(f);
            }
        }
        match matched.len() {
            1 => {}
            0 => {
                let hint = closest.map(|c| join(&c)).unwrap_or_default();
                errs.push(self.violation(format!(
                    "matches none of the allowed alternatives (oneOf); the closest fails \
                     with: {hint}"
                )));
            }
            _ => errs.push(self.violation(format!(
                "matches more than one alternative of oneOf (#{} and #{})",
                matched[0], matched[1]
            ))),
        }
    }
}

/// Appends `key` to a path: `name`, `.name` after something, `["a b"]` when not a plain word.
fn push_key(path: &mut String, key: &str, first: bool) {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$');
    if plain {
        if !first {
            path.push('.');
        }
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&Value::String(key.to_owned()).to_string());
        path.push(']');
    }
}

fn join(v: &[Violation]) -> String {
    Invalid {
        violations: v.to_vec(),
    }
    .to_string()
}

/// Finds the schema a `$ref` names: a JSON pointer from the root (`#`, `#/$defs/a`,
/// `#/definitions/a`, `#/properties/x/items`), or a plain-name fragment (`#addr`) matching an
/// `$anchor` at the top of `$defs` or `definitions`.
fn resolve<'s>(root: &'s Map<String, Value>, r: &str) -> Option<&'s Map<String, Value>> {
    let frag = r.strip_prefix('#')?;
    if frag.is_empty() {
        return Some(root);
    }
    if let Some(pointer) = frag.strip_prefix('/') {
        let mut at: Option<&Value> = None;
        for raw in pointer.split('/') {
            let token = raw.replace("~1", "/").replace("~0", "~");
            let next = match at {
                None => root.get(&token),
                Some(Value::Object(m)) => m.get(&token),
                Some(Value::Array(a)) => token.parse::<usize>().ok().and_then(|i| a.get(i)),
                Some(_) => None,
            };
            at = Some(next?);
        }
        return match at {
            Some(Value::Object(m)) => Some(m),
            _ => None,
        };
    }
    ["$defs", "definitions"]
        .iter()
        .filter_map(|k| root.get(*k).and_then(Value::as_object))
        .flat_map(|defs| defs.values())
        .filter_map(Value::as_object)
        .find(|d| d.get("$anchor").and_then(Value::as_str) == Some(frag))
}

fn type_matches(t: &Value, v: &Value) -> bool {
    match t {
        Value::String(name) => is_type(name, v),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .any(|n| is_type(n, v)),
        // Not a valid `type`: ignored.
        _ => true,
    }
}

fn is_type(name: &str, v: &Value) -> bool {
    match name {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        // An unknown type name: ignored rather than refusing everything.
        _ => true,
    }
}

fn type_names(t: &Value) -> String {
    match t {
        Value::String(s) => s.clone(),
        Value::Array(a) => {
            let names: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
            names.join(" or ")
        }
        other => other.to_string(),
    }
}

/// The JSON type of a value, as a message names it.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Equality as JSON Schema means it: numbers by value (`1` equals `1.0`), the rest
/// structurally.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                return x == y;
            }
            if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                return x == y;
            }
            x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_eq(a, b)))
        }
        _ => a == b,
    }
}

/// A value as a message shows it, cut short when long.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}...")
    } else {
        s
    }
}

fn listing(values: &[Value]) -> String {
    let mut out: Vec<String> = values.iter().take(MAX_LISTED).map(short).collect();
    if values.len() > MAX_LISTED {
        out.push("...".into());
    }
    out.join(", ")
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: Value, value: Value) -> Vec<String> {
        match validate(&schema, &value) {
            Ok(()) => Vec::new(),
            Err(e) => e.violations.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn types_and_integers() {
        let s = json!({"type": "integer"});
        assert!(errors(s.clone(), json!(3)).is_empty());
        assert!(errors(s.clone(), json!(3.0)).is_empty());
        assert_eq!(
            errors(s.clone(), json!(3.5)),
            ["$: expected integer, got number"]
        );
        assert_eq!(errors(s, json!("3")), ["$: expected integer, got string"]);
        let s = json!({"type": ["string", "null"]});
        assert!(errors(s.clone(), json!(null)).is_empty());
        assert_eq!(
            errors(s, json!(true)),
            ["$: expected string or null, got boolean"]
        );
        assert!(errors(json!({"type": "number"}), json!(1)).is_empty());
    }

    #[test]
    fn numbers_strings_and_arrays_bounds() {
        let s = json!({"type": "number", "minimum": 1, "exclusiveMaximum": 10, "multipleOf": 0.5});
        assert!(errors(s.clone(), json!(9.5)).is_empty());
        assert_eq!(errors(s.clone(), json!(0)), ["$: must be at least 1"]);
        assert_eq!(errors(s.clone(), json!(10)), ["$: must be less than 10"]);
        assert_eq!(errors(s, json!(1.2)), ["$: must be a multiple of 0.5"]);
        assert!(errors(json!({"multipleOf": 0.1}), json!(0.3)).is_empty());
        // Characters, not bytes.
        let s = json!({"minLength": 2, "maxLength": 3});
        assert!(errors(s.clone(), json!("éé")).is_empty());
        assert_eq!(
            errors(s, json!("éééé")),
            ["$: must be at most 3 characters long"]
        );
        let s = json!({"minItems": 1, "maxItems": 2, "uniqueItems": true});
        assert_eq!(
            errors(s.clone(), json!([])),
            ["$: must have at least 1 items"]
        );
        assert_eq!(errors(s, json!([1, 1.0])), ["[1]: repeats an earlier item"]);
    }

    #[test]
    fn enum_and_const_compare_numbers_by_value() {
        assert!(errors(json!({"enum": [1, "a"]}), json!(1.0)).is_empty());
        assert_eq!(
            errors(json!({"enum": ["a", "b"]}), json!("c")),
            [r#"$: expected one of "a", "b""#]
        );
        assert_eq!(errors(json!({"const": 2}), json!(3)), ["$: expected 2"]);
    }

    #[test]
    fn objects_name_the_member() {
        let s = json!({
            "type": "object",
            "properties": {"a": {"type": "object", "properties": {"b c": {"type": "string"}}}},
            "required": ["z"],
            "additionalProperties": {"type": "boolean"}
        });
        assert_eq!(
            errors(s.clone(), json!({"a": {"b c": 1}, "x": 1})),
            [
                "z: required property missing",
                r#"a["b c"]: expected string, got number"#,
                "x: expected boolean, got number"
            ]
        );
        assert!(errors(s, json!({"z": false, "x": true})).is_empty());
    }

    #[test]
    fn a_plan_accepts_only_what_the_validator_accepts() {
        let flat = json!({
            "type": "object",
            "description": "annotations are fine",
            "properties": {
                "message": {"type": "string", "description": "Text"},
                "count": {"type": "integer"},
                "any": true,
                "untyped": {"title": "no type"}
            },
            "required": ["message"],
            "additionalProperties": false
        });
        let Value::Object(root) = &flat else { panic!() };
        let plan = Plan::of(root).expect("the common shape has a plan");
        let values = [
            json!({"message": "hi"}),
            json!({"message": "hi", "count": 3, "any": [1], "untyped": null}),
            json!({"message": "hi", "count": 3.0}),
            json!({"message": "hi", "count": 3.5}),
            json!({"message": 1}),
            json!({"count": 1}),
            json!({"message": "hi", "extra": 1}),
            json!([1]),
            json!("text"),
        ];
        let mut accepted = 0;
        for v in &values {
            let valid = validate_object(root, v).is_ok();
            // Typed from text, the plan says the same as from the value.
            let typed = plan.typed::<Value>(&v.to_string());
            assert_eq!(typed.is_some(), plan.accepts(v), "{v}");
            assert!(typed.is_none_or(|t| t == *v), "{v}");
            if plan.accepts(v) {
                accepted += 1;
                assert!(valid, "the plan accepted {v}, which the validator refuses");
            }
        }
        // The valid ones (the first three) pass without the validator.
        assert_eq!(accepted, 3);
        // From text, anything unusual is left to the validator: a repeated member, text that
        // is not one object.
        for text in [
            r#"{"message": "a", "message": "b"}"#,
            r#"{"message": "a", "count": 1, "count": 2.5}"#,
            r#"{"message": "a"} {}"#,
            r#"{"message": "a""#,
            "[]",
        ] {
            assert!(plan.typed::<Value>(text).is_none(), "{text}");
        }
        // Escapes read as in the value: the same member, the same string.
        let t: Value = plan
            .typed(r#"{"m\u0065ssage": "\u00e9t\u00e9", "count": -0, "any": {"x": [1, {}]}}"#)
            .expect("accepted");
        assert_eq!(t["message"], "été");
        // A derived type reads each member its own way (an option, an integer, a skipped
        // member), and the plan still sees each value's JSON type.
        #[derive(serde::Deserialize, Debug)]
        struct Args {
            #[allow(dead_code)]
            message: String,
            #[allow(dead_code)]
            count: Option<u32>,
        }
        for (text, ok) in [
            (r#"{"message": "a"}"#, true),
            (
                r#"{"message": "a", "count": 3, "any": [1], "untyped": {"a": 1}}"#,
                true,
            ),
            (r#"{"message": "a", "count": null}"#, false),
            (r#"{"message": "a", "any": 1, "count": 3.0}"#, false),
            (r#"{"message": "a", "untyped": "x", "extra": 1}"#, false),
            (r#"{"count": 1}"#, false),
        ] {
            assert_eq!(plan.typed::<Args>(text).is_some(), ok, "{text}");
        }
        // Open objects take extra members.
        let open = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let Value::Object(open) = &open else { panic!() };
        assert!(Plan::of(open).unwrap().accepts(&json!({"a": "x", "b": 1})));
        // Anything beyond the shape has no plan: the validator does all the work.
        for other in [
            json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}}),
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "minProperties": 1}),
            json!({"type": "array"}),
            json!({"$ref": "#/$defs/x"}),
            json!({"type": "object", "required": [1]}),
        ] {
            let Value::Object(m) = &other else { panic!() };
            assert!(Plan::of(m).is_none(), "{other}");
        }
    }

    #[test]
    fn paths_deeper_than_the_inline_steps_are_named_whole() {
        // Eleven levels: past the steps the path keeps without allocating, and back.
        let mut schema = json!({"type": "string"});
        let mut value = json!(1);
        for i in 0..11 {
            let key = format!("k{i}");
            schema = json!({"type": "object", "properties": {key.clone(): schema}});
            value = json!({key: value});
        }
        let schema = json!({
            "type": "object",
            "properties": {"deep": schema, "after": {"type": "string"}}
        });
        assert_eq!(
            errors(schema, json!({"deep": value, "after": 2})),
            [
                "after: expected string, got number",
                "deep.k10.k9.k8.k7.k6.k5.k4.k3.k2.k1.k0: expected string, got number"
            ]
        );
    }

    #[test]
    fn items_prefix_items_and_draft7_tuples() {
        let s = json!({"prefixItems": [{"type": "string"}], "items": {"type": "integer"}});
        assert!(errors(s.clone(), json!(["a", 1, 2])).is_empty());
        assert_eq!(
            errors(s, json!([1, "b"])),
            [
                "[0]: expected string, got number",
                "[1]: expected integer, got string"
            ]
        );
        let s = json!({"items": [{"type": "string"}], "additionalItems": false});
        assert_eq!(
            errors(s, json!(["a", 1])),
            ["[1]: no value is allowed here"]
        );
        let s = json!({"contains": {"const": 3}});
        assert_eq!(
            errors(s, json!([1, 2])),
            ["$: must contain at least 1 matching item"]
        );
    }

    #[test]
    fn combinators() {
        let s = json!({"oneOf": [{"type": "integer"}, {"type": "number"}]});
        assert!(errors(s.clone(), json!(1.5)).is_empty());
        assert_eq!(
            errors(s, json!(1)),
            ["$: matches more than one alternative of oneOf (#0 and #1)"]
        );
        let s = json!({"anyOf": [{"required": ["a"]}, {"required": ["b", "c"]}]});
        assert_eq!(
            errors(s, json!({})),
            [
                "$: matches none of the allowed alternatives (anyOf); the closest fails with: a: required property missing"
            ]
        );
        let s = json!({"not": {"type": "string"}});
        assert_eq!(errors(s, json!("x")).len(), 1);
        let s = json!({"if": {"properties": {"k": {"const": 1}}}, "then": {"required": ["one"]},
                       "else": {"required": ["other"]}});
        assert_eq!(
            errors(s.clone(), json!({"k": 1})),
            ["one: required property missing"]
        );
        assert_eq!(
            errors(s, json!({"k": 2})),
            ["other: required property missing"]
        );
    }

    #[test]
    fn references_and_anchors() {
        let s = json!({
            "$defs": {"pos": {"$anchor": "p", "type": "integer", "minimum": 0}},
            "definitions": {"name": {"type": "string"}},
            "properties": {
                "a": {"$ref": "#/$defs/pos"},
                "b": {"$ref": "#p"},
                "c": {"$ref": "#/definitions/name"},
                "d": {"$ref": "#/nowhere"}
            }
        });
        assert!(errors(s.clone(), json!({"a": 1, "b": 2, "c": "x", "d": 5})).is_empty());
        assert_eq!(
            errors(s, json!({"a": -1, "b": "2", "c": 3})),
            [
                "a: must be at least 0",
                "b: expected integer, got string",
                "c: expected string, got number"
            ]
        );
    }

    #[test]
    fn recursive_and_cyclic_references_end() {
        // A tree: recursion that follows the value terminates with it.
        let tree = json!({
            "$defs": {"node": {"type": "object", "properties": {
                "v": {"type": "integer"},
                "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
            "$ref": "#/$defs/node"
        });
        assert!(
            errors(
                tree.clone(),
                json!({"v": 1, "kids": [{"v": 2, "kids": []}]})
            )
            .is_empty()
        );
        assert_eq!(
            errors(tree, json!({"kids": [{"kids": [{"v": "x"}]}]})),
            ["kids[0].kids[0].v: expected integer, got string"]
        );
        // Cycles that make no progress into the value are cut.
        let cycle = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                           "$ref": "#/$defs/a", "type": "object"});
        assert!(errors(cycle.clone(), json!({})).is_empty());
        assert_eq!(errors(cycle, json!(1)), ["$: expected object, got number"]);
        assert!(
            errors(
                json!({"$ref": "#", "properties": {"x": {"$ref": "#"}}}),
                json!({"x": {"x": {}}})
            )
            .is_empty()
        );
    }

    #[test]
    fn hostile_values_are_refused_in_bounded_work() {
        // A small schema whose every level refers to the one below twice: without the step
        // budget, checking a value against level 40 would take 2^40 checks.
        let mut defs = Map::new();
        defs.insert("l0".into(), json!({"type": "integer"}));
        for i in 1..=40 {
            let below = format!("#/$defs/l{}", i - 1);
            defs.insert(
                format!("l{i}"),
                json!({"anyOf": [{"not": {"$ref": below}}, {"not": {"not": {"$ref": below}}}]}),
            );
        }
        let s = json!({"$defs": defs, "$ref": "#/$defs/l40"});
        let e = errors(s, json!("x"));
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("too large or too deeply nested"), "{e:?}");
        // Deep nesting through a recursive schema (a parsed message nests at most 128 deep,
        // but a value built in code may go further).
        let mut v = json!(1);
        for _ in 0..200 {
            v = json!([v]);
        }
        let deep = json!({"$defs": {"l": {"items": {"$ref": "#/$defs/l"}}}, "$ref": "#/$defs/l"});
        let e = errors(deep, v);
        assert!(e[0].contains("too large or too deeply nested"), "{e:?}");
    }

    #[test]
    fn unknown_keywords_and_pattern_are_ignored() {
        let s = json!({"pattern": "^a$", "format": "email", "x-whatever": 1,
                       "patternProperties": {"^x": {}}, "additionalProperties": false});
        assert!(errors(s, json!({"anything": "b"})).is_empty());
        assert!(errors(json!({"type": "strange"}), json!(1)).is_empty());
        assert!(errors(json!(true), json!(1)).is_empty());
        assert_eq!(errors(json!(false), json!(1)), ["$: no value is allowed"]);
    }

    #[test]
    fn at_most_ten_violations() {
        let mut props = Map::new();
        let mut value = Map::new();
        for i in 0..30 {
            props.insert(format!("p{i}"), json!({"type": "string"}));
            value.insert(format!("p{i}"), json!(i));
        }
        let s = json!({"properties": props});
        assert_eq!(errors(s, Value::Object(value)).len(), MAX_REPORTED);
    }
}
