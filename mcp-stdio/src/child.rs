//! The client side: an MCP server started as a child process and spoken to over its pipes.
//!
//! [`ChildBuilder::spawn`] gives a [`Connection`] (bounded channels, as for any transport) and a
//! [`ChildHandle`] that owns the process. Three threads serve the pipes: a writer (channel ->
//! child stdin, flushed when the channel runs dry), a reader (child stdout -> channel, same
//! framing and limits as the server side) and a stderr forwarder (each line to `log` with target
//! `mcp_stdio::child`). On unix a fourth thread waits for the child's exit, so the exit status is
//! known the moment it happens and every wait for it has a timeout without polling.
//!
//! Shutdown follows the MCP stdio rules: close the child's stdin, wait; SIGTERM, wait; SIGKILL,
//! wait; the child is always reaped.

use std::ffi::OsStr;
use std::io::{self, BufReader, BufWriter, Read};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded, select};
use mcp_core::jsonrpc::Message;

use crate::connection::Connection;
use crate::error::Error;
use crate::framing::{FrameError, LineRead, MessageReader, MessageWriter, read_bounded_line};
use mcp_core::queue::{DEFAULT_MAX_QUEUED_BYTES, Feeder, byte_bounded, message_size};

/// The longest stderr line forwarded to the log; longer ones are summarised, not buffered.
const STDERR_LINE_LIMIT: usize = 64 * 1024;

/// How long to wait for the exit after SIGKILL, and for the pipe threads after the exit.
const FINAL_WAIT: Duration = Duration::from_secs(5);
/// How long after the child's exit its stdout may stay open (what it wrote before it exited is
/// read well within this) before reading counts as ended: a process it left behind may hold
/// the pipe open for as long as it runs.
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// The reaper's feeder of the child's message queue (see [`AfterExit`]).
type ExitFeeder = Arc<Mutex<Option<Feeder<Result<Message, FrameError>>>>>;

/// What the reaper needs to end the reading when the child has exited but its stdout stays
/// open (held by a process the child started): a feeder of the queue, kept in a slot the
/// stdout thread empties when it ends (so that the queue can end with it), and a channel that
/// disconnects when it does.
struct AfterExit {
    feeder: ExitFeeder,
    stdout_done: Receiver<()>,
    stop: Receiver<()>,
}

impl AfterExit {
    /// Run by the reaper once the child exited with `status`.
    #[cfg_attr(not(unix), allow(dead_code))]
    fn exited(self, status: &io::Result<ExitStatus>) {
        if self.stdout_done.recv_timeout(EXIT_GRACE) != Err(RecvTimeoutError::Timeout) {
            return;
        }
        let feeder = self.feeder.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some(feeder) = feeder else { return };
        let status = match status {
            Ok(s) => s.to_string(),
            Err(e) => e.to_string(),
        };
        let why = io::Error::other(format!(
            "the server exited ({status}), but another process it started holds its output open"
        ));
        log::warn!(target: "mcp_stdio::child", "{why}");
        feeder.send(Err(FrameError::Io(why)), 256, &self.stop, Some(EXIT_GRACE));
    }
}

/// Describes the server process to start and how to talk to it.
#[derive(Debug)]
pub struct ChildBuilder {
    command: Command,
    program: String,
    max_line_len: usize,
    capacity: usize,
    max_queued_bytes: usize,
    allow_batches: bool,
    close_grace: Duration,
    term_grace: Duration,
}

