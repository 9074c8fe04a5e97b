//! One connection, on a worker of the server's connection executor: read a request, hand it to the transport core, write
//! the answer, and go on while the connection may carry another request.
//!
//! The core may run the request's handler right here, inside `handle_inline`. When the answer
//! must start before the handler is done (a progress notification, a question to the client,
//! a handler slower than the JSON window), the core calls the handoff, which writes the answer
//! from a job on the server's answer executor; this thread then waits for that answer to be written before it
//! reads the connection's next request, so answers keep the order of their requests.

use std::io::{self, BufReader, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};

use super::Shared;
use super::parse::{BodyReader, HeadError, read_head};
use super::write::{After, Sink, write_response};
use crate::server::answer::{Deferred, Handoff, Reply};
use crate::server::http::{HttpRequest, HttpResponse, accepts, err400};
use mcp_core::jsonrpc::{ErrorObject, codes};
use mcp_core::types::methods;

/// A connection waiting for its next request (a shutdown may close it at once).
pub(super) const IDLE: u8 = 0;
/// A connection whose request is being handled or answered.
pub(super) const BUSY: u8 = 1;

/// What is left of an unread request body that is read and dropped to keep the connection;
/// beyond it the connection closes instead.
const DRAIN_LIMIT: u64 = 64 * 1024;
/// How long a closing connection reads what the client still sends, so that the kernel does
/// not answer unread bytes with a reset that could destroy the response before it is read.
/// A client that writes its whole body before it reads (Node's `fetch` does) sees the 413
/// only if the body's rest is read: it is read and dropped, within these bounds.
const LINGER: Duration = Duration::from_secs(1);
/// At most this much is read while lingering.
const LINGER_BYTES: usize = 16 * 1024 * 1024;

/// The socket, shared by the reading side, the writers of this connection's answers and the
/// server's registry (which can shut it down).
#[derive(Clone)]
pub(super) struct Socket(pub(super) Arc<TcpStream>);

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&*self.0).read(buf)
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self.0).write(buf)
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        (&*self.0).write_vectored(bufs)
    }
    fn flush(&mut self) -> io::Result<()> {
        (&*self.0).flush()
    }
}

impl Sink for Socket {
    fn set_write_timeout(&self, d: Duration) -> io::Result<()> {
        self.0.set_write_timeout(Some(d))
    }
    fn abandon(&self) {
        // Linger off: the close that follows resets the connection and drops the unsent rest.
        let _ = socket2::SockRef::from(&*self.0).set_linger(Some(Duration::ZERO));
    }
}

/// Ends a connection: FIN at once, then (when the client may still be sending a body we did
/// not read) a short, bounded read of what comes, so the answer is not lost to a reset.
fn close(sock: &Socket, unread: bool) {
    let _ = sock.0.shutdown(Shutdown::Write);
    if unread {
        let deadline = Instant::now() + LINGER;
        let mut buf = [0u8; 4096];
        let mut total = 0;
        let mut s = sock.clone();
        while total < LINGER_BYTES {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || s.0.set_read_timeout(Some(left)).is_err() {
                break;
            }
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    }
    let _ = sock.0.shutdown(Shutdown::Both);
}

/// Watches `sock` for the client's hang-up, on a worker of `exec`: a blocking read that
/// returns at the client's FIN or reset (bytes the client still sends are dropped: only SSE
/// answers are watched, and their connection closes after them). The receiver gets a message
/// then; the watch ends by itself when the connection closes after the answer. Why a thread and
/// not the keep-alive: a write to a gone client may still succeed, so the writer notices a
/// hang-up only up to two keep-alives (30 s) later, and in the 2026-07-28 era the hang-up is
/// the request's cancellation, which the handler should see at once.
fn watch_hangup(exec: &mcp_core::executor::Executor, sock: &Socket) -> Option<Receiver<()>> {
    let (tx, rx) = bounded(1);
    let mut s = sock.clone();
    let started = exec.try_execute(move || {
        let mut buf = [0u8; 512];
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => break,
            }
        }
        let _ = tx.try_send(());
    });
    match started {
        Ok(()) => Some(rx),
        Err(e) => {
            log::debug!("no hang-up watch for a stream: {e}");
            None
        }
    }
}

