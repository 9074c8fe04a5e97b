//! Reading HTTP/1.1 requests off a connection, in bounded memory: the head (request line and
//! header fields, at most `max_head` bytes in all) and the body (`Content-Length` or chunked),
//! never more than the caller asks for.
//!
//! Strict where leniency would let two parsers disagree about where a request ends (request
//! smuggling): a `Content-Length` beside a `Transfer-Encoding`, two different lengths, a
//! transfer coding other than `chunked`, folded header lines, and whitespace before a field's
//! colon are all refused with 400.

use std::io::{self, BufRead, BufReader, Read, Write};

/// A request head as read off the wire.
#[derive(Debug)]
pub(super) struct Head {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    /// HTTP/1.0 (no chunked answers; keep-alive only when asked for).
    pub http10: bool,
    pub content_length: Option<u64>,
    pub chunked: bool,
    /// `Expect: 100-continue`: the client waits for a 100 before it sends the body.
    pub expect_continue: bool,
    /// The client wants the connection kept after this request.
    pub keep_alive: bool,
}

/// Why no head could be read.
#[derive(Debug)]
pub(super) enum HeadError {
    /// The connection ended (or timed out) before a request began: no answer is due.
    Closed,
    /// The head is longer than allowed: 431.
    TooLarge,
    /// Not HTTP/1.x: 505.
    Version,
    /// A transfer coding we do not implement: 501.
    Unsupported,
    /// Malformed: 400.
    Bad(&'static str),
    /// The connection failed or timed out in the middle of a head: nothing can be answered.
    Io,
}

/// Reads one line ending in LF (a CR before it is dropped) into `line`, counting its bytes
/// against `budget`. `refill` is asked before each read that has to wait for the peer (the
/// buffer is empty); false ends the line with [`HeadError::Io`].
fn read_line<R: Read>(
    r: &mut BufReader<R>,
    line: &mut Vec<u8>,
    budget: &mut usize,
    refill: &mut dyn FnMut() -> bool,
) -> Result<(), HeadError> {
    line.clear();
    loop {
        if r.buffer().is_empty() && !refill() {
            return Err(HeadError::Io);
        }
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(HeadError::Io),
        };
        if buf.is_empty() {
            return Err(HeadError::Io);
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if take > *budget {
            return Err(HeadError::TooLarge);
        }
        *budget -= take;
        line.extend_from_slice(&buf[..take]);
        r.consume(take);
        if done {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(());
        }
    }
}

fn is_token(s: &[u8]) -> bool {
    !s.is_empty()
        && s.iter()
            .all(|&c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c))
}

/// Header fields a request may carry once only (RFC 9112 says so of `Host`; the others name
/// one origin, one credential, one session, one revision or one resumption point, and the
/// 2026-07-28 routing headers one method and one name, which a proxy routes or authorizes on:
/// with two, it and this server could each go by a different one). `Mcp-Param-*` fields too,
/// each name once.
const SINGLE: [&str; 8] = [
    "Host",
    "Origin",
    "Authorization",
    "Mcp-Session-Id",
    "Mcp-Protocol-Version",
    "Last-Event-ID",
    "Mcp-Method",
    "Mcp-Name",
];

/// The prefix of the 2026-07-28 parameter headers (one per name, see [`SINGLE`]).
const PARAM_PREFIX: &str = "mcp-param-";

