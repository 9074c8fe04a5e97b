//! The `everything` server over real pipes in the 2026-07-28 era: no `initialize`; every
//! request carries the revision and the client's capabilities in `params._meta`.

mod common;

use std::time::Duration;

use common::{Client, FIXTURE_TOOLS, PNG, TIMEOUT, answers, has_method, modern, only_text};
use serde_json::{Value, json};

const SUPPORTED: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

fn full() -> Value {
    json!({"sampling": {}, "elicitation": {}})
}

/// A modern request with full capabilities; returns the whole response.
fn mcall(c: &mut Client, method: &str, params: Value) -> Value {
    c.call(method, modern(params, full()))
}

fn mresult(c: &mut Client, method: &str, params: Value) -> Value {
    let r = mcall(c, method, params);
    r.get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{method} failed: {r}"))
}

fn merror(c: &mut Client, method: &str, params: Value, caps: Value) -> Value {
    let r = c.call(method, modern(params, caps));
    r.get("error")
        .cloned()
        .unwrap_or_else(|| panic!("{method} should have failed: {r}"))
}

#[test]
fn discover_lists_versions_and_capabilities() {
    let mut c = Client::spawn();
    let r = mresult(&mut c, "server/discover", json!({}));
    assert_eq!(
        r,
        json!({
            "supportedVersions": SUPPORTED,
            "capabilities": {
                "completions": {}, "logging": {}, "prompts": {"listChanged": true},
                "resources": {"listChanged": true, "subscribe": true},
                "tools": {"listChanged": true},
                "extensions": {"io.modelcontextprotocol/tasks": {},
                               "io.modelcontextprotocol/skills": {"directoryRead": true}}
            },
            "instructions": "A test server that exercises every MCP feature.",
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {
                "name": "mcp-everything", "title": "Everything (mcp-blocking)",
                "version": env!("CARGO_PKG_VERSION"),
                "icons": [{"src": format!("data:image/png;base64,{}", common::PNG),
                           "mimeType": "image/png", "sizes": ["1x1"]}]}}
        })
    );
    // Discovery without the envelope works too (a client probing the server), and does not
    // settle the era: initialize is still possible afterwards.
    let r = c.result("server/discover", json!({}));
    assert_eq!(r["supportedVersions"], json!(SUPPORTED));
    let r = c.initialize("2025-11-25", json!({}));
    assert_eq!(r["protocolVersion"], "2025-11-25");
    c.assert_alive();
}

#[test]
fn lists_carry_result_type_and_cache_hints() {
    let mut c = Client::spawn();
    for (method, key, len) in [
        ("tools/list", "tools", FIXTURE_TOOLS.len()),
        ("prompts/list", "prompts", 5),
        // Three resources and the fixture skills' two SKILL.md.
        ("resources/list", "resources", 5),
        ("resources/templates/list", "resourceTemplates", 1),
    ] {
        let r = mresult(&mut c, method, json!({}));
        assert_eq!(r["resultType"], "complete", "{method}: {r}");
        assert_eq!(r["ttlMs"], 0, "{method}: {r}");
        assert_eq!(r["cacheScope"], "private", "{method}: {r}");
        let n = r[key].as_array().map_or(0, Vec::len);
        // The dynamic tool may already be registered on a slow machine.
        assert!(
            n == len || (key == "tools" && n == len + 1),
            "{method}: {r}"
        );
    }
    let r = mresult(&mut c, "tools/list", json!({}));
    let names: Vec<&str> = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(&names[..FIXTURE_TOOLS.len()], &FIXTURE_TOOLS[..]);
    let e = merror(&mut c, "tools/list", json!({"cursor": "1.00"}), full());
    assert_eq!(e["code"], -32602, "{e}");
}

#[test]
fn results_carry_result_type() {
    let mut c = Client::spawn();
    let r = mresult(
        &mut c,
        "tools/call",
        json!({"name": "test_simple_text", "arguments": {}}),
    );
    assert_eq!(
        r,
        json!({"resultType": "complete", "content": [{"type": "text",
            "text": "This is a simple text response for testing."}]})
    );
    let r = mresult(&mut c, "tools/call", json!({"name": "test_error_handling"}));
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["isError"], true);
    let r = mresult(
        &mut c,
        "resources/read",
        json!({"uri": "test://static-binary"}),
    );
    assert_eq!(
        r,
        json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "contents": [{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}]})
    );
    let r = mresult(&mut c, "prompts/get", json!({"name": "test_simple_prompt"}));
    assert_eq!(r["resultType"], "complete");
    assert_eq!(
        r["messages"][0]["content"]["text"],
        "This is a simple prompt for testing."
    );
    let r = mresult(
        &mut c,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
               "argument": {"name": "arg1", "value": "test"}}),
    );
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["completion"]["values"], json!(["test", "testValue1"]));
    // Resource not found is -32602 in this revision (-32002 is retired).
    let e = merror(
        &mut c,
        "resources/read",
        json!({"uri": "test://nope"}),
        full(),
    );
    assert_eq!(e["code"], -32602, "{e}");
}

