//! From a request the engine let through to the answer: finds the registered tool, resource
//! or prompt, runs its handler (catching panics), and shapes the result for the revision in use.
//! Nothing here knows about sessions, transports or running tasks: the tasks runner calls in
//! here to run a task's handler, never the other way.

use std::panic::{AssertUnwindSafe, catch_unwind};

use mcp_core::jsonrpc::ErrorObject;
use mcp_core::types::methods::{
    PROMPTS_GET, RESOURCES_DIRECTORY_READ, RESOURCES_READ, SKILLS_GET, SKILLS_LIST, TOOLS_CALL,
};
use mcp_core::types::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, GetPromptRequestParams,
    InputResponse, InputResponses, ReadResourceRequestParams, Reference,
};
use mcp_core::version::{Era, ProtocolVersion};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::call_text::CallText;
use crate::context::Context;
use crate::cursor::{Cursors, ListKind, page};
use crate::error::Error;
use crate::request_state;
use crate::shared::Shared;
use crate::skills::{Lookup, Skills};
use crate::tool::{Args, Tool, ToolFailure, ToolOutput};

/// The answer to one request.
pub(crate) enum Outcome {
    /// A result object, already shaped for the revision.
    Result(Value),
    /// A result already serialized (the fast path: no shaping was needed).
    Raw(Box<RawValue>),
    /// A tool's result (or only its text) for a revision that takes it as it is (2025-11-25
    /// on): the transport serializes it into the answer itself (`Outbound::send_result`).
    Tool(ToolOutput),
    /// A JSON-RPC error.
    Error(ErrorObject),
    /// Nothing may be sent (the request was cancelled).
    Nothing,
}

impl Outcome {
    fn from_result<T: Serialize>(v: &T, version: ProtocolVersion) -> Outcome {
        // The newest legacy revision knows every field our result types have, and the engine
        // adds `resultType` for 2026-07-28: serialize straight to text, with no `Value` tree.
        if version >= ProtocolVersion::V2025_11_25 {
            return match mcp_core::jsonrpc::to_raw(v) {
                Ok(r) => Outcome::Raw(r),
                Err(e) => Outcome::Error(ErrorObject::internal(e)),
            };
        }
        match serde_json::to_value(v) {
            Ok(v) => Outcome::Result(finish(v, version, false)),
            Err(e) => Outcome::Error(ErrorObject::internal(e)),
        }
    }
}

/// Adds what the 2026-07-28 revision requires on results (`resultType`, and the cache hints
/// on list and read results), and shapes the result for older revisions.
pub(crate) fn finish(mut v: Value, version: ProtocolVersion, cacheable: bool) -> Value {
    if version.era() == Era::Modern {
        if let Value::Object(m) = &mut v {
            m.entry("resultType").or_insert_with(|| json!("complete"));
            if cacheable {
                m.entry("ttlMs").or_insert_with(|| json!(0));
                m.entry("cacheScope").or_insert_with(|| json!("private"));
            }
        }
    }
    v
}

/// Fits a result to what `version` knows (see `mcp_core::types::shape`), or explains why it
/// cannot be sent to that revision at all.
pub(crate) fn shape(
    method: &str,
    mut v: Value,
    version: ProtocolVersion,
) -> Result<Value, ErrorObject> {
    mcp_core::types::shape::result(method, &mut v, version)
        .map(|()| v)
        .map_err(|e| {
            ErrorObject::internal(format!(
                "the result cannot be sent to a {version} client: {e}"
            ))
        })
}

fn cacheable(mut v: Value, shared: &Shared, version: ProtocolVersion) -> Value {
    if version.era() == Era::Modern {
        if let Value::Object(m) = &mut v {
            m.insert(
                "ttlMs".into(),
                json!(shared.config.cache_ttl.as_millis() as u64),
            );
            m.insert("cacheScope".into(), json!(shared.config.cache_scope));
        }
    }
    finish(v, version, true)
}

fn run_guarded<T>(f: impl FnOnce() -> T) -> Result<T, ErrorObject> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "handler panicked".to_owned());
        log::error!("handler panicked: {what}");
        ErrorObject::internal(format!("handler panicked: {what}"))
    })
}

