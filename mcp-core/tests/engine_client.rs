//! The client engine on its own, driven with hand-written server messages.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use mcp_core::engine::{
    ClientConfig, ClientEngine, ClientStep, HandshakeError, Outcome, Refused, Timeout,
};
use mcp_core::jsonrpc::{Message, RequestId, codes, decode};
use mcp_core::types::LoggingLevel;
use mcp_core::version::{Era, ProtocolVersion, VersionSet};
use serde_json::{Value, json};

const T: Timeout = Timeout::fixed(Duration::from_secs(10));

fn client_with(versions: VersionSet, caps: Value) -> ClientEngine {
    ClientEngine::new(
        ClientConfig::builder(json!({"name": "test-client", "version": "0.0.1"}))
            .versions(versions)
            .capabilities(caps)
            .build(),
    )
}

fn msg(v: Value) -> Message {
    decode(v.to_string().as_bytes()).expect("test message decodes")
}

fn json_of(m: &Message) -> Value {
    serde_json::from_slice(&m.to_vec()).unwrap()
}

fn result(id: &Value, result: Value) -> Message {
    msg(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// Runs the legacy handshake against a scripted server answer.
fn legacy_ready(caps: Value, server_caps: Value, now: Instant) -> ClientEngine {
    let mut c = client_with(VersionSet::all(), caps);
    let init = json_of(&c.initialize_request(now).unwrap());
    let step = c.handle(
        result(
            &init["id"],
            json!({"protocolVersion": "2025-11-25", "capabilities": server_caps,
                   "serverInfo": {"name": "s", "version": "1"}}),
        ),
        now,
    );
    assert!(matches!(step, ClientStep::Ready(_)), "{step:?}");
    c
}

fn modern_ready(caps: Value, server_caps: Value, now: Instant) -> ClientEngine {
    let mut c = client_with(VersionSet::all(), caps);
    let d = json_of(&c.discover_request(now).unwrap());
    let step = c.handle(
        result(
            &d["id"],
            json!({"supportedVersions": ["2026-07-28", "2025-11-25"], "capabilities": server_caps,
                   "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}),
        ),
        now,
    );
    assert!(matches!(step, ClientStep::Ready(_)), "{step:?}");
    c
}

#[test]
fn legacy_handshake_proposes_latest_and_emits_initialized() {
    let now = Instant::now();
    let mut c = client_with(VersionSet::all(), json!({"roots": {}}));
    assert!(matches!(
        c.request("tools/list", &json!({}), now, T, false),
        Err(Refused::NotReady(_))
    ));
    // Ping is allowed before the handshake.
    assert!(c.request("ping", &json!({}), now, T, false).is_ok());
    let init = json_of(&c.initialize_request(now).unwrap());
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["params"]["capabilities"], json!({"roots": {}}));
    assert_eq!(init["params"]["clientInfo"]["name"], "test-client");
    assert!(
        c.initialize_request(now).is_err(),
        "a second handshake must be refused"
    );
    // initialize cannot be cancelled.
    let id = RequestId::from_value(&init["id"]).unwrap();
    assert!(c.cancel(&id, None).is_none());
    let step = c.handle(
        result(
            &init["id"],
            json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "s", "version": "1"}, "instructions": "hi"}),
        ),
        now,
    );
    let ClientStep::Ready(ready) = step else {
        panic!("expected ready, got {step:?}")
    };
    assert_eq!(ready.era, Era::Legacy);
    assert_eq!(ready.version, ProtocolVersion::V2025_06_18);
    assert_eq!(ready.instructions.as_deref(), Some("hi"));
    assert_eq!(
        json_of(ready.send.as_ref().unwrap())["method"],
        "notifications/initialized"
    );
    assert_eq!(c.protocol_version(), Some(ProtocolVersion::V2025_06_18));
    // Legacy requests carry no modern envelope.
    let (_, m) = c.request("tools/list", &json!({}), now, T, false).unwrap();
    assert!(json_of(&m)["params"].get("_meta").is_none());
}

