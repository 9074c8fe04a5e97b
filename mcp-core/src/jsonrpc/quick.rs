//! The usual request or notification read in one pass over its text: members `jsonrpc`,
//! `id`, `method` and `params` (in any order, each once, nothing else), names and strings
//! without escapes, an integer or plain string id. Only `params` goes through serde_json (as
//! raw text, to find its end and check it); the rest is matched byte by byte and borrowed.
//!
//! Anything else, however valid, is `None`, and the general decoder (which judges every
//! member by its value and words every error) reads the message instead. So this path never
//! decides an error, and what it accepts is what the general decoder would make of the text.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::json_text::{string_stop, value_end};
use super::{Message, Notification, Request, RequestId};

/// A usual request read in place: its method and params borrowed from the text, nothing built
/// but the id (a string id is copied).
///
/// For a server that can serve some requests straight from the line it read (the stdio
/// reader offers each line to [`Session::handle_line`](crate::service::Session::handle_line)):
/// what [`read`](Self::read) accepts, [`decode`](super::decode) would decode to a
/// [`Request`] with the same id, method and params, and what it refuses is left whole to the
/// decoder, which decides every error. Reading a line this way costs no allocation for the
/// method or the params.
#[derive(Debug)]
pub struct RequestView<'a> {
    /// The request's id.
    pub id: RequestId,
    /// The method, as written (it has no escapes).
    pub method: &'a str,
    /// The params' text in the line, checked as JSON: an object or an array.
    pub params: Option<&'a str>,
}

