//! Where a usual `tools/call`'s name and arguments lie in its params text, found by one scan
//! that builds nothing, so that the call is made from the text: the arguments are checked by
//! the tool's plan as they are read and typed straight from the same text (see
//! `dispatch::call_tool_text`).
//!
//! The scan checks the params as JSON while it takes them apart, so that a line read by the
//! stdio reader is scanned once (`RequestView::read_with`), not checked by mcp-core and then
//! scanned again here. A call that is not usual (a `task`, a 2026-07-28 retry's
//! `inputResponses` or `requestState`, a member written with escapes, a repeated member,
//! arguments that are not an object) is only checked, and takes the general way, which types
//! every member and words every error.

use std::ops::Range;

use mcp_core::jsonrpc::json_value_end;
use mcp_core::types::methods;

/// The name and arguments of a usual call, as byte ranges of its params text.
pub(crate) struct CallText {
    name: Range<usize>,
    arguments: Option<Range<usize>>,
    /// Whether the params have a `_meta` member (written plainly; an escaped name is not
    /// usual).
    meta: bool,
}

impl CallText {
    /// A call's params read straight from the line that holds them (see
    /// `RequestView::read_with`), checked as they are scanned: `rest` runs from where they
    /// begin to the end of the line. Returns how many bytes they take and the call's parts if
    /// it is usual; `None` when they are not valid JSON. The usual call is checked and taken
    /// apart in one scan; anything else is only checked, by mcp-core's scan (and so are the
    /// params of a request whose method came first and is not `tools/call`).
    pub(crate) fn read_checked(
        method: Option<&str>,
        rest: &str,
    ) -> Option<(usize, Option<CallText>)> {
        let t = rest.as_bytes();
        let call = match method {
            Some(m) if m != methods::TOOLS_CALL => None,
            _ => Self::scan(t, json_value_end),
        };
        match call {
            Some((end, call)) => Some((end, Some(call))),
            None => json_value_end(t, 0).map(|end| (end, None)),
        }
    }

    /// The parts of a usual call whose params are known to be valid JSON (a `RawValue`), or
    /// `None` for the general way. Values are skipped without being checked again, to any
    /// depth.
    pub(crate) fn read_valid(params: &str) -> Option<CallText> {
        Self::scan(params.as_bytes(), skip_value).map(|(_, call)| call)
    }

    /// The usual call at the start of `t` and where it ends, each member's value passed over
    /// by `value_end`; `None` for anything else, valid or not. (One copy for both readers: a
    /// function pointer, not a type parameter, keeps the binary small.)
    fn scan(t: &[u8], value_end: fn(&[u8], usize) -> Option<usize>) -> Option<(usize, CallText)> {
        let mut i = ws(t, 0);
        if t.get(i) != Some(&b'{') {
            return None;
        }
        i += 1;
        let mut name = None;
        let mut arguments = None;
        let mut seen_arguments = false;
        let mut meta = false;
        loop {
            i = ws(t, i);
            // The two names looked for are matched as they stand; any other is scanned. Which
            // one it was is known from here on, not compared again.
            let rest = t.get(i..)?;
            let (key, key_end) = if rest.starts_with(b"\"name\"") {
                (Key::Name, i + 6)
            } else if rest.starts_with(b"\"arguments\"") {
                (Key::Arguments, i + 11)
            } else {
                let r = plain_string(t, i)?;
                let after = r.end + 1;
                (Key::Other(r), after)
            };
            i = ws(t, key_end);
            if t.get(i) != Some(&b':') {
                return None;
            }
            let start = ws(t, i + 1);
            let end = match key {
                // A name is a plain string, read once: where it ends is where the value does.
                Key::Name if name.is_none() => {
                    let r = plain_string(t, start)?;
                    let end = r.end + 1;
                    name = Some(r);
                    end
                }
                Key::Arguments if !seen_arguments => {
                    seen_arguments = true;
                    let end = value_end(t, start)?;
                    match t[start] {
                        b'{' => arguments = Some(start..end),
                        // As an absent `arguments`.
                        b'n' => {}
                        _ => return None,
                    }
                    end
                }
                Key::Name | Key::Arguments => return None,
                Key::Other(r) => {
                    match &t[r] {
                        b"task" | b"inputResponses" | b"requestState" => return None,
                        // The engine read it.
                        b"_meta" => meta = true,
                        // Unknown members, kept unused by the typed params.
                        _ => {}
                    }
                    value_end(t, start)?
                }
            };
            i = ws(t, end);
            match t.get(i)? {
                b',' => i += 1,
                b'}' => break,
                _ => return None,
            }
        }
        let call = CallText {
            name: name?,
            arguments,
            meta,
        };
        Some((i + 1, call))
    }

    /// Whether the params carry `_meta` (a progress token, a 2026-07-28 envelope): such a
    /// call is not plain (see `ServerEngine::take_plain`).
    pub(crate) fn has_meta(&self) -> bool {
        self.meta
    }

