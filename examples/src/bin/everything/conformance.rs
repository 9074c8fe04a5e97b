//! Fixtures that exist only for the official conformance suite's 2026-07-28 scenarios
//! (`server-stateless`, `input-required-result-*`, `http-custom-header-server-validation`):
//! probes of how the server treats a request's envelope, rather than features a person would
//! call. Their names, input keys and texts are the ones the suite looks for. The `tasks-*`
//! scenarios (the tasks extension, SEP-2663) drive the tools of [`task_tools`].

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_server_kit::types::tasks_ext::TaskSupport;
use mcp_server_kit::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    GetPromptResult, ListRootsResult, LoggingLevel,
};
use mcp_server_kit::{Context, Error, NoArgs, Prompt, Server, Tool};
use serde_json::{Value, json};

use super::from_json;

/// The text of a sampling answer (a content block, or a list of them from 2025-11-25 on).
pub fn sampled_text(answer: &CreateMessageResult) -> String {
    let v = serde_json::to_value(answer).unwrap_or(Value::Null);
    match &v["content"] {
        Value::Array(items) => items
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        c => c["text"].as_str().unwrap_or("").to_owned(),
    }
}

/// A string field of an accepted form, or `""`.
fn field(r: &ElicitResult, name: &str) -> String {
    r.content
        .as_ref()
        .and_then(|c| c.get(name))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

/// A form asking for one property of type `kind`.
fn form(message: &str, name: &str, kind: &str) -> Result<ElicitRequestParams, Error> {
    from_json(json!({
        "message": message,
        "requestedSchema": {"type": "object", "properties": {name: {"type": kind}},
                            "required": [name]}
    }))
}

fn question(text: &str, max_tokens: u32) -> Result<CreateMessageRequestParams, Error> {
    from_json(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens
    }))
}

fn roots_text(r: &ListRootsResult) -> String {
    let uris: Vec<&str> = r.roots.iter().map(|r| r.uri.as_str()).collect();
    format!("{} root(s): {}", uris.len(), uris.join(", "))
}

/// `server-stateless`: tools whose behaviour shows how the server treats the envelope.
pub fn diagnostic_tools() -> Vec<Tool> {
    vec![
        // Without `sampling` in the request's capabilities the kit answers -32021 naming it
        // (HTTP 400), before anything runs.
        Tool::new("test_missing_capability", |_: NoArgs, ctx: &Context| {
            let answer = ctx.sample(question("Say hello", 20)?)?;
            Ok::<_, Error>(format!("Sampled: {}", sampled_text(&answer)))
        })
        .description("Test tool requiring sampling"),
        // In 2026-07-28 the question goes back as an InputRequiredResult: never as a request
        // of the server's own on the response stream.
        Tool::new("test_streaming_elicitation", |_: NoArgs, ctx: &Context| {
            let r = ctx.elicit(form("What is your name?", "name", "string")?)?;
            Ok::<_, Error>(format!("Hello, {}!", field(&r, "name")))
        })
        .description("Asks the user a question (an input-required result in 2026-07-28)"),
        // Logs only when the request's _meta names a logLevel; answers at once either way.
        Tool::new("test_logging_tool", |_: NoArgs, ctx: &Context| {
            ctx.log(LoggingLevel::Info, "test_logging_tool started");
            ctx.log(LoggingLevel::Info, "test_logging_tool finished");
            Ok::<_, Error>("Logging tool finished")
        })
        .description("Sends log messages only to clients that asked for a log level"),
    ]
}

