//! The tasks extension (2026-07-28, `io.modelcontextprotocol/tasks`) driven in memory through
//! the service seam. The tests wait on events, never on time: a store wrapped around the
//! in-memory one reports every change of a task's status on a channel.

use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_core::jsonrpc::{Message, RequestId, decode};
use mcp_core::service::{Closed, Outbound, Service, Session, SessionInfo, TransportKind};
use mcp_server_kit::types::TaskStatus;
use mcp_server_kit::types::tasks_ext::{EXTENSION_ID, TaskSupport};
use mcp_server_kit::{
    Context, Error, MemoryTaskStore, NoArgs, Server, TaskRecord, TaskStore, TaskStoreError, Tool,
};
use serde_json::{Value, json};

#[cfg(unix)]
mod common;

/// A safety net on every blocking receive; nothing here waits for it to pass.
const WAIT: Duration = Duration::from_secs(10);

struct Collect(Mutex<std::sync::mpsc::Sender<Message>>);

impl Outbound for Collect {
    fn send(&self, msg: Message, _related: Option<&RequestId>) -> Result<(), Closed> {
        self.0.lock().unwrap().send(msg).map_err(|_| Closed)
    }
}

/// The in-memory store, reporting each task's status after every change.
struct Observed {
    inner: MemoryTaskStore,
    events: SyncSender<(String, TaskStatus)>,
}

impl TaskStore for Observed {
    fn create(&self, record: TaskRecord, ttl: Option<Duration>) -> Result<(), TaskStoreError> {
        self.inner.create(record, ttl)
    }
    fn get(&self, task_id: &str) -> Option<TaskRecord> {
        self.inner.get(task_id)
    }
    fn update(&self, task_id: &str, change: &mut dyn FnMut(&mut TaskRecord)) -> Option<TaskRecord> {
        let r = self.inner.update(task_id, change)?;
        // Room for every change a test makes; a full channel would only lose a report.
        let _ = self.events.try_send((task_id.to_owned(), r.task.status));
        Some(r)
    }
}

struct Events(Receiver<(String, TaskStatus)>);

impl Events {
    /// Blocks until task `id` reports `status`.
    fn until(&self, id: &str, status: TaskStatus) {
        loop {
            let (task, s) = self.0.recv_timeout(WAIT).expect("a task change");
            if task == id && s == status {
                return;
            }
        }
    }
}

fn observed(cap: usize) -> (Arc<Observed>, Events) {
    let (tx, rx) = sync_channel(1024);
    let store = Arc::new(Observed {
        inner: MemoryTaskStore::new(cap),
        events: tx,
    });
    (store, Events(rx))
}

struct Peer {
    session: Arc<dyn Session>,
    rx: Receiver<Message>,
}

impl Peer {
    fn open(server: &Server, auth: Option<Value>) -> Peer {
        let (tx, rx) = channel();
        let mut info = SessionInfo::new(TransportKind::Memory);
        info.auth = auth;
        let session = server.open(info, Arc::new(Collect(Mutex::new(tx))));
        Peer { session, rx }
    }

    /// A 2026-07-28 request with the given client capabilities; its answer.
    fn call(&self, id: i64, method: &str, mut params: Value, caps: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
        });
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.session
            .handle(decode(msg.to_string().as_bytes()).unwrap());
        loop {
            let m = self.rx.recv_timeout(WAIT).expect("an answer");
            let v: Value = serde_json::from_slice(&m.to_vec()).unwrap();
            if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                return v;
            }
        }
    }

    /// As [`Peer::call`], for a client that declared the extension (and elicitation).
    fn ext(&self, id: i64, method: &str, params: Value) -> Value {
        self.call(id, method, params, with_ext())
    }
}

fn with_ext() -> Value {
    json!({"elicitation": {}, "extensions": {EXTENSION_ID: {}}})
}

fn task_id(answer: &Value) -> String {
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    answer["result"]["taskId"].as_str().unwrap().to_owned()
}

fn quick() -> Tool {
    Tool::new("quick", |_: NoArgs, _: &Context| Ok::<_, Error>("done"))
        .task_support(TaskSupport::Optional)
}

