//! Every type round-trips: JSON -> type -> JSON gives the same value, unknown fields included,
//! and type -> JSON -> type gives an equal type.

use std::fmt::Debug;

use mcp_core::types::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Decodes `json` into `T`, checks that re-encoding gives the same JSON and that decoding that
/// again gives an equal `T`.
fn rt<T: Serialize + DeserializeOwned + PartialEq + Debug>(json: Value) -> T {
    let typed: T = serde_json::from_value(json.clone())
        .unwrap_or_else(|e| panic!("{} does not decode {json}: {e}", std::any::type_name::<T>()));
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(
        back,
        json,
        "{} changed on re-encode",
        std::any::type_name::<T>()
    );
    let again: T = serde_json::from_value(back).unwrap();
    assert_eq!(again, typed);
    typed
}

/// Adds an unknown field at the top level of an object.
fn with_extra(mut v: Value) -> Value {
    v.as_object_mut()
        .unwrap()
        .insert("x-unknown".into(), json!({"kept": [1, 2]}));
    v
}

fn both<T: Serialize + DeserializeOwned + PartialEq + Debug>(json: Value) -> T {
    rt::<T>(with_extra(json.clone()));
    rt::<T>(json)
}

#[test]
fn common_types() {
    both::<Implementation>(json!({"name": "s", "version": "1"}));
    both::<Implementation>(
        json!({"name": "s", "title": "S", "version": "1", "description": "d",
        "websiteUrl": "https://x.invalid", "icons": [{"src": "data:image/png;base64,AA", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}]}),
    );
    both::<Icon>(json!({"src": "https://x.invalid/i.png"}));
    both::<Annotations>(
        json!({"audience": ["user", "assistant"], "priority": 0.5, "lastModified": "2025-01-12T15:00:58Z"}),
    );
    rt::<LoggingLevel>(json!("emergency"));
    rt::<Role>(json!("assistant"));
    rt::<ResultType>(json!("complete"));
    rt::<ResultType>(json!("input_required"));
    assert_eq!(
        rt::<ResultType>(json!("vendor/x")),
        ResultType::Other("vendor/x".into())
    );
    rt::<CacheScope>(json!("public"));
    both::<RequestParams>(json!({"_meta": {"progressToken": 3}}));
    both::<NotificationParams>(json!({}));
    both::<EmptyResult>(json!({"resultType": "complete"}));
    assert!(LoggingLevel::Error > LoggingLevel::Warning);
}

#[test]
fn content_blocks() {
    let text = both::<ContentBlock>(
        json!({"type": "text", "text": "hi", "annotations": {"priority": 1.0}, "_meta": {"a": 1}}),
    );
    assert_eq!(text.as_text(), Some("hi"));
    both::<ContentBlock>(json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}));
    both::<ContentBlock>(json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}));
    both::<ContentBlock>(
        json!({"type": "resource_link", "uri": "file:///a", "name": "a", "title": "A",
        "description": "d", "mimeType": "text/plain", "size": 3, "icons": [{"src": "https://x.invalid/i"}]}),
    );
    both::<ContentBlock>(
        json!({"type": "resource", "resource": {"uri": "file:///a", "text": "t", "mimeType": "text/plain"}}),
    );
    both::<ContentBlock>(
        json!({"type": "resource", "resource": {"uri": "file:///b", "blob": "AAAA"}}),
    );
    // A field that belongs to another variant is kept, not lost.
    let b = both::<ContentBlock>(
        json!({"type": "text", "text": "hi", "uri": "file:///x", "data": "zz"}),
    );
    assert_eq!(b.kind(), "text");
    both::<SamplingMessageContentBlock>(
        json!({"type": "tool_use", "id": "u1", "name": "t", "input": {"a": 1}}),
    );
    both::<SamplingMessageContentBlock>(json!({"type": "tool_result", "toolUseId": "u1",
        "content": [{"type": "text", "text": "r"}], "structuredContent": {"a": 1}, "isError": false}));
    both::<SamplingMessageContentBlock>(json!({"type": "text", "text": "x"}));
    rt::<SamplingContent>(
        json!([{"type": "text", "text": "x"}, {"type": "image", "data": "AA", "mimeType": "image/png"}]),
    );
    rt::<SamplingContent>(json!({"type": "audio", "data": "AA", "mimeType": "audio/wav"}));
    assert_eq!(
        serde_json::to_value(ContentBlock::text("hi")).unwrap(),
        json!({"type": "text", "text": "hi"})
    );
}