/// Lists: `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`, one
/// page from `cursor`.
pub(crate) fn list(
    shared: &Shared,
    cursors: Cursors<'_>,
    kind: ListKind,
    cursor: Option<&str>,
    version: ProtocolVersion,
) -> Outcome {
    let reg = shared.registry();
    let size = shared.config.page_size;
    let (key, items): (&str, Vec<Value>) = match kind {
        ListKind::Tools => ("tools", reg.tools.iter().map(|t| to_json(&t.def)).collect()),
        ListKind::Prompts => (
            "prompts",
            reg.prompts.iter().map(|p| to_json(&p.def)).collect(),
        ),
        ListKind::Resources => {
            let mut items: Vec<Value> = reg.resources.iter().map(|r| to_json(&r.def)).collect();
            // Each skill's SKILL.md too, so a client can find skills as plain resources.
            if let Some(skills) = &shared.skills {
                items.extend(skills.resources().iter().map(to_json));
            }
            ("resources", items)
        }
        ListKind::Templates => (
            "resourceTemplates",
            reg.templates.iter().map(|t| to_json(&t.def)).collect(),
        ),
        // Not lists of the registry: answered by `skills_list` and `read_directory`.
        ListKind::Skills | ListKind::Directory => {
            return Outcome::Error(ErrorObject::method_not_found("not a registry list"));
        }
    };
    drop(reg);
    match page(cursors, kind, &items, cursor, size) {
        Ok((items, next)) => {
            let mut m = Map::new();
            m.insert(key.into(), Value::Array(items));
            if let Some(n) = next {
                m.insert("nextCursor".into(), Value::from(n));
            }
            Outcome::Result(cacheable(Value::Object(m), shared, version))
        }
        Err(()) => Outcome::Error(ErrorObject::invalid_params("invalid cursor")),
    }
}

fn to_json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// A tool's result as the answer for `version` (a task's, whose handler ran outside
/// `call_tool`).
#[cfg(feature = "tasks")]
pub(crate) fn tool_result(result: &CallToolResult, version: ProtocolVersion) -> Outcome {
    Outcome::from_result(result, version)
}

/// `tools/call`.
pub(crate) fn call_tool(shared: &Shared, p: CallToolRequestParams, ctx: &Context) -> Outcome {
    let inputs = (p.request_state, p.input_responses);
    call_tool_with(shared, &p.name, CallArgs::Map(p.arguments), inputs, ctx)
}

/// A usual `tools/call` made from its params text (see [`CallText`]).
pub(crate) fn call_tool_text(
    shared: &Shared,
    params: &str,
    call: &CallText,
    ctx: &Context,
) -> Outcome {
    let args = call.arguments(params);
    let name = call.name(params);
    call_tool_with(shared, name, CallArgs::Text(args), (None, None), ctx)
}

/// A `tools/call`'s arguments as they reach [`call_tool_with`].
pub(crate) enum CallArgs<'a> {
    /// Read into a map with the rest of the params (`None`: no `arguments` member).
    Map(Option<Map<String, Value>>),
    /// Still the JSON text of an object, borrowed from the request (`None`: no `arguments`).
    Text(Option<&'a str>),
}

