//! What we serialize validates against the official schema of every revision it belongs to.
//!
//! Representative instances of every message are decoded into our types, re-encoded, shaped
//! for each revision with `types::shape`, and validated against that revision's definitions
//! (`#/definitions/X` in the draft-07 files, `#/$defs/X` in the 2020-12 files), both as the
//! specific definition (`CallToolResult`) and inside the method sets (`ClientRequest`,
//! `ServerResult`...).

use std::fmt::Debug;

use mcp_core::types::shape::{self, ShapeError};
use mcp_core::types::*;
use mcp_core::version::ProtocolVersion;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

mod schema_support;
use schema_support::Schemas;

/// Decodes `json` as `T` and re-encodes it: what goes through the shaper is what our types
/// produce, not the hand-written JSON.
fn ours<T: Serialize + DeserializeOwned + Debug>(json: Value) -> Value {
    let t: T = serde_json::from_value(json.clone())
        .unwrap_or_else(|e| panic!("{}: {e}: {json}", std::any::type_name::<T>()));
    serde_json::to_value(t).unwrap()
}

fn request_def(method: &str, v: ProtocolVersion) -> Option<&'static str> {
    Some(match method {
        methods::INITIALIZE => "InitializeRequest",
        methods::PING => "PingRequest",
        methods::SERVER_DISCOVER => "DiscoverRequest",
        methods::TOOLS_LIST => "ListToolsRequest",
        methods::TOOLS_CALL => "CallToolRequest",
        methods::RESOURCES_LIST => "ListResourcesRequest",
        methods::RESOURCES_TEMPLATES_LIST => "ListResourceTemplatesRequest",
        methods::RESOURCES_READ => "ReadResourceRequest",
        methods::RESOURCES_SUBSCRIBE => "SubscribeRequest",
        methods::RESOURCES_UNSUBSCRIBE => "UnsubscribeRequest",
        methods::PROMPTS_LIST => "ListPromptsRequest",
        methods::PROMPTS_GET => "GetPromptRequest",
        methods::COMPLETION_COMPLETE => "CompleteRequest",
        methods::LOGGING_SET_LEVEL => "SetLevelRequest",
        methods::SUBSCRIPTIONS_LISTEN => "SubscriptionsListenRequest",
        methods::SAMPLING_CREATE_MESSAGE => "CreateMessageRequest",
        methods::ELICITATION_CREATE => "ElicitRequest",
        methods::ROOTS_LIST => "ListRootsRequest",
        methods::TASKS_GET if v == ProtocolVersion::V2025_11_25 => "GetTaskRequest",
        methods::TASKS_RESULT => "GetTaskPayloadRequest",
        methods::TASKS_LIST => "ListTasksRequest",
        methods::TASKS_CANCEL if v == ProtocolVersion::V2025_11_25 => "CancelTaskRequest",
        _ => return None,
    })
}

fn result_def(method: &str, v: ProtocolVersion) -> Option<&'static str> {
    Some(match method {
        methods::INITIALIZE => "InitializeResult",
        methods::PING
        | methods::LOGGING_SET_LEVEL
        | methods::RESOURCES_SUBSCRIBE
        | methods::RESOURCES_UNSUBSCRIBE => "EmptyResult",
        methods::SERVER_DISCOVER => "DiscoverResult",
        methods::TOOLS_LIST => "ListToolsResult",
        methods::TOOLS_CALL => "CallToolResult",
        methods::RESOURCES_LIST => "ListResourcesResult",
        methods::RESOURCES_TEMPLATES_LIST => "ListResourceTemplatesResult",
        methods::RESOURCES_READ => "ReadResourceResult",
        methods::PROMPTS_LIST => "ListPromptsResult",
        methods::PROMPTS_GET => "GetPromptResult",
        methods::COMPLETION_COMPLETE => "CompleteResult",
        methods::SUBSCRIPTIONS_LISTEN => "SubscriptionsListenResult",
        methods::SAMPLING_CREATE_MESSAGE => "CreateMessageResult",
        methods::ELICITATION_CREATE => "ElicitResult",
        methods::ROOTS_LIST => "ListRootsResult",
        methods::TASKS_GET if v == ProtocolVersion::V2025_11_25 => "GetTaskResult",
        methods::TASKS_LIST => "ListTasksResult",
        methods::TASKS_CANCEL if v == ProtocolVersion::V2025_11_25 => "CancelTaskResult",
        _ => return None,
    })
}