#[test]
fn content_rejects_what_it_cannot_type() {
    for bad in [
        json!({"type": "video", "data": "x"}),
        json!({"type": "text"}),
        json!({"text": "no type"}),
        json!({"type": "image", "data": "AA"}),
        json!({"type": "resource", "resource": {"uri": "u"}}),
        json!({"type": "tool_use", "id": "x", "name": "y", "input": {}}),
        json!(["text"]),
        json!(null),
    ] {
        assert!(
            serde_json::from_value::<ContentBlock>(bad.clone()).is_err(),
            "{bad}"
        );
    }
    assert!(
        serde_json::from_value::<SamplingMessageContentBlock>(
            json!({"type": "resource_link", "uri": "u", "name": "n"})
        )
        .is_err()
    );
}

#[test]
fn lifecycle_types() {
    both::<ClientCapabilities>(
        json!({"experimental": {"x": {}}, "roots": {"listChanged": true},
        "sampling": {"context": {}, "tools": {}}, "elicitation": {"form": {}, "url": {}}, "tasks": {"list": {}},
        "extensions": {"io.modelcontextprotocol/tasks": {}}}),
    );
    both::<ServerCapabilities>(
        json!({"logging": {}, "completions": {}, "prompts": {"listChanged": true},
        "resources": {"subscribe": true, "listChanged": false}, "tools": {"listChanged": true}, "extensions": {}}),
    );
    both::<InitializeRequestParams>(json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}));
    both::<InitializeResult>(
        json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"}, "instructions": "use it"}),
    );
    both::<DiscoverResult>(
        json!({"supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": 0,
        "cacheScope": "private", "resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}),
    );
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
        "io.modelcontextprotocol/logLevel": "info", "progressToken": "p", "traceparent": "00-x"});
    let rm = both::<RequestMeta>(meta.clone());
    assert_eq!(rm.protocol_version.as_deref(), Some("2026-07-28"));
    assert_eq!(rm.log_level, Some(LoggingLevel::Info));
    let m = meta.as_object().unwrap();
    assert_eq!(RequestMeta::protocol_version_of(m), Some("2026-07-28"));
    assert_eq!(RequestMeta::from_meta(m).unwrap().into_meta(), *m);
}

#[test]
fn tools_types() {
    both::<Tool>(
        json!({"name": "t", "title": "T", "description": "d", "inputSchema": {"type": "object",
        "properties": {"a": {"type": "string", "x-mcp-header": "A"}}}, "outputSchema": {"type": "object"},
        "annotations": {"title": "tt", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
        "execution": {"taskSupport": "optional"}, "icons": [{"src": "https://x.invalid/i"}], "_meta": {"k": 1}}),
    );
    both::<ListToolsResult>(
        json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "nextCursor": "c",
        "ttlMs": 1000, "cacheScope": "public", "resultType": "complete"}),
    );
    both::<CallToolRequestParams>(
        json!({"name": "t", "arguments": {"a": [1, {"b": null}]}, "_meta": {"progressToken": 1}}),
    );
    both::<CallToolRequestParams>(json!({"name": "t", "task": {"ttl": 1000}}));
    both::<CallToolRequestParams>(json!({"name": "t", "requestState": "s", "inputResponses": {
        "k1": {"action": "accept", "content": {"x": "y"}},
        "k2": {"roots": [{"uri": "file:///r"}]},
        "k3": {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}}}));
    both::<CallToolResult>(
        json!({"content": [{"type": "text", "text": "x"}], "structuredContent": {"a": 1},
        "isError": false, "resultType": "complete"}),
    );
    let t = Tool::new("t", empty_object_schema()).with_title("T");
    assert_eq!(t.display_name(), "T");
    assert_eq!(
        serde_json::to_value(&t).unwrap(),
        json!({"name": "t", "title": "T", "inputSchema": {"type": "object"}})
    );
    assert!(CallToolResult::error("bad").is_error());
    let s = CallToolResult::structured(json!({"n": 1}));
    assert_eq!(s.content[0].as_text(), Some(r#"{"n":1}"#));
}

/// A tool's schemas are kept as received, every JSON Schema 2020-12 keyword included (SEP-1613,
/// SEP-2106; the conformance suite's `json-schema-2020-12-preservation` echoes them back):
/// a client that re-serialized a typed schema would lose what it has no field for.
#[test]
fn tool_schemas_keep_every_keyword() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:example:t", "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
            "properties": {"street": {"type": "string"}}, "unevaluatedProperties": false}},
        "properties": {
            "address": {"$ref": "#/$defs/address"},
            "remote": {"$ref": "https://example.invalid/schema.json"},
            "n": {"type": ["integer", "null"], "minimum": 0, "multipleOf": 0.5},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]}},
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "oneOf": [{"not": {"required": ["x"]}}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}},
        "then": {"required": ["phone"]}, "else": {"required": ["email"]},
        "dependentRequired": {"a": ["b"]}, "patternProperties": {"^x-": {}},
        "additionalProperties": false, "x-vendor": {"kept": [1, 2.5, null]}
    });
    let tool: Tool = rt(json!({"name": "t", "inputSchema": schema, "outputSchema": schema}));
    assert_eq!(Value::Object(tool.input_schema), schema);
    assert_eq!(tool.output_schema.map(Value::Object), Some(schema));
}

