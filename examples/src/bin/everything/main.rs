//! A server that shows every feature of the kit, and carries the fixtures of the official
//! conformance suite (`@modelcontextprotocol/conformance`, server mode): the tools, resources,
//! prompts, completions and logging its scenarios call, with the contents they expect.
//!
//! `everything` serves stdio (the default); `everything --http 127.0.0.1:PORT` serves Streamable
//! HTTP on `/mcp`.
//!
//! It also serves Agent Skills (the skills extension, SEP-2640): the fixture under
//! `examples/skills/` by default, or every skill under `--skills-dir PATH`, rescanned every
//! few seconds so edits reach clients (with `notifications/resources/list_changed`).
//!
//! The fixtures that only probe the 2026-07-28 protocol (envelope diagnostics, list-change
//! triggers, input-required results, mirrored headers) live in `conformance.rs`, so that this
//! file stays a tour of what the kit offers.

mod conformance;

use std::collections::BTreeMap;
use std::sync::mpsc::{RecvTimeoutError, sync_channel};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_server_kit::schema::{JsonSchema, Schema};
use mcp_server_kit::skills::Skills;
use mcp_server_kit::types::{
    self, CallToolResult, ContentBlock, CreateMessageRequestParams, ElicitRequestParams,
    GetPromptResult, Icon, LoggingLevel, ResourceContents, ToolAnnotations,
};
use mcp_server_kit::{
    Context, Error, NoArgs, Prompt, Resource, ResourceTemplate, Server, Structured, Tool, with_mime,
};
use serde_json::{Value, json};

/// A 1x1 red pixel.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file (no samples).
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

fn from_json<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, Error> {
    serde_json::from_value(v).map_err(|e| Error::msg(e.to_string()))
}

// `test_structured_content`: the kit declares the tool's `outputSchema` from `Forecast` and
// sends the value as `structuredContent`, with the same JSON as text for clients before
// 2025-06-18. (Doc comments here become the schemas' descriptions.)

/// Where to forecast.
#[derive(serde::Deserialize, JsonSchema)]
struct ForecastArgs {
    /// The city to forecast.
    city: String,
}

/// Tomorrow's weather in a city.
#[derive(serde::Serialize, JsonSchema)]
struct Forecast {
    /// The city forecast.
    city: String,
    /// Degrees Celsius.
    temperature_c: f64,
    /// The sky, in a word.
    conditions: String,
}

fn structured_tool() -> Tool {
    Tool::typed("test_structured_content", |a: ForecastArgs, _: &Context| {
        Ok::<_, Error>(Structured(Forecast {
            city: a.city,
            temperature_c: 21.5,
            conditions: "sunny".to_owned(),
        }))
    })
    .description("A structured result: outputSchema from its type, structuredContent and text")
}

/// A link to a resource the client can read when it wants (2025-06-18+; refused for older
/// clients, whose content types have no link), and icons a client may show (2025-11-25+;
/// dropped for older clients).
fn link_tool() -> Tool {
    Tool::new("test_resource_link", |_: NoArgs, _: &Context| {
        let mut link = types::Resource::new("test://static-text", "static-text");
        link.mime_type = Some("text/plain".to_owned());
        Ok::<_, Error>(CallToolResult::new(vec![
            ContentBlock::text("The static text resource:"),
            ContentBlock::resource_link(link),
        ]))
    })
    .title("Resource link")
    .icon(png_icon())
    .description("Returns a link to test://static-text instead of its contents")
}

/// The red pixel as an icon, inline.
fn png_icon() -> Icon {
    let mut icon = Icon::new(format!("data:image/png;base64,{PNG}"));
    icon.mime_type = Some("image/png".to_owned());
    icon.sizes = Some(vec!["1x1".to_owned()]);
    icon
}