impl<'a> RequestView<'a> {
    /// The request, when `text` is a request of the usual shape; `None` for anything else
    /// (a notification, a response, escapes, extra members, invalid JSON).
    pub fn read(text: &'a str) -> Option<RequestView<'a>> {
        Self::read_with(text, |_, p| Some((checked_len(p)?, ()))).map(|(view, _)| view)
    }

    /// [`read`](Self::read) for a caller that reads the params itself as they are checked,
    /// so that the line is scanned once: `params` gets the method if it came before them, and
    /// the text from where the params begin (an object or an array) to the end of the line,
    /// and returns how many bytes they take and what it made of them. It must have checked
    /// those bytes to be one valid JSON value, as [`json_value_end`](super::json_value_end)
    /// does (the view's `params` promise that); `None` from it leaves the whole line to the
    /// decoder.
    pub fn read_with<T>(
        text: &'a str,
        params: impl FnOnce(Option<&'a str>, &'a str) -> Option<(usize, T)>,
    ) -> Option<(RequestView<'a>, Option<T>)> {
        let (id, method, read) = parts(text, params)?;
        let (params, made) = read.unzip();
        Some((
            RequestView {
                id: id?,
                method,
                params,
            },
            made,
        ))
    }
}

/// How many bytes the valid JSON value at the start of `text` takes.
fn checked_len(text: &str) -> Option<usize> {
    value_end(text.as_bytes(), 0)
}

/// The message, when `text` has the usual shape.
pub(super) fn message(text: &str) -> Option<Message> {
    let (id, method, params) = parts(text, |_, p| Some((checked_len(p)?, ())))?;
    let method = method.to_owned();
    let params = match params {
        // Checked already; serde_json checks it again as it makes the value.
        Some((p, ())) => {
            let mut de = serde_json::Deserializer::from_str(p);
            Some(<&RawValue>::deserialize(&mut de).ok()?.to_owned())
        }
        None => None,
    };
    Some(match id {
        Some(id) => Message::Request(Request { id, method, params }),
        None => Message::Notification(Notification { method, params }),
    })
}

/// The id (if any), method and params of a usual request or notification, borrowed.
/// The params are read by `read_params` (see [`RequestView::read_with`]).
#[inline]
#[allow(clippy::type_complexity)]
fn parts<'a, T>(
    text: &'a str,
    read_params: impl FnOnce(Option<&'a str>, &'a str) -> Option<(usize, T)>,
) -> Option<(Option<RequestId>, &'a str, Option<(&'a str, T)>)> {
    let mut s = Scan { text, pos: 0 };
    s.expect(b'{')?;
    let mut jsonrpc = false;
    let mut id = None;
    let mut method = None;
    let mut params: Option<(&str, T)> = None;
    let mut read_params = Some(read_params);
    loop {
        // The four names (and the version) are matched as they stand, quotes and all, with no
        // scan for where they end. A name already seen is not looked for (a match moves the
        // scan, so a repeated one must fail here rather than let the next name be matched
        // after it).
        s.expect(b'"')?;
        if !jsonrpc && s.literal(b"jsonrpc\"") {
            s.expect(b':')?;
            s.expect(b'"')?;
            if !s.literal(b"2.0\"") {
                return None;
            }
            jsonrpc = true;
        } else if id.is_none() && s.literal(b"id\"") {
            s.expect(b':')?;
            id = Some(s.id()?);
        } else if method.is_none() && s.literal(b"method\"") {
            s.expect(b':')?;
            method = Some(s.plain_str()?);
        } else if params.is_none() && s.literal(b"params\"") {
            s.expect(b':')?;
            s.skip_ws();
            // From here to the end of the line; the position is after an ASCII byte.
            let rest = text.get(s.pos..)?;
            if !matches!(rest.as_bytes().first(), Some(b'{' | b'[')) {
                return None;
            }
            let (len, made) = read_params.take()?(method, rest)?;
            s.pos += len;
            params = Some((rest.get(..len)?, made));
        } else {
            return None;
        }
        match s.next()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    s.skip_ws();
    if s.pos != text.len() || !jsonrpc {
        return None;
    }
    Some((id, method?, params))
}

struct Scan<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Scan<'a> {
    #[inline]
    fn skip_ws(&mut self) {
        let b = self.text.as_bytes();
        while matches!(b.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// The next byte that is not white space.
    #[inline]
    fn next(&mut self) -> Option<u8> {
        self.skip_ws();
        let b = *self.text.as_bytes().get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    #[inline]
    fn expect(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    /// Whether the text goes on with `lit`; if so, the scan moves past it.
    #[inline]
    fn literal(&mut self, lit: &[u8]) -> bool {
        let found = self.text.as_bytes()[self.pos..].starts_with(lit);
        if found {
            self.pos += lit.len();
        }
        found
    }

    /// A string with no escapes (and, as JSON requires, no control characters), borrowed.
    #[inline]
    fn plain_str(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let end = string_stop(bytes, start)?;
        if bytes[end] != b'"' {
            return None;
        }
        self.pos = end + 1;
        // Both ends are ASCII bytes of valid UTF-8, so this slice is on char boundaries.
        self.text.get(start..end)
    }

    /// An id: an integer in `i64` written plainly (no fraction or exponent), or a plain string.
    fn id(&mut self) -> Option<RequestId> {
        self.skip_ws();
        let bytes = self.text.as_bytes();
        if bytes.get(self.pos) == Some(&b'"') {
            return self.plain_str().map(|s| RequestId::String(s.to_owned()));
        }
        let start = self.pos;
        let digits = start + usize::from(bytes.get(start) == Some(&b'-'));
        let mut end = digits;
        // Up to 18 digits the sum cannot overflow; a longer number is parsed with its checks.
        let mut n: u64 = 0;
        while let Some(&b) = bytes.get(end).filter(|b| b.is_ascii_digit()) {
            n = n.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
            end += 1;
        }
        // JSON has no leading zeros; a fraction or exponent stops the scan and is refused by
        // the caller, which then sees neither `,` nor `}`.
        let count = end - digits;
        if count == 0 || (count > 1 && bytes[digits] == b'0') {
            return None;
        }
        self.pos = end;
        let n = match count {
            ..=18 if digits == start => n as i64,
            ..=18 => -(n as i64),
            _ => self.text[start..end].parse().ok()?,
        };
        Some(RequestId::Number(n))
    }
}

#[cfg(test)]
mod tests {
    use super::message;
    use crate::jsonrpc::decode;

    /// What the quick path reads, the general decoder reads the same; what it leaves, it
    /// leaves whole (the general decoder then decides, errors included).
    /// The eight-byte steps find what a byte-by-byte look finds, wherever it lies.
    #[test]
    fn a_string_stops_where_a_byte_by_byte_scan_stops() {
        use super::super::json_text::string_stop;
        let alphabet: &[&[u8]] = &[
            b"a",
            b"\"",
            b"\\",
            b"\x1f",
            b"\x00",
            b" ",
            b"\x7f",
            "é".as_bytes(),
            "😀".as_bytes(),
        ];
        // Every short word over the alphabet, padded so the stop falls at every offset.
        let mut seed = 7u64;
        for _ in 0..20_000 {
            let mut text = Vec::new();
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (seed >> 59) as usize;
            let mut s = seed;
            for _ in 0..len {
                text.extend_from_slice(alphabet[(s % alphabet.len() as u64) as usize]);
                s /= 3;
                if s % 4 != 0 {
                    text.push(b'b');
                }
            }
            for from in 0..=text.len() {
                let want = text[from..]
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                    .map(|p| from + p);
                assert_eq!(string_stop(&text, from), want, "{text:?} from {from}");
            }
        }
    }

    /// Mutated messages (bytes inserted, dropped or replaced with JSON's own punctuation,
    /// escapes, digits and non-ASCII text): whatever the quick path accepts, the general
    /// decoder decodes to the same message.
    #[test]
    fn mutated_messages_never_make_the_quick_path_disagree() {
        let seeds = [
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","n":[1,-2.5e3,true,null]}}}"#,
            r#"{"method":"ping","jsonrpc":"2.0","id":"a-b"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
        ];
        let alphabet: &[&str] = &[
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"",
            "\\",
            "\\u0041",
            "\\ud800",
            " ",
            "\n",
            "0",
            "1",
            "-",
            ".",
            "e",
            "+",
            "a",
            "t",
            "n",
            "é",
            "\u{1}",
            "id",
            "params",
            "null",
            "id\"",
            "method\"",
            "jsonrpc\"",
            "params\"",
        ];
        let mut rng = crate::jsonrpc::mutation::Lcg(5);
        let mut accepted = 0;
        for round in 0..60_000 {
            let mut text = seeds[round % seeds.len()].to_owned();
            crate::jsonrpc::mutation::mutate(&mut text, alphabet, &mut rng);
            if let Some(quick) = message(&text) {
                accepted += 1;
                let general = super::super::decode_general(&text)
                    .unwrap_or_else(|e| panic!("quick accepted, general refused {text}: {e:?}"));
                assert_eq!(quick.to_vec(), general.to_vec(), "{text}");
            }
        }
        // The mutations must leave many messages usual, or this test would test nothing.
        assert!(accepted > 5_000, "only {accepted} usual messages");
    }

    #[test]
    fn the_quick_path_agrees_with_the_general_decoder_or_stands_aside() {
        let usual = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{"m":"\u00e9"}}}"#,
            r#"{"method":"tools/call","params":{"name":"e"},"jsonrpc":"2.0","id":"abc"}"#,
            r#" { "jsonrpc" : "2.0" , "id" : -42 , "method" : "ping" } "#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"x","params":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1234567890123,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":-999999999999999999,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1000000000000000000,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":"a long string id, é ✓ 😀, past a few words","method":"x"}"#,
        ];
        for text in usual {
            let quick = message(text).unwrap_or_else(|| panic!("usual: {text}"));
            let general = decode(text.as_bytes()).unwrap();
            assert_eq!(quick.to_vec(), general.to_vec(), "{text}");
        }
        let other = [
            // Valid, but for the general decoder to judge.
            r#"{"jsonrpc":"2.0","id":1.0,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1e0,"method":"x"}"#,
            r#"{"jsonrpc":"\u0032.0","id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","\u0069d":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b","method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","extra":true}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":99999999999999999999999,"method":"x"}"#,
            // Invalid, in ways the general decoder words.
            r#"{"jsonrpc":"2.0","id":1,"jsonrpc"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method"params":{},"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":12,"id"method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"x","params":{},"params"id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","idx":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","i":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.00","id":1,"method":"x"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
            r#"{"id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":01,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x"} x"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x",}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\tb\"}",
            r#"{"jsonrpc":"2.0","id":-,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":"a long string id whose \"quote\" is escaped","method":"x"}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"notifications/cancel\u{1}led\"}",
            "{}",
            "{",
        ];
        for text in other {
            assert!(
                message(text).is_none(),
                "left to the general decoder: {text}"
            );
        }
    }
}