#[test]
fn resources_prompts_completion_logging() {
    both::<Resource>(
        json!({"uri": "file:///a", "name": "a", "size": 10, "annotations": {"audience": ["user"]}}),
    );
    both::<ResourceTemplate>(
        json!({"uriTemplate": "file:///{p}", "name": "p", "mimeType": "text/plain"}),
    );
    both::<ListResourcesResult>(json!({"resources": [], "nextCursor": "n"}));
    both::<ListResourceTemplatesResult>(
        json!({"resourceTemplates": [], "ttlMs": 5, "cacheScope": "private", "resultType": "complete"}),
    );
    both::<ReadResourceRequestParams>(json!({"uri": "file:///a", "_meta": {}}));
    both::<ReadResourceResult>(
        json!({"contents": [{"uri": "file:///a", "text": "x"}, {"uri": "file:///b", "blob": "AA", "_meta": {}}]}),
    );
    both::<ResourceRequestParams>(json!({"uri": "file:///a"}));
    both::<Prompt>(
        json!({"name": "p", "arguments": [{"name": "a", "required": true, "title": "A"}], "icons": []}),
    );
    both::<ListPromptsResult>(json!({"prompts": [{"name": "p"}]}));
    both::<GetPromptRequestParams>(json!({"name": "p", "arguments": {"a": "b"}}));
    both::<GetPromptResult>(
        json!({"description": "d", "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]}),
    );
    both::<PromptMessage>(
        json!({"role": "assistant", "content": {"type": "image", "data": "AA", "mimeType": "image/png"}}),
    );
    both::<CompleteRequestParams>(
        json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "v"},
        "context": {"arguments": {"x": "y"}}}),
    );
    both::<CompleteRequestParams>(
        json!({"ref": {"type": "ref/resource", "uri": "file:///{x}"}, "argument": {"name": "x", "value": ""}}),
    );
    both::<CompleteResult>(json!({"completion": {"values": ["a"], "total": 1, "hasMore": false}}));
    let many = CompleteResult::new((0..150).map(|i| i.to_string()).collect());
    assert_eq!(many.completion.values.len(), 100);
    assert_eq!(many.completion.has_more, Some(true));
    both::<SetLevelRequestParams>(json!({"level": "debug"}));
    both::<LoggingMessageNotificationParams>(
        json!({"level": "error", "logger": "l", "data": {"x": [1]}}),
    );
}

#[test]
fn sampling_elicitation_roots() {
    both::<CreateMessageRequestParams>(
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "q"}}],
        "modelPreferences": {"hints": [{"name": "claude"}], "costPriority": 0.1, "speedPriority": 0.2, "intelligencePriority": 0.9},
        "systemPrompt": "s", "includeContext": "thisServer", "temperature": 0.5, "maxTokens": 100, "stopSequences": ["x"],
        "metadata": {"a": 1}, "tools": [{"name": "t", "inputSchema": {"type": "object"}}], "toolChoice": {"mode": "auto"}}),
    );
    both::<CreateMessageResult>(
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "1", "name": "t", "input": {}}],
        "model": "m", "stopReason": "toolUse"}),
    );
    let form = both::<ElicitRequestParams>(
        json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
        "s": {"type": "string", "minLength": 1, "maxLength": 5, "format": "email", "default": "a@b.c"},
        "n": {"type": "integer", "minimum": 1.0, "maximum": 9.0, "default": 3.0},
        "b": {"type": "boolean", "default": true},
        "e1": {"type": "string", "enum": ["a", "b"], "default": "a"},
        "e2": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
        "e3": {"type": "array", "items": {"type": "string", "enum": ["a"]}, "minItems": 1, "maxItems": 2, "default": ["a"]},
        "e4": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
        "e5": {"type": "string", "enum": ["a"], "enumNames": ["A"]}
    }, "required": ["s"]}}),
    );
    let ElicitRequestParams::Form(f) = form else {
        panic!("form expected")
    };
    assert!(matches!(
        f.requested_schema.properties["e5"],
        PrimitiveSchemaDefinition::LegacyTitledEnum(_)
    ));
    assert!(matches!(
        f.requested_schema.properties["e4"],
        PrimitiveSchemaDefinition::TitledMultiSelect(_)
    ));
    assert!(matches!(
        f.requested_schema.properties["e1"],
        PrimitiveSchemaDefinition::UntitledSingleSelect(_)
    ));
    let url = both::<ElicitRequestParams>(
        json!({"mode": "url", "message": "m", "url": "https://x.invalid", "elicitationId": "e"}),
    );
    assert!(matches!(url, ElicitRequestParams::Url(_)));
    both::<ElicitRequestParams>(
        json!({"mode": "form", "message": "m", "requestedSchema": {"type": "object", "properties": {}}}),
    );
    both::<ElicitResult>(json!({"action": "accept", "content": {"a": "b", "n": 3, "l": ["x"]}}));
    both::<ElicitResult>(json!({"action": "cancel"}));
    both::<ElicitationCompleteNotificationParams>(json!({"elicitationId": "e"}));
    both::<Root>(json!({"uri": "file:///r", "name": "r"}));
    both::<ListRootsResult>(json!({"roots": [{"uri": "file:///r"}]}));
}

