//! The kit driven in memory through the service seam: no transport, real sessions, real
//! worker threads.

use std::sync::Mutex;
use std::sync::mpsc::sync_channel;
use std::time::Duration;

use mcp_core::service::{Service, SessionInfo, TransportKind};
use mcp_server_kit::types::{CallToolResult, ElicitRequestParams};
use mcp_server_kit::{Context, Error, NoArgs, Server, Tool, schema::Schema};
use serde_json::{Value, json};

mod common;
use common::{Peer, WAIT};

fn modern(params: Value, caps: Value) -> Value {
    let mut p = params;
    p["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    p
}

#[derive(serde::Deserialize)]
struct Echo {
    message: String,
}

fn echo() -> Tool {
    Tool::new("echo", |a: Echo, _: &Context| Ok::<_, Error>(a.message))
        .input_schema(Schema::object().property("message", Schema::string()))
}

#[test]
fn capabilities_follow_registrations() {
    let server = Server::builder("t", "1").tool(echo()).build().unwrap();
    assert_eq!(
        server.capabilities(),
        &json!({"tools": {"listChanged": true}})
    );
    let p = Peer::open(&server);
    let init = p.initialize("2025-06-18", json!({}));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "t");
    // No prompts were registered, so prompts/list is not a method of this server.
    let r = p.request(1, "prompts/list", json!({}));
    assert_eq!(r["error"]["code"], -32601);
}

#[test]
fn a_panicking_handler_becomes_internal_error_and_the_server_keeps_serving() {
    let boom = Tool::new("boom", |_: NoArgs, _: &Context| -> Result<String, Error> {
        panic!("kaboom")
    });
    let server = Server::builder("t", "1")
        .tool(boom)
        .tool(echo())
        .build()
        .unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({}));
    let r = p.request(1, "tools/call", json!({"name": "boom"}));
    assert_eq!(r["error"]["code"], -32603);
    assert!(r["error"]["message"].as_str().unwrap().contains("kaboom"));
    let r = p.request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hi"}}),
    );
    assert_eq!(r["result"]["content"][0]["text"], "hi");
}

#[test]
fn a_cancelled_request_gets_no_response() {
    let (started_tx, started_rx) = sync_channel::<()>(1);
    let (release_tx, release_rx) = sync_channel::<()>(1);
    let (seen_tx, seen_rx) = sync_channel::<bool>(1);
    let release_rx = Mutex::new(release_rx);
    let slow = Tool::new("slow", move |_: NoArgs, ctx: &Context| {
        started_tx.send(()).unwrap();
        release_rx.lock().unwrap().recv().unwrap();
        seen_tx.send(ctx.is_cancelled()).unwrap();
        Ok::<_, Error>("done")
    });
    // One worker: the echo call below runs only after the slow handler returned.
    let server = Server::builder("t", "1")
        .tool(slow)
        .tool(echo())
        .workers(1)
        .max_workers(1)
        .build()
        .unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({}));
    p.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "slow"}}));
    started_rx.recv_timeout(WAIT).unwrap();
    // ping is answered while the only worker is busy.
    assert_eq!(p.request(6, "ping", json!({}))["result"], json!({}));
    p.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 5, "reason": "user"}}),
    );
    p.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                  "params": {"name": "echo", "arguments": {"message": "after"}}}));
    release_tx.send(()).unwrap();
    assert!(
        seen_rx.recv_timeout(WAIT).unwrap(),
        "the handler saw the cancellation"
    );
    let (r, before) = p.response(7);
    assert_eq!(r["result"]["content"][0]["text"], "after");
    assert!(
        before.iter().all(|m| m.get("id") != Some(&json!(5))),
        "{before:?}"
    );
    assert!(p.rx.try_recv().is_err());
}

#[test]
fn pagination_follows_cursors_and_refuses_forged_ones() {
    let mut b = Server::builder("t", "1").page_size(2);
    for i in 0..5 {
        b = b.tool(Tool::new(format!("t{i}"), |_: NoArgs, _: &Context| {
            Ok::<_, Error>("x")
        }));
    }
    let server = b.build().unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({}));
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 1..10 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = p.request(id, "tools/list", params);
        for t in r["result"]["tools"].as_array().unwrap() {
            names.push(t["name"].as_str().unwrap().to_owned());
        }
        match r["result"].get("nextCursor") {
            Some(c) => cursor = Some(c.as_str().unwrap().to_owned()),
            None => break,
        }
    }
    assert_eq!(names, ["t0", "t1", "t2", "t3", "t4"]);
    let r = p.request(20, "tools/list", json!({"cursor": "2.deadbeefdeadbeef"}));
    assert_eq!(r["error"]["code"], -32602);
}

