//! The YAML frontmatter of a `SKILL.md`, read into the JSON object a skill entry carries.
//!
//! Servers must send the frontmatter verbatim and hosts must compare it field by field with
//! the file they fetch, so both roles need the same reading. Skill frontmatter is small,
//! block-style YAML, so this reads a subset of YAML 1.2 (core schema) rather than pulling in a
//! YAML crate: block mappings and sequences nested by indentation, plain, single- and
//! double-quoted scalars (one line each; plain ones may continue on more-indented lines),
//! `|` and `>` block scalars, one-level flow sequences and mappings, and comments. What it
//! does not read (anchors, aliases, tags, complex keys, multi-line quoted scalars,
//! duplicate keys, `.inf`/`.nan`) is an error rather than a guess, so a skill is never
//! served or loaded with frontmatter read differently from what its author wrote.

use std::fmt;

use serde_json::{Map, Number, Value};

/// Why a `SKILL.md` has no frontmatter we can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterError {
    /// 1-based line within the frontmatter block (0 when it is about the whole file).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "SKILL.md frontmatter: {}", self.message)
        } else {
            write!(
                f,
                "SKILL.md frontmatter, line {}: {}",
                self.line, self.message
            )
        }
    }
}

impl std::error::Error for FrontmatterError {}

fn err<T>(line: usize, message: impl Into<String>) -> Result<T, FrontmatterError> {
    Err(FrontmatterError {
        line,
        message: message.into(),
    })
}

/// The text between the opening `---` line and the closing one, if `text` (a whole `SKILL.md`,
/// a leading byte-order mark allowed) begins with a frontmatter block.
pub fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim_end_matches([' ', '\t']) == "---" && bare.starts_with("---") {
            let body = &rest[..offset];
            return Some(
                body.strip_suffix('\n')
                    .map(|b| b.strip_suffix('\r').unwrap_or(b))
                    .unwrap_or(body),
            );
        }
        offset += line.len();
    }
    None
}

/// The frontmatter of a whole `SKILL.md` as a JSON object.
///
/// # Errors
/// No frontmatter block, YAML outside the subset read here, or a top level that is not a
/// mapping.
pub fn parse(text: &str) -> Result<Map<String, Value>, FrontmatterError> {
    let Some(body) = block(text) else {
        return err(0, "the file does not begin with a --- delimited block");
    };
    parse_yaml(body)
}

/// A frontmatter block's YAML (without the `---` lines) as a JSON object.
///
/// # Errors
/// YAML outside the subset read here, or a top level that is not a mapping.
pub fn parse_yaml(yaml: &str) -> Result<Map<String, Value>, FrontmatterError> {
    let lines: Vec<Line<'_>> = yaml
        .lines()
        .enumerate()
        .map(|(i, raw)| Line {
            number: i + 1,
            raw,
            indent: raw.len() - raw.trim_start_matches(' ').len(),
        })
        .collect();
    for l in &lines {
        if l.raw[l.indent..].starts_with('\t') {
            return err(l.number, "tabs may not indent YAML");
        }
    }
    let mut p = Parser { lines, pos: 0 };
    p.skip_blank();
    if p.pos >= p.lines.len() {
        return Ok(Map::new());
    }
    let indent = p.lines[p.pos].indent;
    let Value::Object(map) = p.node(indent)? else {
        return err(1, "the frontmatter is not a mapping");
    };
    p.skip_blank();
    if let Some(l) = p.lines.get(p.pos) {
        return err(l.number, "unexpected indentation");
    }
    Ok(map)
}

struct Line<'a> {
    number: usize,
    raw: &'a str,
    indent: usize,
}

