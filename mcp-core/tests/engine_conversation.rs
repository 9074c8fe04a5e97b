//! A client engine and a server engine talking to each other: every message one produces is
//! encoded, decoded and fed to the other, as a transport would.

use std::time::{Duration, Instant};

use mcp_core::engine::{
    ClientConfig, ClientEngine, ClientNotice, ClientStep, Outcome, ServerConfig, ServerEngine,
    ServerStep, Timeout,
};
use mcp_core::jsonrpc::{Message, decode};
use mcp_core::types::LoggingLevel;
use mcp_core::version::{Era, ProtocolVersion, VersionSet};
use serde_json::{Value, json};

const T: Timeout = Timeout::fixed(Duration::from_secs(30));

/// Through the codec, as on a real wire.
fn wire(m: &Message) -> Message {
    decode(&m.to_vec()).expect("engine output decodes")
}

fn server(versions: VersionSet) -> ServerEngine {
    ServerEngine::new(
        ServerConfig::builder(json!({"name": "srv", "version": "1.0.0"}))
            .versions(versions)
            .capabilities(json!({"tools": {"listChanged": true}, "logging": {}}))
            .instructions("use the tools")
            .build(),
    )
}

fn client(versions: VersionSet) -> ClientEngine {
    ClientEngine::new(
        ClientConfig::builder(json!({"name": "cli", "version": "1.0.0"}))
            .versions(versions)
            .capabilities(json!({"sampling": {}, "roots": {}}))
            .build(),
    )
}

fn to_server(s: &mut ServerEngine, m: &Message, now: Instant) -> ServerStep {
    s.handle(wire(m), now)
}

fn to_client(c: &mut ClientEngine, m: &Message, now: Instant) -> ClientStep {
    c.handle(wire(m), now)
}

fn reply(step: ServerStep) -> Message {
    match step {
        ServerStep::Reply(m) => m,
        other => panic!("expected a reply, got {other:?}"),
    }
}

fn raw_json(o: &Outcome) -> Value {
    match o {
        Outcome::Complete(r) => serde_json::from_str(r.get()).unwrap(),
        other => panic!("expected a complete result, got {other:?}"),
    }
}