/// Runs tool `name`. Arguments given as text are typed straight from it while the tool's check
/// plan watches (the usual call: no map of owned values is ever built), or unwatched for a tool
/// that does not check its arguments; anything else (a schema with no plan, a retry's inputs,
/// parameter headers, and whatever the plan cannot vouch for) becomes a `Value`, meets the full
/// validator and reaches the handler as before.
pub(crate) fn call_tool_with(
    shared: &Shared,
    name: &str,
    args: CallArgs<'_>,
    (request_state, input_responses): (Option<String>, Option<InputResponses>),
    ctx: &Context,
) -> Outcome {
    let version = ctx.protocol_version();
    let found;
    let tool = match ctx.call.quick_tool(shared, name) {
        Some(kept) => kept,
        None => {
            found = shared.find_tool(name).1;
            match &found {
                Some(t) => t,
                None => {
                    return Outcome::Error(ErrorObject::invalid_params(format!(
                        "Unknown tool: {name}"
                    )));
                }
            }
        }
    };
    let modern = version.era() == Era::Modern;
    // A retry's inputs are bound to the arguments as a value; so are parameter headers.
    let plain = !(modern && (request_state.is_some() || input_responses.is_some()))
        && ctx.call.param_headers.is_none();
    let args = match args {
        CallArgs::Text(t) => {
            let t = t.unwrap_or("{}");
            if plain && !tool.validate {
                return run_tool(shared, tool, name, Args::Text(t), None, ctx);
            }
            if let Some(plan) = tool.plan().filter(|_| plain) {
                return run_tool(shared, tool, name, Args::Checked(t, plan), None, ctx);
            }
            match serde_json::from_str::<Value>(t) {
                Ok(v) => v,
                Err(e) => {
                    return Outcome::Error(ErrorObject::invalid_params(format!(
                        "{TOOLS_CALL}: {e}"
                    )));
                }
            }
        }
        CallArgs::Map(m) => Value::Object(m.unwrap_or_default()),
    };
    if let Some(headers) = &ctx.call.param_headers {
        if let Err(e) = crate::param_headers::check(&tool.def.input_schema, &args, headers) {
            return Outcome::Error(e);
        }
    }
    if let Err(msg) = tool.check_arguments(&args) {
        return invalid_arguments(name, &msg, version);
    }
    // What a 2026-07-28 requestState is bound to (only needed in that era).
    let binding = if modern {
        let b = json!([TOOLS_CALL, name, &args]);
        if let Err(e) = restore_inputs(request_state.as_deref(), input_responses, &b, ctx) {
            return Outcome::Error(e);
        }
        Some(b)
    } else {
        None
    };
    run_tool(shared, tool, name, Args::Value(args), binding, ctx)
}

/// Runs a tool's handler on arguments that passed the checks, and makes its answer.
/// `binding` is what a 2026-07-28 requestState is bound to, when it was needed already; text
/// arguments make it only if the handler asks for input.
fn run_tool(
    shared: &Shared,
    tool: &Tool,
    name: &str,
    args: Args<'_>,
    binding: Option<Value>,
    ctx: &Context,
) -> Outcome {
    let version = ctx.protocol_version();
    let text = match &args {
        Args::Text(t) | Args::Checked(t, _) => Some(*t),
        Args::Value(_) => None,
    };
    let mut outcome = match run_guarded(|| (tool.handler)(args, ctx)) {
        Err(panic) => return Outcome::Error(panic),
        Ok(r) => r,
    };
    if let (Some(t), Err(ToolFailure::BadArguments(_) | ToolFailure::Unchecked)) = (text, &outcome)
    {
        // Nothing ran: the plan could not vouch for the text, or the handler's type refused it.
        // Read again as a value, checked by the full validator, so that the verdict and its
        // message are the ones a value gets.
        let v = match serde_json::from_str(t) {
            Ok(v) => v,
            Err(e) => {
                return Outcome::Error(ErrorObject::invalid_params(format!("{TOOLS_CALL}: {e}")));
            }
        };
        if let Err(msg) = tool.check_arguments(&v) {
            return invalid_arguments(name, &msg, version);
        }
        outcome = match run_guarded(|| (tool.handler)(Args::Value(v), ctx)) {
            Err(panic) => return Outcome::Error(panic),
            Ok(r) => r,
        };
    }
    if ctx.call.cancel.drops_answer() {
        return Outcome::Nothing;
    }
    let validation_as_result = version >= ProtocolVersion::V2025_11_25;
    match outcome {
        Ok(result) => {
            // Also the placeholder of a handler that left the rest of its work to a task
            // (`Context::continue_as_task`): the session swaps it for the task's handle
            // (`tasks::runner::continued`), so that dispatch never calls up into the runner.
            // As `from_result` would make it raw text for these revisions, unshaped.
            if version >= ProtocolVersion::V2025_11_25 {
                Outcome::Tool(result)
            } else {
                Outcome::from_result(&result.into_result(), version)
            }
        }
        Err(ToolFailure::BadArguments(msg)) => invalid_arguments(name, &msg, version),
        // Only for text arguments, which were read again above.
        Err(ToolFailure::Unchecked) => {
            Outcome::Error(ErrorObject::internal("the arguments could not be checked"))
        }
        Err(ToolFailure::Handler(e)) => match e {
            Error::InvalidParams(msg) if !validation_as_result => {
                Outcome::Error(ErrorObject::invalid_params(msg))
            }
            Error::Cancelled => Outcome::Nothing,
            Error::Protocol(obj) => Outcome::Error(obj),
            Error::ResourceNotFound(_) => {
                Outcome::Error(e.to_error_object(version.era() == Era::Modern))
            }
            other => {
                let binding = binding.unwrap_or_else(|| match text {
                    Some(t) if version.era() == Era::Modern => {
                        let args: Value = serde_json::from_str(t).unwrap_or_default();
                        json!([TOOLS_CALL, name, args])
                    }
                    _ => Value::Null,
                });
                handler_failure(shared, other, &binding, ctx, true)
            }
        },
    }
}

