//! The `everything` server over real pipes, in the legacy era (`initialize`, 2024-11-05 to
//! 2025-11-25): every method, every fixture, and the lifecycle errors.

mod common;

use common::{Client, FIXTURE_TOOLS, PNG, TIMEOUT, WAV, answers, has_method, only_text};
use serde_json::{Value, json};

fn capabilities() -> Value {
    json!({
        "completions": {},
        // The skills extension is declared to every revision's clients (SEP-1724's
        // `extensions`, which hosts of the older revisions use too).
        "extensions": {"io.modelcontextprotocol/skills": {"directoryRead": true}},
        "logging": {},
        "prompts": {"listChanged": true},
        "resources": {"listChanged": true, "subscribe": true},
        "tools": {"listChanged": true}
    })
}

#[test]
fn initialize_answers_exact_capabilities_and_info() {
    let (c, r) = Client::legacy("2025-11-25", json!({"sampling": {}, "elicitation": {}}));
    assert_eq!(
        r,
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities(),
            "serverInfo": {
                "name": "mcp-everything",
                "title": "Everything (mcp-blocking)",
                "version": env!("CARGO_PKG_VERSION"),
                "icons": [{"src": format!("data:image/png;base64,{PNG}"),
                           "mimeType": "image/png", "sizes": ["1x1"]}]
            },
            "instructions": "A test server that exercises every MCP feature."
        })
    );
    drop(c);
    // Icons arrived in 2025-11-25: an older client does not see them.
    let (_c, r) = Client::legacy("2025-06-18", json!({}));
    assert!(r["serverInfo"].get("icons").is_none(), "{r}");
    assert_eq!(r["serverInfo"]["title"], "Everything (mcp-blocking)");
}

#[test]
fn older_revisions_are_negotiated_as_asked() {
    for version in ["2025-06-18", "2025-03-26", "2024-11-05"] {
        let (mut c, r) = Client::legacy(version, json!({}));
        assert_eq!(r["protocolVersion"], version);
        let mut expected = capabilities();
        if version == "2024-11-05" {
            // `completions` arrived in 2025-03-26.
            expected.as_object_mut().unwrap().remove("completions");
        }
        assert_eq!(r["capabilities"], expected);
        // The session works at that revision.
        let t = c.call_tool("test_simple_text", json!({}));
        assert_eq!(only_text(&t), "This is a simple text response for testing.");
        // A link has no form before 2025-06-18: refused rather than sent as something else.
        let r = c.call(
            "tools/call",
            json!({"name": "test_resource_link", "arguments": {}}),
        );
        if version == "2025-06-18" {
            assert_eq!(r["result"]["content"][1]["type"], "resource_link", "{r}");
        } else {
            assert_eq!(r["error"]["code"], -32603, "{r}");
            let m = r["error"]["message"].as_str().unwrap_or_default();
            assert!(m.contains("resource_link"), "{r}");
        }
    }
    // An unknown (future) revision gets the newest legacy one, as the lifecycle rules ask.
    let (_c, r) = Client::legacy("2099-01-01", json!({}));
    assert_eq!(r["protocolVersion"], "2025-11-25");
}

#[test]
fn results_are_shaped_for_older_revisions() {
    let annotations_of = |c: &mut Client| {
        let r = c.result("tools/list", json!({}));
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "json_schema_2020_12_tool")
            .expect("the 2020-12 tool is listed")
            .get("annotations")
            .cloned()
    };
    // Tool annotations and audio content appeared in 2025-03-26.
    let (mut c, _) = Client::legacy("2025-03-26", json!({}));
    assert_eq!(annotations_of(&mut c), Some(json!({"readOnlyHint": true})));
    let r = c.call_tool("test_audio_content", json!({}));
    assert_eq!(r["content"][0]["type"], "audio", "{r}");
    let (mut c, _) = Client::legacy("2024-11-05", json!({}));
    assert_eq!(annotations_of(&mut c), None);
    // Audio cannot be expressed in 2024-11-05: an error rather than a block the client
    // cannot parse.
    let r = c.call(
        "tools/call",
        json!({"name": "test_audio_content", "arguments": {}}),
    );
    assert_eq!(r["error"]["code"], -32603, "{r}");
    // Other content still flows.
    let r = c.call_tool("test_image_content", json!({}));
    assert_eq!(r["content"][0]["type"], "image", "{r}");
}

