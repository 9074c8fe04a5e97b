//! The fixture patterns of scripts/interop (the Rust twin of match.py and match.mjs; see the
//! rules there), and the answers the tour gives when a fixture names none.
//!
//! A pattern is plain JSON: objects match objects that have at least the pattern's keys, arrays
//! match arrays of the same length element by element, numbers match by value (1 matches 1.0),
//! other values by strict equality. String markers: `<any>`, `<absent>` (as an object value),
//! `<nonempty>`, `<png>`, `<wav>`, `<re:X>`; `{"$json": P}` is a string holding JSON that
//! matches P. The `<re:X>` patterns of the fixtures are a small regular-expression subset
//! (literals, `.`, `*`, `^`, `$`): enough for them, and no regex crate for one test driver.

use serde_json::{Map, Value, json};

/// The mismatches between `actual` and `pattern`, each with its JSON path (none: a match).
pub fn check(actual: Option<&Value>, pattern: &Value, path: &str) -> Vec<String> {
    if let Value::String(p) = pattern {
        if let Some(marker) = p.strip_prefix('<').and_then(|m| m.strip_suffix('>')) {
            if let Some(errs) = check_marker(actual, marker, path) {
                return errs;
            }
        }
    }
    let Some(actual) = actual else {
        return vec![format!("{path}: missing")];
    };
    if let Some(inner) = pattern.as_object().and_then(|o| o.get("$json")) {
        let Some(text) = actual.as_str() else {
            return vec![format!("{path}: expected a JSON string")];
        };
        return match serde_json::from_str::<Value>(text) {
            Ok(v) => check(Some(&v), inner, &format!("{path}(json)")),
            Err(_) => vec![format!("{path}: not valid JSON: {text}")],
        };
    }
    match (pattern, actual) {
        (Value::Array(ps), Value::Array(xs)) => {
            if ps.len() != xs.len() {
                return vec![format!(
                    "{path}: expected {} items, got {}",
                    ps.len(),
                    xs.len()
                )];
            }
            ps.iter()
                .zip(xs)
                .enumerate()
                .flat_map(|(i, (p, x))| check(Some(x), p, &format!("{path}[{i}]")))
                .collect()
        }
        (Value::Array(_), _) => vec![format!("{path}: expected an array")],
        (Value::Object(ps), Value::Object(xs)) => {
            let mut errs = Vec::new();
            for (k, p) in ps {
                if p == "<absent>" {
                    if xs.contains_key(k) {
                        errs.push(format!("{path}.{k}: must be absent"));
                    }
                } else {
                    errs.extend(check(xs.get(k), p, &format!("{path}.{k}")));
                }
            }
            errs
        }
        (Value::Object(_), _) => vec![format!("{path}: expected an object")],
        (Value::Number(p), Value::Number(x)) if p.as_f64() == x.as_f64() => vec![],
        (p, x) if p == x => vec![],
        (p, x) => vec![format!("{path}: expected {p}, got {x}")],
    }
}

/// A `<marker>` pattern; `None` when the text is no marker (then it is a plain string).
fn check_marker(actual: Option<&Value>, marker: &str, path: &str) -> Option<Vec<String>> {
    let text = actual.and_then(Value::as_str);
    let fail = |why: String| Some(vec![format!("{path}: {why}")]);
    match marker {
        "any" => actual
            .is_none()
            .then(|| vec![format!("{path}: missing")])
            .or(Some(vec![])),
        "nonempty" => match text {
            Some(t) if !t.is_empty() => Some(vec![]),
            _ => fail("expected a non-empty string".into()),
        },
        "png" => match text.and_then(base64) {
            Some(b) if b.starts_with(b"\x89PNG\r\n\x1a\n") => Some(vec![]),
            _ => fail("expected base64 PNG data".into()),
        },
        "wav" => match text.and_then(base64) {
            Some(b) if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WAVE" => Some(vec![]),
            _ => fail("expected base64 WAV data".into()),
        },
        m => {
            let re = m.strip_prefix("re:")?;
            match (text, Regex::new(re)) {
                (_, Err(why)) => fail(format!("bad pattern /{re}/: {why}")),
                (Some(t), Ok(r)) if r.is_found_in(t) => Some(vec![]),
                (_, Ok(_)) => fail(format!(
                    "{} does not match /{re}/",
                    actual.map_or("nothing".into(), Value::to_string)
                )),
            }
        }
    }
}

