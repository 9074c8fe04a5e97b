//! `mcp-client` and the tasks extension end to end, against the `everything` server's task
//! fixtures: over stdio (a call followed to its result, an input request answered by the
//! elicitation handler, a cancelled call that cancels the server's task, a failed task as a
//! typed error) and over Streamable HTTP (a handle used from a second connection, and the
//! `client` example's `call` and `task get|cancel`).

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use mcp_client::{CallOptions, CancelHandle, Client, Error, Revision, Started, TaskHandle};
use mcp_core::types::{CallToolResult, ContentBlock, ElicitResult, TaskStatus};
use mcp_stdio::ChildBuilder;
use serde_json::{Map, Value, json};

mod http_support;

const EVERYTHING: &str = env!("CARGO_BIN_EXE_everything");
const CLIENT: &str = env!("CARGO_BIN_EXE_client");

fn server() -> ChildBuilder {
    ChildBuilder::new(EVERYTHING).env("RUST_LOG", "error")
}

/// What the elicitation handler was asked, in order.
type Asked = Arc<Mutex<Vec<String>>>;

/// A 2026-07-28 client whose elicitation handler accepts every form with `true` for booleans
/// and `NAME-value` for the rest, recording the questions.
fn connect(asked: &Asked) -> Client {
    let a = Arc::clone(asked);
    Client::builder()
        .client_info("client-tasks-tests", "1.0.0")
        .revision(Revision::Modern)
        .elicitation(move |p| {
            let mcp_core::types::ElicitRequestParams::Form(form) = p else {
                panic!("URL mode was not declared");
            };
            a.lock().unwrap().push(form.message.clone());
            let mut content = Map::new();
            for (name, schema) in form.requested_schema.properties {
                let schema = serde_json::to_value(schema).unwrap_or_default();
                let value = if schema["type"] == "boolean" {
                    json!(true)
                } else {
                    json!(format!("{name}-value"))
                };
                content.insert(name, value);
            }
            Ok(ElicitResult::accept(content))
        })
        .spawn(server())
        .expect("connects to everything")
}

fn only_text(r: &CallToolResult) -> String {
    match r.content.as_slice() {
        [ContentBlock::Text(t)] => t.text.clone(),
        other => panic!("expected one text block, got {other:?}"),
    }
}

/// The task statuses a call went through, each with the task's handle.
type Statuses = Arc<Mutex<Vec<(TaskHandle, TaskStatus)>>>;

/// Options that record the task statuses a call went through.
fn recording() -> (CallOptions, Statuses) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let options = CallOptions::new()
        .on_task_status(move |h, t| s.lock().unwrap().push((h.clone(), t.status)));
    (options, seen)
}

#[test]
fn call_tool_follows_slow_compute_to_its_result() {
    let client = connect(&Asked::default());
    let (options, seen) = recording();
    let out = client
        .call_tool_with(
            "slow_compute",
            json!({"seconds": 0.3, "label": "pi"}),
            &options,
        )
        .unwrap();
    assert_eq!(only_text(&out), "computed pi after 0.3s");
    let seen = seen.lock().unwrap();
    // It ran as a task: the client saw it working, then completed.
    assert_eq!(seen.first().map(|s| s.1), Some(TaskStatus::Working));
    assert_eq!(seen.last().map(|s| s.1), Some(TaskStatus::Completed));
    assert!(seen[0].0.poll_interval_ms.is_some(), "{:?}", seen[0].0);
    drop(seen);
    client.close().unwrap();
}

