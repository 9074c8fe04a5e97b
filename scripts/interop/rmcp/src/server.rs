//! A small rmcp server (hand-written `ServerHandler`, no macros) for our client's tour:
//! scripts/interop/fixtures/rmcp.json describes what it answers.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, LoggingLevel, LoggingMessageNotificationParam,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResponse, ResourceUpdatedNotificationParam, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};

const PAGE: usize = 4;

/// Open `subscriptions/listen` streams (2026-07-28). Global: over stateless HTTP each request
/// gets its own handler value.
static LISTENERS: Mutex<Vec<SubscriptionSink>> = Mutex::new(Vec::new());

fn modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version().is_some_and(|v| !v.has_initialize())
}

/// 2026-07-28: the client's answer to input request `key`, or an `input_required` result
/// asking for it (no server-to-client requests in that revision).
fn input(
    p: &CallToolRequestParams,
    key: &str,
    method: &str,
    params: Value,
) -> Result<Value, Value> {
    match p.input_responses.as_ref().and_then(|r| r.get(key)) {
        Some(v) => Ok(v.clone()),
        None => Err(json!({"resultType": "input_required",
            "inputRequests": {key: {"method": method, "params": params}}})),
    }
}

/// Returns early with the `input_required` result when the answer is not there yet.
macro_rules! ask {
    ($p:expr, $key:expr, $method:expr, $params:expr) => {
        match input($p, $key, $method, $params) {
            Ok(v) => v,
            Err(required) => return Ok(required),
        }
    };
}

#[derive(Clone, Default)]
struct Demo {
    level: Arc<Mutex<Option<LoggingLevel>>>,
}

