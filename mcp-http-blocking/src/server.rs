//! The tiny_http adapter: a listening socket with timeouts its connections inherit, accept
//! loops that restart when tiny_http's accept thread dies, a capped set of request threads,
//! and SSE written by hand (chunked, one flush per event).
//!
//! tiny_http 0.12 hazards and what this module does about each:
//! - No socket timeouts: `SO_RCVTIMEO`/`SO_SNDTIMEO` are set on the listener (via `socket2`);
//!   Linux copies them to every accepted socket, so idle, slowloris and non-reading clients
//!   fail their reads/writes after `io_timeout` and their threads end. The same option makes an
//!   idle `accept()` fail, which ends tiny_http's accept thread for good; each such "generation"
//!   of `tiny_http::Server` is therefore replaced by a fresh one on a clone of the listener,
//!   and the old one is drained until its connections are gone.
//! - Nagle: `TCP_NODELAY` is set on the listener and inherited the same way, so an SSE event
//!   written right after the headers is not held back waiting for a delayed ACK.
//! - The whole-process abort on a huge `Content-Length` (tiny_http drains an unread body with
//!   `vec![0; remaining]`): a request whose declared body is over the limit and could not even
//!   be allocated is answered 413 and then never dropped (`mem::forget`), which costs one
//!   blocked tiny_http thread and one socket per such request (counted in
//!   [`ServerHandle::leaked_connections`]). Smaller oversized bodies are answered 413 and
//!   drained normally.
//! - Unbounded threads: tiny_http has one thread per connection and no cap; requests in flight
//!   here are capped (`max_in_flight`, 503 beyond), and idle connections end by timeout.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_core::service::Service;
use socket2::{Domain, Protocol, Socket, Type};

use crate::Error;
use crate::config::HttpConfig;
use crate::http::{Body, HttpRequest, HttpResponse, SseBody, SseNext, StreamEnd};
use crate::transport::StreamableHttp;

/// Builds an [`HttpServer`].
#[must_use]
pub struct HttpServerBuilder {
    addr: String,
    cfg: HttpConfig,
    io_timeout: Duration,
    max_in_flight: usize,
}

/// A bound, not yet running Streamable HTTP server.
pub struct HttpServer {
    listener: TcpListener,
    core: StreamableHttp,
    io_timeout: Duration,
    max_in_flight: usize,
}

impl HttpServerBuilder {
    /// The address to bind (default `127.0.0.1:0`, an ephemeral loopback port).
    pub fn bind(mut self, addr: impl Into<String>) -> Self {
        self.addr = addr.into();
        self
    }

    /// The transport settings.
    pub fn config(mut self, cfg: HttpConfig) -> Self {
        self.cfg = cfg;
        self
    }

    /// Read/write timeout of every connection, and the accept-loop restart period (default
    /// 30 s). A client that sends nothing, or reads nothing, for this long is disconnected.
    pub fn io_timeout(mut self, d: Duration) -> Self {
        self.io_timeout = d.max(Duration::from_millis(10));
        self
    }

    /// Requests handled at once, SSE streams included (default 512); beyond it 503.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// Binds the socket and prepares the transport for `service`.
    ///
    /// # Errors
    /// [`Error::Bind`] when the address does not resolve or cannot be bound.
    pub fn build(self, service: impl Service) -> Result<HttpServer, Error> {
        let addr = self
            .addr
            .to_socket_addrs()
            .map_err(Error::Bind)?
            .next()
            .ok_or_else(|| {
                Error::Bind(io::Error::new(io::ErrorKind::InvalidInput, "no address"))
            })?;
        let listener = listen(addr, self.io_timeout).map_err(Error::Bind)?;
        Ok(HttpServer {
            listener,
            core: StreamableHttp::new(service, self.cfg),
            io_timeout: self.io_timeout,
            max_in_flight: self.max_in_flight,
        })
    }
}

fn listen(addr: SocketAddr, timeout: Duration) -> io::Result<TcpListener> {
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    sock.set_reuse_address(true)?;
    sock.bind(&addr.into())?;
    sock.listen(128)?;
    // Inherited by accepted sockets on Linux: see the module docs.
    sock.set_read_timeout(Some(timeout))?;
    sock.set_write_timeout(Some(timeout))?;
    sock.set_nodelay(true)?;
    Ok(sock.into())
}

