//! The way out: the output stream that the writer thread and the senders' fast path share, the
//! session's [`Outbound`], and the writer thread's loop. The server builds them, and its reader
//! marks the bursts of buffered input during which direct writes defer their flush.

use std::io::{self, BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};
use mcp_core::jsonrpc::{Message, RequestId, Response, ResultValue};
use mcp_core::service::{Closed, Outbound};

use crate::framing::MessageWriter;
use crate::negotiated::Negotiated;

/// The stream the answers are written to.
type Writer = MessageWriter<BufWriter<Box<dyn Write + Send>>>;

/// The output stream, shared by the writer thread and the senders' fast path.
pub(crate) struct SharedOutput {
    writer: Mutex<Writer>,
    /// Messages handed to the writer thread and not yet written.
    queued: AtomicUsize,
    /// Set when the writer thread has ended: no more direct writes.
    stopped: AtomicBool,
    /// Written but not flushed yet.
    dirty: AtomicBool,
    /// A direct write failed: the output is gone (the writer meets the same error with the
    /// message that could not go out directly, and reports it).
    failed: AtomicBool,
    /// Set while the reader works through input that was already buffered: a direct write
    /// (from any thread) then leaves its flush to the reader's next wait for input, so a burst
    /// of pipelined answers costs one write system call instead of one each. `dirty` and
    /// `burst` are a Dekker pair (each side stores its own flag, then loads the other's, all
    /// `SeqCst`): either the writer sees the burst over and flushes, or the reader sees the
    /// write and flushes.
    burst: AtomicBool,
    /// The answers held for batches still waiting for some of theirs.
    pub(crate) batches: Batches,
}

/// What goes to the writer thread: a message, or a batch's answers as one array.
pub(crate) enum Outgoing {
    One(Message),
    Batch(Vec<Message>),
}

/// The most bytes of answers held for one batch: past it, what is held goes out as an array
/// of its own, so a batch of large answers is not held in memory whole (the client still gets
/// every answer, in arrays).
const BATCH_HOLD_BYTES: usize = 4 * 1024 * 1024;

/// The answers to 2025-03-26 batches, held until each batch has all of its own, then sent as
/// one array (JSON-RPC 2.0 §6): answers come from any thread, in any order, and a batch's
/// elements are told apart by the ids it owes (one entry per answer; a null id for an element
/// refused without a readable id).
///
/// A client may reuse, in a later line, an id a batch still owes (a protocol error the engine
/// answers at once): that answer is the later line's. So an answer goes to the newest batch
/// that owes its id, and a single request reusing an owed id is owed by a batch of its own
/// that is sent alone (`expect_alone`), so that neither answer lands in the other's place.
#[derive(Default)]
pub(crate) struct Batches {
    /// Some batch is open: the only thing an answer outside batches looks at.
    any: AtomicBool,
    open: Mutex<Vec<Batch>>,
}

struct Batch {
    owed: Vec<Option<RequestId>>,
    answers: Vec<Message>,
    bytes: usize,
    /// A single request's (see `expect_alone`): its answer goes out on its own.
    alone: bool,
}

/// What became of an answer offered to the batches.
enum Claim {
    /// Not a batch's: it goes out on its own.
    NotMine(Message),
    /// Held for its batch.
    Held,
    /// Its batch is complete (or holds too much): these go out as one array.
    Send(Vec<Message>),
}