impl<'a> Line<'a> {
    fn text(&self) -> &'a str {
        &self.raw[self.indent..]
    }

    fn blank(&self) -> bool {
        let t = self.text().trim_end();
        t.is_empty() || t.starts_with('#')
    }
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn skip_blank(&mut self) {
        while self.lines.get(self.pos).is_some_and(Line::blank) {
            self.pos += 1;
        }
    }

    /// The block node starting at the current line, whose lines sit at `indent`.
    fn node(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        let l = &self.lines[self.pos];
        if is_item(l.text()) {
            self.sequence(indent)
        } else {
            self.mapping(indent)
        }
    }

    fn sequence(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        let mut items = Vec::new();
        loop {
            self.skip_blank();
            let Some(l) = self.lines.get(self.pos) else {
                break;
            };
            if l.indent < indent {
                break;
            }
            let number = l.number;
            if l.indent == indent && !is_item(l.text()) {
                // The next key of the mapping this sequence is a value of.
                break;
            }
            if l.indent > indent {
                return err(number, "expected a sequence item");
            }
            let rest = l.text()[1..].trim_start_matches(' ');
            let consumed = l.text().len() - rest.len();
            if rest.trim_end().is_empty() || rest.starts_with('#') {
                self.pos += 1;
                items.push(self.nested(indent, number)?);
            } else if key_split(rest).is_some() && !starts_flow_or_quote(rest) {
                // `- key: value` opens a mapping whose keys align with `key`.
                let inner = l.indent + consumed;
                let text = l.raw;
                self.lines[self.pos] = Line {
                    number,
                    raw: text,
                    indent: inner,
                };
                items.push(self.mapping(inner)?);
            } else {
                self.pos += 1;
                items.push(self.inline_value(rest, indent, number)?);
            }
        }
        Ok(Value::Array(items))
    }

    fn mapping(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        let mut map = Map::new();
        loop {
            self.skip_blank();
            let Some(l) = self.lines.get(self.pos) else {
                break;
            };
            if l.indent < indent {
                break;
            }
            let number = l.number;
            if l.indent > indent {
                return err(number, "unexpected indentation");
            }
            let text = l.text();
            if is_item(text) {
                return err(number, "a sequence item where a key was expected");
            }
            let Some((key, rest)) = key_split(text) else {
                return err(number, "expected `key: value`");
            };
            let key = scalar_key(key, number)?;
            if map.contains_key(&key) {
                return err(number, format!("duplicate key {key:?}"));
            }
            let rest = rest.trim_start_matches(' ');
            self.pos += 1;
            let value = if rest.trim_end().is_empty() || rest.starts_with('#') {
                self.nested_or_sequence(indent, number)?
            } else {
                self.inline_value(rest, indent, number)?
            };
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }

    /// The value of a key with nothing after its colon: a more-indented block, a sequence at
    /// the key's own indentation, or null.
    fn nested_or_sequence(
        &mut self,
        indent: usize,
        number: usize,
    ) -> Result<Value, FrontmatterError> {
        self.skip_blank();
        match self.lines.get(self.pos) {
            Some(l) if l.indent == indent && is_item(l.text()) => self.sequence(indent),
            _ => self.nested(indent, number),
        }
    }

    fn nested(&mut self, indent: usize, _number: usize) -> Result<Value, FrontmatterError> {
        self.skip_blank();
        match self.lines.get(self.pos) {
            Some(l) if l.indent > indent => {
                let inner = l.indent;
                self.node(inner)
            }
            _ => Ok(Value::Null),
        }
    }

    /// A value written after `key:` or `- ` on line `number` (whose block sits at `indent`).
    fn inline_value(
        &mut self,
        rest: &'a str,
        indent: usize,
        number: usize,
    ) -> Result<Value, FrontmatterError> {
        let rest = rest.trim_end();
        if let Some(header) = rest.strip_prefix(['|', '>']) {
            let folded = rest.starts_with('>');
            return self.block_scalar(folded, header, indent, number);
        }
        if rest.starts_with('[') || rest.starts_with('{') {
            return flow(rest, number);
        }
        if rest.starts_with('"') || rest.starts_with('\'') {
            let (v, tail) = quoted(rest, number)?;
            let tail = tail.trim_start();
            if !(tail.is_empty() || tail.starts_with('#')) {
                return err(number, "text after a quoted scalar");
            }
            return Ok(Value::String(v));
        }
        let mut text = strip_comment(rest).to_owned();
        check_plain(&text, number)?;
        if text.contains(": ") {
            return err(number, "a plain scalar may not hold `: ` (quote it)");
        }
        // A plain scalar may go on over more-indented lines, folded with spaces.
        let mut continued = false;
        while let Some(l) = self.lines.get(self.pos) {
            if l.indent <= indent || l.blank() || rest.contains(" #") {
                break;
            }
            let t = strip_comment(l.text().trim_end());
            if key_split(t).is_some() || is_item(t) {
                return err(l.number, "unexpected indentation");
            }
            text.push(' ');
            text.push_str(t);
            continued = true;
            self.pos += 1;
        }
        Ok(if continued {
            Value::String(text)
        } else {
            resolve(&text, number)?
        })
    }

    fn block_scalar(
        &mut self,
        folded: bool,
        header: &str,
        indent: usize,
        number: usize,
    ) -> Result<Value, FrontmatterError> {
        let header = strip_comment(header);
        let chomp = match header {
            "" => Chomp::Clip,
            "-" => Chomp::Strip,
            "+" => Chomp::Keep,
            _ => return err(number, "block scalar indentation indicators are not read"),
        };
        let mut body: Vec<&str> = Vec::new();
        let mut inner = None;
        while let Some(l) = self.lines.get(self.pos) {
            let empty = l.raw.trim().is_empty();
            if !empty && l.indent <= indent {
                break;
            }
            if !empty {
                let i = *inner.get_or_insert(l.indent);
                if l.indent < i {
                    return err(l.number, "less indented than the block scalar's first line");
                }
                body.push(&l.raw[i..]);
            } else {
                body.push("");
            }
            self.pos += 1;
        }
        let trailing = body.iter().rev().take_while(|s| s.is_empty()).count();
        let content = &body[..body.len() - trailing];
        let mut out = String::new();
        if folded {
            let mut prev_blank = true;
            for (i, line) in content.iter().enumerate() {
                if line.is_empty() {
                    out.push('\n');
                    prev_blank = true;
                    continue;
                }
                if i > 0 && !prev_blank {
                    out.push(' ');
                }
                out.push_str(line);
                prev_blank = false;
            }
        } else {
            out = content.join("\n");
        }
        match chomp {
            Chomp::Strip => {}
            Chomp::Clip if !content.is_empty() => out.push('\n'),
            Chomp::Clip => {}
            Chomp::Keep => {
                if !content.is_empty() {
                    out.push('\n');
                }
                for _ in 0..trailing {
                    out.push('\n');
                }
            }
        }
        Ok(Value::String(out))
    }
}

