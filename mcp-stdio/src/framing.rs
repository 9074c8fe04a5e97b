//! Newline-delimited JSON-RPC: one message per line, over any [`BufRead`] and [`Write`].
//!
//! The MCP stdio transport puts each message on its own line with no newline inside it. The
//! reader here is the defensive half: a peer may send CRLF line ends, blank lines, garbage or a
//! line of a gigabyte. Each bad line becomes a [`FrameError`] the caller can answer, and the next
//! line is read as usual. An over-long line is skipped byte by byte as it arrives rather than
//! collected, so memory stays bounded by the configured limit plus one read chunk.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};

use mcp_core::jsonrpc::{
    self, DecodeError, ErrorObject, Message, Payload as Incoming, RequestId, Response, ResultValue,
    codes,
};
use mcp_core::version::ProtocolVersion;
use std::sync::Arc;

use crate::id_scan::IdScan;
use crate::negotiated::Negotiated;

/// The default longest line accepted: 4 MiB, well above any sane MCP message, well below what
/// would hurt a small machine.
pub const DEFAULT_MAX_LINE_LEN: usize = 4 * 1024 * 1024;

/// Why a line gave no message.
#[derive(Debug)]
#[non_exhaustive]
pub enum FrameError {
    /// The line was longer than the limit; it was discarded without being kept in memory.
    TooLarge {
        /// How many bytes the discarded line held (without its line end); for an answer
        /// reported before its line ended (so that its call fails at once, even if the line
        /// never ends), how many had gone by then.
        len: usize,
        /// The limit in force.
        limit: usize,
        /// The message's top-level `id`, when the line had one (read as the line streamed
        /// past, see the `id_scan` module).
        id: Option<RequestId>,
        /// Whether the line had a top-level `method`: with an `id`, a request (answered by
        /// that id); without, an answer to the request of that id.
        method: bool,
    },
    /// The line was not UTF-8, not JSON (-32700) or not a JSON-RPC message (-32600); also
    /// one element of a batch, which is judged on its own.
    Decode(DecodeError),
    /// Reading the stream failed; no more lines will come.
    Io(io::Error),
}

impl FrameError {
    /// The error response the peer should get, or `None` when nobody may be answered: after an
    /// I/O error (nobody to answer), for an invalid notification
    /// ([`DecodeError::is_notification`]), which JSON-RPC forbids answering, and for an invalid
    /// response ([`DecodeError::is_response`]), which is never answered. An over-long line
    /// is answered (id null) even if it held a notification: it is never read, so nobody knows.
    pub fn to_response(&self) -> Option<Message> {
        match self {
            FrameError::TooLarge {
                len,
                limit,
                id,
                method,
            } => Some(Message::error(
                // A request is refused by its id; anything else as before, by none.
                id.clone().filter(|_| *method),
                ErrorObject::new(codes::INVALID_REQUEST, "message too large")
                    .with_data(serde_json::json!({ "length": len, "maxLength": limit })),
            )),
            FrameError::Decode(e) if !e.is_answered() => None,
            FrameError::Decode(e) => Some(e.to_response()),
            FrameError::Io(_) => None,
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLarge { len, limit, .. } => write!(
                f,
                "a line of {len} bytes exceeded the {limit}-byte limit and was discarded"
            ),
            FrameError::Decode(e) => write!(f, "undecodable line: {e}"),
            FrameError::Io(e) => write!(f, "reading the stream failed: {e}"),
        }
    }
}

impl std::error::Error for FrameError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FrameError::Decode(e) => Some(e),
            FrameError::Io(e) => Some(e),
            FrameError::TooLarge { .. } => None,
        }
    }
}

/// What [`read_bounded_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LineRead {
    /// A line is in the buffer (line end and a trailing `\r` removed).
    Line,
    /// A line longer than the limit was skipped; it held this many bytes, this top-level id
    /// and (the first flag) a top-level `method`. With the second flag (only `early`), the
    /// line was found to answer the request of that id before it ended, and is reported then,
    /// with the bytes seen so far (the call fails at once even if the line never ends): its
    /// rest is still unread, for [`skip_line`] to drop.
    TooLarge(usize, Option<RequestId>, bool, bool),
    /// End of stream.
    Eof,
}

