//! The server engine on its own: lifecycle of both eras, gates, cancellation, timeouts,
//! progress and logging, driven with hand-written client messages.

use std::time::{Duration, Instant};

use mcp_core::engine::{
    ClientNotice, ListKind, Outcome, Refused, ServerConfig, ServerConfigBuilder, ServerEngine,
    ServerStep, Timeout,
};
use mcp_core::jsonrpc::{Message, RequestId, codes, decode};
use mcp_core::types::LoggingLevel;
use mcp_core::version::{ProtocolVersion, VersionSet};
use serde_json::{Value, json};

fn config(caps: Value) -> ServerConfig {
    config_builder(caps).build()
}

fn config_builder(caps: Value) -> ServerConfigBuilder {
    ServerConfig::builder(json!({"name": "test-server", "version": "0.0.1"}))
        .versions(VersionSet::all())
        .capabilities(caps)
        .instructions("be nice")
}

fn server(caps: Value) -> ServerEngine {
    ServerEngine::new(config(caps))
}

fn msg(v: Value) -> Message {
    decode(v.to_string().as_bytes()).expect("test message decodes")
}

fn request(id: i64, method: &str, params: Value) -> Message {
    msg(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

fn notification(method: &str, params: Value) -> Message {
    msg(json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

fn modern(id: i64, method: &str, mut params: Value, caps: Value) -> Message {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
    });
    request(id, method, params)
}

/// The JSON of a reply step, panicking on any other step.
fn reply(step: ServerStep) -> Value {
    match step {
        ServerStep::Reply(m) => serde_json::from_slice(&m.to_vec()).unwrap(),
        other => panic!("expected a reply, got {other:?}"),
    }
}

fn error_code(step: ServerStep) -> i64 {
    let v = reply(step);
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

fn json_of(m: &Message) -> Value {
    serde_json::from_slice(&m.to_vec()).unwrap()
}

fn initialize(s: &mut ServerEngine, version: &str, caps: Value, now: Instant) -> Value {
    let r = reply(s.handle(
        request(
            0,
            "initialize",
            json!({"protocolVersion": version, "capabilities": caps,
                   "clientInfo": {"name": "c", "version": "1"}}),
        ),
        now,
    ));
    assert!(matches!(
        s.handle(notification("notifications/initialized", json!({})), now),
        ServerStep::Notice(ClientNotice::Initialized)
    ));
    r
}

#[test]
fn requests_before_initialize_are_refused_but_ping_is_answered() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}}));
    assert_eq!(
        error_code(s.handle(request(1, "tools/list", json!({})), now)),
        codes::INVALID_REQUEST
    );
    assert_eq!(
        reply(s.handle(request(2, "ping", json!({})), now))["result"],
        json!({})
    );
}

#[test]
fn legacy_initialize_negotiates_and_a_second_one_is_refused() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}}));
    let r = initialize(&mut s, "2025-03-26", json!({}), now);
    assert_eq!(r["result"]["protocolVersion"], "2025-03-26");
    assert_eq!(r["result"]["serverInfo"]["name"], "test-server");
    assert_eq!(r["result"]["instructions"], "be nice");
    assert_eq!(s.session_version(), Some(ProtocolVersion::V2025_03_26));
    let again = s.handle(
        request(
            9,
            "initialize",
            json!({"protocolVersion": "2025-03-26", "capabilities": {}}),
        ),
        now,
    );
    assert_eq!(error_code(again), codes::INVALID_REQUEST);
    // A duplicate notifications/initialized is not reported twice.
    assert!(matches!(
        s.handle(notification("notifications/initialized", json!({})), now),
        ServerStep::Nothing
    ));
}