#[test]
fn confirm_delete_asks_through_the_elicitation_handler() {
    let asked = Asked::default();
    let client = connect(&asked);
    let (options, seen) = recording();
    let out = client
        .call_tool_with("confirm_delete", json!({"filename": "a.txt"}), &options)
        .unwrap();
    assert_eq!(only_text(&out), "deleted a.txt");
    assert_eq!(*asked.lock().unwrap(), ["Delete a.txt?"]);
    let statuses: Vec<_> = seen.lock().unwrap().iter().map(|s| s.1).collect();
    assert!(
        statuses.contains(&TaskStatus::InputRequired),
        "the question came through the task: {statuses:?}"
    );

    // Two questions outstanding at once, and an input round before the task starts.
    let out = client.call_tool("multi_input", json!({})).unwrap();
    assert_eq!(only_text(&out), r#"name "name-value", confirm "true""#);
    let out = client.call_tool("test_tool_with_task", json!({})).unwrap();
    assert_eq!(only_text(&out), "Hello, name-value!");
    client.close().unwrap();
}

#[test]
fn cancelling_the_call_cancels_the_servers_task() {
    let client = connect(&Asked::default());
    let cancel = CancelHandle::new();
    let c = cancel.clone();
    let handle = Arc::new(Mutex::new(None));
    let h = Arc::clone(&handle);
    // Cancelled as soon as the task is known.
    let options = CallOptions::new()
        .cancel_handle(cancel)
        .on_task_status(move |handle, _| {
            *h.lock().unwrap() = Some(handle.clone());
            c.cancel();
        });
    let e = client
        .call_tool_with(
            "slow_compute",
            json!({"seconds": 600, "label": "never"}),
            &options,
        )
        .unwrap_err();
    assert!(matches!(e, Error::Cancelled), "{e:?}");
    let handle = handle.lock().unwrap().clone().expect("the task started");
    // The call waited for the server's acknowledgement of tasks/cancel.
    let task = client.task_get(&handle).unwrap();
    assert_eq!(task.status, TaskStatus::Cancelled, "{task:?}");
    client.close().unwrap();
}

#[test]
fn a_failed_task_is_a_typed_error_and_a_tool_error_a_result() {
    let client = connect(&Asked::default());
    match client
        .call_tool("protocol_error_job", json!({}))
        .unwrap_err()
    {
        Error::TaskFailed { error, .. } => assert_eq!(error.code, -32603, "{error:?}"),
        e => panic!("{e:?}"),
    }
    // A tool's own failure completes the task with isError (failing_job runs only as a task).
    let out = client.call_tool("failing_job", json!({})).unwrap();
    assert!(out.is_error());
    assert_eq!(only_text(&out), "the job failed");
    client.close().unwrap();
}

/// `everything --http 127.0.0.1:0`; killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start() -> HttpServer {
        let mut child = Command::new(EVERYTHING)
            .args(["--http", "127.0.0.1:0"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("everything starts");
        let url = http_support::listening_url(&mut child);
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_task_started_on_one_http_connection_is_followed_from_another() {
    let server = HttpServer::start();
    let first = Client::builder()
        .revision(Revision::Modern)
        .connect_http(&server.url)
        .unwrap();
    let Started::Task(handle) = first
        .call_tool_as_task(
            "slow_compute",
            json!({"seconds": 0.5, "label": "e"}),
            &CallOptions::new(),
        )
        .unwrap()
    else {
        panic!("slow_compute runs as a task")
    };
    assert_eq!(handle.server.as_deref(), Some(server.url.as_str()));
    first.close().unwrap();

    // As another process would: the handle as stored text, a new connection.
    let stored = serde_json::to_string(&handle).unwrap();
    let handle: TaskHandle = serde_json::from_str(&stored).unwrap();
    let second = Client::builder()
        .revision(Revision::Modern)
        .connect_http(&server.url)
        .unwrap();
    let out = second.task_wait(&handle, &CallOptions::new()).unwrap();
    assert_eq!(only_text(&out), "computed e after 0.5s");
    second.close().unwrap();
}

fn run_client(args: &[&str]) -> (bool, Value, String) {
    let out = Command::new(CLIENT)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.success(),
        json,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_client_example_follows_calls_and_gets_and_cancels_tasks() {
    let server = HttpServer::start();
    let url = server.url.as_str();
    // `call` follows the task to its result.
    let (ok, out, err) = run_client(&[
        "call",
        "slow_compute",
        r#"{"seconds": 0.2, "label": "cli"}"#,
        url,
    ]);
    assert!(ok, "{err}");
    assert_eq!(out["content"][0]["text"], "computed cli after 0.2s");

    // A task started elsewhere, then looked at and cancelled by id.
    let host = Client::builder()
        .revision(Revision::Modern)
        .connect_http(url)
        .unwrap();
    let Started::Task(handle) = host
        .call_tool_as_task(
            "slow_compute",
            json!({"seconds": 600, "label": "x"}),
            &CallOptions::new(),
        )
        .unwrap()
    else {
        panic!("slow_compute runs as a task")
    };
    let (ok, out, err) = run_client(&["task", "get", &handle.task_id, url]);
    assert!(ok, "{err}");
    assert_eq!(out["taskId"], handle.task_id.as_str());
    assert_eq!(out["status"], "working");
    let (ok, _, err) = run_client(&["task", "cancel", &handle.task_id, url]);
    assert!(ok, "{err}");
    assert_eq!(
        host.task_get(&handle).unwrap().status,
        TaskStatus::Cancelled
    );
    let (ok, _, err) = run_client(&["task", "get", "no-such-task", url]);
    assert!(!ok);
    assert!(err.contains("-32602") || err.contains("nknown"), "{err}");
    host.close().unwrap();
}
