//! The HTTP server: a listening socket, an accept loop, and one thread per connection (up to
//! [`HttpServerBuilder::max_connections`]) that reads its requests ([`parse`]), hands each to
//! the transport core ([`conn`]) and writes the answers ([`write`]). The threads come from
//! `mcp_core::executor`: a connection is a long job on an idle or new worker (refused with 503
//! when `max_connections` are busy), and an answer that starts before its handler is done is
//! written by a job of a second executor; idle workers end after 1 s.
//!
//! Why our own connection layer and not tiny_http's (which this server used before): tiny_http
//! 0.12 hands connections to a thread pool that can lose a wake-up in a burst, leaving a new
//! connection unread until another one ends (for long-lived SSE streams, never); it keeps a
//! connection open for its whole read timeout after a response that said `Connection: close`;
//! it buffers a header line without limit; it aborts the process when it drains an unread body
//! whose declared length cannot be allocated; and it sets no socket timeouts. Each of these was
//! a documented risk. Here:
//! - every accepted connection gets a thread at once (no queue to strand it in), and beyond
//!   the connection cap it is refused with 503 right away;
//! - heads are read in bounded memory; bodies only as far as the core asks, and an unread rest
//!   is drained (up to 64 KiB) or the connection closes;
//! - a response that closes its connection (every SSE stream, and any response to a client
//!   that asked to close) is followed by the socket's shutdown, so the client sees EOF at once;
//! - every socket has read and write timeouts (`io_timeout`), and a request's head and its body
//!   each have one `io_timeout` to arrive in full, so a trickle cannot hold a connection; nor
//!   can a client that reads its answer a trickle at a time: a response (or an SSE event) that
//!   does not go out in one write must keep pace with 2 MiB per `io_timeout` after one more
//!   `io_timeout`, or its connection is reset (see `write`);
//! - [`ServerHandle::shutdown`] drains: it stops accepting, closes idle connections, lets the
//!   requests in flight finish within a grace period, ends the open streams, and returns.

mod conn;
mod parse;
mod write;

use crate::server::lock;
use std::collections::HashMap;
use std::io::{self, Write as _};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};
use mcp_core::executor::{Executor, Reason};
use mcp_core::service::Service;
use socket2::{Domain, Protocol, Socket, Type};

use crate::Error;
use crate::server::config::HttpConfig;
use crate::server::security::hosts_open;
use crate::server::streamable::{StreamableHttp, Sweeper};

/// How long a connection or answer thread waits for new work before it ends: a burst of
/// connections leaves threads ready for the next one, and an idle server gives them back.
const IDLE_THREAD_TIMEOUT: Duration = Duration::from_secs(1);

/// Builds an [`HttpServer`].
#[must_use]
pub struct HttpServerBuilder {
    addr: String,
    cfg: HttpConfig,
    io_timeout: Duration,
    max_in_flight: usize,
    max_streams: usize,
    max_connections: usize,
    shutdown_grace: Duration,
}

/// A bound, not yet running Streamable HTTP server.
pub struct HttpServer {
    listener: TcpListener,
    core: StreamableHttp,
    io_timeout: Duration,
    max_in_flight: usize,
    max_streams: usize,
    max_connections: usize,
    shutdown_grace: Duration,
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

    /// Read/write timeout of every connection (default 30 s). A client that sends nothing, or
    /// reads nothing, for this long is disconnected; so is an idle keep-alive connection. A
    /// request's head must be complete within this long of its first byte, and its body
    /// within this long of the end of the head, however the bytes trickle in (a read of the
    /// body already waiting when that time is up may take this long once more). A response,
    /// or one event of an SSE stream, that the first write call (bounded by this timeout)
    /// does not write whole has this long once more, plus this long for each 2 MiB the client
    /// reads meanwhile, however slowly it reads: a client that reads a trickle is cut off
    /// (its connection reset) after about twice this timeout, and one that reads at least
    /// 2 MiB per timeout (70 KB/s at 30 s) gets an answer of any size.
    pub fn io_timeout(mut self, d: Duration) -> Self {
        self.io_timeout = d.max(Duration::from_millis(10));
        self
    }