#[test]
fn envelope_errors() {
    let mut c = Client::spawn();
    // Unsupported revision: -32022 with the supported list and the requested one.
    let r = c.call(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01",
                         "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    let e = &r["error"];
    assert_eq!(e["code"], -32022, "{r}");
    assert_eq!(e["data"]["supported"], json!(SUPPORTED), "{r}");
    assert_eq!(e["data"]["requested"], "2099-01-01", "{r}");
    // Missing clientCapabilities: refused, never guessed.
    let r = c.call(
        "tools/call",
        json!({"name": "test_simple_text",
               "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // Methods removed in 2026-07-28.
    for method in ["ping", "logging/setLevel", "resources/subscribe"] {
        let e = merror(
            &mut c,
            method,
            json!({"uri": "test://watched-resource", "level": "info"}),
            full(),
        );
        assert_eq!(e["code"], -32601, "{method}: {e}");
    }
    let e = merror(&mut c, "no/such/method", json!({}), full());
    assert_eq!(e["code"], -32601, "{e}");
    let e = merror(&mut c, "tools/call", json!({"name": "nope"}), full());
    assert_eq!(e["code"], -32602, "{e}");
    // The connection is modern now: initialize and envelope-less requests are refused.
    let e = c.error(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "x", "version": "1"}}),
    );
    assert_eq!(e["code"], -32600, "{e}");
    let e = c.error("tools/list", json!({}));
    assert_eq!(e["code"], -32602, "{e}");
    // And it still works.
    let r = mresult(&mut c, "tools/call", json!({"name": "test_simple_text"}));
    assert_eq!(only_text(&r), "This is a simple text response for testing.");
}

/// The first round of a tool that needs client input: returns (inputRequests, requestState).
fn input_round(c: &mut Client, params: &Value) -> (Value, String) {
    let r = mresult(c, "tools/call", params.clone());
    assert_eq!(r["resultType"], "input_required", "{r}");
    assert!(r.get("content").is_none(), "{r}");
    let state = r["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("requestState missing: {r}"))
        .to_owned();
    (r["inputRequests"].clone(), state)
}

fn retry(params: &Value, responses: Value, state: &str) -> Value {
    let mut p = params.clone();
    p["inputResponses"] = responses;
    p["requestState"] = json!(state);
    p
}

#[test]
fn elicitation_is_an_input_round() {
    let mut c = Client::spawn();
    let params = json!({"name": "test_elicitation",
                        "arguments": {"message": "Please provide your information"}});
    let (requests, state) = input_round(&mut c, &params);
    assert_eq!(
        requests,
        json!({"input-0": {"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "Please provide your information",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}
                },
                "required": ["username", "email"]
            }
        }}})
    );
    // No server-to-client request goes over the wire in this era.
    let barrier = c.request("ping", modern(json!({}), full()));
    c.assert_none_before("a server request", &barrier, |m| {
        m.get("method").is_some() && m.get("id").is_some()
    });
    let answer = json!({"input-0": {"action": "accept",
        "content": {"username": "testuser", "email": "test@example.com"}}});
    // The retry uses a new id (call() always does), the same params and the echoed state.
    let r = mresult(&mut c, "tools/call", retry(&params, answer.clone(), &state));
    assert_eq!(r["resultType"], "complete", "{r}");
    assert_eq!(
        only_text(&r),
        r#"User response: action=accept, content={"email":"test@example.com","username":"testuser"}"#
    );

    // A tampered state is refused.
    let mut bad = state.clone().into_bytes();
    let last = bad.len() - 1;
    bad[last] = if bad[last] == b'0' { b'1' } else { b'0' };
    let bad = String::from_utf8(bad).unwrap();
    let e = merror(
        &mut c,
        "tools/call",
        retry(&params, answer.clone(), &bad),
        full(),
    );
    assert_eq!(e["code"], -32602, "{e}");
    // So is a genuine state replayed for other arguments.
    let other = json!({"name": "test_elicitation", "arguments": {"message": "something else"}});
    let e = merror(
        &mut c,
        "tools/call",
        retry(&other, answer.clone(), &state),
        full(),
    );
    assert_eq!(e["code"], -32602, "{e}");
    // And garbage.
    let e = merror(
        &mut c,
        "tools/call",
        retry(&params, answer, "not-a-state"),
        full(),
    );
    assert_eq!(e["code"], -32602, "{e}");
}