impl ChildBuilder {
    /// A server started by running `program` (looked up in `PATH` as `Command` does).
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        let program_ref = program.as_ref();
        ChildBuilder {
            program: program_ref.to_string_lossy().into_owned(),
            command: Command::new(program_ref),
            max_line_len: CHILD_MAX_LINE_LEN,
            capacity: 64,
            max_queued_bytes: DEFAULT_MAX_QUEUED_BYTES,
            allow_batches: true,
            close_grace: Duration::from_secs(2),
            term_grace: Duration::from_secs(2),
        }
    }

    /// The program and its arguments as one line (lossy UTF-8, space-separated): a name for
    /// this server, e.g. as the key of a cache of what it speaks.
    pub fn command_line(&self) -> String {
        std::iter::once(self.command.get_program())
            .chain(self.command.get_args())
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I, A>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    /// Sets one environment variable for the child.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    /// Sets environment variables for the child.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.command.envs(vars);
        self
    }

    /// Starts the child with an empty environment plus whatever [`env`](Self::env) adds (by
    /// default it inherits ours, secrets included).
    pub fn env_clear(mut self) -> Self {
        self.command.env_clear();
        self
    }

    /// The child's working directory.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// The longest line accepted from the child's stdout (default 16 MiB, the HTTP client's
    /// body limit: a server's answer may carry a screenshot or a file, and the official
    /// SDKs' clients take such answers). A longer answer fails its call at once, saying so.
    pub fn max_line_len(mut self, bytes: usize) -> Self {
        self.max_line_len = bytes.max(1);
        self
    }

    /// Capacity of each of the two channels (default 64 messages).
    pub fn channel_capacity(mut self, messages: usize) -> Self {
        self.capacity = messages;
        self
    }

    /// The most bytes of the child's messages held for the reader of the
    /// [`Connection`] (default [`DEFAULT_MAX_QUEUED_BYTES`], 16 MiB). When the reader falls
    /// behind and the queue holds this much, the reading thread stops reading the child's
    /// stdout until the reader catches up, so the child blocks on its writes: a child that
    /// floods large messages costs this much memory, not the channel capacity times the line
    /// limit (64 x 4 MiB). A single message larger than this still passes, alone.
    pub fn max_queued_bytes(mut self, bytes: usize) -> Self {
        self.max_queued_bytes = bytes.max(1);
        self
    }

    /// Whether a JSON array from the child is split into messages (default true; only
    /// 2025-03-26 servers may send them).
    pub fn allow_batches(mut self, allow: bool) -> Self {
        self.allow_batches = allow;
        self
    }

    /// How long [`ChildHandle::shutdown`] waits for the child to exit after closing its stdin
    /// before sending SIGTERM (default 2 s).
    pub fn close_grace(mut self, grace: Duration) -> Self {
        self.close_grace = grace;
        self
    }

    /// How long [`ChildHandle::shutdown`] waits after SIGTERM before SIGKILL (default 2 s).
    pub fn term_grace(mut self, grace: Duration) -> Self {
        self.term_grace = grace;
        self
    }

    /// Starts the child and its pipe threads.
    ///
    /// # Errors
    /// [`Error::Spawn`] when the program cannot be started, [`Error::Io`] when a thread cannot.
    pub fn spawn(mut self) -> Result<(Connection, ChildHandle), Error> {
        let mut child = self
            .command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| Error::Spawn {
                program: self.program.clone(),
                source,
            })?;
        let pid = child.id();
        // All three are Some: they were asked for as pipes just above.
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::Closed);
        };

        let (out_tx, out_rx) = bounded::<Message>(self.capacity);
        let (close_stdin_tx, close_stdin_rx) = bounded::<()>(1);
        let (stop_reading_tx, stop_reading_rx) = bounded::<()>(1);
        let (in_tx, in_rx, forwarder) = match byte_bounded(
            self.capacity,
            self.max_queued_bytes,
            stop_reading_rx.clone(),
            "mcp-child-queue",
        ) {
            Ok(q) => q,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::Io(e));
            }
        };
        let (io_done_tx, io_done_rx) = bounded::<()>(1);
        let (stdout_done_tx, stdout_done_rx) = bounded::<()>(1);
        let exit_feeder: ExitFeeder = Arc::new(Mutex::new(Some(in_tx.clone())));
        let after_exit = AfterExit {
            feeder: Arc::clone(&exit_feeder),
            stdout_done: stdout_done_rx,
            stop: stop_reading_rx.clone(),
        };

        let mut handle = ChildHandle {
            pid,
            program: self.program,
            exit: ExitWatch::new(child, io_done_rx.clone(), after_exit)?,
            close_stdin: Some(close_stdin_tx),
            stop_reading: Some(stop_reading_tx),
            io_done: io_done_rx,
            threads: vec![forwarder],
            close_grace: self.close_grace,
            term_grace: self.term_grace,
            finished: false,
        };

        let done = io_done_tx.clone();
        let started = spawn_named("mcp-child-stdin", move || {
            let _done = done;
            write_stdin(stdin, &out_rx, &close_stdin_rx);
        })
        .and_then(|t| {
            handle.threads.push(t);
            let done = io_done_tx.clone();
            let reader = MessageReader::new(BufReader::with_capacity(64 * 1024, stdout))
                .with_max_line_len(self.max_line_len)
                .with_batches(self.allow_batches);
            spawn_named("mcp-child-stdout", move || {
                let _done = done;
                let _stdout_done = stdout_done_tx;
                read_stdout(reader, &in_tx, &stop_reading_rx);
                // The reaper's feeder goes too: the queue ends with the reading.
                exit_feeder.lock().unwrap_or_else(|p| p.into_inner()).take();
            })
        })
        .and_then(|t| {
            handle.threads.push(t);
            let done = io_done_tx;
            spawn_named("mcp-child-stderr", move || {
                let _done = done;
                forward_stderr(stderr, pid);
            })
        });
        match started {
            Ok(t) => handle.threads.push(t),
            Err(e) => {
                // Dropping the handle runs the shutdown sequence.
                return Err(e);
            }
        }
        Ok((
            Connection {
                sender: out_tx,
                receiver: in_rx,
            },
            handle,
        ))
    }
}