/// `server-stateless`: tools that change the tool list or the prompt list each time they are
/// called (a tool or prompt comes and goes), so that a `subscriptions/listen` stream has a
/// `list_changed` to deliver. They reach the server through `server`, filled once it is built;
/// the server then holds tools that hold it, which is fine for a process-long server.
pub fn list_change_triggers(server: &Arc<OnceLock<Server>>) -> Vec<Tool> {
    let s = Arc::clone(server);
    let tools = Tool::new("test_trigger_tool_change", move |_: NoArgs, _: &Context| {
        let server = s.get().ok_or("the server is not running yet")?;
        let name = "test_toggled_tool";
        let now = if server.remove_tool(name) {
            "removed"
        } else {
            server.add_tool(
                Tool::new(name, |_: NoArgs, _: &Context| Ok::<_, Error>("toggled"))
                    .description("Comes and goes with test_trigger_tool_change"),
            );
            "added"
        };
        Ok::<_, Error>(format!("{name} {now}"))
    })
    .description("Adds or removes a tool (notifications/tools/list_changed)");
    let s = Arc::clone(server);
    let prompts = Tool::new(
        "test_trigger_prompt_change",
        move |_: NoArgs, _: &Context| {
            let server = s.get().ok_or("the server is not running yet")?;
            let name = "test_toggled_prompt";
            let now = if server.remove_prompt(name) {
                "removed"
            } else {
                server.add_prompt(
                    Prompt::new(name, |_, _: &Context| {
                        from_json::<GetPromptResult>(json!({"messages": [{"role": "user",
                        "content": {"type": "text", "text": "toggled"}}]}))
                    })
                    .description("Comes and goes with test_trigger_prompt_change"),
                );
                "added"
            };
            Ok::<_, Error>(format!("{name} {now}"))
        },
    )
    .description("Adds or removes a prompt (notifications/prompts/list_changed)");
    vec![tools, prompts]
}

/// `input-required-result-*` (SEP-2322): tools that need the client's input, under the input
/// keys the suite answers. In the legacy era the same handlers ask the client directly.
pub fn input_required_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "test_input_required_result_elicitation",
            |_: NoArgs, ctx: &Context| {
                let r =
                    ctx.elicit_as("user_name", form("What is your name?", "name", "string")?)?;
                Ok::<_, Error>(format!("Hello, {}!", field(&r, "name")))
            },
        )
        .description("Asks for the user's name (input key user_name)"),
        Tool::new(
            "test_input_required_result_sampling",
            |_: NoArgs, ctx: &Context| {
                let q = question("What is the capital of France?", 100)?;
                let answer = ctx.sample_as("capital_question", q)?;
                Ok::<_, Error>(format!("The model said: {}", sampled_text(&answer)))
            },
        )
        .description("Asks the client's model a question (input key capital_question)"),
        Tool::new(
            "test_input_required_result_list_roots",
            |_: NoArgs, ctx: &Context| {
                let roots = ctx.roots_as("client_roots")?;
                Ok::<_, Error>(format!("The client has {}", roots_text(&roots)))
            },
        )
        .description("Asks for the client's roots (input key client_roots)"),
        Tool::new(
            "test_input_required_result_request_state",
            |_: NoArgs, ctx: &Context| {
                let r = ctx.elicit_as("confirm", form("Please confirm", "ok", "boolean")?)?;
                Ok::<_, Error>(format!("state-ok: confirmed={}", field(&r, "ok")))
            },
        )
        .description("Needs a confirmation; the retry carries the request state back"),
        Tool::new(
            "test_input_required_result_multiple_inputs",
            |_: NoArgs, ctx: &Context| {
                // All three asked before any `?`, so one round asks for all of them.
                let name =
                    ctx.elicit_as("user_name", form("What is your name?", "name", "string")?);
                let greeting = ctx.sample_as("greeting", question("Generate a greeting", 50)?);
                let roots = ctx.roots_as("client_roots");
                let (name, greeting, roots) = (name?, greeting?, roots?);
                Ok::<_, Error>(format!(
                    "{} {}! The client has {}",
                    sampled_text(&greeting),
                    field(&name, "name"),
                    roots_text(&roots)
                ))
            },
        )
        .description("Needs an answer, a sampled greeting and the roots, all in one round"),
        Tool::new(
            "test_input_required_result_multi_round",
            |_: NoArgs, ctx: &Context| {
                // The second question depends on the first answer: two rounds.
                let name = ctx.elicit_as(
                    "step1",
                    form("Step 1: What is your name?", "name", "string")?,
                )?;
                let color = ctx.elicit_as(
                    "step2",
                    form("Step 2: What is your favorite color?", "color", "string")?,
                )?;
                Ok::<_, Error>(format!(
                    "{} likes {}",
                    field(&name, "name"),
                    field(&color, "color")
                ))
            },
        )
        .description("Asks two questions, one round each"),
        Tool::new(
            "test_input_required_result_tampered_state",
            |_: NoArgs, ctx: &Context| {
                let r = ctx.elicit_as("confirm", form("Please confirm", "ok", "boolean")?)?;
                Ok::<_, Error>(format!("confirmed={}", field(&r, "ok")))
            },
        )
        .description("Needs a confirmation; a retry with an altered request state is refused"),
        Tool::new(
            "test_input_required_result_capabilities",
            |_: NoArgs, ctx: &Context| {
                // Asks only what the request's capabilities allow.
                let caps = ctx.client_capabilities();
                let has = |c: &str| caps.get(c).is_some_and(|v| !v.is_null());
                let mut got = Vec::new();
                if has("elicitation") {
                    let r =
                        ctx.elicit_as("user_name", form("What is your name?", "name", "string")?)?;
                    got.push(format!("name={}", field(&r, "name")));
                }
                if has("sampling") {
                    let a = ctx.sample_as("greeting", question("Generate a greeting", 50)?)?;
                    got.push(format!("greeting={}", sampled_text(&a)));
                }
                if has("roots") {
                    got.push(roots_text(&ctx.roots_as("client_roots")?));
                }
                if got.is_empty() {
                    got.push("the client declared no capability to ask with".to_owned());
                }
                Ok::<_, Error>(got.join("; "))
            },
        )
        .description("Asks only for the input the client's capabilities allow"),
    ]
}

