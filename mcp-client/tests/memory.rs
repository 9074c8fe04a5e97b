//! The client against scripted servers over an in-memory pipe (`mcp_stdio::memory`): the
//! `input_required` retry loop, legacy server requests, timeouts, cancellation, pagination and
//! a server that goes away. Each scripted server sees the exact wire messages.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};
use mcp_client::{
    CallOptions, CancelHandle, ChannelTransport, Client, EraCache, Error, Revision, Timeout,
    Unexpected,
};
use mcp_core::types::{
    CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult, Role, SamplingContent,
};
use serde_json::{Map, Value, json};

mod common;
use common::{Script, WAIT, msg, result, scripted, to_value};

/// A scripted server (see `common::scripted`) of the era asked for.
fn server(modern: bool, script: Script) -> (ChannelTransport, Receiver<Value>) {
    scripted(
        modern,
        json!({"tools": {}, "prompts": {}, "resources": {}}),
        json!({"tools": {}, "resources": {"subscribe": true}}),
        script,
    )
}

/// The next message the server received with this method.
fn next_with(seen: &Receiver<Value>, method: &str) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let v = seen
            .recv_deadline(deadline)
            .unwrap_or_else(|_| panic!("the server never received {method}"));
        if v["method"] == method {
            return v;
        }
    }
}

fn sampling_answer() -> CreateMessageResult {
    CreateMessageResult {
        role: Role::Assistant,
        content: serde_json::from_value::<SamplingContent>(
            json!({"type": "text", "text": "sampled"}),
        )
        .unwrap(),
        model: "test-model".into(),
        stop_reason: Some("endTurn".into()),
        result_type: None,
        meta: None,
        extra: Map::new(),
    }
}

fn elicit_answer(p: ElicitRequestParams) -> Result<ElicitResult, mcp_core::jsonrpc::ErrorObject> {
    let ElicitRequestParams::Form(form) = p else {
        return Ok(ElicitResult::action(ElicitAction::Decline));
    };
    let mut content = Map::new();
    content.insert("asked".into(), json!(form.message));
    Ok(ElicitResult::accept(content))
}

#[test]
fn input_required_is_answered_and_retried_with_a_new_id_and_the_same_params() {
    let rounds = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&rounds);
    let (transport, seen) = server(
        true,
        Box::new(move |v| {
            let id = &v["id"];
            let p = &v["params"];
            match r.fetch_add(1, Ordering::SeqCst) {
                0 => vec![result(
                    id,
                    json!({
                    "resultType": "input_required",
                    "inputRequests": {
                        "who": {"method": "elicitation/create", "params": {
                            "message": "Your name?",
                            "requestedSchema": {"type": "object", "properties": {
                                "name": {"type": "string"}}}}},
                        "llm": {"method": "sampling/createMessage", "params": {
                            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                            "maxTokens": 10}}
                    },
                    "requestState": "state-1"}),
                )],
                // Second round: state only, no requests.
                1 => vec![result(
                    id,
                    json!({"resultType": "input_required", "requestState": "state-2"}),
                )],
                _ => vec![result(
                    id,
                    json!({"resultType": "complete",
                    "content": [{"type": "text", "text": format!("done: {}", p["requestState"])}]}),
                )],
            }
        }),
    );
    let client = Client::builder()
        .revision(Revision::Modern)
        .sampling(|_| Ok(sampling_answer()))
        .elicitation(elicit_answer)
        .connect(transport)
        .unwrap();
    let out = client.call_tool("needs_input", json!({"x": 1})).unwrap();
    assert_eq!(
        serde_json::to_value(&out.content).unwrap(),
        json!([{"type": "text", "text": "done: \"state-2\""}])
    );

    let first = next_with(&seen, "tools/call");
    let second = next_with(&seen, "tools/call");
    let third = next_with(&seen, "tools/call");
    // Every round is a new request id.
    assert_ne!(first["id"], second["id"]);
    assert_ne!(second["id"], third["id"]);
    // The first round has no MRTR fields; the modern envelope declares both handlers (and
    // the tasks extension, declared by default).
    assert!(first["params"].get("inputResponses").is_none(), "{first}");
    assert_eq!(
        first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({"sampling": {}, "elicitation": {},
               "extensions": {"io.modelcontextprotocol/tasks": {}}})
    );
    // The retry: same name and arguments, answers under the server's keys, state echoed.
    let p = &second["params"];
    assert_eq!(p["name"], "needs_input");
    assert_eq!(p["arguments"], json!({"x": 1}));
    assert_eq!(p["requestState"], "state-1");
    assert_eq!(
        p["inputResponses"]["who"],
        json!({"action": "accept", "content": {"asked": "Your name?"}})
    );
    assert_eq!(p["inputResponses"]["llm"]["model"], "test-model");
    assert_eq!(p["inputResponses"]["llm"]["content"]["text"], "sampled");
    // A state-only round echoes the state and sends no stale answers.
    let p = &third["params"];
    assert_eq!(p["requestState"], "state-2");
    assert!(p.get("inputResponses").is_none(), "{third}");
    assert_eq!(p["arguments"], json!({"x": 1}));
}

