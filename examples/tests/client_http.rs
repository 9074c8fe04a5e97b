//! `mcp-client` over Streamable HTTP against `everything --http 127.0.0.1:0`, in both eras:
//! the handshake in every mode, tools including sampling and elicitation (legacy: real server
//! requests on the SSE answer; 2026-07-28: the `input_required` retries), progress,
//! cancellation, logging, a legacy resource subscription whose updates come on the GET
//! stream, and a 2026-07-28 listen stream.

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_client::{CallOptions, CancelHandle, Client, ClientBuilder, Error, LoggingLevel, Revision};
use mcp_core::types::SubscriptionFilter;
use mcp_core::types::{CallToolResult, ContentBlock};
use mcp_core::version::{Era, ProtocolVersion};
use serde_json::{Value, json};

mod http_support;

const EVERYTHING: &str = env!("CARGO_BIN_EXE_everything");
const PINNED: [Revision; 2] = [Revision::Legacy, Revision::Modern];

/// `everything --http` on an ephemeral loopback port; killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start() -> Server {
        Server::start_with(&[])
    }

    /// With its background clock driven by the `test_tick` tool (`EVERYTHING_CLOCK=manual`):
    /// the first tick adds a tool, each later one changes `test://watched-resource`.
    fn start_manual_clock() -> Server {
        Server::spawn(&[], "manual")
    }

    /// `everything --http 127.0.0.1:0 EXTRA...`.
    fn start_with(extra: &[&str]) -> Server {
        Server::spawn(extra, "timers")
    }

    fn spawn(extra: &[&str], clock: &str) -> Server {
        let mut child = Command::new(EVERYTHING)
            .args(["--http", "127.0.0.1:0"])
            .args(extra)
            .env("RUST_LOG", "warn")
            .env("EVERYTHING_CLOCK", clock)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("everything starts");
        let url = http_support::listening_url(&mut child);
        Server { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

mod client_support;
use client_support::{Asked, builder as recording_builder, notification_sink, wait_notification};

fn builder(revision: Revision, asked: &Asked) -> ClientBuilder {
    recording_builder("client-http-tests", revision, asked)
}

fn connect(server: &Server, revision: Revision) -> (Client, Asked) {
    let asked = Asked::default();
    let client = builder(revision, &asked)
        .connect_http(&server.url)
        .unwrap_or_else(|e| panic!("{revision:?}: connects over HTTP: {e}"));
    (client, asked)
}

fn only_text(r: &CallToolResult) -> String {
    match r.content.as_slice() {
        [ContentBlock::Text(t)] => t.text.clone(),
        other => panic!("expected one text block, got {other:?}"),
    }
}

#[test]
fn a_url_without_the_endpoint_path_says_so() {
    let server = Server::start();
    let root = server.url.trim_end_matches("/mcp").to_owned() + "/";
    for revision in PINNED {
        let asked = Asked::default();
        let m = match builder(revision, &asked)
            .timeout(Duration::from_secs(10))
            .connect_http(&root)
        {
            Ok(_) => panic!("{revision:?}: no MCP endpoint at /"),
            Err(e) => e.to_string(),
        };
        assert!(
            m.contains("HTTP 404") && m.contains("/mcp"),
            "{revision:?}: {m}"
        );
    }
}

#[test]
fn handshake_in_every_mode() {
    let server = Server::start();
    for (revision, era, version) in [
        (Revision::Legacy, Era::Legacy, "2025-11-25"),
        (Revision::Modern, Era::Modern, "2026-07-28"),
        (Revision::Auto, Era::Modern, "2026-07-28"),
        (
            Revision::Exact(ProtocolVersion::V2025_06_18),
            Era::Legacy,
            "2025-06-18",
        ),
        (
            Revision::Exact(ProtocolVersion::V2025_03_26),
            Era::Legacy,
            "2025-03-26",
        ),
    ] {
        let (client, _) = connect(&server, revision);
        assert_eq!(client.era(), era, "{revision:?}");
        assert_eq!(client.protocol_version().as_str(), version, "{revision:?}");
        assert_eq!(client.server_info().unwrap()["name"], "mcp-everything");
        let r = client
            .call_tool("test_simple_text", json!({}))
            .unwrap_or_else(|e| panic!("{revision:?}: {e}"));
        assert_eq!(only_text(&r), "This is a simple text response for testing.");
        assert_eq!(client.close().unwrap(), None, "{revision:?}");
    }
}

#[test]
fn tools_sampling_and_elicitation_in_both_eras() {
    let server = Server::start();
    for revision in [Revision::Legacy, Revision::Modern, Revision::Auto] {
        let (client, asked) = connect(&server, revision);
        let tools: Vec<_> = client
            .list_tools()
            .collect::<Result<_, _>>()
            .expect("tools/list");
        assert!(tools.iter().any(|t| t.name == "test_simple_text"));
        let call = |name: &str, args: Value| {
            client
                .call_tool(name, args)
                .unwrap_or_else(|e| panic!("{revision:?} {name}: {e}"))
        };
        let r = call("test_simple_text", json!({}));
        assert_eq!(only_text(&r), "This is a simple text response for testing.");
        let r = call("test_error_handling", json!({}));
        assert!(r.is_error(), "{revision:?}");
        let r = call("test_sampling", json!({"prompt": "Test prompt"}));
        assert_eq!(
            only_text(&r),
            "LLM response: This is a test response from the client",
            "{revision:?}"
        );
        let r = call("test_elicitation", json!({"message": "Who are you?"}));
        assert_eq!(
            only_text(&r),
            r#"User response: action=accept, content={"email":"email-value","username":"username-value"}"#,
            "{revision:?}"
        );
        let asked = asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 2, "{revision:?}: {asked:?}");
        assert!(asked[0].starts_with("sampling ") && asked[0].contains("Test prompt"));
        assert_eq!(asked[1], "elicitation Who are you?");
        // Resources and prompts go through too (Mcp-Name carries the uri / name).
        let read = client
            .read_resource("test://static-text")
            .unwrap_or_else(|e| panic!("{revision:?}: {e}"));
        assert!(!read.contents.is_empty());
        client.close().unwrap();
    }
}

#[test]
fn progress_and_cancellation_in_both_eras() {
    let server = Server::start();
    for revision in PINNED {
        let (client, _) = connect(&server, revision);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        let options = CallOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
        let r = client
            .call_tool_with("test_tool_with_progress", json!({}), &options)
            .unwrap();
        assert_eq!(only_text(&r), "Progress test completed");
        assert_eq!(*seen.lock().unwrap(), [0.0, 50.0, 100.0], "{revision:?}");

        let handle = CancelHandle::new();
        let h = handle.clone();
        let options = CallOptions::new()
            .cancel_handle(handle.clone())
            .on_progress(move |_| h.cancel());
        let started = Instant::now();
        let e = client
            .call_tool_with("test_tool_with_progress", json!({}), &options)
            .unwrap_err();
        assert!(matches!(e, Error::Cancelled), "{revision:?}: {e}");
        assert!(started.elapsed() < Duration::from_secs(5));
        let r = client.call_tool("test_simple_text", json!({})).unwrap();
        assert_eq!(only_text(&r), "This is a simple text response for testing.");
        client.close().unwrap();
    }
}

#[test]
fn logging_in_both_eras() {
    let server = Server::start();
    for revision in PINNED {
        let (sink, rx) = notification_sink();
        let client = Client::builder()
            .revision(revision)
            .on_notification(sink)
            .connect_http(&server.url)
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
        client.close().unwrap();
    }
}

#[test]
fn legacy_resource_updates_arrive_on_the_get_stream() {
    let server = Server::start_manual_clock();
    let (sink, rx) = notification_sink();
    let client = Client::builder()
        .revision(Revision::Legacy)
        .on_notification(sink)
        .connect_http(&server.url)
        .unwrap();
    client.subscribe("test://watched-resource").unwrap();
    // The clock's second tick changes the watched resource.
    client.call_tool("test_tick", json!({})).unwrap();
    client.call_tool("test_tick", json!({})).unwrap();
    let n = wait_notification(&rx, Duration::from_secs(15), |n| {
        n.method == "notifications/resources/updated"
    });
    assert_eq!(n.params_value()["uri"], "test://watched-resource");
    client.unsubscribe("test://watched-resource").unwrap();
    client.close().unwrap();
}

#[test]
fn modern_listen_stream_over_http() {
    let server = Server::start_manual_clock();
    let (client, _) = connect(&server, Revision::Modern);
    let mut sub = client
        .listen(SubscriptionFilter {
            resource_subscriptions: Some(vec!["test://watched-resource".into()]),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        sub.acknowledged().resource_subscriptions.as_deref(),
        Some(&["test://watched-resource".to_owned()][..])
    );
    // The clock's second tick changes the watched resource.
    client.call_tool("test_tick", json!({})).unwrap();
    client.call_tool("test_tick", json!({})).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "no resource update on the listen stream");
        let Some(n) = sub.next_timeout(left).unwrap() else {
            continue;
        };
        if n.method == "notifications/resources/updated" {
            assert_eq!(n.params_value()["uri"], "test://watched-resource");
            break;
        }
    }
    sub.close();
    // Closing the listen stream left the connection usable.
    let r = client.call_tool("test_simple_text", json!({})).unwrap();
    assert_eq!(only_text(&r), "This is a simple text response for testing.");
    client.close().unwrap();
}