    /// Requests handled at once (default 512); beyond it 503. An answer that turns into an SSE
    /// stream gives its place back: standing streams have their own cap
    /// ([`max_streams`](Self::max_streams)), a call's answer stream ends with the call.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// Standing streams open at once (default 512): a `GET` for an SSE stream (a legacy
    /// session's stream, the 2024-11-05 `/sse`) or a 2026-07-28 `subscriptions/listen`, each
    /// held open for as long as its client wants. Beyond it 503 with `Retry-After`. Without
    /// this cap, streams that a client opens and never reads would take every connection and
    /// lock everyone out; with it, at least `max_connections - max_streams` connections are
    /// left for requests. The answer streams of calls are not counted (they end with the call).
    pub fn max_streams(mut self, n: usize) -> Self {
        self.max_streams = n.max(1);
        self
    }

    /// Open connections, each with its thread (default 1024); a connection beyond it is
    /// answered 503 and closed at once.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// How long [`ServerHandle::shutdown`] lets requests in flight finish (default 10 s).
    pub fn shutdown_grace(mut self, d: Duration) -> Self {
        self.shutdown_grace = d;
        self
    }

    /// Binds the socket and prepares the transport for `service`.
    ///
    /// # Errors
    /// [`Error::Bind`] when the address does not resolve or cannot be bound; [`Error::Io`]
    /// when the watchdog thread of inline requests cannot be started;
    /// [`Error::InvalidConfig`] for authorization with every `Host` allowed and no
    /// [`public_url`](crate::AuthConfigBuilder::public_url).
    pub fn build(self, service: impl Service) -> Result<HttpServer, Error> {
        let addr = self
            .addr
            .to_socket_addrs()
            .map_err(Error::Bind)?
            .next()
            .ok_or_else(|| {
                Error::Bind(io::Error::new(io::ErrorKind::InvalidInput, "no address"))
            })?;
        if let Some(auth) = &self.cfg.auth {
            if auth.public_url.is_none() && hosts_open(self.cfg.allowed_hosts.as_deref()) {
                return Err(Error::InvalidConfig {
                    reason: "tokens are checked for this server's URL: with every Host allowed \
                             (`*`), it cannot come from the request; set AuthConfigBuilder::public_url",
                });
            }
        }
        let listener = listen(addr).map_err(Error::Bind)?;
        let port = listener.local_addr().map_err(Error::Bind)?.port();
        Ok(HttpServer {
            listener,
            core: StreamableHttp::new_inline(service, self.cfg, port).map_err(Error::Io)?,
            io_timeout: self.io_timeout,
            max_in_flight: self.max_in_flight,
            max_streams: self.max_streams,
            max_connections: self.max_connections,
            shutdown_grace: self.shutdown_grace,
        })
    }
}