#[test]
fn elicitation_without_the_capability_is_32021() {
    let mut c = Client::spawn();
    for (tool, args) in [
        ("test_elicitation", json!({"message": "m"})),
        ("test_elicitation_sep1034_defaults", json!({})),
    ] {
        let e = merror(
            &mut c,
            "tools/call",
            json!({"name": tool, "arguments": args}),
            json!({"sampling": {}}),
        );
        assert_eq!(e["code"], -32021, "{tool}: {e}");
        assert_eq!(
            e["data"]["requiredCapabilities"],
            json!({"elicitation": {}}),
            "{e}"
        );
    }
    let e = merror(
        &mut c,
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "p"}}),
        json!({"elicitation": {}}),
    );
    assert_eq!(e["code"], -32021, "{e}");
    assert_eq!(e["data"]["requiredCapabilities"], json!({"sampling": {}}));
    // Capabilities are per request: the same connection with them succeeds.
    let (requests, _) = input_round(
        &mut c,
        &json!({"name": "test_sampling", "arguments": {"prompt": "p"}}),
    );
    assert_eq!(requests["input-0"]["method"], "sampling/createMessage");
}

#[test]
fn sampling_is_an_input_round() {
    let mut c = Client::spawn();
    let params = json!({"name": "test_sampling",
                        "arguments": {"prompt": "Test prompt for sampling"}});
    let (requests, state) = input_round(&mut c, &params);
    assert_eq!(
        requests,
        json!({"input-0": {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user",
                "content": {"type": "text", "text": "Test prompt for sampling"}}],
            "maxTokens": 100
        }}})
    );
    let answer = json!({"input-0": {"role": "assistant", "model": "test-model",
        "stopReason": "endTurn",
        "content": {"type": "text", "text": "This is a test response from the client"}}});
    let r = mresult(&mut c, "tools/call", retry(&params, answer, &state));
    assert_eq!(
        r,
        json!({"resultType": "complete", "content": [{"type": "text",
            "text": "LLM response: This is a test response from the client"}]})
    );
}

#[test]
fn progress_and_opt_in_logging() {
    let mut c = Client::spawn();
    let mut params = modern(json!({"name": "test_tool_with_progress"}), full());
    params["_meta"]["progressToken"] = json!("m-progress");
    let id = c.request("tools/call", params);
    let (before, resp) = c.until_response(&id);
    let steps: Vec<f64> = before
        .iter()
        .filter(|m| has_method(m, "notifications/progress"))
        .inspect(|m| assert_eq!(m["params"]["progressToken"], "m-progress"))
        .filter_map(|m| m["params"]["progress"].as_f64())
        .collect();
    assert_eq!(steps, vec![0.0, 50.0, 100.0]);
    assert_eq!(resp["result"]["resultType"], "complete");

    // Without logLevel in _meta, no log messages in this era.
    let id = c.request(
        "tools/call",
        modern(json!({"name": "test_tool_with_logging"}), full()),
    );
    let (before, resp) = c.until_response(&id);
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(
        only_text(&resp["result"]),
        "Tool with logging executed successfully"
    );
    // With it, the three info messages.
    let mut params = modern(json!({"name": "test_tool_with_logging"}), full());
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let id = c.request("tools/call", params);
    let (before, _) = c.until_response(&id);
    let data: Vec<&Value> = before
        .iter()
        .filter(|m| has_method(m, "notifications/message"))
        .map(|m| &m["params"]["data"])
        .collect();
    assert_eq!(
        data,
        vec![
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
        ]
    );
    // And a level above info silences them.
    let mut params = modern(json!({"name": "test_tool_with_logging"}), full());
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    let id = c.request("tools/call", params);
    let (before, _) = c.until_response(&id);
    assert!(before.is_empty(), "{before:?}");
}