impl HttpServer {
    /// Starts building a server.
    pub fn builder() -> HttpServerBuilder {
        HttpServerBuilder {
            addr: "127.0.0.1:0".to_owned(),
            cfg: HttpConfig::default(),
            io_timeout: Duration::from_secs(30),
            max_in_flight: 512,
        }
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        // A bound listener always has an address; the fallback cannot be reached.
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// The transport core (for session counts, sweeping by hand, ...).
    pub fn core(&self) -> &StreamableHttp {
        &self.core
    }

    /// Starts the server threads and returns at once.
    ///
    /// # Errors
    /// [`Error::Io`] when a thread or the first accept loop cannot be started.
    pub fn spawn(self) -> Result<ServerHandle, Error> {
        let addr = self.local_addr();
        let (stop_tx, stop_rx) = bounded::<()>(0);
        let shared = Arc::new(Shared {
            core: self.core.clone(),
            listener: self.listener,
            io_timeout: self.io_timeout,
            max_in_flight: self.max_in_flight,
            in_flight: AtomicUsize::new(0),
            leaked: AtomicUsize::new(0),
            stopping: AtomicBool::new(false),
            stop_rx,
            generations: AtomicUsize::new(0),
            jobs: bounded(0),
        });
        let sweeper = self.core.spawn_sweeper().map_err(Error::Io)?;
        let first = start_generation(shared.clone()).map_err(Error::Io)?;
        Ok(ServerHandle {
            addr,
            shared,
            _stop: stop_tx,
            sweeper: Some(sweeper),
            first: Some(first),
        })
    }

    /// Runs the server on the calling thread's behalf until the process ends.
    ///
    /// # Errors
    /// As [`HttpServer::spawn`].
    pub fn run(self) -> Result<(), Error> {
        let mut h = self.spawn()?;
        if let Some(t) = h.first.take() {
            let _ = t.join();
        }
        Ok(())
    }
}

struct Shared {
    core: StreamableHttp,
    listener: TcpListener,
    io_timeout: Duration,
    max_in_flight: usize,
    in_flight: AtomicUsize,
    leaked: AtomicUsize,
    stopping: AtomicBool,
    stop_rx: Receiver<()>,
    generations: AtomicUsize,
    /// Rendezvous with idle request threads: a send succeeds only when one is waiting.
    jobs: (Sender<Job>, Receiver<Job>),
}

/// One request for a request thread.
type Job = Box<dyn FnOnce() + Send>;

/// How long an idle request thread waits for another request before it ends.
const REQUEST_THREAD_IDLE: Duration = Duration::from_secs(5);

/// A running server.
pub struct ServerHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _stop: Sender<()>,
    sweeper: Option<crate::transport::Sweeper>,
    first: Option<JoinHandle<()>>,
}

impl ServerHandle {
    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The transport core.
    pub fn core(&self) -> &StreamableHttp {
        &self.shared.core
    }

    /// Requests being handled right now (open SSE streams included).
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::Relaxed)
    }

    /// Connections given up with a leaked tiny_http thread (see the module docs).
    pub fn leaked_connections(&self) -> usize {
        self.shared.leaked.load(Ordering::Relaxed)
    }

    /// How many accept loops were started (restarts included).
    pub fn accept_generations(&self) -> usize {
        self.shared.generations.load(Ordering::Relaxed)
    }

    /// Stops accepting, closes every session (ending their streams) and waits for the first
    /// accept loop; later loops end within about a second.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.shared.core.close_all();
        if let Some(s) = self.sweeper.take() {
            s.stop();
        }
        if let Some(t) = self.first.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

const POLL: Duration = Duration::from_millis(250);

fn start_generation(shared: Arc<Shared>) -> io::Result<JoinHandle<()>> {
    let listener = shared.listener.try_clone()?;
    let server = tiny_http::Server::from_listener(listener, None)
        .map_err(|e| io::Error::other(e.to_string()))?;
    shared.generations.fetch_add(1, Ordering::Relaxed);
    thread::Builder::new()
        .name("mcp-http-accept".into())
        .spawn(move || generation_loop(shared, server))
}

