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
    ///
    /// Each expression takes the longest span that still lets the rest of the template match.
    /// The URI comes from the client, so the work is bounded: O(n·t) for a URI of n bytes and a
    /// template of t parts and variables, never the exponential search a backtracking matcher
    /// does on a URI such as `x://aaaa…` against `x://{a}{b}{c}{d}!`.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        match_linear(&self.parts, uri)
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

// Counts the matcher's inner steps in tests, so a test can bound the work done on a hostile
// URI without timing anything.
#[cfg(test)]
thread_local! {
    static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[inline]
fn step() {
    #[cfg(test)]
    STEPS.with(|s| s.set(s.get() + 1));
}

/// How an expression's operator lays out its body: the text before it, the separator between
/// values, and whether each value is written `name=value`.
fn layout(op: Op) -> (&'static str, u8, bool) {
    match op {
        Op::Simple | Op::Reserved => ("", b',', false),
        Op::Fragment => ("#", b',', false),
        Op::Label => (".", b'.', false),
        Op::Path => ("/", b'/', false),
        Op::Query => ("?", b'&', true),
        Op::QueryCont => ("&", b'&', true),
    }
}

/// One expression's view of the URI, precomputed in two linear scans so that finding the
/// spans it may take from a position costs O(variables), not O(n).
struct ExprScan<'a> {
    names: &'a [String],
    named: bool,
    /// True when the body may be empty (no prefix and more than one variable: RFC 6570 lets
    /// all of them be undefined).
    empty_ok: bool,
    /// `stop[x]`: the first position at or after `x` holding a byte the body cannot span, or
    /// the URI's length. The body can end anywhere up to and including it.
    stop: Vec<usize>,
    /// `next_sep[x]`: the first separator at or after `x`, or the URI's length.
    next_sep: Vec<usize>,
}