#[test]
fn initialize_result_is_shaped_for_older_revisions() {
    // `completions` appeared in 2025-03-26, Implementation.title in 2025-06-18.
    let (_c, r) = Client::legacy("2025-03-26", json!({}));
    assert_eq!(r["capabilities"], capabilities());
    assert_eq!(
        r["serverInfo"],
        json!({"name": "mcp-everything", "version": env!("CARGO_PKG_VERSION")})
    );
    let (_c, r) = Client::legacy("2024-11-05", json!({}));
    let mut caps = capabilities();
    caps.as_object_mut().unwrap().remove("completions");
    assert_eq!(r["capabilities"], caps);
    assert_eq!(
        r["serverInfo"],
        json!({"name": "mcp-everything", "version": env!("CARGO_PKG_VERSION")})
    );
}

#[test]
fn progress_notifications_are_shaped_for_2024_11_05() {
    let (mut c, _) = Client::legacy("2024-11-05", json!({}));
    let id = c.request(
        "tools/call",
        json!({"name": "test_tool_with_progress", "_meta": {"progressToken": "old"}}),
    );
    let (before, _) = c.until_response(&id);
    let params: Vec<&Value> = before
        .iter()
        .filter(|m| has_method(m, "notifications/progress"))
        .map(|m| &m["params"])
        .collect();
    assert_eq!(params.len(), 3, "{before:?}");
    for (p, step) in params.iter().zip([0.0, 50.0, 100.0]) {
        assert_eq!(
            **p,
            json!({"progressToken": "old", "progress": step, "total": 100.0})
        );
    }
}

#[test]
fn revision_decides_how_bad_tool_arguments_are_reported() {
    // From 2025-11-25 on an input validation failure is a tool result the model can read.
    let mut c = Client::legacy_full();
    let r = c.call_tool("test_sampling", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(only_text(&r).starts_with("Invalid arguments"), "{r}");
    // Before that it is a JSON-RPC error.
    let (mut c, _) = Client::legacy("2025-03-26", json!({"sampling": {}}));
    let e = c.error(
        "tools/call",
        json!({"name": "test_sampling", "arguments": {}}),
    );
    assert_eq!(e["code"], -32602, "{e}");
}

#[test]
fn elicitation_is_refused_before_its_revision() {
    // elicitation/create appeared in 2025-06-18: a 2025-03-26 session never gets one, even if
    // the client claims the capability, and the tool reports the failure.
    let (mut c, _) = Client::legacy("2025-03-26", json!({"elicitation": {}}));
    let id = c.request(
        "tools/call",
        json!({"name": "test_elicitation", "arguments": {"message": "hi"}}),
    );
    let (before, resp) = c.until_response(&id);
    assert!(
        !before.iter().any(|m| has_method(m, "elicitation/create")),
        "{before:?}"
    );
    let r = &resp["result"];
    assert_eq!(r["isError"], true, "{resp}");
    assert!(only_text(r).contains("2025-03-26"), "{resp}");
}

#[test]
fn ping_answers_empty_object() {
    let mut c = Client::legacy_full();
    let r = c.call("ping", json!({}));
    assert_eq!(r["result"], json!({}));
    // Ping without params works too.
    let r = c.call("ping", Value::Null);
    assert_eq!(r["result"], json!({}));
}

#[test]
fn tools_list_holds_the_fixtures_with_their_schemas() {
    let mut c = Client::legacy_full();
    let r = c.result("tools/list", json!({}));
    let tools = r["tools"].as_array().expect("tools array");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    // The dynamic tool arrives ~2 s after start; on a very slow machine it may already be there.
    let n = FIXTURE_TOOLS.len();
    if names.len() == n + 1 {
        assert_eq!(names[n], "test_dynamic_tool");
    } else {
        assert_eq!(names.len(), n, "{names:?}");
    }
    assert_eq!(&names[..n], &FIXTURE_TOOLS[..]);
    assert!(r.get("nextCursor").is_none(), "one page of 100: {r}");
    let empty = json!({"type": "object", "properties": {}});
    for t in tools {
        let d = t["description"].as_str().unwrap_or("");
        assert!(!d.is_empty(), "description missing: {t}");
        let name = t["name"].as_str().unwrap();
        let schema = &t["inputSchema"];
        match name {
            "test_sampling" => assert_eq!(
                schema,
                &json!({"type": "object", "required": ["prompt"],
                    "properties": {"prompt": {"type": "string", "description": "The prompt"}}})
            ),
            "test_elicitation" => assert_eq!(
                schema,
                &json!({"type": "object", "required": ["message"],
                    "properties": {"message": {"type": "string", "description": "What to ask"}}})
            ),
            "json_schema_2020_12_tool" => {
                assert_eq!(
                    schema,
                    &json!({
                        "$schema": "https://json-schema.org/draft/2020-12/schema",
                        "type": "object",
                        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                            "properties": {"street": {"type": "string"},
                                           "city": {"type": "string"}}}},
                        "properties": {"name": {"type": "string"},
                                       "address": {"$ref": "#/$defs/address"},
                                       "contactMethod": {"type": "string",
                                                         "enum": ["phone", "email"]},
                                       "phone": {"type": "string"},
                                       "email": {"type": "string"}},
                        "allOf": [{"anyOf": [{"required": ["phone"]},
                                             {"required": ["email"]}]}],
                        "if": {"properties": {"contactMethod": {"const": "phone"}},
                               "required": ["contactMethod"]},
                        "then": {"required": ["phone"]},
                        "else": {"required": ["email"]},
                        "additionalProperties": false
                    })
                );
                assert_eq!(t["description"], "Tool with JSON Schema 2020-12 features");
                assert_eq!(t["annotations"], json!({"readOnlyHint": true}));
            }
            "test_custom_header_routing" => assert_eq!(
                schema,
                &json!({"type": "object", "required": ["region"],
                    "properties": {"region": {"type": "string",
                        "description": "Where to route the call", "x-mcp-header": "Region"}}})
            ),
            "greet" => assert_eq!(
                schema,
                &json!({"type": "object", "required": ["name"],
                    "properties": {"name": {"type": "string"}}})
            ),
            "slow_compute" => assert_eq!(
                schema,
                &json!({"type": "object", "properties": {
                    "seconds": {"type": "number"}, "label": {"type": "string"}}})
            ),
            "confirm_delete" => assert_eq!(
                schema,
                &json!({"type": "object", "properties": {"filename": {"type": "string"}}})
            ),
            "test_structured_content" => {
                assert_eq!(schema["required"], json!(["city"]));
                assert_eq!(
                    t["outputSchema"]["required"],
                    json!(["city", "temperature_c", "conditions"])
                );
                assert_eq!(
                    t["outputSchema"]["properties"]["temperature_c"]["type"],
                    "number"
                );
            }
            _ => assert_eq!(schema, &empty, "{name}"),
        }
    }
}