impl Batches {
    /// A batch was read that owes these answers.
    pub(crate) fn open(&self, owed: Vec<Option<RequestId>>) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.push(Batch {
            owed,
            answers: Vec::new(),
            bytes: 0,
            alone: false,
        });
        self.any.store(true, Ordering::Release);
    }

    /// A single request `id` was read: if an open batch owes an answer with the same id, the
    /// next answer to `id` is this request's, and goes out alone (see the type).
    pub(crate) fn expect_alone(&self, id: &RequestId) {
        if !self.is_open() {
            return;
        }
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if Self::owner(&open, Some(id)).is_none() {
            return;
        }
        open.push(Batch {
            owed: vec![Some(id.clone())],
            answers: Vec::new(),
            bytes: 0,
            alone: true,
        });
    }

    /// The newest open batch that owes an answer with `id`, and the answer's slot in it.
    fn owner(open: &[Batch], id: Option<&RequestId>) -> Option<(usize, usize)> {
        open.iter().enumerate().rev().find_map(|(at, b)| {
            b.owed
                .iter()
                .position(|o| o.as_ref() == id)
                .map(|s| (at, s))
        })
    }

    pub(crate) fn is_open(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    /// Whether an answer to `id` would be held for a batch.
    fn owes(&self, id: &RequestId) -> bool {
        let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.iter()
            .any(|b| b.owed.iter().any(|o| o.as_ref() == Some(id)))
    }

    fn claim(&self, msg: Message) -> Claim {
        if !matches!(msg, Message::Response(_) | Message::Error(_)) {
            return Claim::NotMine(msg);
        }
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let Some((at, slot)) = Self::owner(&open, msg.id()) else {
            return Claim::NotMine(msg);
        };
        if open[at].alone {
            self.close(&mut open, at);
            return Claim::NotMine(msg);
        }
        let batch = &mut open[at];
        batch.owed.swap_remove(slot);
        batch.bytes += msg.to_vec().len();
        batch.answers.push(msg);
        self.release(&mut open, at)
    }

    /// The answer to `id` will never come (it was cancelled): its batch stops waiting for it.
    fn unanswered(&self, id: &RequestId) -> Option<Vec<Message>> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let (at, slot) = Self::owner(&open, Some(id))?;
        if open[at].alone {
            self.close(&mut open, at);
            return None;
        }
        open[at].owed.swap_remove(slot);
        match self.release(&mut open, at) {
            Claim::Send(all) => Some(all),
            _ => None,
        }
    }

    /// Takes batch `at` out (keeping the others in the order they were read: the newest owes
    /// first).
    fn close(&self, open: &mut Vec<Batch>, at: usize) -> Batch {
        let done = open.remove(at);
        if open.is_empty() {
            self.any.store(false, Ordering::Release);
        }
        done
    }

    /// Batch `at` after a change: complete (closed, its answers out, if it has any), over its
    /// byte bound (what it holds out), or still waiting.
    fn release(&self, open: &mut Vec<Batch>, at: usize) -> Claim {
        let batch = &mut open[at];
        if batch.owed.is_empty() {
            let done = self.close(open, at);
            return if done.answers.is_empty() {
                Claim::Held
            } else {
                Claim::Send(done.answers)
            };
        }
        if batch.bytes > BATCH_HOLD_BYTES {
            batch.bytes = 0;
            return Claim::Send(std::mem::take(&mut batch.answers));
        }
        Claim::Held
    }
}

impl SharedOutput {
    /// Only the thread holding the reading stores `burst` (a hand-off orders the next holder
    /// after it), so a flag already at `on` needs no store; that saves an atomic exchange (what
    /// a `SeqCst` store is) on every message. Skipping it keeps the Dekker pair sound: the
    /// earlier store of the same value still comes, in the single order of `SeqCst`
    /// operations, before this thread's next load of `dirty`.
    fn set_burst(&self, on: bool) {
        if self.burst.load(Ordering::Relaxed) != on {
            self.burst.store(on, Ordering::SeqCst);
        }
    }

    /// The output, buffered, with nothing written or queued yet.
    pub(crate) fn new(output: Box<dyn Write + Send>) -> SharedOutput {
        SharedOutput {
            writer: Mutex::new(MessageWriter::new(BufWriter::with_capacity(
                64 * 1024,
                output,
            ))),
            queued: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
            dirty: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            burst: AtomicBool::new(false),
            batches: Batches::default(),
        }
    }

    /// Whether the output failed or the writer ended: no answer can go out any more, and
    /// the reader stops handing the session what it reads.
    pub(crate) fn is_lost(&self) -> bool {
        self.failed.load(Ordering::Relaxed) || self.stopped.load(Ordering::Acquire)
    }

    /// The reader has more input buffered: direct writes may leave their flush to it.
    pub(crate) fn begin_burst(&self) {
        self.set_burst(true);
    }

    /// The reader is about to wait for input (or to hand the session its last buffered
    /// message): what direct writes left unflushed goes out now.
    pub(crate) fn end_burst(&self) {
        self.set_burst(false);
        if !self.dirty.load(Ordering::SeqCst) {
            return;
        }
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if self.dirty.swap(false, Ordering::SeqCst) {
            if let Err(e) = w.flush() {
                // The writer meets the same error on its next write and ends serving.
                log::debug!("stdio output: {e}");
            }
        }
    }
}

