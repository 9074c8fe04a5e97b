//! A Server-Sent Events reader with a size bound: every line and every event is checked
//! against the per-message limit, so a hostile or broken server cannot make the client buffer
//! without end.

use std::io::{self, BufRead};

/// One dispatched event. Events without data (a priming event that only sets the id and the
/// retry hint) are returned too, because the id and retry matter for resumption.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Event {
    /// The `id:` field, when the event had one.
    pub id: Option<String>,
    /// The `retry:` hint in milliseconds.
    pub retry: Option<u64>,
    /// The `event:` type (the 2024-11-05 transport names its `endpoint` event).
    pub event: Option<String>,
    /// The data lines joined with `\n`.
    pub data: Vec<u8>,
}

/// Reads events from `r`, refusing any line or event larger than `max` bytes.
pub(crate) struct SseReader<R> {
    r: R,
    max: usize,
    line: Vec<u8>,
    /// The last line ended with `\r`: a `\n` right after it is the same line end.
    after_cr: bool,
    /// No line was read yet: a byte order mark there is skipped.
    first: bool,
}

fn too_large(max: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("an SSE event is larger than the {max}-byte limit"),
    )
}

impl<R: BufRead> SseReader<R> {
    pub(crate) fn new(r: R, max: usize) -> Self {
        SseReader {
            r,
            max,
            line: Vec::new(),
            after_cr: false,
            first: true,
        }
    }

    /// Reads one line without its terminator (`\r\n`, `\n` or a lone `\r`, as the SSE format
    /// allows); `false` at the end of input. A byte order mark before the first line is
    /// skipped.
    fn read_line(&mut self) -> io::Result<bool> {
        self.line.clear();
        loop {
            let buf = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                // A last line without a terminator is incomplete: the event is not dispatched.
                return Ok(false);
            }
            if std::mem::take(&mut self.after_cr) && buf[0] == b'\n' {
                self.r.consume(1);
                continue;
            }
            let (take, done) = match buf.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(i) => {
                    self.after_cr = buf[i] == b'\r';
                    (i + 1, true)
                }
                None => (buf.len(), false),
            };
            if self.line.len() + take > self.max + 2 {
                return Err(too_large(self.max));
            }
            self.line.extend_from_slice(&buf[..take]);
            self.r.consume(take);
            if done {
                self.line.pop();
                if std::mem::take(&mut self.first) {
                    if let Some(rest) = self.line.strip_prefix("\u{feff}".as_bytes()) {
                        self.line = rest.to_vec();
                    }
                }
                return Ok(true);
            }
        }
    }

    /// The next event, or `None` when the stream ended.
    pub(crate) fn next_event(&mut self) -> io::Result<Option<Event>> {
        let mut ev = Event::default();
        let mut any = false;
        let mut data_lines = 0usize;
        loop {
            if !self.read_line()? {
                return Ok(None);
            }
            if self.line.is_empty() {
                if any {
                    return Ok(Some(ev));
                }
                continue;
            }
            if self.line[0] == b':' {
                // A comment: the keep-alive of idle streams.
                continue;
            }
            let (field, value) = match self.line.iter().position(|&b| b == b':') {
                Some(i) => {
                    let v = &self.line[i + 1..];
                    (&self.line[..i], v.strip_prefix(b" ").unwrap_or(v))
                }
                None => (&self.line[..], &[][..]),
            };
            match field {
                b"data" => {
                    if ev.data.len() + value.len() + 1 > self.max {
                        return Err(too_large(self.max));
                    }
                    if data_lines > 0 {
                        ev.data.push(b'\n');
                    }
                    ev.data.extend_from_slice(value);
                    data_lines += 1;
                    any = true;
                }
                b"id" if !value.contains(&0) => {
                    ev.id = Some(String::from_utf8_lossy(value).into_owned());
                    any = true;
                }
                b"retry" => {
                    if let Some(ms) = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok()) {
                        ev.retry = Some(ms);
                        any = true;
                    }
                }
                b"event" => {
                    ev.event = Some(String::from_utf8_lossy(value).into_owned());
                    any = true;
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str, max: usize) -> Vec<io::Result<Option<Event>>> {
        let mut r = SseReader::new(text.as_bytes(), max);
        let mut out = Vec::new();
        loop {
            let e = r.next_event();
            let stop = !matches!(e, Ok(Some(_)));
            out.push(e);
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn parses_ids_retry_comments_and_multiline_data() {
        let text = ": hi\n\nid: 0-1\nretry: 250\ndata: \n\ndata: {\"a\":1}\r\n\r\nid: 0-3\ndata: x\ndata: y\n\ndata: cut";
        let evs: Vec<Event> = events(text, 1024)
            .into_iter()
            .filter_map(|e| e.unwrap())
            .collect();
        assert_eq!(evs.len(), 3);
        assert_eq!(evs[0].id.as_deref(), Some("0-1"));
        assert_eq!(evs[0].retry, Some(250));
        assert!(evs[0].data.is_empty());
        assert_eq!(evs[1].data, b"{\"a\":1}");
        assert_eq!(evs[1].id, None);
        assert_eq!(evs[2].data, b"x\ny");
        assert_eq!(evs[2].id.as_deref(), Some("0-3"));
    }

    /// Lines may end in `\r\n`, `\n` or a lone `\r` (even split across reads), and a byte
    /// order mark before the first line is skipped: each of these once hid the answer.
    #[test]
    fn every_line_end_and_a_leading_byte_order_mark_are_read() {
        let text = "\u{feff}id: 1\rdata: a\r\rdata: b\r\n\r\ndata: c\n\rdata: d\r\n\n";
        for capacity in [1, 2, 3, 64] {
            let mut r = SseReader::new(
                std::io::BufReader::with_capacity(capacity, text.as_bytes()),
                64,
            );
            let mut got = Vec::new();
            while let Some(e) = r.next_event().unwrap() {
                got.push((e.id, String::from_utf8(e.data).unwrap()));
            }
            assert_eq!(
                got,
                [
                    (Some("1".to_owned()), "a".to_owned()),
                    (None, "b".to_owned()),
                    (None, "c".to_owned()),
                    (None, "d".to_owned()),
                ],
                "read {capacity} bytes at a time"
            );
        }
    }

    #[test]
    fn oversized_lines_and_events_are_refused() {
        let long = format!("data: {}\n\n", "x".repeat(100));
        let out = events(&long, 50);
        assert!(matches!(&out[0], Err(e) if e.kind() == io::ErrorKind::FileTooLarge));
        let many = "data: 0123456789\n".repeat(10) + "\n";
        let out = events(&many, 50);
        assert!(matches!(&out[0], Err(e) if e.kind() == io::ErrorKind::FileTooLarge));
    }
}