#[test]
fn content_tools_return_the_specified_content() {
    let mut c = Client::legacy_full();
    let cases = [
        (
            "test_simple_text",
            json!([{"type": "text", "text": "This is a simple text response for testing."}]),
        ),
        (
            "test_image_content",
            json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]),
        ),
        (
            "test_audio_content",
            json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]),
        ),
        (
            "test_embedded_resource",
            json!([{"type": "resource", "resource": {"uri": "test://embedded-resource",
                "mimeType": "text/plain", "text": "This is an embedded resource content."}}]),
        ),
        (
            "test_multiple_content_types",
            json!([
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource",
                    "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}
            ]),
        ),
        (
            "test_reconnection",
            json!([{"type": "text", "text": "Reconnection test completed successfully. If you \
                received this, the client properly reconnected after stream closure."}]),
        ),
    ];
    for (name, content) in cases {
        let r = c.call_tool(name, json!({}));
        assert_eq!(r, json!({"content": content}), "{name}");
    }
    // A tool failure is a result with isError, not a JSON-RPC error.
    let r = c.call_tool("test_error_handling", json!({}));
    assert_eq!(
        r,
        json!({"isError": true, "content": [{"type": "text",
            "text": "This tool intentionally returns an error for testing"}]})
    );
    let r = c.call_tool(
        "json_schema_2020_12_tool",
        json!({"name": "x", "email": "e", "address": {"city": "y"}}),
    );
    assert_eq!(
        only_text(&r),
        r#"JSON Schema 2020-12 tool called with: {"address":{"city":"y"},"email":"e","name":"x"}"#
    );
}

#[test]
fn arguments_that_break_the_published_schema_never_reach_the_handler() {
    // The hand-written schema says `name` is a string and no other property is allowed: the
    // kit refuses the call with a tool error naming each field (2025-11-25: a result, so the
    // model can correct itself).
    let mut c = Client::legacy_full();
    let r = c.call_tool(
        "json_schema_2020_12_tool",
        json!({"name": 5, "bogus": true}),
    );
    assert_eq!(r["isError"], true, "{r}");
    let text = only_text(&r);
    assert!(text.contains("name: expected string, got number"), "{text}");
    assert!(text.contains("bogus: property not allowed"), "{text}");
    assert!(!text.contains("called with"), "{text}");
}