#[test]
fn subscriptions_input_required_tasks_notifications() {
    both::<SubscriptionFilter>(
        json!({"toolsListChanged": true, "promptsListChanged": false, "resourcesListChanged": true,
        "resourceSubscriptions": ["file:///a"]}),
    );
    both::<SubscriptionsListenRequestParams>(
        json!({"notifications": {"toolsListChanged": true}, "_meta": {}}),
    );
    both::<SubscriptionsListenResult>(
        json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 7}}),
    );
    assert_eq!(
        serde_json::to_value(SubscriptionsListenResult::closed(&7.into())).unwrap(),
        json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 7}})
    );
    both::<SubscriptionsAcknowledgedNotificationParams>(json!({"notifications": {}}));
    let ir = both::<InputRequiredResult>(
        json!({"resultType": "input_required", "requestState": "s", "inputRequests": {
        "a": {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}},
        "b": {"method": "roots/list"},
        "c": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}}}),
    );
    assert_eq!(ir.input_requests.unwrap().len(), 3);
    both::<InputResponseRequestParams>(
        json!({"inputResponses": {"a": {"action": "decline"}}, "requestState": "s"}),
    );
    let task = json!({"taskId": "t", "status": "working", "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": null, "pollInterval": 100});
    both::<Task>(task.clone());
    both::<CreateTaskResult>(json!({"task": task.clone()}));
    rt::<GetTaskResult>(with_extra(task.clone()));
    rt::<TaskStatusNotificationParams>(task.clone());
    both::<ListTasksResult>(json!({"tasks": [task], "nextCursor": "n"}));
    both::<TaskIdParams>(json!({"taskId": "t"}));
    both::<TaskMetadata>(json!({"ttl": 5}));
    both::<RelatedTaskMetadata>(json!({"taskId": "t"}));
    let ext = json!({"resultType": "task", "taskId": "t", "status": "completed", "createdAt": "a", "lastUpdatedAt": "b",
        "ttlMs": 60000, "pollIntervalMs": 5000, "result": {"content": []}});
    let h = rt::<tasks_ext::TaskResult>(with_extra(ext.clone()));
    assert_eq!(h.result_type, ResultType::Task);
    rt::<tasks_ext::TaskStatusNotificationParams>(
        json!({"taskId": "t", "status": "input_required", "createdAt": "a",
        "lastUpdatedAt": "b", "ttlMs": null, "inputRequests": {"k": {"method": "roots/list"}}}),
    );
    both::<tasks_ext::UpdateTaskRequestParams>(
        json!({"taskId": "t", "inputResponses": {"k": {"roots": []}}}),
    );
    both::<CancelledNotificationParams>(json!({"requestId": "r", "reason": "no"}));
    both::<ProgressNotificationParams>(
        json!({"progressToken": 1, "progress": 0.5, "total": 1.0, "message": "half"}),
    );
    both::<PaginatedRequestParams>(json!({"cursor": "c"}));
}

#[test]
fn content_blocks_decode_whatever_the_key_order() {
    use mcp_core::types::ContentBlock;
    let first: ContentBlock =
        serde_json::from_str(r#"{"type":"text","text":"hi","x-extra":1}"#).unwrap();
    let last: ContentBlock =
        serde_json::from_str(r#"{"text":"hi","x-extra":1,"type":"text"}"#).unwrap();
    assert_eq!(first, last);
    assert_eq!(first.as_text(), Some("hi"));
    let back = serde_json::to_value(&first).unwrap();
    assert_eq!(
        back,
        serde_json::json!({"type": "text", "text": "hi", "x-extra": 1})
    );
    assert!(serde_json::from_str::<ContentBlock>(r#"{"type":"video","data":"x"}"#).is_err());
    assert!(serde_json::from_str::<ContentBlock>(r#"{"text":"no type"}"#).is_err());
    assert!(serde_json::from_str::<ContentBlock>(r#"{}"#).is_err());
}
