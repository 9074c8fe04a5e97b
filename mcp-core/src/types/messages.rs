//! Typed method sets: one enum per direction and kind, one variant per method, params typed.
//!
//! They sit on top of the raw [`jsonrpc`](crate::jsonrpc) messages: `from_request` parses a
//! request's params straight from its raw JSON text into the variant's type (no intermediate
//! `Value`), and `to_request` / `to_notification` serialize them back.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::*;
use crate::jsonrpc::{self, ErrorObject, RequestId};

/// How a params type reads from and writes to the optional raw `params`.
pub trait ParamsCodec: Sized {
    /// Reads params (`None` when the message had none).
    ///
    /// # Errors
    /// When the params do not fit the type.
    fn decode(raw: Option<&RawValue>) -> Result<Self, serde_json::Error>;
    /// Reads params as [`decode`](Self::decode) does, with their top-level `_meta` left out
    /// unread (`meta` is then `None`).
    ///
    /// # Errors
    /// When the params do not fit the type.
    fn decode_without_meta(raw: Option<&RawValue>) -> Result<Self, serde_json::Error> {
        Self::decode(raw)
    }
    /// Writes params (`None` to leave them out).
    ///
    /// # Errors
    /// When serialization fails.
    fn encode(&self) -> Result<Option<Box<RawValue>>, serde_json::Error>;
}

// The decoders stay out of line (here and below): `from_parts` matches every method of a
// revision, and with each decoder inlined into it the one function a request's typing runs
// through held all of them (22 KB), resident in memory once any request was typed.
impl<T: DeserializeOwned + Serialize> ParamsCodec for Option<T> {
    #[inline(never)]
    fn decode(raw: Option<&RawValue>) -> Result<Self, serde_json::Error> {
        raw.map(|r| serde_json::from_str(r.get())).transpose()
    }
    #[inline(never)]
    fn decode_without_meta(raw: Option<&RawValue>) -> Result<Self, serde_json::Error> {
        raw.map(|r| super::sans_meta::from_str(r.get())).transpose()
    }
    fn encode(&self) -> Result<Option<Box<RawValue>>, serde_json::Error> {
        self.as_ref().map(jsonrpc::to_raw).transpose()
    }
}

macro_rules! required_params {
    ($($t:ty),* $(,)?) => {$(
        impl ParamsCodec for $t {
            #[inline(never)]
            fn decode(raw: Option<&RawValue>) -> Result<Self, serde_json::Error> {
                serde_json::from_str(raw.map_or("{}", RawValue::get))
            }
            #[inline(never)]
            fn decode_without_meta(raw: Option<&RawValue>) -> Result<Self, serde_json::Error> {
                super::sans_meta::from_str(raw.map_or("{}", RawValue::get))
            }
            fn encode(&self) -> Result<Option<Box<RawValue>>, serde_json::Error> {
                jsonrpc::to_raw(self).map(Some)
            }
        }
    )*};
}

required_params!(
    InitializeRequestParams,
    PaginatedRequestParams,
    CallToolRequestParams,
    ReadResourceRequestParams,
    ResourceRequestParams,
    GetPromptRequestParams,
    CompleteRequestParams,
    SetLevelRequestParams,
    SubscriptionsListenRequestParams,
    TaskIdParams,
    tasks_ext::UpdateTaskRequestParams,
    skills::GetSkillRequestParams,
    skills::ReadResourceDirectoryRequestParams,
    CreateMessageRequestParams,
    ElicitRequestParams,
    CancelledNotificationParams,
    ProgressNotificationParams,
    LoggingMessageNotificationParams,
    ElicitationCompleteNotificationParams,
    TaskStatusNotificationParams,
    tasks_ext::TaskStatusNotificationParams,
    SubscriptionsAcknowledgedNotificationParams,
);

/// One enum over a set of methods, each variant carrying its params type, with what requests
/// and notifications share: the method name, typing from a method and raw params, and raw
/// params back. `request_enum!` and `notification_enum!` add their envelope on top.
macro_rules! message_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident($ty:ty) = $method:path,)* }) => {
        $(#[$doc])*
        // Variants are params structs of very different sizes; boxing them would cost an
        // allocation per message for no gain, since a message is built once and moved rarely.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $($(#[$vdoc])* $variant($ty),)*
        }

        impl $name {
            /// The method name.
            pub fn method(&self) -> &'static str {
                match self {
                    $($name::$variant(_) => $method,)*
                }
            }

            /// Types a method name and raw params.
            ///
            /// # Errors
            /// -32601 for a method not in this set, -32602 for params that do not fit.
            #[inline(never)]
            pub fn from_parts(method: &str, params: Option<&RawValue>) -> Result<Self, ErrorObject> {
                match method {
                    $($method => <$ty as ParamsCodec>::decode(params)
                        .map($name::$variant)
                        .map_err(|e| ErrorObject::invalid_params(format_args!("{}: {e}", $method))),)*
                    other => Err(ErrorObject::method_not_found(other)),
                }
            }

            /// Types a method name and raw params as [`from_parts`](Self::from_parts) does, with
            /// the params' top-level `_meta` left out unread (`meta: None`): for a server whose
            /// engine has read the envelope already, that object is work done twice.
            ///
            /// # Errors
            /// -32601 for a method not in this set, -32602 for params that do not fit.
            #[inline(never)]
            pub fn from_parts_without_meta(method: &str, params: Option<&RawValue>) -> Result<Self, ErrorObject> {
                match method {
                    $($method => <$ty as ParamsCodec>::decode_without_meta(params)
                        .map($name::$variant)
                        .map_err(|e| ErrorObject::invalid_params(format_args!("{}: {e}", $method))),)*
                    other => Err(ErrorObject::method_not_found(other)),
                }
            }

            /// The raw params.
            ///
            /// # Errors
            /// When serialization fails.
            pub fn params(&self) -> Result<Option<Box<RawValue>>, serde_json::Error> {
                match self {
                    $($name::$variant(p) => p.encode(),)*
                }
            }
        }
    };
}

