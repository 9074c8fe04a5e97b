//! Seeded hostile JSON-RPC lines and a by-the-book oracle, shared by the codec's randomized test
//! (`jsonrpc_fuzz.rs`) and the stdio transport's (`mcp-stdio/tests/server.rs`, by path).
//! Built alone it is an empty test target.
//!
//! Lines start from valid messages and are mutated: members swapped for values of other
//! types, deleted, added twice, names and strings written with `\u` escapes, ids written as
//! floats or too large for an `f64`, deep nesting, long strings, invalid UTF-8, cut-off text,
//! and batches with odd elements. No line holds a `\n` (one line, one frame).
#![allow(dead_code)]

use std::fmt::Write as _;

use mcp_core::jsonrpc::{DecodeError, Message, RequestId};
use serde_json::Value;

/// The environment variable that replays a run: `MCP_FUZZ_SEED=<seed printed by a failure>`.
pub const SEED_VAR: &str = "MCP_FUZZ_SEED";

/// splitmix64: tiny, fast and good enough to explore inputs; no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True `p` times in a hundred.
    pub fn percent(&mut self, p: u64) -> bool {
        self.next_u64() % 100 < p
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The seed from [`SEED_VAR`] (decimal or `0x` hex), or a fresh one from the clock, so that
/// each run explores new inputs and a failure can still be replayed.
pub fn seed() -> u64 {
    match std::env::var(SEED_VAR) {
        Ok(s) => {
            let s = s.trim();
            let parsed = match s.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => s.parse(),
            };
            parsed.unwrap_or_else(|e| panic!("{SEED_VAR}={s:?}: {e}"))
        }
        Err(_) => {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
                ^ u64::from(std::process::id()).rotate_left(32)
        }
    }
}

/// Prints the seed (and what was being tried) when the test that holds it panics.
pub struct SeedGuard {
    pub test: &'static str,
    pub seed: u64,
    /// The input under test, shown on failure (cut short).
    pub current: Vec<u8>,
}

impl SeedGuard {
    pub fn new(test: &'static str, seed: u64) -> SeedGuard {
        eprintln!("{test}: seed {seed} (replay with {SEED_VAR}={seed})");
        SeedGuard {
            test,
            seed,
            current: Vec::new(),
        }
    }
}

impl Drop for SeedGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let shown =
                String::from_utf8_lossy(&self.current[..self.current.len().min(600)]).into_owned();
            eprintln!(
                "{}: FAILED with seed {seed}; replay with {SEED_VAR}={seed}\n  input ({} bytes): {shown}",
                self.test,
                self.current.len(),
                seed = self.seed,
            );
        }
    }
}

/// A JSON value as the generator builds it: strings are escaped (or not) when written, and
/// `Raw` is written as it is (numbers, literals, pre-built nesting, odd escapes).
#[derive(Clone, Debug)]
pub enum J {
    Raw(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

fn raw<S: AsRef<str> + ?Sized>(s: &S) -> J {
    J::Raw(s.as_ref().to_owned())
}

/// Writes `j`; each character of each string (member names too) is `\u`-escaped with
/// probability `escape_pct` percent.
pub fn emit(j: &J, rng: &mut Rng, escape_pct: u64, out: &mut String) {
    match j {
        J::Raw(s) => out.push_str(s),
        J::Str(s) => emit_str(s, rng, escape_pct, out),
        J::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                emit(item, rng, escape_pct, out);
            }
            out.push(']');
        }
        J::Obj(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if rng.percent(10) {
                    out.push(' ');
                }
                emit_str(k, rng, escape_pct, out);
                out.push(':');
                emit(v, rng, escape_pct, out);
            }
            out.push('}');
        }
    }
}