/// What [`read_bounded_line`] reports for an over-long line it read to the end: its length,
/// id and whether it had a `method`.
fn scanned(scan: IdScan, seen: usize) -> LineRead {
    let (id, method) = scan.finish();
    LineRead::TooLarge(seen, id, method, false)
}

/// Reads one line into `buf` (cleared first), keeping at most `limit` bytes. A longer line is
/// consumed and dropped chunk by chunk, so nothing beyond `limit` plus the reader's own buffer
/// is ever held. A last line without `\n` before EOF still counts as a line. With `early`, an
/// over-long answer may come back before its line ends (see [`LineRead::TooLarge`]).
pub(crate) fn read_bounded_line<R: BufRead>(
    r: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
    early: bool,
) -> io::Result<LineRead> {
    buf.clear();
    // The limit is on the message: a line may hold one byte more, the `\r` of a CRLF ending.
    let raw_limit = limit.saturating_add(1);
    let mut seen = 0usize;
    let ended = |buf: &mut Vec<u8>, seen: usize| {
        strip_cr(buf);
        if buf.len() > limit {
            too_large(buf, &[], seen)
        } else {
            LineRead::Line
        }
    };
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(if seen == 0 {
                LineRead::Eof
            } else {
                ended(buf, seen)
            });
        }
        let (part, used, done) = match find_newline(chunk) {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        seen = seen.saturating_add(part.len());
        if seen > raw_limit {
            // Too long: what was kept and the rest of the line go by unkept, their id read
            // (out of line, and once for every reader type: this is the rare case).
            let mut scan = IdScan::default();
            scan.feed(buf);
            scan.feed(part);
            buf.clear();
            r.consume(used);
            return if done {
                Ok(scanned(scan, seen))
            } else {
                discard_rest(r, scan, seen, early)
            };
        }
        push_bounded(buf, part, raw_limit);
        r.consume(used);
        if done {
            return Ok(ended(buf, seen));
        }
    }
}

/// A line found too long once it ended: its id, and it goes.
#[cold]
#[inline(never)]
fn too_large(buf: &mut Vec<u8>, part: &[u8], seen: usize) -> LineRead {
    let mut scan = IdScan::default();
    scan.feed(buf);
    scan.feed(part);
    buf.clear();
    scanned(scan, seen)
}

/// Reads the rest of an over-long line without keeping it, its id scanned as it goes by;
/// with `early`, stops as soon as it is known to be an answer (see [`LineRead::TooLarge`]).
#[cold]
#[inline(never)]
fn discard_rest(
    r: &mut dyn BufRead,
    mut scan: IdScan,
    mut seen: usize,
    early: bool,
) -> io::Result<LineRead> {
    loop {
        if early && scan.answered().is_some() {
            return Ok(LineRead::TooLarge(seen, scan.into_found(), false, true));
        }
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(scanned(scan, seen));
        }
        let (part, used, done) = match find_newline(chunk) {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        seen = seen.saturating_add(part.len());
        scan.feed(part);
        r.consume(used);
        if done {
            return Ok(scanned(scan, seen));
        }
    }
}

/// Drops what is left of a line (up to and with its `\n`, or to the end of the stream).
fn skip_line(r: &mut dyn BufRead) -> io::Result<()> {
    discard_rest(r, IdScan::default(), 0, false).map(drop)
}

/// The index of the first `\n` in `bytes`. Every input byte passes through here, and a plain
/// byte loop was the reader's own largest cost: this looks at 32 bytes a step (no early exit
/// inside a step, so that the compiler compares them at once), then finds the newline in the
/// step that holds it a machine word at a time (the classic "has a zero byte" trick on the word
/// XOR newlines, whose lowest flag is exact), byte by byte only in a tail shorter than a word.
fn find_newline(bytes: &[u8]) -> Option<usize> {
    const STEP: usize = 32;
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    const NEWLINES: u64 = u64::from_le_bytes([b'\n'; 8]);
    let mut start = 0;
    for step in bytes.chunks_exact(STEP) {
        if step.iter().fold(false, |seen, &b| seen | (b == b'\n')) {
            break;
        }
        start += STEP;
    }
    for word in bytes[start..].chunks_exact(8) {
        let mut a = [0u8; 8];
        a.copy_from_slice(word);
        let x = u64::from_le_bytes(a) ^ NEWLINES;
        let flags = x.wrapping_sub(ONES) & !x & HIGHS;
        if flags != 0 {
            return Some(start + (flags.trailing_zeros() / 8) as usize);
        }
        start += 8;
    }
    bytes[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| start + i)
}