/// A listening socket with a backlog deep enough for a burst of connections (std's is 128).
fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    sock.set_reuse_address(true)?;
    sock.bind(&addr.into())?;
    sock.listen(1024)?;
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
            max_streams: 512,
            max_connections: 1024,
            shutdown_grace: Duration::from_secs(10),
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
    /// [`Error::Io`] when a thread cannot be started.
    pub fn spawn(self) -> Result<ServerHandle, Error> {
        let addr = self.local_addr();
        let (token, exited) = bounded::<()>(0);
        let (idle_tx, idle_rx) = bounded::<()>(1);
        let head_limit = self.core.config().max_header_bytes + 8 * 1024;
        let shared = Arc::new(Shared {
            core: self.core.clone(),
            io_timeout: self.io_timeout,
            max_in_flight: self.max_in_flight,
            max_streams: self.max_streams,
            max_connections: self.max_connections,
            max_head: head_limit,
            in_flight: AtomicUsize::new(0),
            streams: AtomicUsize::new(0),
            answering: AtomicUsize::new(0),
            stopping: AtomicBool::new(false),
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(0),
            none_in_flight: idle_tx,
            connections: Executor::builder()
                .name("mcp-http-conn")
                .max_threads(self.max_connections)
                .queue(1)
                .idle_timeout(IDLE_THREAD_TIMEOUT)
                .build()
                .map_err(Error::Io)?,
            answers: Executor::builder()
                .name("mcp-http-answer")
                .max_threads(self.max_connections)
                .queue(1)
                .idle_timeout(IDLE_THREAD_TIMEOUT)
                .build()
                .map_err(Error::Io)?,
            hangups: Executor::builder()
                .name("mcp-http-hangup")
                .max_threads(self.max_connections)
                .queue(1)
                .idle_timeout(IDLE_THREAD_TIMEOUT)
                .build()
                .map_err(Error::Io)?,
        });
        let sweeper = self.core.spawn_sweeper().map_err(Error::Io)?;
        let listener = self.listener.try_clone().map_err(Error::Io)?;
        let s2 = shared.clone();
        let accept_token = token.clone();
        let accept = thread::Builder::new()
            .name("mcp-http-accept".into())
            .spawn(move || accept_loop(&s2, &listener, &accept_token))
            .map_err(Error::Io)?;
        drop(token);
        Ok(ServerHandle {
            addr,
            shared,
            listener: self.listener,
            accept: Some(accept),
            sweeper: Some(sweeper),
            exited,
            none_in_flight: idle_rx,
            grace: self.shutdown_grace,
            stopped: false,
        })
    }

    /// Runs the server on the calling thread's behalf until the process ends.
    ///
    /// # Errors
    /// As [`HttpServer::spawn`].
    pub fn run(self) -> Result<(), Error> {
        let h = self.spawn()?;
        h.wait();
        Ok(())
    }
}

/// One open connection, as the server's registry knows it.
struct Conn {
    sock: Arc<TcpStream>,
    state: Arc<AtomicU8>,
}

/// What the accept loop and the connection threads share.
pub(super) struct Shared {
    core: StreamableHttp,
    io_timeout: Duration,
    max_in_flight: usize,
    max_streams: usize,
    max_connections: usize,
    /// The longest request head read (header fields plus the request line): beyond it 431.
    max_head: usize,
    in_flight: AtomicUsize,
    /// Standing streams open (see [`HttpServerBuilder::max_streams`]).
    streams: AtomicUsize,
    /// Requests taken beyond the cap because they carry only answers (see `conn`).
    answering: AtomicUsize,
    stopping: AtomicBool,
    conns: Mutex<HashMap<u64, Conn>>,
    next_conn: AtomicU64,
    /// Told when the last request in flight ends during a shutdown.
    none_in_flight: Sender<()>,
    /// Runs the connections, one long job each, up to `max_connections`.
    connections: Executor,
    /// Runs the answers that start before their handler is done (see `answer::escape`); at
    /// most one per connection.
    pub(super) answers: Executor,
    /// Watches the connections of 2026-07-28 SSE answers for the client's hang-up (the
    /// request's cancellation), one blocking read each, up to `max_connections`.
    pub(super) hangups: Executor,
}

impl Shared {
    /// Takes a place under the in-flight cap.
    fn enter(&self) -> Option<&Shared> {
        let prev = self.in_flight.fetch_add(1, Ordering::SeqCst);
        if prev >= self.max_in_flight {
            self.leave();
            return None;
        }
        Some(self)
    }

    /// Gives a place back.
    fn leave(&self) {
        let prev = self.in_flight.fetch_sub(1, Ordering::SeqCst);
        if prev == 1 && self.stopping.load(Ordering::SeqCst) {
            let _ = self.none_in_flight.try_send(());
        }
    }