/// Serves one `tiny_http::Server`. When its accept thread dies (an idle `accept()` timed out,
/// or a real error such as EMFILE), the next generation is started and this one keeps serving
/// the connections it already has until they have been quiet long enough to have timed out.
fn generation_loop(shared: Arc<Shared>, server: tiny_http::Server) {
    let mine = Arc::new(AtomicUsize::new(0));
    let mut accept_dead = false;
    let mut last = Instant::now();

    loop {
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        match server.recv_timeout(POLL) {
            Ok(Some(rq)) => {
                last = Instant::now();
                dispatch(&shared, &mine, rq);
            }
            Ok(None) => {
                let quiet = last.elapsed() > shared.io_timeout * 2 + POLL;
                if accept_dead && quiet && mine.load(Ordering::SeqCst) == 0 {
                    break;
                }
            }
            Err(e) if !accept_dead => {
                accept_dead = true;
                last = Instant::now();
                let idle = matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                );
                if !idle {
                    log::warn!("accept failed ({e}); restarting the accept loop");
                    // Back off on real errors (EMFILE ...) without spinning; a stop ends it.
                    let _ = shared.stop_rx.recv_timeout(Duration::from_millis(200));
                }
                loop {
                    if shared.stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    match start_generation(shared.clone()) {
                        // Not joined: this generation must be able to end before its
                        // successor does, or retired generations would pile up.
                        Ok(_successor) => break,
                        Err(e) => {
                            log::error!("cannot restart the accept loop: {e}");
                            let _ = shared.stop_rx.recv_timeout(Duration::from_secs(1));
                        }
                    }
                }
            }
            Err(_) => {}
        }
    }
    drop(server);
}

struct InFlight(Arc<Shared>, Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.1.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether tiny_http may drop a request with `remaining` unread body bytes: its drain
/// allocates `remaining` bytes at once and aborts the process when that fails.
fn drain_is_safe(remaining: usize) -> bool {
    if remaining <= 1 << 20 {
        return true;
    }
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(remaining).is_ok()
}

fn dispatch(shared: &Arc<Shared>, mine: &Arc<AtomicUsize>, rq: tiny_http::Request) {
    let cfg = shared.core.config();
    let declared = rq.body_length().unwrap_or(0);
    if declared > cfg.max_body && !drain_is_safe(declared) {
        refuse_forever(shared, rq);
        return;
    }
    let n = shared.in_flight.fetch_add(1, Ordering::SeqCst);
    mine.fetch_add(1, Ordering::SeqCst);
    let guard = InFlight(shared.clone(), mine.clone());
    if n >= shared.max_in_flight {
        drop(guard);
        let _ = rq.respond(tiny_http::Response::empty(503).with_header(header("Retry-After", "1")));
        return;
    }
    let s2 = shared.clone();
    let job: Job = Box::new(move || serve(&s2, rq, guard));
    // An idle request thread takes the request if there is one: starting and ending a thread
    // per request (stack, guard page, sigaltstack, TLB shootdowns) cost more than the request.
    // The channel has no buffer, so a request never waits behind a busy thread.
    let job = match shared.jobs.0.try_send(job) {
        Ok(()) => return,
        Err(e) => e.into_inner(),
    };
    let jobs = shared.jobs.1.clone();
    let spawned = thread::Builder::new()
        .name("mcp-http-req".into())
        .spawn(move || {
            job();
            while let Ok(job) = jobs.recv_timeout(REQUEST_THREAD_IDLE) {
                job();
            }
        });
    if let Err(e) = spawned {
        log::error!("cannot start a request thread: {e}");
    }
}

/// The request declared a body too large to drain: answer 413 and never drop it.
fn refuse_forever(shared: &Shared, rq: tiny_http::Request) {
    log::warn!(
        "request from {:?} declared a {} byte body; refused, connection abandoned",
        rq.remote_addr(),
        rq.body_length().unwrap_or(0)
    );
    let stream = rq.upgrade("close", tiny_http::Response::empty(413));
    shared.leaked.fetch_add(1, Ordering::Relaxed);
    std::mem::forget(stream);
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).unwrap_or_else(|_| {
        tiny_http::Header::from_bytes(&b"X-Invalid"[..], &b"1"[..]).expect("static header")
    })
}