#[test]
fn bad_arguments_follow_the_revision() {
    let server = Server::builder("t", "1").tool(echo()).build().unwrap();
    let old = Peer::open(&server);
    old.initialize("2025-06-18", json!({}));
    let r = old.request(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": 5}}),
    );
    assert_eq!(r["error"]["code"], -32602);
    let new = Peer::open(&server);
    new.initialize("2025-11-25", json!({}));
    let r = new.request(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": 5}}),
    );
    assert_eq!(r["result"]["isError"], true);
    let r = new.request(2, "tools/call", json!({"name": "nope"}));
    assert_eq!(r["error"]["code"], -32602);
}

fn asking_tool() -> Tool {
    Tool::new("ask", |_: NoArgs, ctx: &Context| {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
        }))
        .unwrap();
        let answer = ctx.elicit(params)?;
        let v = serde_json::to_value(answer).unwrap();
        Ok::<_, Error>(CallToolResult::text(format!(
            "hello {}",
            v["content"]["name"]
        )))
    })
}

#[test]
fn legacy_elicitation_is_a_blocking_round_trip() {
    let server = Server::builder("t", "1")
        .tool(asking_tool())
        .build()
        .unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({"elicitation": {}}));
    p.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask"}}));
    let ask = p.next();
    assert_eq!(ask["method"], "elicitation/create");
    p.send(json!({"jsonrpc": "2.0", "id": ask["id"],
                  "result": {"action": "accept", "content": {"name": "ada"}}}));
    let (r, _) = p.response(1);
    assert_eq!(r["result"]["content"][0]["text"], "hello \"ada\"");

    // Content the form did not ask for never reaches the handler: a value of the wrong type,
    // or one that is no primitive.
    for (id, content) in [
        (2, json!({"name": 5})),
        (3, json!({"name": "ada", "extra": {"nested": [1]}})),
    ] {
        p.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "ask"}}));
        let ask = p.next();
        p.send(json!({"jsonrpc": "2.0", "id": ask["id"],
                      "result": {"action": "accept", "content": content}}));
        let (r, _) = p.response(id);
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(!text.starts_with("hello"), "{r}");
    }

    // Without the capability the call is refused before anything is sent to the client.
    let q = Peer::open(&server);
    q.initialize("2025-11-25", json!({}));
    let r = q.request(1, "tools/call", json!({"name": "ask"}));
    assert_eq!(r["result"]["isError"], true);
}

#[cfg(feature = "derive")]
#[test]
fn a_typed_form_asks_for_the_types_fields_and_hands_back_a_value() {
    use mcp_server_kit::Elicited;
    use mcp_server_kit::schema::JsonSchema;

    #[derive(serde::Deserialize, JsonSchema)]
    struct Contact {
        /// Your name.
        name: String,
        age: Option<u8>,
    }
    let tool = Tool::typed("who", |_: NoArgs, ctx: &Context| {
        Ok::<_, Error>(match ctx.elicit_form::<Contact>("Who are you?")? {
            Elicited::Accepted(c) => format!("{} {:?}", c.name, c.age),
            Elicited::Declined => "declined".to_owned(),
            Elicited::Cancelled => "cancelled".to_owned(),
        })
    });
    let server = Server::builder("t", "1").tool(tool).build().unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({"elicitation": {}}));
    let answers = [
        (
            json!({"action": "accept", "content": {"name": "ada", "age": 36}}),
            "ada Some(36)",
        ),
        (
            json!({"action": "accept", "content": {"name": "bob"}}),
            "bob None",
        ),
        (json!({"action": "decline"}), "declined"),
        (json!({"action": "cancel"}), "cancelled"),
    ];
    for (id, (answer, said)) in answers.into_iter().enumerate() {
        p.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "who"}}));
        let ask = p.next();
        assert_eq!(ask["method"], "elicitation/create");
        assert_eq!(ask["params"]["message"], "Who are you?");
        assert_eq!(
            ask["params"]["requestedSchema"],
            json!({"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "description": "Your name."},
                "age": {"type": "integer", "minimum": 0, "maximum": 255}
            }})
        );
        p.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": answer}));
        let (r, _) = p.response(id as i64);
        assert_eq!(r["result"]["content"][0]["text"], said, "{r}");
    }
    // An answer outside the form (an age over 255) never reaches the handler.
    p.send(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "who"}}));
    let ask = p.next();
    p.send(json!({"jsonrpc": "2.0", "id": ask["id"],
                  "result": {"action": "accept", "content": {"name": "ada", "age": 300}}}));
    let (r, _) = p.response(9);
    assert_eq!(r["result"]["isError"], true, "{r}");
}