    /// The tool's name.
    pub(crate) fn name<'a>(&self, params: &'a str) -> &'a str {
        params.get(self.name.clone()).unwrap_or_default()
    }

    /// The arguments object's text, if the call has one.
    pub(crate) fn arguments<'a>(&self, params: &'a str) -> Option<&'a str> {
        self.arguments.clone().and_then(|r| params.get(r))
    }
}

/// A member of the params, as far as the quick path cares.
enum Key {
    Name,
    Arguments,
    /// Any other name (its range in the text).
    Other(Range<usize>),
}

#[inline]
fn ws(t: &[u8], mut i: usize) -> usize {
    while matches!(t.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The contents of the string starting at `i`, if it is valid JSON without escapes.
#[inline]
fn plain_string(t: &[u8], i: usize) -> Option<Range<usize>> {
    if t.get(i) != Some(&b'"') {
        return None;
    }
    let len = t
        .get(i + 1..)?
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    let end = i + 1 + len;
    (t[end] == b'"').then_some(i + 1..end)
}

/// Where the (valid) JSON value starting at `i` ends.
fn skip_value(t: &[u8], i: usize) -> Option<usize> {
    match *t.get(i)? {
        b'"' => skip_string(t, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *t.get(j)? {
                    b'"' => {
                        j = skip_string(t, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        // A number, `true`, `false` or `null`: up to the next delimiter.
        _ => {
            let mut j = i;
            while !matches!(
                t.get(j),
                None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                j += 1;
            }
            Some(j)
        }
    }
}

/// Where the string whose opening quote is at `i` ends (after its closing quote).
#[inline]
fn skip_string(t: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match *t.get(j)? {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::CallText;

    /// A small generator of pseudo-random numbers, from `seed`.
    fn lcg(mut seed: u64) -> impl FnMut() -> usize {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        }
    }

    /// Puts a piece of `alphabet` into `text` at a place `next` draws, inserted or in place of
    /// the character there.
    fn mutate(text: &mut String, alphabet: &[&str], next: &mut impl FnMut() -> usize) {
        let mut at = next() % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let piece = alphabet[next() % alphabet.len()];
        if next() % 2 == 0 {
            text.insert_str(at, piece);
        } else {
            let mut end = (at + 1).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            text.replace_range(at..end, piece);
        }
    }

    fn read(text: &str) -> Option<(String, Option<String>)> {
        let raw = RawValue::from_string(text.to_owned()).unwrap();
        let raw = raw.get();
        let (len, c) = CallText::read_checked(None, raw)?;
        assert_eq!(len, raw.len(), "{raw}");
        let c = c?;
        Some((c.name(raw).to_owned(), c.arguments(raw).map(str::to_owned)))
    }

    /// Mutated params that are still valid JSON: whenever the scan finds a usual call, a full
    /// parse finds the same name and arguments (and no member that needs the general way).
    #[test]
    fn mutated_params_never_make_the_scan_disagree_with_a_parse() {
        use serde_json::Value;
        let seeds = [
            r#"{"name":"echo","arguments":{"message":"a \"}\" b","n":[1,{"x":"]"}]},"_meta":{"progressToken":"}"}}"#,
            r#" { "arguments" : { "k" : [ ] } , "name" : "tool-1" } "#,
        ];
        #[rustfmt::skip]
        let alphabet: &[&str] = &[
            "{", "}", "[", "]", ",", ":", "\"", "\\\"", "\\u0041", " ", "0", "-1.5", "true", "null",
            "name", "arguments", "\"task\":{},", "\"requestState\":\"s\",", "\"name\":\"x\",",
            "\"arguments\":{},", "\"arguments\":null,", "é",
        ];
        let mut next = lcg(9);
        let mut found = 0;
        for round in 0..40_000 {
            let mut text = seeds[round % seeds.len()].to_owned();
            for _ in 0..1 + next() % 2 {
                mutate(&mut text, alphabet, &mut next);
            }
            // The scan is only ever given valid JSON (a `RawValue`).
            let Ok(parsed) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            let Some((name, arguments)) = read(&text) else {
                continue;
            };
            found += 1;
            let obj = parsed.as_object().expect("an object");
            assert_eq!(obj.get("name"), Some(&Value::from(name)), "{text}");
            let want = obj.get("arguments").filter(|a| !a.is_null());
            let got = arguments.map(|a| serde_json::from_str::<Value>(&a).unwrap());
            assert_eq!(got.as_ref(), want, "{text}");
            for other in ["task", "inputResponses", "requestState"] {
                assert!(!obj.contains_key(other), "{text}");
            }
        }
        assert!(found > 4_000, "only {found} usual calls");
    }

    /// Mutated request lines: reading a line once, its params checked and taken apart in one
    /// scan, finds what the two scans find (mcp-core's check, then the call's parts), and
    /// refuses what they refuse (invalid JSON anywhere in the params included).
    #[test]
    fn one_scan_of_a_line_finds_what_two_find() {
        use mcp_core::jsonrpc::RequestView;
        let seeds = [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"a \"}\" b","n":[1,{"x":"]"}]},"_meta":{"progressToken":"}"}}}"#,
            r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"other":[true,null,-1.5e3],"name":"t","arguments":null}}"#,
            r#"{"params":{"arguments":{"k":[]},"name":"tool-1"},"jsonrpc":"2.0","method":"tools/call","id":1}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///x"}}"#,
        ];
        #[rustfmt::skip]
        let alphabet: &[&str] = &[
            "{", "}", "[", "]", ",", ":", "\"", "\\\"", "\\u0041", "\\", " ", "0", "-1.5", "01",
            "true", "nul", "null", "name", "arguments", "\"task\":{},", "\"_meta\":{},",
            "\"name\":\"x\",", "\"arguments\":{},", "\"arguments\":null,", "é", "\u{1}", "\t",
        ];
        let mut next = lcg(11);
        let (mut usual, mut refused) = (0, 0);
        for round in 0..60_000 {
            let mut text = seeds[round % seeds.len()].to_owned();
            for _ in 0..next() % 3 {
                mutate(&mut text, alphabet, &mut next);
            }
            // Whatever the method: the scan itself is what is compared here.
            let once = RequestView::read_with(&text, |_, p| CallText::read_checked(None, p));
            let twice = RequestView::read(&text);
            let (once, twice) = match (once, twice) {
                (None, None) => {
                    refused += 1;
                    continue;
                }
                (Some(once), Some(twice)) => (once, twice),
                (once, twice) => panic!("{text}: once {:?}, twice {twice:?}", once.map(|o| o.0)),
            };
            let (view, made) = once;
            assert_eq!(
                (&view.id, view.method, view.params),
                (&twice.id, twice.method, twice.params),
                "{text}"
            );
            let parts = |c: &CallText, p: &str| {
                (
                    c.name(p).to_owned(),
                    c.arguments(p).map(str::to_owned),
                    c.has_meta(),
                )
            };
            let params = twice.params.unwrap_or_default();
            let got = made.flatten().map(|c| parts(&c, params));
            let want = twice
                .params
                .and_then(CallText::read_valid)
                .map(|c| parts(&c, params));
            assert_eq!(got, want, "{text}");
            usual += usize::from(got.is_some());
        }
        assert!(
            usual > 5_000 && refused > 5_000,
            "{usual} usual, {refused} refused"
        );
    }

    /// Params after another method are only checked, not scanned for a call; after
    /// `tools/call`, or before the method, they are scanned.
    #[test]
    fn only_a_call_or_params_before_the_method_are_scanned_as_a_call() {
        use mcp_core::jsonrpc::RequestView;
        let scanned = |line: &str| {
            let (view, made) = RequestView::read_with(line, CallText::read_checked).unwrap();
            assert!(view.params.is_some(), "{line}");
            made.unwrap().is_some()
        };
        let params = r#"{"name":"echo","arguments":{}}"#;
        for (method_first, method, want) in [
            (true, "tools/call", true),
            (true, "prompts/get", false),
            (false, "prompts/get", true),
        ] {
            let line = if method_first {
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#)
            } else {
                format!(r#"{{"jsonrpc":"2.0","id":1,"params":{params},"method":"{method}"}}"#)
            };
            assert_eq!(scanned(&line), want, "{line}");
        }
        // Invalid params are refused either way.
        let bad = r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":x}}"#;
        assert!(RequestView::read_with(bad, CallText::read_checked).is_none());
    }

    #[test]
    fn a_usual_call_is_found_and_anything_else_left_alone() {
        let args = r#"{"m":"a \"}\" b","n":[1,{"x":"]"}],"t":true,"z":-1.5e3}"#;
        assert_eq!(
            read(&format!(
                r#"{{"_meta":{{"progressToken":"}}"}},"name":"echo","other":[null,"x"],"arguments":{args} }}"#
            )),
            Some(("echo".into(), Some(args.into())))
        );
        assert_eq!(read(r#"{"name":"e"}"#), Some(("e".into(), None)));
        assert_eq!(
            read(r#" { "arguments" : null , "name" : "e" } "#),
            Some(("e".into(), None))
        );
        assert_eq!(
            read(r#"{"x":1,"name":"e","y":false}"#),
            Some(("e".into(), None))
        );
        for other in [
            r#"{"name":"e","task":{}}"#,
            r#"{"name":"e","inputResponses":{}}"#,
            r#"{"name":"e","requestState":"s"}"#,
            r#"{"name":"\u0065"}"#,
            r#"{"n\u0061me":"e"}"#,
            r#"{"name":"e","name":"f"}"#,
            r#"{"name":"e","arguments":{},"arguments":{}}"#,
            r#"{"name":"e","arguments":[]}"#,
            r#"{"name":"e","arguments":"{}"}"#,
            r#"{"name":5}"#,
            r#"{"arguments":{}}"#,
            "{}",
            "[]",
        ] {
            assert!(read(other).is_none(), "{other}");
        }
    }
}