#[test]
fn unknown_legacy_version_is_answered_with_our_latest() {
    let mut s = server(json!({}));
    let r = initialize(&mut s, "2099-01-01", json!({}), Instant::now());
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn modern_only_server_refuses_initialize_with_its_versions() {
    let cfg = config_builder(json!({}))
        .versions(VersionSet::modern_only())
        .build();
    let mut s = ServerEngine::new(cfg);
    let r = reply(s.handle(
        request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
        ),
        Instant::now(),
    ));
    assert_eq!(r["error"]["code"], codes::UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(r["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert_eq!(r["error"]["data"]["requested"], "2025-06-18");
}

#[test]
fn modern_unsupported_version_lists_supported() {
    let mut s = server(json!({"tools": {}}));
    let mut m = json!({"name": "x", "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2027-01-01",
        "io.modelcontextprotocol/clientCapabilities": {}}});
    let r = reply(s.handle(request(1, "tools/call", m.take()), Instant::now()));
    assert_eq!(r["id"], 1);
    assert_eq!(r["error"]["code"], codes::UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(r["error"]["data"]["requested"], "2027-01-01");
    let supported = r["error"]["data"]["supported"].as_array().unwrap();
    assert!(supported.contains(&json!("2026-07-28")));
    // A failed check does not settle the era: the client may still fall back.
    assert_eq!(s.era(), None);
    initialize(&mut s, "2025-11-25", json!({}), Instant::now());
}

#[test]
fn modern_request_is_dispatched_with_its_own_context() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}, "logging": {}}));
    let mut m = modern(
        5,
        "tools/call",
        json!({"name": "t"}),
        json!({"elicitation": {}}),
    );
    if let Message::Request(r) = &mut m {
        let mut p = r.params_value();
        p["_meta"]["progressToken"] = json!("tok");
        p["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
        r.params = Some(mcp_core::jsonrpc::to_raw(&p).unwrap());
    }
    let ServerStep::Dispatch(ctx) = s.handle(m, now) else {
        panic!("expected dispatch")
    };
    assert_eq!(ctx.protocol_version, ProtocolVersion::V2026_07_28);
    assert_eq!(ctx.client_capabilities["elicitation"], json!({}));
    assert_eq!(ctx.client_info.as_ref().unwrap()["name"], "c");
    assert_eq!(ctx.progress_token, Some(RequestId::from("tok")));
    assert_eq!(ctx.log_level, Some(LoggingLevel::Warning));
    // The next request declares nothing: capabilities are per request, never remembered.
    let ServerStep::Dispatch(ctx2) = s.handle(modern(6, "tools/list", json!({}), json!({})), now)
    else {
        panic!("expected dispatch")
    };
    assert_eq!(*ctx2.client_capabilities, json!({}));
    // Log gating follows each request's own level.
    assert!(
        s.log(LoggingLevel::Info, None, json!("x"), Some(&ctx.id))
            .is_none()
    );
    assert!(
        s.log(LoggingLevel::Error, None, json!("x"), Some(&ctx.id))
            .is_some()
    );
    assert!(
        s.log(LoggingLevel::Emergency, None, json!("x"), Some(&ctx2.id))
            .is_none()
    );
    assert!(
        s.log(LoggingLevel::Emergency, None, json!("x"), None)
            .is_none()
    );
    // resultType is added to modern results.
    let out = json_of(
        &s.respond_value(&ctx.id, Ok(json!({"content": []})))
            .unwrap(),
    );
    assert_eq!(out["result"]["resultType"], "complete");
}

#[test]
fn modern_missing_capabilities_and_removed_methods() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}, "logging": {}}));
    let mut m = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    assert_eq!(
        error_code(s.handle(request(1, "tools/list", m.take()), now)),
        codes::INVALID_PARAMS
    );
    assert_eq!(
        error_code(s.handle(modern(2, "ping", json!({}), json!({})), now)),
        codes::METHOD_NOT_FOUND
    );
    assert_eq!(
        error_code(s.handle(
            modern(3, "logging/setLevel", json!({"level": "info"}), json!({})),
            now
        )),
        codes::METHOD_NOT_FOUND
    );
}

#[test]
fn modern_discover_needs_the_client_capabilities_too() {
    // The revision requires clientCapabilities on every request; discover is one of them.
    let now = Instant::now();
    let mut s = server(json!({"tools": {}}));
    let bare = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}});
    let r = reply(s.handle(request(104, "server/discover", bare), now));
    assert_eq!(r["id"], 104);
    assert_eq!(r["error"]["code"], codes::INVALID_PARAMS);
    let odd = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": 7}});
    assert_eq!(
        error_code(s.handle(request(105, "server/discover", odd), now)),
        codes::INVALID_PARAMS
    );
    // A removed method is still "not found" first, whatever its envelope lacks.
    let no_caps = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    assert_eq!(
        error_code(s.handle(request(106, "ping", no_caps), now)),
        codes::METHOD_NOT_FOUND
    );
}

