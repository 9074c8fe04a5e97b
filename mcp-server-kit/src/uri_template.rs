//! RFC 6570 URI templates, for resource templates: matching a concrete URI against a template
//! to recover its variables, and expanding a template from variables.
//!
//! Supported: level 1 (`{var}`), reserved expansion (`{+var}`), fragments (`{#var}`), labels
//! (`{.var}`), path segments (`{/var}`), and query forms (`{?a,b}`, `{&c}`), each with one or
//! more comma-separated variables. Prefix and explode modifiers are not supported and make the
//! template invalid, so nothing is silently misread.

use std::collections::BTreeMap;
use std::fmt;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr(Op, Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    Query,
    QueryCont,
}

/// A template that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid URI template: {}", self.0)
    }
}

impl std::error::Error for TemplateError {}

impl UriTemplate {
    /// Parses a template such as `file:///{+path}` or `test://template/{id}/data`.
    ///
    /// # Errors
    /// Unbalanced braces, empty expressions, and unsupported modifiers.
    pub fn parse(source: &str) -> Result<UriTemplate, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = source;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| TemplateError(format!("unclosed brace in {source:?}")))?;
            let expr = &after[..close];
            let (op, names) = match expr.chars().next() {
                Some('+') => (Op::Reserved, &expr[1..]),
                Some('#') => (Op::Fragment, &expr[1..]),
                Some('.') => (Op::Label, &expr[1..]),
                Some('/') => (Op::Path, &expr[1..]),
                Some('?') => (Op::Query, &expr[1..]),
                Some('&') => (Op::QueryCont, &expr[1..]),
                _ => (Op::Simple, expr),
            };
            let vars: Vec<String> = names.split(',').map(str::to_owned).collect();
            for v in &vars {
                let ok = !v.is_empty()
                    && v.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '%');
                if !ok {
                    return Err(TemplateError(format!(
                        "unsupported variable {v:?} in {source:?}"
                    )));
                }
            }
            parts.push(Part::Expr(op, vars));
            rest = &after[close + 1..];
        }
        if rest.contains('}') {
            return Err(TemplateError(format!("stray brace in {source:?}")));
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(UriTemplate {
            source: source.to_owned(),
            parts,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().flat_map(|p| match p {
            Part::Expr(_, vars) => vars.iter().map(String::as_str).collect::<Vec<_>>(),
            Part::Literal(_) => Vec::new(),
        })
    }

    /// Matches `uri` against the template and returns the (percent-decoded) variables, or
    /// `None` when the URI is not an instance of the template.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        if match_parts(&self.parts, uri, &mut out) {
            Some(out)
        } else {
            None
        }
    }

    /// Expands the template; missing variables expand to nothing, as RFC 6570 says.
    pub fn expand(&self, vars: &BTreeMap<String, String>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(l) => out.push_str(l),
                Part::Expr(op, names) => {
                    let present: Vec<(&String, &String)> = names
                        .iter()
                        .filter_map(|n| vars.get(n).map(|v| (n, v)))
                        .collect();
                    if present.is_empty() {
                        continue;
                    }
                    let (first, sep, named) = match op {
                        Op::Simple => ("", ",", false),
                        Op::Reserved => ("", ",", false),
                        Op::Fragment => ("#", ",", false),
                        Op::Label => (".", ".", false),
                        Op::Path => ("/", "/", false),
                        Op::Query => ("?", "&", true),
                        Op::QueryCont => ("&", "&", true),
                    };
                    out.push_str(first);
                    for (i, (name, value)) in present.iter().enumerate() {
                        if i > 0 {
                            out.push_str(sep);
                        }
                        if named {
                            out.push_str(name);
                            out.push('=');
                        }
                        let allow_reserved = matches!(op, Op::Reserved | Op::Fragment);
                        encode_into(&mut out, value, allow_reserved);
                    }
                }
            }
        }
        out
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_reserved(b: u8) -> bool {
    matches!(
        b,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

fn encode_into(out: &mut String, value: &str, allow_reserved: bool) {
    for &b in value.as_bytes() {
        if is_unreserved(b) || (allow_reserved && (is_reserved(b) || b == b'%')) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Which characters a variable's value may span in a URI, per operator.
fn value_char_ok(op: Op, c: char) -> bool {
    match op {
        Op::Reserved | Op::Fragment => true,
        Op::Simple | Op::Label | Op::Path => c != '/' && c != '?' && c != '#' && c != ',',
        Op::Query | Op::QueryCont => c != '&' && c != '#',
    }
}

fn match_parts(parts: &[Part], uri: &str, out: &mut BTreeMap<String, String>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(l) => uri
            .strip_prefix(l.as_str())
            .is_some_and(|tail| match_parts(rest, tail, out)),
        Part::Expr(op, names) => match_expr(*op, names, rest, uri, out),
    }
}

fn match_expr(
    op: Op,
    names: &[String],
    rest: &[Part],
    uri: &str,
    out: &mut BTreeMap<String, String>,
) -> bool {
    let (prefix, sep, named) = match op {
        Op::Simple | Op::Reserved => ("", ',', false),
        Op::Fragment => ("#", ',', false),
        Op::Label => (".", '.', false),
        Op::Path => ("/", '/', false),
        Op::Query => ("?", '&', true),
        Op::QueryCont => ("&", '&', true),
    };
    // Candidate end positions for this expression, longest first (greedy with backtracking).
    let body_start = if uri.starts_with(prefix) {
        prefix.len()
    } else {
        // An expression whose variables are all undefined expands to nothing.
        return match_parts(rest, uri, out);
    };
    let mut ends: Vec<usize> = Vec::new();
    for (i, c) in uri[body_start..].char_indices() {
        let ok = value_char_ok(op, c) || c == sep;
        if !ok {
            ends.push(body_start + i);
            break;
        }
        ends.push(body_start + i);
    }
    if !ends.contains(&uri.len())
        && uri[body_start..]
            .chars()
            .all(|c| value_char_ok(op, c) || c == sep)
    {
        ends.push(uri.len());
    }
    for &end in ends.iter().rev() {
        let body = &uri[body_start..end];
        if body.is_empty() && !prefix.is_empty() {
            continue;
        }
        let mut vars = BTreeMap::new();
        let values: Vec<&str> = body.split(sep).collect();
        if values.len() > names.len() {
            continue;
        }
        let mut ok = true;
        for (name, raw) in names.iter().zip(values.iter()) {
            let value = if named {
                match raw.split_once('=') {
                    Some((k, v)) if k == name => v,
                    _ => {
                        ok = false;
                        break;
                    }
                }
            } else {
                raw
            };
            if value.is_empty() && names.len() == 1 && prefix.is_empty() {
                ok = false;
                break;
            }
            vars.insert(name.clone(), decode(value));
        }
        if !ok {
            continue;
        }
        let mut trial = out.clone();
        trial.extend(vars);
        if match_parts(rest, &uri[end..], &mut trial) {
            *out = trial;
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(t)
            .unwrap()
            .matches(uri)
            .map(|v| v.into_iter().collect())
    }

    #[test]
    fn level_one() {
        assert_eq!(
            m("test://template/{id}/data", "test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template//data"),
            None
        );
        assert_eq!(
            m("x://{a}-{b}", "x://one-two"),
            Some(vec![("a".into(), "one".into()), ("b".into(), "two".into())])
        );
        assert_eq!(
            m("x://{name}", "x://hello%20world"),
            Some(vec![("name".into(), "hello world".into())])
        );
    }

    #[test]
    fn reserved_path() {
        assert_eq!(
            m("file:///{+path}", "file:///etc/hosts"),
            Some(vec![("path".into(), "etc/hosts".into())])
        );
        assert_eq!(
            m("file:///{+path}.txt", "file:///a/b.txt"),
            Some(vec![("path".into(), "a/b".into())])
        );
    }

    #[test]
    fn query_and_path_forms() {
        assert_eq!(
            m("s://search{?q,lang}", "s://search?q=rust&lang=en"),
            Some(vec![
                ("lang".into(), "en".into()),
                ("q".into(), "rust".into())
            ])
        );
        assert_eq!(
            m("s://repo{/owner,name}", "s://repo/me/proj"),
            Some(vec![
                ("name".into(), "proj".into()),
                ("owner".into(), "me".into())
            ])
        );
    }

    #[test]
    fn expansion_round_trips() {
        let t = UriTemplate::parse("test://template/{id}/data{?v}").unwrap();
        let mut vars = BTreeMap::new();
        vars.insert("id".to_owned(), "a b".to_owned());
        let uri = t.expand(&vars);
        assert_eq!(uri, "test://template/a%20b/data");
        assert_eq!(t.matches(&uri).unwrap()["id"], "a b");
        let r = UriTemplate::parse("file:///{+path}").unwrap();
        vars.insert("path".into(), "x/y z".into());
        assert_eq!(r.expand(&vars), "file:///x/y%20z");
    }

    #[test]
    fn bad_templates() {
        assert!(UriTemplate::parse("x://{a").is_err());
        assert!(UriTemplate::parse("x://a}").is_err());
        assert!(UriTemplate::parse("x://{}").is_err());
        assert!(UriTemplate::parse("x://{a*}").is_err());
        assert!(UriTemplate::parse("x://{a:3}").is_err());
    }
}