/// The status that answers a head that could not be read, if any. A malformed head is 400 with
/// a JSON-RPC error (-32600, no id: none was read) saying what was wrong, like every other 400
/// of this server, so that an MCP client can show why.
fn refusal(e: &HeadError) -> Option<HttpResponse> {
    let bad = |why: &str| {
        log::debug!("refusing a request: {why}");
        err400(format!("Bad Request: {why}"))
    };
    match e {
        HeadError::Closed | HeadError::Io => None,
        HeadError::TooLarge => Some(refused(431, "the request head is too large")),
        HeadError::Version => Some(refused(505, "only HTTP/1.0 and HTTP/1.1 are spoken here")),
        HeadError::Unsupported => Some(refused(501, "a transfer coding other than chunked")),
        HeadError::Bad(why) => Some(bad(why)),
    }
}

/// A request whose answer is a stream that stays open for as long as its client wants: a `GET`
/// for SSE (a legacy session's stream, the 2024-11-05 `/sse`) or a 2026-07-28
/// `subscriptions/listen` (its `Mcp-Method` header is checked against the body later, so a
/// client cannot name one thing here and do another).
fn standing(req: &HttpRequest) -> bool {
    match req.method.as_str() {
        "GET" => accepts(req.header("Accept"), "text/event-stream"),
        "POST" => req
            .header("Mcp-Method")
            .is_some_and(|m| m.trim() == methods::SUBSCRIPTIONS_LISTEN),
        _ => false,
    }
}

/// Answers 503 with `Retry-After` (no place under a cap) and closes the connection unless it
/// can carry another request; true when it can.
fn busy<R: Read, W: Write>(
    what: &str,
    shared: &Shared,
    sock: &Socket,
    body: &mut BodyReader<'_, R, W>,
    wants_more: bool,
    http10: bool,
) -> bool {
    let busy = crate::server::http::busy(what, "1");
    let reuse = wants_more && drain(body, sock, shared.io_timeout);
    let io = shared.io_timeout;
    if write_response(&mut sock.clone(), busy, reuse, http10, None, io) == After::Close {
        close(sock, !body.finished());
        return false;
    }
    true
}

/// `status` with a JSON-RPC error (-32600, no id) saying `why`.
fn refused(status: u16, why: &str) -> HttpResponse {
    HttpResponse::rpc_error(status, None, ErrorObject::new(codes::INVALID_REQUEST, why))
}

/// How long an unread rest of a body may take to arrive when it is drained; a client that
/// stops sending meanwhile has its connection closed after the answer.
const DRAIN_WAIT: Duration = Duration::from_millis(200);

/// Reads and drops what is left of a body (see [`BodyReader::drain`]) within [`DRAIN_WAIT`];
/// true when the connection can carry another request.
fn drain<R: Read, W: Write>(body: &mut BodyReader<'_, R, W>, sock: &Socket, io: Duration) -> bool {
    if body.finished() {
        return true;
    }
    if sock.0.set_read_timeout(Some(DRAIN_WAIT)).is_err() {
        return false;
    }
    let drained = body.drain(DRAIN_LIMIT);
    drained && sock.0.set_read_timeout(Some(io)).is_ok()
}