/// Reads the next request head. Before the first byte of a request, the end of the stream (or
/// a timeout) is [`HeadError::Closed`]. Once it has begun, `refill` is asked before every read
/// that has to wait for more of the head (never when the head came in one piece), so the caller
/// can bound the whole head in time: a client that sends a byte now and then, each within the
/// socket's read timeout, cannot hold the connection for long.
pub(super) fn read_head<R: Read>(
    r: &mut BufReader<R>,
    max_head: usize,
    refill: &mut dyn FnMut() -> bool,
) -> Result<Head, HeadError> {
    let mut budget = max_head;
    // Wait for the first byte separately: running out of input here is an ordinary close.
    loop {
        match r.fill_buf() {
            Ok([]) => return Err(HeadError::Closed),
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(HeadError::Closed),
        }
    }
    let mut line = Vec::with_capacity(128);
    // RFC 9112 2.2: empty lines before a request line are ignored.
    let mut empties = 0;
    loop {
        read_line(r, &mut line, &mut budget, refill)?;
        if !line.is_empty() {
            break;
        }
        empties += 1;
        if empties > 4 {
            return Err(HeadError::Bad("empty lines instead of a request line"));
        }
    }
    let mut parts = line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Bad("malformed request line"));
    };
    if !is_token(method) {
        return Err(HeadError::Bad("malformed method"));
    }
    if target.is_empty() || target.iter().any(|&c| c <= b' ' || c == 0x7f) {
        return Err(HeadError::Bad("malformed request target"));
    }
    let http10 = match version {
        b"HTTP/1.1" => false,
        b"HTTP/1.0" => true,
        v if v.starts_with(b"HTTP/") => return Err(HeadError::Version),
        _ => return Err(HeadError::Bad("malformed HTTP version")),
    };
    // Both checked to be ASCII above.
    let method = String::from_utf8_lossy(method).to_ascii_uppercase();
    let target = String::from_utf8_lossy(target).into_owned();

    let mut headers = Vec::new();
    let mut content_length: Option<u64> = None;
    let mut singles = 0u8;
    let mut transfer_encoding = false;
    let mut chunked = false;
    let mut expect_continue = false;
    let mut connection_close = false;
    let mut connection_keep_alive = false;
    loop {
        read_line(r, &mut line, &mut budget, refill)?;
        if line.is_empty() {
            break;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            return Err(HeadError::Bad("folded header lines are not accepted"));
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Err(HeadError::Bad("a header line without a colon"));
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if !is_token(name) {
            return Err(HeadError::Bad("malformed header name"));
        }
        let value = value.trim_ascii();
        if value.iter().any(|&c| (c < b' ' && c != b'\t') || c == 0x7f) {
            return Err(HeadError::Bad("control characters in a header value"));
        }
        let Ok(value) = std::str::from_utf8(value) else {
            return Err(HeadError::Bad("a header value that is not UTF-8"));
        };
        // `name` is a token, hence ASCII.
        let name = String::from_utf8_lossy(name).into_owned();
        if let Some(i) = SINGLE.iter().position(|s| name.eq_ignore_ascii_case(s)) {
            // One of each: with two, this server and a proxy before it could each take a
            // different one (a `Host` checked here, another routed on).
            if singles & (1 << i) != 0 {
                return Err(HeadError::Bad(
                    "a header field that may appear once appears twice",
                ));
            }
            singles |= 1 << i;
        } else if name
            .get(..PARAM_PREFIX.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(PARAM_PREFIX))
            && headers
                .iter()
                .any(|(n, _): &(String, String)| n.eq_ignore_ascii_case(&name))
        {
            return Err(HeadError::Bad(
                "a header field that may appear once appears twice",
            ));
        }
        if name.eq_ignore_ascii_case("Content-Length") {
            let Some(n) = parse_length(value) else {
                return Err(HeadError::Bad("malformed Content-Length"));
            };
            if content_length.is_some_and(|m| m != n) {
                return Err(HeadError::Bad("conflicting Content-Length fields"));
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case("Transfer-Encoding") {
            transfer_encoding = true;
            for coding in value.split(',').map(str::trim).filter(|c| !c.is_empty()) {
                if chunked {
                    // Nothing may follow `chunked`.
                    return Err(HeadError::Bad("chunked must be the last transfer coding"));
                }
                if coding.eq_ignore_ascii_case("chunked") {
                    chunked = true;
                } else {
                    return Err(HeadError::Unsupported);
                }
            }
        } else if name.eq_ignore_ascii_case("Expect") {
            expect_continue = value.eq_ignore_ascii_case("100-continue");
        } else if name.eq_ignore_ascii_case("Connection") {
            for opt in value.split(',').map(str::trim) {
                connection_close |= opt.eq_ignore_ascii_case("close");
                connection_keep_alive |= opt.eq_ignore_ascii_case("keep-alive");
            }
        }
        headers.push((name, value.to_owned()));
    }
    if transfer_encoding && (content_length.is_some() || http10 || !chunked) {
        return Err(HeadError::Bad(
            "Transfer-Encoding with Content-Length, on HTTP/1.0, or not ending in chunked",
        ));
    }
    let keep_alive = !connection_close && (!http10 || connection_keep_alive);
    Ok(Head {
        method,
        target,
        headers,
        http10,
        content_length,
        chunked,
        expect_continue,
        keep_alive,
    })
}

fn parse_length(v: &str) -> Option<u64> {
    if v.is_empty() || v.len() > 19 || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

/// Where a body stands.
#[derive(Debug, Clone, Copy)]
enum Framing {
    /// So many bytes left.
    Length(u64),
    /// Inside a chunk with so many bytes left (0: a chunk-size line comes next).
    Chunk { left: u64, first: bool },
    /// All of it read (for chunked: the trailer too).
    Done,
    /// The framing was broken: the connection cannot be reused.
    Broken,
}

/// Longest chunk-size or trailer line accepted.
const MAX_CHUNK_LINE: usize = 4096;

/// The body of one request, read from the connection's buffered reader. Reading it first
/// sends `100 Continue` when the client asked for one.
pub(super) struct BodyReader<'a, R, W> {
    src: &'a mut BufReader<R>,
    framing: Framing,
    continue_to: Option<W>,
    /// Called before each read that has to wait for the peer (nothing buffered); false when
    /// the body's time is up (see [`BodyReader::before_waits`]).
    before_wait: Option<Box<dyn FnMut() -> bool + 'a>>,
}

impl<'a, R: Read, W: Write> BodyReader<'a, R, W> {
    pub(super) fn new(src: &'a mut BufReader<R>, head: &Head, continue_to: W) -> Self {
        let framing = if head.chunked {
            Framing::Chunk {
                left: 0,
                first: true,
            }
        } else {
            match head.content_length {
                Some(0) | None => Framing::Done,
                Some(n) => Framing::Length(n),
            }
        };
        let continue_to =
            (head.expect_continue && !matches!(framing, Framing::Done)).then_some(continue_to);
        BodyReader {
            src,
            framing,
            continue_to,
            before_wait: None,
        }
    }

    /// Calls `f` before each read that has to wait for the peer; when it says false the read
    /// fails (`TimedOut`) and the body is broken. The connection checks the body's deadline
    /// there, so that a body dripped a byte at a time ends instead of holding its place under
    /// the server's cap for as long as the bytes keep coming.
    pub(super) fn before_waits(mut self, f: impl FnMut() -> bool + 'a) -> Self {
        self.before_wait = Some(Box::new(f));
        self
    }

    /// Whether the next read may wait for the peer: false (the body broken) when the
    /// deadline said no.
    fn may_wait(&mut self) -> io::Result<()> {
        if !self.src.buffer().is_empty() {
            return Ok(());
        }
        if self.before_wait.as_mut().is_none_or(|f| f()) {
            return Ok(());
        }
        self.framing = Framing::Broken;
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the body did not arrive in time",
        ))
    }

    /// True once the whole body (and a chunked body's trailer) has been read.
    pub(super) fn finished(&self) -> bool {
        matches!(self.framing, Framing::Done)
    }

    /// Reads and drops what is left of the body, up to `limit` bytes; true when the body then
    /// ended, so the connection can carry another request.
    pub(super) fn drain(&mut self, limit: u64) -> bool {
        if self.continue_to.is_some() {
            // The client has not sent the body and waits for our word: it will get the
            // answer instead, and the connection closes.
            return false;
        }
        if let Framing::Length(left) = self.framing {
            if left > limit {
                // Declared larger than we would read: no use waiting for any of it.
                return false;
            }
        }
        let mut sink = [0u8; 4096];
        let mut left = limit;
        while !self.finished() {
            if left == 0 {
                return false;
            }
            let want = sink.len().min(left as usize);
            match self.read(&mut sink[..want]) {
                Ok(0) | Err(_) => return self.finished(),
                Ok(n) => left -= n as u64,
            }
        }
        true
    }

    fn chunk_line(&mut self) -> io::Result<Vec<u8>> {
        let mut line = Vec::new();
        let mut budget = MAX_CHUNK_LINE;
        let before_wait = &mut self.before_wait;
        let mut refill = || before_wait.as_mut().is_none_or(|f| f());
        read_line(self.src, &mut line, &mut budget, &mut refill).map_err(|e| match e {
            HeadError::TooLarge => {
                io::Error::new(io::ErrorKind::InvalidData, "chunk line too long")
            }
            _ => io::Error::new(io::ErrorKind::UnexpectedEof, "the body ended early"),
        })?;
        Ok(line)
    }

    fn broken(&mut self, why: &'static str) -> io::Error {
        self.framing = Framing::Broken;
        io::Error::new(io::ErrorKind::InvalidData, why)
    }
}

