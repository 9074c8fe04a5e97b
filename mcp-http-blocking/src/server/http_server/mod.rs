//! The tiny_http adapter: a listening socket with timeouts its connections inherit, accept
//! loops that restart when tiny_http's accept thread dies, request threads that take
//! requests straight off tiny_http's queue and answer them (see [`workers`]), and SSE written
//! by hand on stream threads (chunked, one flush per event).
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
//!   here are capped (`max_in_flight`, 503 beyond), which also caps the request threads (one
//!   more is started only when a request is taken and no other thread waits), and idle
//!   connections end by timeout.

mod workers;

use std::io;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};
use mcp_core::service::Service;
use socket2::{Domain, Protocol, Socket, Type};

use crate::Error;
use crate::server::config::HttpConfig;
use crate::server::streamable::{StreamableHttp, Sweeper};

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

    /// Requests handled at once (default 512); beyond it 503. An answer that turns into an SSE
    /// stream gives its place back: streams are bounded by sessions and streams per session.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// Binds the socket and prepares the transport for `service`.
    ///
    /// # Errors
    /// [`Error::Bind`] when the address does not resolve or cannot be bound; [`Error::Io`]
    /// when the watchdog thread of inline requests cannot be started.
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
            core: StreamableHttp::new_inline(service, self.cfg).map_err(Error::Io)?,
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
        let (token, exited) = bounded::<()>(0);
        let (helper_wake, helper_rx) = bounded::<()>(1);
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
            gens: Mutex::new(Vec::new()),
            streams: bounded(0),
            min_threads: workers::min_threads(),
            helper: Helper {
                wake: helper_wake,
                asleep: AtomicBool::new(true),
                token: Mutex::new(Some(token.clone())),
            },
        });
        let sweeper = self.core.spawn_sweeper().map_err(Error::Io)?;
        workers::start_generation(&shared, &token).map_err(Error::Io)?;
        workers::start_helper(&shared, helper_rx).map_err(Error::Io)?;
        Ok(ServerHandle {
            addr,
            shared,
            _stop: stop_tx,
            sweeper: Some(sweeper),
            exited: Some(exited),
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
    /// The generations that may still have threads, for waking them at shutdown.
    gens: Mutex<Vec<Weak<workers::Gen>>>,
    /// Rendezvous with idle stream threads: a send succeeds only when one is waiting.
    streams: (Sender<StreamJob>, Receiver<StreamJob>),
    /// See [`workers::min_threads`].
    min_threads: usize,
    helper: Helper,
}

/// What the recv threads share with the helper that starts more of them when they are stuck.
struct Helper {
    wake: Sender<()>,
    /// Set while the helper sleeps (or is about to): the next thread that finds nobody else
    /// waiting wakes it.
    asleep: AtomicBool,
    /// The exit token lent to the threads the helper starts; taken at shutdown.
    token: Mutex<Option<Sender<()>>>,
}

/// One SSE answer for a stream thread to write.
type StreamJob = Box<dyn FnOnce() + Send>;

/// Longest wait in [`ServerHandle::shutdown`] for requests being answered to finish.
const STOP_WAIT: Duration = Duration::from_secs(1);

/// A running server.
pub struct ServerHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _stop: Sender<()>,
    sweeper: Option<Sweeper>,
    /// Disconnected once every recv thread has ended (each holds a sender).
    exited: Option<Receiver<()>>,
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
        self.shared.in_flight.load(Ordering::Relaxed)
    }

    /// Connections given up with a leaked tiny_http thread (see the module docs).
    pub fn leaked_connections(&self) -> usize {
        self.shared.leaked.load(Ordering::SeqCst)
    }

    /// How many accept loops were started (restarts included).
    pub fn accept_generations(&self) -> usize {
        self.shared.generations.load(Ordering::Relaxed)
    }

    /// Stops accepting, closes every session (ending their streams) and waits until the
    /// request threads have ended; one still answering a request is given about a second.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        if let Ok(mut t) = self.shared.helper.token.lock() {
            t.take();
        }
        let _ = self.shared.helper.wake.try_send(());
        self.shared.core.close_all();
        if let Some(s) = self.sweeper.take() {
            s.stop();
        }
        let gens: Vec<_> = match self.shared.gens.lock() {
            Ok(mut g) => g.drain(..).filter_map(|w| w.upgrade()).collect(),
            Err(_) => Vec::new(),
        };
        // Wake the threads waiting in recv so they see the stop at once.
        for g in &gens {
            for _ in 0..g.threads.load(Ordering::SeqCst) {
                g.server.unblock();
            }
        }
        drop(gens);
        if let Some(rx) = self.exited.take() {
            if let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(STOP_WAIT) {
                log::debug!("shutdown: requests still being answered are left to finish");
            }
        }
    }

    /// Blocks while the server runs (for [`HttpServer::run`]).
    fn wait(&self) {
        if let Some(rx) = &self.exited {
            while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(Duration::from_secs(3600)) {}
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.stop();
    }
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
}