fn notification_def(method: &str) -> &'static str {
    match method {
        methods::NOTIFICATION_CANCELLED => "CancelledNotification",
        methods::NOTIFICATION_INITIALIZED => "InitializedNotification",
        methods::NOTIFICATION_PROGRESS => "ProgressNotification",
        methods::NOTIFICATION_MESSAGE => "LoggingMessageNotification",
        methods::NOTIFICATION_RESOURCES_LIST_CHANGED => "ResourceListChangedNotification",
        methods::NOTIFICATION_RESOURCES_UPDATED => "ResourceUpdatedNotification",
        methods::NOTIFICATION_PROMPTS_LIST_CHANGED => "PromptListChangedNotification",
        methods::NOTIFICATION_TOOLS_LIST_CHANGED => "ToolListChangedNotification",
        methods::NOTIFICATION_ROOTS_LIST_CHANGED => "RootsListChangedNotification",
        methods::NOTIFICATION_ELICITATION_COMPLETE => "ElicitationCompleteNotification",
        methods::NOTIFICATION_TASKS_STATUS => "TaskStatusNotification",
        methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED => "SubscriptionsAcknowledgedNotification",
        _ => "JSONRPCNotification",
    }
}

/// Shapes `params` of `method` for every revision that has the method and validates. Returns
/// how many revisions accepted at least one instance.
fn check_request(s: &Schemas, method: &str, instances: &[Value]) -> usize {
    let mut covered = 0;
    for v in ProtocolVersion::ALL {
        if !methods::known_in(method, v) {
            let mut p = instances[0].clone();
            assert!(
                matches!(
                    shape::request_params(method, &mut p, v),
                    Err(ShapeError::MethodNotInRevision { .. })
                ),
                "{method} should be refused for {v}"
            );
            continue;
        }
        let mut any = false;
        for inst in instances {
            let mut p = inst.clone();
            if shape::request_params(method, &mut p, v).is_err() {
                continue;
            }
            any = true;
            let embedded = v == ProtocolVersion::V2026_07_28 && methods::is_input_request(method);
            let mut msg = json!({"jsonrpc": "2.0", "id": 1, "method": method});
            if embedded {
                msg = json!({"method": method});
            }
            if !p.is_null() {
                msg["params"] = p;
            }
            if let Some(def) = request_def(method, v) {
                s.assert_valid(v, def, &msg);
            }
            if embedded {
                s.assert_valid(v, "InputRequest", &msg);
                continue;
            }
            s.assert_valid(v, "JSONRPCRequest", &msg);
            let set = if methods::is_input_request(method) {
                "ServerRequest"
            } else {
                "ClientRequest"
            };
            if request_def(method, v).is_some() {
                s.assert_valid(v, set, &msg);
            }
        }
        assert!(any, "no instance of {method} could be shaped for {v}");
        covered += 1;
    }
    covered
}

fn check_result(s: &Schemas, method: &str, instances: &[Value]) {
    for v in ProtocolVersion::ALL {
        if !methods::known_in(method, v) {
            continue;
        }
        let mut any = false;
        for inst in instances {
            let mut r = inst.clone();
            if shape::result(method, &mut r, v).is_err() {
                continue;
            }
            any = true;
            let input_required = r.get("resultType") == Some(&json!("input_required"));
            let def = if input_required {
                Some("InputRequiredResult")
            } else {
                result_def(method, v)
            };
            if let Some(def) = def {
                s.assert_valid(v, def, &r);
            }
            let to_client = ![
                methods::SAMPLING_CREATE_MESSAGE,
                methods::ELICITATION_CREATE,
                methods::ROOTS_LIST,
            ]
            .contains(&method);
            if v == ProtocolVersion::V2026_07_28 && !to_client {
                s.assert_valid(v, "InputResponse", &r);
            } else if def.is_some() {
                s.assert_valid(
                    v,
                    if to_client {
                        "ServerResult"
                    } else {
                        "ClientResult"
                    },
                    &r,
                );
                let resp = json!({"jsonrpc": "2.0", "id": "a", "result": r});
                s.assert_valid(v, "JSONRPCResponse", &resp);
            }
        }
        assert!(any, "no result of {method} could be shaped for {v}");
    }
}