/// Appends without letting `Vec`'s doubling overshoot the limit.
fn push_bounded(buf: &mut Vec<u8>, part: &[u8], limit: usize) {
    let needed = buf.len() + part.len();
    if needed > buf.capacity() {
        let target = (buf.capacity() * 2).max(needed).min(limit).max(needed);
        buf.reserve_exact(target - buf.len());
    }
    buf.extend_from_slice(part);
}

fn strip_cr(buf: &mut Vec<u8>) {
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Reads messages, one per line, from a [`BufRead`].
///
/// Yields `Ok(message)` per message, `Err(FrameError::TooLarge | Decode)` per bad line (the next
/// line is read normally afterwards), and ends after EOF or the first `Err(FrameError::Io)`.
/// Blank lines are skipped; a batch (a JSON array) is split into its elements when batches are
/// allowed, each element yielded on its own (a bad element as its own `Decode` error), and is a
/// `Decode` error (-32600) otherwise.
///
/// ```
/// use mcp_stdio::MessageReader;
///
/// let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\nnot json\n";
/// let mut reader = MessageReader::new(&input[..]);
/// assert_eq!(reader.next().unwrap().unwrap().method(), Some("ping"));
/// assert!(reader.next().unwrap().is_err()); // -32700, answered by the caller
/// assert!(reader.next().is_none());
/// ```
#[derive(Debug)]
pub struct MessageReader<R> {
    inner: R,
    max_line_len: usize,
    allow_batches: bool,
    line: Vec<u8>,
    queued: VecDeque<Result<Message, DecodeError>>,
    /// The answers the batch just read owes (see [`take_batch_answers`](Self::take_batch_answers)).
    batch_answers: Option<Vec<Option<RequestId>>>,
    /// The last message read came from a batch.
    batched: bool,
    /// The rest of the last line goes before the next one is read (see `LineRead::TooLarge`).
    skipping: bool,
    done: bool,
    /// A server's session: batches follow the revision it negotiated.
    negotiated: Option<Arc<Negotiated>>,
}

impl<R: Read> MessageReader<BufReader<R>> {
    /// Whether a message can be had without waiting for input: a batch element is queued, or
    /// bytes are already buffered. A server uses it to hold back flushing its answers while
    /// more requests are at hand, and to flush before the read that would block.
    pub fn has_buffered(&self) -> bool {
        !self.queued.is_empty() || !self.inner.buffer().is_empty()
    }
}

impl<R: BufRead> MessageReader<R> {
    /// A reader with the default limit ([`DEFAULT_MAX_LINE_LEN`]) that refuses batches.
    pub fn new(inner: R) -> Self {
        MessageReader {
            inner,
            max_line_len: DEFAULT_MAX_LINE_LEN,
            allow_batches: false,
            line: Vec::new(),
            queued: VecDeque::new(),
            batch_answers: None,
            batched: false,
            skipping: false,
            done: false,
            negotiated: None,
        }
    }

    /// Follows the batch rule of every transport for a server's session: a batch only where
    /// the revision `negotiated` learned has them (and never with `initialize`).
    pub(crate) fn with_negotiated(mut self, negotiated: Arc<Negotiated>) -> Self {
        self.negotiated = Some(negotiated);
        self
    }

    /// Sets the longest line accepted, in bytes (at least 1).
    pub fn with_max_line_len(mut self, limit: usize) -> Self {
        self.max_line_len = limit.max(1);
        self
    }

    /// Accepts JSON-RPC batches (only the 2025-03-26 revision has them) and splits them.
    pub fn with_batches(mut self, allow: bool) -> Self {
        self.allow_batches = allow;
        self
    }

    /// Changes whether batches are accepted, for a caller that learns the revision mid-stream.
    pub fn set_allow_batches(&mut self, allow: bool) {
        self.allow_batches = allow;
    }

    /// The longest line accepted.
    pub fn max_line_len(&self) -> usize {
        self.max_line_len
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The underlying reader, mutably (reading from it directly breaks framing).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Gives back the underlying reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Bytes held for the current line; never more than the limit.
    #[cfg(test)]
    fn line_capacity(&self) -> usize {
        self.line.capacity()
    }

    /// The next message or bad line; `None` after EOF or an I/O error.
    pub fn read_message(&mut self) -> Option<Result<Message, FrameError>> {
        match self.read_next(false)? {
            Ok(Next::Message(m)) => Some(Ok(m)),
            // Not asked for.
            Ok(Next::Line(line)) => self.decode_taken(line),
            Err(e) => Some(Err(e)),
        }
    }

    /// As [`read_message`](Self::read_message), but with `lines`, a line that holds a single
    /// JSON object in valid UTF-8 comes undecoded, taken from the reader: the caller serves it
    /// from its text, or hands it back to [`decode_taken`](Self::decode_taken).
    pub(crate) fn read_next(&mut self, lines: bool) -> Option<Result<Next, FrameError>> {
        if let Some(item) = self.queued.pop_front() {
            return Some(item.map(Next::Message).map_err(FrameError::Decode));
        }
        self.batched = false;
        while !self.done {
            let skipped = match std::mem::take(&mut self.skipping) {
                true => skip_line(&mut self.inner),
                false => Ok(()),
            };
            let read = skipped.and_then(|()| {
                read_bounded_line(&mut self.inner, &mut self.line, self.max_line_len, true)
            });
            match read {
                Err(e) => {
                    self.done = true;
                    return Some(Err(FrameError::Io(e)));
                }
                Ok(LineRead::Eof) => self.done = true,
                Ok(LineRead::TooLarge(len, id, method, open)) => {
                    self.skipping = open;
                    return Some(Err(FrameError::TooLarge {
                        len,
                        limit: self.max_line_len,
                        id,
                        method,
                    }));
                }
                Ok(LineRead::Line) if is_blank(&self.line) => {}
                Ok(LineRead::Line) if lines && self.line.first() == Some(&b'{') => {
                    return match String::from_utf8(std::mem::take(&mut self.line)) {
                        Ok(line) => Some(Ok(Next::Line(line))),
                        Err(e) => {
                            self.line = e.into_bytes();
                            self.decode_line().map(|r| r.map(Next::Message))
                        }
                    };
                }
                Ok(LineRead::Line) => return self.decode_line().map(|r| r.map(Next::Message)),
            }
        }
        None
    }

    /// Decodes a line [`read_next`](Self::read_next) handed out (its buffer comes back to the
    /// reader).
    pub(crate) fn decode_taken(&mut self, line: String) -> Option<Result<Message, FrameError>> {
        self.line = line.into_bytes();
        self.decode_line()
    }

    /// Gives back the buffer of a line served from its text, for the next line to reuse.
    pub(crate) fn give_back(&mut self, line: String) {
        if self.line.capacity() < line.capacity() {
            self.line = line.into_bytes();
        }
    }

    fn decode_line(&mut self) -> Option<Result<Message, FrameError>> {
        match jsonrpc::decode_incoming(&self.line, self.allow_batches) {
            Err(e) => Some(Err(FrameError::Decode(e))),
            Ok(Incoming::Single(m)) => {
                if let Some(n) = &self.negotiated {
                    n.incoming(&m);
                }
                Some(Ok(m))
            }
            Ok(Incoming::Batch(items)) => self.batch(items),
        }
    }
}

/// What [`MessageReader::read_next`] read.
pub(crate) enum Next {
    /// A line holding one JSON object (valid UTF-8), undecoded.
    Line(String),
    /// A message.
    Message(Message),
}

impl<R> MessageReader<R> {
    /// A batch's first message, the rest queued (out of line: batches are rare, and only in
    /// 2025-03-26).
    #[inline(never)]
    fn batch(
        &mut self,
        mut items: Vec<Result<Message, jsonrpc::DecodeError>>,
    ) -> Option<Result<Message, FrameError>> {
        // One rule for stdio and HTTP; a reader of no session (batches allowed by its owner)
        // still never takes `initialize` in one.
        let negotiated = match &self.negotiated {
            Some(n) => n.version(),
            None => Some(ProtocolVersion::V2025_03_26),
        };
        if let Err(e) = jsonrpc::check_batch(negotiated, &mut items) {
            return Some(Err(FrameError::Decode(e)));
        }
        // What the batch's answer array will hold: one response per request, and one per
        // element refused with an answer (its id, or null when none could be read).
        let owed: Vec<Option<RequestId>> = items
            .iter()
            .filter_map(|item| match item {
                Ok(Message::Request(r)) => Some(Some(r.id.clone())),
                Ok(_) => None,
                Err(e) if e.is_answered() => Some(e.to_response().id().cloned()),
                Err(_) => None,
            })
            .collect();
        if !owed.is_empty() {
            self.batch_answers = Some(owed);
        }
        self.batched = true;
        self.queued.extend(items);
        // decode_incoming never yields an empty batch.
        self.queued
            .pop_front()
            .map(|item| item.map_err(FrameError::Decode))
    }
}

impl<R> MessageReader<R> {
    /// After a read that opened a batch: the answers it owes, for a server to send as one
    /// array (JSON-RPC 2.0 §6); `None` after any other read.
    pub(crate) fn take_batch_answers(&mut self) -> Option<Vec<Option<RequestId>>> {
        self.batch_answers.take()
    }

    /// Whether the message just read is an element of a batch.
    pub(crate) fn batched(&self) -> bool {
        self.batched
    }
}

impl<R: BufRead> Iterator for MessageReader<R> {
    type Item = Result<Message, FrameError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.read_message()
    }
}

/// Writes messages, one per line. It does not flush on its own: the caller flushes when it has
/// nothing more queued, so pipelined replies leave in one write.
#[derive(Debug)]
pub struct MessageWriter<W> {
    inner: W,
    scratch: Vec<u8>,
}

/// A scratch buffer kept after a huge message is released rather than held forever.
const SCRATCH_KEEP: usize = 1024 * 1024;

impl<W: Write> MessageWriter<W> {
    /// Wraps a writer; wrap it in a `BufWriter` first if it is unbuffered.
    pub fn new(inner: W) -> Self {
        MessageWriter {
            inner,
            scratch: Vec::with_capacity(1024),
        }
    }

    /// Writes one message and its `\n` in a single `write_all`, without flushing.
    ///
    /// # Errors
    /// When the underlying writer fails (for a pipe: the peer is gone).
    pub fn write_message(&mut self, msg: &Message) -> io::Result<()> {
        self.scratch.clear();
        msg.encode_into(&mut self.scratch);
        self.scratch.push(b'\n');
        let r = self.inner.write_all(&self.scratch);
        if self.scratch.capacity() > SCRATCH_KEEP {
            self.scratch = Vec::with_capacity(1024);
        }
        r
    }

    /// Writes the answers to a batch as one line, a JSON array.
    pub(crate) fn write_batch(&mut self, msgs: &[Message]) -> io::Result<()> {
        self.scratch.clear();
        self.scratch.extend_from_slice(&jsonrpc::encode_batch(msgs));
        self.scratch.push(b'\n');
        let r = self.inner.write_all(&self.scratch);
        if self.scratch.capacity() > SCRATCH_KEEP {
            self.scratch = Vec::with_capacity(1024);
        }
        r
    }

    /// Writes the answer to `id` with `result` serialized straight into its frame (see
    /// [`Response::encode_result_into`]): the line [`write_message`](Self::write_message)
    /// writes for [`Response::message`]. Nothing is written when `result` cannot be serialized.
    ///
    /// # Errors
    /// When serialization or the underlying writer fails.
    pub fn write_result(&mut self, id: &RequestId, result: &dyn ResultValue) -> io::Result<()> {
        self.scratch.clear();
        Response::encode_result_into(id, result, &mut self.scratch).map_err(io::Error::other)?;
        self.scratch.push(b'\n');
        let r = self.inner.write_all(&self.scratch);
        if self.scratch.capacity() > SCRATCH_KEEP {
            self.scratch = Vec::with_capacity(1024);
        }
        r
    }

    /// Flushes the underlying writer.
    ///
    /// # Errors
    /// When the underlying writer fails.
    pub fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The underlying writer, mutably.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Gives back the underlying writer (unflushed).
    pub fn into_inner(self) -> W {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use mcp_core::jsonrpc::{RequestId, Response};
    use mcp_core::types::CallToolResult;
    use serde_json::json;

    use super::MessageWriter;

    #[test]
    fn a_result_written_into_its_frame_is_the_line_of_its_message() {
        let mut structured = CallToolResult::structured(json!({"a": [1, "x\ny"]}));
        structured.is_error = Some(false);
        for (id, result) in [
            (
                RequestId::Number(7),
                CallToolResult::text("h\u{e9}llo \"x\"\n\u{1}"),
            ),
            (
                RequestId::String("a\"b\n".into()),
                CallToolResult::error("e"),
            ),
            (RequestId::Number(-1), structured),
        ] {
            let mut direct = MessageWriter::new(Vec::new());
            direct.write_result(&id, &result).unwrap();
            let mut message = MessageWriter::new(Vec::new());
            message
                .write_message(&Response::message(&id, &result))
                .unwrap();
            let direct = direct.into_inner();
            assert_eq!(direct, message.into_inner());
            // One line.
            assert_eq!(direct.iter().filter(|&&b| b == b'\n').count(), 1);
            assert_eq!(direct.last(), Some(&b'\n'));
        }
    }

    #[test]
    fn finds_the_first_newline_at_every_offset() {
        for len in 0..100 {
            for at in 0..=len {
                let mut v = vec![b'a'; len];
                // Bytes next to a newline in value, to catch a sloppy word test.
                v.iter_mut().step_by(3).for_each(|b| *b = 0x0b);
                v.iter_mut().skip(1).step_by(5).for_each(|b| *b = 0x8a);
                if at < len {
                    v[at] = b'\n';
                    if at + 2 < len {
                        v[at + 2] = b'\n';
                    }
                }
                let want = v.iter().position(|&b| b == b'\n');
                assert_eq!(super::find_newline(&v), want, "len {len} at {at}");
            }
        }
    }
    use super::*;
    use std::io::{BufReader, Read};

    fn items(input: &[u8], limit: usize, batches: bool) -> Vec<Result<Message, FrameError>> {
        MessageReader::new(input)
            .with_max_line_len(limit)
            .with_batches(batches)
            .collect()
    }

    const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

    #[test]
    fn crlf_blank_lines_and_missing_final_newline() {
        let input = format!("\r\n{PING}\r\n\n   \n\t\r\n{PING}");
        let got = items(input.as_bytes(), 1024, false);
        assert_eq!(got.len(), 2);
        for m in got {
            assert_eq!(m.unwrap().method(), Some("ping"));
        }
    }

    #[test]
    fn garbage_then_valid_line() {
        let input = format!("garbage\n{{\"jsonrpc\":\n{PING}\n");
        let got = items(input.as_bytes(), 1024, false);
        assert_eq!(got.len(), 3);
        for bad in &got[..2] {
            match bad {
                Err(FrameError::Decode(e)) => {
                    assert_eq!(e.error.code, codes::PARSE_ERROR);
                    assert_eq!(e.id, None);
                }
                other => panic!("expected a parse error, got {other:?}"),
            }
        }
        assert!(got[2].is_ok());
    }

    #[test]
    fn invalid_utf8_is_a_parse_error_and_reading_goes_on() {
        let mut input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}\n".to_vec();
        input.extend_from_slice(PING.as_bytes());
        let got = items(&input, 1024, false);
        let Err(FrameError::Decode(e)) = &got[0] else {
            panic!("expected a decode error, got {:?}", got[0]);
        };
        assert_eq!(e.error.code, codes::PARSE_ERROR);
        let resp = got[0].as_ref().unwrap_err().to_response().unwrap();
        assert_eq!(
            String::from_utf8(resp.to_vec()).unwrap(),
            format!(
                r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32700,"message":{}}}}}"#,
                serde_json::to_string(&e.error.message).unwrap()
            )
        );
        assert!(got[1].is_ok());
    }

    #[test]
    fn invalid_request_keeps_its_id() {
        let got = items(br#"{"jsonrpc":"1.0","id":9,"method":"x"}"#, 1024, false);
        let resp = got[0].as_ref().unwrap_err().to_response().unwrap();
        assert_eq!(resp.id(), Some(&mcp_core::jsonrpc::RequestId::Number(9)));
    }

    #[test]
    fn an_invalid_notification_is_reported_but_never_answered() {
        let got = items(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
            1024,
            false,
        );
        let Err(e @ FrameError::Decode(d)) = &got[0] else {
            panic!("expected a decode error, got {:?}", got[0]);
        };
        assert!(d.is_notification());
        assert!(e.to_response().is_none());
    }

    #[test]
    fn line_exactly_at_the_limit_is_accepted() {
        let got = items(PING.as_bytes(), PING.len(), false);
        assert!(got[0].is_ok());
        let got = items(PING.as_bytes(), PING.len() - 1, false);
        assert!(matches!(got[0], Err(FrameError::TooLarge { len, .. }) if len == PING.len()));
        // The limit is on the message: a CRLF ending's `\r` does not count against it, with
        // or without the newline after it.
        let crlf = format!("{PING}\r\n");
        assert!(items(crlf.as_bytes(), PING.len(), false)[0].is_ok());
        assert!(items(format!("{PING}\r").as_bytes(), PING.len(), false)[0].is_ok());
        let got = items(crlf.as_bytes(), PING.len() - 1, false);
        assert!(matches!(got[0], Err(FrameError::TooLarge { .. })));
    }

    #[test]
    fn ten_mib_line_with_four_mib_limit_is_skipped_in_bounded_memory() {
        // The big line is generated lazily: the test itself never holds 10 MiB.
        let big = io::repeat(b'a').take(10 * 1024 * 1024);
        let rest = format!("\n{PING}\n");
        let input = BufReader::with_capacity(8192, big.chain(rest.as_bytes()));
        let mut reader = MessageReader::new(input);
        match reader.next() {
            Some(Err(e @ FrameError::TooLarge { .. })) => {
                let FrameError::TooLarge { len, limit, .. } = e else {
                    unreachable!()
                };
                assert_eq!(len, 10 * 1024 * 1024);
                assert_eq!(limit, DEFAULT_MAX_LINE_LEN);
                let resp = e.to_response().unwrap();
                let Message::Error(err) = resp else {
                    panic!("expected an error response")
                };
                assert_eq!(err.id, None);
                assert_eq!(err.error.code, codes::INVALID_REQUEST);
                assert_eq!(err.error.message, "message too large");
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
        assert!(reader.line_capacity() <= DEFAULT_MAX_LINE_LEN);
        assert_eq!(reader.next().unwrap().unwrap().method(), Some("ping"));
        assert!(reader.next().is_none());
    }

    #[test]
    fn oversized_last_line_without_newline() {
        let input = vec![b'x'; 100];
        let got = items(&input, 10, false);
        assert_eq!(got.len(), 1);
        assert!(matches!(
            got[0],
            Err(FrameError::TooLarge {
                len: 100,
                limit: 10,
                id: None,
                method: false
            })
        ));
    }

    #[test]
    fn batches_split_or_refused() {
        // Ids differ: a batch refuses a request that reuses an earlier one's id.
        let ping2 = PING.replace("\"id\":1", "\"id\":2");
        let batch = format!("[{PING},{{\"jsonrpc\":\"2.0\",\"method\":5}},{ping2}]\n{PING}\n");
        let got = items(batch.as_bytes(), 1024, true);
        assert_eq!(got.len(), 4);
        assert!(got[0].is_ok());
        assert!(
            matches!(&got[1], Err(FrameError::Decode(e)) if e.error.code == codes::INVALID_REQUEST)
        );
        assert!(got[2].is_ok() && got[3].is_ok());

        let got = items(batch.as_bytes(), 1024, false);
        assert_eq!(got.len(), 2);
        assert!(
            matches!(&got[0], Err(FrameError::Decode(e)) if e.error.code == codes::INVALID_REQUEST)
        );
        assert!(got[1].is_ok());
    }

    #[test]
    fn io_error_ends_the_stream() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("boom"))
            }
        }
        let mut r = MessageReader::new(BufReader::new(Broken));
        assert!(matches!(r.next(), Some(Err(FrameError::Io(_)))));
        assert!(r.next().is_none());
    }

    #[test]
    fn writer_puts_one_message_per_line() {
        let m = jsonrpc::decode(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\n\"a\": \"b\\nc\"\n}}",
        )
        .unwrap();
        let mut w = MessageWriter::new(Vec::new());
        w.write_message(&m).unwrap();
        w.write_message(&m).unwrap();
        w.flush().unwrap();
        let out = w.into_inner();
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 2);
        let back: Vec<_> = items(&out, 1024, false);
        assert_eq!(back.len(), 2);
        assert!(
            back.iter()
                .all(|m| m.as_ref().unwrap().method() == Some("x"))
        );
    }
}
