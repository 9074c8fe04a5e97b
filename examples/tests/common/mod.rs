//! A small test client for the `everything` example server: it starts the built binary as a
//! child process and speaks newline-delimited JSON-RPC to it over real pipes.
//!
//! Messages are handled as `serde_json::Value`s so tests can send anything (forged ids, odd
//! params) and assert on the exact wire shape. Every wait has a deadline; nothing sleeps.
#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::time::{Duration, Instant};

use mcp_stdio::{ChildBuilder, ChildHandle, Connection, MessageReader};
use serde_json::{Value, json};

/// How long a single answer may take before a test fails (generous: the machine is shared).
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// The 2026-07-28 revision string.
pub const MODERN: &str = "2026-07-28";

/// The server binary Cargo built for these tests.
pub const EVERYTHING: &str = env!("CARGO_BIN_EXE_everything");

/// The fixture tools, in registration order (the 2026-07-28 conformance fixtures last, the
/// tasks extension's last, then the structured-output and resource-link examples).
pub const FIXTURE_TOOLS: [&str; 37] = [
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
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
    "test_custom_header_routing",
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
    "test_structured_content",
    "test_resource_link",
];

/// A 1x1 red pixel, as the fixtures define it.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// The minimal WAV file of the fixtures.
pub const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// A client connected to a freshly started `everything` server.
pub struct Client {
    conn: Connection,
    /// The server process (its handle stops it on drop).
    pub child: ChildHandle,
    /// Messages read from the wire that no wait has claimed yet, in wire order.
    backlog: VecDeque<Value>,
    next_id: i64,
    /// When the process was started (the server's timers count from about then).
    pub started: Instant,
}

fn is_response(m: &Value) -> bool {
    m.get("method").is_none() && (m.get("result").is_some() || m.get("error").is_some())
}

/// Whether `m` is the response (result or error) to request `id`.
pub fn answers(m: &Value, id: &Value) -> bool {
    is_response(m) && m.get("id") == Some(id)
}

/// Whether `m` is a notification or request with this method.
pub fn has_method(m: &Value, method: &str) -> bool {
    m.get("method").and_then(Value::as_str) == Some(method)
}

impl Client {
    /// Starts the server.
    pub fn spawn() -> Client {
        Client::spawn_program(EVERYTHING)
    }

    /// Starts the server with its background clock driven by the `test_tick` tool instead of
    /// timers (`EVERYTHING_CLOCK=manual`): the first tick adds `test_dynamic_tool`, each later
    /// one changes `test://watched-resource`, before the tick is answered.
    pub fn spawn_manual_clock() -> Client {
        Client::spawn_with(EVERYTHING, &[("EVERYTHING_CLOCK", "manual")])
    }

    /// Starts another example server.
    pub fn spawn_program(program: &str) -> Client {
        Client::spawn_with(program, &[])
    }

    fn spawn_with(program: &str, env: &[(&str, &str)]) -> Client {
        let started = Instant::now();
        let mut builder = ChildBuilder::new(program).env("RUST_LOG", "error");
        for (k, v) in env {
            builder = builder.env(k, v);
        }
        let (conn, child) = builder.spawn().expect("the everything binary starts");
        Client {
            conn,
            child,
            backlog: VecDeque::new(),
            next_id: 1,
            started,
        }
    }

    /// Starts the server and opens a legacy session at `version` with `capabilities`.
    pub fn legacy(version: &str, capabilities: Value) -> (Client, Value) {
        let mut c = Client::spawn();
        let result = c.initialize(version, capabilities);
        (c, result)
    }

    /// A 2025-11-25 session whose client can sample and elicit.
    pub fn legacy_full() -> Client {
        Client::legacy("2025-11-25", json!({"sampling": {}, "elicitation": {}})).0
    }