#[test]
fn eras_do_not_mix_on_one_connection() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}}));
    assert!(matches!(
        s.handle(modern(1, "tools/list", json!({}), json!({})), now),
        ServerStep::Dispatch(_)
    ));
    let init = request(
        2,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
    );
    assert_eq!(error_code(s.handle(init, now)), codes::INVALID_REQUEST);
    assert_eq!(
        error_code(s.handle(request(3, "tools/list", json!({})), now)),
        codes::INVALID_PARAMS
    );

    let mut s = server(json!({"tools": {}}));
    initialize(&mut s, "2025-11-25", json!({}), now);
    assert_eq!(
        error_code(s.handle(modern(4, "tools/list", json!({}), json!({})), now)),
        codes::INVALID_REQUEST
    );
}

#[test]
fn discover_answers_without_settling_the_era() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}}));
    let r = reply(s.handle(modern(1, "server/discover", json!({}), json!({})), now));
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["capabilities"], json!({"tools": {}}));
    assert!(
        r["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert!(r["result"]["ttlMs"].is_u64());
    assert_eq!(r["result"]["cacheScope"], "private");
    assert_eq!(s.era(), None);
    initialize(&mut s, "2025-11-25", json!({}), now);
    // In a legacy session the modern-only method does not exist.
    assert_eq!(
        error_code(s.handle(request(2, "server/discover", json!({})), now)),
        codes::METHOD_NOT_FOUND
    );
}

#[test]
fn server_capability_gates() {
    let now = Instant::now();
    let mut s = server(json!({"resources": {}, "prompts": {}}));
    initialize(&mut s, "2025-11-25", json!({}), now);
    for (i, m) in [
        "tools/list",
        "tools/call",
        "completion/complete",
        "logging/setLevel",
        "resources/subscribe",
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(
            error_code(s.handle(
                request(i as i64 + 1, m, json!({"level": "info", "uri": "x"})),
                now
            )),
            codes::METHOD_NOT_FOUND,
            "{m} must be refused"
        );
    }
    assert!(matches!(
        s.handle(request(10, "resources/read", json!({"uri": "x"})), now),
        ServerStep::Dispatch(_)
    ));
    assert!(matches!(
        s.handle(request(11, "prompts/list", json!({})), now),
        ServerStep::Dispatch(_)
    ));
    // Methods the engine does not know go to the application.
    assert!(matches!(
        s.handle(request(12, "vendor/thing", json!({})), now),
        ServerStep::Dispatch(_)
    ));

    let mut s = server(json!({"resources": {"subscribe": true}}));
    initialize(&mut s, "2025-11-25", json!({}), now);
    assert!(matches!(
        s.handle(request(1, "resources/subscribe", json!({"uri": "x"})), now),
        ServerStep::Dispatch(_)
    ));
}

#[test]
fn duplicate_ids_in_flight_are_refused() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}}));
    initialize(&mut s, "2025-11-25", json!({}), now);
    assert!(matches!(
        s.handle(request(1, "tools/list", json!({})), now),
        ServerStep::Dispatch(_)
    ));
    assert_eq!(
        error_code(s.handle(request(1, "tools/list", json!({})), now)),
        codes::INVALID_REQUEST
    );
    assert!(
        s.respond_value(&RequestId::Number(1), Ok(json!({"tools": []})))
            .is_some()
    );
    // Once answered, a legacy result is passed through untouched.
    assert!(matches!(
        s.handle(request(1, "tools/list", json!({})), now),
        ServerStep::Dispatch(_)
    ));
    let out = json_of(
        &s.respond_value(&RequestId::Number(1), Ok(json!({"tools": []})))
            .unwrap(),
    );
    assert!(out["result"].get("resultType").is_none());
}