/// Where a request is handled, given back when dropped: a place under the server's in-flight
/// cap, or one of the few beyond it for bodies that carry only answers.
enum Place<'a> {
    InFlight(&'a Shared),
    Answers(&'a Shared),
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        match self {
            Place::InFlight(shared) => shared.leave(),
            Place::Answers(shared) => {
                shared.answering.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
}

/// How many requests at once may be taken beyond the in-flight cap because they carry only
/// answers and notifications (see [`answers_beyond_cap`]).
const ANSWER_PLACES: usize = 64;

/// At the in-flight cap, a POST whose body holds only answers to the server's own requests
/// (and notifications) is still taken, read whole (up to the body limit) under one of
/// [`ANSWER_PLACES`] places: the handlers that hold the cap may be waiting for exactly these
/// answers (512 calls each waiting for a sampling answer saw every answer refused 503, and
/// waited out their 60 s timeouts), and a cancellation frees places. Anything else, or no
/// place free, is `None`: 503 as before. An answer is delivered, never waited on, so these
/// places free again at once.
fn answers_beyond_cap<'a, R: Read, W: Write>(
    shared: &'a Shared,
    req: &HttpRequest,
    body: &mut BodyReader<'_, R, W>,
) -> Option<(Place<'a>, Vec<u8>)> {
    if req.method != "POST" {
        return None;
    }
    if shared.answering.fetch_add(1, Ordering::SeqCst) >= ANSWER_PLACES {
        shared.answering.fetch_sub(1, Ordering::SeqCst);
        return None;
    }
    let place = Place::Answers(shared);
    let limit = shared.core.config().max_body();
    let mut bytes = Vec::new();
    let read = Read::by_ref(body)
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes);
    if read.is_err() || bytes.len() > limit || !only_answers(&bytes) {
        return None;
    }
    Some((place, bytes))
}

/// True when `bytes` is JSON-RPC with no request in it: one message or a batch of them, each
/// an answer (an `id` and no `method`) or a notification (a `method` and no `id`).
fn only_answers(bytes: &[u8]) -> bool {
    use serde_json::Value;
    let no_request = |m: &Value| {
        m.as_object()
            .is_some_and(|o| !(o.contains_key("method") && o.contains_key("id")))
    };
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Array(batch)) => !batch.is_empty() && batch.iter().all(no_request),
        Ok(one) => no_request(&one),
        Err(_) => false,
    }
}