#[test]
fn full_legacy_conversation() {
    let now = Instant::now();
    let mut s = server(VersionSet::all());
    let mut c = client(VersionSet::all());

    // Handshake.
    let init = c.initialize_request(now).unwrap();
    let answer = reply(to_server(&mut s, &init, now));
    let ClientStep::Ready(ready) = to_client(&mut c, &answer, now) else {
        panic!("client not ready")
    };
    assert_eq!(ready.version, ProtocolVersion::V2025_11_25);
    assert_eq!(ready.server_info.as_ref().unwrap()["name"], "srv");
    assert!(matches!(
        to_server(&mut s, ready.send.as_ref().unwrap(), now),
        ServerStep::Notice(ClientNotice::Initialized)
    ));
    assert_eq!(
        s.session_client_capabilities().unwrap()["sampling"],
        json!({})
    );

    // A tool call with progress, during which the server samples from the client.
    let (call_id, call) = c
        .request(
            "tools/call",
            &json!({"name": "ask", "arguments": {}}),
            now,
            T,
            true,
        )
        .unwrap();
    let ServerStep::Dispatch(ctx) = to_server(&mut s, &call, now) else {
        panic!("not dispatched")
    };
    assert_eq!(ctx.era, Era::Legacy);
    assert_eq!(ctx.id, call_id);
    let p = s
        .progress(&ctx.id, 1.0, Some(2.0), Some("halfway"))
        .unwrap();
    assert!(
        matches!(to_client(&mut c, &p, now), ClientStep::Progress(u) if u.id == call_id && u.message.as_deref() == Some("halfway"))
    );
    let log = s
        .log(
            LoggingLevel::Info,
            Some("tool"),
            json!("thinking"),
            Some(&ctx.id),
        )
        .unwrap();
    assert!(
        matches!(to_client(&mut c, &log, now), ClientStep::Notification(n) if n.method == "notifications/message")
    );

    let (sid, sreq) = s
        .request(
            "sampling/createMessage",
            &json!({"messages": [], "maxTokens": 10}),
            Some(ctx.id.clone()),
            now,
            T,
        )
        .unwrap();
    let ClientStep::Dispatch(preq) = to_client(&mut c, &sreq, now) else {
        panic!("sampling not dispatched to the client app")
    };
    assert_eq!(preq.method, "sampling/createMessage");
    let sresp = c
        .respond_value(&preq.id, Ok(json!({"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"})))
        .unwrap();
    let ServerStep::Answer(ans) = to_server(&mut s, &sresp, now) else {
        panic!("sampling answer not matched")
    };
    assert_eq!(ans.id, sid);
    assert_eq!(ans.related_to.as_ref(), Some(&ctx.id));
    assert_eq!(raw_json(&ans.outcome)["model"], "m");

    let done = s
        .respond_value(
            &ctx.id,
            Ok(json!({"content": [{"type": "text", "text": "42"}]})),
        )
        .unwrap();
    let ClientStep::Answer(ans) = to_client(&mut c, &done, now) else {
        panic!("tool answer not matched")
    };
    assert_eq!(ans.id, call_id);
    assert_eq!(raw_json(&ans.outcome)["content"][0]["text"], "42");

    // Ping both ways, answered by the engines themselves.
    let (_, ping) = c.request("ping", &json!({}), now, T, false).unwrap();
    let pong = reply(to_server(&mut s, &ping, now));
    assert!(matches!(
        to_client(&mut c, &pong, now),
        ClientStep::Answer(_)
    ));
    let (_, ping) = s.request("ping", &json!({}), None, now, T).unwrap();
    let ClientStep::Reply(pong) = to_client(&mut c, &ping, now) else {
        panic!("client must answer ping")
    };
    assert!(matches!(
        to_server(&mut s, &pong, now),
        ServerStep::Answer(_)
    ));

    // The client cancels a slow call: the server's late answer is swallowed.
    let (slow, call) = c
        .request("tools/call", &json!({"name": "slow"}), now, T, false)
        .unwrap();
    let ServerStep::Dispatch(ctx) = to_server(&mut s, &call, now) else {
        panic!("not dispatched")
    };
    let cancel = c.cancel(&slow, Some("bored")).unwrap();
    assert!(
        matches!(to_server(&mut s, &cancel, now), ServerStep::Cancel { id, .. } if id == ctx.id)
    );
    assert!(
        s.respond_value(&ctx.id, Ok(json!({"content": []})))
            .is_none()
    );

    // List changes reach the client as plain notifications.
    let lc = s
        .list_changed(mcp_core::engine::ListKind::Tools, None)
        .unwrap();
    assert!(
        matches!(to_client(&mut c, &lc, now), ClientStep::Notification(n) if n.method == "notifications/tools/list_changed")
    );
    assert_eq!(s.load(), (0, 0));
}