#[cfg(feature = "derive")]
#[test]
fn a_typed_form_in_2026_07_28_is_an_input_request_and_the_retry_decodes_it() {
    use mcp_server_kit::Elicited;
    use mcp_server_kit::schema::JsonSchema;

    #[derive(Debug, serde::Deserialize, JsonSchema)]
    struct Confirm {
        /// Go ahead?
        go: bool,
    }
    let tool = Tool::typed("go", |_: NoArgs, ctx: &Context| {
        let answer = ctx.elicit_form_as::<Confirm>("confirm", "Go?")?;
        Ok::<_, Error>(match answer {
            Elicited::Accepted(Confirm { go }) => format!("go: {go}"),
            other => format!("{other:?}"),
        })
    });
    let server = Server::builder("t", "1").tool(tool).build().unwrap();
    let p = Peer::open(&server);
    let caps = json!({"elicitation": {}});
    let first = p.request(1, "tools/call", modern(json!({"name": "go"}), caps.clone()));
    let asked = &first["result"]["inputRequests"]["confirm"];
    assert_eq!(asked["method"], "elicitation/create", "{first}");
    assert_eq!(
        asked["params"]["requestedSchema"],
        json!({"type": "object", "required": ["go"],
               "properties": {"go": {"type": "boolean", "description": "Go ahead?"}}})
    );
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    for (id, response, said) in [
        (
            2,
            json!({"action": "accept", "content": {"go": true}}),
            "go: true",
        ),
        (3, json!({"action": "decline"}), "Declined"),
    ] {
        let done = p.request(
            id,
            "tools/call",
            modern(
                json!({"name": "go", "requestState": state,
                       "inputResponses": {"confirm": response}}),
                caps.clone(),
            ),
        );
        assert_eq!(done["result"]["content"][0]["text"], said, "{done}");
    }
}

/// An outbound that carries answers and notifications but no request of the server's, as a
/// Streamable HTTP exchange whose client accepts only JSON.
struct NoQuestions(Mutex<std::sync::mpsc::SyncSender<mcp_core::jsonrpc::Message>>);

impl mcp_core::service::Outbound for NoQuestions {
    fn send(
        &self,
        msg: mcp_core::jsonrpc::Message,
        _: Option<&mcp_core::jsonrpc::RequestId>,
    ) -> Result<(), mcp_core::service::Closed> {
        if matches!(msg, mcp_core::jsonrpc::Message::Request(_)) {
            return Err(mcp_core::service::Closed);
        }
        self.0
            .lock()
            .unwrap()
            .send(msg)
            .map_err(|_| mcp_core::service::Closed)
    }
}

#[test]
fn a_question_the_transport_cannot_carry_fails_the_handler_at_once() {
    // Not a cancellation (which gets no answer at all): the call is answered with why.
    let server = Server::builder("t", "1")
        .tool(asking_tool())
        .build()
        .unwrap();
    let (tx, rx) = sync_channel(64);
    let session = server.open(
        SessionInfo::new(TransportKind::Memory),
        std::sync::Arc::new(NoQuestions(Mutex::new(tx))),
    );
    let p = Peer { session, rx };
    p.initialize("2025-11-25", json!({"elicitation": {}}));
    let r = p.request(1, "tools/call", json!({"name": "ask"}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("cannot reach the client"), "{r}");
}

#[test]
fn legacy_elicitation_times_out_and_cancels() {
    let server = Server::builder("t", "1")
        .tool(asking_tool())
        .client_request_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({"elicitation": {}}));
    p.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask"}}));
    let ask = p.next();
    assert_eq!(ask["method"], "elicitation/create");
    let cancel = p.next();
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], ask["id"]);
    let (r, _) = p.response(1);
    assert_eq!(r["result"]["isError"], true);
}

