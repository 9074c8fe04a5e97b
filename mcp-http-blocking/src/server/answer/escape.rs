//! Running a request's work on the thread that read the request, with an escape for when the
//! answer must start before that work is done.
//!
//! Why: handing each request to the service's worker threads and the answer back costs two
//! wake-ups and context switches, the larger part of a small request's cost on a busy machine.
//! So the server (see [`crate::HttpServer`]) opens its sessions with
//! `SessionInfo::handle_may_block`, and the service may run a handler inside
//! `Session::handle`, on the request's own thread; the answer is then already there when
//! `handle` returns (in the stream's channel, or for a 2026-07-28 exchange kept aside with no
//! channel made at all), and goes back as JSON with no hand-off.
//!
//! The hazard: while the handler runs, nobody writes the response. A handler that sends more
//! progress notifications than the stream's channel holds would stall, and one that asks the
//! client something (sampling, elicitation, roots: a request that travels on this response's
//! SSE stream) would wait for an answer the client never sees. So the rest of the answer (the
//! [`Deferred`] part: turning the channel into JSON or SSE and writing it) sits in an
//! [`Escape`], a per-request slot, together with the HTTP server's [`Handoff`], which can
//! write a response from another thread. Whoever comes first takes it:
//! - the request's thread, when `handle` returned: it answers as it always did;
//! - a message for the request that is not its final answer (progress, a log message, a
//!   request to the client), or the service letting go of the stream (SSE polling): the
//!   answer starts on another thread at once, before the message is queued;
//! - the [`Watch`], when the handler has run for longer than the JSON window: so a slow
//!   handler's client gets its SSE head and keep-alives as before, and a gone client is
//!   noticed (in the 2026-07-28 era that is the cancellation).

use crate::server::lock;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::Receiver;

use super::respond::{Answer, OnEnd, answer, json_answer, lone_event};
use crate::server::config::HttpConfig;
use crate::server::http::{Frame, HttpResponse, StreamEnd};

/// Writes a response from another thread: the HTTP server gives one per request, and the
/// transport calls it at most once, with the work that produces the response.
pub(crate) type Handoff = Box<dyn FnOnce(Deferred) + Send>;

/// How a request reached the transport core.
pub(crate) enum Via {
    /// The caller writes the returned response itself ([`crate::StreamableHttp::handle`]).
    Plain,
    /// The HTTP server can also write the response from another thread.
    Inline(Handoff),
}

/// What the core did with a request.
pub(crate) enum Reply {
    /// Write this response.
    Now(HttpResponse),
    /// The response went to the [`Handoff`]; nothing to write here.
    Handed,
}

/// Adds something to a response (a CORS header, the session id of a new session).
type Decorate = Box<dyn FnOnce(&mut HttpResponse) + Send>;

/// Where a [`Deferred`] answer's messages come from.
pub(crate) enum Frames {
    /// A stream's channel.
    Channel(Receiver<Frame>),
    /// A source that makes its channel only when the answer needs one (a 2026-07-28 exchange).
    Lazy(Arc<dyn FrameSource>),
}

/// A source of an answer's frames that may skip the channel: a lone final answer that is
/// already there when the answer is written goes back as it is.
pub(crate) trait FrameSource: Send + Sync {
    /// Called once, by whoever writes the answer.
    fn open(&self) -> Opened;
}

/// Where the answer's frames come from (see [`FrameSource::open`]).
pub(crate) enum Opened {
    /// The final answer is already there: nothing else will come.
    Final(Frame),
    /// Messages come on this channel, the final answer last.
    Channel(Receiver<Frame>),
}

/// The part of an answer that may run on any thread: waits for the stream's first message and
/// turns the channel into a JSON or SSE response.
pub(crate) struct Deferred {
    cfg: Arc<HttpConfig>,
    frames: Frames,
    answer: Answer,
    on_end: OnEnd,
    window: Duration,
    decorate: Vec<Decorate>,
    /// Ready (disconnected or sent on) when the client hangs up: watched while a JSON-only
    /// 2026-07-28 answer waits for its handler, since that hang-up is the cancellation.
    hangup: Option<Receiver<()>>,
}

impl Deferred {
    pub(crate) fn new(cfg: Arc<HttpConfig>, frames: Frames, a: Answer, on_end: OnEnd) -> Self {
        let window = cfg.json_window;
        Deferred {
            cfg,
            frames,
            answer: a,
            on_end,
            window,
            decorate: Vec::new(),
            hangup: None,
        }
    }

    /// True for a 2026-07-28 answer that can only be JSON: nothing is written until the
    /// handler is done, so only a watch on the connection sees the client hang up.
    pub(crate) fn needs_hangup_watch(&self) -> bool {
        self.answer.modern && !self.answer.accept_sse
    }

    /// The watch on the connection for [`Deferred::needs_hangup_watch`].
    pub(crate) fn set_hangup(&mut self, rx: Receiver<()>) {
        self.hangup = Some(rx);
    }

    /// Runs `f` on the response once it exists.
    pub(crate) fn decorate(&mut self, f: impl FnOnce(&mut HttpResponse) + Send + 'static) {
        self.decorate.push(Box::new(f));
    }

    /// Produces the response.
    pub(crate) fn run(self) -> HttpResponse {
        let Deferred {
            cfg,
            frames,
            answer: a,
            on_end,
            window,
            decorate,
            hangup,
        } = self;
        let mut resp = match frames {
            Frames::Channel(rx) => answer(&cfg, rx, a, on_end, window, hangup),
            Frames::Lazy(x) => match x.open() {
                Opened::Channel(rx) => answer(&cfg, rx, a, on_end, window, hangup),
                Opened::Final(f) => {
                    on_end(StreamEnd::Completed);
                    if a.single {
                        json_answer(a.modern, f)
                    } else {
                        // The client takes only SSE: its one event.
                        lone_event(&cfg, f)
                    }
                }
            },
        };
        for f in decorate {
            f(&mut resp);
        }
        resp
    }
}

/// One request's pending answer, taken once by whoever needs it first (see the module docs).
pub(crate) struct Escape {
    pending: Mutex<Option<(Handoff, Deferred)>>,
}

impl Escape {
    pub(crate) fn new(handoff: Handoff, deferred: Deferred) -> Arc<Escape> {
        Arc::new(Escape {
            pending: Mutex::new(Some((handoff, deferred))),
        })
    }

    /// Starts the answer on another thread, unless someone took it already. `committed`: the
    /// JSON window is over, so the answer is SSE unless its final message is already there.
    pub(crate) fn fire(&self, committed: bool) {
        let taken = lock(&self.pending).take();
        if let Some((handoff, mut d)) = taken {
            if committed {
                d.window = Duration::ZERO;
            }
            handoff(d);
        }
    }

    /// Runs `f` with `v` while the answer is still pending here, holding it so that it cannot
    /// start elsewhere meanwhile; gives `v` back when it already started.
    pub(crate) fn while_pending<T, R>(&self, v: T, f: impl FnOnce(T) -> R) -> Result<R, T> {
        let pending = lock(&self.pending);
        if pending.is_some() { Ok(f(v)) } else { Err(v) }
    }

    /// Takes the answer back for the request's own thread; `None` when it started elsewhere.
    pub(crate) fn take(&self) -> Option<Deferred> {
        lock(&self.pending).take().map(|(_, d)| d)
    }
}
