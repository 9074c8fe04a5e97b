//! Notification params that are not tied to one feature area: cancellation and progress.
//! (`notifications/message` is in [`super::logging`], `resources/updated` in
//! [`super::resources`], the list-changed family uses [`super::NotificationParams`].)

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::common::{Meta, ProgressToken};
use crate::jsonrpc::RequestId;

/// Params of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The request to cancel (optional only in 2025-11-25, where tasks use `tasks/cancel`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CancelledNotificationParams {
    /// Cancels `id`.
    pub fn new(id: RequestId, reason: Option<String>) -> Self {
        CancelledNotificationParams {
            request_id: Some(id),
            reason,
            ..Default::default()
        }
    }
}

/// Params of `notifications/progress`. Numbers are kept as [`Number`] so that `50` stays `50`
/// (not `50.0`) through a decode/encode round trip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; must increase.
    pub progress: Number,
    /// Total, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<Number>,
    /// Human-readable detail (2025-03-26+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ProgressNotificationParams {
    /// Progress for `token`. A non-finite `progress` reads as 0 and a non-finite `total` as
    /// unknown, since JSON cannot carry them.
    pub fn new(token: ProgressToken, progress: f64, total: Option<f64>) -> Self {
        ProgressNotificationParams {
            progress_token: token,
            progress: Number::from_f64(progress).unwrap_or_else(|| Number::from(0)),
            total: total.and_then(Number::from_f64),
            message: None,
            meta: None,
            extra: Map::new(),
        }
    }
}