/// Standard base64 (with padding) to bytes; `None` when it is not.
fn base64(text: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = text.bytes().collect();
    if digits.is_empty() || digits.len() % 4 != 0 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(digits.len() / 4 * 3);
    let last = digits.len() / 4 - 1;
    for (i, quad) in digits.chunks(4).enumerate() {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && i != last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            n = (n << 6) | value(c)?;
        }
        n <<= 6 * pad as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

/// The regular-expression subset of the fixtures: literal characters, `.` (any character),
/// `X*` (zero or more of X), a leading `^` and a trailing `$`.
struct Regex {
    anchored: bool,
    atoms: Vec<(Option<char>, bool)>,
    to_end: bool,
}

impl Regex {
    fn new(re: &str) -> Result<Regex, String> {
        let (anchored, re) = match re.strip_prefix('^') {
            Some(r) => (true, r),
            None => (false, re),
        };
        let (to_end, re) = match re.strip_suffix('$') {
            Some(r) => (true, r),
            None => (false, re),
        };
        let mut atoms: Vec<(Option<char>, bool)> = Vec::new();
        for c in re.chars() {
            match c {
                '*' => match atoms.last_mut() {
                    Some((_, star @ false)) => *star = true,
                    _ => return Err("`*` with nothing to repeat".into()),
                },
                '.' => atoms.push((None, false)),
                '\\' | '(' | ')' | '[' | ']' | '{' | '}' | '+' | '?' | '|' | '^' | '$' => {
                    return Err(format!("{c:?} is beyond the supported subset"));
                }
                c => atoms.push((Some(c), false)),
            }
        }
        Ok(Regex {
            anchored,
            atoms,
            to_end,
        })
    }

    fn is_found_in(&self, text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        let starts = if self.anchored {
            0..=0
        } else {
            0..=chars.len()
        };
        starts
            .into_iter()
            .any(|s| self.here(&self.atoms, &chars[s..]))
    }

    fn here(&self, atoms: &[(Option<char>, bool)], text: &[char]) -> bool {
        let Some(&(atom, star)) = atoms.first() else {
            return !self.to_end || text.is_empty();
        };
        let fits = |c: &char| atom.is_none_or(|a| a == *c);
        if star {
            // Shortest first; any repeat count up to the run of fitting characters.
            let run = text.iter().take_while(|c| fits(c)).count();
            return (0..=run).any(|n| self.here(&atoms[1..], &text[n..]));
        }
        match text.first() {
            Some(c) if fits(c) => self.here(&atoms[1..], &text[1..]),
            _ => false,
        }
    }
}

/// A value for one JSON-schema property: its default, its first enum value, or one of its type.
fn sample(schema: &Value) -> Value {
    if let Some(d) = schema.get("default") {
        return d.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(c) = schema
        .get("oneOf")
        .and_then(Value::as_array)
        .and_then(|o| o.first())
        .and_then(|o| o.get("const"))
    {
        return c.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("integer" | "number") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => json!("hello"),
    }
}

/// Arguments for a tool the fixtures do not describe: every required property gets a value.
pub fn synthesize_args(schema: Option<&Value>) -> Value {
    let props = schema.and_then(|s| s.get("properties"));
    let mut args = Map::new();
    for name in schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let p = props.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        args.insert(name.to_owned(), sample(p));
    }
    Value::Object(args)
}

/// Accepts a form elicitation the fixtures do not describe, filling every field.
pub fn elicit_answer(schema: Option<&Value>) -> Value {
    let mut content = Map::new();
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    for (k, s) in props.into_iter().flatten() {
        let v = if s.get("type").and_then(Value::as_str) == Some("array") {
            let items = s.get("items").unwrap_or(&Value::Null);
            let first = items.get("enum").and_then(|e| e.get(0)).or_else(|| {
                items
                    .get("anyOf")
                    .and_then(|a| a.get(0))
                    .and_then(|a| a.get("const"))
            });
            first.map_or(json!([]), |f| json!([f]))
        } else {
            sample(s)
        };
        content.insert(k.clone(), v);
    }
    json!({"action": "accept", "content": content})
}

/// What the sampling handler answers (the conformance suite's client answer).
pub fn sampling_answer() -> Value {
    json!({
        "role": "assistant",
        "content": {"type": "text", "text": "This is a test response from the client"},
        "model": "test-model",
        "stopReason": "endTurn",
    })
}

/// The roots the client exposes.
pub const ROOT_URI: &str = "file:///tmp/mcp-interop-root";

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(actual: Value, pattern: Value) -> bool {
        check(Some(&actual), &pattern, "$").is_empty()
    }

    #[test]
    fn objects_match_by_subset_and_arrays_by_length() {
        assert!(ok(json!({"a": 1, "b": 2}), json!({"a": 1})));
        assert!(!ok(json!({"b": 2}), json!({"a": 1})));
        assert!(ok(json!([1, 2]), json!([1, 2])));
        assert!(!ok(json!([1, 2, 3]), json!([1, 2])));
        assert!(ok(json!({"a": 1}), json!({"b": "<absent>"})));
        assert!(!ok(json!({"b": 1}), json!({"b": "<absent>"})));
    }

    #[test]
    fn numbers_match_by_value_but_not_booleans() {
        assert!(ok(json!(1.0), json!(1)));
        assert!(!ok(json!(true), json!(1)));
        assert!(!ok(json!(2), json!(1)));
    }

    #[test]
    fn markers() {
        assert!(ok(json!("x"), json!("<nonempty>")));
        assert!(!ok(json!(""), json!("<nonempty>")));
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
        assert!(ok(json!(png), json!("<png>")));
        assert!(!ok(json!("aGVsbG8="), json!("<png>")));
        let wav = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
        assert!(ok(json!(wav), json!("<wav>")));
        assert!(ok(json!("{\"id\": 3}"), json!({"$json": {"id": 3}})));
        assert!(!ok(json!("{\"id\": 4}"), json!({"$json": {"id": 3}})));
    }

    #[test]
    fn base64_decodes_padding_and_refuses_garbage() {
        assert_eq!(base64("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(base64("aGk=").as_deref(), Some(&b"hi"[..]));
        assert_eq!(base64("aGV5").as_deref(), Some(&b"hey"[..]));
        assert_eq!(base64("aG=k"), None);
        assert_eq!(base64("a*Vs"), None);
    }

    #[test]
    fn the_regex_subset() {
        let found = |re: &str, t: &str| Regex::new(re).unwrap().is_found_in(t);
        assert!(found("42", "The sum of 2 and 40 is 42."));
        assert!(!found("43", "The sum of 2 and 40 is 42."));
        assert!(found(
            "^User response: .*accept.*testuser",
            "User response: action=accept, content={\"username\":\"testuser\"}"
        ));
        assert!(!found("^accept", "User response: accept"));
        assert!(found("a.c$", "xxabc"));
        assert!(!found("a.c$", "abcx"));
        assert!(found("ab*c", "ac"));
        assert!(Regex::new("a+").is_err());
        assert!(Regex::new("*a").is_err());
    }

    #[test]
    fn synthesized_answers_use_defaults_enums_and_types() {
        let schema = json!({
            "properties": {
                "n": {"type": "integer"}, "s": {"type": "string", "default": "d"},
                "e": {"type": "string", "enum": ["x", "y"]},
                "m": {"type": "array", "items": {"anyOf": [{"const": "c1"}]}}
            },
            "required": ["n", "e"]
        });
        assert_eq!(synthesize_args(Some(&schema)), json!({"n": 1, "e": "x"}));
        assert_eq!(
            elicit_answer(Some(&schema)),
            json!({"action": "accept", "content": {"n": 1, "s": "d", "e": "x", "m": ["c1"]}})
        );
    }
}