/// Answers one request. `slot` is its place under `max_in_flight`, given back as soon as the
/// answer turns into a long-lived SSE stream: streams have their own bounds (sessions times
/// streams per session), and idle listeners must not lock out ordinary requests.
fn serve(shared: &Shared, mut rq: tiny_http::Request, slot: InFlight) {
    let head = HttpRequest {
        method: rq.method().as_str().to_ascii_uppercase(),
        target: rq.url().to_owned(),
        headers: rq
            .headers()
            .iter()
            .map(|h| {
                (
                    h.field.as_str().as_str().to_owned(),
                    h.value.as_str().to_owned(),
                )
            })
            .collect(),
        content_length: rq.body_length().map(|l| l as u64),
        remote_addr: rq.remote_addr().copied(),
    };
    let http10 = rq.http_version() == &tiny_http::HTTPVersion(1, 0);
    let resp = shared.core.handle(&head, rq.as_reader());
    let HttpResponse {
        status,
        headers,
        body,
    } = resp;
    match body {
        Body::Bytes(bytes) => {
            let mut r = tiny_http::Response::from_data(bytes).with_status_code(status);
            for (n, v) in &headers {
                r.add_header(header(n, v));
            }
            if let Err(e) = rq.respond(r) {
                log::debug!("writing a response failed: {e}");
            }
        }
        Body::Sse(sse) => {
            drop(slot);
            let w = rq.into_writer();
            write_sse(w, status, &headers, sse, !http10);
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        _ => "Status",
    }
}

fn chunk(out: &mut Vec<u8>, data: &[u8], chunked: bool) {
    if chunked {
        out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
        out.extend_from_slice(data);
        out.extend_from_slice(b"\r\n");
    } else {
        out.extend_from_slice(data);
    }
}

/// Writes an SSE response by hand: the head, then each event as one chunk followed by a
/// flush, `:` comments when idle, and the terminating chunk. The connection is closed
/// afterwards (`Connection: close`), because tiny_http may already have given up reading
/// from it while the stream ran.
fn write_sse(
    mut w: Box<dyn Write + Send>,
    status: u16,
    headers: &[(String, String)],
    mut sse: SseBody,
    chunked: bool,
) {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    if chunked {
        head.push_str("Transfer-Encoding: chunked\r\n");
    }
    head.push_str("Connection: close\r\n\r\n");
    // The head goes out at once: a client waits for it before it treats the stream as open.
    let mut ok = w.write_all(head.as_bytes()).and_then(|_| w.flush()).is_ok();
    let mut buf = Vec::new();
    while ok {
        let next = sse.next_event();
        let end = matches!(next, SseNext::End);
        match next {
            SseNext::Event(e) => chunk(&mut buf, &e, chunked),
            SseNext::Idle => chunk(&mut buf, b":\n\n", chunked),
            SseNext::End => {
                if chunked {
                    buf.extend_from_slice(b"0\r\n\r\n");
                }
            }
        }
        if w.write_all(&buf).and_then(|_| w.flush()).is_err() {
            ok = false;
            break;
        }
        buf.clear();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The mechanism the module relies on: sockets accepted from our listener carry the read
    /// and write timeouts and TCP_NODELAY set on the listener (tiny_http never sets them).
    #[test]
    fn accepted_sockets_inherit_timeouts_and_nodelay() {
        let t = Duration::from_millis(700);
        let l = listen(SocketAddr::from(([127, 0, 0, 1], 0)), t).unwrap();
        let _c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        assert!(s.nodelay().unwrap());
        let rt = s.read_timeout().unwrap().unwrap();
        let wt = s.write_timeout().unwrap().unwrap();
        assert!(
            rt >= Duration::from_millis(690) && rt <= Duration::from_millis(710),
            "{rt:?}"
        );
        assert!(
            wt >= Duration::from_millis(690) && wt <= Duration::from_millis(710),
            "{wt:?}"
        );
    }

    #[test]
    fn draining_is_judged_by_whether_the_allocation_could_succeed() {
        assert!(drain_is_safe(0));
        assert!(drain_is_safe(10 << 20));
        assert!(!drain_is_safe(999_999_999_999_999));
    }
}