enum Chomp {
    Clip,
    Strip,
    Keep,
}

fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ") || text.trim_end() == "-"
}

fn starts_flow_or_quote(text: &str) -> bool {
    text.starts_with(['[', '{', '"', '\''])
}

/// `key` and what follows `key:` (a colon followed by a space or the end of the line), with
/// quoted keys kept whole.
fn key_split(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let start = if text.starts_with(['"', '\'']) {
        let q = bytes[0];
        let mut i = 1;
        while i < bytes.len() {
            if bytes[i] == b'\\' && q == b'"' {
                i += 2;
                continue;
            }
            if bytes[i] == q {
                if q == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                break;
            }
            i += 1;
        }
        i + 1
    } else {
        0
    };
    let mut i = start;
    while i < bytes.len() {
        if bytes[i] == b'#' && i > 0 && bytes[i - 1] == b' ' {
            return None;
        }
        if bytes[i] == b':' && (i + 1 == bytes.len() || bytes[i + 1] == b' ') {
            return Some((text[..i].trim_end(), &text[i + 1..]));
        }
        i += 1;
    }
    None
}

fn scalar_key(key: &str, number: usize) -> Result<String, FrontmatterError> {
    if key.starts_with(['"', '\'']) {
        let (k, tail) = quoted(key, number)?;
        if !tail.trim().is_empty() {
            return err(number, "text after a quoted key");
        }
        return Ok(k);
    }
    if key.is_empty() {
        return err(number, "an empty key");
    }
    check_plain(key, number)?;
    // Keys are strings in frontmatter (a JSON object has no other kind).
    Ok(key.to_owned())
}

fn strip_comment(text: &str) -> &str {
    match text.find(" #") {
        Some(i) => text[..i].trim_end(),
        None => text.trim_end(),
    }
}

fn check_plain(text: &str, number: usize) -> Result<(), FrontmatterError> {
    match text.chars().next() {
        Some('&') => err(number, "anchors are not read"),
        Some('*') => err(number, "aliases are not read"),
        Some('!') => err(number, "tags are not read"),
        Some('?') if text.len() == 1 || text.starts_with("? ") => {
            err(number, "complex keys are not read")
        }
        Some('@' | '`' | '%') => err(number, "a plain scalar may not start with this character"),
        Some('|' | '>') => err(number, "a block scalar here is not read"),
        _ => Ok(()),
    }
}