fn content_tools() -> Vec<Tool> {
    vec![
        Tool::new("test_simple_text", |_: NoArgs, _: &Context| {
            Ok::<_, Error>("This is a simple text response for testing.")
        })
        .description("Returns a simple text response"),
        Tool::new("test_image_content", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(ContentBlock::image(PNG, "image/png"))
        })
        .description("Returns a 1x1 PNG image"),
        Tool::new("test_audio_content", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(ContentBlock::audio(WAV, "audio/wav"))
        })
        .description("Returns a tiny WAV file"),
        Tool::new("test_embedded_resource", |_: NoArgs, _: &Context| {
            let r = with_mime(
                ResourceContents::text(
                    "test://embedded-resource",
                    "This is an embedded resource content.",
                ),
                "text/plain",
            );
            Ok::<_, Error>(ContentBlock::resource(r))
        })
        .description("Returns an embedded text resource"),
        Tool::new("test_multiple_content_types", |_: NoArgs, _: &Context| {
            let r = with_mime(
                ResourceContents::text(
                    "test://mixed-content-resource",
                    r#"{"test":"data","value":123}"#,
                ),
                "application/json",
            );
            Ok::<_, Error>(vec![
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image(PNG, "image/png"),
                ContentBlock::resource(r),
            ])
        })
        .description("Returns text, an image and an embedded resource"),
        Tool::new("test_error_handling", |_: NoArgs, _: &Context| {
            Err::<CallToolResult, _>(Error::msg(
                "This tool intentionally returns an error for testing",
            ))
        })
        .description("Always fails, as a tool error result"),
        Tool::new("test_reconnection", |_: NoArgs, ctx: &Context| {
            // Over Streamable HTTP the server lets go of the connection here (SSE polling):
            // the client reconnects, resumes the stream, and gets this answer from the replay.
            ctx.close_stream();
            pause(ctx, 100)?;
            Ok::<_, Error>(
                "Reconnection test completed successfully. If you received this, the client \
                 properly reconnected after stream closure.",
            )
        })
        .description("Ends its HTTP stream early (SSE polling); the client resumes it"),
    ]
}

/// Simulated work between steps of the long-running tools.
fn pause(ctx: &Context, ms: u64) -> Result<(), Error> {
    // A real tool would do work here; waiting on the cancellation instead of sleeping ends
    // the step the moment the client cancels.
    if ctx.wait_cancelled(Duration::from_millis(ms)) {
        Err(Error::Cancelled)
    } else {
        Ok(())
    }
}

fn long_running_tools() -> Vec<Tool> {
    vec![
        Tool::new("test_tool_with_logging", |_: NoArgs, ctx: &Context| {
            ctx.log(LoggingLevel::Info, "Tool execution started");
            pause(ctx, 50)?;
            ctx.log(LoggingLevel::Info, "Tool processing data");
            pause(ctx, 50)?;
            ctx.log(LoggingLevel::Info, "Tool execution completed");
            Ok::<_, Error>("Tool with logging executed successfully")
        })
        .description("Sends three log messages while it runs"),
        Tool::new("test_tool_with_progress", |_: NoArgs, ctx: &Context| {
            for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    pause(ctx, 50)?;
                }
                let msg = format!("Completed step {step} of 100");
                ctx.progress(step, Some(100.0), Some(&msg));
            }
            Ok::<_, Error>("Progress test completed")
        })
        .description("Reports progress 0, 50 and 100 of 100"),
    ]
}

#[derive(serde::Deserialize)]
struct SamplingArgs {
    prompt: String,
}

#[derive(serde::Deserialize)]
struct ElicitArgs {
    message: String,
}

fn elicit_text(prefix: &str, r: &mcp_server_kit::types::ElicitResult) -> String {
    let v = serde_json::to_value(r).unwrap_or(Value::Null);
    let action = v["action"].as_str().unwrap_or("unknown").to_owned();
    let content = v.get("content").cloned().unwrap_or(Value::Null);
    format!("{prefix}action={action}, content={content}")
}