/// `input-required-result-non-tool-request`: a prompt that needs input too.
pub fn input_required_prompt() -> Prompt {
    Prompt::new("test_input_required_result_prompt", |_, ctx: &Context| {
        let r = ctx.elicit_as(
            "user_context",
            form("What context should the prompt use?", "context", "string")?,
        )?;
        from_json::<GetPromptResult>(json!({"messages": [{"role": "user", "content": {
            "type": "text",
            "text": format!("Use this context: {}", field(&r, "context"))}}]}))
    })
    .description("A prompt that asks the user for its context first")
}

/// `http-custom-header-server-validation` (SEP-2243): a tool with an argument mirrored in an
/// `Mcp-Param-Region` header; the kit refuses a call whose header and argument disagree.
pub fn custom_header_tool() -> Tool {
    #[derive(serde::Deserialize)]
    struct Args {
        region: String,
    }
    Tool::new("test_custom_header_routing", |a: Args, _: &Context| {
        Ok::<_, Error>(format!("Routed to region {}", a.region))
    })
    .description("Takes a region that is mirrored in the Mcp-Param-Region header")
    .input_schema(json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "description": "Where to route the call",
                       "x-mcp-header": "Region"}
        },
        "required": ["region"]
    }))
}

/// The tasks extension's fixtures (`tasks-*` scenarios): one plain tool and tools that run as
/// tasks, with the behaviour each scenario checks. They are ordinary handlers: the kit makes
/// them tasks.
pub fn task_tools() -> Vec<Tool> {
    #[derive(serde::Deserialize)]
    struct Greet {
        name: String,
    }
    #[derive(serde::Deserialize)]
    struct Compute {
        #[serde(default)]
        seconds: f64,
        #[serde(default)]
        label: String,
    }
    #[derive(serde::Deserialize)]
    struct Delete {
        #[serde(default)]
        filename: String,
    }
    vec![
        Tool::new("greet", |a: Greet, _: &Context| {
            Ok::<_, Error>(format!("Hello, {}!", a.name))
        })
        .description("Greets by name, at once (never a task)")
        .input_schema(
            json!({"type": "object", "properties": {"name": {"type": "string"}},
                             "required": ["name"]}),
        ),
        Tool::new("slow_compute", |a: Compute, ctx: &Context| {
            // Waits on the cancellation itself, so `tasks/cancel` ends it at once.
            let wait = Duration::from_secs_f64(a.seconds.clamp(0.0, 3600.0));
            if ctx.wait_cancelled(wait) {
                return Err(Error::Cancelled);
            }
            Ok(format!("computed {} after {}s", a.label, a.seconds))
        })
        .description("Takes `seconds` seconds, then answers; a task for clients that follow tasks")
        .input_schema(json!({"type": "object", "properties": {
            "seconds": {"type": "number"}, "label": {"type": "string"}}}))
        .task_support(TaskSupport::Optional),
        Tool::new("failing_job", |_: NoArgs, ctx: &Context| {
            if ctx.wait_cancelled(Duration::from_secs(1)) {
                return Err(Error::Cancelled);
            }
            Err::<String, _>(Error::msg("the job failed"))
        })
        .description("Runs only as a task and ends in a tool error after a second")
        .task_support(TaskSupport::Required),
        Tool::new(
            "protocol_error_job",
            |_: NoArgs, _: &Context| -> Result<String, Error> {
                panic!("protocol_error_job fails on purpose")
            },
        )
        .description("A task whose handler panics: the task ends failed")
        .task_support(TaskSupport::Optional),
        Tool::new("confirm_delete", |a: Delete, ctx: &Context| {
            let answer = ctx.elicit(from_json(json!({
                "message": format!("Delete {}?", a.filename),
                "requestedSchema": {"type": "object",
                    "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
            }))?)?;
            let yes = answer
                .content
                .as_ref()
                .and_then(|c| c.get("confirm"))
                .is_some_and(|v| v == &json!(true));
            Ok::<_, Error>(if yes {
                format!("deleted {}", a.filename)
            } else {
                format!("kept {}", a.filename)
            })
        })
        .description("Asks for confirmation, then answers")
        .input_schema(json!({"type": "object", "properties": {"filename": {"type": "string"}}}))
        .task_support(TaskSupport::Optional),
        Tool::new("multi_input", |_: NoArgs, ctx: &Context| {
            // Two questions at once, from two threads: both are outstanding together.
            let (name, confirm) = std::thread::scope(|s| {
                let name = s.spawn(|| ctx.elicit_as("name", form("Your name?", "name", "string")?));
                let confirm =
                    s.spawn(|| ctx.elicit_as("confirm", form("Go ahead?", "confirm", "boolean")?));
                let join = |h: std::thread::ScopedJoinHandle<'_, Result<ElicitResult, Error>>| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::msg("input thread panicked")))
                };
                (join(name), join(confirm))
            });
            let (name, confirm) = (name?, confirm?);
            Ok::<_, Error>(format!(
                "name {:?}, confirm {:?}",
                field(&name, "name"),
                field(&confirm, "confirm")
            ))
        })
        .description("Asks two questions at once, then answers")
        .task_support(TaskSupport::Optional),
        Tool::new("test_tool_with_task", |_: NoArgs, ctx: &Context| {
            // The input round is answered at once (input_required); the rest is a task.
            let answer =
                ctx.elicit_as("user_name", form("What is your name?", "name", "string")?)?;
            let name = field(&answer, "name");
            ctx.continue_as_task(move |_| Ok::<_, Error>(format!("Hello, {name}!")))
        })
        .description("Gathers a name, then finishes as a task")
        .task_support(TaskSupport::Required)
        .task_started_by_handler(),
    ]
}
