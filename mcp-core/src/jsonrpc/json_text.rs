//! Where a JSON value ends, checking it as it goes: what the quick path uses to take a
//! message's params as text without building anything. serde_json's `RawValue` check does the
//! same work, but keeps the nesting on the heap from the second level on, which costs the
//! usual `tools/call` (params, then arguments) an allocation each time.
//!
//! This accepts exactly the texts serde_json accepts as a `RawValue` (a lone surrogate escape
//! included: what it stands for is the final reader's business), nested at most
//! [`MAX_DEPTH`] deep; deeper values are `None` and left to serde_json, like anything refused.

use crate::word_scan;

/// The deepest nesting checked here (the bits of the stack word).
pub(super) const MAX_DEPTH: u32 = 64;

/// Where the JSON value starting at `i` (white space first allowed) ends, if it is valid.
pub(super) fn value_end(b: &[u8], mut i: usize) -> Option<usize> {
    // One bit per open container, the innermost lowest: 1 for an object, 0 for an array.
    let mut stack = 0u64;
    let mut depth = 0u32;
    'value: loop {
        i = ws(b, i);
        match *b.get(i)? {
            open @ (b'{' | b'[') => {
                if depth == MAX_DEPTH {
                    return None;
                }
                let object = open == b'{';
                i = ws(b, i + 1);
                match b.get(i) {
                    Some(b'}') if object => i += 1,
                    Some(b']') if !object => i += 1,
                    _ => {
                        depth += 1;
                        stack = stack << 1 | u64::from(object);
                        if object {
                            i = key_end(b, i)?;
                        }
                        continue 'value;
                    }
                }
            }
            b'"' => i = string_end(b, i)?,
            b't' => i = literal(b, i, b"true")?,
            b'f' => i = literal(b, i, b"false")?,
            b'n' => i = literal(b, i, b"null")?,
            b'-' | b'0'..=b'9' => i = number_end(b, i)?,
            _ => return None,
        }
        // A value ended: close what it ends, up to the next member or element.
        loop {
            if depth == 0 {
                return Some(i);
            }
            i = ws(b, i);
            let object = stack & 1 == 1;
            match *b.get(i)? {
                b',' if object => {
                    i = key_end(b, ws(b, i + 1))?;
                    continue 'value;
                }
                b',' => {
                    i += 1;
                    continue 'value;
                }
                b'}' if object => {}
                b']' if !object => {}
                _ => return None,
            }
            i += 1;
            depth -= 1;
            stack >>= 1;
        }
    }
}

#[inline]
fn ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// A member's name and its colon, from `i`: where its value may begin.
#[inline]
fn key_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let i = ws(b, string_end(b, i)?);
    (b.get(i) == Some(&b':')).then_some(i + 1)
}

#[inline]
fn literal(b: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    b.get(i..)?.starts_with(word).then_some(i + word.len())
}

/// The end of the string whose opening quote is at `i`.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        j = string_stop(b, j)?;
        match b[j] {
            b'"' => return Some(j + 1),
            b'\\' => match *b.get(j + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                b'u' if b.get(j + 2..j + 6)?.iter().all(u8::is_ascii_hexdigit) => j += 6,
                _ => return None,
            },
            // A control character, which JSON does not allow in a string.
            _ => return None,
        }
    }
}

/// Where, from `i` on, the first `"`, `\\` or control character lies, eight bytes a step.
#[inline]
pub(super) fn string_stop(bytes: &[u8], mut i: usize) -> Option<usize> {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let x = word_scan::word(chunk);
        let flags = word_scan::bytes_equal(x, b'"')
            | word_scan::bytes_equal(x, b'\\')
            | word_scan::bytes_below(x, 0x20);
        if flags != 0 {
            return Some(i + word_scan::flagged_byte(flags));
        }
        i += 8;
    }
    let rest = bytes.get(i..)?;
    rest.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|p| i + p)
}

/// The end of the number at `i`: `-`, an integer without leading zeros, a fraction, an
/// exponent (what follows is the caller's to judge).
fn number_end(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |b: &[u8], mut i: usize| {
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > start).then_some(i)
    };
    if b[i] == b'-' {
        i += 1;
    }
    i = match b.get(i)? {
        // A leading zero is the whole integer part (serde_json refuses `01` as a number).
        b'0' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => return None,
        b'0' => i + 1,
        _ => digits(b, i)?,
    };
    if b.get(i) == Some(&b'.') {
        i = digits(b, i + 1)?;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(b, i)?;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::value_end;

    /// What serde_json makes of `text` as one value followed by anything: where it ends.
    fn serde_end(text: &str) -> Option<usize> {
        let mut de = serde_json::Deserializer::from_str(text);
        let raw: &RawValue = serde::Deserialize::deserialize(&mut de).ok()?;
        Some(raw.get().as_ptr() as usize - text.as_ptr() as usize + raw.get().len())
    }

    /// Mutated JSON (JSON's punctuation, escapes good and bad, numbers good and bad, control
    /// characters, non-ASCII text): this check and serde_json's agree on every text, on
    /// whether it starts with a value and where the value ends.
    #[test]
    fn agrees_with_serde_json_on_mutated_json() {
        let seeds = [
            r#"{"name":"echo","arguments":{"message":"hi \"x\" \u00e9","n":[1,-2.5e3,0,true,false,null,{}]},"_meta":{"a":[[],[{}]]}}"#,
            r#"[1, 2.0 , -0.5E+7, "a\\b\/c\b\f\n\r\t", {"k" : {"l":[ ]}} ]"#,
            r#"  "plain"  "#,
            "-12",
        ];
        let alphabet: &[&str] = &[
            "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u00e9", "\\ud800", "\\u12g4", "\\x", " ",
            "\n", "\t", "0", "1", "-", ".", "e", "E", "+", "a", "t", "true", "nul", "null", "fals",
            "é", "😀", "\u{1}", "\u{1f}", "\u{7f}", "01", "1.", ".5", "1e", "\"k\":",
        ];
        let mut rng = crate::jsonrpc::mutation::Lcg(11);
        let (mut valid, mut invalid) = (0, 0);
        for round in 0..100_000 {
            let mut text = seeds[round % seeds.len()].to_owned();
            crate::jsonrpc::mutation::mutate(&mut text, alphabet, &mut rng);
            let want = serde_end(&text);
            assert_eq!(value_end(text.as_bytes(), 0), want, "{text:?}");
            if want.is_some() {
                valid += 1;
            } else {
                invalid += 1;
            }
        }
        assert!(
            valid > 20_000 && invalid > 20_000,
            "{valid} valid, {invalid} invalid"
        );
    }

    #[test]
    fn nesting_beyond_the_stack_is_left_to_serde_json() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(value_end(deep(64).as_bytes(), 0), Some(128));
        assert_eq!(value_end(deep(65).as_bytes(), 0), None);
        let objects = format!("{}1{}", r#"{"a":"#.repeat(64), "}".repeat(64));
        assert_eq!(value_end(objects.as_bytes(), 0), Some(objects.len()));
    }
}