/// A client that reuses the id of a request it just cancelled, while that request's handler
/// still runs: the new request is refused as a duplicate (the id is still taken), and the
/// old handler's end neither answers nor frees anything of a later request with that id.
#[test]
fn a_cancelled_request_keeps_its_id_until_its_handler_ends() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}}));
    initialize(&mut s, "2025-11-25", json!({}), now);
    let id = RequestId::Number(100);
    assert!(matches!(
        s.handle(request(100, "tools/call", json!({"name": "slow"})), now),
        ServerStep::Dispatch(_)
    ));
    assert!(matches!(
        s.handle(
            notification("notifications/cancelled", json!({"requestId": 100})),
            now
        ),
        ServerStep::Cancel { .. }
    ));
    assert!(!s.is_in_flight(&id));
    // A second cancel of it changes nothing.
    assert!(matches!(
        s.handle(
            notification("notifications/cancelled", json!({"requestId": 100})),
            now
        ),
        ServerStep::Nothing
    ));
    // Reused while the cancelled handler runs: refused, not taken for the old request.
    assert_eq!(
        error_code(s.handle(request(100, "tools/call", json!({"name": "fast"})), now)),
        codes::INVALID_REQUEST
    );
    // The old handler ends: nothing goes out for it, and the id is free again.
    assert!(s.respond_value(&id, Ok(json!({"content": []}))).is_none());
    assert!(matches!(
        s.handle(request(100, "tools/call", json!({"name": "fast"})), now),
        ServerStep::Dispatch(_)
    ));
    assert!(s.respond_value(&id, Ok(json!({"content": []}))).is_some());
}

#[test]
fn cancellation_races() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}}));
    initialize(&mut s, "2025-11-25", json!({}), now);
    let id = RequestId::Number(7);
    assert!(matches!(
        s.handle(request(7, "tools/call", json!({"name": "slow"})), now),
        ServerStep::Dispatch(_)
    ));
    // Cancel, then the handler finishes: no response goes out.
    match s.handle(
        notification(
            "notifications/cancelled",
            json!({"requestId": 7, "reason": "user"}),
        ),
        now,
    ) {
        ServerStep::Cancel { id: got, reason } => {
            assert_eq!(got, id);
            assert_eq!(reason.as_deref(), Some("user"));
        }
        other => panic!("expected cancel, got {other:?}"),
    }
    assert!(s.respond_value(&id, Ok(json!({"content": []}))).is_none());
    assert!(s.progress(&id, 1.0, None, None).is_none());

    // Answered, then a late cancel: ignored.
    assert!(matches!(
        s.handle(request(8, "tools/call", json!({"name": "fast"})), now),
        ServerStep::Dispatch(_)
    ));
    assert!(
        s.respond_value(&RequestId::Number(8), Ok(json!({"content": []})))
            .is_some()
    );
    assert!(matches!(
        s.handle(
            notification("notifications/cancelled", json!({"requestId": 8})),
            now
        ),
        ServerStep::Nothing
    ));
    // Unknown id: ignored.
    assert!(matches!(
        s.handle(
            notification("notifications/cancelled", json!({"requestId": "nope"})),
            now
        ),
        ServerStep::Nothing
    ));
    // initialize (id 0) cannot be cancelled.
    assert!(matches!(
        s.handle(
            notification("notifications/cancelled", json!({"requestId": 0})),
            now
        ),
        ServerStep::Nothing
    ));
    assert_eq!(s.session_version(), Some(ProtocolVersion::V2025_11_25));
}

#[test]
fn progress_needs_a_token_and_must_increase() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}}));
    initialize(&mut s, "2025-11-25", json!({}), now);
    s.handle(request(1, "tools/call", json!({"name": "a"})), now);
    assert!(s.progress(&RequestId::Number(1), 1.0, None, None).is_none());
    s.handle(
        request(
            2,
            "tools/call",
            json!({"name": "b", "_meta": {"progressToken": 99}}),
        ),
        now,
    );
    let id = RequestId::Number(2);
    let p = json_of(&s.progress(&id, 1.0, Some(10.0), Some("one")).unwrap());
    assert_eq!(p["method"], "notifications/progress");
    assert_eq!(p["params"]["progressToken"], 99);
    assert_eq!(p["params"]["total"], 10.0);
    assert_eq!(p["params"]["message"], "one");
    assert!(s.progress(&id, 1.0, None, None).is_none());
    assert!(s.progress(&id, 0.5, None, None).is_none());
    assert!(s.progress(&id, 2.0, None, None).is_some());
}