#[test]
fn client_refuses_an_unsupported_answer() {
    let now = Instant::now();
    let mut c = client_with(VersionSet::only([ProtocolVersion::V2025_11_25]), json!({}));
    let init = json_of(&c.initialize_request(now).unwrap());
    let step = c.handle(
        result(
            &init["id"],
            json!({"protocolVersion": "2024-11-05", "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"}}),
        ),
        now,
    );
    match step {
        ClientStep::HandshakeFailed(HandshakeError::UnsupportedVersion { answered }) => {
            assert_eq!(answered, "2024-11-05")
        }
        other => panic!("expected failure, got {other:?}"),
    }
    assert_eq!(c.era(), None);
    assert!(c.request("tools/list", &json!({}), now, T, false).is_err());
}

#[test]
fn requests_are_gated_on_server_capabilities() {
    let now = Instant::now();
    let mut c = legacy_ready(json!({}), json!({"tools": {}, "resources": {}}), now);
    assert!(
        c.request("tools/call", &json!({"name": "x"}), now, T, false)
            .is_ok()
    );
    for (m, cap) in [
        ("prompts/list", "prompts"),
        ("completion/complete", "completions"),
        ("logging/setLevel", "logging"),
        ("resources/subscribe", "resources.subscribe"),
    ] {
        match c.request(m, &json!({}), now, T, false) {
            Err(Refused::MissingCapability { capability, .. }) => assert_eq!(capability, cap),
            other => panic!("{m}: expected a refusal, got {other:?}"),
        }
    }
    assert!(matches!(
        c.request("subscriptions/listen", &json!({}), now, T, false),
        Err(Refused::WrongEra { .. })
    ));
    assert!(matches!(
        c.request("tools/call", &json!([1]), now, T, false),
        Err(Refused::InvalidParams(_))
    ));
}