fn check_notification(s: &Schemas, method: &str, params: Value, client: bool) {
    for v in ProtocolVersion::ALL {
        let mut p = params.clone();
        if !methods::known_in(method, v) {
            assert!(shape::notification_params(method, &mut p, v).is_err());
            continue;
        }
        shape::notification_params(method, &mut p, v).unwrap();
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if !p.is_null() {
            msg["params"] = p;
        }
        s.assert_valid(v, "JSONRPCNotification", &msg);
        if method == methods::NOTIFICATION_TASKS {
            continue; // the tasks extension is not in the core schema
        }
        s.assert_valid(v, notification_def(method), &msg);
        let set = if client {
            "ClientNotification"
        } else {
            "ServerNotification"
        };
        let in_set = !(v == ProtocolVersion::V2026_07_28
            && client
            && method != methods::NOTIFICATION_CANCELLED);
        if in_set {
            s.assert_valid(v, set, &msg);
        }
    }
}

fn rich_tool() -> Value {
    json!({"name": "get_weather", "title": "Weather", "description": "d",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "outputSchema": {"type": "object", "properties": {"t": {"type": "number"}}},
        "annotations": {"title": "W", "readOnlyHint": true, "lastModified": "x"},
        "execution": {"taskSupport": "optional"},
        "icons": [{"src": "https://x.invalid/i.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "light"}],
        "_meta": {"com.example/k": 1}})
}

#[test]
fn client_requests_validate_in_every_revision() {
    let s = Schemas::load();
    let caps = json!({"roots": {"listChanged": true}, "sampling": {"context": {}, "tools": {}},
        "elicitation": {"form": {}, "url": {}}, "tasks": {"list": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}},
        "experimental": {"x": {}}});
    let init = ours::<InitializeRequestParams>(
        json!({"protocolVersion": "2025-06-18", "capabilities": caps,
        "clientInfo": {"name": "c", "title": "C", "version": "1", "description": "d", "websiteUrl": "https://x.invalid",
            "icons": [{"src": "https://x.invalid/i"}]}}),
    );
    check_request(&s, methods::INITIALIZE, &[init]);
    check_request(&s, methods::PING, &[Value::Null]);
    check_request(&s, methods::SERVER_DISCOVER, &[Value::Null]);
    for m in [
        methods::TOOLS_LIST,
        methods::RESOURCES_LIST,
        methods::RESOURCES_TEMPLATES_LIST,
        methods::PROMPTS_LIST,
    ] {
        check_request(
            &s,
            m,
            &[ours::<PaginatedRequestParams>(
                json!({"cursor": "c", "_meta": {"progressToken": 1}}),
            )],
        );
    }
    check_request(
        &s,
        methods::TOOLS_CALL,
        &[
            ours::<CallToolRequestParams>(
                json!({"name": "get_weather", "arguments": {"city": "Paris"}, "inputResponses":
            {"k": {"action": "accept", "content": {"ok": true}}}, "requestState": "st"}),
            ),
            ours::<CallToolRequestParams>(
                json!({"name": "get_weather", "arguments": {"city": "Paris"}, "task": {"ttl": 1000}}),
            ),
            ours::<CallToolRequestParams>(
                json!({"name": "get_weather", "arguments": {"city": "Paris"},
            "_meta": {"progressToken": "p", "io.modelcontextprotocol/logLevel": "info",
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}}),
            ),
        ],
    );
    check_request(
        &s,
        methods::RESOURCES_READ,
        &[ours::<ReadResourceRequestParams>(
            json!({"uri": "file:///a"}),
        )],
    );
    check_request(
        &s,
        methods::RESOURCES_SUBSCRIBE,
        &[ours::<ResourceRequestParams>(json!({"uri": "file:///a"}))],
    );
    check_request(
        &s,
        methods::RESOURCES_UNSUBSCRIBE,
        &[ours::<ResourceRequestParams>(json!({"uri": "file:///a"}))],
    );
    check_request(
        &s,
        methods::PROMPTS_GET,
        &[ours::<GetPromptRequestParams>(
            json!({"name": "p", "arguments": {"a": "b"}}),
        )],
    );
    check_request(
        &s,
        methods::COMPLETION_COMPLETE,
        &[
            ours::<CompleteRequestParams>(
                json!({"ref": {"type": "ref/prompt", "name": "p", "title": "P"},
            "argument": {"name": "a", "value": "v"}, "context": {"arguments": {"x": "y"}}}),
            ),
            ours::<CompleteRequestParams>(
                json!({"ref": {"type": "ref/resource", "uri": "file:///{p}"}, "argument": {"name": "p", "value": ""}}),
            ),
        ],
    );
    check_request(
        &s,
        methods::LOGGING_SET_LEVEL,
        &[ours::<SetLevelRequestParams>(json!({"level": "warning"}))],
    );
    check_request(
        &s,
        methods::SUBSCRIPTIONS_LISTEN,
        &[ours::<SubscriptionsListenRequestParams>(
            json!({"notifications":
        {"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]}}),
        )],
    );
    check_request(
        &s,
        methods::TASKS_GET,
        &[ours::<TaskIdParams>(json!({"taskId": "t"}))],
    );
    check_request(
        &s,
        methods::TASKS_RESULT,
        &[ours::<TaskIdParams>(json!({"taskId": "t"}))],
    );
    check_request(
        &s,
        methods::TASKS_CANCEL,
        &[ours::<TaskIdParams>(json!({"taskId": "t"}))],
    );
    check_request(
        &s,
        methods::TASKS_LIST,
        &[ours::<PaginatedRequestParams>(json!({}))],
    );
}

#[test]
fn server_requests_validate_in_every_revision() {
    let s = Schemas::load();
    let n = check_request(
        &s,
        methods::SAMPLING_CREATE_MESSAGE,
        &[
            ours::<CreateMessageRequestParams>(json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "q"}, {"type": "tool_result", "toolUseId": "1", "content": [{"type": "text", "text": "r"}]}]},
            {"role": "assistant", "content": {"type": "tool_use", "id": "1", "name": "t", "input": {}}}],
            "maxTokens": 10, "tools": [rich_tool()], "toolChoice": {"mode": "auto"}})),
            ours::<CreateMessageRequestParams>(
                json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "q"}], "_meta": {}}],
            "modelPreferences": {"hints": [{"name": "m"}], "costPriority": 0.3}, "systemPrompt": "s",
            "includeContext": "none", "temperature": 0.2, "maxTokens": 10, "stopSequences": ["\n"], "metadata": {}}),
            ),
        ],
    );
    assert_eq!(n, 5);
    check_request(&s, methods::ROOTS_LIST, &[Value::Null]);
    let form = json!({"mode": "form", "message": "Who?", "requestedSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object", "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 1, "default": "x"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
            "ok": {"type": "boolean", "default": true},
            "color": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}], "default": "r"},
            "size": {"type": "string", "enum": ["s", "m"]},
            "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}},
        "required": ["name"]}});
    let multi = json!({"message": "Pick", "requestedSchema": {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1},
        "tags2": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}}}});
    let url = json!({"mode": "url", "message": "Sign in", "url": "https://x.invalid/auth", "elicitationId": "e1"});
    check_request(
        &s,
        methods::ELICITATION_CREATE,
        &[
            ours::<ElicitRequestParams>(form),
            ours::<ElicitRequestParams>(multi),
            ours::<ElicitRequestParams>(url),
        ],
    );
}