/// A [`message_enum!`] of requests, typed from and written as JSON-RPC requests.
macro_rules! request_enum {
    ($(#[$doc:meta])* $name:ident { $($body:tt)* }) => {
        message_enum!($(#[$doc])* $name { $($body)* });

        impl $name {
            /// Types a request: -32601 for a method not in this set, -32602 for params that do
            /// not fit.
            ///
            /// # Errors
            /// The error object to answer with.
            pub fn from_request(req: &jsonrpc::Request) -> Result<Self, ErrorObject> {
                Self::from_parts(&req.method, req.params.as_deref())
            }

            /// A JSON-RPC request with this method and params.
            ///
            /// # Errors
            /// When serialization fails.
            pub fn to_request(&self, id: impl Into<RequestId>) -> Result<jsonrpc::Request, serde_json::Error> {
                Ok(jsonrpc::Request { id: id.into(), method: self.method().to_owned(), params: self.params()? })
            }
        }
    };
}

/// A [`message_enum!`] of notifications, typed from and written as JSON-RPC notifications.
macro_rules! notification_enum {
    ($(#[$doc:meta])* $name:ident { $($body:tt)* }) => {
        message_enum!($(#[$doc])* $name { $($body)* });

        impl $name {
            /// Types a notification: -32601 for a method not in this set, -32602 for params
            /// that do not fit (notifications get no answer, but the caller may log it).
            ///
            /// # Errors
            /// The error object describing the problem.
            pub fn from_notification(n: &jsonrpc::Notification) -> Result<Self, ErrorObject> {
                Self::from_parts(&n.method, n.params.as_deref())
            }

            /// A JSON-RPC notification with this method and params.
            ///
            /// # Errors
            /// When serialization fails.
            pub fn to_notification(&self) -> Result<jsonrpc::Notification, serde_json::Error> {
                Ok(jsonrpc::Notification { method: self.method().to_owned(), params: self.params()? })
            }
        }
    };
}

request_enum!(
    /// Requests a client sends to a server, all revisions.
    ClientRequest {
        /// `initialize` (legacy).
        Initialize(InitializeRequestParams) = methods::INITIALIZE,
        /// `ping` (legacy).
        Ping(Option<RequestParams>) = methods::PING,
        /// `server/discover` (2026-07-28).
        Discover(Option<RequestParams>) = methods::SERVER_DISCOVER,
        /// `tools/list`.
        ListTools(PaginatedRequestParams) = methods::TOOLS_LIST,
        /// `tools/call`.
        CallTool(CallToolRequestParams) = methods::TOOLS_CALL,
        /// `resources/list`.
        ListResources(PaginatedRequestParams) = methods::RESOURCES_LIST,
        /// `resources/templates/list`.
        ListResourceTemplates(PaginatedRequestParams) = methods::RESOURCES_TEMPLATES_LIST,
        /// `resources/read`.
        ReadResource(ReadResourceRequestParams) = methods::RESOURCES_READ,
        /// `resources/subscribe` (legacy).
        Subscribe(SubscribeRequestParams) = methods::RESOURCES_SUBSCRIBE,
        /// `resources/unsubscribe` (legacy).
        Unsubscribe(UnsubscribeRequestParams) = methods::RESOURCES_UNSUBSCRIBE,
        /// `prompts/list`.
        ListPrompts(PaginatedRequestParams) = methods::PROMPTS_LIST,
        /// `prompts/get`.
        GetPrompt(GetPromptRequestParams) = methods::PROMPTS_GET,
        /// `completion/complete`.
        Complete(CompleteRequestParams) = methods::COMPLETION_COMPLETE,
        /// `logging/setLevel` (legacy).
        SetLevel(SetLevelRequestParams) = methods::LOGGING_SET_LEVEL,
        /// `subscriptions/listen` (2026-07-28).
        SubscriptionsListen(SubscriptionsListenRequestParams) = methods::SUBSCRIPTIONS_LISTEN,
        /// `tasks/get`.
        GetTask(TaskIdParams) = methods::TASKS_GET,
        /// `tasks/result` (2025-11-25).
        GetTaskPayload(TaskIdParams) = methods::TASKS_RESULT,
        /// `tasks/list` (2025-11-25).
        ListTasks(PaginatedRequestParams) = methods::TASKS_LIST,
        /// `tasks/cancel`.
        CancelTask(TaskIdParams) = methods::TASKS_CANCEL,
        /// `tasks/update` (2026-07-28 tasks extension).
        UpdateTask(tasks_ext::UpdateTaskRequestParams) = methods::TASKS_UPDATE,
        /// `skills/list` (skills extension).
        ListSkills(PaginatedRequestParams) = methods::SKILLS_LIST,
        /// `skills/get` (skills extension).
        GetSkill(skills::GetSkillRequestParams) = methods::SKILLS_GET,
        /// `resources/directory/read` (skills extension).
        ReadResourceDirectory(skills::ReadResourceDirectoryRequestParams) = methods::RESOURCES_DIRECTORY_READ,
    }
);

request_enum!(
    /// Requests a server sends to a client (legacy era; in 2026-07-28 the last three travel
    /// inside an `InputRequiredResult` instead).
    ServerRequest {
        /// `ping`.
        Ping(Option<RequestParams>) = methods::PING,
        /// `sampling/createMessage`.
        CreateMessage(CreateMessageRequestParams) = methods::SAMPLING_CREATE_MESSAGE,
        /// `roots/list`.
        ListRoots(Option<RequestParams>) = methods::ROOTS_LIST,
        /// `elicitation/create` (2025-06-18+).
        Elicit(ElicitRequestParams) = methods::ELICITATION_CREATE,
        /// `tasks/get` (2025-11-25).
        GetTask(TaskIdParams) = methods::TASKS_GET,
        /// `tasks/result` (2025-11-25).
        GetTaskPayload(TaskIdParams) = methods::TASKS_RESULT,
        /// `tasks/list` (2025-11-25).
        ListTasks(PaginatedRequestParams) = methods::TASKS_LIST,
        /// `tasks/cancel` (2025-11-25).
        CancelTask(TaskIdParams) = methods::TASKS_CANCEL,
    }
);

notification_enum!(
    /// Notifications a client sends to a server.
    ClientNotification {
        /// `notifications/cancelled`.
        Cancelled(CancelledNotificationParams) = methods::NOTIFICATION_CANCELLED,
        /// `notifications/initialized` (legacy).
        Initialized(Option<NotificationParams>) = methods::NOTIFICATION_INITIALIZED,
        /// `notifications/progress`.
        Progress(ProgressNotificationParams) = methods::NOTIFICATION_PROGRESS,
        /// `notifications/roots/list_changed` (legacy).
        RootsListChanged(Option<NotificationParams>) = methods::NOTIFICATION_ROOTS_LIST_CHANGED,
        /// `notifications/tasks/status` (2025-11-25).
        TaskStatus(TaskStatusNotificationParams) = methods::NOTIFICATION_TASKS_STATUS,
    }
);

notification_enum!(
    /// Notifications a server sends to a client.
    ServerNotification {
        /// `notifications/cancelled`.
        Cancelled(CancelledNotificationParams) = methods::NOTIFICATION_CANCELLED,
        /// `notifications/progress`.
        Progress(ProgressNotificationParams) = methods::NOTIFICATION_PROGRESS,
        /// `notifications/message`.
        LoggingMessage(LoggingMessageNotificationParams) = methods::NOTIFICATION_MESSAGE,
        /// `notifications/resources/list_changed`.
        ResourceListChanged(Option<NotificationParams>) = methods::NOTIFICATION_RESOURCES_LIST_CHANGED,
        /// `notifications/resources/updated`.
        ResourceUpdated(ResourceUpdatedNotificationParams) = methods::NOTIFICATION_RESOURCES_UPDATED,
        /// `notifications/prompts/list_changed`.
        PromptListChanged(Option<NotificationParams>) = methods::NOTIFICATION_PROMPTS_LIST_CHANGED,
        /// `notifications/tools/list_changed`.
        ToolListChanged(Option<NotificationParams>) = methods::NOTIFICATION_TOOLS_LIST_CHANGED,
        /// `notifications/elicitation/complete` (2025-11-25).
        ElicitationComplete(ElicitationCompleteNotificationParams) = methods::NOTIFICATION_ELICITATION_COMPLETE,
        /// `notifications/tasks/status` (2025-11-25).
        TaskStatus(TaskStatusNotificationParams) = methods::NOTIFICATION_TASKS_STATUS,
        /// `notifications/tasks` (2026-07-28 tasks extension).
        Tasks(tasks_ext::TaskStatusNotificationParams) = methods::NOTIFICATION_TASKS,
        /// `notifications/subscriptions/acknowledged` (2026-07-28).
        SubscriptionsAcknowledged(SubscriptionsAcknowledgedNotificationParams) = methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
    }
);
