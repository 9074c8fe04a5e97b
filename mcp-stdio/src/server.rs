//! Serving one MCP session over a byte stream pair: the process's stdin and stdout, or any
//! `Read`/`Write` (tests use socket pairs).
//!
//! A reading thread, a writer thread and one bounded queue:
//!
//! ```text
//! input ─► [mcp-stdio-reader] ─► session.handle(msg)
//!                 │ decode errors            │ Outbound::send (blocks when the queue is full)
//!                 └──────────► bounded queue ◄┘   (or writes itself when nothing is queued)
//!                                    │
//!                          [mcp-stdio-writer] ─► output (flushed when the queue runs dry)
//! ```
//!
//! The session is told (`SessionInfo::handle_may_block`) that `handle` may block: a watchdog
//! (`mcp-stdio-watch`) gives the reading to a new thread when a `handle` runs for more than a
//! couple of milliseconds, so a service can answer quick requests on the reading thread itself
//! and still never stop reading (see the `relay` module). The writer thread and the senders'
//! direct writes are in the `output` module.
//!
//! The calling thread waits for either thread to finish and then runs the shutdown: on input EOF
//! it closes the session, lets the writer drain whatever the service still sends for a grace
//! period, joins both threads and returns `Ok(())`.

use std::io::{self, BufReader, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crossbeam_channel::{Sender, bounded};
use mcp_core::jsonrpc::Message;
use mcp_core::service::{Outbound, Service, SessionInfo, TransportKind};

use crate::error::Error;
use crate::framing::{DEFAULT_MAX_LINE_LEN, MessageReader};
use crate::output::{SharedOutput, StdioOutbound, write_loop};
use crate::relay::{Relay, Role};

/// How the server transport behaves. Build one with [`Config::builder`]; the default suits a
/// normal stdio server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    max_line_len: usize,
    outbound_capacity: usize,
    shutdown_grace: Duration,
    allow_batches: bool,
    max_threads: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_line_len: DEFAULT_MAX_LINE_LEN,
            outbound_capacity: 256,
            shutdown_grace: Duration::from_secs(1),
            allow_batches: true,
            max_threads: 64,
        }
    }
}

impl Config {
    /// A builder starting from the defaults.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder {
            config: Config::default(),
        }
    }

    /// The longest input line accepted (default 4 MiB).
    pub fn max_line_len(&self) -> usize {
        self.max_line_len
    }

    /// How many outgoing messages may wait for the writer (default 256).
    pub fn outbound_capacity(&self) -> usize {
        self.outbound_capacity
    }

    /// How long the writer keeps sending after input EOF (default 1 s).
    pub fn shutdown_grace(&self) -> Duration {
        self.shutdown_grace
    }

    /// Whether a JSON array on one line is split into messages (default true).
    pub fn allow_batches(&self) -> bool {
        self.allow_batches
    }

    /// The most threads that read the input or run `Session::handle` at once (default 64).
    pub fn max_threads(&self) -> usize {
        self.max_threads
    }
}

/// Builds a [`Config`].
#[derive(Debug, Clone)]
pub struct ConfigBuilder {
    config: Config,
}

impl ConfigBuilder {
    /// The longest input line accepted; a longer line is discarded as it arrives and answered
    /// with -32600 "message too large" (id null).
    pub fn max_line_len(mut self, bytes: usize) -> Self {
        self.config.max_line_len = bytes.max(1);
        self
    }

    /// How many outgoing messages may queue for the writer before `Outbound::send` blocks. The
    /// blocking is the backpressure: a client that stops reading slows the service down instead
    /// of growing memory. Zero makes every send wait for the writer.
    pub fn outbound_capacity(mut self, messages: usize) -> Self {
        self.config.outbound_capacity = messages;
        self
    }

    /// How long, after input EOF and `Session::close`, the writer keeps writing what the service
    /// still sends. The wait ends early once the service drops every handle to its outbound.
    /// Keep it under the client's own patience (clients send SIGTERM a few seconds after
    /// closing our stdin).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.config.shutdown_grace = grace;
        self
    }

    /// Whether a JSON-RPC batch (a JSON array; only the 2025-03-26 revision has them) is
    /// accepted. When true, the batch is split and each element handed to the session on its
    /// own; the answers go out as separate lines, not as one array. When false, a batch is
    /// answered with -32600. The transport cannot know the negotiated revision, so the default is
    /// true: a client of a later revision never sends batches, and one of 2025-03-26 may.
    pub fn allow_batches(mut self, allow: bool) -> Self {
        self.config.allow_batches = allow;
        self
    }

    /// The most threads that read the input or run `Session::handle` at once (default 64).
    /// The session may block in `handle` (a slow tool run on the reading thread): after a
    /// couple of milliseconds another thread takes over the reading, up to this many; beyond
    /// it, input waits until a `handle` returns.
    pub fn max_threads(mut self, n: usize) -> Self {
        self.config.max_threads = n.max(1);
        self
    }

    /// The finished configuration.
    pub fn build(self) -> Config {
        self.config
    }
}