    /// Sends `initialize` and `notifications/initialized`; returns the initialize result.
    pub fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        let r = self.result(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "everything-tests", "version": "1.0.0"}
            }),
        );
        self.notify("notifications/initialized", None);
        r
    }

    /// Sends any JSON value as a message (it must be a valid JSON-RPC message).
    pub fn send(&self, v: Value) {
        let bytes = serde_json::to_vec(&v).expect("a JSON value serializes");
        let msg = mcp_core::jsonrpc::decode(&bytes).expect("the test sends valid JSON-RPC");
        self.conn
            .sender
            .send_timeout(msg, TIMEOUT)
            .expect("the server's stdin accepts the message");
    }

    /// A fresh request id.
    pub fn fresh_id(&mut self) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        json!(id)
    }

    /// Sends a request with a fresh id; returns the id.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.fresh_id();
        self.request_with_id(id.clone(), method, params);
        id
    }

    /// Sends a request with the given id.
    pub fn request_with_id(&self, id: Value, method: &str, params: Value) {
        let mut m = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            m["params"] = params;
        }
        self.send(m);
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Option<Value>) {
        let mut m = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            m["params"] = p;
        }
        self.send(m);
    }

    /// Answers one of the server's requests with a result.
    pub fn reply(&self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Answers one of the server's requests with an error.
    pub fn reply_error(&self, id: &Value, code: i64, message: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}));
    }

    /// The next message from the wire (not the backlog), or `None` at the deadline. Panics
    /// when the server sent a line that is not a message, or closed its stdout.
    fn read_wire(&mut self, deadline: Instant) -> Option<Value> {
        match self.conn.receiver.recv_deadline(deadline) {
            Ok(Ok(m)) => Some(serde_json::to_value(&m).expect("a message serializes")),
            Ok(Err(e)) => panic!("the server wrote a line that is not a message: {e}"),
            Err(e) if e.is_timeout() => None,
            Err(_) => panic!("the server closed its stdout; backlog: {:?}", self.backlog),
        }
    }

    /// The first message (backlog first, then the wire) that satisfies `pred`, within
    /// `timeout`. Messages passed over stay in the backlog, in order.
    pub fn wait_for(
        &mut self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        self.try_wait_for(timeout, &pred).unwrap_or_else(|| {
            panic!(
                "no {what} within {timeout:?}; unclaimed messages: {:#?}",
                self.backlog
            )
        })
    }

    /// Like [`Client::wait_for`], `None` at the deadline.
    pub fn try_wait_for(
        &mut self,
        timeout: Duration,
        pred: &dyn Fn(&Value) -> bool,
    ) -> Option<Value> {
        if let Some(i) = self.backlog.iter().position(pred) {
            return self.backlog.remove(i);
        }
        let deadline = Instant::now() + timeout;
        while let Some(m) = self.read_wire(deadline) {
            if pred(&m) {
                return Some(m);
            }
            self.backlog.push_back(m);
        }
        None
    }

    /// Fails if a message satisfying `pred` came before the response to request `barrier`
    /// (a request sent after whatever must not be answered: the server handles input in order,
    /// so anything it would have sent is on the wire before that response). Returns the
    /// response; the other messages stay in the backlog. This shows that something is NOT sent
    /// without waiting for a timer.
    pub fn assert_none_before(
        &mut self,
        what: &str,
        barrier: &Value,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        let (before, response) = self.until_response(barrier);
        if let Some(m) = before.iter().find(|m| pred(m)) {
            panic!("unexpected {what}: {m}");
        }
        self.backlog.extend(before);
        response
    }

    /// Puts messages back in the backlog (after those already there), for a later `wait_for`.
    pub fn backlog_extend(&mut self, messages: Vec<Value>) {
        self.backlog.extend(messages);
    }

    /// Every message, in wire order (backlog first), up to and including the response to `id`.
    pub fn until_response(&mut self, id: &Value) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        while let Some(m) = self.backlog.pop_front() {
            if answers(&m, id) {
                return (before, m);
            }
            before.push(m);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            match self.read_wire(deadline) {
                Some(m) if answers(&m, id) => return (before, m),
                Some(m) => before.push(m),
                None => panic!("no response to {id} within {TIMEOUT:?}; got {before:#?}"),
            }
        }
    }

    /// The response to request `id`.
    pub fn response(&mut self, id: &Value) -> Value {
        let id = id.clone();
        self.wait_for(&format!("response to {id}"), TIMEOUT, |m| answers(m, &id))
    }

    /// Sends a request and waits for its response (result or error).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.response(&id)
    }

    /// Sends a request that must succeed; returns its result.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params.clone());
        match r.get("result") {
            Some(v) => v.clone(),
            None => panic!("{method} {params} failed: {r}"),
        }
    }

    /// Sends a request that must fail; returns the error object.
    pub fn error(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params.clone());
        match r.get("error") {
            Some(e) => e.clone(),
            None => panic!("{method} {params} should have failed: {r}"),
        }
    }

    /// `tools/call` that must succeed at the JSON-RPC level; returns the result.
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// The server's next request with `method` (sampling, elicitation, ...).
    pub fn server_request(&mut self, method: &str) -> Value {
        self.wait_for(&format!("{method} request"), TIMEOUT, |m| {
            has_method(m, method) && m.get("id").is_some()
        })
    }

    /// Sends a ping and checks the `{}` answer: the server is alive and reading.
    pub fn assert_alive(&mut self) {
        assert_eq!(self.result("ping", json!({})), json!({}));
    }

    /// Closes the server's stdin and waits (bounded) for it to exit.
    pub fn close(mut self) -> ExitStatus {
        self.child.close_stdin();
        self.child
            .wait_timeout(Duration::from_secs(5))
            .expect("waiting for the server works")
            .expect("the server exits within 5 s of stdin closing")
    }

    /// A sender for writing from another thread (the flood test).
    pub fn sender(&self) -> crossbeam_channel::Sender<mcp_core::jsonrpc::Message> {
        self.conn.sender.clone()
    }

    /// The next message off the wire, ignoring the backlog (the flood test reads raw).
    pub fn next_raw(&mut self, deadline: Instant) -> Option<Value> {
        self.read_wire(deadline)
    }
}