impl<R: Read, W: Write> Read for BodyReader<'_, R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if let Some(mut w) = self.continue_to.take() {
            w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
            w.flush()?;
        }
        loop {
            match self.framing {
                Framing::Done => return Ok(0),
                Framing::Broken => {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, "broken body"));
                }
                Framing::Length(left) => {
                    let want = buf.len().min(left.min(usize::MAX as u64) as usize);
                    self.may_wait()?;
                    let n = self.src.read(&mut buf[..want])?;
                    if n == 0 {
                        return Err(self.broken("the body ended early"));
                    }
                    let left = left - n as u64;
                    self.framing = if left == 0 {
                        Framing::Done
                    } else {
                        Framing::Length(left)
                    };
                    return Ok(n);
                }
                Framing::Chunk { left: 0, first } => {
                    if !first {
                        // The CRLF after the previous chunk's data.
                        let end = self.chunk_line()?;
                        if !end.is_empty() {
                            return Err(self.broken("chunk data longer than its size"));
                        }
                    }
                    let line = self.chunk_line()?;
                    let size = line.split(|&b| b == b';').next().unwrap_or(&[]);
                    let size = std::str::from_utf8(size.trim_ascii())
                        .ok()
                        // `1*HEXDIG` (RFC 9112 §7.1): `from_str_radix` alone takes a `+`.
                        .filter(|s| {
                            !s.is_empty()
                                && s.len() <= 15
                                && s.bytes().all(|b| b.is_ascii_hexdigit())
                        })
                        .and_then(|s| u64::from_str_radix(s, 16).ok());
                    match size {
                        None => return Err(self.broken("malformed chunk size")),
                        Some(0) => {
                            // The trailer: header lines up to an empty one, all dropped.
                            for _ in 0..64 {
                                if self.chunk_line()?.is_empty() {
                                    self.framing = Framing::Done;
                                    return Ok(0);
                                }
                            }
                            return Err(self.broken("trailer too long"));
                        }
                        Some(n) => {
                            self.framing = Framing::Chunk {
                                left: n,
                                first: false,
                            };
                        }
                    }
                }
                Framing::Chunk { left, .. } => {
                    let want = buf.len().min(left.min(usize::MAX as u64) as usize);
                    self.may_wait()?;
                    let n = self.src.read(&mut buf[..want])?;
                    if n == 0 {
                        return Err(self.broken("the body ended early"));
                    }
                    self.framing = Framing::Chunk {
                        left: left - n as u64,
                        first: false,
                    };
                    return Ok(n);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Result<Head, HeadError> {
        read_head(&mut BufReader::new(text.as_bytes()), 8192, &mut || true)
    }

    fn body(text: &str) -> (Vec<u8>, bool) {
        let mut r = BufReader::new(text.as_bytes());
        let h = read_head(&mut r, 8192, &mut || true).unwrap();
        let mut b = BodyReader::new(&mut r, &h, Vec::new());
        let mut out = Vec::new();
        let ok = b.read_to_end(&mut out).is_ok();
        (out, ok && b.finished())
    }

    #[test]
    fn a_plain_request_head() {
        let h = head("POST /mcp?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc").unwrap();
        assert_eq!((h.method.as_str(), h.target.as_str()), ("POST", "/mcp?x=1"));
        assert_eq!(h.content_length, Some(3));
        assert!(h.keep_alive && !h.http10 && !h.chunked);
        assert_eq!(h.headers[0], ("Host".to_owned(), "a".to_owned()));
    }

    #[test]
    fn keep_alive_follows_the_version_and_the_connection_field() {
        assert!(
            !head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
                .unwrap()
                .keep_alive
        );
        assert!(!head("GET / HTTP/1.0\r\n\r\n").unwrap().keep_alive);
        assert!(
            head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
                .unwrap()
                .keep_alive
        );
    }

    #[test]
    fn smuggling_shapes_are_refused() {
        for bad in [
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            "POST / HTTP/1.1\r\nHost : a\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n",
            "POST /a b HTTP/1.1\r\n\r\n",
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n",
            "POST / HTTP/1.1\r\nOrigin: http://localhost\r\norigin: http://evil.example\r\n\r\n",
            "POST / HTTP/1.1\r\nMcp-Session-Id: a\r\nMcp-Session-Id: b\r\n\r\n",
        ] {
            assert!(matches!(head(bad), Err(HeadError::Bad(_))), "{bad:?}");
        }
        assert!(matches!(
            head("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"),
            Err(HeadError::Unsupported)
        ));
        assert!(matches!(
            head("GET / HTTP/2.0\r\n\r\n"),
            Err(HeadError::Version)
        ));
    }

    #[test]
    fn the_head_is_bounded_in_size_and_a_silent_peer_is_a_close() {
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(10_000));
        assert!(matches!(head(&big), Err(HeadError::TooLarge)));
        // A line with no end at all is refused once it passes the limit, not buffered.
        let endless = "G".repeat(100_000);
        assert!(matches!(head(&endless), Err(HeadError::TooLarge)));
        assert!(matches!(head(""), Err(HeadError::Closed)));
        assert!(matches!(head("GET / HTTP/1.1\r\nHo"), Err(HeadError::Io)));
    }

    #[test]
    fn bodies_by_length_and_by_chunks() {
        assert_eq!(
            body("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcdef"),
            (b"abc".to_vec(), true)
        );
        let chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\nNEXT";
        assert_eq!(body(chunked), (b"abcde".to_vec(), true));
        let short = "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc";
        assert!(!body(short).1);
        let bad = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n";
        assert!(!body(bad).1);
        let long = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n";
        assert!(!body(long).1);
        // A size is hex digits only: a sign or a prefix another parser may read otherwise
        // (where the body ends: request smuggling) is refused.
        for size in ["+3", "-3", "0x3", "3 3"] {
            let signed = format!(
                "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{size}\r\nabc\r\n0\r\n\r\n"
            );
            assert!(!body(&signed).1, "{size}");
        }
    }

    #[test]
    fn the_refill_hook_is_asked_only_when_the_head_comes_in_pieces() {
        /// Hands out its bytes in pieces of at most `n`.
        struct Pieces<'a>(&'a [u8], usize);
        impl Read for Pieces<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.1.min(buf.len()).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let text = b"POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n";
        let mut asked = 0;
        let mut whole = BufReader::new(Pieces(text, 4096));
        read_head(&mut whole, 8192, &mut || {
            asked += 1;
            true
        })
        .unwrap();
        assert_eq!(asked, 0, "a head in one piece never asks");
        let mut trickle = BufReader::new(Pieces(text, 5));
        read_head(&mut trickle, 8192, &mut || {
            asked += 1;
            true
        })
        .unwrap();
        assert!(asked > 5, "a trickled head asks before each read");
        // A deadline that has passed ends the head.
        let mut trickle = BufReader::new(Pieces(text, 5));
        assert!(matches!(
            read_head(&mut trickle, 8192, &mut || false),
            Err(HeadError::Io)
        ));
    }

    #[test]
    fn a_client_expecting_100_continue_gets_it_on_the_first_read_only() {
        let mut r = BufReader::new(
            &b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok"[..],
        );
        let h = read_head(&mut r, 8192, &mut || true).unwrap();
        let mut sent = Vec::new();
        let mut out = Vec::new();
        BodyReader::new(&mut r, &h, &mut sent)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, b"ok");
        assert_eq!(sent, b"HTTP/1.1 100 Continue\r\n\r\n");
    }

    #[test]
    fn draining_stops_at_its_limit() {
        let text = format!(
            "POST / HTTP/1.1\r\nContent-Length: 10000\r\n\r\n{}",
            "x".repeat(10_000)
        );
        let mut r = BufReader::new(text.as_bytes());
        let h = read_head(&mut r, 8192, &mut || true).unwrap();
        assert!(!BodyReader::new(&mut r, &h, Vec::new()).drain(100));
        let mut r = BufReader::new(text.as_bytes());
        let h = read_head(&mut r, 8192, &mut || true).unwrap();
        assert!(BodyReader::new(&mut r, &h, Vec::new()).drain(1 << 20));
    }
}