/// The answer to a `tools/call` whose arguments do not fit the tool (its input schema, or the
/// handler's argument type). From 2025-11-25 on it is a tool error result (`isError: true`):
/// the revision's tools page lists input validation errors among tool execution errors (SEP-1303),
/// so that the model sees the message and corrects its call, keeping -32602 for protocol errors
/// (unknown tool, malformed request). Before 2025-11-25 that page lists invalid arguments among
/// the protocol errors, hence -32602 there.
fn invalid_arguments(tool: &str, msg: &str, version: ProtocolVersion) -> Outcome {
    if version >= ProtocolVersion::V2025_11_25 {
        Outcome::from_result(
            &CallToolResult::error(format!("Invalid arguments: {msg}")),
            version,
        )
    } else {
        Outcome::Error(ErrorObject::invalid_params(format!(
            "Invalid arguments for tool {tool}: {msg}"
        )))
    }
}

/// Turns a handler's failure into InputRequiredResult, a -32021 error, an `isError` tool
/// result (tools) or a JSON-RPC error (everything else).
fn handler_failure(
    shared: &Shared,
    e: Error,
    binding: &Value,
    ctx: &Context,
    tool: bool,
) -> Outcome {
    let version = ctx.protocol_version();
    let modern = version.era() == Era::Modern;
    if modern {
        // An answer that is no answer is the client's error, whatever the handler made of it:
        // asking again would only get the same answer back.
        let bad = ctx
            .call
            .inputs
            .lock()
            .ok()
            .and_then(|i| i.as_ref()?.bad.clone());
        if let Some((_, why)) = bad {
            return Outcome::Error(ErrorObject::invalid_params(why));
        }
        if let Some(v) = input_required(shared, binding, ctx) {
            return Outcome::Result(v);
        }
        if let Error::MissingCapability(_) = e {
            return Outcome::Error(e.to_error_object(true));
        }
    }
    if matches!(e, Error::InputRequired) {
        return Outcome::Error(ErrorObject::internal(
            "the handler needs client input but none could be requested",
        ));
    }
    if tool {
        Outcome::from_result(&CallToolResult::error(e.to_string()), version)
    } else {
        Outcome::Error(e.to_error_object(modern))
    }
}

/// 2026-07-28 retries: verifies `requestState` and loads the answers gathered so far.
fn restore_inputs(
    request_state: Option<&str>,
    responses: Option<InputResponses>,
    binding: &Value,
    ctx: &Context,
) -> Result<(), ErrorObject> {
    if ctx.protocol_version().era() != Era::Modern {
        return Ok(());
    }
    let mut answers = Map::new();
    if let Some(state) = request_state {
        let bad = || ErrorObject::invalid_params("invalid or expired requestState");
        answers = request_state::open(ctx, state, binding).ok_or_else(bad)?;
    }
    // The handler reads answers as JSON (and judges their shape when it asks for its key).
    // A null answer is no answer: the input is asked for again.
    for (k, r) in responses.into_iter().flatten() {
        let v = match r {
            InputResponse::Other(Value::Null) => continue,
            InputResponse::Other(v) => v,
            typed => serde_json::to_value(typed).map_err(ErrorObject::internal)?,
        };
        answers.insert(k, v);
    }
    if let Ok(mut inputs) = ctx.call.inputs.lock() {
        inputs.get_or_insert_with(Box::default).answers = answers;
    }
    Ok(())
}