fn spawn_named<F: FnOnce() + Send + 'static>(name: &str, f: F) -> Result<JoinHandle<()>, Error> {
    thread::Builder::new()
        .name(name.to_owned())
        .spawn(f)
        .map_err(Error::Io)
}

fn write_stdin(stdin: ChildStdin, queue: &Receiver<Message>, close: &Receiver<()>) {
    let mut out = MessageWriter::new(BufWriter::with_capacity(64 * 1024, stdin));
    let result = (|| -> std::io::Result<()> {
        loop {
            let (first, closing) = select! {
                recv(queue) -> m => match m {
                    Ok(m) => (Some(m), false),
                    Err(_) => return Ok(()),
                },
                recv(close) -> _ => (None, true),
            };
            if let Some(m) = first {
                out.write_message(&m)?;
            }
            // Whatever is already queued goes out before stdin closes.
            while let Ok(m) = queue.try_recv() {
                out.write_message(&m)?;
            }
            out.flush()?;
            if closing {
                return Ok(());
            }
        }
    })();
    if let Err(e) = result {
        log::debug!(target: "mcp_stdio::child", "writing to the child's stdin failed: {e}");
    }
    // Dropping `out` closes the child's stdin.
}

fn read_stdout(
    reader: MessageReader<BufReader<ChildStdout>>,
    to: &Feeder<Result<Message, FrameError>>,
    stop: &Receiver<()>,
) {
    /// What an error item is counted as (it holds a short description).
    const ERROR_SIZE: usize = 256;
    for item in reader {
        let size = match &item {
            Ok(m) => message_size(m),
            Err(e) => {
                log::warn!(target: "mcp_stdio::child", "child stdout: {e}");
                ERROR_SIZE
            }
        };
        // Waits for room (in bytes and in messages): meanwhile stdout is not read.
        if !to.send(item, size, stop, None) {
            return;
        }
    }
}

fn forward_stderr<R: Read>(stderr: R, pid: u32) {
    let mut r = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        match read_bounded_line(&mut r, &mut line, STDERR_LINE_LIMIT, false) {
            Ok(LineRead::Line) => log::info!(
                target: "mcp_stdio::child",
                "[{pid}] {}",
                String::from_utf8_lossy(&line)
            ),
            Ok(LineRead::TooLarge(len, ..)) => log::info!(
                target: "mcp_stdio::child",
                "[{pid}] <stderr line of {len} bytes not shown>"
            ),
            Ok(LineRead::Eof) | Err(_) => return,
        }
    }
}

/// The default longest line read from a child: larger than a server's own limit on what it
/// reads ([`crate::DEFAULT_MAX_LINE_LEN`]), since answers (tool results) are where size lives.
const CHILD_MAX_LINE_LEN: usize = 16 * 1024 * 1024;