#[test]
fn results_validate_in_every_revision() {
    let s = Schemas::load();
    let server_info = json!({"name": "s", "title": "S", "version": "1", "icons": [{"src": "https://x.invalid/i"}]});
    check_result(
        &s,
        methods::INITIALIZE,
        &[ours::<InitializeResult>(
            json!({"protocolVersion": "2025-11-25",
        "capabilities": {"logging": {}, "completions": {}, "prompts": {"listChanged": true}, "resources": {"subscribe": true},
            "tools": {"listChanged": true}, "tasks": {"list": {}}, "extensions": {"x.y/z": {}}},
        "serverInfo": server_info, "instructions": "i"}),
        )],
    );
    check_result(&s, methods::PING, &[ours::<EmptyResult>(json!({}))]);
    check_result(
        &s,
        methods::SERVER_DISCOVER,
        &[ours::<DiscoverResult>(
            json!({"supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}, "instructions": "i",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}),
        )],
    );
    check_result(
        &s,
        methods::TOOLS_LIST,
        &[ours::<ListToolsResult>(
            json!({"tools": [rich_tool()], "nextCursor": "n"}),
        )],
    );
    let blocks = json!([
        {"type": "text", "text": "t", "annotations": {"audience": ["user"], "priority": 0.5, "lastModified": "2025-01-01T00:00:00Z"}, "_meta": {}},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///a", "text": "x", "_meta": {}}},
        {"type": "resource", "resource": {"uri": "file:///b", "blob": "AAAA", "mimeType": "application/octet-stream"}}]);
    let mut rich = blocks.clone();
    rich.as_array_mut().unwrap().extend([
        json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}),
        json!({"type": "resource_link", "uri": "file:///c", "name": "c", "title": "C", "icons": [{"src": "https://x.invalid/i"}]})]);
    check_result(
        &s,
        methods::TOOLS_CALL,
        &[
            ours::<CallToolResult>(
                json!({"content": rich, "structuredContent": {"t": 20}, "isError": false}),
            ),
            ours::<CallToolResult>(
                json!({"content": blocks.clone(), "structuredContent": {"t": 20}}),
            ),
            ours::<InputRequiredResult>(
                json!({"resultType": "input_required", "requestState": "s", "inputRequests": {
            "a": {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}},
            "b": {"method": "roots/list"}}}),
            ),
        ],
    );
    check_result(
        &s,
        methods::RESOURCES_LIST,
        &[ours::<ListResourcesResult>(
            json!({"resources": [{"uri": "file:///a",
        "name": "a", "title": "A", "size": 1, "mimeType": "text/plain", "icons": [{"src": "https://x.invalid/i"}], "_meta": {},
        "annotations": {"lastModified": "x"}}]}),
        )],
    );
    check_result(
        &s,
        methods::RESOURCES_TEMPLATES_LIST,
        &[ours::<ListResourceTemplatesResult>(
            json!({"resourceTemplates":
        [{"uriTemplate": "file:///{x}", "name": "x", "title": "X"}]}),
        )],
    );
    check_result(
        &s,
        methods::RESOURCES_READ,
        &[ours::<ReadResourceResult>(
            json!({"contents": [{"uri": "file:///a", "text": "x", "_meta": {}}]}),
        )],
    );
    check_result(
        &s,
        methods::PROMPTS_LIST,
        &[ours::<ListPromptsResult>(
            json!({"prompts": [{"name": "p", "title": "P",
        "arguments": [{"name": "a", "title": "A", "required": true}], "icons": [{"src": "https://x.invalid/i"}]}]}),
        )],
    );
    check_result(
        &s,
        methods::PROMPTS_GET,
        &[ours::<GetPromptResult>(
            json!({"description": "d", "messages": [
        {"role": "user", "content": {"type": "text", "text": "x"}},
        {"role": "assistant", "content": {"type": "resource", "resource": {"uri": "file:///a", "text": "t"}}}]}),
        )],
    );
    check_result(
        &s,
        methods::COMPLETION_COMPLETE,
        &[ours::<CompleteResult>(
            json!({"completion": {"values": ["a"], "total": 1, "hasMore": false}}),
        )],
    );
    check_result(
        &s,
        methods::SUBSCRIPTIONS_LISTEN,
        &[serde_json::to_value(SubscriptionsListenResult::closed(&"L1".into())).unwrap()],
    );
    check_result(
        &s,
        methods::SAMPLING_CREATE_MESSAGE,
        &[
            ours::<CreateMessageResult>(
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": "1", "name": "t", "input": {}}], "model": "m", "stopReason": "toolUse"}),
            ),
            ours::<CreateMessageResult>(
                json!({"role": "assistant", "content": [{"type": "text", "text": "a"}], "model": "m", "stopReason": "endTurn"}),
            ),
        ],
    );
    check_result(
        &s,
        methods::ELICITATION_CREATE,
        &[ours::<ElicitResult>(
            json!({"action": "accept", "content": {"name": "x", "age": 3, "ok": true}}),
        )],
    );
    check_result(
        &s,
        methods::ROOTS_LIST,
        &[ours::<ListRootsResult>(
            json!({"roots": [{"uri": "file:///r", "name": "r", "_meta": {}}]}),
        )],
    );
    let task = json!({"taskId": "t", "status": "working", "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": 60000, "pollInterval": 500});
    check_result(
        &s,
        methods::TASKS_GET,
        &[ours::<GetTaskResult>(task.clone())],
    );
    check_result(
        &s,
        methods::TASKS_LIST,
        &[ours::<ListTasksResult>(json!({"tasks": [task]}))],
    );
}