#[test]
fn modern_elicitation_is_input_required_then_retry() {
    let server = Server::builder("t", "1")
        .tool(asking_tool())
        .build()
        .unwrap();
    let p = Peer::open(&server);
    let caps = json!({"elicitation": {}});
    let first = p.request(
        1,
        "tools/call",
        modern(json!({"name": "ask"}), caps.clone()),
    );
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["input-0"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"].as_str().unwrap().to_owned();

    let retry = |id: i64, state: &str| {
        p.request(
            id,
            "tools/call",
            modern(
                json!({"name": "ask", "requestState": state,
                       "inputResponses": {"input-0": {"action": "accept", "content": {"name": "bob"}}}}),
                caps.clone(),
            ),
        )
    };
    let done = retry(2, &state);
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "hello \"bob\"");

    // Content that does not match the form is the client's error.
    let wrong = p.request(
        5,
        "tools/call",
        modern(
            json!({"name": "ask", "requestState": state,
                   "inputResponses": {"input-0": {"action": "accept", "content": {"name": 5}}}}),
            caps.clone(),
        ),
    );
    assert_eq!(wrong["error"]["code"], -32602, "{wrong}");
    assert!(
        wrong["error"]["message"]
            .as_str()
            .unwrap()
            .contains("input-0"),
        "{wrong}"
    );

    let mut forged = state.into_bytes();
    let last = forged.len() - 1;
    forged[last] = if forged[last] == b'0' { b'1' } else { b'0' };
    let bad = retry(3, std::str::from_utf8(&forged).unwrap());
    assert_eq!(bad["error"]["code"], -32602);

    // No elicitation capability: -32021 with the capability named.
    let r = p.request(4, "tools/call", modern(json!({"name": "ask"}), json!({})));
    assert_eq!(r["error"]["code"], -32021);
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
}

#[test]
fn added_tools_are_announced() {
    let server = Server::builder("t", "1").tool(echo()).build().unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({}));
    // Make sure `initialized` was processed before changing the list.
    p.request(1, "ping", json!({}));
    server.add_tool(Tool::new("later", |_: NoArgs, _: &Context| {
        Ok::<_, Error>("x")
    }));
    assert_eq!(p.next()["method"], "notifications/tools/list_changed");
    let r = p.request(2, "tools/list", json!({}));
    assert_eq!(r["result"]["tools"].as_array().unwrap().len(), 2);
    assert!(server.remove_tool("later"));
    assert_eq!(p.next()["method"], "notifications/tools/list_changed");
}

#[test]
fn templates_added_at_run_time_are_listed_read_and_announced() {
    use mcp_server_kit::ResourceTemplate;
    use mcp_server_kit::types::ResourceContents;
    let server = Server::builder("t", "1")
        .resource(mcp_server_kit::Resource::text(
            "x://a",
            "a",
            "text/plain",
            "A",
        ))
        .build()
        .unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({}));
    p.request(1, "ping", json!({}));
    let t = ResourceTemplate::new("x://items/{id}", "items", |uri: &str, vars, _: &Context| {
        Ok(vec![ResourceContents::text(
            uri,
            format!("item {}", vars["id"]),
        )])
    })
    .unwrap();
    server.add_resource_template(t);
    assert_eq!(p.next()["method"], "notifications/resources/list_changed");
    let r = p.request(2, "resources/templates/list", json!({}));
    assert_eq!(
        r["result"]["resourceTemplates"][0]["uriTemplate"],
        "x://items/{id}"
    );
    let r = p.request(3, "resources/read", json!({"uri": "x://items/7"}));
    assert_eq!(r["result"]["contents"][0]["text"], "item 7");
    assert!(server.remove_resource_template("x://items/{id}"));
    assert_eq!(p.next()["method"], "notifications/resources/list_changed");
    let r = p.request(4, "resources/read", json!({"uri": "x://items/7"}));
    assert_eq!(r["error"]["code"], -32002);
}

/// Asks for a name under a key of its own choosing, and for whatever else the client can give.
fn named_inputs_tool() -> Tool {
    Tool::new("named", |_: NoArgs, ctx: &Context| {
        let ask: ElicitRequestParams = serde_json::from_value(json!({
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
        }))
        .unwrap();
        let name = ctx.elicit_as("user_name", ask)?;
        let roots = if ctx.client_capabilities().get("roots").is_some() {
            ctx.roots_as("client_roots").map(|r| r.roots.len())
        } else {
            Ok(0)
        };
        let roots = roots?;
        let v = serde_json::to_value(&name).unwrap();
        Ok::<_, Error>(format!("Hello, {}! ({roots} roots)", v["content"]["name"]))
    })
}

