//! One 2026-07-28 exchange's outbound side: what the service sends about the exchange's request
//! (progress, log messages, the final answer) on its way to the HTTP answer.

use crate::server::lock;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_core::jsonrpc::{Message, RequestId};
use mcp_core::service::{Closed, Outbound};

use crate::server::answer::{Escape, FrameSource, Opened};
use crate::server::http::Frame;

/// Relays one exchange's messages to its answer. The channel is made only when the answer
/// needs one: a lone final answer that comes before anyone waits for it (a quick handler run
/// on the request's own thread) is kept as it is and goes back as JSON, without the channel's
/// allocation.
pub(crate) struct ExchangeOutbound {
    id: Option<RequestId>,
    buffer: usize,
    send_timeout: Duration,
    /// Held for a whole send (which may wait on a full channel), so that messages keep their
    /// order and nothing follows the final answer. Never taken while `state` is held.
    sending: Mutex<()>,
    /// Only ever held briefly.
    state: Mutex<State>,
    /// While the handler runs inline on the request's thread: its pending answer, started
    /// elsewhere by the first message that is not the final answer (see `answer::escape`).
    escape: Mutex<Option<Arc<Escape>>>,
}

enum State {
    /// Nothing sent, nobody waiting.
    Unopened,
    /// The channel: its sender until the final answer went or a send failed (dropping the
    /// last sender ends the stream), its receiver until the answer takes it.
    Open {
        tx: Option<Sender<Frame>>,
        rx: Option<Receiver<Frame>>,
    },
    /// The final answer, sent before anyone waited for it.
    Final(Frame),
    /// The final answer was taken.
    Closed,
}

impl ExchangeOutbound {
    pub fn new(id: Option<RequestId>, buffer: usize, send_timeout: Duration) -> Arc<Self> {
        Arc::new(ExchangeOutbound {
            id,
            buffer: buffer.max(1),
            send_timeout,
            sending: Mutex::new(()),
            state: Mutex::new(State::Unopened),
            escape: Mutex::new(None),
        })
    }

    pub fn set_escape(&self, e: Arc<Escape>) {
        *lock(&self.escape) = Some(e);
    }

    pub fn clear_escape(&self) {
        lock(&self.escape).take();
    }
}

impl FrameSource for ExchangeOutbound {
    /// Called once, by whoever writes the answer: the final answer if it is already there,
    /// else the channel the messages will come on (made now if nothing was sent yet).
    fn open(&self) -> Opened {
        let mut st = lock(&self.state);
        match std::mem::replace(&mut *st, State::Closed) {
            State::Final(f) => Opened::Final(f),
            State::Unopened => {
                let (tx, rx) = bounded(self.buffer);
                *st = State::Open {
                    tx: Some(tx),
                    rx: None,
                };
                Opened::Channel(rx)
            }
            State::Open { tx, rx: Some(rx) } => {
                *st = State::Open { tx, rx: None };
                Opened::Channel(rx)
            }
            other => {
                // Taken before, which cannot happen (the answer is written once): a channel
                // with no sender says that nothing will come.
                *st = other;
                let (_, rx) = bounded(1);
                Opened::Channel(rx)
            }
        }
    }
}

impl Outbound for ExchangeOutbound {
    fn send(&self, msg: Message, related: Option<&RequestId>) -> Result<(), Closed> {
        self.put(msg, related, true)
    }

    fn send_nowait(&self, msg: Message, related: Option<&RequestId>) -> Result<(), Closed> {
        self.put(msg, related, false)
    }
}