fn emit_str(s: &str, rng: &mut Rng, escape_pct: u64, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            '/' if rng.percent(escape_pct) => out.push_str("\\/"),
            c if escape_pct > 0 && rng.percent(escape_pct) => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    if rng.percent(50) {
                        let _ = write!(out, "\\u{u:04x}");
                    } else {
                        let _ = write!(out, "\\u{u:04X}");
                    }
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

const METHODS: &[&str] = &[
    "echo",
    "ping",
    "tools/call",
    "x/y",
    "résumé/☃",
    "notifications/initialized",
];
const NOTIFICATIONS: &[&str] = &[
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/x",
    "é/𝄞",
];

/// An id that is valid however it is written.
fn valid_id(rng: &mut Rng) -> J {
    let n = match rng.below(4) {
        0 => rng.below(100) as i64,
        1 => -(rng.below(100_000) as i64),
        2 => rng.next_u64() as i64,
        _ => rng.below(1_000_000) as i64,
    };
    match rng.below(9) {
        0..=2 => J::Raw(n.to_string()),
        3 => J::Str(random_text(rng, 8)),
        4 => J::Str(n.to_string()),
        // Integral values written as floats, kept within f64's exact integers so that the
        // by-the-book oracle (which reads through f64) agrees.
        5 => J::Raw(format!("{}.0", n % 1_000_000)),
        6 => J::Raw(format!("{}e0", n % 1_000_000)),
        7 => J::Raw(format!("{}00E-2", n % 1_000_000)),
        _ => raw(*rng.pick(&["-0", "0.0", "1e2", "-2.50e1", "0e99999"])),
    }
}

/// An id that is not one: the codec answers it with id null.
fn odd_id(rng: &mut Rng) -> J {
    let huge = format!("1{}", "0".repeat(400));
    let options = [
        "1.5",
        "-0.25",
        "1e400",
        "-1e400",
        "1e-400",
        "9223372036854775808",
        "-9223372036854775809",
        "1e19",
        huge.as_str(),
        "true",
        "false",
        "null",
        "{}",
        r#"{"id":1}"#,
        "[]",
        "[1]",
        r#""\ud800""#,
    ];
    raw(rng.pick(&options))
}

/// Text of up to `max` characters, some of them outside ASCII or needing escapes.
pub fn random_text(rng: &mut Rng, max: usize) -> String {
    const CHARS: &[char] = &[
        'a', 'b', 'x', 'y', 'z', '0', '7', '/', '.', '-', '_', ' ', '"', '\\', '\t', '\u{1}', 'é',
        '☃', '𝄞', '\u{7f}', '\u{2028}',
    ];
    let len = rng.below(max + 1);
    (0..len).map(|_| *rng.pick(CHARS)).collect()
}

/// Any JSON value, small.
fn random_value(rng: &mut Rng, depth: usize) -> J {
    match rng.below(if depth > 2 { 5 } else { 7 }) {
        0 => raw(rng.pick(&["null", "true", "false"])),
        1 => J::Raw((rng.next_u64() as i64 >> rng.below(64)).to_string()),
        2 => raw(rng.pick(&["1.5", "-0", "1e400", "2.0", "1E2", "-1e-7"])),
        3 => J::Str(random_text(rng, 12)),
        4 => raw(rng.pick(&[r#""\ud800""#, r#""\udc00\ud800x""#, r#""a\u0000b""#])),
        5 => J::Arr(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
        _ => J::Obj(
            (0..rng.below(4))
                .map(|_| (random_text(rng, 6), random_value(rng, depth + 1)))
                .collect(),
        ),
    }
}

fn params(rng: &mut Rng) -> J {
    let mut members = vec![("text".to_owned(), J::Str(random_text(rng, 20)))];
    if rng.percent(30) {
        members.push(("name".to_owned(), J::Str("test_simple_text".to_owned())));
        members.push(("arguments".to_owned(), J::Obj(Vec::new())));
    }
    if rng.percent(20) {
        members.push((
            "_meta".to_owned(),
            J::Obj(vec![("progressToken".to_owned(), valid_id(rng))]),
        ));
    }
    J::Obj(members)
}

/// A valid message.
fn message(rng: &mut Rng) -> J {
    let v2 = || ("jsonrpc".to_owned(), raw(r#""2.0""#));
    let mut members = match rng.below(10) {
        0..=5 => {
            let mut m = vec![
                v2(),
                ("id".to_owned(), valid_id(rng)),
                ("method".to_owned(), J::Str(rng.pick(METHODS).to_string())),
            ];
            if rng.percent(70) {
                m.push(("params".to_owned(), params(rng)));
            }
            m
        }
        6 | 7 => {
            let mut m = vec![
                v2(),
                (
                    "method".to_owned(),
                    J::Str(rng.pick(NOTIFICATIONS).to_string()),
                ),
            ];
            if rng.percent(50) {
                m.push(("params".to_owned(), params(rng)));
            }
            m
        }
        8 => vec![
            v2(),
            ("id".to_owned(), valid_id(rng)),
            ("result".to_owned(), J::Obj(Vec::new())),
        ],
        _ => vec![
            v2(),
            (
                "id".to_owned(),
                if rng.percent(30) {
                    raw("null")
                } else {
                    valid_id(rng)
                },
            ),
            (
                "error".to_owned(),
                J::Obj(vec![
                    ("code".to_owned(), raw("-32601")),
                    ("message".to_owned(), J::Str(random_text(rng, 10))),
                ]),
            ),
        ],
    };
    // Member order carries no meaning.
    if rng.percent(30) {
        let i = rng.below(members.len());
        let j = rng.below(members.len());
        members.swap(i, j);
    }
    J::Obj(members)
}

fn deep(rng: &mut Rng) -> J {
    let n = *rng.pick(&[130, 1_000, 10_000]);
    J::Raw(format!("{}{}", "[".repeat(n), "]".repeat(n)))
}

/// Mutates a message in place; returns false when it added a member a second time (peers
/// disagree on which of repeated members counts, so the oracle stays out of it).
fn mutate(j: &mut J, rng: &mut Rng) -> bool {
    let J::Obj(members) = j else { return true };
    let set = |members: &mut Vec<(String, J)>, key: &str, value: J| match members
        .iter_mut()
        .find(|(k, _)| k == key)
    {
        Some(slot) => slot.1 = value,
        None => members.push((key.to_owned(), value)),
    };
    match rng.below(11) {
        0 if !members.is_empty() => {
            let i = rng.below(members.len());
            members[i].1 = random_value(rng, 0);
        }
        1 if !members.is_empty() => {
            let i = rng.below(members.len());
            members.remove(i);
        }
        2 => {
            let key = rng
                .pick(&[
                    "id", "method", "jsonrpc", "params", "result", "error", "extra",
                ])
                .to_string();
            let repeated = members.iter().any(|(k, _)| *k == key);
            let at = rng.below(members.len() + 1);
            members.insert(at, (key, random_value(rng, 0)));
            return !repeated;
        }
        3 => {
            let v = raw(rng.pick(&[
                r#""1.0""#,
                "2",
                "2.0",
                r#""2.0 ""#,
                r#""2\u002e0""#,
                r#""\u0032\u002E\u0030""#,
                "null",
                r#""2.00""#,
            ]));
            set(members, "jsonrpc", v);
        }
        4 => {
            let v = odd_id(rng);
            set(members, "id", v);
        }
        5 => {
            let v = raw(rng.pick(&[r#""bar""#, "3", "null", "true", "[1,2]", "[]"]));
            set(members, "params", v);
        }
        6 => {
            let v = deep(rng);
            let key = rng.pick(&["params", "extra", "id", "result"]).to_string();
            set(members, &key, v);
        }
        7 => {
            let len = *rng.pick(&[1_000, 10_000, 100_000]);
            let s: String = "x".repeat(len);
            set(
                members,
                "params",
                J::Obj(vec![("pad".to_owned(), J::Str(s))]),
            );
        }
        8 => {
            let v = match rng.below(4) {
                0 => J::Str(random_text(rng, 10)),
                1 => raw("1"),
                2 => raw("null"),
                _ => J::Arr(vec![J::Str("ping".to_owned())]),
            };
            set(members, "method", v);
        }
        9 => {
            let v = raw(rng.pick(&[
                "1e400",
                "-1e400",
                "123456789012345678901234567890",
                "1e-400",
            ]));
            set(members, "params", J::Obj(vec![("n".to_owned(), v)]));
        }
        _ => {
            let extra = random_value(rng, 0);
            members.push((random_text(rng, 5), extra));
        }
    }
    true
}

/// Odd things to find in a batch.
fn odd_element(rng: &mut Rng) -> J {
    match rng.below(6) {
        0 => raw(rng.pick(&["1", r#""x""#, "null", "true", "[]", "{}", "[1,2]"])),
        1 => J::Arr(vec![
            J::Str("2.0".to_owned()),
            J::Raw("6".to_owned()),
            J::Str("echo".to_owned()),
            J::Obj(Vec::new()),
        ]),
        2 => J::Arr(vec![message(rng)]),
        3 => deep(rng),
        _ => random_value(rng, 0),
    }
}

/// One generated line.
pub struct Line {
    pub bytes: Vec<u8>,
    /// Built with no repeated member and no byte-level damage: the by-the-book oracle may
    /// judge it.
    pub pristine: bool,
}

/// A line: a message or a batch, mutated.
pub fn line(rng: &mut Rng) -> Line {
    let escape = if rng.percent(25) {
        *rng.pick(&[5, 30, 100])
    } else {
        0
    };
    let mut pristine = true;
    let one = |rng: &mut Rng, pristine: &mut bool| {
        let mut m = message(rng);
        if rng.percent(60) {
            for _ in 0..=rng.below(3) {
                *pristine &= mutate(&mut m, rng);
            }
        }
        m
    };
    let tree = if rng.percent(20) {
        let n = rng.below(6);
        let items = (0..n)
            .map(|_| {
                if rng.percent(25) {
                    odd_element(rng)
                } else {
                    one(rng, &mut pristine)
                }
            })
            .collect();
        J::Arr(items)
    } else if rng.percent(3) {
        odd_element(rng)
    } else {
        one(rng, &mut pristine)
    };
    let mut text = String::new();
    if rng.percent(3) {
        text.push_str(" \t");
    }
    emit(&tree, rng, escape, &mut text);
    let mut bytes = text.into_bytes();
    if rng.percent(12) {
        pristine = false;
        damage(&mut bytes, rng);
    }
    // One line, one frame.
    for b in &mut bytes {
        if *b == b'\n' {
            *b = b' ';
        }
    }
    Line { bytes, pristine }
}

/// Byte-level damage: cut-off text, stray bytes (invalid UTF-8 among them), unclosed nesting.
fn damage(bytes: &mut Vec<u8>, rng: &mut Rng) {
    match rng.below(5) {
        0 => {
            let at = rng.below(bytes.len() + 1);
            bytes.truncate(at);
        }
        1 => {
            let at = rng.below(bytes.len() + 1);
            let b = *rng.pick(&[
                0xff, 0xc3, 0x80, 0xed, b'{', b'[', b'"', b'\\', b',', b'}', 0, b'\r',
            ]);
            bytes.insert(at, b);
        }
        2 if !bytes.is_empty() => {
            let at = rng.below(bytes.len());
            bytes.remove(at);
        }
        3 if !bytes.is_empty() => {
            let at = rng.below(bytes.len());
            bytes[at] ^= 1 << rng.below(8);
        }
        _ => {
            let mut deep = vec![b'['; 10_000];
            deep.append(bytes);
            *bytes = deep;
        }
    }
}

/// What a payload is, judged by the codec or by the book.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Request(RequestId),
    Notification,
    Response(RequestId),
    ErrorResponse(Option<RequestId>),
    /// Answered with -32600 and this id.
    Invalid(Option<RequestId>),
    /// Invalid but a notification: dropped.
    InvalidNotification,
    /// Invalid but a response (`result` or `error`, no `method`): dropped.
    InvalidResponse,
    /// -32700.
    ParseError,
}

/// The codec's verdict on one item.
pub fn codec_kind(item: &Result<Message, DecodeError>) -> Kind {
    match item {
        Ok(Message::Request(r)) => Kind::Request(r.id.clone()),
        Ok(Message::Notification(_)) => Kind::Notification,
        Ok(Message::Response(r)) => Kind::Response(r.id.clone()),
        Ok(Message::Error(e)) => Kind::ErrorResponse(e.id.clone()),
        Err(e) if e.is_parse_error() => Kind::ParseError,
        Err(e) if e.is_notification() => Kind::InvalidNotification,
        Err(e) if e.is_response() => Kind::InvalidResponse,
        Err(e) => Kind::Invalid(e.id.clone()),
    }
}

/// An id by the book, read through `serde_json::Value`: `Err(())` when the book cannot tell,
/// because the float serde_json made of the text is not exactly the text's value (an integral
/// float beyond f64's exact integers; a zero, which may be `1e-400` rounded).
fn book_id(v: &Value) -> Result<Option<RequestId>, ()> {
    Ok(match v {
        Value::String(s) => Some(RequestId::String(s.clone())),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Some(RequestId::Number(i)),
            (None, Some(f)) if n.is_f64() && f.fract() == 0.0 => {
                if f.abs() >= 9.0e15 || f == 0.0 {
                    return Err(());
                }
                Some(RequestId::Number(f as i64))
            }
            _ => None,
        },
        _ => None,
    })
}

/// JSON-RPC 2.0 as written, on a parsed value (one message, not a batch); `None` when the book
/// cannot tell.
pub fn by_the_book(v: &Value) -> Option<Kind> {
    let Value::Object(o) = v else {
        return Some(Kind::Invalid(None));
    };
    let id = o.get("id");
    let method = o.get("method");
    let notification = id.is_none() && method.is_some_and(Value::is_string);
    // Never answered either: JSON-RPC answers requests, not responses.
    let response = method.is_none() && (o.contains_key("result") || o.contains_key("error"));
    let echo = match id {
        None => None,
        Some(v) => book_id(v).ok()?,
    };
    let invalid = || {
        Some(if notification {
            Kind::InvalidNotification
        } else if response {
            Kind::InvalidResponse
        } else {
            Kind::Invalid(echo.clone())
        })
    };
    if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid();
    }
    let (result, error) = (o.get("result"), o.get("error"));
    if let Some(m) = method {
        if !m.is_string() || result.is_some() || error.is_some() {
            return invalid();
        }
        if o.get("params")
            .is_some_and(|p| !p.is_object() && !p.is_array())
        {
            return invalid();
        }
        return Some(match (id, echo.clone()) {
            (None, _) => Kind::Notification,
            (Some(_), Some(id)) => Kind::Request(id),
            (Some(_), None) => Kind::Invalid(None),
        });
    }
    match (result, error) {
        (Some(_), None) => Some(match echo.clone() {
            Some(id) => Kind::Response(id),
            None => Kind::InvalidResponse,
        }),
        (None, Some(e)) => {
            let well_formed = e.as_object().is_some_and(|e| {
                e.get("code").and_then(Value::as_i64).is_some()
                    && e.get("message").is_some_and(Value::is_string)
            });
            if !well_formed {
                return invalid();
            }
            Some(match (id, echo.clone()) {
                (None, _) | (Some(Value::Null), _) => Kind::ErrorResponse(None),
                (Some(_), Some(id)) => Kind::ErrorResponse(Some(id)),
                (Some(_), None) => Kind::InvalidResponse,
            })
        }
        _ => invalid(),
    }
}

/// The book on a whole payload with batches allowed: one kind per item, the codec's order.
/// Later requests reusing an earlier request's id in a batch are refused with that id.
pub fn book_payload(v: &Value) -> Option<Vec<Kind>> {
    let Value::Array(items) = v else {
        return Some(vec![by_the_book(v)?]);
    };
    if items.is_empty() {
        return Some(vec![Kind::Invalid(None)]);
    }
    let mut kinds = items.iter().map(by_the_book).collect::<Option<Vec<_>>>()?;
    let mut seen = std::collections::HashSet::new();
    for k in &mut kinds {
        if let Kind::Request(id) = k {
            if !seen.insert(id.clone()) {
                *k = Kind::Invalid(Some(id.clone()));
            }
        }
    }
    Some(kinds)
}
