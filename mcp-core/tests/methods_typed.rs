//! The method constants against the official schemas, and the typed request a server
//! dispatches on (`RequestContext::typed`).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use mcp_core::engine::RequestContext;
use mcp_core::jsonrpc::{RequestId, codes};
use mcp_core::types::methods;
use mcp_core::types::{CallToolRequestParams, ClientRequest, ElicitAction, InputResponse};
use mcp_core::version::{Era, ProtocolVersion};
use serde_json::{Value, json};

/// Every `method` constant a revision's schema defines.
fn schema_methods(doc: &Value) -> BTreeSet<String> {
    let defs = doc
        .get("$defs")
        .or_else(|| doc.get("definitions"))
        .and_then(Value::as_object)
        .expect("a schema with definitions");
    defs.values()
        .filter_map(|d| d.pointer("/properties/method/const")?.as_str())
        .map(str::to_owned)
        .collect()
}

#[test]
fn method_constants_are_exactly_the_methods_of_each_official_schema() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../spec");
    // The 2026-07-28 tasks extension is not in the core schema of that revision.
    let extension = [
        methods::TASKS_GET,
        methods::TASKS_CANCEL,
        methods::TASKS_UPDATE,
        methods::NOTIFICATION_TASKS,
    ];
    for v in ProtocolVersion::ALL {
        let path = root.join(v.as_str()).join("schema.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("skipped: {} is not there", path.display());
            return;
        };
        let doc: Value = serde_json::from_str(&text).unwrap();
        let official = schema_methods(&doc);
        let ours: BTreeSet<String> = methods::ALL
            .iter()
            .filter(|m| methods::known_in(m, v))
            .filter(|m| !(v == ProtocolVersion::V2026_07_28 && extension.contains(m)))
            // The skills extension is in no revision's core schema.
            .filter(|m| !methods::SKILLS_EXTENSION.contains(m))
            .map(|m| (*m).to_owned())
            .collect();
        assert_eq!(ours, official, "{v}");
    }
}

fn context(method: &str, params: Option<&str>) -> RequestContext {
    RequestContext {
        id: RequestId::Number(1),
        method: method.to_owned(),
        params: params.map(|p| serde_json::from_str(p).unwrap()),
        era: Era::Legacy,
        protocol_version: ProtocolVersion::V2025_11_25,
        client_capabilities: Arc::new(json!({})),
        client_info: None,
        progress_token: None,
        log_level: None,
    }
}

#[test]
fn a_request_context_types_its_request_or_says_what_is_wrong() {
    let rc = context(
        methods::TOOLS_CALL,
        Some(r#"{"name":"echo","arguments":{"m":1},"_meta":{"progressToken":7}}"#),
    );
    match rc.typed_without_meta().unwrap() {
        ClientRequest::CallTool(p) => {
            assert_eq!(p.name, "echo");
            assert_eq!(p.arguments.unwrap()["m"], 1);
            // The context has read the envelope; the typed params leave it out.
            assert_eq!(p.meta, None);
        }
        other => panic!("{other:?}"),
    }
    // Typed in full, the same params keep it.
    match ClientRequest::from_parts(&rc.method, rc.params.as_deref()).unwrap() {
        ClientRequest::CallTool(p) => assert_eq!(p.meta.unwrap()["progressToken"], 7),
        other => panic!("{other:?}"),
    }
    // Absent params read as `{}`: fine for a list, a missing field for a call.
    assert!(matches!(
        context(methods::TOOLS_LIST, None).typed_without_meta(),
        Ok(ClientRequest::ListTools(_))
    ));
    let e = context(methods::TOOLS_CALL, None)
        .typed_without_meta()
        .unwrap_err();
    assert_eq!(e.code, codes::INVALID_PARAMS);
    assert!(
        e.message.contains(methods::TOOLS_CALL) && e.message.contains("`name`"),
        "{}",
        e.message
    );
    let e = context("tools/nope", Some("{}"))
        .typed_without_meta()
        .unwrap_err();
    assert_eq!(e.code, codes::METHOD_NOT_FOUND);
    // A server-to-client method is no client request.
    let e = context(methods::SAMPLING_CREATE_MESSAGE, Some("{}"))
        .typed_without_meta()
        .unwrap_err();
    assert_eq!(e.code, codes::METHOD_NOT_FOUND);
}

#[test]
fn input_responses_keep_what_fits_no_answer_type_for_the_server_to_judge() {
    let p: CallToolRequestParams = serde_json::from_value(json!({"name": "t",
        "inputResponses": {
            "none": null,
            "odd": 12345,
            "user": {"action": "accept", "content": {"name": "Alice"}}}}))
    .unwrap();
    let r = p.input_responses.unwrap();
    assert_eq!(r["none"], InputResponse::Other(Value::Null));
    assert_eq!(r["odd"], InputResponse::Other(json!(12345)));
    match &r["user"] {
        InputResponse::Elicit(e) => assert_eq!(e.action, ElicitAction::Accept),
        other => panic!("{other:?}"),
    }
    // Kept as it came, so it writes back the same.
    assert_eq!(serde_json::to_value(&r["odd"]).unwrap(), json!(12345));
}

#[test]
fn the_param_naming_a_target_is_name_uri_or_task_id_for_the_targeted_requests_only() {
    assert_eq!(methods::name_param(methods::TOOLS_CALL), Some("name"));
    assert_eq!(methods::name_param(methods::PROMPTS_GET), Some("name"));
    assert_eq!(methods::name_param(methods::RESOURCES_READ), Some("uri"));
    for m in [
        methods::TASKS_GET,
        methods::TASKS_UPDATE,
        methods::TASKS_CANCEL,
    ] {
        assert_eq!(methods::name_param(m), Some("taskId"), "{m}");
    }
    for m in methods::ALL.iter().filter(|m| {
        ![
            methods::TOOLS_CALL,
            methods::PROMPTS_GET,
            methods::RESOURCES_READ,
            methods::TASKS_GET,
            methods::TASKS_UPDATE,
            methods::TASKS_CANCEL,
        ]
        .contains(m)
    }) {
        assert_eq!(methods::name_param(m), None, "{m}");
    }
}