/// Hands the reading over (`Outbound::will_block` calls it; the reader implements it).
pub(crate) trait HandOff: Send + Sync {
    /// If the calling thread is a reader inside `handle`, the reading goes on in another;
    /// `awaits` says this `handle` will wait for the peer. False when that could leave no one
    /// to read the peer's answers (see `reading`): the session must not block then.
    fn hand_off(&self, awaits: bool) -> bool;
}

/// The writer thread's job, started when a message first has to wait in the queue: a server
/// whose answers all go out directly from the thread that read the request (quick handlers,
/// one request at a time) then runs on that one thread, and a process with one thread spares
/// the kernel work that sharing its file table and memory with others costs every system
/// call. If it never started, `serve_on` runs it itself for the drain at shutdown.
///
/// The writer has a thread of its own, not a worker of the readers' executor: when every
/// worker is blocked in a handler, the messages that queue still need a writer, and one that
/// could not start would leave them unwritten and end the serving.
pub(crate) struct WriterStart {
    job: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    started: AtomicBool,
    /// The writer's thread once started, for `serve_on` to join.
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl WriterStart {
    pub(crate) fn new(job: Box<dyn FnOnce() + Send>) -> WriterStart {
        WriterStart {
            job: Mutex::new(Some(job)),
            started: AtomicBool::new(false),
            thread: Mutex::new(None),
        }
    }

    /// Starts the writer thread unless it runs already (or ran, or serving is over: then
    /// `serve_on` took the job).
    fn ensure(&self) {
        if self.started.load(Ordering::Acquire) {
            return;
        }
        let Some(job) = self.take() else { return };
        match thread::Builder::new()
            .name("mcp-stdio-writer".into())
            .spawn(job)
        {
            Ok(handle) => *self.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle),
            // The job, dropped unrun, reports that the writer ended abnormally, which ends
            // serving.
            Err(e) => log::warn!("stdio: cannot start the writer thread: {e}"),
        }
    }

    /// The job, if nobody started it: whoever takes it runs it.
    pub(crate) fn take(&self) -> Option<Box<dyn FnOnce() + Send>> {
        let job = self.job.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.started.store(true, Ordering::Release);
        job
    }

    /// Waits for the writer's thread to end, if it was started (call it once the writer has
    /// reported its end, so that the wait is over at once).
    pub(crate) fn join(&self) {
        let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(handle) = handle {
            // A panic there was reported already (its `DoneSignal`).
            let _ = handle.join();
        }
    }
}

/// The session's way out.
///
/// The common path is the bounded queue to the writer thread. When nothing is queued and no
/// one is writing, a sender writes its message itself instead: one answer, one request at a
/// time, then costs no thread hand-off (the writer thread would need a wake-up), while under
/// load messages still queue and the writer batches them into few syscalls. A message is only
/// written directly when the queue holds nothing, so one thread's messages keep their order.
/// When the writer thread ends its receiver is dropped, which wakes any blocked sender with
/// [`Closed`].
pub(crate) struct StdioOutbound {
    /// Boxed: the queue's slots are allocated and stamped when serving starts, so a slot's
    /// size is resident for the whole session (256 boxes are 4 KiB, 256 messages 24 KiB).
    queue: Sender<Box<Outgoing>>,
    /// The writer thread, started by the first message that has to queue.
    writer: Arc<WriterStart>,
    output: Arc<SharedOutput>,
    /// The reading, which `will_block` hands to another thread (weak: the reading holds the
    /// session, which holds this).
    hand_off: OnceLock<Weak<dyn HandOff>>,
    /// Learns the negotiated revision from the answer to `initialize` (for the batch rule).
    negotiated: Arc<Negotiated>,
    /// Tells `serve_on` that the service ended the session (`Outbound::end_session`).
    ended: OnceLock<Sender<String>>,
}

impl StdioOutbound {
    /// Sends through `queue` to the writer thread, or writes to `output` directly.
    pub(crate) fn new(
        queue: Sender<Box<Outgoing>>,
        writer: Arc<WriterStart>,
        output: Arc<SharedOutput>,
        negotiated: Arc<Negotiated>,
    ) -> StdioOutbound {
        StdioOutbound {
            queue,
            writer,
            output,
            hand_off: OnceLock::new(),
            ended: OnceLock::new(),
            negotiated,
        }
    }

    /// Where `will_block` hands the reading over.
    pub(crate) fn set_hand_off(&self, to: Weak<dyn HandOff>) {
        let _ = self.hand_off.set(to);
    }

