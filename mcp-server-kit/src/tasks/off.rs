//! The tasks extension when the `tasks` feature is off: nothing here can make a task. No tool
//! can declare task support, so the server never declares the extension, every `tools/call`
//! runs as an ordinary call (what the kit does for a tool whose support is `Never`), and
//! `tasks/get`, `tasks/update` and `tasks/cancel` get -32601 as any method the kit does not
//! serve. The store, the runner and the paths to them stay out of the binary of a server that
//! has no task tools.

use std::sync::Arc;

use serde_json::Value;

use crate::context::Call;
use crate::error::Error;
use crate::tool::Tool;

/// The builder's task settings: there are none to give without the feature.
#[derive(Default)]
pub(crate) struct Settings {}

impl Settings {
    /// Never: without the feature the server serves no tasks.
    pub(crate) fn declared(&self, _tools: &[Arc<Tool>]) -> bool {
        false
    }
}

/// The server's tasks: none.
pub(crate) struct Tasks;

impl Tasks {
    pub(crate) fn new(_settings: Settings) -> Tasks {
        Tasks
    }
}

/// A running task, which cannot exist: a call's `task` is always `None`, so its input calls
/// go to the client as in any ordinary call.
pub(crate) enum TaskRun {}

impl TaskRun {
    pub(crate) fn ask(
        &self,
        _call: &Call,
        _method: &str,
        _params: Value,
        _key: Option<&str>,
    ) -> Result<Value, Error> {
        match *self {}
    }
}

/// What the session asks of the tasks extension, answered as by a server without it.
pub(crate) mod runner {
    use std::sync::Arc;

    use mcp_core::engine::RequestContext;
    use mcp_core::jsonrpc::ErrorObject;
    use mcp_core::types::tasks_ext::UpdateTaskRequestParams;
    use mcp_core::types::{CallToolRequestParams, TaskIdParams};
    use serde_json::Value;

    use crate::dispatch::Outcome;
    use crate::shared::Shared;

    /// What the session does with a `tools/call` (always an ordinary call here).
    pub(crate) enum Route {
        /// Answer this now: never, without tasks (the session's match keeps the arm).
        #[allow(dead_code)]
        Answer(Outcome),
        /// Run the handler as an ordinary call.
        Call(CallToolRequestParams),
    }

    /// Every `tools/call` is an ordinary call.
    /// Every call is an ordinary call.
    pub(crate) fn plain_call(_shared: &Shared, _rc: &RequestContext, _name: &str) -> bool {
        true
    }

    pub(crate) fn on_call(
        _shared: &Arc<Shared>,
        _rc: &RequestContext,
        _auth: Option<&Value>,
        _param_headers: Option<&Vec<(String, String)>>,
        p: CallToolRequestParams,
    ) -> Route {
        Route::Call(p)
    }

    /// The kit's answer to a method it does not serve.
    fn not_served(rc: &RequestContext) -> Outcome {
        Outcome::Error(ErrorObject::method_not_found(&rc.method))
    }

    /// `tasks/get`: -32601.
    pub(crate) fn get(
        _shared: &Shared,
        rc: &RequestContext,
        _auth: Option<&Value>,
        _p: &TaskIdParams,
    ) -> Outcome {
        not_served(rc)
    }

    /// `tasks/update`: -32601.
    pub(crate) fn update(
        _shared: &Shared,
        rc: &RequestContext,
        _auth: Option<&Value>,
        _p: UpdateTaskRequestParams,
    ) -> Outcome {
        not_served(rc)
    }

    /// `tasks/cancel`: -32601.
    pub(crate) fn cancel(
        _shared: &Shared,
        rc: &RequestContext,
        _auth: Option<&Value>,
        _p: &TaskIdParams,
    ) -> Outcome {
        not_served(rc)
    }
}