/// The answer of a server that asks for input again, whatever it was given.
fn asks_again(request: &Value) -> Vec<Value> {
    vec![result(
        &request["id"],
        json!({"resultType": "input_required", "requestState": "again"}),
    )]
}

#[test]
fn a_server_that_keeps_asking_is_cut_off() {
    let (transport, _seen) = server(true, Box::new(asks_again));
    let client = Client::builder()
        .revision(Revision::Modern)
        .connect(transport)
        .unwrap();
    let e = client.call_tool("loop", Value::Null).unwrap_err();
    assert!(matches!(e, Error::TooManyInputRounds(8)), "{e}");
}

#[test]
fn the_rounds_share_the_calls_timeout() {
    // Each round is answered within the call's timeout, but every answer asks again: the
    // rounds together may not outlast it (nine rounds used to make a 2 s call last 16 s).
    let (transport, seen) = server(
        true,
        Box::new(|v| {
            std::thread::sleep(Duration::from_millis(150));
            asks_again(v)
        }),
    );
    let client = Client::builder()
        .revision(Revision::Modern)
        .connect(transport)
        .unwrap();
    let options = CallOptions::default().timeout(Timeout::fixed(Duration::from_millis(400)));
    let e = client
        .call_tool_with("loop", Value::Null, &options)
        .unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    let rounds = seen
        .try_iter()
        .filter(|v| v["method"] == "tools/call")
        .count();
    assert!(rounds <= 3, "{rounds} rounds within 400 ms of 150 ms each");
}

#[test]
fn a_round_asking_for_too_many_inputs_runs_no_handler() {
    // 65 roots requests at once: none is answered (the roots handler would have run 65
    // times, and 300,000 of them took 13 GB), and the call fails saying why.
    let (transport, seen) = server(
        true,
        Box::new(|v| {
            let asks: serde_json::Map<String, Value> = (0..=mcp_client::MAX_INPUT_REQUESTS)
                .map(|i| (format!("r{i}"), json!({"method": "roots/list"})))
                .collect();
            vec![result(
                &v["id"],
                json!({"resultType": "input_required", "inputRequests": asks}),
            )]
        }),
    );
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = asked.clone();
    let client = Client::builder()
        .revision(Revision::Modern)
        .roots(move || {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Vec::new()
        })
        .connect(transport)
        .unwrap();
    let e = client.call_tool("t", Value::Null).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Unexpected(mcp_client::Unexpected::TooManyInputRequests { count: 65, .. })
        ),
        "{e}"
    );
    assert_eq!(asked.load(std::sync::atomic::Ordering::Relaxed), 0);
    let calls = seen
        .try_iter()
        .filter(|v| v["method"] == "tools/call")
        .count();
    assert_eq!(calls, 1, "no retry");
}

#[test]
fn input_the_client_cannot_give_fails_the_call_clearly() {
    let (transport, _seen) = server(
        true,
        Box::new(|v| {
            vec![result(
                &v["id"],
                json!({"resultType": "input_required",
                "inputRequests": {"k": {"method": "sampling/createMessage", "params": {
                    "messages": [], "maxTokens": 1}}}}),
            )]
        }),
    );
    let client = Client::builder()
        .revision(Revision::Modern)
        .connect(transport)
        .unwrap();
    let e = client.call_tool("t", Value::Null).unwrap_err();
    assert!(
        matches!(&e, Error::Input { method, .. } if method == "sampling/createMessage"),
        "{e}"
    );
}