#[test]
fn notifications_validate_in_every_revision() {
    let s = Schemas::load();
    check_notification(
        &s,
        methods::NOTIFICATION_CANCELLED,
        ours::<CancelledNotificationParams>(json!({"requestId": 3, "reason": "r"})),
        true,
    );
    check_notification(&s, methods::NOTIFICATION_INITIALIZED, Value::Null, true);
    check_notification(
        &s,
        methods::NOTIFICATION_PROGRESS,
        ours::<ProgressNotificationParams>(
            json!({"progressToken": "p", "progress": 50, "total": 100, "message": "half"}),
        ),
        false,
    );
    check_notification(
        &s,
        methods::NOTIFICATION_MESSAGE,
        ours::<LoggingMessageNotificationParams>(
            json!({"level": "info", "logger": "l", "data": {"a": 1}}),
        ),
        false,
    );
    for m in [
        methods::NOTIFICATION_RESOURCES_LIST_CHANGED,
        methods::NOTIFICATION_PROMPTS_LIST_CHANGED,
        methods::NOTIFICATION_TOOLS_LIST_CHANGED,
    ] {
        check_notification(
            &s,
            m,
            json!({"_meta": {"io.modelcontextprotocol/subscriptionId": 4}}),
            false,
        );
    }
    check_notification(
        &s,
        methods::NOTIFICATION_ROOTS_LIST_CHANGED,
        Value::Null,
        true,
    );
    check_notification(
        &s,
        methods::NOTIFICATION_RESOURCES_UPDATED,
        ours::<ResourceRequestParams>(json!({"uri": "file:///a"})),
        false,
    );
    check_notification(
        &s,
        methods::NOTIFICATION_ELICITATION_COMPLETE,
        ours::<ElicitationCompleteNotificationParams>(json!({"elicitationId": "e"})),
        false,
    );
    check_notification(
        &s,
        methods::NOTIFICATION_TASKS_STATUS,
        ours::<TaskStatusNotificationParams>(json!({"taskId": "t", "status": "completed",
        "createdAt": "a", "lastUpdatedAt": "b", "ttl": null})),
        false,
    );
    check_notification(
        &s,
        methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
        ours::<SubscriptionsAcknowledgedNotificationParams>(
            json!({"notifications": {"toolsListChanged": true}}),
        ),
        false,
    );
    check_notification(
        &s,
        methods::NOTIFICATION_TASKS,
        ours::<tasks_ext::TaskStatusNotificationParams>(json!({"taskId": "t", "status": "working",
        "createdAt": "a", "lastUpdatedAt": "b", "ttlMs": 1000})),
        false,
    );
}

