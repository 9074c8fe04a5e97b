//! Every method name of every revision, and which revisions know it.

use crate::version::ProtocolVersion;
use crate::version::ProtocolVersion::{V2024_11_05, V2025_06_18, V2025_11_25, V2026_07_28};

/// `initialize` (legacy).
pub const INITIALIZE: &str = "initialize";
/// `ping` (legacy).
pub const PING: &str = "ping";
/// `server/discover` (2026-07-28).
pub const SERVER_DISCOVER: &str = "server/discover";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `resources/subscribe` (legacy).
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe` (legacy).
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `logging/setLevel` (legacy).
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `subscriptions/listen` (2026-07-28).
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `sampling/createMessage` (server to client).
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `elicitation/create` (server to client, 2025-06-18+).
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `roots/list` (server to client).
pub const ROOTS_LIST: &str = "roots/list";
/// `tasks/get` (2025-11-25; 2026-07-28 tasks extension).
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/result` (2025-11-25).
pub const TASKS_RESULT: &str = "tasks/result";
/// `tasks/list` (2025-11-25).
pub const TASKS_LIST: &str = "tasks/list";
/// `tasks/cancel` (2025-11-25; 2026-07-28 tasks extension).
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// `tasks/update` (2026-07-28 tasks extension).
pub const TASKS_UPDATE: &str = "tasks/update";
/// `skills/list` (skills extension, SEP-2640).
pub const SKILLS_LIST: &str = "skills/list";
/// `skills/get` (skills extension, SEP-2640).
pub const SKILLS_GET: &str = "skills/get";
/// `resources/directory/read` (skills extension, SEP-2640; offered with `directoryRead`).
pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";