fn client_call_tools() -> Vec<Tool> {
    vec![
        Tool::new("test_sampling", |a: SamplingArgs, ctx: &Context| {
            let params: CreateMessageRequestParams = from_json(json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": a.prompt}}],
                "maxTokens": 100
            }))?;
            let answer = ctx.sample(params)?;
            let text = conformance::sampled_text(&answer);
            Ok::<_, Error>(format!("LLM response: {text}"))
        })
        .description("Asks the client's model to answer a prompt")
        .input_schema(
            Schema::object().property("prompt", Schema::string().description("The prompt")),
        ),
        Tool::new("test_elicitation", |a: ElicitArgs, ctx: &Context| {
            let params: ElicitRequestParams = from_json(json!({
                "mode": "form",
                "message": a.message,
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"}
                    },
                    "required": ["username", "email"]
                }
            }))?;
            let r = ctx.elicit(params)?;
            Ok::<_, Error>(elicit_text("User response: ", &r))
        })
        .description("Asks the user for a username and an email address")
        .input_schema(
            Schema::object().property("message", Schema::string().description("What to ask")),
        ),
        Tool::new("test_elicitation_sep1034_defaults", |_: NoArgs, ctx: &Context| {
            let params: ElicitRequestParams = from_json(json!({
                "mode": "form",
                "message": "Please review and update the form fields with defaults",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "User name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "User age", "default": 30},
                        "score": {"type": "number", "description": "User score", "default": 95.5},
                        "status": {"type": "string", "description": "User status",
                                   "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "description": "Verified user", "default": true}
                    },
                    "required": []
                }
            }))?;
            let r = ctx.elicit(params)?;
            Ok::<_, Error>(elicit_text("Elicitation completed: ", &r))
        })
        .description("Elicitation with a default for every primitive type"),
        Tool::new("test_elicitation_sep1330_enums", |_: NoArgs, ctx: &Context| {
            let params: ElicitRequestParams = from_json(json!({
                "mode": "form",
                "message": "Please choose from the enum fields",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string", "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}]},
                        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                                       "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3,
                                          "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array", "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}]}}
                    },
                    "required": []
                }
            }))?;
            let r = ctx.elicit(params)?;
            Ok::<_, Error>(elicit_text("Elicitation completed: ", &r))
        })
        .description("Elicitation with every kind of enum schema"),
        Tool::new("json_schema_2020_12_tool", |a: Value, _: &Context| {
            Ok::<_, Error>(format!("JSON Schema 2020-12 tool called with: {a}"))
        })
        .description("Tool with JSON Schema 2020-12 features")
        // Kept as written, keywords the kit does not know included: clients get it unchanged,
        // and the kit checks each call's arguments against it before the handler runs.
        .input_schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
                "street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}},
                   "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        }))
        .annotations(from_json::<ToolAnnotations>(json!({"readOnlyHint": true})).unwrap_or_default()),
    ]
}

fn resources() -> (Vec<Resource>, ResourceTemplate) {
    let template = ResourceTemplate::new(
        "test://template/{id}/data",
        "template",
        |uri: &str, vars: &BTreeMap<String, String>, _: &Context| {
            let id = vars.get("id").cloned().unwrap_or_default();
            let body =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            let c = with_mime(
                ResourceContents::text(uri, body.to_string()),
                "application/json",
            );
            Ok(vec![c])
        },
    )
    .expect("the template is valid")
    .mime_type("application/json")
    .description("A resource template with one parameter")
    .complete("id", |value, _| {
        ["1", "2", "3", "123"]
            .into_iter()
            .filter(|c| c.starts_with(value))
            .map(str::to_owned)
            .collect()
    });
    let list = vec![
        Resource::text(
            "test://static-text",
            "static-text",
            "text/plain",
            "This is the content of the static text resource.",
        )
        .description("A static text resource"),
        Resource::blob("test://static-binary", "static-binary", "image/png", PNG)
            .description("A static binary resource (a PNG)"),
        Resource::text(
            "test://watched-resource",
            "watched-resource",
            "text/plain",
            "Watched resource content",
        )
        .description("A resource that changes every few seconds")
        .subscribable(),
    ];
    (list, template)
}

