//! How serving ends: each job (the reader, the writer) reports its end, even by panic, to the
//! thread running `serve_on`, and the session is closed once, by whoever gets there first.
//! Both `server` and `reading` use these; neither owns them.

use std::io;
use std::sync::{Arc, Mutex};

use crossbeam_channel::Sender;
use mcp_core::service::Session;

use crate::error::Error;

#[derive(Debug, Clone, Copy)]
pub(crate) enum Side {
    Reader,
    Writer,
}

/// How a job ended.
pub(crate) enum Ended {
    Done(io::Result<()>),
    Panicked,
}

impl Ended {
    pub(crate) fn into_result(self, thread: &'static str) -> Result<(), Error> {
        match self {
            Ended::Done(r) => r.map_err(Error::Io),
            Ended::Panicked => Err(Error::ThreadPanicked { thread }),
        }
    }
}

/// Closes the session once, whoever gets there first: the reader at the end of input (the
/// thread running `serve_on` may itself be inside a handler that waits for that close), or
/// `serve_on` when serving ends another way. It lets go of the session after closing it.
pub(crate) struct Closer(pub(crate) Mutex<Option<Arc<dyn Session>>>);

impl Closer {
    pub(crate) fn close(&self) {
        let session = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(s) = session {
            s.close();
        }
    }
}

/// Reports a panic in `Session::handle` (unlike [`DoneSignal`], nothing when dropped).
pub(crate) struct PanicReport(pub(crate) Sender<(Side, Ended)>);

impl PanicReport {
    pub(crate) fn report_panic(&self) {
        let _ = self.0.try_send((Side::Reader, Ended::Panicked));
    }
}

/// Reports a job's end from its destructor, so a panic (caught by the executor) reports too.
pub(crate) struct DoneSignal {
    tx: Sender<(Side, Ended)>,
    side: Side,
    result: Option<io::Result<()>>,
}

impl DoneSignal {
    pub(crate) fn new(tx: Sender<(Side, Ended)>, side: Side) -> DoneSignal {
        DoneSignal {
            tx,
            side,
            result: None,
        }
    }

    /// The job ended with `r`.
    pub(crate) fn finish(mut self, r: io::Result<()>) {
        self.result = Some(r);
    }
}

impl Drop for DoneSignal {
    fn drop(&mut self) {
        let ended = match self.result.take() {
            Some(r) => Ended::Done(r),
            None => Ended::Panicked,
        };
        let _ = self.tx.try_send((self.side, ended));
    }
}
