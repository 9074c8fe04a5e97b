//! The typed method sets: method names, -32601 / -32602 mapping, and request/notification
//! round trips through the raw JSON-RPC messages.

use mcp_core::jsonrpc::RequestId;
use mcp_core::jsonrpc::{self, Message, codes, decode};
use mcp_core::types::*;
use mcp_core::version::ProtocolVersion;

fn request(bytes: &str) -> jsonrpc::Request {
    match decode(bytes.as_bytes()).unwrap() {
        Message::Request(r) => r,
        other => panic!("not a request: {other:?}"),
    }
}

fn notification(bytes: &str) -> jsonrpc::Notification {
    match decode(bytes.as_bytes()).unwrap() {
        Message::Notification(n) => n,
        other => panic!("not a notification: {other:?}"),
    }
}

#[test]
fn client_requests_type_and_round_trip() {
    let req = request(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"p"}}}"#,
    );
    let typed = ClientRequest::from_request(&req).unwrap();
    let ClientRequest::CallTool(p) = &typed else {
        panic!("{typed:?}")
    };
    assert_eq!(p.name, "echo");
    assert_eq!(typed.method(), methods::TOOLS_CALL);
    let again = typed.to_request(RequestId::Number(7)).unwrap();
    assert_eq!(again.params_value(), req.params_value());
    assert_eq!(ClientRequest::from_request(&again).unwrap(), typed);

    // Absent params stay absent for methods whose params are optional.
    let ping = request(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let typed = ClientRequest::from_request(&ping).unwrap();
    assert_eq!(typed, ClientRequest::Ping(None));
    assert!(typed.to_request(1).unwrap().params.is_none());
    // Absent params read as {} where the params type has no required field.
    let list = request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    assert_eq!(
        ClientRequest::from_request(&list).unwrap(),
        ClientRequest::ListTools(PaginatedRequestParams::default())
    );
}

#[test]
fn errors_map_to_the_right_codes() {
    let unknown = request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/explode"}"#);
    assert_eq!(
        ClientRequest::from_request(&unknown).unwrap_err().code,
        codes::METHOD_NOT_FOUND
    );
    // A server-to-client method is not a client request.
    let wrong_dir = request(
        r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}"#,
    );
    assert_eq!(
        ClientRequest::from_request(&wrong_dir).unwrap_err().code,
        codes::METHOD_NOT_FOUND
    );
    assert!(ServerRequest::from_request(&wrong_dir).is_ok());
    for bad in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":null}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/x"},"argument":{"name":"a","value":"b"}}}"#,
    ] {
        let err = ClientRequest::from_request(&request(bad)).unwrap_err();
        assert_eq!(err.code, codes::INVALID_PARAMS, "{bad}");
    }
}

#[test]
fn every_method_constant_is_known_somewhere() {
    for m in methods::ALL {
        assert!(
            ProtocolVersion::ALL
                .iter()
                .any(|v| methods::known_in(m, *v)),
            "{m} is known in no revision"
        );
    }
    assert!(!methods::known_in(
        methods::INITIALIZE,
        ProtocolVersion::V2026_07_28
    ));
    assert!(methods::known_in(
        methods::SERVER_DISCOVER,
        ProtocolVersion::V2026_07_28
    ));
    assert!(!methods::known_in(
        methods::ELICITATION_CREATE,
        ProtocolVersion::V2025_03_26
    ));
    assert!(!methods::known_in("nope", ProtocolVersion::V2025_03_26));
}

#[test]
fn notifications_type_and_round_trip() {
    let n = notification(
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2,"total":4}}"#,
    );
    let typed = ServerNotification::from_notification(&n).unwrap();
    assert_eq!(typed.method(), methods::NOTIFICATION_PROGRESS);
    assert_eq!(
        typed.to_notification().unwrap().params_value(),
        n.params_value()
    );
    let bare = notification(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    let typed = ServerNotification::from_notification(&bare).unwrap();
    assert_eq!(typed, ServerNotification::ToolListChanged(None));
    assert!(typed.to_notification().unwrap().params.is_none());
    let init = notification(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(
        ClientNotification::from_notification(&init).unwrap(),
        ClientNotification::Initialized(None)
    );
    let bad = notification(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}"#,
    );
    assert_eq!(
        ClientNotification::from_notification(&bad)
            .unwrap_err()
            .code,
        codes::INVALID_PARAMS
    );
}