#[test]
fn progress_notifications_come_before_the_response() {
    let mut c = Client::legacy_full();
    let id = c.request(
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {},
               "_meta": {"progressToken": "progress-test-1"}}),
    );
    let (before, resp) = c.until_response(&id);
    let progress: Vec<&Value> = before
        .iter()
        .filter(|m| has_method(m, "notifications/progress"))
        .collect();
    assert_eq!(progress.len(), 3, "{before:#?}");
    for (p, step) in progress.iter().zip([0.0, 50.0, 100.0]) {
        let params = &p["params"];
        assert_eq!(params["progressToken"], "progress-test-1");
        assert_eq!(params["progress"].as_f64(), Some(step));
        assert_eq!(params["total"].as_f64(), Some(100.0));
        assert_eq!(
            params["message"],
            format!("Completed step {step} of 100").as_str()
        );
    }
    assert_eq!(only_text(&resp["result"]), "Progress test completed");

    // A numeric token is echoed as a number; without a token, no progress at all.
    let id = c.request(
        "tools/call",
        json!({"name": "test_tool_with_progress", "_meta": {"progressToken": 42}}),
    );
    let (before, _) = c.until_response(&id);
    let tokens: Vec<&Value> = before
        .iter()
        .filter(|m| has_method(m, "notifications/progress"))
        .map(|m| &m["params"]["progressToken"])
        .collect();
    assert_eq!(tokens, vec![&json!(42); 3]);
    let id = c.request("tools/call", json!({"name": "test_tool_with_progress"}));
    let (before, _) = c.until_response(&id);
    assert!(before.is_empty(), "no token, no progress: {before:?}");
}

#[test]
fn logging_sends_three_messages_and_obeys_set_level() {
    let mut c = Client::legacy_full();
    let id = c.request("tools/call", json!({"name": "test_tool_with_logging"}));
    let (before, resp) = c.until_response(&id);
    let logs: Vec<&Value> = before
        .iter()
        .filter(|m| has_method(m, "notifications/message"))
        .map(|m| &m["params"])
        .collect();
    assert_eq!(
        logs,
        vec![
            &json!({"level": "info", "data": "Tool execution started"}),
            &json!({"level": "info", "data": "Tool processing data"}),
            &json!({"level": "info", "data": "Tool execution completed"}),
        ]
    );
    assert_eq!(
        only_text(&resp["result"]),
        "Tool with logging executed successfully"
    );

    assert_eq!(
        c.result("logging/setLevel", json!({"level": "error"})),
        json!({})
    );
    let id = c.request("tools/call", json!({"name": "test_tool_with_logging"}));
    let (before, resp) = c.until_response(&id);
    assert!(before.is_empty(), "info is below error: {before:?}");
    assert!(resp.get("result").is_some());

    assert_eq!(
        c.result("logging/setLevel", json!({"level": "debug"})),
        json!({})
    );
    let id = c.request("tools/call", json!({"name": "test_tool_with_logging"}));
    let (before, _) = c.until_response(&id);
    assert_eq!(before.len(), 3, "{before:?}");

    let e = c.error("logging/setLevel", json!({"level": "loud"}));
    assert_eq!(e["code"], -32602);
}

#[test]
fn sampling_round_trip() {
    let mut c = Client::legacy_full();
    let id = c.request(
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "Test prompt for sampling"}}),
    );
    let req = c.server_request("sampling/createMessage");
    assert_eq!(
        req["params"],
        json!({"messages": [{"role": "user",
            "content": {"type": "text", "text": "Test prompt for sampling"}}],
            "maxTokens": 100})
    );
    c.reply(
        &req["id"],
        json!({"role": "assistant", "model": "test-model", "stopReason": "endTurn",
            "content": {"type": "text", "text": "This is a test response from the client"}}),
    );
    let resp = c.response(&id);
    assert_eq!(
        resp["result"],
        json!({"content": [{"type": "text",
            "text": "LLM response: This is a test response from the client"}]})
    );

    // The client answers the sampling request with an error: the tool reports it.
    let id = c.request(
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "again"}}),
    );
    let req = c.server_request("sampling/createMessage");
    c.reply_error(&req["id"], -1, "User rejected sampling request");
    let resp = c.response(&id);
    assert_eq!(resp["result"]["isError"], true, "{resp}");
    assert!(
        only_text(&resp["result"]).contains("User rejected sampling request"),
        "{resp}"
    );
}