/// Owns a running server process. Dropping it without [`shutdown`](Self::shutdown) runs the
/// shutdown sequence (bounded by the graces), so no child outlives its handle unnoticed.
#[derive(Debug)]
pub struct ChildHandle {
    pid: u32,
    program: String,
    exit: ExitWatch,
    close_stdin: Option<Sender<()>>,
    stop_reading: Option<Sender<()>>,
    io_done: Receiver<()>,
    threads: Vec<JoinHandle<()>>,
    close_grace: Duration,
    term_grace: Duration,
    finished: bool,
}

impl ChildHandle {
    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// The program that was started.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// Closes the child's stdin after writing what is already queued; the polite "please exit"
    /// of the MCP stdio transport. Messages sent afterwards fail.
    pub fn close_stdin(&mut self) {
        self.close_stdin.take();
    }

    /// The exit status, if the child has exited (never blocks).
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.exit
            .wait_timeout(Duration::ZERO, self.pid)
            .ok()
            .flatten()
    }

    /// Waits up to `timeout` for the child to exit.
    ///
    /// # Errors
    /// [`Error::Io`] when waiting for the process failed.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<Option<ExitStatus>, Error> {
        self.exit.wait_timeout(timeout, self.pid)
    }

    /// Stops the child: closes its stdin and waits the close grace, then SIGTERM and the term
    /// grace, then SIGKILL (on non-unix systems, the kill comes straight after the close grace).
    /// Reaps the child, stops forwarding its output and joins the pipe threads. Calling it again
    /// returns the same status.
    ///
    /// # Errors
    /// [`Error::ChildDidNotExit`] when even SIGKILL did not end it within 5 s, [`Error::Io`]
    /// when a signal could not be sent or the wait failed.
    pub fn shutdown(&mut self) -> Result<ExitStatus, Error> {
        let status = self.stop_process()?;
        self.finish_io();
        Ok(status)
    }

    fn stop_process(&mut self) -> Result<ExitStatus, Error> {
        self.close_stdin();
        if let Some(s) = self.wait_timeout(self.close_grace)? {
            return Ok(s);
        }
        if cfg!(unix) {
            log::debug!(target: "mcp_stdio::child", "[{}] still running {:?} after stdin closed; SIGTERM", self.pid, self.close_grace);
            self.exit.terminate(self.pid)?;
            if let Some(s) = self.wait_timeout(self.term_grace)? {
                return Ok(s);
            }
        }
        log::warn!(target: "mcp_stdio::child", "[{}] did not exit; killing it", self.pid);
        self.exit.kill(self.pid)?;
        self.wait_timeout(FINAL_WAIT)?
            .ok_or(Error::ChildDidNotExit { pid: self.pid })
    }

    /// Stops forwarding and joins the pipe threads, waiting a bounded time: a grandchild that
    /// inherited the pipes can keep them open, and then the threads are left to end on their own.
    fn finish_io(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.stop_reading.take();
        let deadline = Instant::now() + FINAL_WAIT;
        match self.io_done.recv_deadline(deadline) {
            Err(RecvTimeoutError::Timeout) => {
                log::warn!(target: "mcp_stdio::child", "[{}] pipes still open after exit (a grandchild holds them?); not waiting", self.pid);
                self.threads.clear();
            }
            _ => {
                for t in self.threads.drain(..) {
                    let _ = t.join();
                }
            }
        }
    }
}

impl Drop for ChildHandle {
    fn drop(&mut self) {
        if !self.finished {
            if let Err(e) = self.stop_process() {
                log::warn!(target: "mcp_stdio::child", "[{}] shutdown on drop: {e}", self.pid);
            }
            self.finish_io();
        }
    }
}

/// Knows when the child exits. On unix a thread blocks in `wait()` and reports the status on a
/// channel, so waits have timeouts without polling; signals go by pid, skipped once reaped.
#[cfg(unix)]
#[derive(Debug)]
struct ExitWatch {
    status: Option<ExitStatus>,
    rx: Receiver<std::io::Result<ExitStatus>>,
}