/// The validator and the shaper both bite: unshaped modern output fails on old revisions'
/// definitions and vice versa, and the shaper refuses what it cannot express.
#[test]
fn the_checks_can_fail() {
    let s = Schemas::load();
    let modern = ProtocolVersion::V2026_07_28;
    let old = ProtocolVersion::V2024_11_05;
    // No resultType/ttlMs/cacheScope: invalid in 2026-07-28 until shaped.
    let mut r = ours::<ListToolsResult>(json!({"tools": []}));
    assert!(!s.is_valid(modern, "ListToolsResult", &r));
    shape::result(methods::TOOLS_LIST, &mut r, modern).unwrap();
    assert!(s.is_valid(modern, "ListToolsResult", &r));
    assert_eq!(r["ttlMs"], json!(0));
    assert_eq!(r["cacheScope"], json!("private"));
    // Audio content is not a 2024-11-05 content type.
    let mut audio = ours::<CallToolResult>(
        json!({"content": [{"type": "audio", "data": "AA", "mimeType": "audio/wav"}]}),
    );
    assert!(!s.is_valid(old, "CallToolResult", &audio));
    assert!(shape::result(methods::TOOLS_CALL, &mut audio, old).is_err());
    // A modern request without _meta is invalid until shaped.
    let mut p = ours::<CallToolRequestParams>(json!({"name": "t"}));
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": p});
    assert!(!s.is_valid(modern, "CallToolRequest", &msg));
    shape::request_params(methods::TOOLS_CALL, &mut p, modern).unwrap();
    assert_eq!(
        p["_meta"]["io.modelcontextprotocol/protocolVersion"],
        json!("2026-07-28")
    );
    // Refusals.
    let mut link = ours::<CallToolResult>(
        json!({"content": [{"type": "resource_link", "uri": "u", "name": "n"}]}),
    );
    assert!(shape::result(methods::TOOLS_CALL, &mut link, ProtocolVersion::V2025_03_26).is_err());
    let mut ir =
        ours::<InputRequiredResult>(json!({"resultType": "input_required", "requestState": "s"}));
    assert!(shape::result(methods::TOOLS_CALL, &mut ir, ProtocolVersion::V2025_11_25).is_err());
    let mut wrong =
        json!({"name": "t", "_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}});
    assert!(shape::request_params(methods::TOOLS_CALL, &mut wrong, modern).is_err());
    let mut url = json!({"mode": "url", "message": "m", "url": "https://x.invalid"});
    assert!(
        shape::request_params(
            methods::ELICITATION_CREATE,
            &mut url,
            ProtocolVersion::V2025_11_25
        )
        .is_err()
    );
    // Titled single-select becomes enum + enumNames for 2025-06-18.
    let mut form = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {"c": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}]}}}});
    shape::request_params(
        methods::ELICITATION_CREATE,
        &mut form,
        ProtocolVersion::V2025_06_18,
    )
    .unwrap();
    assert_eq!(
        form["requestedSchema"]["properties"]["c"],
        json!({"type": "string", "enum": ["r"], "enumNames": ["Red"]})
    );
}