#[test]
fn elicitation_round_trips() {
    let mut c = Client::legacy_full();
    let id = c.request(
        "tools/call",
        json!({"name": "test_elicitation",
               "arguments": {"message": "Please provide your information"}}),
    );
    let req = c.server_request("elicitation/create");
    assert_eq!(
        req["params"],
        json!({
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
        })
    );
    c.reply(
        &req["id"],
        json!({"action": "accept", "content": {"username": "testuser", "email": "test@example.com"}}),
    );
    let resp = c.response(&id);
    assert_eq!(
        only_text(&resp["result"]),
        r#"User response: action=accept, content={"email":"test@example.com","username":"testuser"}"#
    );

    // Declined: no content.
    let id = c.request(
        "tools/call",
        json!({"name": "test_elicitation", "arguments": {"message": "again"}}),
    );
    let req = c.server_request("elicitation/create");
    c.reply(&req["id"], json!({"action": "decline"}));
    let resp = c.response(&id);
    assert_eq!(
        only_text(&resp["result"]),
        "User response: action=decline, content=null"
    );
}

#[test]
fn elicitation_defaults_and_enums_schemas() {
    let mut c = Client::legacy_full();
    let id = c.request(
        "tools/call",
        json!({"name": "test_elicitation_sep1034_defaults"}),
    );
    let req = c.server_request("elicitation/create");
    assert_eq!(
        req["params"]["message"],
        "Please review and update the form fields with defaults"
    );
    assert_eq!(
        req["params"]["requestedSchema"],
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {"type": "string", "description": "User status",
                           "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verified user", "default": true}
            },
            "required": []
        })
    );
    c.reply(
        &req["id"],
        json!({"action": "accept", "content": {"name": "Jane", "age": 31}}),
    );
    let resp = c.response(&id);
    assert_eq!(
        only_text(&resp["result"]),
        r#"Elicitation completed: action=accept, content={"age":31,"name":"Jane"}"#
    );

    let id = c.request(
        "tools/call",
        json!({"name": "test_elicitation_sep1330_enums"}),
    );
    let req = c.server_request("elicitation/create");
    let props = &req["params"]["requestedSchema"]["properties"];
    assert_eq!(
        props["untitledSingle"],
        json!({"type": "string", "enum": ["option1", "option2", "option3"]})
    );
    assert_eq!(
        props["titledSingle"],
        json!({"type": "string", "oneOf": [
            {"const": "value1", "title": "First Option"},
            {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"}]})
    );
    assert_eq!(
        props["legacyEnum"],
        json!({"type": "string", "enum": ["opt1", "opt2", "opt3"],
               "enumNames": ["Option One", "Option Two", "Option Three"]})
    );
    assert_eq!(
        props["untitledMulti"],
        json!({"type": "array", "minItems": 1, "maxItems": 3,
               "items": {"type": "string", "enum": ["option1", "option2", "option3"]}})
    );
    assert_eq!(
        props["titledMulti"],
        json!({"type": "array", "items": {"anyOf": [
            {"const": "value1", "title": "First Choice"},
            {"const": "value2", "title": "Second Choice"},
            {"const": "value3", "title": "Third Choice"}]}})
    );
    c.reply(&req["id"], json!({"action": "cancel"}));
    let resp = c.response(&id);
    assert_eq!(
        only_text(&resp["result"]),
        "Elicitation completed: action=cancel, content=null"
    );
}

#[test]
fn tools_needing_client_capabilities_fail_without_them() {
    let (mut c, _) = Client::legacy("2025-11-25", json!({}));
    for (tool, args, cap) in [
        ("test_sampling", json!({"prompt": "p"}), "sampling"),
        ("test_elicitation", json!({"message": "m"}), "elicitation"),
        (
            "test_elicitation_sep1034_defaults",
            json!({}),
            "elicitation",
        ),
        ("test_elicitation_sep1330_enums", json!({}), "elicitation"),
    ] {
        let id = c.request("tools/call", json!({"name": tool, "arguments": args}));
        let (before, resp) = c.until_response(&id);
        assert!(
            before.iter().all(|m| m.get("id").is_none()),
            "no request to a client without {cap}: {before:?}"
        );
        let r = &resp["result"];
        assert_eq!(r["isError"], true, "{tool}: {resp}");
        assert!(only_text(r).contains(cap), "{tool}: {resp}");
    }
}

/// The size of a fixture skill's SKILL.md.
fn skill_md_size(path: &str) -> u64 {
    let p = format!("{}/skills/{path}/SKILL.md", env!("CARGO_MANIFEST_DIR"));
    std::fs::metadata(p).unwrap().len()
}

#[test]
fn resources_list_templates_and_read() {
    let mut c = Client::legacy_full();
    let r = c.result("resources/list", json!({}));
    assert_eq!(
        r,
        json!({"resources": [
            {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain",
             "description": "A static text resource"},
            {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png",
             "description": "A static binary resource (a PNG)"},
            {"uri": "test://watched-resource", "name": "watched-resource",
             "mimeType": "text/plain", "description": "A resource that changes every few seconds"},
            // The fixture skills' SKILL.md, named and described from their frontmatter.
            {"uri": "skill://acme/billing/refunds/SKILL.md", "name": "refunds",
             "mimeType": "text/markdown", "size": skill_md_size("acme/billing/refunds"),
             "description": "Process customer refund requests per company policy"},
            {"uri": "skill://pdf-processing/SKILL.md", "name": "pdf-processing",
             "mimeType": "text/markdown", "size": skill_md_size("pdf-processing"),
             "description": "Extract, fill, and assemble PDF documents"}
        ]})
    );
    let r = c.result("resources/templates/list", json!({}));
    assert_eq!(
        r,
        json!({"resourceTemplates": [{"uriTemplate": "test://template/{id}/data",
            "name": "template", "mimeType": "application/json",
            "description": "A resource template with one parameter"}]})
    );
    let read = |c: &mut Client, uri: &str| c.result("resources/read", json!({"uri": uri}));
    assert_eq!(
        read(&mut c, "test://static-text"),
        json!({"contents": [{"uri": "test://static-text", "mimeType": "text/plain",
            "text": "This is the content of the static text resource."}]})
    );
    assert_eq!(
        read(&mut c, "test://static-binary"),
        json!({"contents": [{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}]})
    );
    assert_eq!(
        read(&mut c, "test://watched-resource"),
        json!({"contents": [{"uri": "test://watched-resource", "mimeType": "text/plain",
            "text": "Watched resource content"}]})
    );
    assert_eq!(
        read(&mut c, "test://template/123/data"),
        json!({"contents": [{"uri": "test://template/123/data", "mimeType": "application/json",
            "text": "{\"data\":\"Data for ID: 123\",\"id\":\"123\",\"templateTest\":true}"}]})
    );
    let e = c.error("resources/read", json!({"uri": "test://no-such-thing"}));
    assert_eq!(e["code"], -32002, "{e}");
    assert_eq!(e["data"]["uri"], "test://no-such-thing");
    let e = c.error("resources/read", json!({}));
    assert_eq!(e["code"], -32602, "{e}");
}

#[test]
fn subscribe_gets_updates_and_unsubscribe_stops_them() {
    let mut c = Client::spawn_manual_clock();
    c.initialize("2025-11-25", json!({"sampling": {}, "elicitation": {}}));
    let r = c.result(
        "resources/subscribe",
        json!({"uri": "test://watched-resource"}),
    );
    assert_eq!(r, json!({}));
    let is_update = |m: &Value| {
        has_method(m, "notifications/resources/updated")
            && m["params"]["uri"] == "test://watched-resource"
    };
    // The clock's first tick adds a tool; each later one changes the watched resource, and
    // the notification is out before the tick is answered.
    c.call_tool("test_tick", json!({}));
    let tick = c.request("tools/call", json!({"name": "test_tick"}));
    let (before, _) = c.until_response(&tick);
    let n = before
        .into_iter()
        .find(is_update)
        .expect("resources/updated before the tick's answer");
    assert_eq!(
        n,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "test://watched-resource"}})
    );
    let r = c.result(
        "resources/unsubscribe",
        json!({"uri": "test://watched-resource"}),
    );
    assert_eq!(r, json!({}));
    let tick = c.request("tools/call", json!({"name": "test_tick"}));
    c.assert_none_before("update after unsubscribe", &tick, is_update);
}