#[cfg(unix)]
impl ExitWatch {
    fn new(mut child: Child, _io_done: Receiver<()>, after: AfterExit) -> Result<Self, Error> {
        let (tx, rx) = bounded(1);
        let pid = child.id();
        let spawned = thread::Builder::new()
            .name("mcp-child-reaper".to_owned())
            .spawn(move || {
                let status = child.wait();
                let report = match &status {
                    Ok(s) => Ok(*s),
                    Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
                };
                let _ = tx.send(report);
                after.exited(&status);
            });
        if let Err(e) = spawned {
            // The child moved into the closure that never ran; it is dropped unreaped. Kill it
            // so it does not run on unsupervised.
            let _ = sys::signal(pid, sys::SIGKILL);
            return Err(Error::Io(e));
        }
        Ok(ExitWatch { status: None, rx })
    }

    fn wait_timeout(&mut self, timeout: Duration, _pid: u32) -> Result<Option<ExitStatus>, Error> {
        if let Some(s) = self.status {
            return Ok(Some(s));
        }
        match self.rx.recv_timeout(timeout) {
            Ok(Ok(s)) => {
                self.status = Some(s);
                Ok(Some(s))
            }
            Ok(Err(e)) => Err(Error::Io(e)),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => Ok(None),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Err(Error::Io(
                std::io::Error::other("the child's exit was already reported as an error"),
            )),
        }
    }

    fn send(&mut self, pid: u32, sig: i32) -> Result<(), Error> {
        // Never signal a pid whose process was already reaped: the number may be reused.
        if self.wait_timeout(Duration::ZERO, pid)?.is_some() {
            return Ok(());
        }
        match sys::signal(pid, sig) {
            Ok(()) => Ok(()),
            // Exited between the check and the signal.
            Err(e) if e.raw_os_error() == Some(sys::ESRCH) => Ok(()),
            Err(e) => Err(Error::Io(e)),
        }
    }

    fn terminate(&mut self, pid: u32) -> Result<(), Error> {
        self.send(pid, sys::SIGTERM)
    }

    fn kill(&mut self, pid: u32) -> Result<(), Error> {
        self.send(pid, sys::SIGKILL)
    }
}

#[cfg(unix)]
mod sys {
    use std::io;

    // libc is linked by std on every unix; declaring the one function avoids a dependency.
    unsafe extern "C" {
        fn kill(pid: i32, sig: i32) -> i32;
    }

    /// Same numbers on Linux, the BSDs and macOS.
    pub const SIGKILL: i32 = 9;
    pub const SIGTERM: i32 = 15;
    pub const ESRCH: i32 = 3;

    pub fn signal(pid: u32, sig: i32) -> io::Result<()> {
        // A pid of 0 or a negative one would signal a whole process group.
        let pid = i32::try_from(pid)
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| io::Error::other("invalid pid"))?;
        // SAFETY: kill(2) takes two integers and touches no memory of ours.
        let rc = unsafe { kill(pid, sig) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// Elsewhere: the handle keeps the `Child`. Without a portable blocking wait that has a
/// timeout, a wait blocks until the pipe threads end (the exit closes the pipes) and then asks
/// the OS; termination is `Child::kill`, as there is no SIGTERM.
#[cfg(not(unix))]
#[derive(Debug)]
struct ExitWatch {
    child: Child,
    status: Option<ExitStatus>,
    io_done: Receiver<()>,
}

#[cfg(not(unix))]
impl ExitWatch {
    fn new(child: Child, io_done: Receiver<()>, _after: AfterExit) -> Result<Self, Error> {
        Ok(ExitWatch {
            child,
            status: None,
            io_done,
        })
    }

    fn wait_timeout(&mut self, timeout: Duration, _pid: u32) -> Result<Option<ExitStatus>, Error> {
        if let Some(s) = self.status {
            return Ok(Some(s));
        }
        // Never sent on; it disconnects when the last pipe thread ends.
        let _ = self.io_done.recv_timeout(timeout);
        let s = self.child.try_wait()?;
        self.status = s;
        Ok(s)
    }

    fn terminate(&mut self, pid: u32) -> Result<(), Error> {
        self.kill(pid)
    }

    fn kill(&mut self, _pid: u32) -> Result<(), Error> {
        if self.status.is_none() {
            let _ = self.child.kill();
        }
        Ok(())
    }
}