#[test]
fn listen_acknowledges_then_streams_tagged_notifications() {
    let mut c = Client::spawn_manual_clock();
    let id = c.request(
        "subscriptions/listen",
        modern(
            json!({"notifications": {"toolsListChanged": true,
                "resourceSubscriptions": ["test://watched-resource"]}}),
            full(),
        ),
    );
    let first = c.wait_for("first message", TIMEOUT, |_| true);
    assert_eq!(
        first,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {
            "notifications": {"toolsListChanged": true,
                              "resourceSubscriptions": ["test://watched-resource"]},
            "_meta": {"io.modelcontextprotocol/subscriptionId": id}
        }})
    );
    // The dynamic tool (the clock's first tick) is announced on the stream.
    let tick = c.request("tools/call", modern(json!({"name": "test_tick"}), full()));
    let (before, _) = c.until_response(&tick);
    c.backlog_extend(before);
    let n = c.wait_for("tools/list_changed", Duration::ZERO, |m| {
        has_method(m, "notifications/tools/list_changed")
    });
    assert_eq!(
        n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
    // Each later tick changes the watched resource.
    let is_update = |m: &Value| has_method(m, "notifications/resources/updated");
    let tick = c.request("tools/call", modern(json!({"name": "test_tick"}), full()));
    let (before, _) = c.until_response(&tick);
    c.backlog_extend(before);
    let n = c.wait_for("resources/updated", Duration::ZERO, is_update);
    assert_eq!(
        n["params"],
        json!({"uri": "test://watched-resource",
               "_meta": {"io.modelcontextprotocol/subscriptionId": id}})
    );
    // The listen request itself is never answered while open.
    let target = id.clone();
    assert!(
        c.try_wait_for(Duration::ZERO, &|m| answers(m, &target))
            .is_none()
    );
    // Cancelling the listen request ends the stream.
    c.notify("notifications/cancelled", Some(json!({"requestId": id})));
    let tick = c.request("tools/call", modern(json!({"name": "test_tick"}), full()));
    let r = c.assert_none_before("update after the listen was cancelled", &tick, is_update);
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
}

#[test]
fn listen_honours_only_what_was_asked() {
    let mut c = Client::spawn_manual_clock();
    let id = c.request(
        "subscriptions/listen",
        modern(
            json!({"notifications": {"promptsListChanged": true}}),
            full(),
        ),
    );
    let first = c.wait_for("acknowledgement", TIMEOUT, |_| true);
    assert_eq!(
        first["params"]["notifications"],
        json!({"promptsListChanged": true})
    );
    assert_eq!(
        first["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
    // The clock's first tick changes the tool list, but this stream did not ask for tools.
    let tick = c.request("tools/call", modern(json!({"name": "test_tick"}), full()));
    c.assert_none_before("tools/list_changed", &tick, |m| {
        has_method(m, "notifications/tools/list_changed")
    });
}

#[test]
fn stdin_eof_ends_the_process_with_success() {
    let mut c = Client::spawn();
    let r = mresult(&mut c, "server/discover", json!({}));
    assert_eq!(r["resultType"], "complete");
    let status = c.close();
    assert!(status.success(), "{status:?}");
}

/// Calls a tool (or gets a prompt) until it completes, answering each input request with
/// `answer(key, method)`; returns the rounds' inputRequests and states, and the final result.
fn rounds(
    c: &mut Client,
    method: &str,
    params: &Value,
    caps: Value,
    answer: impl Fn(&str, &str) -> Value,
) -> (Vec<(Value, String)>, Value) {
    let mut seen = Vec::new();
    let mut p = params.clone();
    loop {
        let r = c.call(method, modern(p.clone(), caps.clone()));
        let r = r
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{params}: {r}"));
        if r["resultType"] != "input_required" {
            return (seen, r);
        }
        assert!(seen.len() < 5, "too many rounds: {r}");
        let requests = r["inputRequests"].clone();
        let state = r["requestState"].as_str().unwrap_or("").to_owned();
        let mut responses = serde_json::Map::new();
        for (k, req) in requests.as_object().unwrap() {
            responses.insert(k.clone(), answer(k, req["method"].as_str().unwrap()));
        }
        p = retry(params, Value::Object(responses), &state);
        seen.push((requests, state));
    }
}

/// The answers the conformance suite gives.
fn suite_answer(key: &str, method: &str) -> Value {
    match (key, method) {
        (_, "sampling/createMessage") => json!({"role": "assistant", "model": "test-model",
            "stopReason": "endTurn", "content": {"type": "text", "text": "Bonjour"}}),
        (_, "roots/list") => json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}),
        ("step2", _) => json!({"action": "accept", "content": {"color": "blue"}}),
        ("confirm", _) => json!({"action": "accept", "content": {"ok": true}}),
        ("user_context", _) => json!({"action": "accept", "content": {"context": "test context"}}),
        _ => json!({"action": "accept", "content": {"name": "Alice"}}),
    }
}

