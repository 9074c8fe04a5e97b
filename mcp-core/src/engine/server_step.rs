//! What the server engine hands its caller: the context of a request to dispatch, the
//! client's notifications, and the step to take for each incoming message.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::jsonrpc::{ErrorObject, Message, Notification, RequestId};
use crate::types::{ClientRequest, methods};
use crate::version::{Era, ProtocolVersion};

use super::Answer;
use super::meta::{LoggingLevel, ProgressToken};
use super::progress::ProgressUpdate;

/// A request the application must answer, with everything the protocol says about it.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// The client's id; pass it back to [`ServerEngine::respond`](super::ServerEngine::respond).
    pub id: RequestId,
    /// The method, such as `tools/call`.
    pub method: String,
    /// The params as the client sent them (including `_meta`).
    pub params: Option<Box<RawValue>>,
    /// The era the request belongs to.
    pub era: Era,
    /// The revision: negotiated by `initialize` (legacy) or named by the request (modern).
    pub protocol_version: ProtocolVersion,
    /// The client's capabilities: of this request (modern), or of the session (legacy).
    pub client_capabilities: Arc<Value>,
    /// The client's `Implementation`, when it said.
    pub client_info: Option<Arc<Value>>,
    /// The token to report progress with; `None` when the client did not ask for progress.
    pub progress_token: Option<ProgressToken>,
    /// Modern era: the log level this request asked for (`None`: send no log messages).
    /// Legacy era: always `None`; the session level set by `logging/setLevel` applies.
    pub log_level: Option<LoggingLevel>,
}

impl RequestContext {
    /// Decodes the params into `T` (absent params read as `{}`).
    ///
    /// # Errors
    /// When the params do not fit `T`; answer -32602.
    pub fn params<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        match self.params.as_deref() {
            Some(r) => serde_json::from_str(r.get()),
            None => serde_json::from_str("{}"),
        }
    }

    /// Types the request once, straight from the raw params: what a server dispatches on, so
    /// that the method is matched in one place and each handler gets its params typed.
    ///
    /// The params' `_meta` is left out (`meta: None`): this context holds what the protocol
    /// puts there already, and reading it again would double the cost of typing a small
    /// 2026-07-28 request. Other `_meta` keys are in [`params`](Self::params), or typed with
    /// [`ClientRequest::from_parts`].
    ///
    /// # Errors
    /// -32601 for a method no client sends, -32602 (naming the method and the field) for
    /// params that do not fit.
    pub fn typed_without_meta(&self) -> Result<ClientRequest, ErrorObject> {
        ClientRequest::from_parts_without_meta(&self.method, self.params.as_deref())
    }
}

/// What a request taken by [`ServerEngine::take_plain`](super::ServerEngine::take_plain) is
/// served with: the session's side of a [`RequestContext`] (a plain request asks for no
/// progress and names no log level).
#[derive(Debug, Clone)]
pub struct PlainRequest {
    /// The revision negotiated by `initialize`.
    pub protocol_version: ProtocolVersion,
    /// The capabilities the client declared in `initialize`.
    pub client_capabilities: Arc<Value>,
    /// The client's `Implementation`, when it said.
    pub client_info: Option<Arc<Value>>,
}

/// A notification from the client the application may care about.
#[derive(Debug, Clone)]
pub enum ClientNotice {
    /// `notifications/initialized`: the legacy session is fully open; the server may now send
    /// requests of its own.
    Initialized,
    /// `notifications/roots/list_changed` (legacy): ask `roots/list` again.
    RootsListChanged,
    /// Any other notification, untouched.
    Other(Notification),
}

/// What the caller should do with one incoming message.
#[derive(Debug)]
pub enum ServerStep {
    /// Send this message back now: the engine answered by itself (lifecycle, ping, discovery,
    /// or an error).
    Reply(Message),
    /// Hand the request to the application, which answers through [`ServerEngine::respond`](super::ServerEngine::respond).
    Dispatch(RequestContext),
    /// A notification for the application.
    Notice(ClientNotice),
    /// The client cancelled request `id`: stop its handler; the engine will not send its
    /// response.
    Cancel {
        /// The cancelled request.
        id: RequestId,
        /// The client's reason, if given.
        reason: Option<String>,
    },
    /// The client reported progress on one of the server's own requests.
    Progress(ProgressUpdate),
    /// The answer to one of the server's own requests.
    Answer(Answer),
    /// Nothing to do (a stale response, an ignored cancellation, ...).
    Nothing,
}

/// The three lists whose changes a server announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/prompts/list_changed`.
    Prompts,
    /// `notifications/resources/list_changed`.
    Resources,
}

impl ListKind {
    pub(crate) fn method(self) -> &'static str {
        match self {
            ListKind::Tools => methods::NOTIFICATION_TOOLS_LIST_CHANGED,
            ListKind::Prompts => methods::NOTIFICATION_PROMPTS_LIST_CHANGED,
            ListKind::Resources => methods::NOTIFICATION_RESOURCES_LIST_CHANGED,
        }
    }
    pub(crate) fn capability(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Prompts => "prompts",
            ListKind::Resources => "resources",
        }
    }
}