/// Builds the InputRequiredResult when the handler asked for input it does not have yet.
fn input_required(shared: &Shared, binding: &Value, ctx: &Context) -> Option<Value> {
    let inputs = ctx.call.inputs.lock().ok()?;
    let inputs = inputs.as_ref()?;
    if inputs.needed.is_empty() {
        return None;
    }
    let state = request_state::seal(
        ctx,
        binding,
        inputs.answers.clone(),
        shared.config.request_state_ttl,
    )?;
    Some(json!({
        "resultType": "input_required",
        "inputRequests": inputs.needed.clone(),
        "requestState": state,
    }))
}

/// `resources/read`.
pub(crate) fn read_resource(
    shared: &Shared,
    p: ReadResourceRequestParams,
    ctx: &Context,
) -> Outcome {
    let version = ctx.protocol_version();
    let modern = version.era() == Era::Modern;
    let uri = p.uri;
    let binding = json!([RESOURCES_READ, &uri]);
    if let Err(e) = restore_inputs(p.request_state.as_deref(), p.input_responses, &binding, ctx) {
        return Outcome::Error(e);
    }
    if let Some(skills) = shared.skills.as_ref().filter(|_| Skills::owns(&uri)) {
        match skills.read(&uri) {
            Lookup::Found(contents) => {
                return Outcome::Result(cacheable(
                    json!({ "contents": [to_json(&contents)] }),
                    shared,
                    version,
                ));
            }
            Lookup::Refused(why) => return Outcome::Error(ErrorObject::invalid_params(why)),
            Lookup::Missing => {}
        }
    }
    let reg = shared.registry();
    let direct = reg.resources.iter().find(|r| r.def.uri == uri).cloned();
    let templated = if direct.is_none() {
        reg.templates
            .iter()
            .find_map(|t| t.template.matches(&uri).map(|vars| (t.clone(), vars)))
    } else {
        None
    };
    drop(reg);
    let result = match (direct, templated) {
        (Some(r), _) => run_guarded(|| (r.read)(ctx)),
        (None, Some((t, vars))) => run_guarded(|| (t.read)(&uri, &vars, ctx)),
        (None, None) => {
            return Outcome::Error(Error::ResourceNotFound(uri).to_error_object(modern));
        }
    };
    if ctx.call.cancel.drops_answer() {
        return Outcome::Nothing;
    }
    match result {
        Err(panic) => Outcome::Error(panic),
        Ok(Ok(contents)) => Outcome::Result(cacheable(
            json!({ "contents": to_json(&contents) }),
            shared,
            version,
        )),
        Ok(Err(Error::Cancelled)) => Outcome::Nothing,
        Ok(Err(e)) => handler_failure(shared, e, &binding, ctx, false),
    }
}

/// `skills/list`: one page of entries (an entry is never split).
pub(crate) fn skills_list(
    shared: &Shared,
    cursors: Cursors<'_>,
    cursor: Option<&str>,
    version: ProtocolVersion,
) -> Outcome {
    let Some(skills) = &shared.skills else {
        return Outcome::Error(ErrorObject::method_not_found(SKILLS_LIST));
    };
    let entries = skills.list();
    match page(
        cursors,
        ListKind::Skills,
        &entries,
        cursor,
        shared.config.page_size,
    ) {
        Ok((items, next)) => {
            let mut m = Map::new();
            m.insert("skills".into(), to_json(&items));
            if let Some(n) = next {
                m.insert("nextCursor".into(), Value::from(n));
            }
            Outcome::Result(cacheable(Value::Object(m), shared, version))
        }
        Err(()) => Outcome::Error(ErrorObject::invalid_params("invalid cursor")),
    }
}

/// `skills/get`: the entry, or -32602 for a URI that names no skill served here.
pub(crate) fn skills_get(shared: &Shared, uri: &str, version: ProtocolVersion) -> Outcome {
    let Some(skills) = &shared.skills else {
        return Outcome::Error(ErrorObject::method_not_found(SKILLS_GET));
    };
    match skills.get(uri) {
        Some(skill) => Outcome::Result(cacheable(json!({ "skill": skill }), shared, version)),
        None => Outcome::Error(ErrorObject::invalid_params(format!(
            "no skill is served at {uri}"
        ))),
    }
}