/// A one-line quoted scalar at the start of `text`, and what follows it.
fn quoted(text: &str, number: usize) -> Result<(String, &str), FrontmatterError> {
    let mut chars = text.char_indices();
    let Some((_, q)) = chars.next() else {
        return err(number, "an empty scalar");
    };
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        if c == q {
            if q == '\'' && text[i + 1..].starts_with('\'') {
                chars.next();
                out.push('\'');
                continue;
            }
            return Ok((out, &text[i + 1..]));
        }
        if c == '\\' && q == '"' {
            let Some((_, e)) = chars.next() else {
                break;
            };
            match e {
                '0' => out.push('\0'),
                'a' => out.push('\u{7}'),
                'b' => out.push('\u{8}'),
                't' | '\t' => out.push('\t'),
                'n' => out.push('\n'),
                'v' => out.push('\u{b}'),
                'f' => out.push('\u{c}'),
                'r' => out.push('\r'),
                'e' => out.push('\u{1b}'),
                ' ' => out.push(' '),
                '"' => out.push('"'),
                '/' => out.push('/'),
                '\\' => out.push('\\'),
                'N' => out.push('\u{85}'),
                '_' => out.push('\u{a0}'),
                'L' => out.push('\u{2028}'),
                'P' => out.push('\u{2029}'),
                'x' | 'u' | 'U' => {
                    let n = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let mut code = 0u32;
                    for _ in 0..n {
                        let d =
                            chars
                                .next()
                                .and_then(|(_, h)| h.to_digit(16))
                                .ok_or_else(|| FrontmatterError {
                                    line: number,
                                    message: "a bad hex escape".into(),
                                })?;
                        code = code * 16 + d;
                    }
                    match char::from_u32(code) {
                        Some(c) => out.push(c),
                        None => return err(number, "an escape that is no character"),
                    }
                }
                _ => return err(number, format!("unknown escape \\{e}")),
            }
            continue;
        }
        out.push(c);
    }
    err(
        number,
        "a quoted scalar must close on its line (multi-line ones are not read)",
    )
}

/// A plain scalar by the YAML 1.2 core schema: null, booleans, integers, floats, else text.
fn resolve(text: &str, number: usize) -> Result<Value, FrontmatterError> {
    Ok(match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => {
            let lower = text.to_ascii_lowercase();
            let unsigned = lower.trim_start_matches(['+', '-']);
            if matches!(unsigned, ".inf" | ".nan") {
                return err(number, "infinity and NaN have no JSON form");
            }
            if let Some(v) = integer(text) {
                return Ok(v);
            }
            if is_float(text) {
                if let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64) {
                    return Ok(Value::Number(n));
                }
            }
            Value::String(text.to_owned())
        }
    })
}