#[test]
fn legacy_log_level_gating() {
    let now = Instant::now();
    let mut s = server(json!({"logging": {}}));
    initialize(&mut s, "2025-11-25", json!({}), now);
    // Until setLevel, every level goes out.
    assert!(
        s.log(LoggingLevel::Debug, Some("db"), json!({"a": 1}), None)
            .is_some()
    );
    let r = reply(s.handle(
        request(1, "logging/setLevel", json!({"level": "error"})),
        now,
    ));
    assert_eq!(r["result"], json!({}));
    assert!(
        s.log(LoggingLevel::Warning, None, json!("w"), None)
            .is_none()
    );
    let m = json_of(
        &s.log(LoggingLevel::Critical, Some("db"), json!("c"), None)
            .unwrap(),
    );
    assert_eq!(m["method"], "notifications/message");
    assert_eq!(
        m["params"],
        json!({"level": "critical", "logger": "db", "data": "c"})
    );
    assert_eq!(
        error_code(s.handle(
            request(2, "logging/setLevel", json!({"level": "loud"})),
            now
        )),
        codes::INVALID_PARAMS
    );
    // Without the capability nothing is logged at all.
    let mut quiet = server(json!({}));
    initialize(&mut quiet, "2025-11-25", json!({}), now);
    assert!(
        quiet
            .log(LoggingLevel::Emergency, None, json!("x"), None)
            .is_none()
    );
}

#[test]
fn server_requests_are_gated_on_client_capabilities() {
    let now = Instant::now();
    let t = Timeout::fixed(Duration::from_secs(5));
    let mut s = server(json!({}));
    assert!(matches!(
        s.request("roots/list", &json!({}), None, now, t),
        Err(Refused::NotReady(_))
    ));
    s.handle(
        request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}, "sampling": {}}}),
        ),
        now,
    );
    // Before notifications/initialized only ping may go out.
    assert!(matches!(
        s.request("sampling/createMessage", &json!({}), None, now, t),
        Err(Refused::NotReady(_))
    ));
    assert!(s.request("ping", &json!({}), None, now, t).is_ok());
    s.handle(notification("notifications/initialized", json!({})), now);
    assert!(matches!(
        s.request("roots/list", &json!({}), None, now, t),
        Err(Refused::MissingCapability { capability, .. }) if capability == "roots"
    ));
    assert!(
        s.request(
            "sampling/createMessage",
            &json!({"messages": []}),
            None,
            now,
            t
        )
        .is_ok()
    );
    assert!(matches!(
        s.request("sampling/createMessage", &json!({"tools": []}), None, now, t),
        Err(Refused::MissingCapability { capability, .. }) if capability == "sampling.tools"
    ));
    // `elicitation: {}` means form mode only.
    assert!(
        s.request("elicitation/create", &json!({"message": "m"}), None, now, t)
            .is_ok()
    );
    assert!(matches!(
        s.request("elicitation/create", &json!({"mode": "url", "url": "https://x"}), None, now, t),
        Err(Refused::MissingCapability { capability, .. }) if capability == "elicitation.url"
    ));
    assert!(matches!(
        s.request("ping", &json!(3), None, now, t),
        Err(Refused::InvalidParams(_))
    ));

    // Elicitation did not exist in 2025-03-26.
    let mut old = server(json!({}));
    initialize(&mut old, "2025-03-26", json!({"elicitation": {}}), now);
    assert!(matches!(
        old.request("elicitation/create", &json!({"message": "m"}), None, now, t),
        Err(Refused::UnsupportedByVersion { .. })
    ));

    // The modern era has no server-to-client requests.
    let mut m = server(json!({"tools": {}}));
    m.handle(
        modern(1, "tools/list", json!({}), json!({"sampling": {}})),
        now,
    );
    assert!(matches!(
        m.request(
            "sampling/createMessage",
            &json!({}),
            Some(RequestId::Number(1)),
            now,
            t
        ),
        Err(Refused::WrongEra { .. })
    ));
}