fn from_json<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, ErrorData> {
    serde_json::from_value(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn text(t: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": t.into()}]})
}

fn tools() -> Vec<Value> {
    let obj = |props: Value, required: Value| json!({"type": "object", "properties": props, "required": required});
    vec![
        json!({"name": "echo", "description": "Echoes the text back, prefixed with 'Echo: '.",
               "inputSchema": obj(json!({"text": {"type": "string"}}), json!(["text"]))}),
        json!({"name": "add", "description": "Adds two integers (structured result).",
               "inputSchema": obj(json!({"a": {"type": "integer"}, "b": {"type": "integer"}}), json!(["a", "b"])),
               "outputSchema": obj(json!({"result": {"type": "integer"}}), json!(["result"]))}),
        json!({"name": "fail", "description": "Fails on purpose: a tool error, not a protocol error.",
               "inputSchema": {"type": "object", "properties": {}}}),
        json!({"name": "count", "description": "Reports progress `steps` times, then answers.",
               "inputSchema": obj(json!({"steps": {"type": "integer"}}), json!(["steps"]))}),
        json!({"name": "chatty", "description": "Sends two log messages (info, then warning) before answering.",
               "inputSchema": {"type": "object", "properties": {}}}),
        json!({"name": "greet_user", "description": "Asks the user for a name and an age (elicitation).",
               "inputSchema": {"type": "object", "properties": {}}}),
        json!({"name": "write", "description": "Asks the client's model to write about a topic (sampling).",
               "inputSchema": obj(json!({"topic": {"type": "string"}}), json!(["topic"]))}),
        json!({"name": "show_roots", "description": "Lists the client's roots.",
               "inputSchema": {"type": "object", "properties": {}}}),
        json!({"name": "wait", "description": "Reports progress every 50 ms for `seconds`, then answers (long enough to cancel).",
               "inputSchema": obj(json!({"seconds": {"type": "number"}}), json!(["seconds"]))}),
        json!({"name": "touch", "description": "Announces that rs://greeting changed (notifications/resources/updated).",
               "inputSchema": {"type": "object", "properties": {}}}),
    ]
}

impl Demo {
    async fn log(&self, ctx: &RequestContext<RoleServer>, level: LoggingLevel, data: &str) {
        let _ = ctx
            .peer
            .notify_logging_message(LoggingMessageNotificationParam::new(level, json!(data)))
            .await;
    }

    async fn progress(&self, ctx: &RequestContext<RoleServer>, progress: f64, total: f64) {
        if let Some(token) = ctx.meta.get_progress_token() {
            let p: ProgressNotificationParam = serde_json::from_value(json!({
                "progressToken": token, "progress": progress, "total": total
            }))
            .expect("progress params");
            let _ = ctx.peer.notify_progress(p).await;
        }
    }

    async fn call(
        &self,
        p: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let args = Value::Object(p.arguments.clone().unwrap_or_default());
        let bad = |m: &str| ErrorData::invalid_params(m.to_owned(), None);
        Ok(match p.name.as_ref() {
            "echo" => text(format!(
                "Echo: {}",
                args["text"].as_str().ok_or_else(|| bad("text"))?
            )),
            "add" => {
                let s = args["a"].as_i64().ok_or_else(|| bad("a"))?
                    + args["b"].as_i64().ok_or_else(|| bad("b"))?;
                json!({"content": [{"type": "text", "text": s.to_string()}], "structuredContent": {"result": s}})
            }
            "fail" => {
                json!({"content": [{"type": "text", "text": "this tool always fails"}], "isError": true})
            }
            "count" => {
                let n = args["steps"].as_u64().ok_or_else(|| bad("steps"))?;
                for i in 1..=n {
                    self.progress(&ctx, i as f64, n as f64).await;
                }
                text(format!("counted to {n}"))
            }
            "chatty" => {
                self.log(&ctx, LoggingLevel::Info, "chatty started").await;
                self.log(&ctx, LoggingLevel::Warning, "chatty is about to finish")
                    .await;
                text("said two things")
            }
            "greet_user" => {
                let params = json!({
                    "mode": "form",
                    "message": "Who are you?",
                    "requestedSchema": {"type": "object", "properties": {
                        "name": {"type": "string"}, "age": {"type": "integer"}}}
                });
                let r = if modern(&ctx) {
                    ask!(&p, "who", "elicitation/create", params)
                } else {
                    let r = ctx
                        .peer
                        .create_elicitation(from_json(params)?)
                        .await
                        .map_err(|e| {
                            ErrorData::internal_error(format!("elicitation: {e}"), None)
                        })?;
                    serde_json::to_value(&r).unwrap_or_default()
                };
                if r["action"] == "accept" {
                    text(format!(
                        "Hello {}, age {}",
                        r["content"]["name"].as_str().unwrap_or("?"),
                        r["content"]["age"]
                    ))
                } else {
                    text(format!("no answer: {}", r["action"]))
                }
            }
            "write" => {
                let topic = args["topic"].as_str().ok_or_else(|| bad("topic"))?;
                let params = json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": format!("Write about {topic}")}}],
                    "maxTokens": 50
                });
                let r = if modern(&ctx) {
                    ask!(&p, "model", "sampling/createMessage", params)
                } else {
                    let r = ctx
                        .peer
                        .create_message(from_json(params)?)
                        .await
                        .map_err(|e| ErrorData::internal_error(format!("sampling: {e}"), None))?;
                    serde_json::to_value(&r).unwrap_or_default()
                };
                text(format!(
                    "The model wrote: {}",
                    r["content"]["text"].as_str().unwrap_or("?")
                ))
            }
            "show_roots" => {
                let r = if modern(&ctx) {
                    ask!(&p, "roots", "roots/list", json!({}))
                } else {
                    let r = ctx
                        .peer
                        .list_roots()
                        .await
                        .map_err(|e| ErrorData::internal_error(format!("roots: {e}"), None))?;
                    serde_json::to_value(&r).unwrap_or_default()
                };
                let uris: Vec<&str> = r["roots"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r["uri"].as_str())
                    .collect();
                text(format!("roots: {}", uris.join(", ")))
            }
            "wait" => {
                let secs = args["seconds"].as_f64().ok_or_else(|| bad("seconds"))?;
                let steps = ((secs / 0.05) as u64).max(1);
                for i in 1..=steps {
                    self.progress(&ctx, i as f64, steps as f64).await;
                    tokio::select! {
                        _ = ctx.ct.cancelled() => return Err(ErrorData::internal_error("cancelled", None)),
                        _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                    }
                }
                text(format!("waited {secs} s"))
            }
            "touch" => {
                if modern(&ctx) {
                    let sinks: Vec<SubscriptionSink> =
                        LISTENERS.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    for sink in sinks {
                        let _ = sink.notify_resource_updated("rs://greeting").await;
                    }
                } else {
                    let _ = ctx
                        .peer
                        .notify_resource_updated(ResourceUpdatedNotificationParam::new(
                            "rs://greeting",
                        ))
                        .await;
                }
                text("touched rs://greeting")
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {other}"),
                    None,
                ));
            }
        })
    }
}

