//! Serving one MCP session over a byte stream pair: the process's stdin and stdout, or any
//! `Read`/`Write` (tests use socket pairs).
//!
//! A reader, a writer and one bounded queue (in the manner of `lsp-server`'s `Connection`):
//!
//! ```text
//! input ─► [reader] ─► session.handle(msg)
//!             │ decode errors            │ Outbound::send (blocks when the queue is full)
//!             └──────────► bounded queue ◄┘   (or writes itself when nothing is queued)
//!                                │
//!                            [writer] ─► output (flushed when the queue runs dry)
//! ```
//!
//! The thread that calls `serve_on` is the reader, and `Session::handle` runs on it. The
//! session is told `SessionInfo::handle_may_block`: before it blocks it calls
//! `Outbound::will_block`, and the reader hands its role to a worker of an [`Executor`] (the
//! `reading` module), so `ping`, cancellations and the client's answers are read meanwhile; a
//! quick request costs no hand-off at all. While more input is already buffered, every answer
//! written directly is left unflushed until the reader is about to wait for input: one write
//! system call per burst. The writer is a thread of its own (never short of a worker when
//! every reader is blocked in a handler), started when a message first has to queue; the
//! writer and the senders' direct writes are in the `output` module. So a server
//! whose requests are all quick runs on one thread, which spares every system call the cost
//! of a file table and memory shared with other threads. A service that ends sessions on its
//! own while the client is silent (`Service::ends_idle_sessions`) is read by a worker
//! instead, so that the calling thread can return at once.
//!
//! When reading ends the calling thread runs the shutdown: on input EOF the session is closed,
//! the writer drains whatever the service still sends for a grace period, and `serve_on`
//! returns `Ok(())`.

use std::io::{self, BufReader, Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{bounded, select};
use mcp_core::executor::Executor;
use mcp_core::service::{Outbound, Service, SessionInfo, TransportKind};

use crate::ending::{Closer, DoneSignal, Ended, PanicReport, Side};
use crate::error::Error;
use crate::framing::{DEFAULT_MAX_LINE_LEN, MessageReader};
use crate::negotiated::Negotiated;
use crate::output::{HandOff, Outgoing, SharedOutput, StdioOutbound, WriterStart, write_loop};
use crate::process_io;
use crate::reading::{Reading, Role};

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

    /// The most `Session::handle` calls that block at once (default 64).
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
    /// answered with -32600. Even when true, batches follow the rule of every transport
    /// (`mcp_core::jsonrpc::check_batch`): taken only once `initialize` was answered with a
    /// revision that has them (2025-03-26; the transport reads the answer on its way out),
    /// never with `initialize` inside. False refuses them in that revision too.
    pub fn allow_batches(mut self, allow: bool) -> Self {
        self.config.allow_batches = allow;
        self
    }

    /// The most `Session::handle` calls that block at once (default 64; the thread that
    /// called `serve_on` may run one more, once). A session about to block in `handle` says
    /// so (`Outbound::will_block`, `Outbound::will_await_peer`), and the reading goes on in
    /// another thread. With this many blocked, input waits until one returns, unless all of
    /// them wait for the client (whose answers only a reader delivers): then the next
    /// announcement returns false and the session answers without blocking (the kit answers
    /// busy, -32006), and reading goes on.
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
/// with a stderr logger), never `println!`. On unix both streams are read and written through
/// duplicates of their descriptors, without std's per-call locks and stdout's line buffer:
/// what was printed before is flushed first, and input that an earlier `io::stdin()` read
/// buffered but did not consume is not seen.
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
    let input = process_io::stdin().map_err(Error::Io)?;
    let output = process_io::stdout().map_err(Error::Io)?;
    serve_on(input, output, service, config)
}

/// How long past the shutdown grace the last write may take before serving ends without it.
const WRITE_STALL: Duration = Duration::from_secs(2);

