//! `client conformance URL`, the command the official conformance suite runs in client mode,
//! against small mock servers (tiny_http on 127.0.0.1) that record every POST with its
//! headers, as the suite's own mocks do: the 2026-07-28 negotiation after a -32022 refusal
//! (`request-metadata`), the context's `toolCalls` with their `Mcp-Param-*` headers
//! (`http-custom-headers`), the verbatim schema echo (`json-schema-2020-12-preservation`) and
//! the list-only run (`json-schema-ref-no-deref`).

use std::collections::HashMap;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Value, json};

/// One POST the mock received: its headers (names in lower case) and its JSON body.
#[derive(Debug, Clone)]
struct Seen {
    headers: HashMap<String, String>,
    body: Value,
}

impl Seen {
    fn method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
}

/// A mock MCP server; `answer` gives the HTTP status and JSON body for each request (None:
/// 202 with no body, for notifications).
struct Mock {
    server: Arc<tiny_http::Server>,
    seen: Arc<Mutex<Vec<Seen>>>,
    thread: Option<JoinHandle<()>>,
    url: String,
}

type Answer = Box<dyn FnMut(usize, &Value) -> Option<(u16, Value)> + Send>;

impl Mock {
    fn start(mut answer: Answer) -> Mock {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("mock listens"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s, log) = (Arc::clone(&server), Arc::clone(&seen));
        let thread = std::thread::spawn(move || {
            for mut req in s.incoming_requests() {
                if *req.method() != tiny_http::Method::Post {
                    let _ = req.respond(tiny_http::Response::empty(405));
                    continue;
                }
                let mut text = String::new();
                let _ = req.as_reader().read_to_string(&mut text);
                let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let headers = req
                    .headers()
                    .iter()
                    .map(|h| {
                        (
                            h.field.as_str().as_str().to_ascii_lowercase(),
                            h.value.as_str().to_owned(),
                        )
                    })
                    .collect();
                let n = {
                    let mut log = log.lock().unwrap();
                    log.push(Seen {
                        headers,
                        body: body.clone(),
                    });
                    log.len() - 1
                };
                let reply = match answer(n, &body) {
                    None => tiny_http::Response::from_data(Vec::new()).with_status_code(202),
                    Some((status, json)) => tiny_http::Response::from_data(json.to_string())
                        .with_status_code(status)
                        .with_header(
                            "Content-Type: application/json"
                                .parse::<tiny_http::Header>()
                                .unwrap(),
                        ),
                };
                let _ = req.respond(reply);
            }
        });
        Mock {
            server,
            seen,
            thread: Some(thread),
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn result(body: &Value, result: Value) -> Option<(u16, Value)> {
    let id = body.get("id")?;
    Some((200, json!({"jsonrpc": "2.0", "id": id, "result": result})))
}

fn discover_result(body: &Value) -> Option<(u16, Value)> {
    result(
        body,
        json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
               "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}),
    )
}

/// A 2026-07-28 server listing `tools` and answering every call with a text.
fn tools_server(tools: Value) -> Mock {
    Mock::start(Box::new(move |_, body| match body["method"].as_str() {
        Some("server/discover") => discover_result(body),
        Some("tools/list") => result(body, json!({"tools": tools, "resultType": "complete"})),
        Some("tools/call") => result(
            body,
            json!({"content": [{"type": "text", "text": "ok"}], "resultType": "complete"}),
        ),
        _ => None,
    }))
}

/// Runs `client conformance URL` as the suite does, with `env` added.
fn conformance(url: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_client"));
    cmd.args(["conformance", url]);
    for name in [
        "MCP_CONFORMANCE_SCENARIO",
        "MCP_CONFORMANCE_CONTEXT",
        "MCP_CONFORMANCE_PROTOCOL_VERSION",
    ] {
        cmd.env_remove(name);
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("the client binary runs")
}

fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The suite's `request-metadata` mock: its first POST, whatever it is, is refused with 400
/// and -32022 listing 2026-07-28. The client must retry with that revision, and every POST
/// must carry the `MCP-Protocol-Version` header and the `_meta` envelope (with clientInfo).
#[test]
fn a_refused_first_request_is_retried_with_the_listed_revision() {
    let mock = Mock::start(Box::new(|n, body| {
        if n == 0 {
            let id = body.get("id").cloned().unwrap_or(Value::Null);
            return Some((
                400,
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
                    "message": "Unsupported protocol version",
                    "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}}),
            ));
        }
        match body["method"].as_str() {
            Some("server/discover") => discover_result(body),
            Some("tools/list") => result(body, json!({"tools": [], "resultType": "complete"})),
            _ => result(body, json!({"resultType": "complete"})),
        }
    }));
    let out = conformance(
        &mock.url,
        &[("MCP_CONFORMANCE_SCENARIO", "request-metadata")],
    );
    assert_success(&out);
    let seen = mock.seen();
    let methods: Vec<&str> = seen.iter().map(Seen::method).collect();
    assert_eq!(
        methods[..2],
        ["server/discover", "server/discover"],
        "{methods:?}"
    );
    assert!(!methods.contains(&"initialize"), "{methods:?}");
    for s in &seen {
        let meta = &s.body["params"]["_meta"];
        assert_eq!(
            s.headers.get("mcp-protocol-version").map(String::as_str),
            Some("2026-07-28"),
            "{}",
            s.body
        );
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
        assert!(meta["io.modelcontextprotocol/clientInfo"]["name"].is_string());
    }
}

fn header_tools() -> Value {
    let prop = |ty: &str, header: &str| json!({"type": ty, "x-mcp-header": header});
    json!([
        {"name": "test_custom_headers", "inputSchema": {"type": "object", "properties": {
            "region": prop("string", "Region"), "priority": prop("integer", "Priority"),
            "verbose": prop("boolean", "Verbose"), "debug": prop("boolean", "Debug"),
            "empty_val": prop("string", "EmptyVal"), "method_val": prop("string", "Method"),
            "float_val": {"type": "number"},
            "non_ascii_val": prop("string", "NonAscii"),
            "whitespace_val": prop("string", "Whitespace"),
            "leading_space_val": prop("string", "LeadingSpace"),
            "trailing_space_val": prop("string", "TrailingSpace"),
            "internal_space_val": prop("string", "InternalSpace"),
            "control_char_val": prop("string", "ControlChar"),
            "crlf_val": prop("string", "CrLf"), "tab_val": prop("string", "Tab"),
            "query": {"type": "string"}}}},
        {"name": "test_custom_headers_null", "inputSchema": {"type": "object", "properties": {
            "region": prop("string", "Region"), "priority": prop("integer", "Priority"),
            "verbose": prop("boolean", "Verbose"), "query": {"type": "string"}}}},
        {"name": "not_in_the_context", "inputSchema": {"type": "object"}}
    ])
}

/// `http-custom-headers`: exactly the context's calls, with its arguments; a null argument
/// gets no header, values that are not safe header text are base64-encoded.
#[test]
fn the_context_tool_calls_are_made_with_their_param_headers() {
    let mock = tools_server(header_tools());
    let context = json!({"name": "http-custom-headers", "toolCalls": [
        {"name": "test_custom_headers", "arguments": {"region": "us-west1", "priority": 42,
            "verbose": false, "debug": true, "empty_val": "", "method_val": "test-method",
            "float_val": 1.25, "non_ascii_val": "Hello, 世界", "whitespace_val": " padded ",
            "leading_space_val": " us-west1", "trailing_space_val": "us-west1 ",
            "internal_space_val": "us west 1", "control_char_val": "line1\nline2",
            "crlf_val": "line1\r\nline2", "tab_val": "\tindented",
            "query": "SELECT * FROM users"}},
        {"name": "test_custom_headers_null", "arguments": {"region": "us-east1", "priority": 1,
            "verbose": null, "query": "SELECT 1"}}]})
    .to_string();
    let out = conformance(
        &mock.url,
        &[
            ("MCP_CONFORMANCE_SCENARIO", "http-custom-headers"),
            ("MCP_CONFORMANCE_CONTEXT", &context),
        ],
    );
    assert_success(&out);
    let calls: Vec<Seen> = mock
        .seen()
        .into_iter()
        .filter(|s| s.method() == "tools/call")
        .collect();
    let names: Vec<&str> = calls
        .iter()
        .map(|s| s.body["params"]["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names, ["test_custom_headers", "test_custom_headers_null"]);
    let h = &calls[0].headers;
    let expected = [
        ("region", "us-west1"),
        ("priority", "42"),
        ("verbose", "false"),
        ("debug", "true"),
        ("emptyval", ""),
        ("method", "test-method"),
        ("nonascii", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ("whitespace", "=?base64?IHBhZGRlZCA=?="),
        ("leadingspace", "=?base64?IHVzLXdlc3Qx?="),
        ("trailingspace", "=?base64?dXMtd2VzdDEg?="),
        ("internalspace", "us west 1"),
        ("controlchar", "=?base64?bGluZTEKbGluZTI=?="),
        ("crlf", "=?base64?bGluZTENCmxpbmUy?="),
        ("tab", "=?base64?CWluZGVudGVk?="),
    ];
    for (name, value) in expected {
        assert_eq!(
            h.get(&format!("mcp-param-{name}")).map(String::as_str),
            Some(value),
            "Mcp-Param-{name}"
        );
    }
    assert!(!h.contains_key("mcp-param-floatval") && !h.contains_key("mcp-param-query"));
    assert_eq!(calls[0].body["params"]["arguments"]["empty_val"], "");
    let h = &calls[1].headers;
    assert_eq!(
        h.get("mcp-param-region").map(String::as_str),
        Some("us-east1")
    );
    assert!(!h.contains_key("mcp-param-verbose"), "{h:?}");
    assert_eq!(calls[1].body["params"]["arguments"]["verbose"], Value::Null);
}

/// The fixture of `json-schema-2020-12-preservation`.
fn rich_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"}, "email": {"type": "string"},
            "remote": {"$ref": "http://127.0.0.1:9/never-fetched.json"}},
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}},
               "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
        "x-vendor": {"kept": [1, 2.5, null]}
    })
}

/// `json-schema-2020-12-preservation`: the focal tool's inputSchema goes back to the echo
/// tool as received, every keyword kept and no `$ref` resolved.
#[test]
fn the_focal_schema_is_echoed_verbatim() {
    let mock = tools_server(json!([
        {"name": "json_schema_2020_12_tool", "inputSchema": rich_schema()},
        {"name": "json_schema_echo", "inputSchema": {"type": "object",
            "properties": {"schema": {"type": "object"}}, "required": ["schema"]}}
    ]));
    let out = conformance(
        &mock.url,
        &[(
            "MCP_CONFORMANCE_SCENARIO",
            "json-schema-2020-12-preservation",
        )],
    );
    assert_success(&out);
    let calls: Vec<Seen> = mock
        .seen()
        .into_iter()
        .filter(|s| s.method() == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].body["params"]["name"], "json_schema_echo");
    assert_eq!(
        calls[0].body["params"]["arguments"]["schema"],
        rich_schema()
    );
}

/// `json-schema-ref-no-deref`: the mock answers `tools/list` alone; the client lists and
/// stops, exiting 0.
#[test]
fn the_no_deref_scenario_lists_and_calls_nothing() {
    let mock = Mock::start(Box::new(|_, body| match body["method"].as_str() {
        Some("server/discover") => discover_result(body),
        Some("tools/list") => result(
            body,
            json!({"tools": [{"name": "lookup_user", "inputSchema": rich_schema()}],
                   "resultType": "complete"}),
        ),
        Some(_) if body.get("id").is_some() => Some((
            200,
            json!({"jsonrpc": "2.0", "id": body["id"],
                   "error": {"code": -32601, "message": "Method not found"}}),
        )),
        _ => None,
    }));
    let out = conformance(
        &mock.url,
        &[("MCP_CONFORMANCE_SCENARIO", "json-schema-ref-no-deref")],
    );
    assert_success(&out);
    let methods: Vec<String> = mock.seen().iter().map(|s| s.method().to_owned()).collect();
    assert!(methods.contains(&"tools/list".to_owned()), "{methods:?}");
    assert!(!methods.contains(&"tools/call".to_owned()), "{methods:?}");
}
