//! Writing a response on a connection: a complete body in one write, or an SSE stream event by
//! event (one chunk and one flush each, `:` comments while idle, the terminating chunk last).

use std::io::{self, Write};

use crossbeam_channel::Receiver;

use crate::server::http::{Body, HttpResponse, SseBody, SseNext, StreamEnd};

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
/// its connection, so a client that reads to the end of the stream sees EOF at once.
pub(super) fn write_response(
    w: &mut impl Write,
    resp: HttpResponse,
    keep_alive: bool,
    http10: bool,
    hangup: Hangup<'_>,
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
            // A small body goes out with its head in one write; a large one after it, not
            // copied: a client that does not read its answer holds the write (up to the write
            // timeout), and with it one copy of a 4 MiB answer rather than two.
            let written = if bytes.len() <= SMALL_BODY {
                out.extend_from_slice(&bytes);
                drop(bytes);
                w.write_all(&out)
            } else {
                w.write_all(&out).and_then(|()| w.write_all(&bytes))
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
            write_sse(w, status, &headers, sse, !http10, http10);
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
    w: &mut impl Write,
    status: u16,
    headers: &[(String, String)],
    mut sse: SseBody,
    chunked: bool,
    http10: bool,
) {
    let mut buf = Vec::with_capacity(512);
    head(&mut buf, status, headers, http10);
    if chunked {
        buf.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    }
    buf.extend_from_slice(b"Connection: close\r\n\r\n");
    // The head goes out at once: a client waits for it before it treats the stream as open.
    let mut ok = flush_out(w, &mut buf).is_ok();
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
            // from where it is, after its chunk header, not copied behind it: every connection
            // replaying a 3.5 MB history to a client that did not read held a copy of it.
            SseNext::Event(e) if e.len() > SMALL_BODY => {
                if chunked {
                    buf.extend_from_slice(format!("{:x}\r\n", e.len()).as_bytes());
                }
                wrote = w.write_all(&buf).and_then(|()| w.write_all(&e)).is_ok();
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
        ok = wrote && flush_out(w, &mut buf).is_ok();
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

fn flush_out(w: &mut impl Write, buf: &mut Vec<u8>) -> io::Result<()> {
    let r = w.write_all(buf).and_then(|_| w.flush());
    buf.clear();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(resp: HttpResponse, keep: bool, http10: bool) -> (String, After) {
        let mut out = Vec::new();
        let after = write_response(&mut out, resp, keep, http10, None);
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
            write_response(&mut out, resp, false, http10, None);
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
