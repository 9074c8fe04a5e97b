//! Tools: a definition (name, schemas, annotations) and a typed handler.

use std::sync::{Arc, OnceLock};

#[cfg(feature = "tasks")]
use mcp_core::types::tasks_ext::TaskSupport;
use mcp_core::types::{CallToolResult, Icon, Tool as ToolDef, ToolAnnotations};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::Context;
use crate::error::Error;
use crate::rate::RateLimit;
use crate::results::IntoToolResult;
use crate::schema::{JsonSchema, Schema};

/// Arguments for tools that take none: accepts `{}` (or no `arguments` at all) and ignores
/// anything else.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
pub struct NoArgs {}

impl JsonSchema for NoArgs {
    fn schema() -> Value {
        Schema::object().into_value()
    }
}

/// Why a tool call did not produce a result.
pub(crate) enum ToolFailure {
    /// The arguments did not match the handler's type.
    BadArguments(String),
    /// The handler failed.
    Handler(Error),
    /// Arguments given as [`Args::Checked`] that the tool's plan could not vouch for (or its
    /// type refused): nothing ran; they go to the full validator as a value.
    Unchecked,
}

/// A call's arguments as a handler receives them.
pub(crate) enum Args<'a> {
    /// Built as a value (checked by the validator, or handed over by a task or a retry).
    Value(Value),
    /// The JSON text of the arguments object, for a tool that does not check its arguments:
    /// typed straight from the text, with no `Value` tree in between.
    Text(&'a str),
    /// The JSON text of the arguments object, typed while the tool's check plan reads it
    /// ([`ToolFailure::Unchecked`] when the plan cannot vouch for it).
    Checked(&'a str, &'a crate::validate::Plan),
}

pub(crate) type ToolFn =
    dyn Fn(Args<'_>, &Context) -> Result<ToolOutput, ToolFailure> + Send + Sync + 'static;

/// What a handler returned: a result, or only its text (a result of one text block and nothing
/// else, which the transport writes straight from the string; see
/// [`IntoToolResult::into_text`]).
#[derive(Debug)]
pub(crate) enum ToolOutput {
    Result(CallToolResult),
    Text(String),
}

impl ToolOutput {
    /// As a whole result, for the paths that keep or shape one.
    pub(crate) fn into_result(self) -> CallToolResult {
        match self {
            ToolOutput::Result(r) => r,
            ToolOutput::Text(t) => CallToolResult::text(t),
        }
    }
}

/// A tool: its definition as clients see it, and the handler that runs it.
///
/// ```
/// use mcp_server_kit::{Context, Error, Tool, schema::Schema};
/// use mcp_core::types::CallToolResult;
///
/// #[derive(serde::Deserialize)]
/// struct Args { message: String }
///
/// let tool = Tool::new("echo", |a: Args, _ctx: &Context| Ok::<_, Error>(a.message))
///     .description("Echoes the message back")
///     .input_schema(Schema::object().property("message", Schema::string()));
/// assert_eq!(tool.name(), "echo");
/// ```
#[derive(Clone)]
pub struct Tool {
    pub(crate) def: ToolDef,
    pub(crate) handler: Arc<ToolFn>,
    /// How the tool runs as a task (feature `tasks`).
    #[cfg(feature = "tasks")]
    pub(crate) task_support: TaskSupport,
    /// The handler starts the task itself ([`Context::continue_as_task`]).
    #[cfg(feature = "tasks")]
    pub(crate) task_by_handler: bool,
    /// Arguments are checked against the input schema before the handler runs.
    pub(crate) validate: bool,
    /// The tool's own rate limit, if it has one (see [`Tool::rate_limit`]).
    pub(crate) rate_limit: ToolLimit,
    /// The input schema read once for quick checks (see `validate::Plan`), made at the first
    /// call and dropped when the schema is replaced.
    pub(crate) plan: OnceLock<Option<crate::validate::Plan>>,
}

/// Which rate limit a tool's calls count against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolLimit {
    /// The server's limit for tool calls.
    Server,
    /// A bucket of its own per client.
    Own(RateLimit),
    /// None.
    Unlimited,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool").field("def", &self.def).finish()
    }
}

impl Tool {
    /// A tool whose handler takes typed arguments `A` (deserialized from `arguments`; absent
    /// arguments read as `{}`). The input schema defaults to an object with no declared
    /// properties; set the real one with [`Tool::input_schema`].
    ///
    /// A handler returning [`Structured`](crate::Structured) makes the tool declare its
    /// `outputSchema`.
    pub fn new<A, R, F>(name: impl Into<String>, handler: F) -> Tool
    where
        A: DeserializeOwned,
        R: IntoToolResult,
        F: Fn(A, &Context) -> Result<R, Error> + Send + Sync + 'static,
    {
        Tool::with_input(name, Schema::object().into_value(), handler)
    }