fn integer(text: &str) -> Option<Value> {
    let (neg, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(h) = digits.strip_prefix("0x") {
        if neg || text.starts_with('+') {
            return None;
        }
        (16, h)
    } else if let Some(o) = digits.strip_prefix("0o") {
        if neg || text.starts_with('+') {
            return None;
        }
        (8, o)
    } else {
        (10, digits)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let n = i128::from_str_radix(digits, radix).ok()?;
    let n = if neg { -n } else { n };
    if let Ok(i) = i64::try_from(n) {
        Some(Value::from(i))
    } else if let Ok(u) = u64::try_from(n) {
        Some(Value::from(u))
    } else {
        // Beyond 64 bits: a float, as a YAML reader with doubles would give.
        Number::from_f64(n as f64).map(Value::Number)
    }
}

fn is_float(text: &str) -> bool {
    let t = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = match frac {
        Some(f) => digits(int) && digits(f) && !(int.is_empty() && f.is_empty()),
        None => !int.is_empty() && digits(int),
    };
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exp_ok && (frac.is_some() || exp.is_some())
}

/// A one-line flow collection: `[a, "b", 3]` or `{k: v}`, one level deep.
fn flow(text: &str, number: usize) -> Result<Value, FrontmatterError> {
    let text = strip_comment(text);
    let (open, close) = if text.starts_with('[') {
        ('[', ']')
    } else {
        ('{', '}')
    };
    let Some(inner) = text.strip_prefix(open).and_then(|t| t.strip_suffix(close)) else {
        return err(number, "a flow collection must close on its line");
    };
    let parts = split_flow(inner, number)?;
    if open == '[' {
        let mut items = Vec::new();
        for p in parts {
            items.push(flow_scalar(p, number)?);
        }
        Ok(Value::Array(items))
    } else {
        let mut map = Map::new();
        for p in parts {
            let Some((k, v)) = key_split(p) else {
                return err(number, "a flow mapping entry without `key: value`");
            };
            let key = scalar_key(k, number)?;
            if map.contains_key(&key) {
                return err(number, format!("duplicate key {key:?}"));
            }
            map.insert(key, flow_scalar(v.trim(), number)?);
        }
        Ok(Value::Object(map))
    }
}

fn split_flow(inner: &str, number: usize) -> Result<Vec<&str>, FrontmatterError> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quote: Option<char> = None;
    for (i, c) in inner.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | ']' | '{' | '}') => {
                return err(number, "nested flow collections are not read");
            }
            (None, ',') => {
                parts.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = inner[start..].trim();
    if !last.is_empty() {
        parts.push(last);
    } else if !parts.is_empty() {
        // `[a, b,]`: a trailing comma is allowed.
    }
    if parts.iter().any(|p| p.is_empty()) {
        return err(number, "an empty entry in a flow collection");
    }
    Ok(parts)
}

fn flow_scalar(text: &str, number: usize) -> Result<Value, FrontmatterError> {
    if text.starts_with(['"', '\'']) {
        let (v, tail) = quoted(text, number)?;
        if !tail.trim().is_empty() {
            return err(number, "text after a quoted scalar");
        }
        return Ok(Value::String(v));
    }
    check_plain(text, number)?;
    resolve(text, number)
}

/// Whether two frontmatter values are the same content, as a host compares a fetched
/// `SKILL.md` with its entry: JSON equality, except that numbers compare by value (`2` and
/// `2.0` are one number).
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn yaml(s: &str) -> Value {
        Value::Object(parse_yaml(s).unwrap_or_else(|e| panic!("{e}\n{s}")))
    }

    #[test]
    fn the_block_is_found_between_the_dashes() {
        let text = "---\nname: a\ndescription: b\n---\n\nBody\n";
        assert_eq!(block(text), Some("name: a\ndescription: b"));
        assert_eq!(block("\u{feff}---\r\nname: a\r\n---\r\n"), Some("name: a"));
        assert_eq!(block("name: a\n---\n"), None);
        assert_eq!(block("---\nname: a\n"), None);
        assert_eq!(
            Value::Object(parse(text).unwrap()),
            json!({"name": "a", "description": "b"})
        );
    }

    #[test]
    fn scalars_follow_the_core_schema() {
        assert_eq!(
            yaml(
                "a: 1\nb: -2\nc: 2.5\nd: true\ne: ~\nf: null\ng: 1e3\nh: 0x1f\ni: text here\nj: '2.1.0'\nk: \"q\\\"\\u00e9\"\nl: it's\n"
            ),
            json!({"a": 1, "b": -2, "c": 2.5, "d": true, "e": null, "f": null, "g": 1000.0,
                   "h": 31, "i": "text here", "j": "2.1.0", "k": "q\"é", "l": "it's"})
        );
        assert_eq!(yaml("v: 2.1.0 # a comment\n"), json!({"v": "2.1.0"}));
        assert_eq!(yaml("s: 'it''s'\n"), json!({"s": "it's"}));
        assert_eq!(yaml("u: http://x.y/z\n"), json!({"u": "http://x.y/z"}));
    }

    #[test]
    fn nesting_sequences_and_flow_collections() {
        let v = yaml(
            "name: pdf\nmetadata:\n  version: \"2.1.0\"\n  owner:\n    team: docs\ntags:\n  - a\n  - b\nlist:\n- x\n- k: 1\n  j: 2\nflow: [a, 'b c', 3]\nmap: {x: 1, y: two}\nempty:\n",
        );
        assert_eq!(
            v,
            json!({"name": "pdf", "metadata": {"version": "2.1.0", "owner": {"team": "docs"}},
                   "tags": ["a", "b"], "list": ["x", {"k": 1, "j": 2}],
                   "flow": ["a", "b c", 3], "map": {"x": 1, "y": "two"}, "empty": null})
        );
    }

    #[test]
    fn block_scalars_and_continued_plain_scalars() {
        assert_eq!(
            yaml("d: |\n  one\n  two\n\nn: 1\n"),
            json!({"d": "one\ntwo\n", "n": 1})
        );
        assert_eq!(yaml("d: >-\n  one\n  two\n"), json!({"d": "one two"}));
        assert_eq!(
            yaml("description: A long\n  description here\nx: y\n"),
            json!({"description": "A long description here", "x": "y"})
        );
    }

    #[test]
    fn what_is_not_read_is_an_error_not_a_guess() {
        for bad in [
            "a: &x 1\n",
            "a: *x\n",
            "a: !tag 1\n",
            "a: 1\na: 2\n",
            "a: \"open\n  close\"\n",
            "a: .inf\n",
            "m: a: b\n",
            "a: [1, [2]]\n",
            "- a\n",
            "a: 1\n  b: 2\n",
            "a:\n\tb: 1\n",
        ] {
            assert!(parse_yaml(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn comparison_is_by_content() {
        assert!(same(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!same(&json!({"a": 1}), &json!({"a": 1, "b": null})));
        assert!(!same(&json!({"a": "1"}), &json!({"a": 1})));
    }
}