    /// Takes a place under the standing-stream cap, given back when dropped.
    pub(super) fn open_stream(&self) -> Option<StreamPlace<'_>> {
        if self.streams.fetch_add(1, Ordering::SeqCst) >= self.max_streams {
            self.streams.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(StreamPlace(self))
    }
}

/// A place under the standing-stream cap.
pub(super) struct StreamPlace<'a>(&'a Shared);

impl Drop for StreamPlace<'_> {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Takes a connection out of the registry when its thread ends.
struct Registered<'a> {
    shared: &'a Shared,
    id: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        lock(&self.shared.conns).remove(&self.id);
    }
}

/// Accepts connections until the server stops.
fn accept_loop(shared: &Arc<Shared>, listener: &TcpListener, token: &Sender<()>) {
    loop {
        let accepted = listener.accept();
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        match accepted {
            Ok((s, peer)) => admit(shared, s, peer, token),
            Err(e) => match e.kind() {
                io::ErrorKind::Interrupted
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::WouldBlock => {}
                _ => {
                    // Out of descriptors or memory: the listen queue holds the clients while
                    // connections end. A short pause keeps this loop from spinning meanwhile.
                    log::error!("accept failed: {e}");
                    thread::sleep(Duration::from_millis(20));
                }
            },
        }
    }
}

/// Gives an accepted connection its thread, or refuses it at the cap.
fn admit(shared: &Arc<Shared>, s: TcpStream, peer: SocketAddr, token: &Sender<()>) {
    let _ = s.set_nodelay(true);
    if s.set_read_timeout(Some(shared.io_timeout)).is_err()
        || s.set_write_timeout(Some(shared.io_timeout)).is_err()
    {
        return;
    }
    let sock = Arc::new(s);
    let state = Arc::new(AtomicU8::new(conn::IDLE));
    let id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
    {
        let mut conns = lock(&shared.conns);
        if conns.len() >= shared.max_connections {
            drop(conns);
            refuse(&sock);
            return;
        }
        conns.insert(
            id,
            Conn {
                sock: sock.clone(),
                state: state.clone(),
            },
        );
    }
    let (s2, t2) = (shared.clone(), token.clone());
    // A connection is a long job: it gets an idle worker or a new one, never a queue (a
    // refusal instead, at the cap, like the registry's own check above).
    let started = shared.connections.try_execute(move || {
        let _registered = Registered { shared: &s2, id };
        conn::serve(&s2, conn::Socket(sock), peer, &state, &t2);
    });
    if let Err(e) = started {
        if !matches!(e.reason(), Reason::Saturated) {
            log::error!("cannot serve a connection: {e}");
        }
        if let Some(c) = lock(&shared.conns).remove(&id) {
            refuse(&c.sock);
        }
    }
}

