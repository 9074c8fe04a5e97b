//! rmcp's client touring our `everything` server.

use std::future::Future;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CallToolRequest, CallToolRequestParams, CancelTaskRequest, ClientRequest,
    CompleteRequestParams, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, GetPromptRequestParams, GetTaskRequest, ListRootsResult, LoggingLevel,
    LoggingMessageNotificationParam, PaginatedRequestParams, PingRequest,
    ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams, Reference,
    ResourceUpdatedNotificationParam, ServerNotification, ServerResult, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient};
use serde_json::{Value, json};
use tokio::sync::Notify;

const STEP_TIMEOUT: Duration = Duration::from_secs(20);
const SAMPLED: &str = "This is a test response from the client";
const ROOT: &str = "file:///tmp/mcp-interop-root";

#[derive(Default)]
struct Rec {
    progress: Vec<(Value, f64, Option<f64>, Option<String>)>,
    logs: Vec<(String, Value)>,
    updated: Vec<String>,
    tools_changed: usize,
    sampling: Vec<Value>,
    elicitation: Vec<Value>,
    roots: usize,
}

#[derive(Clone, Default)]
struct Probe {
    rec: Arc<Mutex<Rec>>,
    notify: Arc<Notify>,
    /// The revision `initialize` asks for (default 2025-11-25).
    version: Option<String>,
}

impl Probe {
    fn rec(&self) -> std::sync::MutexGuard<'_, Rec> {
        self.rec.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn from_json<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("a fixed JSON value of the right shape")
}

/// An answer to a form elicitation: each property's default, else a plausible value.
fn fill(schema: &Value) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(props) = schema["properties"].as_object() {
        for (name, p) in props {
            let v = if let Some(d) = p.get("default") {
                d.clone()
            } else {
                match p["type"].as_str() {
                    Some("string") => p["enum"][0]
                        .as_str()
                        .or(p["oneOf"][0]["const"].as_str())
                        .map(|s| json!(s))
                        .unwrap_or_else(|| match name.as_str() {
                            "username" => json!("testuser"),
                            "email" => json!("test@example.com"),
                            _ => json!("text"),
                        }),
                    Some("integer") => json!(1),
                    Some("number") => json!(1.5),
                    Some("boolean") => json!(true),
                    Some("array") => {
                        let i = &p["items"];
                        let first = i["enum"][0].clone();
                        let first = if first.is_null() {
                            i["anyOf"][0]["const"].clone()
                        } else {
                            first
                        };
                        json!([first])
                    }
                    _ => Value::Null,
                }
            };
            out.insert(name.clone(), v);
        }
    }
    Value::Object(out)
}

impl ClientHandler for Probe {
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.rec()
            .sampling
            .push(serde_json::to_value(&params).unwrap_or_default());
        Ok(from_json(json!({
            "role": "assistant",
            "content": {"type": "text", "text": SAMPLED},
            "model": "test-model",
            "stopReason": "endTurn"
        })))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let v = serde_json::to_value(&request).unwrap_or_default();
        self.rec().elicitation.push(v.clone());
        if v.get("mode").and_then(Value::as_str) == Some("url") {
            return Ok(from_json(json!({"action": "accept"})));
        }
        Ok(from_json(
            json!({"action": "accept", "content": fill(&v["requestedSchema"])}),
        ))
    }

    async fn list_roots(
        &self,
        _: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.rec().roots += 1;
        Ok(from_json(
            json!({"roots": [{"uri": ROOT, "name": "interop"}]}),
        ))
    }

    async fn on_progress(&self, p: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        let token = serde_json::to_value(&p.progress_token).unwrap_or_default();
        self.rec()
            .progress
            .push((token, p.progress, p.total, p.message));
    }

    async fn on_logging_message(
        &self,
        p: LoggingMessageNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(p.level).unwrap_or_default();
        self.rec()
            .logs
            .push((level.as_str().unwrap_or("?").to_owned(), p.data));
    }

    async fn on_resource_updated(
        &self,
        p: ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.rec().updated.push(p.uri);
        self.notify.notify_waiters();
    }

    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.rec().tools_changed += 1;
        self.notify.notify_waiters();
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        from_json(json!({
            "protocolVersion": self.version.as_deref().unwrap_or("2025-11-25"),
            "capabilities": {
                "sampling": {},
                "elicitation": {"form": {}, "url": {}},
                "roots": {"listChanged": true}
            },
            "clientInfo": {"name": "rmcp-interop", "version": "0.1.0"}
        }))
    }
}