#[test]
fn modern_requests_carry_the_envelope() {
    let now = Instant::now();
    let mut c = client_with(VersionSet::all(), json!({"elicitation": {"form": {}}}));
    let d = json_of(&c.discover_request(now).unwrap());
    assert_eq!(d["method"], "server/discover");
    assert_eq!(
        d["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    let step = c.handle(
        result(
            &d["id"],
            json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "resultType": "complete", "ttlMs": 0, "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "2"}}}),
        ),
        now,
    );
    let ClientStep::Ready(ready) = step else {
        panic!("expected ready, got {step:?}")
    };
    assert_eq!(ready.era, Era::Modern);
    assert!(ready.send.is_none());
    assert_eq!(c.server_info().unwrap()["version"], "2");

    c.set_log_level(Some(LoggingLevel::Warning));
    let (id, m) = c
        .request("tools/call", &json!({"name": "t"}), now, T, true)
        .unwrap();
    let v = json_of(&m);
    let meta = &v["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {"form": {}}})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "test-client"
    );
    assert_eq!(meta["io.modelcontextprotocol/logLevel"], "warning");
    assert!(!meta["progressToken"].is_null());
    assert_ne!(meta["progressToken"], id.to_value(), "tokens are not ids");
    assert_eq!(v["params"]["name"], "t");
    assert!(matches!(
        c.request("ping", &json!({}), now, T, false),
        Err(Refused::WrongEra { .. })
    ));
    assert!(matches!(
        c.request("prompts/list", &json!({}), now, T, false),
        Err(Refused::MissingCapability { .. })
    ));
}

#[test]
fn discovery_failures_say_whether_to_fall_back() {
    let now = Instant::now();
    let mut c = client_with(VersionSet::all(), json!({}));
    let d = json_of(&c.discover_request(now).unwrap());
    let step = c.handle(
        result(
            &d["id"],
            json!({"supportedVersions": ["2027-01-01"], "capabilities": {},
            "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}),
        ),
        now,
    );
    let ClientStep::HandshakeFailed(e) = step else {
        panic!("expected failure, got {step:?}")
    };
    assert!(matches!(e, HandshakeError::NoCommonVersion { .. }));
    assert!(e.should_fall_back());

    // A legacy server answers discover with an error that is not a modern one.
    let d = json_of(&c.discover_request(now).unwrap());
    let step = c.handle(
        msg(json!({"jsonrpc": "2.0", "id": d["id"], "error": {"code": -32601, "message": "no"}})),
        now,
    );
    let ClientStep::HandshakeFailed(e) = step else {
        panic!("expected failure, got {step:?}")
    };
    assert!(e.should_fall_back());
    assert!(
        !HandshakeError::Rejected(mcp_core::jsonrpc::ErrorObject::new(
            codes::HEADER_MISMATCH,
            "h"
        ))
        .should_fall_back()
    );
    // A legacy server that answers every unknown method with an empty result.
    let d = json_of(&c.discover_request(now).unwrap());
    let step = c.handle(result(&d["id"], json!({})), now);
    let ClientStep::HandshakeFailed(e) = step else {
        panic!("expected failure, got {step:?}")
    };
    assert!(matches!(e, HandshakeError::Malformed(_)), "{e}");
    let source = std::error::Error::source(&e).expect("the decoding error");
    assert!(source.is::<serde_json::Error>(), "{source}");
    assert!(e.should_fall_back());
    // Falling back is possible.
    assert!(c.initialize_request(now).is_ok());
}

#[test]
fn a_refused_version_is_retried_with_one_the_server_lists() {
    let now = Instant::now();
    let mut c = client_with(VersionSet::all(), json!({"roots": {}}));
    let d = json_of(&c.discover_request(now).unwrap());
    let step = c.handle(
        msg(
            json!({"jsonrpc": "2.0", "id": d["id"], "error": {"code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2027-01-01", "2026-07-28", "2025-11-25"],
                     "requested": "2026-07-28"}}}),
        ),
        now,
    );
    let ClientStep::HandshakeFailed(e) = step else {
        panic!("expected failure, got {step:?}")
    };
    assert_eq!(
        e.supported_versions(),
        ["2027-01-01", "2026-07-28", "2025-11-25"]
    );
    let v = c.retry_version(&e).expect("a modern revision in common");
    assert_eq!(v, ProtocolVersion::V2026_07_28);
    let retry = json_of(&c.discover_request_with(now, v).unwrap());
    assert_eq!(retry["method"], "server/discover");
    assert_ne!(retry["id"], d["id"]);
    let meta = &retry["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"roots": {}})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "test-client"
    );
    let step = c.handle(
        result(
            &retry["id"],
            json!({"supportedVersions": ["2026-07-28"], "capabilities": {},
                   "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}),
        ),
        now,
    );
    assert!(matches!(step, ClientStep::Ready(_)), "{step:?}");
    assert_eq!(c.era(), Some(Era::Modern));
}

#[test]
fn a_refusal_without_a_common_modern_version_is_no_retry() {
    let now = Instant::now();
    let mut c = client_with(VersionSet::all(), json!({}));
    let refuse = |c: &mut ClientEngine, data: Value| {
        let d = json_of(&c.discover_request(now).unwrap());
        let step = c.handle(
            msg(
                json!({"jsonrpc": "2.0", "id": d["id"], "error": {"code": -32022,
                "message": "Unsupported protocol version", "data": data}}),
            ),
            now,
        );
        match step {
            ClientStep::HandshakeFailed(e) => e,
            other => panic!("expected failure, got {other:?}"),
        }
    };
    // Only legacy revisions listed: falling back is the way left.
    let e = refuse(&mut c, json!({"supported": ["2025-11-25", "2025-06-18"]}));
    assert_eq!(c.retry_version(&e), None);
    assert!(e.should_fall_back());
    // Nothing readable listed.
    let e = refuse(&mut c, json!({"supported": "2026-07-28"}));
    assert!(e.supported_versions().is_empty());
    assert_eq!(c.retry_version(&e), None);
    // Another error's data is not read as a version list.
    let other = HandshakeError::Rejected(
        mcp_core::jsonrpc::ErrorObject::new(codes::HEADER_MISMATCH, "h")
            .with_data(json!({"supported": ["2026-07-28"]})),
    );
    assert!(other.supported_versions().is_empty());
    // A legacy-only client has no modern revision to retry with.
    let legacy = client_with(VersionSet::legacy_only(), json!({}));
    let e = HandshakeError::Rejected(
        mcp_core::jsonrpc::ErrorObject::new(codes::UNSUPPORTED_PROTOCOL_VERSION, "u")
            .with_data(json!({"supported": ["2026-07-28"]})),
    );
    assert_eq!(legacy.retry_version(&e), None);
    // Proposing a revision outside the client's set, or a legacy one, is refused.
    let mut modern = client_with(VersionSet::modern_only(), json!({}));
    assert!(
        modern
            .discover_request_with(now, ProtocolVersion::V2025_11_25)
            .is_err()
    );
}

#[test]
fn results_are_sorted_by_result_type() {
    let now = Instant::now();
    let mut c = modern_ready(json!({}), json!({"tools": {}}), now);
    let (a, _) = c
        .request("tools/call", &json!({"name": "a"}), now, T, false)
        .unwrap();
    let (b, _) = c
        .request("tools/call", &json!({"name": "b"}), now, T, false)
        .unwrap();
    let step = c.handle(
        result(
            &a.to_value(),
            json!({"resultType": "input_required",
            "inputRequests": {"k": {"method": "elicitation/create", "params": {}}}}),
        ),
        now,
    );
    assert!(
        matches!(step, ClientStep::Answer(ans) if ans.id == a && matches!(ans.outcome, Outcome::InputRequired(_)))
    );
    // A result without resultType (a legacy server) is complete.
    let step = c.handle(result(&b.to_value(), json!({"content": []})), now);
    assert!(matches!(step, ClientStep::Answer(ans) if matches!(ans.outcome, Outcome::Complete(_))));
    // An answer for nothing pending is dropped.
    assert!(matches!(
        c.handle(result(&b.to_value(), json!({})), now),
        ClientStep::Nothing
    ));
}

#[test]
fn server_requests_are_gated_on_our_capabilities() {
    let now = Instant::now();
    let mut c = legacy_ready(json!({"roots": {"listChanged": true}}), json!({}), now);
    let req = |id: i64, method: &str, params: Value| {
        msg(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
    };
    let ClientStep::Reply(r) = c.handle(
        req(1, "sampling/createMessage", json!({"messages": []})),
        now,
    ) else {
        panic!("expected an immediate error")
    };
    assert_eq!(json_of(&r)["error"]["code"], codes::METHOD_NOT_FOUND);
    let ClientStep::Reply(r) = c.handle(req(2, "ping", json!({})), now) else {
        panic!("expected a ping answer")
    };
    assert_eq!(
        json_of(&r),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    let step = c.handle(
        req(3, "roots/list", json!({"_meta": {"progressToken": "p"}})),
        now,
    );
    let ClientStep::Dispatch(pr) = step else {
        panic!("expected dispatch, got {step:?}")
    };
    assert_eq!(pr.progress_token, Some(RequestId::from("p")));
    assert!(c.progress(&pr.id, 0.5, None, None).is_some());
    assert!(c.progress(&pr.id, 0.5, None, None).is_none());
    let out = json_of(&c.respond_value(&pr.id, Ok(json!({"roots": []}))).unwrap());
    assert_eq!(out["id"], 3);
    assert!(c.respond_value(&pr.id, Ok(json!({}))).is_none());
    assert!(c.roots_list_changed().is_some());

    // The server cancels its request: no answer goes out.
    assert!(matches!(
        c.handle(req(4, "roots/list", json!({})), now),
        ClientStep::Dispatch(_)
    ));
    let cancel = msg(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 4}}),
    );
    assert!(matches!(
        c.handle(cancel.clone(), now),
        ClientStep::Cancel { .. }
    ));
    assert!(
        c.respond_value(&RequestId::Number(4), Ok(json!({"roots": []})))
            .is_none()
    );
    assert!(matches!(c.handle(cancel, now), ClientStep::Nothing));

    // The modern era has no server-to-client requests at all.
    let mut m = modern_ready(json!({"roots": {}}), json!({}), now);
    let ClientStep::Reply(r) = m.handle(req(1, "roots/list", json!({})), now) else {
        panic!("expected an immediate error")
    };
    assert_eq!(json_of(&r)["error"]["code"], codes::METHOD_NOT_FOUND);
}

#[test]
fn ids_are_unique_and_timeouts_expire() {
    let t0 = Instant::now();
    let sec = Duration::from_secs(1);
    let mut c = legacy_ready(json!({}), json!({"tools": {}}), t0);
    let mut ids = HashSet::new();
    for _ in 0..200 {
        let (id, _) = c.request("tools/list", &json!({}), t0, T, false).unwrap();
        assert!(ids.insert(id));
    }
    assert_eq!(c.poll(t0 + 10 * sec).len(), 200);
    let (id, m) = c
        .request(
            "tools/call",
            &json!({"name": "x"}),
            t0,
            Timeout::resetting(2 * sec, 5 * sec),
            true,
        )
        .unwrap();
    assert!(!ids.contains(&id));
    let token = json_of(&m)["params"]["_meta"]["progressToken"].clone();
    let prog = |p: f64| {
        msg(json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": p, "total": 10}}))
    };
    assert!(
        matches!(c.handle(prog(1.0), t0 + sec), ClientStep::Progress(u) if u.id == id && u.total == Some(10.0))
    );
    assert_eq!(c.next_deadline(), Some(t0 + 3 * sec));
    assert!(matches!(
        c.handle(prog(0.5), t0 + 2 * sec),
        ClientStep::Nothing
    ));
    assert!(matches!(
        c.handle(prog(2.0), t0 + 4 * sec),
        ClientStep::Progress(_)
    ));
    assert_eq!(c.next_deadline(), Some(t0 + 5 * sec));
    let e = c.poll(t0 + 5 * sec);
    assert_eq!(e.len(), 1);
    assert_eq!(json_of(&e[0].cancel)["params"]["requestId"], id.to_value());
}

#[test]
fn a_timed_out_handshake_can_be_retried() {
    let t0 = Instant::now();
    let mut c = client_with(VersionSet::all(), json!({}));
    c.set_handshake_timeout(Timeout::fixed(Duration::from_secs(1)));
    c.initialize_request(t0).unwrap();
    let e = c.poll(t0 + Duration::from_secs(1));
    assert_eq!(e[0].method, "initialize");
    assert!(c.initialize_request(t0).is_ok());
}

#[test]
fn a_server_cancel_names_the_servers_request_not_our_call_with_the_same_id() {
    let now = Instant::now();
    let mut c = legacy_ready(json!({}), json!({"tools": {}}), now);
    let long = Timeout::fixed(Duration::from_secs(3600));
    let (id, _) = c
        .request("tools/call", &json!({"name": "t"}), now, long, false)
        .unwrap();
    // The server's own ping carries the same id (both sides count from small integers);
    // it is answered, then the server cancels it late, as the spec allows.
    let ping = msg(json!({"jsonrpc": "2.0", "id": id.to_value(), "method": "ping"}));
    assert!(matches!(c.handle(ping, now), ClientStep::Reply(_)));
    let cancel = msg(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id.to_value(), "reason": "gave up on its ping"}}),
    );
    assert!(matches!(c.handle(cancel, now), ClientStep::Nothing));
    // Our call is still pending and gets its answer.
    let step = c.handle(result(&id.to_value(), json!({"content": []})), now);
    assert!(
        matches!(&step, ClientStep::Answer(a) if a.id == id),
        "expected the call's answer, got {step:?}"
    );
}

#[test]
fn the_server_may_end_a_listen_stream() {
    let now = Instant::now();
    let mut c = modern_ready(json!({}), json!({"tools": {"listChanged": true}}), now);
    let long = Timeout::fixed(Duration::from_secs(3600));
    let (id, m) = c
        .request(
            "subscriptions/listen",
            &json!({"notifications": {"toolsListChanged": true}}),
            now,
            long,
            false,
        )
        .unwrap();
    assert_eq!(json_of(&m)["method"], "subscriptions/listen");
    let end = msg(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id.to_value(), "reason": "shutting down"}}),
    );
    match c.handle(end.clone(), now) {
        ClientStep::EndedByServer {
            id: got,
            method,
            reason,
        } => {
            assert_eq!(got, id);
            assert_eq!(method, "subscriptions/listen");
            assert_eq!(reason.as_deref(), Some("shutting down"));
        }
        other => panic!("expected the stream to end, got {other:?}"),
    }
    assert!(matches!(c.handle(end, now), ClientStep::Nothing));
    assert_eq!(c.next_deadline(), None);
}
