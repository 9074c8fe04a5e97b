//! The notifications both roles exchange about requests in flight: progress and cancellation,
//! plus the builders for the server's own notifications (log messages, list changes, resource
//! updates).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::jsonrpc::{Message, Notification, RequestId};
use crate::types::methods;

use super::meta::{LoggingLevel, ProgressToken, SUBSCRIPTION_ID_KEY};

/// `notifications/progress`.
pub const PROGRESS: &str = methods::NOTIFICATION_PROGRESS;
/// `notifications/cancelled`.
pub const CANCELLED: &str = methods::NOTIFICATION_CANCELLED;
/// `notifications/message` (a log message).
pub const LOG_MESSAGE: &str = methods::NOTIFICATION_MESSAGE;
/// `notifications/resources/updated`.
pub const RESOURCE_UPDATED: &str = methods::NOTIFICATION_RESOURCES_UPDATED;

/// The peer reported progress on one of our requests.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// Our request the progress is about.
    pub id: RequestId,
    /// Progress so far; strictly increasing (the engine drops anything else).
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A human-readable status line.
    pub message: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct ProgressParams {
    #[serde(rename = "progressToken")]
    pub token: ProgressToken,
    pub progress: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct CancelledParams {
    #[serde(rename = "requestId")]
    pub request_id: RequestId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Builds a notification from params that always serialize (plain structs of strings and
/// numbers); a failure would be a bug, and the bare notification is still well-formed.
fn notification<P: Serialize>(method: &str, params: &P) -> Message {
    Notification::new(method, params)
        .unwrap_or_else(|_| Notification::bare(method))
        .into()
}

pub(crate) fn progress_message(
    token: ProgressToken,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> Message {
    notification(
        PROGRESS,
        &ProgressParams {
            token,
            progress,
            total,
            message: message.map(str::to_owned),
        },
    )
}

pub(crate) fn cancelled_message(id: RequestId, reason: Option<&str>) -> Message {
    notification(
        CANCELLED,
        &CancelledParams {
            request_id: id,
            reason: reason.map(str::to_owned),
        },
    )
}

pub(crate) fn log_message(level: LoggingLevel, logger: Option<&str>, data: Value) -> Message {
    #[derive(Serialize)]
    struct P<'a> {
        level: LoggingLevel,
        #[serde(skip_serializing_if = "Option::is_none")]
        logger: Option<&'a str>,
        data: Value,
    }
    notification(
        LOG_MESSAGE,
        &P {
            level,
            logger,
            data,
        },
    )
}

/// Params for a notification, with `_meta.subscriptionId` when it travels on a 2026-07-28
/// `subscriptions/listen` stream.
pub(crate) fn with_subscription(
    mut params: Map<String, Value>,
    subscription: Option<&RequestId>,
) -> Map<String, Value> {
    if let Some(sub) = subscription {
        super::meta::set_meta(&mut params, SUBSCRIPTION_ID_KEY, sub.to_value());
    }
    params
}

pub(crate) fn plain_notification(method: &str, params: Map<String, Value>) -> Message {
    if params.is_empty() {
        Notification::bare(method).into()
    } else {
        notification(method, &params)
    }
}