/// Serves `service` on any byte stream pair until `input` reaches EOF.
///
/// One session is opened (transport [`TransportKind::Stdio`]). On EOF the session is closed,
/// the writer drains for at most [`Config::shutdown_grace`], both threads are joined and the
/// result is `Ok(())`. The drain ends early when the service has dropped every clone of the
/// `Outbound` it was given, so a service that lets go of it in `Session::close` (once its last
/// answer is sent) exits at once rather than after the grace. A write still blocked 2 s past
/// the grace (a client that stopped reading but keeps its end of the pipe open) is given up:
/// [`Error::Io`] with [`io::ErrorKind::TimedOut`], its thread left to end with the process. If `output` fails first (the
/// client stopped listening), the session is closed and the error returned: at once when the
/// failure is met answering what was read (the usual case), otherwise when reading next wakes
/// (input or EOF), as a blocking read cannot be interrupted. A service that ends sessions
/// itself (`Service::ends_idle_sessions`) is read by a worker thread instead, and then
/// `serve_on` returns at once in every case, leaving the reader to end at EOF.
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
    let (queue_tx, queue_rx) = bounded::<Box<Outgoing>>(config.outbound_capacity);
    let shared_out = Arc::new(SharedOutput::new(Box::new(output)));
    let (shutdown_tx, shutdown_rx) = bounded::<()>(1);
    // Room for every report: the writer's, the reader's, and a panic's.
    let (done_tx, done_rx) = bounded::<(Side, Ended)>(4);
    let stopped = Arc::new(AtomicBool::new(false));

    // The workers: the readers the reading is handed to, one more than `max_threads` (the
    // one reading while the others block); none exists until needed. The reading waits in
    // the queue for a worker only while one will come free (see `reading`). Reading jobs
    // hold the executor too, so that when serving ends on an output failure (a reader still
    // blocked in a read nobody can interrupt) the executor is dropped by the last reader at
    // EOF, not joined here. The writer is not one of them (see `WriterStart`).
    let executor = Arc::new(
        Executor::builder()
            .name("mcp-stdio")
            .max_threads(config.max_threads.saturating_add(1))
            .queue(1)
            .build()
            .map_err(Error::Io)?,
    );
    let writer = {
        let shared_out = Arc::clone(&shared_out);
        let done = DoneSignal::new(done_tx.clone(), Side::Writer);
        let grace = config.shutdown_grace;
        let job = move || {
            let r = write_loop(&shared_out, &queue_rx, &shutdown_rx, grace);
            // Senders meet `Closed` from now on, before `serve_on` returns.
            drop(queue_rx);
            done.finish(r);
        };
        Arc::new(WriterStart::new(Box::new(job)))
    };
    let negotiated = Arc::new(Negotiated::default());
    let outbound = Arc::new(StdioOutbound::new(
        queue_tx,
        Arc::clone(&writer),
        Arc::clone(&shared_out),
        Arc::clone(&negotiated),
    ));
    // The service may end the session itself (`Outbound::end_session`: the client stopped
    // answering its pings); one reason is enough.
    let (ended_tx, ended_rx) = bounded::<String>(1);
    outbound.set_ended(ended_tx);
    // Such a service needs `serve_on` to return while the reader waits for input: the
    // reading then has a thread of its own. Otherwise this thread reads, and a process
    // serving quick requests runs on it alone.
    let read_here = !service.ends_idle_sessions();
    let session = service.open(
        SessionInfo::new(TransportKind::Stdio).with_blocking_handle(),
        outbound.clone(),
    );
    let closer = Arc::new(Closer(Mutex::new(Some(session.clone()))));
    {
        let role = Role {
            reader: MessageReader::new(BufReader::with_capacity(64 * 1024, input))
                .with_max_line_len(config.max_line_len)
                .with_batches(config.allow_batches)
                .with_negotiated(negotiated),
            done: DoneSignal::new(done_tx.clone(), Side::Reader),
            on_worker: !read_here,
        };
        let reading = Reading::new(
            Arc::clone(&shared_out),
            session.clone(),
            Arc::downgrade(&(outbound.clone() as Arc<dyn Outbound>)),
            stopped.clone(),
            Arc::clone(&executor),
            PanicReport(done_tx),
            Arc::clone(&closer),
        );
        outbound.set_hand_off(Arc::downgrade(&(reading.clone() as Arc<dyn HandOff>)));
        if read_here {
            // Returns at the end of input, or when the reading moved to another thread. A
            // panic in `handle` is reported (below) as a panicked reader, as on a worker.
            let _ = panic::catch_unwind(AssertUnwindSafe(move || reading.run(role)));
        } else if let Err(e) = executor.try_execute(move || reading.run(role)) {
            stopped.store(true, Ordering::Release);
            closer.close();
            return Err(Error::Io(io::Error::other(e.to_string())));
        }
    }
    // Each job reports when it ends, even by panic; the first to end decides the path, unless
    // the service ends the session first. (`outbound`, held here, keeps `ended_rx` connected.)
    let first = select! {
        recv(done_rx) -> m => Ok(m.unwrap_or((Side::Reader, Ended::Panicked))),
        recv(ended_rx) -> why => Err(why.unwrap_or_default()),
    };
    let (first, ended) = match first {
        Ok(done) => done,
        Err(reason) => {
            // As when the output fails: the reader, blocked in a read nobody can interrupt,
            // hands nothing more to the session and ends at EOF; the writer drains what is
            // queued for the grace period.
            stopped.store(true, Ordering::Release);
            log::warn!("the server ended the stdio session: {reason}");
            closer.close();
            let _ = shutdown_tx.send(());
            // A writer never started had nothing queued: its job goes unrun.
            drop(writer.take());
            drop(executor);
            return Err(Error::SessionEnded { reason });
        }
    };
    let result = match first {
        Side::Reader => {
            let read_result = ended.into_result("mcp-stdio-reader");
            log::debug!("stdio input ended; closing the session");
            closer.close();
            // Drop our handles so the writer ends as soon as the service drops its own.
            drop(session);
            drop(outbound);
            let _ = shutdown_tx.send(());
            if let Some(job) = writer.take() {
                // Never needed until now: the drain runs on a worker (one is kept for the
                // writer), so that a write the client never reads cannot hold this thread
                // past the grace; here only when no worker can take it.
                if let Err(rejected) = executor.execute(job) {
                    rejected.into_job()();
                }
            }
            // The writer checks its grace between writes; one write blocked on a client that
            // no longer reads would never return: past the grace (and a margin for the last
            // write), serving ends without it. Its thread, and a worker blocked in a write of
            // its own, are left to end with the process (nothing can interrupt a blocked
            // write), rather than joined for ever.
            let deadline = std::time::Instant::now() + config.shutdown_grace + WRITE_STALL;
            // A panic may be reported twice (by the panicking reader and by its role).
            let write_result = loop {
                match done_rx.recv_deadline(deadline) {
                    Ok((Side::Writer, e)) => {
                        writer.join();
                        break e.into_result("mcp-stdio-writer");
                    }
                    Ok((Side::Reader, _)) => {}
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                        log::warn!(
                            "stdio output still blocked past the shutdown grace (the client \
                             stopped reading): serving ends without it"
                        );
                        std::mem::forget(executor);
                        return read_result.and(Err(Error::Io(io::ErrorKind::TimedOut.into())));
                    }
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                        break Err(Error::ThreadPanicked {
                            thread: "mcp-stdio-writer",
                        });
                    }
                }
            };
            read_result.and(write_result)
        }
        Side::Writer => {
            stopped.store(true, Ordering::Release);
            log::debug!("stdio output ended first; closing the session");
            closer.close();
            writer.join();
            match ended.into_result("mcp-stdio-writer") {
                Ok(()) => Err(Error::Closed),
                Err(e) => Err(e),
            }
        }
    };
    // Only now: when this is the last handle (every reading job ended), dropping it joins the
    // workers, and the writer must have had its shutdown signal by then, or the join would
    // wait for a writer that waits for us. A reader still blocked in a read holds its own
    // handle, so it is never joined here.
    drop(executor);
    result
}