#[test]
fn extensions_are_declared_in_every_revision_but_tasks_only_in_2026() {
    // Hosts of 2025-06-18 and 2025-11-25 negotiate MCP Apps and skills under
    // `capabilities.extensions` (SEP-1724) today; the 2026 tasks extension is not theirs.
    let caps = json!({"tools": {}, "extensions": {
        "io.modelcontextprotocol/ui": {}, "io.modelcontextprotocol/skills": {},
        "io.modelcontextprotocol/tasks": {}}});
    let shaped = |v: ProtocolVersion| {
        let mut r = json!({"protocolVersion": v.as_str(), "capabilities": caps.clone(),
            "serverInfo": {"name": "s", "version": "1"}});
        shape::result(methods::INITIALIZE, &mut r, v).unwrap();
        r["capabilities"]["extensions"].clone()
    };
    for v in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ] {
        assert_eq!(
            shaped(v),
            json!({"io.modelcontextprotocol/ui": {}, "io.modelcontextprotocol/skills": {}}),
            "{v:?}"
        );
    }
    let mut only_tasks = json!({"protocolVersion": "2025-11-25", "capabilities":
        {"extensions": {"io.modelcontextprotocol/tasks": {}}}, "serverInfo": {"name": "s", "version": "1"}});
    shape::result(
        methods::INITIALIZE,
        &mut only_tasks,
        ProtocolVersion::V2025_11_25,
    )
    .unwrap();
    assert_eq!(only_tasks["capabilities"], json!({}));
    let mut r = json!({"supportedVersions": ["2026-07-28"], "capabilities": caps.clone()});
    shape::result(
        methods::SERVER_DISCOVER,
        &mut r,
        ProtocolVersion::V2026_07_28,
    )
    .unwrap();
    assert_eq!(r["capabilities"]["extensions"], caps["extensions"]);
}
