//! Writing a response on a connection: a complete body in one write, or an SSE stream event by
//! event (one chunk and one flush each, `:` comments while idle, the terminating chunk last).
//!
//! Each response, and each event of a stream, must be written within a deadline, however slowly
//! the client reads (see [`send`]): the socket's write timeout alone bounds one write call, and
//! a client that reads a little now and then makes every call progress, so `write_all` would
//! hold the connection, its thread and the answer for as long as the trickle went on.

use std::io::{self, IoSlice, Write};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use crate::server::http::{Body, HttpResponse, SseBody, SseNext, StreamEnd};

/// Where responses are written: the connection's socket, whose send timeout bounds each write
/// call.
pub(super) trait Sink: Write {
    /// Sets the time limit of each write call from now on (the socket's `SO_SNDTIMEO`).
    fn set_write_timeout(&self, d: Duration) -> io::Result<()>;
    /// Gives up on the connection after a failed write: what is still unsent is thrown away
    /// when it closes (a reset), rather than kept in kernel buffers for a client that does not
    /// read it; the response is incomplete anyway.
    fn abandon(&self);
}

/// Once a response (or an SSE event) did not go out in one write call, it must keep pace with
/// this many bytes per io timeout (2 MiB per 30 s: 70 KB/s) to go on being written (see
/// [`send`]).
const BYTES_PER_TIMEOUT: f64 = 2.0 * 1024.0 * 1024.0;

/// Writes `first` then `second` in full, as one response (or one SSE event), within its
/// deadline, however slowly the client reads. The first write call has one io timeout (`io`,
/// the socket's write timeout), as ever, and almost always writes everything: a blocking
/// socket's write returns short only when its timeout ran out (or a signal came). When it
/// returns short, the rest has one more io timeout from then, plus one for each
/// [`BYTES_PER_TIMEOUT`] the client takes meanwhile. So a client that reads nothing, or a
/// trickle (a few bytes every few seconds, each read renewing the socket's timeout of one
/// write call), is cut off after about two io timeouts (60 s by default) instead of holding
/// the connection, its thread and the answer for hours; an honest client on a slow link still
/// gets a big answer, however long it takes, if it reads 70 KB/s or more (at the default 30 s;
/// kernel buffers take the first few MB of an answer at once anyway).
///
/// The common case costs nothing new: a response that goes out in one write (a `writev` with
/// a large body) takes one system call, as before, and nothing else. Only a short write arms
/// the deadline: each further call's timeout is set to the time left (at most `io`, so a
/// client that stops reading is still cut off after `io`), and restored to `io` after. When
/// the deadline passes, the connection is abandoned (see [`Sink::abandon`]).
fn send(w: &mut impl Sink, first: &[u8], second: &[u8], io: Duration) -> io::Result<()> {
    let total = first.len() + second.len();
    let mut done = 0;
    // The socket's write timeout as last set.
    let mut limit = io;
    // When the first write call returned short, and what it wrote.
    let mut armed: Option<(Instant, usize)> = None;
    let r = loop {
        let (a, b) = match first.get(done..) {
            Some(a) if !a.is_empty() => (a, second),
            _ => (&second[done - first.len()..], &[][..]),
        };
        if a.is_empty() {
            break Ok(());
        }
        if let Some((since, base)) = armed {
            let earned = (done - base) as f64 / BYTES_PER_TIMEOUT;
            let end = since + io.mul_f64(1.0 + earned);
            let left = end.saturating_duration_since(Instant::now()).min(io);
            if left.is_zero() {
                break Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the client did not read the response in time",
                ));
            }
            if left != limit {
                if let Err(e) = w.set_write_timeout(left) {
                    break Err(e);
                }
                limit = left;
            }
        }
        let wrote = if b.is_empty() {
            w.write(a)
        } else {
            w.write_vectored(&[IoSlice::new(a), IoSlice::new(b)])
        };
        match wrote {
            Ok(0) => break Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
        if armed.is_none() && done < total {
            armed = Some((Instant::now(), done));
        }
    };
    let r = r.and_then(|()| {
        if limit == io {
            Ok(())
        } else {
            w.set_write_timeout(io)
        }
    });
    if r.is_err() {
        w.abandon();
    }
    r
}

/// How the connection goes on after a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum After {
    /// Ready for the next request.
    KeepAlive,
    /// Closed once the response is out (`Connection: close` was sent, or writing failed).
    Close,
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "Status",
    }
}