/// Runs the client CLI with `args`.
fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_client"))
        .args(args)
        .output()
        .expect("the client binary runs")
}

/// `client ARGS... call test_simple_text` succeeds with the tool's text.
fn cli_calls_simple_text(args: &[&str]) {
    let mut all = args.to_vec();
    all.extend(["call", "test_simple_text"]);
    let out = cli(&all);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(
        v["content"][0]["text"], "This is a simple text response for testing.",
        "{args:?}: {v}"
    );
}

#[test]
fn the_client_cli_takes_a_url() {
    let server = Server::start();
    for era in ["--legacy", "--modern"] {
        cli_calls_simple_text(&[era, &server.url]);
    }
}

#[test]
fn a_server_that_wants_a_bearer_token_and_the_cli_that_sends_it() {
    let server = Server::start_with(&["--bearer-token", "s3cret"]);
    for token in [None, Some("wrong")] {
        let mut args = vec![];
        if let Some(t) = token {
            args.extend(["--bearer", t]);
        }
        args.extend([server.url.as_str(), "tools"]);
        let out = cli(&args);
        assert!(!out.status.success(), "{token:?} got in");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("401"), "{token:?}: {err}");
    }
    for era in ["--legacy", "--modern"] {
        cli_calls_simple_text(&[era, "--bearer", "s3cret", &server.url]);
    }
}