#[test]
fn prompts_list_and_get() {
    let mut c = Client::legacy_full();
    let r = c.result("prompts/list", json!({}));
    assert_eq!(
        r,
        json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A prompt without arguments"},
            {"name": "test_prompt_with_arguments",
             "description": "A prompt with two required arguments",
             "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true}]},
            {"name": "test_prompt_with_embedded_resource",
             "description": "A prompt that embeds a resource",
             "arguments": [{"name": "resourceUri", "description": "URI of the resource to embed",
                            "required": true}]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"},
            {"name": "test_input_required_result_prompt",
             "description": "A prompt that asks the user for its context first"}
        ]})
    );
    let get = |c: &mut Client, name: &str, args: Value| {
        c.result("prompts/get", json!({"name": name, "arguments": args}))
    };
    let user = |content: Value| json!({"role": "user", "content": content});
    assert_eq!(
        get(&mut c, "test_simple_prompt", json!({})),
        json!({"messages": [user(json!({"type": "text",
            "text": "This is a simple prompt for testing."}))]})
    );
    assert_eq!(
        get(
            &mut c,
            "test_prompt_with_arguments",
            json!({"arg1": "testValue1", "arg2": "testValue2"})
        ),
        json!({"messages": [user(json!({"type": "text",
            "text": "Prompt with arguments: arg1='testValue1', arg2='testValue2'"}))]})
    );
    assert_eq!(
        get(
            &mut c,
            "test_prompt_with_embedded_resource",
            json!({"resourceUri": "test://example-resource"})
        ),
        json!({"messages": [
            user(json!({"type": "resource", "resource": {"uri": "test://example-resource",
                "mimeType": "text/plain", "text": "Embedded resource content for testing."}})),
            user(json!({"type": "text", "text": "Please process the embedded resource above."}))
        ]})
    );
    assert_eq!(
        get(&mut c, "test_prompt_with_image", json!({})),
        json!({"messages": [
            user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
            user(json!({"type": "text", "text": "Please analyze the image above."}))
        ]})
    );
    let e = c.error(
        "prompts/get",
        json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a"}}),
    );
    assert_eq!(e["code"], -32602, "{e}");
    assert!(e["message"].as_str().unwrap().contains("arg2"), "{e}");
    let e = c.error("prompts/get", json!({"name": "no_such_prompt"}));
    assert_eq!(e["code"], -32602, "{e}");
}

