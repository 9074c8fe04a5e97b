//! 2026-07-28 subscriptions: one long-lived `subscriptions/listen` request replaces the
//! legacy GET stream and `resources/(un)subscribe`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Meta, ResultType, meta_keys};
use crate::jsonrpc::RequestId;

/// Which notifications a listen stream carries.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Unknown fields (extension filters such as the tasks extension's), kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscriptionsListenRequestParams {
    /// What to listen to.
    pub notifications: SubscriptionFilter,
    /// Request metadata (required).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The final result of a listen stream, sent only when the server ends it gracefully.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// Discriminator (required on the wire).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Must hold `io.modelcontextprotocol/subscriptionId`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SubscriptionsListenResult {
    /// The closing result of the stream opened by request `id`.
    pub fn closed(id: &RequestId) -> Self {
        let mut meta = Meta::new();
        meta.insert(meta_keys::SUBSCRIPTION_ID.into(), id.to_value());
        SubscriptionsListenResult {
            result_type: Some(ResultType::Complete),
            meta: Some(meta),
            extra: Map::new(),
        }
    }
}

/// Params of `notifications/subscriptions/acknowledged`: the subset of the filter honoured.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// What the server will send.
    pub notifications: SubscriptionFilter,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