impl ExchangeOutbound {
    /// Sends on the exchange's stream; `wait`: for room while the reader is behind (up to the
    /// send timeout), else the stream is cut at once.
    fn put(&self, msg: Message, related: Option<&RequestId>, wait: bool) -> Result<(), Closed> {
        // No server-to-client requests travel on 2026-07-28 streams, and nothing unrelated to
        // the exchange's request has anywhere to go.
        if matches!(msg, Message::Request(_)) {
            return Err(Closed);
        }
        let mine = match &msg {
            Message::Response(_) | Message::Error(_) => msg.id() == self.id.as_ref(),
            _ => related.is_some() && related == self.id.as_ref(),
        };
        if !mine {
            return Err(Closed);
        }
        let last = msg.is_response();
        if !last {
            let escape = lock(&self.escape).take();
            if let Some(e) = escape {
                e.fire(false);
            }
        }
        let _sending = lock(&self.sending);
        let frame = Frame {
            sse_head: None,
            event: None,
            json: msg.to_vec(),
            last,
            is_response: last,
            error_code: match &msg {
                Message::Error(e) => Some(e.error.code),
                _ => None,
            },
        };
        let tx = {
            let mut st = lock(&self.state);
            match &mut *st {
                State::Unopened if last => {
                    *st = State::Final(frame);
                    return Ok(());
                }
                State::Unopened => {
                    let (tx, rx) = bounded(self.buffer);
                    *st = State::Open {
                        tx: Some(tx.clone()),
                        rx: Some(rx),
                    };
                    tx
                }
                State::Open { tx: Some(tx), .. } => tx.clone(),
                _ => return Err(Closed),
            }
        };
        let ok = if wait {
            tx.send_timeout(frame, self.send_timeout).is_ok()
        } else {
            tx.try_send(frame).is_ok()
        };
        drop(tx);
        if last || !ok {
            if let State::Open { tx, .. } = &mut *lock(&self.state) {
                *tx = None;
            }
        }
        if ok { Ok(()) } else { Err(Closed) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_core::jsonrpc::{Notification, Response};
    use serde_json::json;

    fn out() -> Arc<ExchangeOutbound> {
        ExchangeOutbound::new(Some(RequestId::from(7)), 4, Duration::from_secs(5))
    }

    fn answer() -> Message {
        Message::Response(Response::new(RequestId::from(7), &json!({"ok": true})).unwrap())
    }

    fn progress(n: u64) -> Message {
        Message::Notification(
            Notification::new(
                "notifications/progress",
                &json!({"progressToken": "t", "progress": n}),
            )
            .unwrap(),
        )
    }

    fn text(f: &Frame) -> String {
        String::from_utf8(f.json.clone()).unwrap()
    }

    /// A `subscriptions/listen` stream whose client stopped reading: a broadcast to it is
    /// refused at once and ends the stream, where `send` would wait the send timeout.
    #[test]
    fn a_broadcast_to_a_stream_that_is_behind_ends_it_at_once() {
        let o = ExchangeOutbound::new(Some(RequestId::from(7)), 2, Duration::from_secs(60));
        let id = RequestId::from(7);
        let Opened::Channel(rx) = o.open() else {
            panic!("expected a channel");
        };
        o.send_nowait(progress(1), Some(&id)).unwrap();
        o.send_nowait(progress(2), Some(&id)).unwrap();
        let started = std::time::Instant::now();
        assert!(o.send_nowait(progress(3), Some(&id)).is_err());
        assert!(started.elapsed() < Duration::from_secs(30));
        // The stream ended after what had room; nothing more goes out on it.
        assert_eq!(rx.iter().count(), 2);
        assert!(o.send(progress(4), Some(&id)).is_err());
    }

    #[test]
    fn a_final_answer_sent_before_anyone_waits_is_kept_without_a_channel() {
        let o = out();
        o.send(answer(), None).unwrap();
        let Opened::Final(f) = o.open() else {
            panic!("expected the final answer itself");
        };
        assert!(f.last && f.is_response);
        assert!(text(&f).contains(r#""ok":true"#));
        // Nothing may follow the final answer.
        assert!(o.send(progress(1), Some(&RequestId::from(7))).is_err());
    }

    #[test]
    fn messages_sent_before_the_answer_opens_its_channel_all_arrive_in_order() {
        let o = out();
        let id = RequestId::from(7);
        o.send(progress(1), Some(&id)).unwrap();
        o.send(progress(2), Some(&id)).unwrap();
        o.send(answer(), None).unwrap();
        let Opened::Channel(rx) = o.open() else {
            panic!("expected a channel: a notification came first");
        };
        let got: Vec<Frame> = rx.iter().collect();
        assert_eq!(got.len(), 3, "the channel ends after the final answer");
        assert!(text(&got[0]).contains(r#""progress":1"#));
        assert!(text(&got[1]).contains(r#""progress":2"#));
        assert!(got[2].last);
    }

    #[test]
    fn an_answer_waiting_first_gets_the_final_answer_on_its_channel() {
        let o = out();
        let Opened::Channel(rx) = o.open() else {
            panic!("nothing was sent yet");
        };
        o.send(answer(), None).unwrap();
        let f = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(f.last);
        assert!(
            rx.recv().is_err(),
            "no sender remains after the final answer"
        );
    }

    #[test]
    fn unrelated_messages_and_requests_are_refused() {
        let o = out();
        assert!(o.send(progress(1), None).is_err());
        assert!(o.send(progress(1), Some(&RequestId::from(8))).is_err());
        let other = Message::Response(Response::new(RequestId::from(8), &json!({})).unwrap());
        assert!(o.send(other, None).is_err());
        // None of it opened anything: the real answer still goes back directly.
        o.send(answer(), None).unwrap();
        assert!(matches!(o.open(), Opened::Final(_)));
    }
}