fn head(out: &mut Vec<u8>, status: u16, headers: &[(String, String)], http10: bool) {
    let version = if http10 { "HTTP/1.0" } else { "HTTP/1.1" };
    out.extend_from_slice(format!("{version} {status} {}\r\n", reason(status)).as_bytes());
    for (n, v) in headers {
        // The core's values are its own or checked text; a line break would split the head.
        if n.bytes().chain(v.bytes()).any(|b| b == b'\r' || b == b'\n') {
            log::warn!("dropping a response header with a line break: {n}");
            continue;
        }
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

/// The largest body written in one piece with its head (see `write_response`).
const SMALL_BODY: usize = 64 * 1024;

/// Writes `resp`. `keep_alive`: the connection may carry another request afterwards (the
/// client wants it and the request's body was read to its end); an SSE stream always closes
/// its connection, so a client that reads to the end of the stream sees EOF at once. `io`: the
/// connection's io timeout (the socket's write timeout), from which each response's and each
/// event's deadline follows (see [`send`]).
pub(super) fn write_response(
    w: &mut impl Sink,
    resp: HttpResponse,
    keep_alive: bool,
    http10: bool,
    hangup: Hangup<'_>,
    io: Duration,
) -> After {
    let HttpResponse {
        status,
        headers,
        body,
    } = resp;
    match body {
        Body::Bytes(bytes) => {
            let mut out = Vec::with_capacity(128 + bytes.len().min(SMALL_BODY));
            head(&mut out, status, &headers, http10);
            out.extend_from_slice(format!("Content-Length: {}\r\n", bytes.len()).as_bytes());
            match (keep_alive, http10) {
                (false, _) => out.extend_from_slice(b"Connection: close\r\n"),
                (true, true) => out.extend_from_slice(b"Connection: keep-alive\r\n"),
                (true, false) => {}
            }
            out.extend_from_slice(b"\r\n");
            // A small body goes out with its head in one write; a large one beside it (one
            // writev), not copied: a client that does not read its answer holds the write (up
            // to its deadline), and with it one copy of a 4 MiB answer rather than two.
            let written = if bytes.len() <= SMALL_BODY {
                out.extend_from_slice(&bytes);
                drop(bytes);
                send(w, &out, &[], io)
            } else {
                send(w, &out, &bytes, io)
            };
            match written.and_then(|()| w.flush()) {
                Ok(()) if keep_alive => After::KeepAlive,
                Ok(()) => After::Close,
                Err(e) => {
                    log::debug!("writing a response failed: {e}");
                    After::Close
                }
            }
        }
        Body::Sse(mut sse) => {
            if sse.wants_hangup_watch() {
                if let Some(rx) = hangup.and_then(|watch| watch()) {
                    sse.set_hangup(rx);
                }
            }
            write_sse(w, status, &headers, sse, !http10, http10, io);
            After::Close
        }
    }
}

/// Starts watching the response's connection for the client's hang-up, for a stream that
/// needs it (see `SseBody::set_hangup`): the receiver gets a message, or disconnects, when the
/// client is gone. `None` when no watch could start (the stream then learns of the hang-up at
/// its next write, as any other).
pub(super) type Hangup<'a> = Option<&'a dyn Fn() -> Option<Receiver<()>>>;

fn chunk(out: &mut Vec<u8>, data: &[u8], chunked: bool) {
    if chunked {
        out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
        out.extend_from_slice(data);
        out.extend_from_slice(b"\r\n");
    } else {
        out.extend_from_slice(data);
    }
}

fn write_sse(
    w: &mut impl Sink,
    status: u16,
    headers: &[(String, String)],
    mut sse: SseBody,
    chunked: bool,
    http10: bool,
    io: Duration,
) {
    let mut buf = Vec::with_capacity(512);
    head(&mut buf, status, headers, http10);
    if chunked {
        buf.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    }
    buf.extend_from_slice(b"Connection: close\r\n\r\n");
    // The head goes out at once: a client waits for it before it treats the stream as open.
    let mut ok = flush_out(w, &mut buf, io).is_ok();
    while ok {
        let next = sse.next_event();
        if sse.hung_up() {
            // Nobody reads the rest: nothing more is written, and the owner learns it now.
            ok = false;
            break;
        }
        let end = matches!(next, SseNext::End);
        let mut wrote = true;
        match next {
            // A large event (a big answer, a replay shared with the event store) is written
            // from where it is, beside its chunk header, not copied behind it: every connection
            // replaying a 3.5 MB history to a client that did not read held a copy of it.
            SseNext::Event(e) if e.len() > SMALL_BODY => {
                if chunked {
                    buf.extend_from_slice(format!("{:x}\r\n", e.len()).as_bytes());
                }
                wrote = send(w, &buf, &e, io).is_ok();
                buf.clear();
                if chunked {
                    buf.extend_from_slice(b"\r\n");
                }
            }
            SseNext::Event(e) => chunk(&mut buf, &e, chunked),
            SseNext::Idle => chunk(&mut buf, b":\n\n", chunked),
            SseNext::End if chunked => buf.extend_from_slice(b"0\r\n\r\n"),
            SseNext::End => {}
        }
        ok = wrote && flush_out(w, &mut buf, io).is_ok();
        if end {
            break;
        }
    }
    sse.finish(if ok {
        StreamEnd::Completed
    } else {
        StreamEnd::ClientGone
    });
}

/// Writes one piece of a stream (its head, an event, a keep-alive comment, its end) within its
/// deadline (see [`send`]).
fn flush_out(w: &mut impl Sink, buf: &mut Vec<u8>, io: Duration) -> io::Result<()> {
    let r = send(w, buf, &[], io).and_then(|()| w.flush());
    buf.clear();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Sink for Vec<u8> {
        fn set_write_timeout(&self, _: Duration) -> io::Result<()> {
            Ok(())
        }
        fn abandon(&self) {}
    }

    fn text(resp: HttpResponse, keep: bool, http10: bool) -> (String, After) {
        let mut out = Vec::new();
        let io = Duration::from_secs(1);
        let after = write_response(&mut out, resp, keep, http10, None, io);
        (String::from_utf8(out).unwrap(), after)
    }

    #[test]
    fn a_body_goes_with_its_length_and_says_when_the_connection_closes() {
        let (t, a) = text(HttpResponse::json(200, b"{}".to_vec()), true, false);
        assert_eq!(a, After::KeepAlive);
        assert!(t.starts_with("HTTP/1.1 200 OK\r\n"));
        assert!(t.contains("Content-Length: 2\r\n") && !t.contains("Connection"));
        assert!(t.ends_with("\r\n\r\n{}"));
        let (t, a) = text(HttpResponse::empty(413), false, false);
        assert_eq!(a, After::Close);
        assert!(t.contains("Connection: close\r\n"));
        let (t, _) = text(HttpResponse::empty(202), true, true);
        assert!(t.starts_with("HTTP/1.0 202") && t.contains("Connection: keep-alive\r\n"));
    }

    /// A sink that takes at most 7 bytes per write call, as a slow reader's socket does, and
    /// records the write timeouts it is given.
    #[derive(Default)]
    struct Short {
        out: Vec<u8>,
        timeouts: std::cell::RefCell<Vec<Duration>>,
        abandoned: std::cell::Cell<bool>,
    }

    impl Write for Short {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(7);
            self.out.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sink for Short {
        fn set_write_timeout(&self, d: Duration) -> io::Result<()> {
            self.timeouts.borrow_mut().push(d);
            Ok(())
        }
        fn abandon(&self) {
            self.abandoned.set(true);
        }
    }

    #[test]
    fn short_writes_go_on_within_the_deadline_and_restore_the_timeout() {
        let io = Duration::from_secs(60);
        let mut w = Short::default();
        send(&mut w, b"head: 1\r\n\r\n", b"a body in pieces", io).unwrap();
        assert_eq!(w.out, b"head: 1\r\n\r\na body in pieces");
        // Each call after the first had the time left, at most `io`; the socket has `io` again.
        let t = w.timeouts.borrow();
        assert!(t.iter().all(|d| *d <= io));
        assert_eq!(t.last().copied().unwrap_or(io), io);
        assert!(!w.abandoned.get());
        // No time left after the first call: given up, and the connection abandoned.
        let mut w = Short::default();
        let e = send(&mut w, b"head: 1\r\n\r\n", b"body", Duration::ZERO).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert_eq!(w.out.len(), 7);
        assert!(w.abandoned.get());
    }

    #[test]
    fn a_large_event_is_framed_like_a_small_one() {
        let big = vec![b'x'; SMALL_BODY + 7];
        for http10 in [false, true] {
            let body = crate::server::http::SseBody::new(
                vec![b"a".to_vec(), big.clone(), b"b".to_vec()],
                None,
                std::time::Duration::from_secs(1),
                None,
            );
            let resp = crate::server::answer::sse_response(body);
            let mut out = Vec::new();
            write_response(&mut out, resp, false, http10, None, Duration::from_secs(1));
            let at = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            let want: Vec<u8> = if http10 {
                [&b"a"[..], &big, b"b"].concat()
            } else {
                let size = format!("{:x}\r\n", big.len());
                [
                    &b"1\r\na\r\n"[..],
                    size.as_bytes(),
                    &big,
                    b"\r\n1\r\nb\r\n0\r\n\r\n",
                ]
                .concat()
            };
            assert!(out[at..] == want[..], "http10 {http10}");
        }
    }

    #[test]
    fn a_header_value_with_a_line_break_is_dropped() {
        let r = HttpResponse::empty(200).with_header("X-A", "a\r\nX-Evil: 1");
        let (t, _) = text(r, true, false);
        assert!(!t.contains("X-Evil"));
    }
}
