//! `mcp-client` against the `everything` server over real pipes, in both eras: every tool,
//! resource and prompt, completion, sampling and elicitation through the registered handlers
//! (legacy: real server-to-client requests; 2026-07-28: the `input_required` retry loop),
//! progress, cancellation, subscriptions, and servers that die.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_client::{
    CallOptions, CancelHandle, Client, ClientBuilder, Closed, Error, LoggingLevel, Revision,
    StdioTransport,
};
use mcp_core::types::{CallToolResult, ContentBlock, CreateMessageResult, SubscriptionFilter};
use mcp_core::version::{Era, ProtocolVersion};
use mcp_stdio::ChildBuilder;
use serde_json::{Value, json};

const EVERYTHING: &str = env!("CARGO_BIN_EXE_everything");
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
const FIXTURE_TOOLS: [&str; 14] = [
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "test_reconnection",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
];
const PINNED: [Revision; 2] = [Revision::Legacy, Revision::Modern];

fn server() -> ChildBuilder {
    ChildBuilder::new(EVERYTHING).env("RUST_LOG", "error")
}

mod client_support;
use client_support::{Asked, builder as recording_builder, notification_sink, wait_notification};

fn builder(revision: Revision, asked: &Asked) -> ClientBuilder {
    recording_builder("client-stdio-tests", revision, asked)
}

fn connect(revision: Revision) -> (Client, Asked) {
    let asked = Asked::default();
    let client = builder(revision, &asked)
        .spawn(server())
        .expect("connects to everything");
    (client, asked)
}

fn content(r: &CallToolResult) -> Value {
    serde_json::to_value(&r.content).unwrap()
}

fn only_text(r: &CallToolResult) -> String {
    match r.content.as_slice() {
        [ContentBlock::Text(t)] => t.text.clone(),
        other => panic!("expected one text block, got {other:?}"),
    }
}

#[test]
fn handshake_in_every_mode() {
    for (revision, era, version) in [
        (Revision::Legacy, Era::Legacy, "2025-11-25"),
        (Revision::Modern, Era::Modern, "2026-07-28"),
        // everything is dual-era: auto goes modern.
        (Revision::Auto, Era::Modern, "2026-07-28"),
        (
            Revision::Exact(ProtocolVersion::V2025_06_18),
            Era::Legacy,
            "2025-06-18",
        ),
    ] {
        let (client, _) = connect(revision);
        assert_eq!(client.era(), era, "{revision:?}");
        assert_eq!(client.protocol_version().as_str(), version, "{revision:?}");
        assert_eq!(client.server_info().unwrap()["name"], "mcp-everything");
        assert_eq!(
            client.instructions(),
            Some("A test server that exercises every MCP feature.")
        );
        assert_eq!(client.server_capabilities()["tools"]["listChanged"], true);
        let status = client.close().unwrap().expect("a child process");
        assert!(status.success(), "{revision:?}: {status:?}");
    }
}