#[test]
fn completion_for_prompt_argument_and_template_variable() {
    let mut c = Client::legacy_full();
    let r = c.result(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
               "argument": {"name": "arg1", "value": "test"}}),
    );
    assert_eq!(
        r,
        json!({"completion": {"values": ["test", "testValue1"], "total": 2, "hasMore": false}})
    );
    let r = c.result(
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
               "argument": {"name": "id", "value": "1"}}),
    );
    assert_eq!(
        r,
        json!({"completion": {"values": ["1", "123"], "total": 2, "hasMore": false}})
    );
    // An argument without a completer completes to nothing.
    let r = c.result(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
               "argument": {"name": "arg2", "value": "x"}}),
    );
    assert_eq!(r["completion"]["values"], json!([]));
    let e = c.error(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "nope"},
               "argument": {"name": "a", "value": ""}}),
    );
    assert_eq!(e["code"], -32602);
}

#[test]
fn dynamic_tool_is_announced_and_callable() {
    let mut c = Client::spawn_manual_clock();
    c.initialize("2025-11-25", json!({"sampling": {}, "elicitation": {}}));
    let names = |r: &Value| -> Vec<String> {
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let r = c.result("tools/list", json!({}));
    assert_eq!(names(&r).len(), FIXTURE_TOOLS.len() + 1, "{r}");
    assert_eq!(names(&r)[FIXTURE_TOOLS.len()], "test_tick");
    // The clock's first tick registers the tool and announces it before the tick's answer.
    let tick = c.request("tools/call", json!({"name": "test_tick"}));
    let (before, _) = c.until_response(&tick);
    let n = before
        .iter()
        .find(|m| has_method(m, "notifications/tools/list_changed"))
        .unwrap_or_else(|| panic!("tools/list_changed before the tick's answer: {before:?}"));
    assert!(n.get("id").is_none());
    let r = c.result("tools/list", json!({}));
    let names = names(&r);
    assert_eq!(names.len(), FIXTURE_TOOLS.len() + 2, "{names:?}");
    assert_eq!(names[FIXTURE_TOOLS.len() + 1], "test_dynamic_tool");
    let r = c.call_tool("test_dynamic_tool", json!({}));
    assert_eq!(only_text(&r), "This tool was added at run time");
}

#[test]
fn cancelled_call_never_gets_a_response() {
    let mut c = Client::legacy_full();
    let id = c.request(
        "tools/call",
        json!({"name": "test_tool_with_progress", "_meta": {"progressToken": "c1"}}),
    );
    // Wait until it is surely running.
    c.wait_for("first progress", TIMEOUT, |m| {
        has_method(m, "notifications/progress")
    });
    c.notify(
        "notifications/cancelled",
        Some(json!({"requestId": id, "reason": "test"})),
    );
    c.assert_alive();
    // The same work started after the cancellation has run its course by the time it is
    // answered, so the cancelled one has too: no answer to it may come before.
    let later = c.request("tools/call", json!({"name": "test_tool_with_progress"}));
    let target = id.clone();
    let r = c.assert_none_before("response to a cancelled call", &later, |m| {
        answers(m, &target)
    });
    assert_eq!(only_text(&r["result"]), "Progress test completed");
    let barrier = c.request("ping", json!({}));
    c.assert_none_before("response to a cancelled call", &barrier, |m| {
        answers(m, &target)
    });
}

#[test]
fn cancelling_a_call_that_waits_for_sampling() {
    let mut c = Client::legacy_full();
    let id = c.request(
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "p"}}),
    );
    let req = c.server_request("sampling/createMessage");
    c.notify("notifications/cancelled", Some(json!({"requestId": id})));
    c.assert_alive();
    // A late answer to the abandoned sampling request is harmless.
    c.reply(
        &req["id"],
        json!({"role": "assistant", "model": "m", "content": {"type": "text", "text": "late"}}),
    );
    let target = id.clone();
    // The next sampling call works normally.
    let id = c.request(
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "q"}}),
    );
    let req = c.server_request("sampling/createMessage");
    assert_eq!(req["params"]["messages"][0]["content"]["text"], "q");
    c.reply(
        &req["id"],
        json!({"role": "assistant", "model": "m", "content": {"type": "text", "text": "fine"}}),
    );
    assert_eq!(only_text(&c.response(&id)["result"]), "LLM response: fine");
    // The cancelled call, woken long before, was never answered.
    let barrier = c.request("ping", json!({}));
    c.assert_none_before("response to a cancelled call", &barrier, |m| {
        answers(m, &target)
    });
}