/// An input request's key and method.
type Asked = (String, String);

fn keys(requests: &Value) -> Vec<Asked> {
    requests
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["method"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn input_required_fixtures_ask_under_the_suites_keys() {
    let mut c = Client::spawn();
    let all = json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}});
    let el = |k: &str| (k.to_owned(), "elicitation/create".to_owned());
    // Per tool: what each round asks (key, method), and the final text.
    let cases: [(&str, Vec<Vec<Asked>>, &str); 7] = [
        (
            "test_input_required_result_elicitation",
            vec![vec![el("user_name")]],
            "Hello, Alice!",
        ),
        (
            "test_input_required_result_sampling",
            vec![vec![(
                "capital_question".into(),
                "sampling/createMessage".into(),
            )]],
            "The model said: Bonjour",
        ),
        (
            "test_input_required_result_list_roots",
            vec![vec![("client_roots".into(), "roots/list".into())]],
            "The client has 1 root(s): file:///test/root",
        ),
        (
            "test_input_required_result_request_state",
            vec![vec![el("confirm")]],
            "state-ok: confirmed=true",
        ),
        (
            "test_input_required_result_multiple_inputs",
            vec![vec![
                ("client_roots".into(), "roots/list".into()),
                ("greeting".into(), "sampling/createMessage".into()),
                el("user_name"),
            ]],
            "Bonjour Alice! The client has 1 root(s): file:///test/root",
        ),
        (
            "test_input_required_result_multi_round",
            vec![vec![el("step1")], vec![el("step2")]],
            "Alice likes blue",
        ),
        (
            "test_input_required_result_tampered_state",
            vec![vec![el("confirm")]],
            "confirmed=true",
        ),
    ];
    for (tool, expected, text) in cases {
        let params = json!({"name": tool, "arguments": {}});
        let (seen, done) = rounds(&mut c, "tools/call", &params, all.clone(), suite_answer);
        let asked: Vec<_> = seen.iter().map(|(r, _)| keys(r)).collect();
        assert_eq!(asked, expected, "{tool}");
        assert!(seen.iter().all(|(_, s)| !s.is_empty()), "{tool}");
        assert_eq!(done["resultType"], "complete", "{tool}");
        assert_eq!(only_text(&done), text, "{tool}");
    }
    // Each round of the two-round tool has a state of its own.
    let params = json!({"name": "test_input_required_result_multi_round", "arguments": {}});
    let (seen, _) = rounds(&mut c, "tools/call", &params, all.clone(), suite_answer);
    assert_ne!(seen[0].1, seen[1].1);
    // Only what the request's capabilities allow is asked for.
    let params = json!({"name": "test_input_required_result_capabilities", "arguments": {}});
    let (seen, done) = rounds(
        &mut c,
        "tools/call",
        &params,
        json!({"sampling": {}}),
        suite_answer,
    );
    assert_eq!(
        keys(&seen[0].0),
        [("greeting".to_owned(), "sampling/createMessage".to_owned())]
    );
    assert_eq!(only_text(&done), "greeting=Bonjour");
    // A prompt takes part too, and completes with its messages.
    let params = json!({"name": "test_input_required_result_prompt"});
    let (seen, done) = rounds(&mut c, "prompts/get", &params, all.clone(), suite_answer);
    assert_eq!(keys(&seen[0].0), [el("user_context")]);
    assert_eq!(
        done["messages"][0]["content"]["text"],
        "Use this context: test context"
    );
    // An answer under another key: asked again; an answer of the wrong shape: -32602.
    let params = json!({"name": "test_input_required_result_elicitation", "arguments": {},
        "inputResponses": {"wrong_key": {"action": "accept", "content": {"data": "wrong"}}}});
    let r = mresult(&mut c, "tools/call", params);
    assert_eq!(r["resultType"], "input_required", "{r}");
    assert!(r["inputRequests"].get("user_name").is_some(), "{r}");
    let params = json!({"name": "test_input_required_result_elicitation", "arguments": {},
        "inputResponses": {"user_name": 12345}});
    let e = merror(&mut c, "tools/call", params, all);
    assert_eq!(e["code"], -32602, "{e}");
}

