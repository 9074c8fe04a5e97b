//! 2026-07-28 `subscriptions/listen`: one long-lived request whose notifications come on a
//! handle until either side closes it.

use mcp_core::types::methods;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use mcp_core::engine::Timeout;
use mcp_core::jsonrpc::{Notification, RequestId};
use mcp_core::types::{SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams};
use serde_json::Value;

use crate::connection::{ListenEvent, Shared};
use crate::error::{Closed, Error};

/// The engine's timeout for a listen request: it has no answer while open, so no deadline
/// should end it. (Ten years; `Duration::MAX` would overflow an `Instant`.)
const OPEN_ENDED: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

const ACKNOWLEDGED: &str = methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED;

/// An open listen stream. Dropping it (or [`Subscription::close`]) cancels the request, which
/// ends the stream on the server.
pub struct Subscription {
    shared: Arc<Shared>,
    id: RequestId,
    events: Receiver<ListenEvent>,
    acknowledged: SubscriptionFilter,
    ended: Option<Error>,
    closed: bool,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("acknowledged", &self.acknowledged)
            .finish_non_exhaustive()
    }
}

impl Subscription {
    pub(crate) fn open(
        shared: &Arc<Shared>,
        params: &Value,
        ack_timeout: Duration,
    ) -> Result<Subscription, Error> {
        let (id, events) = shared.start_listen(params, Timeout::fixed(OPEN_ENDED))?;
        let mut sub = Subscription {
            shared: Arc::clone(shared),
            id,
            events,
            acknowledged: SubscriptionFilter::default(),
            ended: None,
            closed: false,
        };
        let deadline = Instant::now() + ack_timeout;
        // The spec makes the acknowledgement the first message of the stream; anything before
        // it would be a server bug, and is skipped.
        loop {
            match sub.events.recv_deadline(deadline) {
                Ok(ListenEvent::Notification(n)) if n.method == ACKNOWLEDGED => {
                    let p: SubscriptionsAcknowledgedNotificationParams =
                        n.params().map_err(|source| Error::Decode {
                            what: ACKNOWLEDGED.to_owned(),
                            source,
                        })?;
                    sub.acknowledged = p.notifications;
                    return Ok(sub);
                }
                Ok(ListenEvent::Notification(n)) => {
                    log::warn!(target: "mcp_client", "{} before the listen acknowledgement", n.method);
                }
                Ok(ListenEvent::Ended(e)) => {
                    sub.closed = true;
                    return Err(e);
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(Error::Timeout {
                        method: methods::SUBSCRIPTIONS_LISTEN.into(),
                    });
                }
                Err(RecvTimeoutError::Disconnected) => {
                    sub.closed = true;
                    return Err(Error::Closed(Closed::Ended));
                }
            }
        }
    }

    /// The listen request's id (the `subscriptionId` of its notifications).
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// What the server agreed to send (a subset of what was asked).
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// The next notification, waiting up to `timeout`: `Ok(None)` when none came in time.
    ///
    /// # Errors
    /// Once the stream is over: [`Error::EndedByServer`] when the server ended it,
    /// [`Error::Closed`] when the connection is gone; the same error on every later call.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Notification>, Error> {
        if let Some(e) = &self.ended {
            return Err(clone_end(e));
        }
        match self.events.recv_timeout(timeout) {
            Ok(ListenEvent::Notification(n)) => Ok(Some(n)),
            Ok(ListenEvent::Ended(e)) => {
                self.closed = true;
                let again = clone_end(&e);
                self.ended = Some(e);
                Err(again)
            }
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                self.closed = true;
                let e = Error::Closed(Closed::StreamEnded);
                self.ended = Some(clone_end(&e));
                Err(e)
            }
        }
    }

    /// Ends the stream: `notifications/cancelled` for the listen request.
    pub fn close(mut self) {
        self.close_inner();
    }

    fn close_inner(&mut self) {
        if !self.closed {
            self.closed = true;
            self.shared.close_listen(&self.id);
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.close_inner();
    }
}

/// The errors a stream can end with, repeated for later calls.
fn clone_end(e: &Error) -> Error {
    match e {
        Error::EndedByServer { reason } => Error::EndedByServer {
            reason: reason.clone(),
        },
        Error::Closed(why) => Error::Closed(why.clone()),
        Error::Rpc(e) => Error::Rpc(e.clone()),
        Error::Timeout { method } => Error::Timeout {
            method: method.clone(),
        },
        other => Error::Closed(Closed::Broken(std::sync::Arc::new(
            crate::error::EndedEarlier(other.to_string()),
        ))),
    }
}