/// Serves one connection until it closes. `state` is this connection's entry in the server's
/// registry.
pub(super) fn serve(
    shared: &Arc<Shared>,
    sock: Socket,
    peer: SocketAddr,
    state: &AtomicU8,
    token: &Sender<()>,
) {
    let mut reader = BufReader::with_capacity(8 * 1024, sock.clone());
    loop {
        state.store(IDLE, Ordering::SeqCst);
        if shared.stopping.load(Ordering::SeqCst) {
            close(&sock, false);
            return;
        }
        // The whole head within one io timeout of its first byte: the deadline is armed only
        // when the head did not come in one piece, and the socket's own timeout restored after.
        let mut deadline: Option<Instant> = None;
        let mut refill = || {
            let end = *deadline.get_or_insert_with(|| Instant::now() + shared.io_timeout);
            let left = end.saturating_duration_since(Instant::now());
            !left.is_zero() && sock.0.set_read_timeout(Some(left)).is_ok()
        };
        let read = read_head(&mut reader, shared.max_head, &mut refill);
        if deadline.is_some() && sock.0.set_read_timeout(Some(shared.io_timeout)).is_err() {
            close(&sock, false);
            return;
        }
        let mut head = match read {
            Ok(h) => h,
            Err(e) => {
                if let Some(r) = refusal(&e) {
                    let io = shared.io_timeout;
                    let _ = write_response(&mut sock.clone(), r, false, false, None, io);
                }
                close(&sock, !matches!(e, HeadError::Closed | HeadError::Io));
                return;
            }
        };
        state.store(BUSY, Ordering::SeqCst);
        let http10 = head.http10;
        let wants_more = head.keep_alive;
        crate::server::http::to_origin_form(&mut head.target, &mut head.headers);
        let req = HttpRequest {
            method: std::mem::take(&mut head.method),
            target: std::mem::take(&mut head.target),
            headers: std::mem::take(&mut head.headers),
            content_length: head.content_length,
            remote_addr: Some(peer),
        };
        // The whole body within one io timeout of the end of the head, however it trickles
        // in (a read already waiting may take one more): otherwise a body sent a byte every
        // few seconds would hold its place under the in-flight cap for as long as the bytes
        // kept coming, and a few hundred such clients would lock everyone else out with 503.
        // Checked before each read that waits for the peer: no system call of its own.
        let body_end = Instant::now() + shared.io_timeout;
        let mut body = BodyReader::new(&mut reader, &head, sock.clone())
            .before_waits(move || Instant::now() < body_end);
        // Held until the stream's last byte is written, given back before the connection closes.
        let stream = if standing(&req) {
            match shared.open_stream() {
                Some(place) => Some(place),
                None => {
                    log::debug!("refusing a stream: {} are open", shared.max_streams);
                    let what = "too many streams open";
                    match busy(what, shared, &sock, &mut body, wants_more, http10) {
                        true => continue,
                        false => return,
                    }
                }
            }
        } else {
            None
        };
        let (slot, answers) = match shared.enter() {
            Some(slot) => (Place::InFlight(slot), None),
            None => match answers_beyond_cap(shared, &req, &mut body) {
                Some((place, bytes)) => (place, Some(bytes)),
                None => match busy(
                    "too many requests in flight",
                    shared,
                    &sock,
                    &mut body,
                    wants_more,
                    http10,
                ) {
                    true => continue,
                    false => return,
                },
            },
        };
        let (done_tx, done_rx) = bounded::<After>(1);
        let handed = Arc::new(AtomicBool::new(false));
        let handoff: Handoff = {
            let (sock, handed, token) = (sock.clone(), handed.clone(), token.clone());
            let answers = Arc::clone(shared);
            Box::new(move |mut d: Deferred| {
                handed.store(true, Ordering::SeqCst);
                let watcher = Arc::clone(&answers);
                let started = answers.answers.execute(move || {
                    let _token = token;
                    let watch = || watch_hangup(&watcher.hangups, &sock);
                    // A JSON-only 2026-07-28 answer writes nothing until its handler is done:
                    // the connection is watched meanwhile, the hang-up being the cancellation
                    // (and, the watch reading what comes, the connection closes after).
                    let mut keep = wants_more;
                    if d.needs_hangup_watch() {
                        if let Some(hangup) = watch() {
                            d.set_hangup(hangup);
                            keep = false;
                        }
                    }
                    let io = watcher.io_timeout;
                    let after =
                        write_response(&mut sock.clone(), d.run(), keep, http10, Some(&watch), io);
                    let _ = done_tx.send(after);
                });
                if let Err(e) = started {
                    // The answer is dropped: its connection closes below.
                    log::error!("cannot write an answer from another thread: {e}");
                }
            })
        };
        let reply = catch_unwind(AssertUnwindSafe(|| match &answers {
            Some(bytes) => shared
                .core
                .handle_inline(&req, &mut bytes.as_slice(), handoff),
            None => shared.core.handle_inline(&req, &mut body, handoff),
        }));
        let body_done = drain(&mut body, &sock, shared.io_timeout);
        let resp = match reply {
            Ok(Reply::Now(r)) => r,
            Ok(Reply::Handed) => {
                drop(slot);
                let after = done_rx.recv().unwrap_or(After::Close);
                drop(stream);
                if after == After::Close || !body_done {
                    close(&sock, !body_done);
                    return;
                }
                continue;
            }
            Err(_) if handed.load(Ordering::SeqCst) => {
                log::error!("a request's handling panicked after its answer started");
                drop(slot);
                let _ = done_rx.recv();
                drop(stream);
                close(&sock, !body_done);
                return;
            }
            Err(_) => {
                log::error!("a request's handling panicked");
                HttpResponse::empty(500)
            }
        };
        // The place under the cap is given back before the answer is written: a long-lived
        // SSE stream has its own bounds (sessions times streams per session, connections).
        drop(slot);
        let reuse = wants_more && body_done && !shared.stopping.load(Ordering::SeqCst);
        let watch = || watch_hangup(&shared.hangups, &sock);
        let io = shared.io_timeout;
        let after = write_response(&mut sock.clone(), resp, reuse, http10, Some(&watch), io);
        drop(stream);
        if after == After::Close {
            close(&sock, !body_done);
            return;
        }
    }
}