/// The `_meta` of a 2026-07-28 request with these client capabilities.
pub fn modern_meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "everything-tests", "version": "1.0.0"}
    })
}

/// `params` with the 2026-07-28 `_meta` added (merged into an existing `_meta`).
pub fn modern(mut params: Value, capabilities: Value) -> Value {
    if params.is_null() {
        params = json!({});
    }
    let meta = modern_meta(capabilities);
    let slot = params
        .as_object_mut()
        .expect("params are an object")
        .entry("_meta")
        .or_insert_with(|| json!({}));
    for (k, v) in meta.as_object().expect("meta is an object") {
        slot[k] = v.clone();
    }
    params
}

/// The text of a tool result that holds exactly one text item.
pub fn only_text(result: &Value) -> &str {
    let content = result["content"].as_array().expect("content is an array");
    assert_eq!(content.len(), 1, "one content item expected in {result}");
    assert_eq!(
        content[0]["type"], "text",
        "a text item expected in {result}"
    );
    content[0]["text"].as_str().expect("text is a string")
}

/// The server driven through raw pipes: for bytes no well-behaved client would send.
pub struct RawServer {
    /// The process (taken by [`RawServer::wait_exit`]).
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    rx: Receiver<Result<Value, String>>,
}

impl RawServer {
    /// Starts the server with plain pipes; a thread decodes its stdout.
    pub fn spawn() -> RawServer {
        let mut child = Command::new(EVERYTHING)
            .env("RUST_LOG", "off")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the everything binary starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stdin = child.stdin.take();
        let (tx, rx) = sync_channel(1024);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).split(b'\n') {
                let Ok(line) = line else { return };
                let item = if line.first() == Some(&b'[') {
                    // A batch's answers: one JSON array, kept whole for the test to see.
                    serde_json::from_slice::<Value>(&line).map_err(|e| e.to_string())
                } else {
                    match MessageReader::new(&line[..]).next() {
                        Some(m) => m
                            .map(|m| serde_json::to_value(&m).unwrap_or(Value::Null))
                            .map_err(|e| e.to_string()),
                        None => continue,
                    }
                };
                if tx.send(item).is_err() {
                    return;
                }
            }
        });
        RawServer {
            child: Some(child),
            stdin,
            rx,
        }
    }

    /// Writes bytes as they are (add the newline yourself) and flushes.
    pub fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("the server reads its stdin");
        stdin.flush().expect("flush");
    }

    /// Writes one JSON message and a newline.
    pub fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_vec(v).expect("serializes");
        line.push(b'\n');
        self.write(&line);
    }

    /// The next message from the server, failing the test at the timeout.
    pub fn recv(&mut self) -> Value {
        match self.rx.recv_timeout(TIMEOUT) {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => panic!("the server wrote a line that is not a message: {e}"),
            Err(RecvTimeoutError::Timeout) => panic!("no message from the server in {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its stdout"),
        }
    }

    /// Opens a legacy session.
    pub fn initialize(&mut self) {
        self.initialize_as("2025-11-25");
    }

    /// Opens a legacy session of revision `version` (2025-03-26 for batches).
    pub fn initialize_as(&mut self, version: &str) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        );
        let r = self.recv();
        assert_eq!(r["id"], "init", "{r}");
        assert_eq!(r["result"]["protocolVersion"], version, "{r}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Checks that the server still answers a ping and a tool call correctly.
    pub fn assert_alive(&mut self, tag: &str) {
        let ping = format!("{tag}-ping");
        self.send(&json!({"jsonrpc": "2.0", "id": ping, "method": "ping"}));
        let r = self.recv();
        assert_eq!(r, json!({"jsonrpc": "2.0", "id": ping, "result": {}}));
        let call = format!("{tag}-call");
        self.send(
            &json!({"jsonrpc": "2.0", "id": call, "method": "tools/call",
            "params": {"name": "test_simple_text", "arguments": {}}}),
        );
        let r = self.recv();
        assert_eq!(r["id"], call, "{r}");
        assert_eq!(
            r["result"]["content"],
            json!([{"type": "text", "text": "This is a simple text response for testing."}])
        );
    }

    /// Closes stdin.
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Waits up to `timeout` for the process to exit; `None` if it did not (the drop then
    /// kills it). The server's stdout closes only when it exits, so the wait is for the reader
    /// thread's channel to disconnect (any last messages are discarded), then a reap.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let mut child = self.child.take()?;
        Some(child.wait().expect("waiting for the server works"))
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.stdin.take();
        if let Some(mut child) = self.child.take() {
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}