impl ServerHandler for Demo {
    fn get_info(&self) -> ServerConfig {
        serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "tools": {},
                "resources": {"subscribe": true},
                "prompts": {},
                "logging": {},
                "completions": {}
            },
            "serverInfo": {"name": "interop-rmcp", "version": "1.0.0"},
            "instructions": "An rmcp server for the interop tour."
        }))
        .expect("server info")
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let all = tools();
        let start: usize = request
            .and_then(|r| r.cursor)
            .map(|c| {
                c.parse()
                    .map_err(|_| ErrorData::invalid_params("bad cursor", None))
            })
            .transpose()?
            .unwrap_or(0);
        let end = (start + PAGE).min(all.len());
        let mut v = json!({"tools": all[start.min(all.len())..end]});
        if end < all.len() {
            v["nextCursor"] = json!(end.to_string());
        }
        from_json(v)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let v = self.call(request, context).await?;
        if v["resultType"] == "input_required" {
            return Ok(CallToolResponse::InputRequired(from_json(v)?));
        }
        Ok(CallToolResponse::Complete(from_json(v)?))
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        from_json(
            json!({"resources": [{"uri": "rs://greeting", "name": "greeting",
            "description": "A fixed greeting.", "mimeType": "text/plain"}]}),
        )
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        from_json(
            json!({"resourceTemplates": [{"uriTemplate": "rs://items/{item_id}", "name": "item",
            "description": "One item by id.", "mimeType": "application/json"}]}),
        )
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let v = if uri == "rs://greeting" {
            json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": "Hello from rmcp"}]})
        } else if let Some(id) = uri.strip_prefix("rs://items/") {
            let body = json!({"id": id, "rmcp": true}).to_string();
            json!({"contents": [{"uri": uri, "mimeType": "application/json", "text": body}]})
        } else {
            return Err(ErrorData::resource_not_found(
                format!("no resource {uri}"),
                None,
            ));
        };
        Ok(ReadResourceResponse::Complete(from_json(v)?))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        LISTENERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(context.sink().clone());
        context.cancelled().await;
        Ok(())
    }

    async fn subscribe(
        &self,
        _: SubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        from_json(
            json!({"prompts": [{"name": "greeting_prompt", "description": "A prompt to greet someone.",
            "arguments": [{"name": "name", "description": "Who", "required": true}]}]}),
        )
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "greeting_prompt" {
            return Err(ErrorData::invalid_params(
                format!("no prompt {}", request.name),
                None,
            ));
        }
        let name = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        Ok(GetPromptResponse::Complete(from_json(json!({
            "description": "A greeting",
            "messages": [{"role": "user", "content": {"type": "text", "text": format!("Please greet {name} warmly.")}}]
        }))?))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let prefix = request.argument.value.clone();
        let values: Vec<&str> = ["Ada", "Alan", "Grace"]
            .into_iter()
            .filter(|v| v.starts_with(&prefix))
            .collect();
        from_json(json!({"completion": {"values": values}}))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self.level.lock().unwrap_or_else(|e| e.into_inner()) = Some(request.level);
        Ok(())
    }
}

pub async fn run(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == "--http") {
        let flag = |f: &str| args.iter().any(|a| a == f);
        return http(flag("--stateless"), flag("--json"), flag("--strict")).await;
    }
    let service = match Demo::default().serve(rmcp::transport::stdio()).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rmcp server: {e:?}");
            return ExitCode::from(1);
        }
    };
    let _ = service.waiting().await;
    ExitCode::SUCCESS
}

/// `stateless`: no legacy sessions (every request on its own); `json`: plain JSON answers where
/// nothing is sent before the result (rmcp's `json_response`, stateless mode only); `strict`:
/// every stateless request must carry the `MCP-Protocol-Version` header and, but for
/// `server/discover`, the protocol version in `_meta` (rmcp's
/// `stateless_protocol_metadata_required`).
async fn http(stateless: bool, json: bool, strict: bool) -> ExitCode {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let service: StreamableHttpService<Demo, LocalSessionManager> = StreamableHttpService::new(
        || Ok(Demo::default()),
        Default::default(),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(!stateless)
            .with_json_response(json)
            .with_stateless_protocol_metadata_required(strict),
    );
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bind: {e}");
            return ExitCode::from(1);
        }
    };
    let addr = listener.local_addr().expect("local addr");
    eprintln!("listening on http://{addr}/mcp");
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let svc = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}