    /// Where `end_session` reports (see `serve_on`).
    pub(crate) fn set_ended(&self, to: Sender<String>) {
        let _ = self.ended.set(to);
    }

    /// Writes directly or queues for the writer thread (see the type's description).
    fn send_out(&self, out: Outgoing) -> Result<(), Closed> {
        let direct = match &out {
            Outgoing::One(msg) => self.try_direct_with(|w| w.write_message(msg)),
            Outgoing::Batch(all) => self.try_direct_with(|w| w.write_batch(all)),
        };
        if direct {
            return Ok(());
        }
        self.output.queued.fetch_add(1, Ordering::AcqRel);
        self.writer.ensure();
        self.queue.send(Box::new(out)).map_err(|_| {
            self.output.queued.fetch_sub(1, Ordering::AcqRel);
            Closed
        })
    }

    /// Writes with `write` directly when nothing is queued and no one is writing (see the
    /// type's description); false when it did not (or the write failed), for the caller to
    /// queue the message instead.
    fn try_direct_with(&self, write: impl FnOnce(&mut Writer) -> io::Result<()>) -> bool {
        let out = &self.output;
        if out.stopped.load(Ordering::Acquire) || out.queued.load(Ordering::Acquire) != 0 {
            return false;
        }
        let Ok(mut w) = out.writer.try_lock() else {
            return false;
        };
        // Checked again under the lock: the writer thread writes only while holding it.
        if out.queued.load(Ordering::Acquire) != 0 || out.stopped.load(Ordering::Acquire) {
            return false;
        }
        // On failure the message goes to the queue, so the writer thread meets the error
        // itself and shutdown runs as for any output failure.
        if out.burst.load(Ordering::SeqCst) {
            if write(&mut w).is_err() {
                out.failed.store(true, Ordering::Relaxed);
                return false;
            }
            out.dirty.store(true, Ordering::SeqCst);
            // The burst ended meanwhile: the reader may already wait for input.
            if out.burst.load(Ordering::SeqCst) || !out.dirty.swap(false, Ordering::SeqCst) {
                return true;
            }
            return w.flush().is_ok();
        }
        let ok = write(&mut w).and_then(|()| w.flush()).is_ok();
        if !ok {
            out.failed.store(true, Ordering::Relaxed);
        }
        ok
    }
}

impl Outbound for StdioOutbound {
    fn send(&self, msg: Message, _related: Option<&RequestId>) -> Result<(), Closed> {
        self.negotiated.outgoing(&msg);
        let out = if self.output.batches.is_open() {
            match self.output.batches.claim(msg) {
                Claim::NotMine(msg) => Outgoing::One(msg),
                Claim::Held => return Ok(()),
                Claim::Send(all) => Outgoing::Batch(all),
            }
        } else {
            Outgoing::One(msg)
        };
        self.send_out(out)
    }

    fn unanswered(&self, id: &RequestId) {
        if self.output.batches.is_open() {
            if let Some(all) = self.output.batches.unanswered(id) {
                let _ = self.send_out(Outgoing::Batch(all));
            }
        }
    }

    fn send_result(
        &self,
        id: &RequestId,
        result: &dyn ResultValue,
        related: Option<&RequestId>,
    ) -> Result<(), Closed> {
        // No answer to `initialize` comes this way (the engine sends that one as a message),
        // so there is no revision to learn from it. One a batch owes is held with the rest.
        if self.output.batches.is_open() && self.output.batches.owes(id) {
            return self.send(Response::message(id, result), related);
        }
        if self.try_direct_with(|w| w.write_result(id, result)) {
            return Ok(());
        }
        self.send(Response::message(id, result), related)
    }

    fn will_block(&self) -> bool {
        match self.hand_off.get().and_then(Weak::upgrade) {
            Some(h) => h.hand_off(false),
            None => true,
        }
    }

    fn will_await_peer(&self) -> bool {
        match self.hand_off.get().and_then(Weak::upgrade) {
            Some(h) => h.hand_off(true),
            None => true,
        }
    }

    fn end_session(&self, why: &str) {
        if let Some(tx) = self.ended.get() {
            // One reason is enough; a full channel already holds one.
            let _ = tx.try_send(why.to_owned());
        }
    }
}