#[test]
fn the_cap_refuses_a_new_task_with_a_clear_error_instead_of_growing() {
    let (store, events) = observed(2);
    let server = Server::builder("t", "1")
        .tool(quick())
        .task_store(store.clone())
        .build()
        .unwrap();
    let p = Peer::open(&server, None);
    for id in 1..=2 {
        let t = task_id(&p.ext(id, "tools/call", json!({"name": "quick"})));
        events.until(&t, TaskStatus::Completed);
    }
    // Finished tasks keep their place (their results are kept until their ttl ends).
    let refused = p.ext(3, "tools/call", json!({"name": "quick"}));
    let msg = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("too many tasks") && msg.contains('2'),
        "{refused}"
    );
    assert_eq!(store.inner.len(), 2);
}

#[test]
fn an_ended_ttl_frees_the_task_and_its_place() {
    let (store, events) = observed(1);
    let server = Server::builder("t", "1")
        .tool(quick())
        .task_store(store.clone())
        // A ttl that has ended by the next request: expiry without waiting.
        .task_ttl(Some(Duration::ZERO))
        .build()
        .unwrap();
    let p = Peer::open(&server, None);
    let first = task_id(&p.ext(1, "tools/call", json!({"name": "quick"})));
    assert_eq!(store.inner.len(), 0, "the expired task is freed");
    let gone = p.ext(2, "tasks/get", json!({"taskId": first}));
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    // Its place is free again, although the cap is one.
    let second = p.ext(3, "tools/call", json!({"name": "quick"}));
    assert_eq!(second["result"]["resultType"], "task", "{second}");
    drop(events);
}

/// A tool `waiting` that waits for its cancellation (a minute at most) and then reports
/// whether it saw one.
fn waiting(support: TaskSupport) -> (Tool, Receiver<bool>) {
    let (seen_tx, seen) = sync_channel(1);
    let seen_tx = Mutex::new(seen_tx);
    let tool = Tool::new("waiting", move |_: NoArgs, ctx: &Context| {
        let cancelled = ctx.wait_cancelled(WAIT * 6);
        let _ = seen_tx.lock().unwrap().send(cancelled);
        Ok::<_, Error>("finished")
    })
    .task_support(support);
    (tool, seen)
}

#[test]
fn tasks_cancel_reaches_the_handler_and_the_task_ends_cancelled() {
    let (store, events) = observed(8);
    let (waiting, seen) = waiting(TaskSupport::Required);
    let server = Server::builder("t", "1")
        .tool(waiting)
        .task_store(store)
        .build()
        .unwrap();
    let p = Peer::open(&server, None);
    let t = task_id(&p.ext(1, "tools/call", json!({"name": "waiting"})));
    let ack = p.ext(2, "tasks/cancel", json!({"taskId": t}));
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    assert!(
        seen.recv_timeout(WAIT).unwrap(),
        "the handler saw the cancellation"
    );
    events.until(&t, TaskStatus::Cancelled);
    let got = p.ext(3, "tasks/get", json!({"taskId": t}));
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    assert!(got["result"].get("result").is_none(), "{got}");
    // Cancelling again is the same empty acknowledgement.
    let again = p.ext(4, "tasks/cancel", json!({"taskId": t}));
    assert_eq!(again["result"], json!({"resultType": "complete"}));
}

#[test]
fn a_panicking_handler_ends_its_task_failed_and_the_server_goes_on() {
    let (store, events) = observed(8);
    let boom = Tool::new("boom", |_: NoArgs, _: &Context| -> Result<String, Error> {
        panic!("on purpose")
    })
    .task_support(TaskSupport::Optional);
    let server = Server::builder("t", "1")
        .tool(boom)
        .tool(quick())
        .task_store(store)
        .build()
        .unwrap();
    let p = Peer::open(&server, None);
    let t = task_id(&p.ext(1, "tools/call", json!({"name": "boom"})));
    events.until(&t, TaskStatus::Failed);
    let got = p.ext(2, "tasks/get", json!({"taskId": t}));
    assert_eq!(got["result"]["status"], "failed", "{got}");
    assert_eq!(got["result"]["error"]["code"], -32603, "{got}");
    assert!(got["result"].get("result").is_none(), "{got}");
    let next = task_id(&p.ext(3, "tools/call", json!({"name": "quick"})));
    events.until(&next, TaskStatus::Completed);
}