#[test]
fn full_modern_conversation() {
    let now = Instant::now();
    let mut s = server(VersionSet::all());
    let mut c = client(VersionSet::all());

    let disc = c.discover_request(now).unwrap();
    let answer = reply(to_server(&mut s, &disc, now));
    let ClientStep::Ready(ready) = to_client(&mut c, &answer, now) else {
        panic!("client not ready")
    };
    assert_eq!(ready.era, Era::Modern);
    assert_eq!(ready.version, ProtocolVersion::V2026_07_28);
    assert_eq!(ready.instructions.as_deref(), Some("use the tools"));
    assert_eq!(ready.server_info.as_ref().unwrap()["name"], "srv");

    c.set_log_level(Some(LoggingLevel::Notice));
    let (call_id, call) = c
        .request("tools/call", &json!({"name": "t"}), now, T, true)
        .unwrap();
    let ServerStep::Dispatch(ctx) = to_server(&mut s, &call, now) else {
        panic!("not dispatched")
    };
    assert_eq!(ctx.era, Era::Modern);
    assert_eq!(ctx.protocol_version, ProtocolVersion::V2026_07_28);
    assert_eq!(
        *ctx.client_capabilities,
        json!({"sampling": {}, "roots": {}})
    );
    assert_eq!(ctx.client_info.as_ref().unwrap()["name"], "cli");
    assert_eq!(ctx.log_level, Some(LoggingLevel::Notice));
    assert!(
        s.log(LoggingLevel::Info, None, json!("quiet"), Some(&ctx.id))
            .is_none()
    );
    let log = s
        .log(LoggingLevel::Error, None, json!("loud"), Some(&ctx.id))
        .unwrap();
    assert!(matches!(
        to_client(&mut c, &log, now),
        ClientStep::Notification(_)
    ));
    let p = s.progress(&ctx.id, 3.0, None, None).unwrap();
    assert!(matches!(to_client(&mut c, &p, now), ClientStep::Progress(u) if u.id == call_id));
    // No server-to-client requests in this era.
    assert!(
        s.request("roots/list", &json!({}), Some(ctx.id.clone()), now, T)
            .is_err()
    );

    let done = s
        .respond_value(&ctx.id, Ok(json!({"content": []})))
        .unwrap();
    let ClientStep::Answer(ans) = to_client(&mut c, &done, now) else {
        panic!("answer not matched")
    };
    assert_eq!(raw_json(&ans.outcome)["resultType"], "complete");

    // MRTR: a handler that needs input answers input_required; the client sees it as such.
    let (id2, call) = c
        .request("tools/call", &json!({"name": "needs_input"}), now, T, false)
        .unwrap();
    let ServerStep::Dispatch(ctx) = to_server(&mut s, &call, now) else {
        panic!("not dispatched")
    };
    let ir = s
        .respond_value(
            &ctx.id,
            Ok(json!({"resultType": "input_required", "requestState": "opaque"})),
        )
        .unwrap();
    assert!(
        matches!(to_client(&mut c, &ir, now), ClientStep::Answer(a) if a.id == id2 && matches!(a.outcome, Outcome::InputRequired(_)))
    );
}

#[test]
fn dual_era_client_falls_back_to_a_legacy_server() {
    let now = Instant::now();
    let mut s = server(VersionSet::legacy_only());
    let mut c = client(VersionSet::all());
    let disc = c.discover_request(now).unwrap();
    let err = reply(to_server(&mut s, &disc, now));
    let ClientStep::HandshakeFailed(e) = to_client(&mut c, &err, now) else {
        panic!("discovery must fail against a legacy server")
    };
    assert!(e.should_fall_back(), "{e}");
    let init = c.initialize_request(now).unwrap();
    let answer = reply(to_server(&mut s, &init, now));
    let ClientStep::Ready(ready) = to_client(&mut c, &answer, now) else {
        panic!("fallback failed")
    };
    assert_eq!(ready.era, Era::Legacy);
}

#[test]
fn legacy_client_meets_a_modern_only_server() {
    let now = Instant::now();
    let mut s = server(VersionSet::modern_only());
    let mut c = client(VersionSet::legacy_only());
    let init = c.initialize_request(now).unwrap();
    let err = reply(to_server(&mut s, &init, now));
    let ClientStep::HandshakeFailed(mcp_core::engine::HandshakeError::Rejected(e)) =
        to_client(&mut c, &err, now)
    else {
        panic!("expected a rejected handshake")
    };
    assert_eq!(
        e.code,
        mcp_core::jsonrpc::codes::UNSUPPORTED_PROTOCOL_VERSION
    );
    assert_eq!(e.data.unwrap()["supported"], json!(["2026-07-28"]));
}

#[test]
fn old_revision_session_keeps_its_version() {
    let now = Instant::now();
    let mut s = server(VersionSet::all());
    let mut c = client(VersionSet::only([ProtocolVersion::V2024_11_05]));
    let init = c.initialize_request(now).unwrap();
    let answer = reply(to_server(&mut s, &init, now));
    let ClientStep::Ready(ready) = to_client(&mut c, &answer, now) else {
        panic!("not ready")
    };
    assert_eq!(ready.version, ProtocolVersion::V2024_11_05);
    assert_eq!(s.session_version(), Some(ProtocolVersion::V2024_11_05));
}
