//! Answer delivery, the layer under the era handlers: a request's messages in, its HTTP answer
//! out (JSON or SSE, see [`respond`]); and for handlers that run on the request's own thread,
//! the [`escape`] that lets the answer start on another thread, with its [`watch`]dog.

mod escape;
mod respond;
mod watch;

pub(crate) use escape::{Deferred, Escape, FrameSource, Frames, Handoff, Opened, Reply, Via};
pub(crate) use respond::{Answer, OnEnd, json_array, sse_response};
pub(crate) use watch::Watch;