/// `notifications/initialized` (legacy).
pub const NOTIFICATION_INITIALIZED: &str = "notifications/initialized";
/// `notifications/cancelled`.
pub const NOTIFICATION_CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress`.
pub const NOTIFICATION_PROGRESS: &str = "notifications/progress";
/// `notifications/message`.
pub const NOTIFICATION_MESSAGE: &str = "notifications/message";
/// `notifications/resources/list_changed`.
pub const NOTIFICATION_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/resources/updated`.
pub const NOTIFICATION_RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// `notifications/prompts/list_changed`.
pub const NOTIFICATION_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `notifications/tools/list_changed`.
pub const NOTIFICATION_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/roots/list_changed` (legacy).
pub const NOTIFICATION_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
/// `notifications/elicitation/complete` (2025-11-25).
pub const NOTIFICATION_ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// `notifications/tasks/status` (2025-11-25).
pub const NOTIFICATION_TASKS_STATUS: &str = "notifications/tasks/status";
/// `notifications/tasks` (2026-07-28 tasks extension).
pub const NOTIFICATION_TASKS: &str = "notifications/tasks";
/// `notifications/subscriptions/acknowledged` (2026-07-28).
pub const NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED: &str =
    "notifications/subscriptions/acknowledged";

/// Every method name above.
pub const ALL: &[&str] = &[
    INITIALIZE,
    PING,
    SERVER_DISCOVER,
    TOOLS_LIST,
    TOOLS_CALL,
    RESOURCES_LIST,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_READ,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
    PROMPTS_LIST,
    PROMPTS_GET,
    COMPLETION_COMPLETE,
    LOGGING_SET_LEVEL,
    SUBSCRIPTIONS_LISTEN,
    SAMPLING_CREATE_MESSAGE,
    ELICITATION_CREATE,
    ROOTS_LIST,
    TASKS_GET,
    TASKS_RESULT,
    TASKS_LIST,
    TASKS_CANCEL,
    TASKS_UPDATE,
    SKILLS_LIST,
    SKILLS_GET,
    RESOURCES_DIRECTORY_READ,
    NOTIFICATION_INITIALIZED,
    NOTIFICATION_CANCELLED,
    NOTIFICATION_PROGRESS,
    NOTIFICATION_MESSAGE,
    NOTIFICATION_RESOURCES_LIST_CHANGED,
    NOTIFICATION_RESOURCES_UPDATED,
    NOTIFICATION_PROMPTS_LIST_CHANGED,
    NOTIFICATION_TOOLS_LIST_CHANGED,
    NOTIFICATION_ROOTS_LIST_CHANGED,
    NOTIFICATION_ELICITATION_COMPLETE,
    NOTIFICATION_TASKS_STATUS,
    NOTIFICATION_TASKS,
    NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
];

/// The methods of the skills extension (SEP-2640). No revision's core schema has them; a
/// server offers them by declaring the extension, in whichever revision the session speaks.
pub const SKILLS_EXTENSION: &[&str] = &[SKILLS_LIST, SKILLS_GET, RESOURCES_DIRECTORY_READ];

/// Whether revision `v` defines `method` (the 2026-07-28 tasks extension's methods count as
/// defined in 2026-07-28; the skills extension's, negotiated by capability, in every
/// revision). Unknown methods give `false`.
pub fn known_in(method: &str, v: ProtocolVersion) -> bool {
    let legacy = v <= V2025_11_25;
    match method {
        INITIALIZE
        | PING
        | NOTIFICATION_INITIALIZED
        | LOGGING_SET_LEVEL
        | RESOURCES_SUBSCRIBE
        | RESOURCES_UNSUBSCRIBE
        | NOTIFICATION_ROOTS_LIST_CHANGED => legacy,
        TOOLS_LIST
        | TOOLS_CALL
        | RESOURCES_LIST
        | RESOURCES_TEMPLATES_LIST
        | RESOURCES_READ
        | PROMPTS_LIST
        | PROMPTS_GET
        | COMPLETION_COMPLETE
        | SAMPLING_CREATE_MESSAGE
        | ROOTS_LIST
        | NOTIFICATION_CANCELLED
        | NOTIFICATION_PROGRESS
        | NOTIFICATION_MESSAGE
        | NOTIFICATION_RESOURCES_LIST_CHANGED
        | NOTIFICATION_RESOURCES_UPDATED
        | NOTIFICATION_PROMPTS_LIST_CHANGED
        | NOTIFICATION_TOOLS_LIST_CHANGED => v >= V2024_11_05,
        ELICITATION_CREATE => v >= V2025_06_18,
        SERVER_DISCOVER
        | SUBSCRIPTIONS_LISTEN
        | NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED
        | TASKS_UPDATE
        | NOTIFICATION_TASKS => v == V2026_07_28,
        TASKS_GET | TASKS_CANCEL => v >= V2025_11_25,
        SKILLS_LIST | SKILLS_GET | RESOURCES_DIRECTORY_READ => v >= V2024_11_05,
        TASKS_RESULT
        | TASKS_LIST
        | NOTIFICATION_TASKS_STATUS
        | NOTIFICATION_ELICITATION_COMPLETE => v == V2025_11_25,
        _ => false,
    }
}

/// Methods that in 2026-07-28 are only ever embedded in an `InputRequiredResult` (never sent
/// as JSON-RPC requests).
pub fn is_input_request(method: &str) -> bool {
    matches!(
        method,
        SAMPLING_CREATE_MESSAGE | ELICITATION_CREATE | ROOTS_LIST
    )
}

/// The param that names a request's target, which 2026-07-28 HTTP mirrors in the `Mcp-Name`
/// header: `name` for `tools/call` and `prompts/get`, `uri` for `resources/read`, `taskId` for
/// the tasks extension's `tasks/get`, `tasks/update` and `tasks/cancel` (its routing headers,
/// so an intermediary can send a task's requests to the instance that holds it), `None` for
/// every other method. Kept here so the client that writes the header and the server that
/// checks it cannot disagree.
pub fn name_param(method: &str) -> Option<&'static str> {
    match method {
        TOOLS_CALL | PROMPTS_GET => Some("name"),
        RESOURCES_READ => Some("uri"),
        TASKS_GET | TASKS_UPDATE | TASKS_CANCEL => Some("taskId"),
        _ => None,
    }
}