/// `resources/directory/read`: one page of a directory's children, or -32602 for a URI that
/// is no directory served here (a file, or nothing).
pub(crate) fn read_directory(
    shared: &Shared,
    cursors: Cursors<'_>,
    uri: &str,
    cursor: Option<&str>,
    version: ProtocolVersion,
) -> Outcome {
    let Some(skills) = &shared.skills else {
        return Outcome::Error(ErrorObject::method_not_found(RESOURCES_DIRECTORY_READ));
    };
    let children = match skills.read_directory(uri) {
        Lookup::Found(c) => c,
        Lookup::Refused(why) => return Outcome::Error(ErrorObject::invalid_params(why)),
        Lookup::Missing => {
            return Outcome::Error(ErrorObject::invalid_params(format!(
                "{uri} is not a directory resource"
            )));
        }
    };
    match page(
        cursors,
        ListKind::Directory,
        &children,
        cursor,
        shared.config.page_size,
    ) {
        Ok((items, next)) => {
            let mut m = Map::new();
            m.insert("resources".into(), to_json(&items));
            if let Some(n) = next {
                m.insert("nextCursor".into(), Value::from(n));
            }
            Outcome::Result(finish(Value::Object(m), version, false))
        }
        Err(()) => Outcome::Error(ErrorObject::invalid_params("invalid cursor")),
    }
}

/// `prompts/get`.
pub(crate) fn get_prompt(shared: &Shared, p: GetPromptRequestParams, ctx: &Context) -> Outcome {
    let version = ctx.protocol_version();
    let name = p.name.as_str();
    let Some(prompt) = shared
        .registry()
        .prompts
        .iter()
        .find(|x| x.def.name == name)
        .cloned()
    else {
        return Outcome::Error(ErrorObject::invalid_params(format!(
            "Unknown prompt: {name}"
        )));
    };
    let args = p.arguments.unwrap_or_default();
    if let Some(missing) = prompt.missing_required(&args) {
        return Outcome::Error(ErrorObject::invalid_params(format!(
            "Missing required argument: {missing}"
        )));
    }
    let binding = json!([PROMPTS_GET, name, &args]);
    if let Err(e) = restore_inputs(p.request_state.as_deref(), p.input_responses, &binding, ctx) {
        return Outcome::Error(e);
    }
    match run_guarded(|| (prompt.get)(&args, ctx)) {
        Err(panic) => Outcome::Error(panic),
        Ok(_) if ctx.call.cancel.drops_answer() => Outcome::Nothing,
        Ok(Ok(result)) => Outcome::from_result(&result, version),
        Ok(Err(Error::Cancelled)) => Outcome::Nothing,
        Ok(Err(e)) => handler_failure(shared, e, &binding, ctx, false),
    }
}

/// `completion/complete`.
pub(crate) fn complete(shared: &Shared, p: CompleteRequestParams, ctx: &Context) -> Outcome {
    let version = ctx.protocol_version();
    let arg_name = p.argument.name.as_str();
    let value = p.argument.value.as_str();
    let others = p.context.and_then(|c| c.arguments).unwrap_or_default();
    let reg = shared.registry();
    let completer = match &p.reference {
        Reference::Prompt(r) => match reg.prompts.iter().find(|x| x.def.name == r.name) {
            Some(x) => x.completers.get(arg_name).cloned(),
            None => {
                return Outcome::Error(ErrorObject::invalid_params(format!(
                    "Unknown prompt: {}",
                    r.name
                )));
            }
        },
        Reference::Resource(r) => {
            let uri = r.uri.as_str();
            match reg.templates.iter().find(|t| t.def.uri_template == uri) {
                Some(t) => t.completers.get(arg_name).cloned(),
                None if reg.resources.iter().any(|x| x.def.uri == uri) => None,
                None => {
                    return Outcome::Error(ErrorObject::invalid_params(format!(
                        "Unknown resource: {uri}"
                    )));
                }
            }
        }
    };
    drop(reg);
    let values = match completer {
        Some(c) => match run_guarded(|| c(value, &others)) {
            Ok(v) => v,
            Err(panic) => return Outcome::Error(panic),
        },
        None => Vec::new(),
    };
    let total = values.len();
    let shown: Vec<String> = values.into_iter().take(100).collect();
    Outcome::Result(finish(
        json!({ "completion": { "values": shown, "total": total, "hasMore": total > 100 } }),
        version,
        false,
    ))
}