type Client = RunningService<RoleClient, Probe>;
/// Checks a tool's result (as JSON).
type Check = fn(&Value) -> Result<(), String>;

struct Tally {
    ok: usize,
    failed: Vec<String>,
}

impl Tally {
    async fn step<F: Future<Output = Result<String, String>>>(&mut self, name: &str, f: F) -> bool {
        let r = match tokio::time::timeout(STEP_TIMEOUT, f).await {
            Ok(r) => r,
            Err(_) => Err(format!("timed out after {} s", STEP_TIMEOUT.as_secs())),
        };
        match r {
            Ok(detail) => {
                println!(
                    "  ok {name}{}",
                    if detail.is_empty() {
                        String::new()
                    } else {
                        format!(": {detail}")
                    }
                );
                self.ok += 1;
                true
            }
            Err(e) => {
                println!("  FAIL {name}: {e}");
                self.failed.push(format!("{name}: {e}"));
                false
            }
        }
    }
}

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

fn text_of(result: &Value, i: usize) -> String {
    result["content"][i]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn expect(cond: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if cond { Ok(()) } else { Err(what()) }
}

fn params(name: &str, args: Value) -> CallToolRequestParams {
    from_json(json!({"name": name, "arguments": args}))
}

async fn ping(c: &Client, modern: bool) -> Result<String, String> {
    match c
        .send_request(ClientRequest::PingRequest(PingRequest::default()))
        .await
    {
        Ok(ServerResult::EmptyResult(_)) if !modern => Ok(String::new()),
        Err(rmcp::ServiceError::McpError(e)) if modern && e.code.0 == -32601 => {
            Ok("-32601 (removed in 2026-07-28)".into())
        }
        other => Err(format!("{other:?}")),
    }
}

/// Why tool or prompt `name` of everything is not toured at revision `rev`, if it is not.
fn not_before(name: &str, rev: &str) -> Option<&'static str> {
    let needs = match name {
        "test_audio_content" => "2025-03-26",
        "test_structured_content" | "test_resource_link" => "2025-06-18",
        "test_elicitation"
        | "test_input_required_result_multiple_inputs"
        | "test_input_required_result_multi_round"
        | "test_input_required_result_prompt" => "2025-06-18",
        "test_elicitation_sep1034_defaults" | "test_elicitation_sep1330_enums" => "2025-11-25",
        _ => return None,
    };
    (rev < needs).then_some(match needs {
        "2025-03-26" => "new in 2025-03-26",
        "2025-06-18" => "new in 2025-06-18",
        _ => "new in 2025-11-25",
    })
}