/// Serves `service` on the process's stdin and stdout with the default [`Config`], until stdin
/// reaches EOF.
///
/// Nothing but MCP messages may reach stdout while this runs: log to stderr (the `log` crate
/// with a stderr logger), never `println!`.
///
/// # Errors
/// [`Error::Io`] when stdin or stdout fails, [`Error::ThreadPanicked`] when the session panicked.
pub fn serve<S: Service>(service: S) -> Result<(), Error> {
    serve_with(service, &Config::default())
}

/// [`serve`] with a configuration.
///
/// # Errors
/// As [`serve`].
pub fn serve_with<S: Service>(service: S, config: &Config) -> Result<(), Error> {
    serve_on(io::stdin(), io::stdout(), service, config)
}

/// Serves `service` on any byte stream pair until `input` reaches EOF.
///
/// One session is opened (transport [`TransportKind::Stdio`]). On EOF the session is closed,
/// the writer drains for at most [`Config::shutdown_grace`], both threads are joined and the
/// result is `Ok(())`. The drain ends early when the service has dropped every clone of the
/// `Outbound` it was given, so a service that lets go of it in `Session::close` (once its last
/// answer is sent) exits at once rather than after the grace. If `output` fails first (the client stopped listening), the session is
/// closed and the error returned at once; the reader thread, stuck in a blocking read that
/// cannot be interrupted, is left to end at EOF and hands nothing more to the session.
///
/// # Errors
/// [`Error::Io`] when reading or writing fails, [`Error::ThreadPanicked`] when a thread
/// panicked (usually inside `Session::handle`).
pub fn serve_on<R, W, S>(input: R, output: W, service: S, config: &Config) -> Result<(), Error>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
    S: Service,
{
    let (queue_tx, queue_rx) = bounded::<Message>(config.outbound_capacity);
    let shared_out = Arc::new(SharedOutput::new(Box::new(output)));
    let (shutdown_tx, shutdown_rx) = bounded::<()>(1);
    let (done_tx, done_rx) = bounded::<Side>(2);
    let stopped = Arc::new(AtomicBool::new(false));

    let outbound = Arc::new(StdioOutbound::new(queue_tx, Arc::clone(&shared_out)));
    let session = service.open(
        SessionInfo::new(TransportKind::Stdio).with_blocking_handle(),
        outbound.clone(),
    );

    let writer = {
        let shared_out = Arc::clone(&shared_out);
        let done = DoneSignal(done_tx.clone(), Side::Writer);
        let grace = config.shutdown_grace;
        spawn("mcp-stdio-writer", move || {
            let _done = done;
            write_loop(&shared_out, &queue_rx, &shutdown_rx, grace)
        })?
    };
    let panic_tx = done_tx.clone();
    let role = Role {
        reader: MessageReader::new(BufReader::with_capacity(64 * 1024, input))
            .with_max_line_len(config.max_line_len)
            .with_batches(config.allow_batches),
        _done: Box::new(DoneSignal(done_tx, Side::Reader)),
    };
    let started = Relay::start(
        role,
        Arc::clone(&shared_out),
        session.clone(),
        outbound.clone() as Arc<dyn Outbound>,
        stopped.clone(),
        config.max_threads,
        Box::new(move || {
            let _ = panic_tx.try_send(Side::Reader);
        }),
    );
    let (relay, watchdog) = match started {
        Ok(r) => r,
        Err(e) => {
            session.close();
            return Err(Error::Io(e));
        }
    };

    // Each thread reports when it ends, even by panic; the first to end decides the path.
    let first = done_rx.recv().unwrap_or(Side::Reader);
    match first {
        Side::Reader => {
            drop(watchdog);
            let read_result = match relay.outcome() {
                Some(r) => r.map_err(Error::Io),
                None => Err(Error::ThreadPanicked {
                    thread: "mcp-stdio-reader",
                }),
            };
            log::debug!("stdio input ended; closing the session");
            session.close();
            // Drop our handles so the writer ends as soon as the service drops its own.
            drop(session);
            drop(outbound);
            let _ = shutdown_tx.send(());
            let write_result = join(writer, "mcp-stdio-writer");
            read_result.and(write_result)
        }
        Side::Writer => {
            stopped.store(true, Ordering::Release);
            let write_result = join(writer, "mcp-stdio-writer");
            log::debug!("stdio output ended first; closing the session");
            session.close();
            match write_result {
                Ok(()) => Err(Error::Closed),
                Err(e) => Err(e),
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Side {
    Reader,
    Writer,
}

/// Reports a thread's end from its destructor, so a panic reports too.
struct DoneSignal(Sender<Side>, Side);

impl Drop for DoneSignal {
    fn drop(&mut self) {
        let _ = self.0.try_send(self.1);
    }
}

fn spawn<F>(name: &'static str, f: F) -> Result<JoinHandle<io::Result<()>>, Error>
where
    F: FnOnce() -> io::Result<()> + Send + 'static,
{
    thread::Builder::new()
        .name(name.to_owned())
        .spawn(f)
        .map_err(Error::Io)
}

fn join(handle: JoinHandle<io::Result<()>>, thread: &'static str) -> Result<(), Error> {
    match handle.join() {
        Ok(r) => r.map_err(Error::Io),
        Err(_) => Err(Error::ThreadPanicked { thread }),
    }
}