fn prompts() -> Vec<Prompt> {
    let user = |content: Value| json!({"role": "user", "content": content});
    vec![
        Prompt::new("test_simple_prompt", move |_, _: &Context| {
            from_json::<GetPromptResult>(json!({"messages": [
                user(json!({"type": "text", "text": "This is a simple prompt for testing."}))
            ]}))
        })
        .description("A prompt without arguments"),
        Prompt::new("test_prompt_with_arguments", move |args, _: &Context| {
            let text = format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                args.get("arg1").map_or("", String::as_str),
                args.get("arg2").map_or("", String::as_str)
            );
            from_json::<GetPromptResult>(json!({"messages": [user(json!({"type": "text", "text": text}))]}))
        })
        .description("A prompt with two required arguments")
        .argument("arg1", "First test argument", true)
        .argument("arg2", "Second test argument", true)
        .complete("arg1", |value, _| {
            ["test", "testValue1", "other"]
                .into_iter()
                .filter(|c| c.starts_with(value))
                .map(str::to_owned)
                .collect()
        }),
        Prompt::new("test_prompt_with_embedded_resource", move |args, _: &Context| {
            let uri = args.get("resourceUri").cloned().unwrap_or_default();
            from_json::<GetPromptResult>(json!({"messages": [
                user(json!({"type": "resource", "resource": {
                    "uri": uri, "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}})),
                user(json!({"type": "text", "text": "Please process the embedded resource above."}))
            ]}))
        })
        .description("A prompt that embeds a resource")
        .argument("resourceUri", "URI of the resource to embed", true),
        Prompt::new("test_prompt_with_image", move |_, _: &Context| {
            from_json::<GetPromptResult>(json!({"messages": [
                user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
                user(json!({"type": "text", "text": "Please analyze the image above."}))
            ]}))
        })
        .description("A prompt with an image"),
    ]
}

/// The environment variable that replaces the background timers with the `test_tick` tool.
const MANUAL_CLOCK: &str = "EVERYTHING_CLOCK";

/// The background activity, one step per tick: the first adds the dynamic tool, each later
/// one changes the watched resource.
#[derive(Clone, Copy, PartialEq)]
enum Clock {
    Started,
    Running,
}

impl Clock {
    fn tick(self, server: &Server) {
        match self {
            Clock::Started => server.add_tool(
                Tool::new("test_dynamic_tool", |_: NoArgs, _: &Context| {
                    Ok::<_, Error>("This tool was added at run time")
                })
                .description("A tool registered two seconds after start"),
            ),
            Clock::Running => server.resource_updated("test://watched-resource"),
        }
    }
}

/// With `EVERYTHING_CLOCK=manual`, tests drive the background activity themselves: each call
/// of `test_tick` is one step of the clock, done before the call is answered, so a test knows
/// exactly when a notification could have been sent and can prove that one was not, without
/// waiting for a timer.
fn tick_tool(running: &Arc<OnceLock<Server>>) -> Tool {
    let running = Arc::clone(running);
    let started = std::sync::atomic::AtomicBool::new(false);
    Tool::new("test_tick", move |_: NoArgs, _: &Context| {
        let Some(server) = running.get() else {
            return Err(Error::msg("the server is not running yet"));
        };
        let step = if started.swap(true, std::sync::atomic::Ordering::AcqRel) {
            Clock::Running
        } else {
            Clock::Started
        };
        step.tick(server);
        Ok::<_, Error>(match step {
            Clock::Started => "added test_dynamic_tool",
            Clock::Running => "updated test://watched-resource",
        })
    })
    .description("One step of the background clock (EVERYTHING_CLOCK=manual only)")
}

/// The skills served when no `--skills-dir` is given: the fixture checked in next to this
/// crate (absent when the binary runs away from its source tree, and then none are served).
const FIXTURE_SKILLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/skills");

/// `--skills-dir PATH`, taken out of `args` (the shared option parser does not know it).
fn take_skills_dir(args: &mut Vec<String>) -> Result<Option<String>, String> {
    let Some(i) = args.iter().position(|a| a == "--skills-dir") else {
        return Ok(None);
    };
    if i + 1 >= args.len() {
        return Err("--skills-dir takes a directory".into());
    }
    let dir = args.remove(i + 1);
    args.remove(i);
    if args.iter().any(|a| a == "--skills-dir") {
        return Err("--skills-dir is given twice".into());
    }
    Ok(Some(dir))
}

/// The catalog: `--skills-dir`'s, else the fixture's if it is there.
fn skills(dir: Option<&str>) -> Result<Option<Skills>, Box<dyn std::error::Error>> {
    let (path, given) = match dir {
        Some(d) => (d, true),
        None => (FIXTURE_SKILLS, false),
    };
    if !given && !std::path::Path::new(path).is_dir() {
        return Ok(None);
    }
    let skills = Skills::from_dir(path).map_err(|e| format!("--skills-dir: {e}"))?;
    for (skill, why) in skills.skipped() {
        eprintln!("everything: skill {skill} not served: {why}");
    }
    Ok(Some(skills))
}

fn build(
    manual_clock: bool,
    args: &[String],
    skills: Option<Skills>,
) -> Result<Server, Box<dyn std::error::Error>> {
    let (resources, template) = resources();
    let b = Server::builder("mcp-everything", env!("CARGO_PKG_VERSION"));
    let mut b = mcp_examples::configure(b, args)?
        .title("Everything (mcp-blocking)")
        .icon(png_icon())
        .instructions("A test server that exercises every MCP feature.")
        .logging()
        .resource_template(template);
    // The list-change triggers add and remove tools and prompts on the running server.
    let running = Arc::new(OnceLock::new());
    for t in content_tools()
        .into_iter()
        .chain(long_running_tools())
        .chain(client_call_tools())
        .chain(conformance::diagnostic_tools())
        .chain(conformance::list_change_triggers(&running))
        .chain(conformance::input_required_tools())
        .chain([conformance::custom_header_tool()])
        .chain(conformance::task_tools())
        .chain([structured_tool(), link_tool()])
        .chain(manual_clock.then(|| tick_tool(&running)))
    {
        b = b.tool(t);
    }
    for r in resources {
        b = b.resource(r);
    }
    for p in prompts()
        .into_iter()
        .chain([conformance::input_required_prompt()])
    {
        b = b.prompt(p);
    }
    if let Some(s) = skills {
        b = b.skills(s);
    }
    let server = b.build()?;
    // Set once, just made: it cannot be full already.
    let _ = running.set(server.clone());
    Ok(server)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .target(env_logger::Target::Stderr)
        .init();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "usage: everything {} [--skills-dir PATH]   {}",
            mcp_examples::USAGE,
            mcp_examples::USAGE_NOTE
        );
        return Ok(());
    }
    let manual = std::env::var_os(MANUAL_CLOCK).is_some_and(|v| v == "manual");
    let skills = skills(take_skills_dir(&mut args)?.as_deref())?;
    let server = build(manual, &args, skills.clone())?;
    // Background activity: the dynamic tool appears after 2 s, and the watched resource
    // changes every 3 s. A channel that is never sent to serves as a stoppable timer; its
    // sender lives as long as `main`.
    let (_stop, stop_rx) = sync_channel::<()>(0);
    if !manual {
        let bg = server.clone();
        std::thread::Builder::new()
            .name("everything-timers".into())
            .spawn(move || {
                if stop_rx.recv_timeout(Duration::from_secs(2)) != Err(RecvTimeoutError::Timeout) {
                    return;
                }
                Clock::Started.tick(&bg);
                let mut ticks = 0u32;
                while stop_rx.recv_timeout(Duration::from_secs(3)) == Err(RecvTimeoutError::Timeout)
                {
                    Clock::Running.tick(&bg);
                    // Every other tick (6 s), the skills directory is read again.
                    ticks += 1;
                    if let Some(s) = skills.as_ref().filter(|_| ticks % 2 == 0) {
                        if let Err(e) = s.rescan() {
                            log::warn!("skills rescan failed: {e}");
                        }
                    }
                }
            })?;
    }
    mcp_examples::serve(server, args.into_iter())
}