    /// A tool whose input schema is derived from its argument type (`A: JsonSchema`, usually
    /// `#[derive(serde::Deserialize, JsonSchema)]`), so the published schema and what the
    /// handler accepts cannot drift apart; [`Tool::input_schema`] still overrides it.
    ///
    /// A separate constructor rather than a bound on [`Tool::new`], which would stop every
    /// existing tool whose argument type does not implement [`JsonSchema`] from compiling.
    ///
    /// ```
    /// # #[cfg(feature = "derive")] {
    /// use mcp_server_kit::{Context, Error, Tool, schema::JsonSchema};
    ///
    /// #[derive(serde::Deserialize, JsonSchema)]
    /// struct Args {
    ///     /// What to echo.
    ///     message: String,
    /// }
    ///
    /// let tool = Tool::typed("echo", |a: Args, _ctx: &Context| Ok::<_, Error>(a.message));
    /// let input = &tool.definition().input_schema;
    /// assert_eq!(input["properties"]["message"]["description"], "What to echo.");
    /// assert_eq!(input["required"], serde_json::json!(["message"]));
    /// # }
    /// ```
    pub fn typed<A, R, F>(name: impl Into<String>, handler: F) -> Tool
    where
        A: DeserializeOwned + JsonSchema,
        R: IntoToolResult,
        F: Fn(A, &Context) -> Result<R, Error> + Send + Sync + 'static,
    {
        Tool::with_input(name, A::schema(), handler)
    }