#[test]
fn stateless_diagnostic_fixtures() {
    let mut c = Client::spawn();
    // Sampling not declared: -32021 naming it, before the tool does anything.
    let e = merror(
        &mut c,
        "tools/call",
        json!({"name": "test_missing_capability", "arguments": {}}),
        json!({}),
    );
    assert_eq!(e["code"], -32021, "{e}");
    assert_eq!(e["data"]["requiredCapabilities"], json!({"sampling": {}}));
    // The question goes back as an input-required result, never as a request of our own.
    let id = c.request(
        "tools/call",
        modern(
            json!({"name": "test_streaming_elicitation", "arguments": {}}),
            json!({"elicitation": {}}),
        ),
    );
    let (before, resp) = c.until_response(&id);
    assert!(before.iter().all(|m| m.get("id").is_none()), "{before:?}");
    assert_eq!(resp["result"]["resultType"], "input_required", "{resp}");
    // No logLevel: a plain result with no log messages before it.
    let id = c.request(
        "tools/call",
        modern(
            json!({"name": "test_logging_tool", "arguments": {}}),
            json!({}),
        ),
    );
    let (before, resp) = c.until_response(&id);
    assert!(
        !before
            .iter()
            .any(|m| has_method(m, "notifications/message")),
        "{before:?}"
    );
    assert_eq!(only_text(&resp["result"]), "Logging tool finished");
}

#[test]
fn list_change_triggers_notify_the_listen_streams_that_asked() {
    let mut c = Client::spawn();
    let listen = |c: &mut Client, filter: Value| {
        let id = c.request(
            "subscriptions/listen",
            modern(json!({"notifications": filter}), full()),
        );
        c.wait_for("acknowledgement", TIMEOUT, |m| {
            has_method(m, "notifications/subscriptions/acknowledged")
        });
        id
    };
    let prompts = listen(&mut c, json!({"promptsListChanged": true}));
    // A trigger changes its list every time, so every call is announced; the change is sent
    // from within the call, so it comes before the call's answer.
    let on = |m: &Value, method: &str, sub: &Value| {
        has_method(m, method)
            && m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == *sub
    };
    for _ in 0..2 {
        let id = c.request(
            "tools/call",
            modern(json!({"name": "test_trigger_prompt_change"}), full()),
        );
        let (before, _) = c.until_response(&id);
        assert!(
            before
                .iter()
                .any(|m| on(m, "notifications/prompts/list_changed", &prompts)),
            "{before:?}"
        );
    }
    // A tool change is not for a stream that asked only for prompts.
    let id = c.request(
        "tools/call",
        modern(json!({"name": "test_trigger_tool_change"}), full()),
    );
    let (before, resp) = c.until_response(&id);
    assert!(
        !before
            .iter()
            .any(|m| has_method(m, "notifications/tools/list_changed")),
        "{before:?}"
    );
    assert_eq!(only_text(&resp["result"]), "test_toggled_tool added");
    let tools = listen(&mut c, json!({"toolsListChanged": true}));
    let id = c.request(
        "tools/call",
        modern(json!({"name": "test_trigger_tool_change"}), full()),
    );
    let (before, resp) = c.until_response(&id);
    assert!(
        before
            .iter()
            .any(|m| on(m, "notifications/tools/list_changed", &tools)),
        "{before:?}"
    );
    assert_eq!(only_text(&resp["result"]), "test_toggled_tool removed");
}

#[test]
fn a_long_tool_is_a_task_for_a_client_that_follows_tasks_and_a_plain_call_otherwise() {
    let mut c = Client::spawn();
    let tasks = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let slow = json!({"name": "slow_compute", "arguments": {"seconds": 3600, "label": "long"}});
    let handle = c.call("tools/call", modern(slow.clone(), tasks.clone()));
    let task = &handle["result"];
    assert_eq!(task["resultType"], "task", "{handle}");
    assert_eq!(task["status"], "working", "{handle}");
    let id = task["taskId"].as_str().unwrap().to_owned();
    let ack = c.call("tasks/cancel", modern(json!({"taskId": id}), tasks.clone()));
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let got = c.call("tasks/get", modern(json!({"taskId": id}), tasks.clone()));
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    // Without the extension: the same tool answers at once, and tasks/* are -32021.
    let quick = json!({"name": "slow_compute", "arguments": {"seconds": 0, "label": "now"}});
    let plain = mresult(&mut c, "tools/call", quick);
    assert_eq!(
        plain["content"][0]["text"], "computed now after 0s",
        "{plain}"
    );
    let e = merror(&mut c, "tasks/get", json!({"taskId": id}), full());
    assert_eq!(e["code"], -32021, "{e}");
}