#[test]
fn auto_falls_back_to_initialize_and_answers_legacy_server_requests() {
    let (transport, seen) = server(
        false,
        Box::new(|v| {
            if v["method"] == "tools/call" {
                // Ask the client to sample before answering the call.
                vec![
                    json!({"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 5}}),
                ]
            } else if v.get("method").is_none() && v["id"] == "s-1" {
                // The client's answer: finish the call (our request id was 3: discover 1,
                // initialize 2).
                let text = v["result"]["model"].as_str().unwrap_or("?").to_owned();
                vec![result(
                    &json!(3),
                    json!({"content": [{"type": "text", "text": text}]}),
                )]
            } else {
                vec![]
            }
        }),
    );
    let client = Client::builder()
        .sampling(|_| Ok(sampling_answer()))
        .connect(transport)
        .unwrap();
    assert_eq!(client.era(), mcp_core::version::Era::Legacy);
    assert_eq!(client.server_info().unwrap()["name"], "fake-legacy");
    let init = next_with(&seen, "initialize");
    assert_eq!(init["params"]["capabilities"], json!({"sampling": {}}));
    let out = client.call_tool("x", Value::Null).unwrap();
    assert_eq!(
        serde_json::to_value(&out.content).unwrap(),
        json!([{"type": "text", "text": "test-model"}])
    );
}

#[test]
fn a_silent_server_times_out_and_is_told_to_stop() {
    let (transport, seen) = server(true, Box::new(|_| vec![]));
    let client = Client::builder()
        .revision(Revision::Modern)
        .connect(transport)
        .unwrap();
    let started = Instant::now();
    let options = CallOptions::new().timeout(Timeout::fixed(Duration::from_millis(200)));
    let e = client
        .call_tool_with("slow", Value::Null, &options)
        .unwrap_err();
    assert!(
        matches!(&e, Error::Timeout { method } if method == "tools/call"),
        "{e}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    let call = next_with(&seen, "tools/call");
    let cancel = next_with(&seen, "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], call["id"]);
}

#[test]
fn cancel_handle_ends_the_call_and_notifies_the_server() {
    let (transport, seen) = server(true, Box::new(|_| vec![]));
    let client = Client::builder()
        .revision(Revision::Modern)
        .connect(transport)
        .unwrap();
    let handle = CancelHandle::new();
    let h = handle.clone();
    let canceller = thread::spawn(move || {
        // Cancel once the server has the request.
        let call = next_with(&seen, "tools/call");
        h.cancel_with_reason("user pressed stop");
        (call, next_with(&seen, "notifications/cancelled"))
    });
    let options = CallOptions::new().cancel_handle(handle.clone());
    let e = client
        .call_tool_with("forever", Value::Null, &options)
        .unwrap_err();
    assert!(matches!(e, Error::Cancelled), "{e}");
    let (call, cancel) = canceller.join().unwrap();
    assert_eq!(cancel["params"]["requestId"], call["id"]);
    assert_eq!(cancel["params"]["reason"], "user pressed stop");
    // A cancelled handle cancels later calls at once.
    let e = client
        .call_tool_with("again", Value::Null, &options)
        .unwrap_err();
    assert!(matches!(e, Error::Cancelled), "{e}");
}

#[test]
fn pages_follow_next_cursor_and_stop_on_a_repeated_cursor() {
    let (transport, _seen) = server(
        true,
        Box::new(|v| {
            let tool = |n: &str| json!({"name": n, "inputSchema": {"type": "object"}});
            let page = match v["params"]["cursor"].as_str() {
                None => json!({"tools": [tool("a"), tool("b")], "nextCursor": "p2"}),
                Some("p2") => json!({"tools": [tool("c")], "nextCursor": "p3"}),
                Some("p3") => json!({"tools": [tool("d")], "nextCursor": "p2"}),
                Some(_) => json!({"tools": []}),
            };
            vec![result(&v["id"], page)]
        }),
    );
    let client = Client::builder()
        .revision(Revision::Modern)
        .connect(transport)
        .unwrap();
    let items: Vec<Result<String, Error>> =
        client.list_tools().map(|t| t.map(|t| t.name)).collect();
    let names: Vec<&str> = items
        .iter()
        .filter_map(|r| r.as_ref().ok().map(String::as_str))
        .collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    assert!(
        matches!(
            items.last(),
            Some(Err(Error::Unexpected(Unexpected::RepeatedCursor { cursor, .. }))) if cursor == "p2"
        ),
        "{items:?}"
    );
    let page = client.list_tools_page(Some("p3")).unwrap();
    assert_eq!(page.next_cursor.as_deref(), Some("p2"));
}

#[test]
fn a_server_that_goes_away_fails_pending_calls_at_once() {
    let (gone_tx, gone_rx): (Sender<()>, Receiver<()>) = bounded(1);
    let (a, b) = mcp_stdio::memory(16).unwrap();
    // Answers discover, then vanishes when the first call arrives.
    let server = thread::spawn(move || {
        for item in &b.receiver {
            let v = to_value(&item.unwrap());
            if v["method"] == "server/discover" {
                let r = result(
                    &v["id"],
                    json!({"supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}}, "resultType": "complete"}),
                );
                b.sender.send(msg(r)).unwrap();
            } else if v["method"] == "tools/call" {
                break;
            }
        }
        drop(b);
        let _ = gone_tx.send(());
    });
    let client = Client::builder()
        .revision(Revision::Modern)
        .connect(ChannelTransport::new(a))
        .unwrap();
    let started = Instant::now();
    let e = client.call_tool("x", Value::Null).unwrap_err();
    assert!(matches!(e, Error::Closed(_)), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
    gone_rx.recv_timeout(WAIT).unwrap();
    server.join().unwrap();
    assert!(client.is_closed());
    let e = client.call_tool("y", Value::Null).unwrap_err();
    assert!(matches!(e, Error::Closed(_)), "{e}");
}

#[test]
fn the_era_gates_requests_before_anything_is_sent() {
    let (transport, _seen) = server(true, Box::new(|_| vec![]));
    let client = Client::builder()
        .revision(Revision::Modern)
        .connect(transport)
        .unwrap();
    for e in [
        client.ping().unwrap_err(),
        client.subscribe("x://y").unwrap_err(),
        // The fake server declares no completions.
        client.complete_prompt_argument("p", "a", "v").unwrap_err(),
    ] {
        assert!(matches!(e, Error::Refused(_)), "{e}");
    }
}

#[test]
fn the_client_and_its_handles_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Client>();
    shareable::<CancelHandle>();
    shareable::<CallOptions>();
    fn sendable<T: Send>() {}
    sendable::<mcp_client::Subscription>();
}

#[test]
fn calls_from_many_threads_each_get_their_own_answer() {
    let (transport, _seen) = server(
        true,
        Box::new(|v| {
            let echo = v["params"]["arguments"]["n"].clone();
            vec![result(
                &v["id"],
                json!({"content": [{"type": "text", "text": echo.to_string()}]}),
            )]
        }),
    );
    let client = Client::builder()
        .revision(Revision::Modern)
        .connect(transport)
        .unwrap();
    thread::scope(|s| {
        for t in 0..8 {
            let client = &client;
            s.spawn(move || {
                for i in 0..25 {
                    let n = t * 100 + i;
                    let r = client.call_tool("echo", json!({"n": n})).unwrap();
                    assert_eq!(
                        serde_json::to_value(&r.content).unwrap()[0]["text"],
                        n.to_string()
                    );
                }
            });
        }
    });
}

#[test]
fn roots_are_declared_listed_and_announced_and_a_panicking_handler_is_an_error() {
    let (transport, seen) = server(
        false,
        Box::new(
            |v| match (v["method"].as_str(), v["params"]["name"].as_str()) {
                (Some("tools/call"), Some("roots")) => {
                    vec![json!({"jsonrpc": "2.0", "id": "r-1", "method": "roots/list"})]
                }
                (Some("tools/call"), Some("sample")) => vec![
                    json!({"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 5}}),
                ],
                // The client's answers end the calls (ids: discover 1, initialize 2, calls 3, 4).
                (None, _) if v["id"] == "r-1" => vec![result(
                    &json!(3),
                    json!({"content": [
                {"type": "text", "text": v["result"]["roots"].to_string()}]}),
                )],
                (None, _) if v["id"] == "s-1" => vec![result(
                    &json!(4),
                    json!({"content": [
                {"type": "text", "text": v["error"]["message"].clone()}]}),
                )],
                _ => vec![],
            },
        ),
    );
    let client = Client::builder()
        .roots(|| vec![mcp_core::types::Root::new("file:///work")])
        .sampling(|_| panic!("a handler bug"))
        .connect(transport)
        .unwrap();
    let init = next_with(&seen, "initialize");
    assert_eq!(
        init["params"]["capabilities"],
        json!({"roots": {"listChanged": true}, "sampling": {}})
    );
    let r = client.call_tool("roots", Value::Null).unwrap();
    assert_eq!(
        serde_json::to_value(&r.content).unwrap()[0]["text"],
        r#"[{"uri":"file:///work"}]"#
    );
    let r = client.call_tool("sample", Value::Null).unwrap();
    assert_eq!(
        serde_json::to_value(&r.content).unwrap()[0]["text"],
        "Internal error: the client's handler panicked"
    );
    client.roots_list_changed().unwrap();
    next_with(&seen, "notifications/roots/list_changed");
}

#[test]
fn a_panicking_callback_does_not_take_the_client_down() {
    let (transport, _seen) = server(
        true,
        Box::new(|v| {
            let token = v["params"]["_meta"]["progressToken"].clone();
            vec![
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1}}),
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "x"}}),
                result(&v["id"], json!({"content": []})),
            ]
        }),
    );
    let client = Client::builder()
        .revision(Revision::Modern)
        .on_notification(|_| panic!("notification callback bug"))
        .connect(transport)
        .unwrap();
    let options = CallOptions::new().on_progress(|_| panic!("progress callback bug"));
    for _ in 0..2 {
        let r = client.call_tool_with("t", Value::Null, &options).unwrap();
        assert!(r.content.is_empty());
    }
}

#[test]
fn an_era_cache_sends_a_known_legacy_server_straight_to_initialize() {
    let cache = EraCache::new();
    let first_method = |cache: &EraCache| {
        let (t, seen) = server(false, Box::new(|_| vec![]));
        let client = Client::builder()
            .era_cache(cache.clone())
            .connect(t.named("legacy-one"))
            .unwrap();
        assert_eq!(client.era(), mcp_core::version::Era::Legacy);
        let first = seen.recv_timeout(WAIT).unwrap();
        client.close().unwrap();
        first["method"].as_str().unwrap().to_owned()
    };
    // Unknown server: the modern probe first, then the fallback; the outcome is remembered.
    assert_eq!(first_method(&cache), "server/discover");
    assert_eq!(
        cache.get("legacy-one"),
        Some(mcp_core::version::Era::Legacy)
    );
    // Known legacy server: `initialize` at once.
    assert_eq!(first_method(&cache), "initialize");
    // A modern server is remembered as modern.
    let (t, _seen) = server(true, Box::new(|_| vec![]));
    let client = Client::builder()
        .era_cache(cache.clone())
        .connect(t.named("modern-one"))
        .unwrap();
    client.close().unwrap();
    assert_eq!(
        cache.get("modern-one"),
        Some(mcp_core::version::Era::Modern)
    );
    assert_eq!(cache.len(), 2);
}

/// Regression (interop with the TypeScript reference server and the Python SDK server, which
/// offer their elicitation tools to any client that declares elicitation, whatever the
/// revision): a client pinned to an older revision declared elicitation (and its URL mode)
/// anyway, then refused the server's `elicitation/create` as a method it does not have.
#[test]
fn a_pinned_older_revision_declares_only_what_that_revision_has() {
    let declared = |revision: &str| {
        let (transport, seen) = server(false, Box::new(|_| vec![]));
        let v = mcp_core::version::ProtocolVersion::parse(revision).unwrap();
        let client = Client::builder()
            .revision(Revision::Exact(v))
            .sampling(|_| Ok(sampling_answer()))
            .elicitation_with_url(elicit_answer)
            .connect(transport)
            .unwrap();
        assert_eq!(client.protocol_version(), v);
        let init = next_with(&seen, "initialize");
        assert_eq!(init["params"]["protocolVersion"], revision);
        init["params"]["capabilities"].clone()
    };
    assert_eq!(declared("2025-03-26"), json!({"sampling": {}}));
    assert_eq!(declared("2024-11-05"), json!({"sampling": {}}));
    assert_eq!(
        declared("2025-06-18"),
        json!({"sampling": {}, "elicitation": {}})
    );
    assert_eq!(
        declared("2025-11-25"),
        json!({"sampling": {}, "elicitation": {"form": {}, "url": {}}})
    );
}

/// What the client declares for 2025-06-18 (`elicitation: {}`) it also answers: a form
/// elicitation from the server reaches the handler.
#[test]
fn form_elicitation_is_answered_on_2025_06_18() {
    let (transport, _seen) = server(
        false,
        Box::new(|v| {
            if v["method"] == "tools/call" {
                vec![
                    json!({"jsonrpc": "2.0", "id": "e-1", "method": "elicitation/create",
                    "params": {"message": "name?", "requestedSchema": {"type": "object",
                    "properties": {"name": {"type": "string"}}}}}),
                ]
            } else if v.get("method").is_none() && v["id"] == "e-1" {
                // Our call was request 2 (initialize 1: no discover when pinned).
                let action = v["result"]["action"].as_str().unwrap_or("error").to_owned();
                vec![result(
                    &json!(2),
                    json!({"content": [{"type": "text", "text": action}]}),
                )]
            } else {
                vec![]
            }
        }),
    );
    let client = Client::builder()
        .revision(Revision::Exact(
            mcp_core::version::ProtocolVersion::V2025_06_18,
        ))
        .elicitation_with_url(elicit_answer)
        .connect(transport)
        .unwrap();
    let out = client.call_tool("x", Value::Null).unwrap();
    assert_eq!(
        serde_json::to_value(&out.content).unwrap(),
        json!([{"type": "text", "text": "accept"}])
    );
}

/// The 2026-07-28 negotiation (SEP-2575, the conformance suite's `request-metadata`): a
/// server that refuses the revision of the first `server/discover` with -32022 and lists the
/// ones it supports gets a second `server/discover` with a revision from that list, envelope
/// and all. Before, the client took the refusal for "not a modern server" and sent a legacy
/// `initialize`, which a modern-only server cannot answer.
#[test]
fn a_refused_discover_is_retried_with_a_listed_version_not_initialize() {
    let (a, b) = mcp_stdio::memory(16).unwrap();
    let (seen_tx, seen) = bounded(64);
    thread::spawn(move || {
        let mut refused = false;
        for item in &b.receiver {
            let Ok(m) = item else { continue };
            let v = to_value(&m);
            let _ = seen_tx.try_send(v.clone());
            let Some(id) = v.get("id").cloned() else {
                continue;
            };
            let reply = if !refused {
                refused = true;
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
                    "message": "Unsupported protocol version",
                    "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}})
            } else if v["method"] == "server/discover" {
                result(
                    &id,
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                    "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}),
                )
            } else if v["method"] == "tools/list" {
                result(&id, json!({"tools": [], "resultType": "complete"}))
            } else {
                json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "Method not found"}})
            };
            if b.sender.send(msg(reply)).is_err() {
                return;
            }
        }
    });
    let client = Client::builder()
        .client_info("retrying-client", "9")
        .connect(ChannelTransport::new(a))
        .unwrap();
    assert_eq!(client.era(), mcp_core::version::Era::Modern);
    assert_eq!(client.protocol_version().as_str(), "2026-07-28");
    let tools: Vec<_> = client.list_tools().collect::<Result<_, _>>().unwrap();
    assert!(tools.is_empty());
    client.close().unwrap();
    let sent: Vec<Value> = seen.try_iter().collect();
    let methods: Vec<&str> = sent.iter().filter_map(|v| v["method"].as_str()).collect();
    assert_eq!(
        methods,
        ["server/discover", "server/discover", "tools/list"]
    );
    for v in &sent {
        let meta = &v["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
            "{v}"
        );
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "retrying-client"
        );
    }
}