#[test]
fn modern_inputs_named_by_the_handler_and_answers_that_are_not_answers() {
    let server = Server::builder("t", "1")
        .tool(named_inputs_tool())
        .build()
        .unwrap();
    let p = Peer::open(&server);
    let caps = json!({"elicitation": {}});
    let call = |id: i64, extra: Value| {
        let mut params = json!({"name": "named", "arguments": {}});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        p.request(id, "tools/call", modern(params, caps.clone()))["result"].clone()
    };
    let first = call(1, json!({}));
    assert_eq!(first["resultType"], "input_required");
    let keys: Vec<&String> = first["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["user_name"]);
    assert_eq!(
        first["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    // A null answer, no answers at all, or only answers to other keys: asked again.
    for (id, extra) in [
        (2, json!({"inputResponses": null})),
        (3, json!({"inputResponses": {"user_name": null}})),
        (
            4,
            json!({"inputResponses": {"wrong_key": {"action": "accept", "content": {"data": "x"}}}}),
        ),
    ] {
        let again = call(id, extra);
        assert_eq!(again["resultType"], "input_required", "id {id}");
        assert!(again["inputRequests"].get("user_name").is_some(), "id {id}");
    }
    // An answer that is no elicitation result is the client's error: -32602, not a tool error.
    let r = p.request(
        5,
        "tools/call",
        modern(
            json!({"name": "named", "inputResponses": {"user_name": 12345}}),
            caps.clone(),
        ),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = p.request(
        6,
        "tools/call",
        modern(
            json!({"name": "named", "inputResponses": "yes"}),
            caps.clone(),
        ),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // The right key, with unexpected extra keys that are ignored.
    let done = call(
        7,
        json!({"inputResponses": {
            "user_name": {"action": "accept", "content": {"name": "Alice"}},
            "unknown_extra_key": {"action": "accept", "content": {}},
            "another_unexpected": 1}}),
    );
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(done["content"][0]["text"], "Hello, \"Alice\"! (0 roots)");
    // Both inputs in one round when the client has roots too.
    let r = p.request(
        8,
        "tools/call",
        modern(
            json!({"name": "named"}),
            json!({"elicitation": {}, "roots": {}}),
        ),
    );
    assert_eq!(r["result"]["resultType"], "input_required");
    // (The handler stopped at the first missing input; the roots come in the next round.)
    let state = r["result"]["requestState"].as_str().unwrap().to_owned();
    let r = p.request(
        9,
        "tools/call",
        modern(
            json!({"name": "named", "requestState": state, "inputResponses": {
                "user_name": {"action": "accept", "content": {"name": "Bo"}}}}),
            json!({"elicitation": {}, "roots": {}}),
        ),
    );
    assert_eq!(
        r["result"]["inputRequests"]["client_roots"]["method"],
        "roots/list"
    );
}

#[test]
fn mirrored_arguments_must_match_their_mcp_param_headers() {
    let server = Server::builder("t", "1")
        .tool(
            Tool::new("route", |a: Value, _: &Context| {
                Ok::<_, Error>(format!("routed {}", a["region"]))
            })
            .input_schema(json!({"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "query": {"type": "string"}}, "required": ["region"]})),
        )
        .build()
        .unwrap();
    let exchange = |headers: &[(&str, &str)], region: &str| {
        let info = SessionInfo::new(TransportKind::StreamableHttp).with_param_headers(
            headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
        );
        let p = Peer::open_with(&server, info);
        p.request(
            1,
            "tools/call",
            modern(
                json!({"name": "route", "arguments": {"region": region, "query": "q"}}),
                json!({}),
            ),
        )
    };
    let ok = exchange(&[("region", "us-west1")], "us-west1");
    assert_eq!(ok["result"]["content"][0]["text"], "routed \"us-west1\"");
    for (headers, region) in [
        (&[][..], "us-west1"),
        (&[("Region", "eu-west1")][..], "us-west1"),
    ] {
        let r = exchange(headers, region);
        assert_eq!(r["error"]["code"], -32020, "{headers:?}");
    }
    // Where the transport has no such headers (stdio, memory), nothing is compared.
    let p = Peer::open(&server);
    let r = p.request(
        1,
        "tools/call",
        modern(
            json!({"name": "route", "arguments": {"region": "x"}}),
            json!({}),
        ),
    );
    assert_eq!(r["result"]["content"][0]["text"], "routed \"x\"");
}