#[test]
fn every_tool_in_both_eras() {
    for revision in PINNED {
        let (client, asked) = connect(revision);
        let tools: Vec<_> = client
            .list_tools()
            .collect::<Result<_, _>>()
            .expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(&names[..14], &FIXTURE_TOOLS[..], "{revision:?}");

        let call = |name: &str, args: Value| {
            client
                .call_tool(name, args)
                .unwrap_or_else(|e| panic!("{revision:?} {name}: {e}"))
        };
        let r = call("test_simple_text", Value::Null);
        assert_eq!(only_text(&r), "This is a simple text response for testing.");
        assert!(!r.is_error());
        let r = call("test_image_content", json!({}));
        assert_eq!(
            content(&r),
            json!([{"type": "image", "data": PNG, "mimeType": "image/png"}])
        );
        let r = call("test_audio_content", json!({}));
        assert_eq!(
            content(&r),
            json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}])
        );
        let r = call("test_embedded_resource", json!({}));
        assert_eq!(
            content(&r),
            json!([{"type": "resource", "resource": {"uri": "test://embedded-resource",
                "mimeType": "text/plain", "text": "This is an embedded resource content."}}])
        );
        let r = call("test_multiple_content_types", json!({}));
        let c = content(&r);
        let kinds: Vec<&str> = c
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["text", "image", "resource"]);
        let r = call("test_error_handling", json!({}));
        assert!(r.is_error(), "{revision:?}");
        assert_eq!(
            only_text(&r),
            "This tool intentionally returns an error for testing"
        );
        let r = call("test_reconnection", json!({}));
        assert!(only_text(&r).starts_with("Reconnection test completed successfully"));
        let forecast = json!({"city": "Paris", "temperature_c": 21.5, "conditions": "sunny"});
        let r = call("test_structured_content", json!({"city": "Paris"}));
        assert_eq!(r.structured_content, Some(forecast.clone()), "{revision:?}");
        let text: Value = serde_json::from_str(&only_text(&r)).unwrap();
        assert_eq!(text, forecast, "the same JSON as text for older clients");
        let listed = tools.iter().find(|t| t.name == "test_structured_content");
        let out = listed.and_then(|t| t.output_schema.as_ref());
        assert_eq!(
            out.map(|s| &s["required"]),
            Some(&json!(["city", "temperature_c", "conditions"]))
        );
        let r = call("test_tool_with_logging", json!({}));
        assert_eq!(only_text(&r), "Tool with logging executed successfully");
        let r = call("test_tool_with_progress", json!({}));
        assert_eq!(only_text(&r), "Progress test completed");
        let r = call(
            "json_schema_2020_12_tool",
            json!({"name": "n", "email": "e"}),
        );
        assert_eq!(
            only_text(&r),
            r#"JSON Schema 2020-12 tool called with: {"email":"e","name":"n"}"#
        );

        // The server asks the client: legacy as JSON-RPC requests, modern as input_required.
        let r = call("test_sampling", json!({"prompt": "Test prompt"}));
        assert_eq!(
            only_text(&r),
            "LLM response: This is a test response from the client"
        );
        let r = call("test_elicitation", json!({"message": "Who are you?"}));
        assert_eq!(
            only_text(&r),
            r#"User response: action=accept, content={"email":"email-value","username":"username-value"}"#,
            "{revision:?}"
        );
        let r = call("test_elicitation_sep1034_defaults", json!({}));
        assert_eq!(
            only_text(&r),
            r#"Elicitation completed: action=accept, content={"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}"#,
            "{revision:?}"
        );
        let r = call("test_elicitation_sep1330_enums", json!({}));
        assert!(
            only_text(&r).starts_with("Elicitation completed: action=accept"),
            "{revision:?}"
        );
        let asked = asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 4, "{revision:?}: {asked:?}");
        assert!(asked[0].starts_with("sampling ") && asked[0].contains("Test prompt"));
        assert_eq!(asked[1], "elicitation Who are you?");
        client.close().unwrap();
    }
}

#[test]
fn progress_callback_sees_0_50_100() {
    for revision in PINNED {
        let (client, _) = connect(revision);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        let options = CallOptions::new().on_progress(move |p| {
            s.lock()
                .unwrap()
                .push((p.progress, p.total, p.message.clone()));
        });
        let r = client
            .call_tool_with("test_tool_with_progress", json!({}), &options)
            .unwrap();
        assert_eq!(only_text(&r), "Progress test completed");
        let seen = seen.lock().unwrap().clone();
        let steps: Vec<f64> = seen.iter().map(|s| s.0).collect();
        assert_eq!(steps, [0.0, 50.0, 100.0], "{revision:?}");
        assert!(seen.iter().all(|s| s.1 == Some(100.0)));
        assert_eq!(seen[1].2.as_deref(), Some("Completed step 50 of 100"));
    }
}

#[test]
fn cancel_handle_stops_a_call_in_flight() {
    for revision in PINNED {
        let (client, _) = connect(revision);
        let handle = CancelHandle::new();
        let h = handle.clone();
        // Cancel as soon as the tool reports its first step: the call is surely running.
        let options = CallOptions::new()
            .cancel_handle(handle.clone())
            .on_progress(move |_| h.cancel());
        let started = Instant::now();
        let e = client
            .call_tool_with("test_tool_with_progress", json!({}), &options)
            .unwrap_err();
        assert!(matches!(e, Error::Cancelled), "{revision:?}: {e}");
        assert!(handle.is_cancelled());
        assert!(started.elapsed() < Duration::from_secs(5));
        // The connection is fine afterwards.
        let r = client.call_tool("test_simple_text", json!({})).unwrap();
        assert_eq!(only_text(&r), "This is a simple text response for testing.");
    }
}

