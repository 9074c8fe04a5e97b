//! The example messages of the specification (tests/fixtures/*.json) decode into our types,
//! re-encode to the same JSON, and validate against their revision's schema; shaping them for
//! their own revision changes nothing.

use std::path::PathBuf;

use mcp_core::jsonrpc::{Message, decode};
use mcp_core::types::shape;
use mcp_core::types::*;
use mcp_core::version::ProtocolVersion;
use serde_json::{Value, json};

mod schema_support;
use schema_support::Schemas;

struct Fixture {
    name: String,
    revision: ProtocolVersion,
    method: String,
    message: Value,
}

fn fixtures() -> Vec<Fixture> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        out.push(Fixture {
            name: path.file_name().unwrap().to_string_lossy().into_owned(),
            revision: ProtocolVersion::parse(doc["revision"].as_str().unwrap()).unwrap(),
            method: doc["method"].as_str().unwrap().to_owned(),
            message: doc["message"].clone(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn retyped_result(method: &str, result: &Value) -> Value {
    fn rt<T: serde::Serialize + serde::de::DeserializeOwned>(v: &Value) -> Value {
        serde_json::to_value(serde_json::from_value::<T>(v.clone()).unwrap()).unwrap()
    }
    if result.get("resultType") == Some(&json!("input_required")) {
        return rt::<InputRequiredResult>(result);
    }
    match method {
        methods::INITIALIZE => rt::<InitializeResult>(result),
        methods::TOOLS_LIST => rt::<ListToolsResult>(result),
        methods::TOOLS_CALL => rt::<CallToolResult>(result),
        methods::RESOURCES_READ => rt::<ReadResourceResult>(result),
        methods::PROMPTS_GET => rt::<GetPromptResult>(result),
        other => panic!("no result type for {other}"),
    }
}

fn result_def(method: &str) -> &'static str {
    match method {
        methods::INITIALIZE => "InitializeResult",
        methods::TOOLS_LIST => "ListToolsResult",
        methods::TOOLS_CALL => "CallToolResult",
        methods::RESOURCES_READ => "ReadResourceResult",
        methods::PROMPTS_GET => "GetPromptResult",
        other => panic!("no result definition for {other}"),
    }
}

fn request_def(method: &str) -> &'static str {
    match method {
        methods::INITIALIZE => "InitializeRequest",
        methods::TOOLS_LIST => "ListToolsRequest",
        methods::TOOLS_CALL => "CallToolRequest",
        methods::RESOURCES_READ => "ReadResourceRequest",
        methods::PROMPTS_GET => "GetPromptRequest",
        other => panic!("no request definition for {other}"),
    }
}

#[test]
fn spec_examples_round_trip_and_validate() {
    let s = Schemas::load();
    let all = fixtures();
    assert!(all.len() >= 20, "fixtures missing: {}", all.len());
    for f in &all {
        let v = f.revision;
        let bytes = serde_json::to_vec(&f.message).unwrap();
        match decode(&bytes).unwrap_or_else(|e| panic!("{}: {e:?}", f.name)) {
            Message::Request(req) => {
                assert_eq!(req.method, f.method, "{}", f.name);
                let typed =
                    ClientRequest::from_request(&req).unwrap_or_else(|e| panic!("{}: {e}", f.name));
                let again = typed.to_request(req.id.clone()).unwrap();
                assert_eq!(
                    again.params_value(),
                    f.message["params"],
                    "{} changed on re-encode",
                    f.name
                );
                let mut params = again.params_value();
                shape::request_params(&f.method, &mut params, v).unwrap();
                let mut msg = f.message.clone();
                msg["params"] = params;
                s.assert_valid(v, request_def(&f.method), &msg);
                s.assert_valid(v, "ClientRequest", &msg);
                s.assert_valid(v, "JSONRPCRequest", &msg);
            }
            Message::Notification(n) => {
                let again = match ClientNotification::from_notification(&n) {
                    Ok(c) => c.to_notification().unwrap(),
                    Err(_) => ServerNotification::from_notification(&n)
                        .unwrap_or_else(|e| panic!("{}: {e}", f.name))
                        .to_notification()
                        .unwrap(),
                };
                assert_eq!(
                    again.params_value(),
                    n.params_value(),
                    "{} changed on re-encode",
                    f.name
                );
                s.assert_valid(v, "JSONRPCNotification", &f.message);
            }
            Message::Response(resp) => {
                let result: Value = resp.result().unwrap();
                let again = retyped_result(&f.method, &result);
                assert_eq!(again, result, "{} changed on re-encode", f.name);
                let mut shaped = again.clone();
                shape::result(&f.method, &mut shaped, v).unwrap();
                assert_eq!(
                    shaped, result,
                    "{}: shaping for its own revision changed it",
                    f.name
                );
                let def = if result.get("resultType") == Some(&json!("input_required")) {
                    "InputRequiredResult"
                } else {
                    result_def(&f.method)
                };
                s.assert_valid(v, def, &result);
                s.assert_valid(v, "ServerResult", &result);
                s.assert_valid(v, "JSONRPCResponse", &f.message);
            }
            Message::Error(_) => panic!("{}: no error fixtures expected", f.name),
        }
    }
}

/// The same examples shaped for every other revision either validate there or are refused.
#[test]
fn spec_examples_shape_for_every_revision() {
    let s = Schemas::load();
    for f in fixtures() {
        let Some(result) = f.message.get("result") else {
            continue;
        };
        for v in ProtocolVersion::ALL {
            let mut r = result.clone();
            match shape::result(&f.method, &mut r, v) {
                Ok(()) => {
                    let def = if r.get("resultType") == Some(&json!("input_required")) {
                        "InputRequiredResult"
                    } else {
                        result_def(&f.method)
                    };
                    s.assert_valid(v, def, &r);
                }
                Err(e) => {
                    // Only refusals that the module documents.
                    let text = e.to_string();
                    assert!(
                        text.contains("InputRequiredResult") || text.contains("does not exist"),
                        "{} for {v}: {text}",
                        f.name
                    );
                }
            }
        }
    }
}