#[test]
fn protocol_errors() {
    let mut c = Client::spawn();
    // Before initialize: only ping is allowed.
    let e = c.error("tools/list", json!({}));
    assert_eq!(e["code"], -32600, "{e}");
    assert_eq!(c.result("ping", json!({})), json!({}));
    c.initialize("2025-11-25", json!({}));
    let e = c.error(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "again", "version": "1"}}),
    );
    assert_eq!(e["code"], -32600, "{e}");
    let e = c.error("tools/call", json!({"name": "no_such_tool"}));
    assert_eq!(e["code"], -32602, "{e}");
    assert!(e["message"].as_str().unwrap().contains("no_such_tool"));
    let e = c.error("no/such/method", json!({}));
    assert_eq!(e["code"], -32601, "{e}");
    // 2026-07-28-only methods do not exist in a legacy session.
    let e = c.error("server/discover", json!({}));
    assert_eq!(e["code"], -32601, "{e}");
    for list in [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ] {
        let e = c.error(list, json!({"cursor": "5.0123456789abcdef"}));
        assert_eq!(e["code"], -32602, "{list}: {e}");
        let e = c.error(list, json!({"cursor": "garbage"}));
        assert_eq!(e["code"], -32602, "{list}: {e}");
    }
    // A modern request cannot join a legacy session.
    let e = c.error("tools/list", common::modern(json!({}), json!({})));
    assert_eq!(e["code"], -32600, "{e}");
    c.assert_alive();
}

#[test]
fn stdin_eof_ends_the_process_with_success() {
    let mut c = Client::legacy_full();
    c.assert_alive();
    let status = c.close();
    assert!(status.success(), "{status:?}");
}

#[test]
fn without_the_manual_clock_the_timers_announce_the_dynamic_tool() {
    // The default clock is the one every other client sees (the interop tours wait for it):
    // the dynamic tool appears about 2 s after start.
    let mut c = Client::legacy_full();
    let n = c.wait_for("tools/list_changed", TIMEOUT, |m| {
        has_method(m, "notifications/tools/list_changed")
    });
    assert!(n.get("id").is_none());
    let r = c.call_tool("test_dynamic_tool", json!({}));
    assert_eq!(only_text(&r), "This tool was added at run time");
}