/// A request to the client is fitted to the client's revision before it goes: a 2025-06-18
/// client gets a form elicitation without `mode` or `default`s and a titled enum as `enum` +
/// `enumNames`; what that revision cannot express (a multi-select enum) is refused, unsent.
#[test]
fn server_requests_are_shaped_for_the_clients_revision() {
    let now = Instant::now();
    let t = Timeout::fixed(Duration::from_secs(5));
    let mut s = server(json!({}));
    initialize(&mut s, "2025-06-18", json!({"elicitation": {}}), now);
    let form = json!({"mode": "form", "message": "m", "requestedSchema": {"type": "object",
        "properties": {
            "name": {"type": "string", "default": "x"},
            "pick": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]}}}});
    let (_, msg) = s
        .request("elicitation/create", &form, None, now, t)
        .unwrap();
    let Message::Request(r) = msg else {
        panic!("a request")
    };
    let p = r.params_value();
    assert!(p.get("mode").is_none(), "{p}");
    let props = &p["requestedSchema"]["properties"];
    assert!(props["name"].get("default").is_none(), "{p}");
    assert_eq!(props["pick"]["enum"], json!(["a"]), "{p}");
    assert_eq!(props["pick"]["enumNames"], json!(["A"]), "{p}");
    let multi = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
        "many": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}}});
    assert!(matches!(
        s.request("elicitation/create", &multi, None, now, t),
        Err(Refused::InvalidParams(_))
    ));
    assert_eq!(s.load().1, 1, "the refused request is not pending");
}

#[test]
fn answers_and_timeouts_of_server_requests() {
    let t0 = Instant::now();
    let sec = Duration::from_secs(1);
    let mut s = server(json!({}));
    initialize(
        &mut s,
        "2025-11-25",
        json!({"roots": {}, "sampling": {}}),
        t0,
    );
    let (a, _) = s
        .request(
            "roots/list",
            &json!({}),
            Some(RequestId::Number(40)),
            t0,
            Timeout::fixed(5 * sec),
        )
        .unwrap();
    let (b, req_b) = s
        .request(
            "sampling/createMessage",
            &json!({"messages": []}),
            None,
            t0,
            Timeout::resetting(5 * sec, 12 * sec),
        )
        .unwrap();
    assert_ne!(a, b);
    let token = json_of(&req_b)["params"]["_meta"]["progressToken"].clone();
    assert!(!token.is_null());
    assert_eq!(s.next_deadline(), Some(t0 + 5 * sec));

    // The answer to a is matched and carries the request it was made for.
    let resp = msg(json!({"jsonrpc": "2.0", "id": a.to_value(), "result": {"roots": []}}));
    match s.handle(resp, t0 + sec) {
        ServerStep::Answer(ans) => {
            assert_eq!(ans.id, a);
            assert_eq!(ans.method, "roots/list");
            assert_eq!(ans.related_to, Some(RequestId::Number(40)));
            assert!(matches!(ans.outcome, Outcome::Complete(_)));
        }
        other => panic!("expected an answer, got {other:?}"),
    }
    // Progress on b pushes its deadline, but never beyond 12 s.
    let prog = |p: f64| {
        notification(
            "notifications/progress",
            json!({"progressToken": token, "progress": p}),
        )
    };
    assert!(matches!(s.handle(prog(1.0), t0 + 4 * sec), ServerStep::Progress(u) if u.id == b));
    assert_eq!(s.next_deadline(), Some(t0 + 9 * sec));
    assert!(matches!(
        s.handle(prog(1.0), t0 + 8 * sec),
        ServerStep::Nothing
    ));
    assert!(s.poll(t0 + 8 * sec).is_empty());
    assert!(matches!(
        s.handle(prog(2.0), t0 + 8 * sec),
        ServerStep::Progress(_)
    ));
    assert_eq!(s.next_deadline(), Some(t0 + 12 * sec));
    let expired = s.poll(t0 + 12 * sec);
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].id, b);
    let cancel = json_of(&expired[0].cancel);
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], b.to_value());
    // A late answer to an expired request is dropped.
    let late = msg(json!({"jsonrpc": "2.0", "id": b.to_value(), "result": {}}));
    assert!(matches!(s.handle(late, t0 + 13 * sec), ServerStep::Nothing));
    assert_eq!(s.next_deadline(), None);
}

#[test]
fn fixed_timeout_ignores_progress_and_cancel_forgets() {
    let t0 = Instant::now();
    let sec = Duration::from_secs(1);
    let mut s = server(json!({}));
    initialize(&mut s, "2025-11-25", json!({"roots": {}}), t0);
    let (a, _) = s
        .request("roots/list", &json!({}), None, t0, Timeout::fixed(3 * sec))
        .unwrap();
    assert_eq!(s.poll(t0 + 3 * sec).len(), 1);
    let (b, _) = s
        .request("roots/list", &json!({}), None, t0, Timeout::fixed(3 * sec))
        .unwrap();
    assert_ne!(a, b);
    let c = json_of(&s.cancel(&b, Some("changed my mind")).unwrap());
    assert_eq!(c["params"]["reason"], "changed my mind");
    assert!(s.cancel(&b, None).is_none());
    let err =
        msg(json!({"jsonrpc": "2.0", "id": b.to_value(), "error": {"code": -1, "message": "x"}}));
    assert!(matches!(s.handle(err, t0), ServerStep::Nothing));
}