#[test]
fn resources_prompts_and_completion_in_both_eras() {
    for revision in PINNED {
        let (client, _) = connect(revision);
        let resources: Vec<_> = client.list_resources().collect::<Result<_, _>>().unwrap();
        let mut uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
        // The fixture skills' SKILL.md come last (the skills tests read them).
        assert_eq!(
            uris,
            [
                "test://static-text",
                "test://static-binary",
                "test://watched-resource",
                "skill://acme/billing/refunds/SKILL.md",
                "skill://pdf-processing/SKILL.md"
            ]
        );
        uris.truncate(3);
        let mut read = Vec::new();
        for uri in &uris {
            let r = client.read_resource(uri).unwrap();
            read.push(serde_json::to_value(&r.contents).unwrap());
        }
        assert_eq!(
            read,
            [
                json!([{"uri": "test://static-text", "mimeType": "text/plain",
                    "text": "This is the content of the static text resource."}]),
                json!([{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}]),
                json!([{"uri": "test://watched-resource", "mimeType": "text/plain",
                    "text": "Watched resource content"}]),
            ],
            "{revision:?}"
        );
        let templates: Vec<_> = client
            .list_resource_templates()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(templates.len(), 1);
        assert_eq!(templates[0].uri_template, "test://template/{id}/data");
        let r = client.read_resource("test://template/42/data").unwrap();
        let c = serde_json::to_value(&r.contents).unwrap();
        let body: Value = serde_json::from_str(c[0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"id": "42", "templateTest": true, "data": "Data for ID: 42"})
        );
        let e = client.read_resource("test://nope").unwrap_err();
        assert!(matches!(&e, Error::Rpc(_)), "{e}");

        let prompts: Vec<_> = client.list_prompts().collect::<Result<_, _>>().unwrap();
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "test_simple_prompt",
                "test_prompt_with_arguments",
                "test_prompt_with_embedded_resource",
                "test_prompt_with_image",
                "test_input_required_result_prompt"
            ]
        );
        let text = |v: &Value| v["content"]["text"].as_str().unwrap_or("").to_owned();
        let p = client
            .get_prompt("test_simple_prompt", mcp_client::NO_ARGUMENTS)
            .unwrap();
        let m = serde_json::to_value(&p.messages).unwrap();
        assert_eq!(text(&m[0]), "This is a simple prompt for testing.");
        let p = client
            .get_prompt(
                "test_prompt_with_arguments",
                [("arg1", "hello"), ("arg2", "world")],
            )
            .unwrap();
        let m = serde_json::to_value(&p.messages).unwrap();
        assert_eq!(
            text(&m[0]),
            "Prompt with arguments: arg1='hello', arg2='world'"
        );
        let p = client
            .get_prompt(
                "test_prompt_with_embedded_resource",
                [("resourceUri", "test://x")],
            )
            .unwrap();
        let m = serde_json::to_value(&p.messages).unwrap();
        assert_eq!(m[0]["content"]["resource"]["uri"], "test://x");
        assert_eq!(text(&m[1]), "Please process the embedded resource above.");
        let p = client
            .get_prompt("test_prompt_with_image", mcp_client::NO_ARGUMENTS)
            .unwrap();
        let m = serde_json::to_value(&p.messages).unwrap();
        assert_eq!(m[0]["content"]["data"], PNG);

        let c = client
            .complete_prompt_argument("test_prompt_with_arguments", "arg1", "test")
            .unwrap();
        assert_eq!(c.completion.values, ["test", "testValue1"]);
        let c = client
            .complete_resource_argument("test://template/{id}/data", "id", "1")
            .unwrap();
        assert_eq!(c.completion.values, ["1", "123"]);
    }
}