#[test]
fn elicit_inside_a_task_parks_it_in_input_required_until_tasks_update_answers() {
    let (store, events) = observed(8);
    let ask = Tool::new("ask", |_: NoArgs, ctx: &Context| {
        let form = serde_json::from_value(json!({"message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}))
        .map_err(|e| Error::msg(e.to_string()))?;
        let answer = ctx.elicit(form)?;
        let name = answer.content.and_then(|c| c.get("name").cloned());
        Ok::<_, Error>(format!("hello {}", name.unwrap_or_default()))
    })
    .task_support(TaskSupport::Optional);
    let server = Server::builder("t", "1")
        .tool(ask)
        .task_store(store)
        .build()
        .unwrap();
    let p = Peer::open(&server, None);
    let t = task_id(&p.ext(1, "tools/call", json!({"name": "ask"})));
    events.until(&t, TaskStatus::InputRequired);
    let got = p.ext(2, "tasks/get", json!({"taskId": t}));
    let requests = got["result"]["inputRequests"].as_object().unwrap();
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    // An answer to a key the task does not wait for is acknowledged and ignored.
    let ignored = p.ext(
        3,
        "tasks/update",
        json!({"taskId": t, "inputResponses": {"nope": {"action": "accept"}}}),
    );
    assert_eq!(ignored["result"], json!({"resultType": "complete"}));
    // A malformed answer to its question is the client's error: it is not delivered, and the
    // task still waits for input.
    let bad = p.ext(
        6,
        "tasks/update",
        json!({"taskId": t, "inputResponses": {key: {"action": "zzz"}, "nope": {}}}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains(key.as_str()),
        "{bad}"
    );
    // So is content that does not match the form.
    let wrong = p.ext(
        8,
        "tasks/update",
        json!({"taskId": t, "inputResponses": {key: {"action": "accept", "content": {"name": 5}}}}),
    );
    assert_eq!(wrong["error"]["code"], -32602, "{wrong}");
    let still = p.ext(7, "tasks/get", json!({"taskId": t}));
    assert_eq!(still["result"]["status"], "input_required", "{still}");
    assert!(
        still["result"]["inputRequests"].get(key).is_some(),
        "{still}"
    );
    let ack = p.ext(
        4,
        "tasks/update",
        json!({"taskId": t, "inputResponses":
        {key: {"action": "accept", "content": {"name": "ada"}}}}),
    );
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    events.until(&t, TaskStatus::Completed);
    let done = p.ext(5, "tasks/get", json!({"taskId": t}));
    assert_eq!(
        done["result"]["result"]["content"][0]["text"],
        "hello \"ada\""
    );
    assert!(done["result"].get("inputRequests").is_none(), "{done}");
}

#[test]
fn without_the_extension_tasks_methods_and_required_tools_are_32021_and_optional_ones_run_plainly()
{
    let required = Tool::new("required", |_: NoArgs, _: &Context| Ok::<_, Error>("r"))
        .task_support(TaskSupport::Required);
    let server = Server::builder("t", "1")
        .tool(required)
        .tool(quick())
        .build()
        .unwrap();
    assert!(server.capabilities()["extensions"][EXTENSION_ID].is_object());
    let p = Peer::open(&server, None);
    let plain = json!({});
    for (id, method) in [(1, "tasks/get"), (2, "tasks/cancel")] {
        let e = p.call(id, method, json!({"taskId": "x"}), plain.clone());
        assert_eq!(e["error"]["code"], -32021, "{method}: {e}");
    }
    let e = p.call(3, "tools/call", json!({"name": "required"}), plain.clone());
    assert_eq!(e["error"]["code"], -32021, "{e}");
    assert!(e["error"]["data"]["requiredCapabilities"]["extensions"][EXTENSION_ID].is_object());
    let r = p.call(4, "tools/call", json!({"name": "quick"}), plain);
    assert_eq!(r["result"]["content"][0]["text"], "done", "{r}");
    // With the extension, an unknown task id is -32602.
    let unknown = p.ext(5, "tasks/get", json!({"taskId": "nope"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[test]
fn a_task_is_seen_only_by_its_requester() {
    let (store, events) = observed(8);
    let server = Server::builder("t", "1")
        .tool(quick())
        .task_store(store)
        .build()
        .unwrap();
    let alice = Peer::open(&server, Some(json!({"sub": "alice"})));
    let mallory = Peer::open(&server, Some(json!({"sub": "mallory"})));
    let t = task_id(&alice.ext(1, "tools/call", json!({"name": "quick"})));
    events.until(&t, TaskStatus::Completed);
    for (id, method) in [(1, "tasks/get"), (2, "tasks/cancel")] {
        let e = mallory.ext(id, method, json!({"taskId": t}));
        assert_eq!(e["error"]["code"], -32602, "{method}: {e}");
    }
    let mine = alice.ext(2, "tasks/get", json!({"taskId": t}));
    assert_eq!(mine["result"]["status"], "completed", "{mine}");
    // Alice with a refreshed token (new `exp` and `scope`) is still Alice.
    let refreshed = Peer::open(
        &server,
        Some(json!({"sub": "alice", "exp": 4_000_000_000u64, "scope": "more"})),
    );
    let again = refreshed.ext(3, "tasks/get", json!({"taskId": t}));
    assert_eq!(again["result"]["status"], "completed", "{again}");
}

#[test]
fn a_handler_can_gather_input_first_and_then_continue_as_a_task() {
    let (store, events) = observed(8);
    let tool = Tool::new("later", |_: NoArgs, ctx: &Context| {
        let form = serde_json::from_value(json!({"message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}))
        .map_err(|e| Error::msg(e.to_string()))?;
        let answer = ctx.elicit_as("user_name", form)?;
        let name = answer.content.and_then(|c| c.get("name").cloned());
        ctx.continue_as_task(move |_| Ok::<_, Error>(format!("hi {}", name.unwrap_or_default())))
    })
    .task_support(TaskSupport::Required)
    .task_started_by_handler();
    let server = Server::builder("t", "1")
        .tool(tool)
        .task_store(store)
        .build()
        .unwrap();
    let p = Peer::open(&server, None);
    let first = p.ext(1, "tools/call", json!({"name": "later"}));
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert!(first["result"].get("taskId").is_none());
    let state = first["result"]["requestState"].clone();
    let second = p.ext(
        2,
        "tools/call",
        json!({"name": "later", "requestState": state,
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "bo"}}}}),
    );
    let t = task_id(&second);
    assert!(second["result"].get("requestState").is_none(), "{second}");
    events.until(&t, TaskStatus::Completed);
    let done = p.ext(3, "tasks/get", json!({"taskId": t}));
    assert_eq!(done["result"]["result"]["content"][0]["text"], "hi \"bo\"");
}

/// A tool that returns its text (answered without a `CallToolResult` being built when it runs
/// plainly), run as a task, completes with the result a tool returning `CallToolResult::text`
/// completes with.
#[test]
fn a_text_returning_tool_run_as_a_task_keeps_the_text_result() {
    let (store, events) = observed(8);
    let result = Tool::new("result", |_: NoArgs, _: &Context| {
        Ok::<_, Error>(mcp_server_kit::types::CallToolResult::text("done"))
    })
    .task_support(TaskSupport::Optional);
    let server = Server::builder("t", "1")
        .tool(quick())
        .tool(result)
        .task_store(store)
        .build()
        .unwrap();
    let p = Peer::open(&server, None);
    let mut results = Vec::new();
    for (id, name) in [(1, "quick"), (3, "result")] {
        let t = task_id(&p.ext(id, "tools/call", json!({"name": name})));
        events.until(&t, TaskStatus::Completed);
        let done = p.ext(id + 1, "tasks/get", json!({"taskId": t}));
        results.push(done["result"]["result"].clone());
    }
    assert_eq!(results[0]["content"][0]["text"], "done", "{}", results[0]);
    assert_eq!(results[0], results[1]);
}

/// Beyond the task workers and their queue a new task is refused at once (-32006), never
/// hung: its `tools/call` waited (its answer's head already sent over HTTP) for as long as the
/// tasks ahead of it ran. Over stdio, whose requests run on the reader, as HTTP's run on their
/// connections: only tasks use the kit's workers.
#[cfg(unix)]
#[test]
fn task_notifications_on_subscriptions_listen_need_the_extension() {
    // "Servers MUST return this error [-32021] for non-declaring clients requesting task
    // notifications on `subscriptions/listen`."
    let server = Server::builder("t", "1").tool(quick()).build().unwrap();
    let p = Peer::open(&server, None);
    let refused = p.call(
        1,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": ["a"], "toolsListChanged": true}}),
        json!({}),
    );
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"][EXTENSION_ID],
        json!({})
    );
}

#[test]
fn a_task_whose_ttl_ends_while_it_runs_is_stopped() {
    // The store drops the task at its ttl, after which no client can see or cancel it: its
    // handler is told, rather than left holding a worker for nothing.
    let (waiting, seen) = waiting(TaskSupport::Optional);
    let server = Server::builder("t", "1")
        .tool(waiting)
        .tool(quick())
        .task_store(Arc::new(MemoryTaskStore::new(8)))
        // Ended by the next request.
        .task_ttl(Some(Duration::ZERO))
        .build()
        .unwrap();
    let p = Peer::open(&server, None);
    task_id(&p.ext(1, "tools/call", json!({"name": "waiting"})));
    task_id(&p.ext(2, "tools/call", json!({"name": "quick"})));
    assert!(
        seen.recv_timeout(WAIT).unwrap(),
        "the expired task's handler was cancelled"
    );
}

#[test]
fn an_input_key_is_never_used_twice_in_a_task() {
    // The spec: a key is unique over a task's lifetime; a client skips keys it answered, so a
    // reused one would leave the task waiting until its ttl. The second ask under the same key
    // fails at once; a positional key skips the keys a handler named itself.
    let (store, events) = observed(8);
    let ask = Tool::new("ask", |_: NoArgs, ctx: &Context| {
        let form = || {
            serde_json::from_value(json!({"message": "Name?",
                "requestedSchema": {"type": "object", "properties": {}}}))
            .map_err(|e| Error::msg(e.to_string()))
        };
        ctx.elicit_as("input-0", form()?)?;
        let again = ctx.elicit_as("input-0", form()?).is_err();
        ctx.elicit(form()?)?;
        Ok::<_, Error>(format!("refused again: {again}"))
    })
    .task_support(TaskSupport::Optional);
    let server = Server::builder("t", "1")
        .tool(ask)
        .task_store(store)
        .build()
        .unwrap();
    let p = Peer::open(&server, None);
    let t = task_id(&p.ext(1, "tools/call", json!({"name": "ask"})));
    let mut keys = Vec::new();
    for id in [2, 4] {
        events.until(&t, TaskStatus::InputRequired);
        let got = p.ext(id, "tasks/get", json!({"taskId": t}));
        let key = got["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        let ack = p.ext(
            id + 1,
            "tasks/update",
            json!({"taskId": t, "inputResponses": {key.clone(): {"action": "accept", "content": {}}}}),
        );
        assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
        keys.push(key);
    }
    assert_eq!(keys, ["input-0", "input-1"]);
    events.until(&t, TaskStatus::Completed);
    let done = p.ext(6, "tasks/get", json!({"taskId": t}));
    assert_eq!(
        done["result"]["result"]["content"][0]["text"],
        "refused again: true"
    );
}

#[test]
fn tasks_beyond_the_workers_and_the_queue_are_refused_busy() {
    use mcp_core::jsonrpc::codes;

    let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(8);
    let block = Tool::new("block", move |_: NoArgs, _: &Context| {
        let _ = release_rx.recv_timeout(WAIT);
        Ok::<_, Error>("released")
    })
    .task_support(TaskSupport::Optional);
    let store = Arc::new(MemoryTaskStore::new(8));
    let server = Server::builder("t", "1")
        .tool(block)
        .workers(1)
        .max_workers(1)
        .queue(1)
        .task_store(store.clone())
        .build()
        .unwrap();
    let mut c = common::stdio::Client::start(server);
    let call = |c: &mut common::stdio::Client, id: i64| -> Value {
        c.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "block", "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": with_ext()}}}),
        );
        loop {
            let v = c.next();
            if v["id"] == id && v.get("method").is_none() {
                return v;
            }
        }
    };
    // One runs, one waits in the queue.
    task_id(&call(&mut c, 1));
    task_id(&call(&mut c, 2));
    let refused = call(&mut c, 3);
    assert_eq!(refused["error"]["code"], codes::SERVER_BUSY, "{refused}");
    // The refused call left no task behind: its client never learnt of one, and a kept one
    // held a place under the cap for its whole ttl (six refusals filled a cap of ten).
    assert_eq!(store.len(), 2);
    for _ in 0..2 {
        release_tx.send(()).unwrap();
    }
    c.close_input();
}