fn task_options() -> PeerRequestOptions {
    PeerRequestOptions::no_options().with_meta(from_json(json!({
        "io.modelcontextprotocol/clientCapabilities": {
            "sampling": {},
            "elicitation": {"form": {}, "url": {}},
            "roots": {"listChanged": true},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
    })))
}

async fn start_task(c: &Client, seconds: f64) -> Result<String, String> {
    let req = ClientRequest::CallToolRequest(CallToolRequest::new(params(
        "slow_compute",
        json!({"seconds": seconds, "label": "task"}),
    )));
    let r = c
        .send_request_with_option(req, task_options())
        .await
        .map_err(|e| format!("{e:?}"))?
        .await_response()
        .await
        .map_err(|e| format!("tools/call: {e:?}"))?;
    match r {
        ServerResult::CreateTaskResult(t) => Ok(t.task.task_id),
        other => Err(format!("not a task: {other:?}")),
    }
}

async fn get_task(c: &Client, id: &str) -> Result<Value, String> {
    let g = ClientRequest::GetTaskRequest(GetTaskRequest::new(from_json(json!({"taskId": id}))));
    let r = c
        .send_request_with_option(g, task_options())
        .await
        .map_err(|e| format!("{e:?}"))?
        .await_response()
        .await
        .map_err(|e| format!("tasks/get: {e:?}"))?;
    match r {
        ServerResult::GetTaskResult(g) => serde_json::to_value(&g).map_err(err),
        other => Err(format!("tasks/get answered {other:?}")),
    }
}

async fn call(c: &Client, name: &str, args: Value) -> Result<Value, String> {
    let r = c
        .call_tool(params(name, args))
        .await
        .map_err(|e| format!("{e:?}"))?;
    serde_json::to_value(&r).map_err(err)
}

pub async fn run(args: &[String]) -> ExitCode {
    let mut mode = "legacy".to_owned();
    let mut http: Option<String> = None;
    let mut asked: Option<String> = None;
    let mut cmd: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--mode" => {
                mode = args.get(i + 1).cloned().unwrap_or_default();
                i += 2;
            }
            "--http" => {
                http = args.get(i + 1).cloned();
                i += 2;
            }
            "--version" => {
                asked = args.get(i + 1).cloned();
                i += 2;
            }
            "--" => {
                cmd = args[i + 1..].to_vec();
                break;
            }
            other => {
                eprintln!("unknown argument {other}");
                return ExitCode::from(2);
            }
        }
    }
    let lifecycle = match mode.as_str() {
        "legacy" => ClientLifecycleMode::Initialize,
        "modern" => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        "auto" => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: None,
        },
        m => {
            eprintln!("unknown mode {m}");
            return ExitCode::from(2);
        }
    };
    let probe = Probe {
        version: asked.clone(),
        ..Probe::default()
    };
    let started = std::time::Instant::now();
    let connected = match (&http, cmd.split_first()) {
        (Some(url), _) => {
            probe
                .clone()
                .serve_with_lifecycle(
                    StreamableHttpClientTransport::from_uri(url.as_str()),
                    lifecycle,
                )
                .await
        }
        (None, Some((prog, rest))) => {
            let mut c = tokio::process::Command::new(prog);
            c.args(rest);
            let t = match TokioChildProcess::new(c) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("spawn {prog}: {e}");
                    return ExitCode::from(2);
                }
            };
            probe.clone().serve_with_lifecycle(t, lifecycle).await
        }
        _ => {
            eprintln!("need -- COMMAND or --http URL");
            return ExitCode::from(2);
        }
    };
    let mut t = Tally {
        ok: 0,
        failed: Vec::new(),
    };
    let client = match connected {
        Ok(c) => c,
        Err(e) => {
            println!("  FAIL connect ({mode}): {e:?}");
            println!("rmcp client tour: 0 ok, 1 failed");
            return ExitCode::from(1);
        }
    };
    let info = client.peer_info();
    let version = info
        .as_ref()
        .map(|i| i.protocol_version.to_string())
        .unwrap_or_default();
    let modern = version == "2026-07-28";
    let caps = info
        .as_ref()
        .map(|i| serde_json::to_value(&i.capabilities).unwrap_or_default())
        .unwrap_or_default();
    t.ok += 1;
    println!(
        "  ok connect ({mode}): protocol {version}, server {:?}, capabilities {caps}",
        info.as_ref()
            .and_then(|i| i.server_info.as_ref())
            .map(|s| s.name.clone())
    );
    let expected = match (mode.as_str(), &asked) {
        ("legacy", Some(v)) => v.as_str(),
        ("legacy", None) => "2025-11-25",
        _ => "2026-07-28",
    };
    // ISO dates: revisions compare as strings
    let rev = version.clone();
    let since = |r: &str| rev.as_str() >= r;
    t.step("negotiated version", async {
        expect(version == expected, || {
            format!("got {version}, expected {expected}")
        })
        .map(|_| version.clone())
    })
    .await;

    // ping and logging/setLevel are gone in 2026-07-28: there the server must answer -32601
    t.step("ping", ping(&client, modern)).await;

    // tools/list page by page, and through rmcp's own paginating helper
    let mut tool_names: Vec<String> = Vec::new();
    t.step("tools/list pages", async {
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let p = cursor
                .as_ref()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c.clone())));
            let r = client.list_tools(p).await.map_err(|e| format!("{e:?}"))?;
            pages += 1;
            tool_names.extend(r.tools.iter().map(|t| t.name.to_string()));
            cursor = r.next_cursor;
            if cursor.is_none() || pages > 50 {
                break;
            }
        }
        let all = client
            .list_all_tools()
            .await
            .map_err(|e| format!("list_all_tools: {e:?}"))?;
        let all: Vec<String> = all.iter().map(|t| t.name.to_string()).collect();
        expect(all == tool_names, || {
            format!("list_all_tools {all:?} != pages {tool_names:?}")
        })?;
        Ok(format!("{} tools in {pages} page(s)", tool_names.len()))
    })
    .await;
    t.step("tools have schemas", async {
        if !since("2025-06-18") {
            return Ok("no outputSchema before 2025-06-18".into());
        }
        let all = client
            .list_all_tools()
            .await
            .map_err(|e| format!("{e:?}"))?;
        let sc = all
            .iter()
            .find(|t| t.name == "test_structured_content")
            .ok_or("no test_structured_content")?;
        let os = sc
            .output_schema
            .as_ref()
            .ok_or("test_structured_content has no outputSchema")?;
        expect(os.get("type") == Some(&json!("object")), || {
            format!("outputSchema {os:?}")
        })?;
        Ok(format!(
            "outputSchema required {}",
            json!(os.get("required"))
        ))
    })
    .await;

    if caps.get("logging").is_some() {
        t.step("logging/setLevel debug", async {
            match client
                .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
                .await
            {
                Ok(()) if !modern => Ok(String::new()),
                Err(rmcp::ServiceError::McpError(e)) if modern && e.code.0 == -32601 => {
                    Ok("-32601 (removed in 2026-07-28)".into())
                }
                other => Err(format!("{other:?}")),
            }
        })
        .await;
    }

    // the tools
    let simple: &[(&str, Value, Check)] = &[
        ("test_simple_text", json!({}), |r| {
            expect(
                text_of(r, 0) == "This is a simple text response for testing.",
                || r.to_string(),
            )
        }),
        ("test_image_content", json!({}), |r| {
            expect(
                r["content"][0]["type"] == "image" && r["content"][0]["mimeType"] == "image/png",
                || r.to_string(),
            )
        }),
        ("test_audio_content", json!({}), |r| {
            expect(
                r["content"][0]["type"] == "audio" && r["content"][0]["mimeType"] == "audio/wav",
                || r.to_string(),
            )
        }),
        ("test_embedded_resource", json!({}), |r| {
            expect(
                r["content"][0]["resource"]["uri"] == "test://embedded-resource",
                || r.to_string(),
            )
        }),
        ("test_multiple_content_types", json!({}), |r| {
            let types: Vec<&str> = r["content"]
                .as_array()
                .map(|a| a.iter().filter_map(|c| c["type"].as_str()).collect())
                .unwrap_or_default();
            expect(types == ["text", "image", "resource"], || r.to_string())
        }),
        ("test_structured_content", json!({"city": "Paris"}), |r| {
            expect(
                r["structuredContent"]
                    == json!({"city": "Paris", "temperature_c": 21.5, "conditions": "sunny"}),
                || r.to_string(),
            )
        }),
        ("test_resource_link", json!({}), |r| {
            expect(
                r["content"][1]["type"] == "resource_link"
                    && r["content"][1]["uri"] == "test://static-text",
                || r.to_string(),
            )
        }),
        ("test_error_handling", json!({}), |r| {
            expect(
                r["isError"] == true
                    && text_of(r, 0) == "This tool intentionally returns an error for testing",
                || r.to_string(),
            )
        }),
        (
            "json_schema_2020_12_tool",
            json!({"name": "Ada", "contactMethod": "email", "email": "ada@example.com", "address": {"street": "1 Loop Road", "city": "Localhost"}}),
            |r| expect(text_of(r, 0).contains("Ada"), || r.to_string()),
        ),
        ("greet", json!({"name": "rmcp"}), |r| {
            expect(text_of(r, 0) == "Hello, rmcp!", || r.to_string())
        }),
        (
            "test_custom_header_routing",
            json!({"region": "eu-west-1"}),
            |r| {
                expect(text_of(r, 0) == "Routed to region eu-west-1", || {
                    r.to_string()
                })
            },
        ),
        ("test_reconnection", json!({}), |r| {
            expect(!text_of(r, 0).is_empty(), || r.to_string())
        }),
        (
            "test_sampling",
            json!({"prompt": "Test prompt for sampling"}),
            |r| {
                expect(text_of(r, 0) == format!("LLM response: {SAMPLED}"), || {
                    r.to_string()
                })
            },
        ),
        (
            "test_elicitation",
            json!({"message": "Please provide your information"}),
            |r| {
                expect(
                    text_of(r, 0).starts_with("User response: action=accept")
                        && text_of(r, 0).contains("testuser"),
                    || r.to_string(),
                )
            },
        ),
        ("test_elicitation_sep1034_defaults", json!({}), |r| {
            expect(
                text_of(r, 0).starts_with("Elicitation completed: action=accept")
                    && text_of(r, 0).contains("John Doe"),
                || r.to_string(),
            )
        }),
        ("test_elicitation_sep1330_enums", json!({}), |r| {
            expect(
                text_of(r, 0).starts_with("Elicitation completed: action=accept")
                    && text_of(r, 0).contains("value1"),
                || r.to_string(),
            )
        }),
        (
            "test_input_required_result_multiple_inputs",
            json!({}),
            |r| {
                expect(r["isError"] != true && !text_of(r, 0).is_empty(), || {
                    r.to_string()
                })
            },
        ),
        ("test_input_required_result_multi_round", json!({}), |r| {
            expect(r["isError"] != true && !text_of(r, 0).is_empty(), || {
                r.to_string()
            })
        }),
        ("test_input_required_result_list_roots", json!({}), |r| {
            expect(text_of(r, 0).contains(ROOT), || r.to_string())
        }),
    ];
    for (name, args, check) in simple {
        if let Some(why) = not_before(name, &rev) {
            println!("  skip {name}: {why}");
            continue;
        }
        if !tool_names.iter().any(|n| n == name) {
            println!("  skip {name}: not listed");
            continue;
        }
        let before = {
            let r = probe.rec();
            (r.sampling.len(), r.elicitation.len())
        };
        t.step(&format!("tools/call {name}"), async {
            let r = call(&client, name, args.clone()).await?;
            check(&r)?;
            let after = {
                let r = probe.rec();
                (r.sampling.len(), r.elicitation.len())
            };
            let mut detail = text_of(&r, 0).chars().take(70).collect::<String>();
            if after != before {
                detail.push_str(&format!(
                    " [sampling {}, elicitation {}]",
                    after.0 - before.0,
                    after.1 - before.1
                ));
            }
            Ok(detail)
        })
        .await;
    }

    t.step(
        "tools/call test_tool_with_logging (3 log notifications)",
        async {
            let n0 = probe.rec().logs.len();
            // 2026-07-28: a request opts in to log messages with _meta logLevel (no logging/setLevel)
            let p: CallToolRequestParams =
                from_json(json!({"name": "test_tool_with_logging", "arguments": {},
            "_meta": {"io.modelcontextprotocol/logLevel": "debug"}}));
            let r = client.call_tool(p).await.map_err(|e| format!("{e:?}"))?;
            let r = serde_json::to_value(&r).map_err(err)?;
            // notifications are handled on their own task: the last one may trail the response a little
            for _ in 0..50 {
                if probe.rec().logs.len() >= n0 + 3 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let logs: Vec<(String, Value)> = probe.rec().logs[n0..].to_vec();
            let datas: Vec<&Value> = logs.iter().map(|l| &l.1).collect();
            expect(
                datas
                    == [
                        &json!("Tool execution started"),
                        &json!("Tool processing data"),
                        &json!("Tool execution completed"),
                    ],
                || format!("logs {logs:?}"),
            )?;
            Ok(text_of(&r, 0))
        },
    )
    .await;

    t.step(
        "tools/call test_tool_with_progress (0, 50, 100 of 100)",
        async {
            let n0 = probe.rec().progress.len();
            let r = call(&client, "test_tool_with_progress", json!({})).await?;
            for _ in 0..50 {
                if probe.rec().progress.len() >= n0 + 3 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let got: Vec<(f64, Option<f64>)> = probe.rec().progress[n0..]
                .iter()
                .map(|p| (p.1, p.2))
                .collect();
            expect(
                got == [
                    (0.0, Some(100.0)),
                    (50.0, Some(100.0)),
                    (100.0, Some(100.0)),
                ],
                || format!("progress {got:?}"),
            )?;
            Ok(text_of(&r, 0))
        },
    )
    .await;

    // test_tick (EVERYTHING_CLOCK=manual): the first tick adds test_dynamic_tool
    if tool_names.iter().any(|n| n == "test_tick") {
        t.step(
            "tools/list_changed after test_tick, then test_dynamic_tool",
            async {
                let notified = probe.notify.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                let mut sub = if modern {
                    Some(
                        client
                            .listen(SubscriptionFilter::builder().tools_list_changed().build())
                            .await
                            .map_err(|e| format!("listen: {e:?}"))?,
                    )
                } else {
                    None
                };
                call(&client, "test_tick", json!({})).await?;
                match sub.as_mut() {
                    Some(s) => match tokio::time::timeout(Duration::from_secs(5), s.next()).await {
                        Ok(Ok(Some(ServerNotification::ToolListChangedNotification(_)))) => {}
                        other => return Err(format!("listen stream gave {other:?}")),
                    },
                    None => {
                        if probe.rec().tools_changed == 0 {
                            tokio::time::timeout(Duration::from_secs(5), notified)
                                .await
                                .map_err(|_| {
                                    "no notifications/tools/list_changed within 5 s".to_owned()
                                })?;
                        }
                    }
                }
                if let Some(s) = sub.as_mut() {
                    s.cancel()
                        .await
                        .map_err(|e| format!("cancel listen: {e:?}"))?;
                }
                let all = client
                    .list_all_tools()
                    .await
                    .map_err(|e| format!("{e:?}"))?;
                expect(all.iter().any(|t| t.name == "test_dynamic_tool"), || {
                    "test_dynamic_tool not listed".to_owned()
                })?;
                let r = call(&client, "test_dynamic_tool", json!({})).await?;
                Ok(text_of(&r, 0))
            },
        )
        .await;
    }

    // cancellation of a long call
    if tool_names.iter().any(|n| n == "slow_compute") {
        t.step("cancel slow_compute (30 s) after 300 ms", async {
            let req = ClientRequest::CallToolRequest(CallToolRequest::new(params(
                "slow_compute",
                json!({"seconds": 30, "label": "cancelled"}),
            )));
            let handle = client
                .send_cancellable_request(req, PeerRequestOptions::no_options())
                .await
                .map_err(|e| format!("{e:?}"))?;
            tokio::time::sleep(Duration::from_millis(300)).await;
            handle
                .cancel(Some("interop probe".into()))
                .await
                .map_err(|e| format!("{e:?}"))?;
            let r = call(&client, "greet", json!({"name": "after cancel"})).await?;
            expect(text_of(&r, 0) == "Hello, after cancel!", || r.to_string())?;
            Ok("connection goes on".into())
        })
        .await;
    }

    // 2026-07-28 tasks extension (SEP-2663): declared for these requests only, through the
    // per-request client capabilities; slow_compute runs as a task when the client can follow
    if modern && tool_names.iter().any(|n| n == "slow_compute") {
        t.step(
            "tasks: slow_compute (0.3 s) as a task, tasks/get until completed",
            async {
                let id = start_task(&client, 0.3).await?;
                for _ in 0..100 {
                    let v = get_task(&client, &id).await?;
                    match v["status"].as_str() {
                        Some("completed") => {
                            let text = text_of(&v["result"], 0);
                            expect(text == "computed task after 0.3s", || v.to_string())?;
                            return Ok(format!("{id}: {text}"));
                        }
                        Some("working") => {
                            let ms = v["pollIntervalMs"].as_u64().unwrap_or(100).min(500);
                            tokio::time::sleep(Duration::from_millis(ms)).await;
                        }
                        _ => return Err(v.to_string()),
                    }
                }
                Err("still working after 100 polls".into())
            },
        )
        .await;
        t.step("tasks: tasks/cancel of a 30 s slow_compute task", async {
            let id = start_task(&client, 30.0).await?;
            let c = ClientRequest::CancelTaskRequest(CancelTaskRequest::new(from_json(
                json!({"taskId": id}),
            )));
            client
                .send_request_with_option(c, task_options())
                .await
                .map_err(|e| format!("{e:?}"))?
                .await_response()
                .await
                .map_err(|e| format!("tasks/cancel: {e:?}"))?;
            for _ in 0..50 {
                let v = get_task(&client, &id).await?;
                match v["status"].as_str() {
                    Some("cancelled") => return Ok(format!("{id} cancelled")),
                    Some("working") => tokio::time::sleep(Duration::from_millis(50)).await,
                    _ => return Err(v.to_string()),
                }
            }
            Err("not cancelled after 50 polls".into())
        })
        .await;
    }

    // resources
    let mut uris: Vec<String> = Vec::new();
    t.step("resources/list", async {
        let all = client
            .list_all_resources()
            .await
            .map_err(|e| format!("{e:?}"))?;
        uris = all.iter().map(|r| r.uri.clone()).collect();
        for u in [
            "test://static-text",
            "test://static-binary",
            "test://watched-resource",
        ] {
            expect(uris.iter().any(|x| x == u), || {
                format!("{u} not listed in {uris:?}")
            })?;
        }
        Ok(format!("{} resources", uris.len()))
    })
    .await;
    t.step("resources/templates/list", async {
        let all = client
            .list_all_resource_templates()
            .await
            .map_err(|e| format!("{e:?}"))?;
        let names: Vec<&str> = all.iter().map(|r| r.uri_template.as_str()).collect();
        expect(names.contains(&"test://template/{id}/data"), || {
            format!("{names:?}")
        })?;
        Ok(format!("{} templates", names.len()))
    })
    .await;
    let mut reads = uris.clone();
    reads.push("test://template/123/data".into());
    for uri in &reads {
        t.step(&format!("resources/read {uri}"), async {
            let r = client
                .read_resource(ReadResourceRequestParams::new(uri.clone()))
                .await
                .map_err(|e| format!("{e:?}"))?;
            let v = serde_json::to_value(&r).map_err(err)?;
            let c = &v["contents"][0];
            expect(c["uri"] == json!(uri), || v.to_string())?;
            match uri.as_str() {
                "test://static-text" => expect(
                    c["text"] == "This is the content of the static text resource.",
                    || v.to_string(),
                )?,
                "test://static-binary" => expect(
                    c["blob"].as_str().is_some_and(|b| b.starts_with("iVBOR")),
                    || v.to_string(),
                )?,
                "test://template/123/data" => expect(
                    c["text"].as_str().is_some_and(|b| b.contains("123")),
                    || v.to_string(),
                )?,
                _ => {}
            }
            Ok(format!(
                "{} content(s)",
                v["contents"].as_array().map_or(0, Vec::len)
            ))
        })
        .await;
    }

    // prompts
    let mut prompt_names: Vec<String> = Vec::new();
    t.step("prompts/list", async {
        let all = client
            .list_all_prompts()
            .await
            .map_err(|e| format!("{e:?}"))?;
        prompt_names = all.iter().map(|p| p.name.clone()).collect();
        Ok(format!("{prompt_names:?}"))
    })
    .await;
    for name in &prompt_names {
        if let Some(why) = not_before(name, &rev) {
            println!("  skip prompts/get {name}: {why}");
            continue;
        }
        let args = match name.as_str() {
            "test_prompt_with_arguments" => json!({"arg1": "testValue1", "arg2": "testValue2"}),
            "test_prompt_with_embedded_resource" => {
                json!({"resourceUri": "test://example-resource"})
            }
            _ => json!({}),
        };
        t.step(&format!("prompts/get {name}"), async {
            let p: GetPromptRequestParams = from_json(json!({"name": name, "arguments": args}));
            let r = client.get_prompt(p).await.map_err(|e| format!("{e:?}"))?;
            let v = serde_json::to_value(&r).map_err(err)?;
            let msgs = v["messages"].as_array().cloned().unwrap_or_default();
            expect(!msgs.is_empty(), || v.to_string())?;
            if name == "test_prompt_with_arguments" {
                expect(
                    msgs[0]["content"]["text"]
                        == "Prompt with arguments: arg1='testValue1', arg2='testValue2'",
                    || v.to_string(),
                )?;
            }
            if name == "test_prompt_with_embedded_resource" {
                expect(
                    msgs[0]["content"]["resource"]["uri"] == "test://example-resource",
                    || v.to_string(),
                )?;
            }
            Ok(format!("{} message(s)", msgs.len()))
        })
        .await;
    }

    // completion
    if caps.get("completions").is_some() {
        t.step("completion/complete ref/prompt", async {
            let p = CompleteRequestParams::new(
                Reference::for_prompt("test_prompt_with_arguments"),
                ArgumentInfo::new("arg1", "test"),
            );
            let r = client.complete(p).await.map_err(|e| format!("{e:?}"))?;
            Ok(format!("{:?}", r.completion.values))
        })
        .await;
        t.step("completion/complete ref/resource", async {
            let p = CompleteRequestParams::new(
                Reference::for_resource("test://template/{id}/data"),
                ArgumentInfo::new("id", "1"),
            );
            let r = client.complete(p).await.map_err(|e| format!("{e:?}"))?;
            Ok(format!("{:?}", r.completion.values))
        })
        .await;
    }

    // resource updates: subscribe (legacy) or listen (2026-07-28), then a tick changes it
    let watched = "test://watched-resource";
    let subscribable = caps["resources"]["subscribe"] == true || modern;
    if subscribable && tool_names.iter().any(|n| n == "test_tick") {
        t.step(&format!("resource update for {watched}"), async {
            let notified = probe.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let n0 = probe.rec().updated.len();
            if modern {
                let mut sub = client
                    .listen(
                        SubscriptionFilter::builder()
                            .resource_subscription(watched)
                            .build(),
                    )
                    .await
                    .map_err(|e| format!("listen: {e:?}"))?;
                call(&client, "test_tick", json!({})).await?;
                let got = tokio::time::timeout(Duration::from_secs(5), sub.next()).await;
                sub.cancel()
                    .await
                    .map_err(|e| format!("cancel listen: {e:?}"))?;
                match got {
                    Ok(Ok(Some(ServerNotification::ResourceUpdatedNotification(n))))
                        if n.params.uri == watched =>
                    {
                        Ok("via subscriptions/listen".into())
                    }
                    other => Err(format!("listen stream gave {other:?}")),
                }
            } else {
                client
                    .subscribe(SubscribeRequestParams::new(watched))
                    .await
                    .map_err(|e| format!("subscribe: {e:?}"))?;
                call(&client, "test_tick", json!({})).await?;
                if probe.rec().updated.len() == n0 {
                    tokio::time::timeout(Duration::from_secs(5), notified)
                        .await
                        .map_err(|_| "no notifications/resources/updated within 5 s".to_owned())?;
                }
                client
                    .unsubscribe(UnsubscribeRequestParams::new(watched))
                    .await
                    .map_err(|e| format!("unsubscribe: {e:?}"))?;
                let got = probe.rec().updated[n0..].to_vec();
                expect(got.iter().all(|u| u == watched), || format!("{got:?}"))?;
                Ok("via resources/subscribe".into())
            }
        })
        .await;
    }

    // errors: an unknown tool and an unknown prompt are -32602 (InvalidParamsError), an
    // unknown resource -32602 in 2026-07-28 (2025-11-25 suggests -32002), bad tool arguments
    // a tool result with isError
    t.step("tools/call unknown tool -> -32602", async {
        match client.call_tool(params("no_such_tool", json!({}))).await {
            Err(rmcp::ServiceError::McpError(e)) if e.code.0 == -32602 => Ok(e.message.to_string()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    // SEP-1303 (2025-11-25) made bad arguments a tool error; before, a -32602
    t.step(
        "tools/call greet with bad arguments -> isError (-32602 before 2025-11-25)",
        async {
            match client.call_tool(params("greet", json!({"name": 7}))).await {
                Ok(r) if since("2025-11-25") => {
                    let r = serde_json::to_value(&r).map_err(err)?;
                    expect(r["isError"] == true, || r.to_string())?;
                    Ok(text_of(&r, 0))
                }
                Err(rmcp::ServiceError::McpError(e))
                    if !since("2025-11-25") && e.code.0 == -32602 =>
                {
                    Ok(e.message.to_string())
                }
                other => Err(format!("{other:?}")),
            }
        },
    )
    .await;
    t.step("prompts/get unknown prompt -> -32602", async {
        let p: GetPromptRequestParams = from_json(json!({"name": "no_such_prompt"}));
        match client.get_prompt(p).await {
            Err(rmcp::ServiceError::McpError(e)) if e.code.0 == -32602 => Ok(e.message.to_string()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    t.step("resources/read unknown uri -> error", async {
        match client
            .read_resource(ReadResourceRequestParams::new("test://no-such-resource"))
            .await
        {
            Err(rmcp::ServiceError::McpError(e)) if [-32602, -32002].contains(&e.code.0) => {
                Ok(format!("{}: {}", e.code.0, e.message))
            }
            other => Err(format!("{other:?}")),
        }
    })
    .await;

    t.step("ping at the end", ping(&client, modern)).await;

    let rec_summary = {
        let r = probe.rec();
        format!(
            "sampling {}, elicitation {}, roots {}, logs {}, progress {}",
            r.sampling.len(),
            r.elicitation.len(),
            r.roots,
            r.logs.len(),
            r.progress.len()
        )
    };
    match tokio::time::timeout(Duration::from_secs(10), client.cancel()).await {
        Ok(Ok(reason)) => println!("  closed: {reason:?}"),
        Ok(Err(e)) => println!("  close: join error {e}"),
        Err(_) => println!("  close: timed out"),
    }
    println!(
        "handler saw: {rec_summary}; {:.1} s",
        started.elapsed().as_secs_f64()
    );
    println!(
        "rmcp client tour ({mode}, {}): {} ok, {} failed",
        if http.is_some() { "http" } else { "stdio" },
        t.ok,
        t.failed.len()
    );
    if t.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