#[test]
fn legacy_subscribe_delivers_watched_resource_updates() {
    let (sink, rx) = notification_sink();
    let client = Client::builder()
        .revision(Revision::Legacy)
        .on_notification(sink)
        .spawn(server().env("EVERYTHING_CLOCK", "manual"))
        .unwrap();
    client.subscribe("test://watched-resource").unwrap();
    // The clock's second tick changes the watched resource.
    client.call_tool("test_tick", json!({})).unwrap();
    client.call_tool("test_tick", json!({})).unwrap();
    let n = wait_notification(&rx, Duration::from_secs(12), |n| {
        n.method == "notifications/resources/updated"
    });
    assert_eq!(n.params_value()["uri"], "test://watched-resource");
    client.unsubscribe("test://watched-resource").unwrap();
    client.ping().unwrap();
}

#[test]
fn logging_level_in_both_eras() {
    for revision in PINNED {
        let (sink, rx) = notification_sink();
        let client = Client::builder()
            .revision(revision)
            .on_notification(sink)
            .spawn(server())
            .unwrap();
        client.set_logging_level(LoggingLevel::Info).unwrap();
        client
            .call_tool("test_tool_with_logging", json!({}))
            .unwrap();
        let mut data = Vec::new();
        while data.len() < 3 {
            let n = wait_notification(&rx, Duration::from_secs(10), |n| {
                n.method == "notifications/message"
            });
            data.push(n.params_value()["data"].clone());
        }
        assert_eq!(
            data,
            [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed"
            ],
            "{revision:?}"
        );
    }
}

#[test]
fn modern_listen_streams_list_changes_and_resource_updates() {
    let client = builder(Revision::Modern, &Asked::default())
        .spawn(server().env("EVERYTHING_CLOCK", "manual"))
        .expect("connects to everything");
    let mut sub = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            resource_subscriptions: Some(vec!["test://watched-resource".into()]),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(sub.acknowledged().tools_list_changed, Some(true));
    assert_eq!(
        sub.acknowledged().resource_subscriptions.as_deref(),
        Some(&["test://watched-resource".to_owned()][..])
    );
    // The clock's first tick adds a tool, the second changes the watched resource.
    client.call_tool("test_tick", json!({})).unwrap();
    client.call_tool("test_tick", json!({})).unwrap();
    let deadline = Instant::now() + Duration::from_secs(12);
    let (mut tools_changed, mut updated) = (false, false);
    while !(tools_changed && updated) {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "tools {tools_changed}, updated {updated}");
        let Some(n) = sub.next_timeout(left).unwrap() else {
            continue;
        };
        let p = n.params_value();
        assert_eq!(
            p["_meta"]["io.modelcontextprotocol/subscriptionId"],
            sub.id().to_value()
        );
        match n.method.as_str() {
            "notifications/tools/list_changed" => tools_changed = true,
            "notifications/resources/updated" => {
                assert_eq!(p["uri"], "test://watched-resource");
                updated = true;
            }
            other => panic!("unexpected {other}"),
        }
    }
    // The dynamic tool that was announced is there.
    let tools: Vec<_> = client.list_tools().collect::<Result<_, _>>().unwrap();
    assert!(tools.iter().any(|t| t.name == "test_dynamic_tool"));
    sub.close();
    let r = client.call_tool("test_dynamic_tool", json!({})).unwrap();
    assert_eq!(only_text(&r), "This tool was added at run time");
    // Legacy-only requests are refused locally in this era.
    assert!(matches!(
        client.subscribe("test://watched-resource"),
        Err(Error::Refused(_))
    ));
}