/// The answer to a connection beyond the cap: 503 with a JSON-RPC error, in one write.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\
Content-Type: application/json\r\nContent-Length: 97\r\nConnection: close\r\n\r\n\
{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"server busy: too many connections\"}}";

/// Answers 503 on a fresh connection and closes it, without ever blocking the accept loop.
fn refuse(sock: &TcpStream) {
    if sock.set_nonblocking(true).is_ok() {
        let _ = (&*sock).write_all(REFUSAL);
    }
    let _ = sock.shutdown(Shutdown::Both);
}

/// Longest wait in a forced stop (grace over, or [`ServerHandle`] dropped) for connection
/// threads to end after their sockets were shut down.
const FORCE_WAIT: Duration = Duration::from_secs(1);

/// A running server.
pub struct ServerHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
    listener: TcpListener,
    accept: Option<thread::JoinHandle<()>>,
    sweeper: Option<Sweeper>,
    /// Disconnected once every connection thread has ended (each holds a sender).
    exited: Receiver<()>,
    none_in_flight: Receiver<()>,
    grace: Duration,
    stopped: bool,
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

    /// Requests being handled right now (open SSE streams are not counted).
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::SeqCst)
    }

    /// Standing streams open right now (see [`HttpServerBuilder::max_streams`]).
    pub fn streams(&self) -> usize {
        self.shared.streams.load(Ordering::SeqCst)
    }

    /// Open connections.
    pub fn connections(&self) -> usize {
        lock(&self.shared.conns).len()
    }

    /// Waits, at most `timeout`, until the server is quiet: no connection open and every
    /// thread it started for past connections and answers ended (idle ones end after a
    /// second). True if that happened. For hosts that check their footprint (a plugin about
    /// to be unloaded, a soak test), and for tests that must see threads go away without
    /// polling the process's thread list.
    pub fn wait_until_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let left = || deadline.saturating_duration_since(Instant::now());
        // Connection jobs end before their workers retire, and they take their connection
        // out of the registry as they end: no worker left means no connection left.
        self.shared.connections.wait_threads_at_most(0, left())
            && self.shared.answers.wait_threads_at_most(0, left())
            && self.shared.hangups.wait_threads_at_most(0, left())
            && self.connections() == 0
    }

    /// Drains and stops the server within the grace period of
    /// [`HttpServerBuilder::shutdown_grace`]; see [`ServerHandle::shutdown_within`].
    pub fn shutdown(self) {
        let grace = self.grace;
        self.shutdown_within(grace);
    }

    /// Drains and stops the server: stops accepting, closes idle connections, lets the requests
    /// in flight finish (at most `grace`), then closes every session (their streams end
    /// cleanly: a resuming client gets 404 and starts a new session, here or elsewhere) and
    /// waits for the connections to end. Whatever is still open when the grace is over is cut.
    pub fn shutdown_within(mut self, grace: Duration) {
        self.stop(grace);
    }

    fn stop(&mut self, grace: Duration) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        let deadline = Instant::now() + grace;
        let shared = &self.shared;
        shared.stopping.store(true, Ordering::SeqCst);
        // Wake the accept loop: a listening socket shut down fails its accept() on Linux; a
        // connection of our own wakes it anywhere else.
        let _ = socket2::SockRef::from(&self.listener).shutdown(Shutdown::Read);
        let wake = match self.addr {
            SocketAddr::V4(a) if a.ip().is_unspecified() => {
                SocketAddr::from(([127, 0, 0, 1], a.port()))
            }
            SocketAddr::V6(a) if a.ip().is_unspecified() => {
                SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, a.port()))
            }
            a => a,
        };
        let _ = TcpStream::connect_timeout(&wake, Duration::from_millis(100));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        if let Some(s) = self.sweeper.take() {
            s.stop();
        }
        // Idle connections have nothing to finish.
        self.shut(|state| state == conn::IDLE, Shutdown::Read);
        // Requests in flight finish within the grace.
        while shared.in_flight.load(Ordering::SeqCst) > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let _ = self.none_in_flight.recv_timeout(left);
        }
        // Streams end with their sessions.
        shared.core.close_all();
        let left = deadline.saturating_duration_since(Instant::now());
        if let Err(RecvTimeoutError::Timeout) = self.exited.recv_timeout(left) {
            log::warn!("shutdown: cutting the connections still open after the grace period");
            self.shut(|_| true, Shutdown::Both);
            if let Err(RecvTimeoutError::Timeout) = self.exited.recv_timeout(FORCE_WAIT) {
                log::debug!("shutdown: handlers still running are left to finish");
            }
        }
    }

    /// Shuts down the sockets of the connections whose state passes `which`.
    fn shut(&self, which: impl Fn(u8) -> bool, how: Shutdown) {
        for c in lock(&self.shared.conns).values() {
            if which(c.state.load(Ordering::SeqCst)) {
                let _ = c.sock.shutdown(how);
            }
        }
    }

    /// Blocks while the server runs (for [`HttpServer::run`]).
    fn wait(mut self) {
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.stop(Duration::ZERO);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_connection_refusal_is_a_whole_json_rpc_answer() {
        let text = std::str::from_utf8(super::REFUSAL).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("Content-Length: {}\r\n", body.len())));
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], -32603);
    }
}