/// Writes queued messages, flushing only when the queue is empty. After the shutdown signal it
/// keeps going until the deadline or until every sender is gone.
pub(crate) fn write_loop(
    output: &SharedOutput,
    queue: &Receiver<Box<Outgoing>>,
    shutdown: &Receiver<()>,
    grace: Duration,
) -> io::Result<()> {
    let result = write_queued(output, queue, shutdown, grace);
    output.stopped.store(true, Ordering::Release);
    result
}

fn write_queued(
    output: &SharedOutput,
    queue: &Receiver<Box<Outgoing>>,
    shutdown: &Receiver<()>,
    grace: Duration,
) -> io::Result<()> {
    let lock = || output.writer.lock().unwrap_or_else(|p| p.into_inner());
    let mut deadline: Option<Instant> = None;
    loop {
        let first = match deadline {
            None => select! {
                recv(queue) -> m => match m {
                    Ok(m) => m,
                    Err(_) => break,
                },
                recv(shutdown) -> _ => {
                    deadline = Some(Instant::now() + grace);
                    continue;
                }
            },
            Some(d) => match queue.recv_deadline(d) {
                Ok(m) => m,
                Err(_) => break,
            },
        };
        let mut out = lock();
        write_outgoing(&mut out, &first)?;
        output.queued.fetch_sub(1, Ordering::AcqRel);
        while let Ok(m) = queue.try_recv() {
            write_outgoing(&mut out, &m)?;
            output.queued.fetch_sub(1, Ordering::AcqRel);
        }
        output.dirty.store(false, Ordering::Release);
        out.flush()?;
    }
    let dropped = queue.len();
    if dropped > 0 {
        log::warn!("stdio shutdown grace over; {dropped} queued message(s) not sent");
    }
    lock().flush()
}

fn write_outgoing(w: &mut Writer, out: &Outgoing) -> io::Result<()> {
    match out {
        Outgoing::One(msg) => w.write_message(msg),
        Outgoing::Batch(all) => w.write_batch(all),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_core::jsonrpc::ErrorObject;

    fn answer(id: i64) -> Message {
        Response::message(&RequestId::from(id), &serde_json::json!({"n": id}))
    }

    fn ids(all: &[Message]) -> Vec<Option<RequestId>> {
        all.iter().map(|m| m.id().cloned()).collect()
    }

    /// A batch's answers are held until it owes none, whichever thread and order they come
    /// in; a cancelled element (no answer will come) stops being waited for; answers of
    /// requests outside batches pass.
    #[test]
    fn a_batch_goes_out_whole_once_every_answer_it_owes_came_or_never_will() {
        let b = Batches::default();
        b.open(vec![
            Some(RequestId::from(1)),
            Some(RequestId::from(2)),
            None,
        ]);
        assert!(b.is_open() && b.owes(&RequestId::from(2)));
        assert!(matches!(b.claim(answer(9)), Claim::NotMine(_)));
        assert!(matches!(b.claim(answer(2)), Claim::Held));
        // Cancelled: nothing will come for 1.
        assert!(b.unanswered(&RequestId::from(1)).is_none());
        let refused = Message::error(None, ErrorObject::invalid_request("x"));
        let Claim::Send(all) = b.claim(refused) else {
            panic!("the batch is complete")
        };
        assert_eq!(ids(&all), [Some(RequestId::from(2)), None]);
        assert!(!b.is_open());
        // A batch whose every request was cancelled sends nothing at all.
        b.open(vec![Some(RequestId::from(3))]);
        assert!(b.unanswered(&RequestId::from(3)).is_none());
        assert!(!b.is_open());
    }

    /// Large answers are not held without bound: past the bound, what is held goes out.
    #[test]
    fn a_batch_holds_a_bounded_number_of_bytes() {
        let b = Batches::default();
        b.open((0..4).map(|i| Some(RequestId::from(i))).collect());
        let big = |id: i64| {
            Response::message(
                &RequestId::from(id),
                &serde_json::json!({"text": "a".repeat(3 * 1024 * 1024)}),
            )
        };
        assert!(matches!(b.claim(big(0)), Claim::Held));
        let Claim::Send(first) = b.claim(big(1)) else {
            panic!("over the bound")
        };
        assert_eq!(first.len(), 2);
        assert!(matches!(b.claim(answer(2)), Claim::Held));
        let Claim::Send(rest) = b.claim(answer(3)) else {
            panic!("complete")
        };
        assert_eq!(
            ids(&rest),
            [Some(RequestId::from(2)), Some(RequestId::from(3))]
        );
    }
}