    fn with_input<A, R, F>(name: impl Into<String>, input: Value, handler: F) -> Tool
    where
        A: DeserializeOwned,
        R: IntoToolResult,
        F: Fn(A, &Context) -> Result<R, Error> + Send + Sync + 'static,
    {
        let output = R::output_schema().map(|s| tool_schema(object_schema(s)));
        // Debug builds hold each structured result to the schema its type declares.
        let check = output.clone().filter(|_| cfg!(debug_assertions));
        let f = move |args: Args<'_>, ctx: &Context| {
            let args: Result<A, _> = match args {
                Args::Value(v) => serde_json::from_value(v),
                Args::Text(t) => serde_json::from_str(t),
                Args::Checked(t, plan) => Ok(plan.typed(t).ok_or(ToolFailure::Unchecked)?),
            };
            let args = args.map_err(|e| ToolFailure::BadArguments(e.to_string()))?;
            let result = match handler(args, ctx)
                .map_err(ToolFailure::Handler)?
                .into_text()
            {
                Ok(text) => return Ok(ToolOutput::Text(text)),
                Err(r) => r.into_tool_result(),
            };
            Ok(ToolOutput::Result(
                match (&check, &result.structured_content) {
                    (Some(schema), Some(value)) if !result.is_error() => {
                        match crate::validate::validate_object(schema, value) {
                            Ok(()) => result,
                            Err(e) => {
                                log::error!("structured result does not fit the outputSchema: {e}");
                                CallToolResult::error(format!(
                                    "structured result does not fit the tool's outputSchema: {e}"
                                ))
                            }
                        }
                    }
                    _ => result,
                },
            ))
        };
        let mut def = ToolDef::new(name, tool_schema(object_schema(input)));
        def.output_schema = output;
        Tool {
            def,
            handler: Arc::new(f),
            #[cfg(feature = "tasks")]
            task_support: TaskSupport::Never,
            #[cfg(feature = "tasks")]
            task_by_handler: false,
            validate: true,
            rate_limit: ToolLimit::Server,
            plan: OnceLock::new(),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The definition clients see in `tools/list`.
    pub fn definition(&self) -> &ToolDef {
        &self.def
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Tool {
        self.def.description = Some(text.into());
        self
    }

    /// Sets the display title (2025-06-18+).
    pub fn title(mut self, text: impl Into<String>) -> Tool {
        self.def.title = Some(text.into());
        self
    }

    /// Sets the input schema (an object schema).
    pub fn input_schema(mut self, schema: impl Into<Value>) -> Tool {
        self.def.input_schema = object_schema(schema.into());
        self.plan = OnceLock::new();
        self
    }

    /// Sets the output schema; results should then carry matching `structuredContent`
    /// (see [`CallToolResult::structured`]). 2025-06-18+; left out for older clients.
    pub fn output_schema(mut self, schema: impl Into<Value>) -> Tool {
        self.def.output_schema = Some(object_schema(schema.into()));
        self
    }

    /// Sets behaviour hints (read-only, destructive, idempotent, open-world).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Tool {
        self.def.annotations = Some(annotations);
        self
    }

    /// Adds an icon (2025-11-25+).
    pub fn icon(mut self, icon: Icon) -> Tool {
        self.def.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Whether the tool runs as a task (the 2026-07-28 tasks extension; default
    /// [`TaskSupport::Never`]). As a task, `tools/call` is answered at once with a task handle
    /// and the same handler runs on the kit's executor; the client polls `tasks/get`. Inside
    /// it, the [`Context`] works as usual: `elicit` and the other input calls move the task to
    /// `input_required` until `tasks/update` answers, `is_cancelled` and `wait_cancelled` see
    /// `tasks/cancel`, progress becomes the task's status message, and a panic ends the task
    /// `failed`. [`TaskSupport::Optional`] runs a plain call for clients that did not declare
    /// the extension; [`TaskSupport::Required`] refuses them with -32021. Before 2026-07-28
    /// the tool always runs as a plain call. Feature `tasks`.
    #[cfg(feature = "tasks")]
    pub fn task_support(mut self, support: TaskSupport) -> Tool {
        self.task_support = support;
        self
    }

    /// The handler decides when the call becomes a task, by returning
    /// [`Context::continue_as_task`] (after the input rounds it answers at once): the kit does
    /// not make the task up front. [`Tool::task_support`] still decides who may call it
    /// (`Required`: only clients that declared the extension). Feature `tasks`.
    #[cfg(feature = "tasks")]
    pub fn task_started_by_handler(mut self) -> Tool {
        self.task_by_handler = true;
        self
    }

    /// How the tool runs as a task (see [`Tool::task_support`]). Feature `tasks`.
    #[cfg(feature = "tasks")]
    pub fn task_support_level(&self) -> TaskSupport {
        self.task_support
    }

    /// Whether the kit checks a call's arguments against the input schema before the handler
    /// runs (default: yes, for typed and hand-written schemas alike). A mismatch never reaches
    /// the handler: the caller gets an error naming each field that is wrong (`name: expected
    /// string, got number`), as a tool error result from 2025-11-25 on and -32602 before (see
    /// [`validate`](crate::validate) for the keywords checked). Turn it off for a tool whose
    /// schema is only a hint to the model, or which checks its arguments itself.
    pub fn validate_arguments(mut self, on: bool) -> Tool {
        self.validate = on;
        self
    }

    /// The plan its arguments are checked by, if its schema has one.
    pub(crate) fn plan(&self) -> Option<&crate::validate::Plan> {
        self.plan
            .get_or_init(|| crate::validate::Plan::of(&self.def.input_schema))
            .as_ref()
    }

    /// Checks `args` against the input schema, unless [`Tool::validate_arguments`] turned that
    /// off.
    pub(crate) fn check_arguments(&self, args: &Value) -> Result<(), String> {
        if !self.validate {
            return Ok(());
        }
        if self.plan().is_some_and(|p| p.accepts(args)) {
            return Ok(());
        }
        crate::validate::validate_object(&self.def.input_schema, args).map_err(|e| e.to_string())
    }

    /// Gives the tool a rate limit of its own, per client, in place of the server's limit for
    /// tool calls ([`RateLimits::tool_calls`](crate::RateLimits::tool_calls)): a stricter one
    /// for a tool that is expensive to run, a looser one for a cheap one, or `None` for no
    /// limit at all. Unlike the server's limits it applies on every transport, stdio included,
    /// since the tool's author set it for what the tool costs, not for who calls it.
    pub fn rate_limit(mut self, limit: Option<RateLimit>) -> Tool {
        self.rate_limit = limit.map_or(ToolLimit::Unlimited, ToolLimit::Own);
        self
    }

    /// Sets `_meta` on the definition.
    pub fn meta(mut self, meta: serde_json::Map<String, Value>) -> Tool {
        self.def.meta = Some(meta);
        self
    }
}

/// A derived schema as a tool schema, which must say `"type": "object"`: a tagged enum's
/// `oneOf` of objects does not say it at the top, though every arm is one.
fn tool_schema(mut m: serde_json::Map<String, Value>) -> serde_json::Map<String, Value> {
    m.entry("type").or_insert_with(|| Value::from("object"));
    m
}

/// Tool schemas are JSON objects; anything else is wrapped so the definition stays valid.
fn object_schema(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => {
            let mut m = serde_json::Map::new();
            m.insert("type".into(), Value::from("object"));
            m.insert("description".into(), Value::from(other.to_string()));
            m
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_replaced_input_schema_is_checked_not_its_predecessor() {
        let tool = Tool::new("t", |_args: Value, _ctx: &Context| {
            Ok(CallToolResult::text("ok"))
        })
        .input_schema(json!({"type": "object", "properties": {"n": {"type": "string"}}}));
        // The first check reads the schema into a plan, which this call then uses.
        assert!(tool.check_arguments(&json!({"n": "x"})).is_ok());
        let tool = tool.input_schema(json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}}
        }));
        let err = tool.check_arguments(&json!({"n": "x"})).unwrap_err();
        assert_eq!(err, "n: expected integer, got string");
    }
}
