//! The top-level `"id"` of a line too long to keep, and whether it has a `"method"`, found as
//! the line streams past: a client whose answer was too large fails that call at once with the
//! reason (rather than at its timeout), and a server refuses a request by its id. Only the
//! id's own text is held (at most [`MAX_ID_TEXT`] bytes); a member name or an id written with
//! escapes is not recognised.

use mcp_core::jsonrpc::RequestId;

/// The longest id text looked at.
const MAX_ID_TEXT: usize = 256;

/// The scan's state between chunks of one line.
#[derive(Debug, Default)]
pub(crate) struct IdScan {
    depth: u32,
    in_str: bool,
    escaped: bool,
    /// At depth 1, the next string is a member name.
    want_key: bool,
    /// Reading a member name at depth 1 (the first bytes of it, enough to tell `id` and
    /// `method`).
    key: Option<Vec<u8>>,
    /// A top-level `method` member was seen: the line is a request or a notification.
    method: bool,
    /// A top-level `result` or `error` member was seen: without `method`, an answer.
    answer: bool,
    /// The member just named is `id`: its value comes after the `:`.
    id_next: bool,
    /// The id's text so far.
    value: Option<Vec<u8>>,
    found: Option<RequestId>,
}

impl IdScan {
    /// Reads the next part of the line (out of line: only over-long lines come here).
    #[cold]
    #[inline(never)]
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    /// The id of the request this line answers, once that is certain before the line ends:
    /// its top-level `id` was read, and a `result` or `error` member, and no `method`, came
    /// before the bytes read so far. (A later `method` would make it no message at all, so
    /// reporting it as a too-large answer is still true.)
    pub(crate) fn answered(&self) -> Option<&RequestId> {
        self.found.as_ref().filter(|_| self.answer && !self.method)
    }

    /// The id found so far, for a line reported before its end (see [`IdScan::answered`]).
    pub(crate) fn into_found(self) -> Option<RequestId> {
        self.found
    }

    /// The id, if the line had one at its top level, and whether it had a `method` (a
    /// request; without, an answer).
    pub(crate) fn finish(mut self) -> (Option<RequestId>, bool) {
        if self.value.is_some() {
            // The line ended inside the value (a number last, with no `}` after it).
            self.end_value();
        }
        (self.found, self.method)
    }

    fn byte(&mut self, b: u8) {
        if let Some(v) = self.value.as_mut() {
            v.push(b);
            if v.len() > MAX_ID_TEXT {
                self.value = None;
            }
        }
        if self.in_str {
            if self.escaped {
                self.escaped = false;
                // An escaped name is not matched: it is dropped.
                self.key = None;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_str = false;
                if let Some(k) = self.key.take() {
                    self.id_next = k == b"id";
                    self.method |= k == b"method";
                    self.answer |= k == b"result" || k == b"error";
                }
            } else if let Some(k) = self.key.as_mut() {
                if k.len() < 6 {
                    k.push(b);
                } else {
                    self.key = None;
                }
            }
            return;
        }
        match b {
            b'"' => {
                self.in_str = true;
                if self.depth == 1 && self.want_key {
                    self.want_key = false;
                    self.key = Some(Vec::new());
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                // An id is a string or a number: a nested value is none.
                self.value = None;
                if self.depth == 1 {
                    self.want_key = b == b'{';
                }
            }
            b':' if self.depth == 1 && self.id_next => {
                self.id_next = false;
                self.value = Some(Vec::new());
            }
            b',' | b'}' | b']' if self.depth == 1 => {
                if self.value.is_some() {
                    self.end_value();
                }
                self.want_key = b == b',';
                if b != b',' {
                    self.depth -= 1;
                }
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }

    fn end_value(&mut self) {
        let Some(mut text) = self.value.take() else {
            return;
        };
        // The delimiter that ended it was pushed with it.
        if matches!(text.last(), Some(b',' | b'}' | b']')) {
            text.pop();
        }
        if let Some(id) = plain_id(text.trim_ascii()) {
            self.found = Some(id);
        }
    }
}

/// An id written plainly: a string without escapes, or an integer (nothing else is worth a
/// parser here: the id only says which call failed).
fn plain_id(text: &[u8]) -> Option<RequestId> {
    match text {
        [b'"', inner @ .., b'"'] if !inner.contains(&b'\\') => std::str::from_utf8(inner)
            .ok()
            .map(|s| RequestId::String(s.to_owned())),
        _ => std::str::from_utf8(text)
            .ok()?
            .parse()
            .ok()
            .map(RequestId::Number),
    }
}

#[cfg(test)]
mod tests {
    use super::IdScan;
    use mcp_core::jsonrpc::RequestId;

    fn scan(parts: &[&str]) -> Option<RequestId> {
        let mut s = IdScan::default();
        for p in parts {
            s.feed(p.as_bytes());
        }
        s.finish().0
    }

    #[test]
    fn tells_a_request_from_an_answer() {
        let mut s = IdScan::default();
        s.feed(br#"{"jsonrpc":"2.0","id":1,"params":{"method":"no"},"method":"tools/call"}"#);
        assert_eq!(s.finish(), (Some(RequestId::Number(1)), true));
        let mut s = IdScan::default();
        s.feed(br#"{"jsonrpc":"2.0","id":1,"result":{"method":"no"}}"#);
        assert_eq!(s.finish(), (Some(RequestId::Number(1)), false));
    }

    #[test]
    fn finds_the_top_level_id_before_or_after_a_large_result() {
        let big = "x".repeat(10_000);
        let first = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"text":"{big}"}}}}"#);
        assert_eq!(scan(&[&first]), Some(RequestId::Number(7)));
        // Last, as the TypeScript SDK writes it, and split across chunks anywhere.
        let last = format!(
            r#"{{"result":{{"id":1,"text":"{big}\"id\":2"}},"jsonrpc":"2.0","id": "a-9" }}"#
        );
        for cut in [1, 17, 5000, last.len() - 3] {
            let (a, b) = last.split_at(cut);
            assert_eq!(
                scan(&[a, b]),
                Some(RequestId::String("a-9".into())),
                "{cut}"
            );
        }
        // A nested `id` alone is not the message's, and a line with no top-level id has none.
        assert_eq!(scan(&[r#"{"result":{"id":3}}"#]), None);
        assert_eq!(scan(&[r#"{"method":"x","params":{"id":3}}"#]), None);
        assert_eq!(scan(&[r#"{"id":{"a":1},"result":1}"#]), None);
        assert_eq!(scan(&[r#"[{"id":4}]"#]), None);
    }
}
