//! The client and the tasks extension (`io.modelcontextprotocol/tasks`) against scripted
//! servers over an in-memory pipe: `call_tool` following a task to its end, its input requests,
//! cancellation, timeouts and poll intervals, and the explicit task API. Each scripted server
//! sees the exact wire messages.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, bounded};
use mcp_client::{
    CallOptions, CancelHandle, ChannelTransport, Client, Error, Revision, Started, TaskHandle,
    Timeout, Unexpected,
};
use mcp_core::types::{ElicitAction, ElicitRequestParams, ElicitResult, TaskStatus};
use serde_json::{Map, Value, json};

mod common;
use common::{Script, WAIT, msg, result, scripted, to_value};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A scripted server (see `common::scripted`) that offers the tasks extension (a legacy one
/// when `legacy`).
fn server_of(legacy: bool, script: Script) -> (ChannelTransport, Receiver<Value>) {
    let (t, seen) = scripted(
        !legacy,
        json!({"tools": {}, "extensions": {TASKS: {}}}),
        json!({"tools": {}}),
        script,
    );
    (t.named("scripted"), seen)
}

fn server(script: Script) -> (ChannelTransport, Receiver<Value>) {
    server_of(false, script)
}

/// A task as the server shows it, with `extra` fields (status-specific) merged in.
fn task(id: &str, status: &str, poll_ms: u64, extra: Value) -> Value {
    let mut t = json!({
        "taskId": id, "status": status,
        "createdAt": "2026-11-24T10:00:00Z", "lastUpdatedAt": "2026-11-24T10:00:00Z",
        "ttlMs": 60000, "pollIntervalMs": poll_ms,
    });
    if let (Some(t), Value::Object(extra)) = (t.as_object_mut(), extra) {
        t.extend(extra);
    }
    t
}

/// The answer to `tools/call` that starts task `id`.
fn handle(req: &Value, id: &str, poll_ms: u64) -> Value {
    let mut t = task(id, "working", poll_ms, json!({}));
    t["resultType"] = json!("task");
    result(&req["id"], t)
}

/// The answer to `tasks/get`.
fn got(req: &Value, t: Value) -> Value {
    let mut t = t;
    t["resultType"] = json!("complete");
    result(&req["id"], t)
}

fn ack(req: &Value) -> Value {
    result(&req["id"], json!({"resultType": "complete"}))
}

fn completed(id: &str, text: &str) -> Value {
    task(
        id,
        "completed",
        50,
        json!({"result": {"content": [{"type": "text", "text": text}], "isError": false}}),
    )
}

/// Every message the server received, once the client is closed (the channel then ends).
fn all(seen: &Receiver<Value>) -> Vec<Value> {
    let mut out = Vec::new();
    let deadline = Instant::now() + WAIT;
    while let Ok(v) = seen.recv_deadline(deadline) {
        out.push(v);
    }
    out
}

fn methods_of(msgs: &[Value]) -> Vec<String> {
    msgs.iter()
        .filter_map(|m| m["method"].as_str())
        .filter(|m| !m.starts_with("notifications/"))
        .map(str::to_owned)
        .collect()
}

fn modern(transport: ChannelTransport) -> Client {
    Client::builder()
        .revision(Revision::Modern)
        .connect(transport)
        .unwrap()
}

fn text_of(r: &mcp_core::types::CallToolResult) -> Value {
    serde_json::to_value(&r.content).unwrap()[0]["text"].clone()
}

#[test]
fn call_tool_follows_a_task_to_its_result_polling_tasks_get() {
    let mut gets = 0;
    let (transport, seen) = server(Box::new(move |v| match v["method"].as_str() {
        Some("tools/call") => vec![handle(v, "t-1", 50)],
        Some("tasks/get") => {
            gets += 1;
            let t = if gets == 1 {
                task("t-1", "working", 50, json!({"statusMessage": "half way"}))
            } else {
                completed("t-1", "done")
            };
            vec![got(v, t)]
        }
        _ => vec![],
    }));
    let client = modern(transport);
    let progress = Arc::new(Mutex::new(Vec::new()));
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let (p, s) = (Arc::clone(&progress), Arc::clone(&statuses));
    let options = CallOptions::new()
        .on_progress(move |u| p.lock().unwrap().push((u.progress, u.message.clone())))
        .on_task_status(move |h, t| s.lock().unwrap().push((h.clone(), t.status)));
    let out = client
        .call_tool_with("slow", json!({"n": 1}), &options)
        .unwrap();
    assert_eq!(text_of(&out), "done");
    client.close().unwrap();

    let msgs = all(&seen);
    assert_eq!(
        methods_of(&msgs),
        ["server/discover", "tools/call", "tasks/get", "tasks/get"]
    );
    let call = &msgs[1];
    assert_eq!(
        call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"],
        json!({TASKS: {}}),
        "the client declares the extension in the request: {call}"
    );
    // The polls name the task and nothing else (beside the modern envelope).
    for get in &msgs[2..] {
        assert_eq!(get["params"]["taskId"], "t-1");
        assert!(get["params"].get("name").is_none(), "{get}");
    }
    // Each change of the task is a progress report (a count, with the status message) and a
    // status callback with the handle.
    assert_eq!(
        *progress.lock().unwrap(),
        [(1.0, None), (2.0, Some("half way".into())), (3.0, None)]
    );
    let statuses = statuses.lock().unwrap();
    let seen_statuses: Vec<_> = statuses.iter().map(|(_, s)| *s).collect();
    assert_eq!(
        seen_statuses,
        [
            TaskStatus::Working,
            TaskStatus::Working,
            TaskStatus::Completed
        ]
    );
    let h = &statuses[0].0;
    assert_eq!(h.task_id, "t-1");
    assert_eq!(h.method, "tools/call");
    assert_eq!(h.server.as_deref(), Some("scripted"));
}

fn confirm_request() -> Value {
    json!({"method": "elicitation/create", "params": {
        "message": "Delete it?",
        "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}}})
}

fn accept(p: ElicitRequestParams) -> Result<ElicitResult, mcp_core::jsonrpc::ErrorObject> {
    let ElicitRequestParams::Form(form) = p else {
        return Ok(ElicitResult::action(ElicitAction::Decline));
    };
    let mut content = Map::new();
    content.insert("confirm".into(), json!(true));
    content.insert("asked".into(), json!(form.message));
    Ok(ElicitResult::accept(content))
}

#[test]
fn input_required_is_answered_once_through_the_elicitation_handler_with_tasks_update() {
    let mut gets = 0;
    let (transport, seen) = server(Box::new(move |v| match v["method"].as_str() {
        Some("tools/call") => vec![handle(v, "t-2", 50)],
        Some("tasks/get") => {
            gets += 1;
            let asking = task(
                "t-2",
                "input_required",
                50,
                json!({"inputRequests": {"confirm": confirm_request()}}),
            );
            // The second poll still shows the request (the server has not taken the
            // answer in yet): the client must not answer it twice.
            let t = if gets <= 2 {
                asking
            } else {
                completed("t-2", "deleted")
            };
            vec![got(v, t)]
        }
        Some("tasks/update") => vec![ack(v)],
        _ => vec![],
    }));
    let asked = Arc::new(Mutex::new(0));
    let a = Arc::clone(&asked);
    let client = Client::builder()
        .revision(Revision::Modern)
        .elicitation(move |p| {
            *a.lock().unwrap() += 1;
            accept(p)
        })
        .connect(transport)
        .unwrap();
    let out = client.call_tool("delete", json!({})).unwrap();
    assert_eq!(text_of(&out), "deleted");
    client.close().unwrap();
    assert_eq!(*asked.lock().unwrap(), 1, "the handler is asked once");

    let msgs = all(&seen);
    assert_eq!(
        methods_of(&msgs),
        [
            "server/discover",
            "tools/call",
            "tasks/get",
            "tasks/update",
            "tasks/get",
            "tasks/get"
        ]
    );
    let update = &msgs[3]["params"];
    assert_eq!(update["taskId"], "t-2");
    assert_eq!(
        update["inputResponses"],
        json!({"confirm": {"action": "accept", "content": {"confirm": true, "asked": "Delete it?"}}})
    );
}

#[test]
fn input_the_client_cannot_give_fails_the_call_and_cancels_the_task() {
    let (transport, seen) = server(Box::new(move |v| match v["method"].as_str() {
        Some("tools/call") => vec![handle(v, "t-3", 50)],
        Some("tasks/get") => vec![got(
            v,
            task(
                "t-3",
                "input_required",
                50,
                json!({"inputRequests": {"confirm": confirm_request()}}),
            ),
        )],
        Some("tasks/cancel") => vec![ack(v)],
        _ => vec![],
    }));
    // No elicitation handler.
    let client = modern(transport);
    let e = client.call_tool("delete", json!({})).unwrap_err();
    assert!(
        matches!(&e, Error::Input { key, .. } if key == "confirm"),
        "{e:?}"
    );
    client.close().unwrap();
    let msgs = all(&seen);
    assert_eq!(
        methods_of(&msgs)[1..],
        ["tools/call", "tasks/get", "tasks/cancel"]
    );
    assert_eq!(msgs.last().unwrap()["params"]["taskId"], "t-3");
}

#[test]
fn a_failed_task_is_task_failed_with_its_error_and_a_cancelled_one_task_cancelled() {
    let (transport, _seen) = server(Box::new(move |v| {
        let name = v["params"]["name"].as_str().unwrap_or_default().to_owned();
        match v["method"].as_str() {
            Some("tools/call") => vec![handle(v, &name, 50)],
            Some("tasks/get") if v["params"]["taskId"] == "boom" => vec![got(
                v,
                task(
                    "boom",
                    "failed",
                    50,
                    json!({"statusMessage": "it broke",
                           "error": {"code": -32603, "message": "handler panicked"}}),
                ),
            )],
            Some("tasks/get") => vec![got(
                v,
                task(
                    v["params"]["taskId"].as_str().unwrap(),
                    "cancelled",
                    50,
                    json!({"statusMessage": "stopped by an operator"}),
                ),
            )],
            _ => vec![],
        }
    }));
    let client = modern(transport);
    match client.call_tool("boom", json!({})).unwrap_err() {
        Error::TaskFailed { task_id, error } => {
            assert_eq!(task_id, "boom");
            assert_eq!(error.code, -32603);
            assert_eq!(error.message, "handler panicked");
        }
        e => panic!("{e:?}"),
    }
    match client.call_tool("stopped", json!({})).unwrap_err() {
        Error::TaskCancelled { task_id, message } => {
            assert_eq!(task_id, "stopped");
            assert_eq!(message.as_deref(), Some("stopped by an operator"));
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn cancelling_the_call_sends_tasks_cancel_at_once() {
    let (transport, seen) = server(Box::new(move |v| match v["method"].as_str() {
        // A long interval: only the cancellation can end the wait early.
        Some("tools/call") => vec![handle(v, "t-4", 20_000)],
        Some("tasks/cancel") => vec![ack(v)],
        _ => vec![],
    }));
    let client = modern(transport);
    let cancel = CancelHandle::new();
    let c = cancel.clone();
    // Cancelled as soon as the task starts, from the status callback.
    let options = CallOptions::new()
        .cancel_handle(cancel)
        .on_task_status(move |_, _| c.cancel());
    let started = Instant::now();
    let e = client
        .call_tool_with("slow", json!({}), &options)
        .unwrap_err();
    assert!(matches!(e, Error::Cancelled), "{e:?}");
    // A safety net, not a measurement: without the wake-up the wait would last the 20 s
    // interval.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the wait between polls ends at the cancellation"
    );
    client.close().unwrap();
    let msgs = all(&seen);
    assert_eq!(methods_of(&msgs)[1..], ["tools/call", "tasks/cancel"]);
    assert_eq!(msgs.last().unwrap()["params"]["taskId"], "t-4");
}

#[test]
fn the_poll_interval_is_honoured_and_its_changes_too() {
    let (transport, seen) = server(Box::new(move |v| match v["method"].as_str() {
        // First interval 50 ms, then the server asks for a minute between polls: within the
        // call's two seconds the client polls exactly once, then gives up and cancels.
        Some("tools/call") => vec![handle(v, "t-5", 50)],
        Some("tasks/get") => vec![got(v, task("t-5", "working", 60_000, json!({})))],
        Some("tasks/cancel") => vec![ack(v)],
        _ => vec![],
    }));
    let client = modern(transport);
    let options = CallOptions::new().timeout(Timeout::fixed(Duration::from_secs(2)));
    let e = client
        .call_tool_with("slow", json!({}), &options)
        .unwrap_err();
    assert!(
        matches!(&e, Error::Timeout { method } if method == "tools/call"),
        "{e:?}"
    );
    client.close().unwrap();
    let msgs = all(&seen);
    assert_eq!(
        methods_of(&msgs)[1..],
        ["tools/call", "tasks/get", "tasks/cancel"]
    );
}

#[test]
fn a_task_is_refused_when_the_extension_is_not_declared() {
    let (transport, seen) = server(Box::new(move |v| match v["method"].as_str() {
        Some("tools/call") => vec![handle(v, "t-6", 50)],
        _ => vec![],
    }));
    let client = Client::builder()
        .revision(Revision::Modern)
        .tasks(false)
        .connect(transport)
        .unwrap();
    let e = client.call_tool("slow", json!({})).unwrap_err();
    assert!(
        matches!(&e, Error::Unexpected(Unexpected::ResultType { result_type, .. }) if result_type == "task"),
        "{e:?}"
    );
    client.close().unwrap();
    let msgs = all(&seen);
    let caps = &msgs[1]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert!(caps.get("extensions").is_none(), "{caps}");
}

#[test]
fn a_handle_from_one_connection_is_followed_from_another() {
    // Both connections reach the same server state (as two processes reach one server).
    let gets = Arc::new(Mutex::new(0));
    let script = |gets: Arc<Mutex<u32>>| -> Script {
        Box::new(move |v| match v["method"].as_str() {
            Some("tools/call") => vec![handle(v, "t-7", 50)],
            Some("tasks/get") if v["params"]["taskId"] != "t-7" => vec![json!({
                "jsonrpc": "2.0", "id": v["id"],
                "error": {"code": -32602, "message": "Unknown task"}})],
            Some("tasks/get") => {
                let mut n = gets.lock().unwrap();
                *n += 1;
                let t = if *n < 3 {
                    task("t-7", "working", 50, json!({}))
                } else {
                    completed("t-7", "seven")
                };
                vec![got(v, t)]
            }
            Some("tasks/update" | "tasks/cancel") => vec![ack(v)],
            _ => vec![],
        })
    };
    let (first, seen_first) = server(script(Arc::clone(&gets)));
    let client = modern(first);
    let Started::Task(handle) = client
        .call_tool_as_task("slow", json!({"n": 7}), &CallOptions::new())
        .unwrap()
    else {
        panic!("a task was expected")
    };
    client.close().unwrap();
    // The first connection only started it.
    assert_eq!(
        methods_of(&all(&seen_first))[1..],
        ["tools/call"],
        "call_tool_as_task does not poll"
    );
    let stored = serde_json::to_string(&handle).unwrap();
    let stored_json: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored_json["taskId"], "t-7");
    assert_eq!(stored_json["method"], "tools/call");
    assert_eq!(stored_json["server"], "scripted");
    assert_eq!(stored_json["pollIntervalMs"], 50);

    let (second, seen_second) = server(script(gets));
    let other = modern(second);
    let handle: TaskHandle = serde_json::from_str(&stored).unwrap();
    assert_eq!(other.task_get(&handle).unwrap().status, TaskStatus::Working);
    let out = other.task_wait(&handle, &CallOptions::new()).unwrap();
    assert_eq!(text_of(&out), "seven");
    other
        .task_update(&handle, std::collections::BTreeMap::new())
        .unwrap();
    other.task_cancel(&handle).unwrap();
    let e = other.task_get(&TaskHandle::new("nope")).unwrap_err();
    assert!(matches!(&e, Error::Rpc(r) if r.code == -32602), "{e:?}");
    other.close().unwrap();
    let msgs = all(&seen_second);
    assert_eq!(
        methods_of(&msgs)[1..],
        [
            "tasks/get",
            "tasks/get",
            "tasks/get",
            "tasks/update",
            "tasks/cancel",
            "tasks/get"
        ]
    );
    assert_eq!(msgs[4]["params"]["taskId"], "t-7");
    assert_eq!(msgs[4]["params"]["inputResponses"], json!({}));
    assert_eq!(msgs[5]["params"]["taskId"], "t-7");
}

#[test]
fn a_server_answering_at_once_is_a_complete_start_and_task_wait_leaves_the_task_running() {
    let (transport, seen) = server(Box::new(move |v| match v["method"].as_str() {
        Some("tools/call") => vec![result(
            &v["id"],
            json!({"resultType": "complete", "content": [{"type": "text", "text": "now"}]}),
        )],
        Some("tasks/get") => vec![got(v, task("t-8", "working", 60_000, json!({})))],
        _ => vec![],
    }));
    let client = modern(transport);
    match client
        .call_tool_as_task("quick", json!({}), &CallOptions::new())
        .unwrap()
    {
        Started::Complete(r) => assert_eq!(text_of(&r), "now"),
        Started::Task(h) => panic!("{h:?}"),
    }
    // The host's own wait times out; the task is the host's, so it is not cancelled.
    let options = CallOptions::new().timeout(Timeout::fixed(Duration::from_secs(1)));
    let e = client
        .task_wait(&TaskHandle::new("t-8"), &options)
        .unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e:?}");
    client.close().unwrap();
    assert_eq!(methods_of(&all(&seen))[1..], ["tools/call", "tasks/get"]);
}

#[test]
fn task_requests_are_refused_on_a_legacy_connection() {
    let (transport, seen) = server_of(true, Box::new(|_| vec![]));
    let client = Client::builder().connect(transport).unwrap();
    assert_eq!(client.era(), mcp_core::version::Era::Legacy);
    let e = client.task_get(&TaskHandle::new("t")).unwrap_err();
    assert!(matches!(e, Error::Refused(_)), "{e:?}");
    client.close().unwrap();
    let msgs = all(&seen);
    // Nothing about tasks went out, and the legacy handshake declared no extension.
    assert_eq!(methods_of(&msgs), ["server/discover", "initialize"]);
    assert!(
        msgs[1]["params"]["capabilities"]
            .get("extensions")
            .is_none()
    );
}

#[test]
fn a_2025_11_25_server_runs_a_requested_task_read_through_tasks_result() {
    let (a, b) = mcp_stdio::memory(16).unwrap();
    let (seen_tx, seen) = bounded(256);
    thread::spawn(move || {
        let mut gets = 0;
        for item in &b.receiver {
            let Ok(m) = item else { continue };
            let v = to_value(&m);
            let _ = seen_tx.try_send(v.clone());
            let legacy_task = |status: &str| {
                json!({"taskId": "old-1", "status": status, "ttl": 300000, "pollInterval": 50,
                       "createdAt": "2026-11-24T10:00:00Z", "lastUpdatedAt": "2026-11-24T10:00:00Z"})
            };
            let reply = match v["method"].as_str() {
                Some("initialize") => result(
                    &v["id"],
                    json!({"protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}},
                        "serverInfo": {"name": "old-tasks", "version": "1"}}),
                ),
                // The client looks at the tool's task support first.
                Some("tools/list") => result(
                    &v["id"],
                    json!({"tools": [{"name": "research", "inputSchema": {"type": "object"},
                        "execution": {"taskSupport": "optional"}}]}),
                ),
                Some("tools/call") => result(&v["id"], json!({"task": legacy_task("working")})),
                Some("tasks/get") => {
                    gets += 1;
                    let status = if gets == 1 { "working" } else { "completed" };
                    result(&v["id"], legacy_task(status))
                }
                Some("tasks/result") => result(
                    &v["id"],
                    json!({"content": [{"type": "text", "text": "old result"}]}),
                ),
                _ => continue,
            };
            if b.sender.send(msg(reply)).is_err() {
                return;
            }
        }
    });
    let client = Client::builder()
        .revision(Revision::Legacy)
        .connect(ChannelTransport::new(a))
        .unwrap();
    let Started::Task(handle) = client
        .call_tool_as_task("research", json!({"topic": "x"}), &CallOptions::new())
        .unwrap()
    else {
        panic!("a task was expected")
    };
    assert_eq!(handle.task_id, "old-1");
    // The 2025-11-25 field names are read as the extension's.
    assert_eq!(handle.poll_interval_ms, Some(50));
    assert_eq!(handle.ttl_ms, Some(300000));
    let out = client.task_wait(&handle, &CallOptions::new()).unwrap();
    assert_eq!(text_of(&out), "old result");
    client.close().unwrap();
    let msgs = all(&seen);
    assert_eq!(
        methods_of(&msgs),
        [
            "initialize",
            "tools/list",
            "tools/call",
            "tasks/get",
            "tasks/get",
            "tasks/result"
        ]
    );
    assert_eq!(msgs[3]["params"]["task"], json!({}), "{}", msgs[3]);
    assert_eq!(msgs[3]["params"]["arguments"], json!({"topic": "x"}));
    assert_eq!(msgs[6]["params"]["taskId"], "old-1");
}

/// A 2025-11-25 server that runs tools as tasks, with three tools: `plain` (no
/// `execution`: tasks forbidden), `either` (optional) and `long` (required). It refuses what
/// the spec says it must (-32601: a task asked of `plain`, a plain call of `long`), and can
/// be told to announce that its tools changed.
fn legacy_tasks_server() -> (
    Client,
    Receiver<Value>,
    crossbeam_channel::Sender<()>,
    Receiver<()>,
) {
    let (a, b) = mcp_stdio::memory(16).unwrap();
    let (seen_tx, seen) = bounded(256);
    let (changed_tx, changed) = bounded::<()>(4);
    thread::spawn(move || {
        let legacy_task = |status: &str| {
            json!({"taskId": "t-1", "status": status, "ttl": 300000, "pollInterval": 20,
                   "createdAt": "2026-11-25T10:00:00Z", "lastUpdatedAt": "2026-11-25T10:00:00Z"})
        };
        let not_found = |id: &Value, why: &str| json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": why}});
        loop {
            crossbeam_channel::select! {
                recv(changed) -> c => {
                    if c.is_err() { return; }
                    let n = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
                    if b.sender.send(msg(n)).is_err() { return; }
                }
                recv(b.receiver) -> item => {
                    let Ok(Ok(m)) = item else { return };
                    let v = to_value(&m);
                    let _ = seen_tx.try_send(v.clone());
                    let id = &v["id"];
                    let reply = match v["method"].as_str() {
                        Some("initialize") => result(id, json!({"protocolVersion": "2025-11-25",
                            "capabilities": {"tools": {"listChanged": true},
                                "tasks": {"requests": {"tools": {"call": {}}}}},
                            "serverInfo": {"name": "old-tasks", "version": "1"}})),
                        Some("tools/list") => result(id, json!({"tools": [
                            {"name": "plain", "inputSchema": {"type": "object"}},
                            {"name": "either", "inputSchema": {"type": "object"},
                             "execution": {"taskSupport": "optional"}},
                            {"name": "long", "inputSchema": {"type": "object"},
                             "execution": {"taskSupport": "required"}},
                        ]})),
                        Some("tools/call") => {
                            let name = v["params"]["name"].as_str().unwrap_or_default();
                            let task = v["params"].get("task").is_some();
                            match (name, task) {
                                ("plain", true) => not_found(id, "plain forbids tasks"),
                                ("long", false) => not_found(id, "long requires a task"),
                                (_, true) => result(id, json!({"task": legacy_task("working")})),
                                (_, false) => result(id, json!({"content":
                                    [{"type": "text", "text": format!("{name} at once")}]})),
                            }
                        }
                        Some("tasks/get") => result(id, legacy_task("completed")),
                        Some("tasks/result") => result(id, json!({"content":
                            [{"type": "text", "text": "from the task"}]})),
                        _ => continue,
                    };
                    if b.sender.send(msg(reply)).is_err() { return; }
                }
            }
        }
    });
    // Told when the client has taken the change in (its callback runs after).
    let (heard_tx, heard) = bounded(4);
    let client = Client::builder()
        .revision(Revision::Legacy)
        .on_notification(move |n| {
            if n.method == "notifications/tools/list_changed" {
                let _ = heard_tx.try_send(());
            }
        })
        .connect(ChannelTransport::new(a))
        .unwrap();
    (client, seen, changed_tx, heard)
}

fn calls_and_lists(msgs: &[Value]) -> Vec<String> {
    msgs.iter()
        .filter(|m| matches!(m["method"].as_str(), Some("tools/call" | "tools/list")))
        .map(|m| {
            let task = if m["params"].get("task").is_some() {
                " task"
            } else {
                ""
            };
            format!(
                "{} {}{task}",
                m["method"].as_str().unwrap(),
                m["params"]["name"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn a_2025_11_25_tool_that_forbids_tasks_is_never_asked_for_one() {
    let (client, seen, _changed, _heard) = legacy_tasks_server();
    // Asked as a task, `plain` gets a plain call (its answer, at once) after one look at the
    // tools; `either` is asked for its task without a second look.
    let Started::Complete(r) = client
        .call_tool_as_task("plain", json!({}), &CallOptions::new())
        .unwrap()
    else {
        panic!("plain forbids tasks: a plain answer was expected")
    };
    assert_eq!(text_of(&r), "plain at once");
    let Started::Task(h) = client
        .call_tool_as_task("either", json!({}), &CallOptions::new())
        .unwrap()
    else {
        panic!("either allows a task")
    };
    assert_eq!(h.task_id, "t-1");
    client.close().unwrap();
    assert_eq!(
        calls_and_lists(&all(&seen)),
        ["tools/list ", "tools/call plain", "tools/call either task"]
    );
}

#[test]
fn a_2025_11_25_tool_that_requires_a_task_is_called_as_one_by_call_tool() {
    let (client, seen, changed, heard) = legacy_tasks_server();
    // Unknown at first: the tools are looked at, and the call is made as a task and
    // followed to its result.
    let r = client.call_tool("long", json!({})).unwrap();
    assert_eq!(text_of(&r), "from the task");
    // Known now: straight to the task.
    let r = client.call_tool("long", json!({})).unwrap();
    assert_eq!(text_of(&r), "from the task");
    // A tool that does not require one is called plainly.
    assert_eq!(
        text_of(&client.call_tool("either", json!({})).unwrap()),
        "either at once"
    );
    // Nothing but what each step needed went out (tasks/get and tasks/result aside); the
    // server notes each request before it answers, so all are noted by now.
    assert_eq!(
        calls_and_lists(&all_now(&seen)),
        [
            "tools/list ",
            "tools/call long task",
            "tools/call long task",
            "tools/call either"
        ]
    );
    // The server's tools changed: what was learned is forgotten, and learned again.
    changed.send(()).unwrap();
    heard.recv_timeout(WAIT).unwrap();
    let r = client.call_tool("long", json!({})).unwrap();
    assert_eq!(text_of(&r), "from the task");
    assert_eq!(
        calls_and_lists(&all_now(&seen)),
        ["tools/list ", "tools/call long task"]
    );
    client.close().unwrap();
}

/// The messages the server received so far (without waiting for more).
fn all_now(seen: &Receiver<Value>) -> Vec<Value> {
    seen.try_iter().collect()
}