#[test]
fn notification_builders_follow_capabilities() {
    let s = server(json!({"tools": {"listChanged": true}, "resources": {"subscribe": true}}));
    let m = json_of(&s.list_changed(ListKind::Tools, None).unwrap());
    assert_eq!(m["method"], "notifications/tools/list_changed");
    assert!(s.list_changed(ListKind::Prompts, None).is_none());
    let m = json_of(
        &s.resource_updated("file:///a", Some(&RequestId::Number(3)))
            .unwrap(),
    );
    assert_eq!(m["params"]["uri"], "file:///a");
    assert_eq!(
        m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        3
    );
    let quiet = server(json!({"resources": {}}));
    assert!(quiet.resource_updated("file:///a", None).is_none());
}

#[test]
fn an_abandoned_request_gets_no_answer() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}, "logging": {}}));
    let ServerStep::Dispatch(ctx) = s.handle(
        modern(1, "tools/call", json!({"name": "t"}), json!({})),
        now,
    ) else {
        panic!("expected dispatch")
    };
    assert!(s.abandon(&ctx.id));
    assert!(!s.abandon(&ctx.id));
    assert!(!s.is_in_flight(&ctx.id));
    assert!(
        s.respond_value(&ctx.id, Ok(json!({"content": []})))
            .is_none()
    );
}

/// `take_plain` takes a request exactly where `handle` would dispatch it, and nowhere else.
#[test]
fn a_plain_request_is_taken_only_where_handle_would_dispatch_it() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}}));
    let id = RequestId::Number(1);
    // Not initialized: `handle` refuses it.
    assert!(s.take_plain(&id, "tools/call").is_none());
    initialize(&mut s, "2025-06-18", json!({"roots": {}}), now);
    // Answered by the engine itself, or not served (no prompts declared, a method of the
    // other era): what `handle` does not dispatch is not taken either.
    let mut other = server(json!({"tools": {}}));
    initialize(&mut other, "2025-06-18", json!({"roots": {}}), now);
    let methods = [
        "ping",
        "initialize",
        "logging/setLevel",
        "prompts/get",
        "server/discover",
        "subscriptions/listen",
        "tools/list",
        "x/custom",
    ];
    for (n, method) in (10..).zip(methods) {
        let dispatched = matches!(
            other.handle(request(n, method, json!({})), now),
            ServerStep::Dispatch(_)
        );
        let taken = s.take_plain(&RequestId::Number(n), method).is_some();
        assert_eq!(taken, dispatched, "{method}");
        assert!(!["ping", "initialize", "prompts/get"].contains(&method) || !taken);
    }
    let taken = s.take_plain(&id, "tools/call").expect("a plain call");
    assert_eq!(taken.protocol_version, ProtocolVersion::V2025_06_18);
    assert_eq!(*taken.client_capabilities, json!({"roots": {}}));
    assert!(s.is_in_flight(&id));
    // Its id is in flight now: a second request with it is not plain (`handle` refuses it).
    assert!(s.take_plain(&id, "tools/call").is_none());
    assert_eq!(
        error_code(s.handle(request(1, "tools/call", json!({"name": "x"})), now)),
        codes::INVALID_REQUEST
    );
    let answer = s
        .respond_value(&id, Ok(json!({"content": []})))
        .expect("its answer");
    assert_eq!(json_of(&answer)["id"], 1);
    assert!(!s.is_in_flight(&id));
}

/// A 2026-07-28 connection has no session for a plain request to join.
#[test]
fn a_modern_connection_takes_no_plain_request() {
    let now = Instant::now();
    let mut s = server(json!({"tools": {}}));
    let step = s.handle(modern(1, "tools/list", json!({}), json!({})), now);
    assert!(matches!(step, ServerStep::Dispatch(_)));
    assert!(s.take_plain(&RequestId::Number(2), "tools/call").is_none());
}