impl<'a> ExprScan<'a> {
    fn new(op: Op, names: &'a [String], uri: &[u8]) -> ExprScan<'a> {
        let (prefix, sep, named) = layout(op);
        let n = uri.len();
        let mut stop = vec![n; n + 1];
        let mut next_sep = vec![n; n + 1];
        for x in (0..n).rev() {
            step();
            let b = uri[x];
            // Multi-byte characters are never separators nor excluded, so bytes will do.
            let ok = b >= 0x80 || b == sep || value_char_ok(op, char::from(b));
            stop[x] = if ok { stop[x + 1] } else { x };
            next_sep[x] = if b == sep { x } else { next_sep[x + 1] };
        }
        ExprScan {
            names,
            named,
            empty_ok: prefix.is_empty() && names.len() > 1,
            stop,
            next_sep,
        }
    }

    /// The ranges `[lo, hi]` (ascending, disjoint) where a body starting at `b` may end: at
    /// most one per variable, since a body of c values holds c - 1 separators, and for named
    /// operators each value must begin with its own `name=`.
    fn end_ranges(&self, uri: &[u8], b: usize, mut each: impl FnMut(usize, usize)) {
        let lim = self.stop[b];
        let min_end = if self.empty_ok { b } else { b + 1 };
        let mut start = b;
        for name in self.names {
            step();
            let hi = self.next_sep[start].min(lim);
            let mut lo = start.max(min_end);
            if self.named {
                let key = name.as_bytes();
                let has_key =
                    uri[start..].starts_with(key) && uri.get(start + key.len()) == Some(&b'=');
                if !has_key || start + key.len() + 1 > hi {
                    // This value is malformed, so no later one can be reached either.
                    return;
                }
                lo = lo.max(start + key.len() + 1);
            }
            if lo <= hi {
                each(lo, hi);
            }
            if hi >= lim {
                return;
            }
            start = hi + 1;
        }
    }
}

/// Matches by dynamic programming instead of backtracking. A backward pass marks, for each
/// part i, the positions from which `parts[i..]` matches the rest of the URI (whether it does
/// depends only on the position, never on the variables bound before it). A forward pass then
/// binds each expression to its longest span ending on a marked position, which is the span a
/// longest-first backtracking search would have settled on.
fn match_linear(parts: &[Part], uri: &str) -> Option<BTreeMap<String, String>> {
    let bytes = uri.as_bytes();
    let n = bytes.len();
    // reach[i][p]: parts[i..] matches uri[p..].
    let mut reach = vec![vec![false; n + 1]; parts.len() + 1];
    reach[parts.len()][n] = true;
    for (i, part) in parts.iter().enumerate().rev() {
        let (done, todo) = reach.split_at_mut(i + 1);
        let (here, next) = (&mut done[i], &todo[0]);
        match part {
            Part::Literal(l) => {
                let l = l.as_bytes();
                for p in 0..=n {
                    step();
                    here[p] = next.get(p + l.len()) == Some(&true) && bytes[p..].starts_with(l);
                }
            }
            Part::Expr(op, names) => {
                let (prefix, _, _) = layout(*op);
                let scan = ExprScan::new(*op, names, bytes);
                // last[x]: the greatest marked position of `next` at or before x.
                let mut last = vec![None; n + 1];
                let mut seen = None;
                for x in 0..=n {
                    if next[x] {
                        seen = Some(x);
                    }
                    last[x] = seen;
                }
                for p in 0..=n {
                    step();
                    if !uri.is_char_boundary(p) {
                        continue;
                    }
                    here[p] = if bytes[p..].starts_with(prefix.as_bytes()) {
                        let mut any = false;
                        scan.end_ranges(bytes, p + prefix.len(), |lo, hi| {
                            any |= last[hi].is_some_and(|e| e >= lo);
                        });
                        any
                    } else {
                        // All the variables undefined: the expression expands to nothing.
                        next[p]
                    };
                }
            }
        }
    }
    if !reach[0][0] {
        return None;
    }
    let mut out = BTreeMap::new();
    let mut p = 0;
    for (i, part) in parts.iter().enumerate() {
        let next = &reach[i + 1];
        match part {
            Part::Literal(l) => p += l.len(),
            Part::Expr(op, names) => {
                let (prefix, sep, named) = layout(*op);
                if !bytes[p..].starts_with(prefix.as_bytes()) {
                    continue;
                }
                let b = p + prefix.len();
                let scan = ExprScan::new(*op, names, bytes);
                let mut end = None;
                scan.end_ranges(bytes, b, |lo, hi| {
                    // Later ranges lie further right, so the last hit is the longest span.
                    if let Some(e) = (lo..=hi).rev().find(|&e| next[e]) {
                        end = Some(e);
                    }
                });
                // The backward pass marked p, so some span ends on a marked position.
                let e = end?;
                for (name, raw) in names.iter().zip(uri[b..e].split(char::from(sep))) {
                    let value = if named {
                        raw.strip_prefix(name.as_str())
                            .and_then(|r| r.strip_prefix('='))?
                    } else {
                        raw
                    };
                    out.insert(name.clone(), decode(value));
                }
                p = e;
            }
        }
    }
    Some(out)
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

    /// The matcher's steps on `uri`, counted by the test-only counter.
    fn steps(t: &UriTemplate, uri: &str) -> (Option<BTreeMap<String, String>>, u64) {
        STEPS.with(|s| s.set(0));
        let r = t.matches(uri);
        (r, STEPS.with(|s| s.get()))
    }

    #[test]
    fn hostile_uris_cost_linear_work() {
        // Five adjacent expressions and a literal the URI lacks: a backtracking matcher tries
        // every way to cut the run of `a`s in five, about n^5 / 120 attempts (10^23 here).
        let t = UriTemplate::parse("x://{a}{b}{c}{d}{e}!").unwrap();
        let mut small = 0;
        for n in [1_000usize, 100_000] {
            let uri = format!("x://{}", "a".repeat(n));
            let (r, work) = steps(&t, &uri);
            assert_eq!(r, None);
            // Per byte: one step per part in the backward pass, one per expression's scan.
            assert!(work <= 20 * (n as u64 + 10), "{work} steps for {n} bytes");
            if n == 1_000 {
                small = work;
            } else {
                // A hundred times the input, about a hundred times the work.
                assert!(work <= 101 * small, "{small} -> {work}");
            }
        }
        // The same shape with the literal present still matches, greedily: the first
        // expression takes all it can and leaves one character to each of the others.
        let uri = format!("x://{}!", "a".repeat(100_000));
        let (r, work) = steps(&t, &uri);
        let r = r.unwrap();
        assert_eq!(r["a"].len(), 100_000 - 4);
        assert_eq!(r["e"], "a");
        assert!(work <= 40 * 100_010, "{work}");
        // Query forms and reserved expansion, separators everywhere.
        let t = UriTemplate::parse("s://{+p}{?q,r}{&s}{+u}#").unwrap();
        let uri = format!("s://{}", "?q=&r=&s=/".repeat(10_000));
        let (r, work) = steps(&t, &uri);
        assert_eq!(r, None);
        assert!(work <= 40 * (uri.len() as u64 + 10), "{work}");
    }

    #[test]
    fn greedy_spans_and_optional_expressions() {
        assert_eq!(
            m("x://{a}{b}", "x://abc"),
            Some(vec![("a".into(), "ab".into()), ("b".into(), "c".into())])
        );
        assert_eq!(
            m("x://{+a}/{b}", "x://p/q/r"),
            Some(vec![("a".into(), "p/q".into()), ("b".into(), "r".into())])
        );
        assert_eq!(
            m("x://{a}{?q}", "x://v"),
            Some(vec![("a".into(), "v".into())])
        );
        assert_eq!(
            m("x://{a}{?q}", "x://v?q=1"),
            Some(vec![("a".into(), "v".into()), ("q".into(), "1".into())])
        );
        assert_eq!(m("s://x{?q}", "s://x?z=1"), None);
        assert_eq!(
            m("x://{a}/é{b}", "x://é/éé"),
            Some(vec![("a".into(), "é".into()), ("b".into(), "é".into())])
        );
        assert_eq!(
            m("x://{.a,b}", "x://.p.q"),
            Some(vec![("a".into(), "p".into()), ("b".into(), "q".into())])
        );
    }

    /// The backtracking matcher this module had before, kept as the reference the linear one
    /// must agree with (exponential, so only for short URIs).
    mod backtracking {
        use super::super::*;

        pub(super) fn match_parts(
            parts: &[Part],
            uri: &str,
            out: &mut BTreeMap<String, String>,
        ) -> bool {
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
    }

    #[test]
    fn agrees_with_backtracking_on_short_uris() {
        let templates = [
            "x://{a}{b}",
            "x://{a}-{b}",
            "x://{+a}/{b}",
            "x://{a,b}",
            "x://{a}{?q,r}",
            "x://{/a,b}{.c}",
            "x://{+a}{#f}",
            "x://{a}{&s}{?q}",
            "{a}/{+b},{c,d}",
        ];
        let alphabet = [
            "a", "b", "/", ",", "?", "&", "=", ".", "#", "-", "q", "r", "s", "é", "%41",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut matched = 0;
        for t in templates {
            let parsed = UriTemplate::parse(t).unwrap();
            for _ in 0..3_000 {
                let mut uri = String::from(if seed % 7 == 0 { "" } else { "x://" });
                for _ in 0..(seed >> 60) {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    uri.push_str(alphabet[(seed % alphabet.len() as u64) as usize]);
                }
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let mut want = BTreeMap::new();
                let want =
                    backtracking::match_parts(&parsed.parts, &uri, &mut want).then_some(want);
                matched += usize::from(want.is_some());
                assert_eq!(parsed.matches(&uri), want, "{t} on {uri:?}");
            }
        }
        // The comparison means something only if many of the URIs match.
        assert!(matched > 1_000, "{matched}");
    }
}