#[test]
fn a_server_killed_mid_call_fails_the_call_quickly() {
    for revision in PINNED {
        let transport = StdioTransport::spawn(server()).unwrap();
        let pid = transport.pid();
        // Killed while the call waits on the client (its sampling request), so the call
        // cannot finish first however slowly the kill comes.
        let client = Client::builder()
            .revision(revision)
            .sampling(move |_| {
                let status = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status()
                    .expect("kill runs");
                assert!(status.success());
                // An answer the dead server never reads (in 2026-07-28 the retried call
                // carries it).
                Ok(serde_json::from_value::<CreateMessageResult>(json!({
                    "role": "assistant", "model": "m", "stopReason": "endTurn",
                    "content": {"type": "text", "text": "too late"}
                }))
                .expect("a valid CreateMessageResult"))
            })
            .connect(transport)
            .unwrap();
        let started = Instant::now();
        let e = client
            .call_tool("test_sampling", json!({ "prompt": "anyone there?" }))
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5), "{revision:?}");
        let Error::Closed(why @ Closed::Exited { .. }) = &e else {
            panic!("{revision:?}: {e}")
        };
        assert!(why.to_string().contains('9'), "{revision:?}: {why}");
        assert!(client.is_closed());
        assert!(matches!(client.ping(), Err(Error::Closed(_))));
    }
}

#[test]
fn a_server_that_exits_after_the_handshake_fails_the_call_with_its_status() {
    // A legacy server in three lines of shell: answers initialize, reads the initialized
    // notification and the next request, and exits with status 3.
    let script = r#"read line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}'
read line; read line; exit 3"#;
    let client = Client::builder()
        .revision(Revision::Legacy)
        .spawn(ChildBuilder::new("sh").args(["-c", script]))
        .unwrap();
    assert_eq!(client.server_info().unwrap()["name"], "sh");
    let started = Instant::now();
    let e = client.call_tool("anything", json!({})).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    let Error::Closed(Closed::Exited { status, .. }) = &e else {
        panic!("{e}")
    };
    assert_eq!(status.code(), Some(3), "{e}");
}

#[test]
fn a_server_that_stops_reading_during_the_handshake_fails_it_at_its_deadline() {
    // Reads `initialize`, never reads again, and asks 20,000 pings: the answers fill its
    // input pipe and then the client's queue, and the handshake must still end at its own
    // deadline, not after the send timeout of a connected client (30 s).
    let script = r#"read line
i=0; while [ $i -lt 20000 ]; do printf '{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' $i; i=$((i+1)); done
exec sleep 60"#;
    let started = Instant::now();
    let e = Client::builder()
        .revision(Revision::Legacy)
        .handshake_timeout(Duration::from_secs(1))
        .spawn(ChildBuilder::new("sh").args(["-c", script]))
        .unwrap_err();
    // The deadline, then the child's shutdown (its grace, then a kill).
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(
            &e,
            Error::Closed(Closed::NotReading) | Error::Timeout { .. }
        ),
        "{e}"
    );
}

#[test]
fn a_server_that_dies_during_the_handshake_is_a_clear_error() {
    let e = Client::builder()
        .revision(Revision::Auto)
        .spawn(ChildBuilder::new("sh").args(["-c", "read line; exit 4"]))
        .unwrap_err();
    let Error::Closed(Closed::Exited { status, .. }) = &e else {
        panic!("{e}")
    };
    assert_eq!(status.code(), Some(4), "{e}");
    let e = Client::builder()
        .spawn(ChildBuilder::new("/nonexistent/mcp-server"))
        .unwrap_err();
    assert!(e.to_string().contains("/nonexistent/mcp-server"), "{e}");
}

#[test]
fn a_server_whose_output_outlives_it_is_noticed_when_it_exits() {
    // The server exits, but a process it started keeps its stdout open: no end of output
    // comes, and the handshake must not wait for its timeout (it waited 65 s) to notice.
    let started = Instant::now();
    let e = Client::builder()
        .revision(Revision::Legacy)
        .handshake_timeout(Duration::from_secs(20))
        .spawn(ChildBuilder::new("sh").args(["-c", "sleep 15 & exit 0"]))
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}: {e}",
        started.elapsed()
    );
    assert!(matches!(e, Error::Closed(_)), "{e}");
    assert!(e.to_string().contains("exited"), "{e}");
}

#[test]
fn close_stops_the_child_cleanly() {
    let (client, _) = connect(Revision::Auto);
    client.call_tool("test_simple_text", json!({})).unwrap();
    let started = Instant::now();
    let status = client.close().unwrap().expect("a child process");
    assert!(status.success(), "{status:?}");
    // Closing stdin is enough for everything: no SIGTERM grace period was needed.
    assert!(started.elapsed() < Duration::from_secs(2));
}