#[test]
fn the_2024_11_05_http_sse_transport_through_its_endpoint_event() {
    let server = Server::start();
    let sse_url = server.url.replace("/mcp", "/sse");
    let asked = Asked::default();
    let client = builder(Revision::Exact(ProtocolVersion::V2024_11_05), &asked)
        .connect_http(&sse_url)
        .expect("connects over HTTP+SSE");
    assert_eq!(client.protocol_version().as_str(), "2024-11-05");
    let r = client
        .call_tool("test_sampling", json!({"prompt": "Old prompt"}))
        .unwrap();
    assert_eq!(
        only_text(&r),
        "LLM response: This is a test response from the client"
    );
    assert!(asked.lock().unwrap()[0].contains("Old prompt"));
    client.close().unwrap();
}

/// An in-process server on 127.0.0.1 that speaks only `versions`.
fn one_era_server(versions: mcp_core::version::VersionSet) -> mcp_http_blocking::ServerHandle {
    use mcp_server_kit::{Context, NoArgs, Server as KitServer, Tool};
    let kit = KitServer::builder("one-era", "1.0.0")
        .tool(Tool::new("hello", |_: NoArgs, _: &Context| {
            Ok::<_, mcp_server_kit::Error>("hello")
        }))
        .build()
        .expect("a server");
    mcp_http_blocking::HttpServer::builder()
        .bind("127.0.0.1:0")
        .config(
            mcp_http_blocking::HttpConfig::builder()
                .versions(versions)
                .build(),
        )
        .build(kit)
        .expect("binds")
        .spawn()
        .expect("runs")
}

#[test]
fn auto_falls_back_on_http_errors_from_a_legacy_only_server() {
    use mcp_core::version::VersionSet;
    for (versions, era) in [
        (VersionSet::legacy_only(), Era::Legacy),
        (VersionSet::modern_only(), Era::Modern),
    ] {
        let h = one_era_server(versions);
        let url = format!("http://{}/mcp", h.local_addr());
        let client = Client::builder()
            .revision(Revision::Auto)
            .connect_http(&url)
            .unwrap_or_else(|e| panic!("{era:?}: {e}"));
        assert_eq!(client.era(), era);
        let r = client.call_tool("hello", json!({})).unwrap();
        assert_eq!(only_text(&r), "hello");
        client.close().unwrap();
        // Pinned to the era the server lacks: a clear handshake error, at once.
        let other = match era {
            Era::Legacy => Revision::Modern,
            Era::Modern => Revision::Legacy,
        };
        let started = Instant::now();
        match Client::builder().revision(other).connect_http(&url) {
            Err(Error::Handshake(why)) => assert!(!why.to_string().is_empty()),
            Err(e) => panic!("{era:?}: {e}"),
            Ok(_) => panic!("{era:?}: {other:?} should not connect"),
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        h.shutdown();
    }
}

#[test]
fn a_stream_the_server_ends_early_is_resumed_with_the_answer() {
    // `test_reconnection` lets go of its HTTP stream before answering (SSE polling); a legacy
    // client reconnects with Last-Event-ID and gets the answer from the replay. In 2026-07-28
    // there is no resumption, so the server keeps the stream.
    let server = Server::start();
    for revision in [Revision::Legacy, Revision::Modern] {
        let (client, _) = connect(&server, revision);
        let r = client
            .call_tool("test_reconnection", json!({}))
            .unwrap_or_else(|e| panic!("{revision:?}: {e}"));
        assert!(
            only_text(&r).starts_with("Reconnection test completed successfully"),
            "{revision:?}"
        );
        let r = client.call_tool("test_simple_text", json!({})).unwrap();
        assert_eq!(only_text(&r), "This is a simple text response for testing.");
        client.close().unwrap();
    }
}
