//! Security defaults over real sockets: Host/Origin allowlists, CORS, bearer authorization.

mod common;

use std::sync::Arc;

use common::*;
use mcp_http_blocking::{AuthConfig, AuthError, Authorizer, HttpConfig, HttpServer};
use serde_json::json;

#[test]
fn binds_loopback_by_default() {
    let h = start(HttpConfig::default());
    assert!(h.local_addr().ip().is_loopback());
}

#[test]
fn dns_rebinding_and_foreign_origins_get_403() {
    let h = start(HttpConfig::default());
    let a = h.local_addr();
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("Host", "rebind.example:8080")],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 403);
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("Origin", "http://evil.example")],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 403);
    assert!(r.json()["error"].is_object(), "a JSON-RPC error without id");
    // Allowed origin: served, with CORS headers exposing the session id.
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("Origin", "http://localhost:5173")],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://localhost:5173")
    );
    assert!(
        r.header("access-control-expose-headers")
            .unwrap()
            .contains("Mcp-Session-Id")
    );
    // Configured hosts replace the loopback default.
    let h2 = start(HttpConfig::builder().allowed_hosts(["mcp.example"]).build());
    let r = request(
        h2.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("Host", "mcp.example")],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 200);
    let r = request(
        h2.local_addr(),
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 403);
}

/// A target in absolute-form is served (RFC 9112 §3.2.2), and its authority, not the `Host`
/// header, is the host the rebinding check judges.
#[test]
fn an_absolute_form_target_is_served_and_its_host_checked() {
    let h = start(HttpConfig::default());
    let a = h.local_addr();
    let url = format!("http://127.0.0.1:{}/mcp", a.port());
    let r = request(
        a,
        "POST",
        &url,
        &[ACCEPT_BOTH, JSON_CT],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-06-18");
    let r = request(
        a,
        "POST",
        "http://rebind.example:8080/mcp",
        &[ACCEPT_BOTH, JSON_CT, ("Host", "127.0.0.1")],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 403);
}

#[test]
fn cors_preflight_is_answered_for_allowed_origins() {
    let h = start(HttpConfig::default());
    let r = request(
        h.local_addr(),
        "OPTIONS",
        "/mcp",
        &[
            ("Origin", "http://127.0.0.1:3000"),
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "content-type, mcp-session-id, mcp-param-region",
            ),
        ],
        b"",
    );
    assert_eq!(r.status, 204);
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://127.0.0.1:3000")
    );
    assert!(
        r.header("access-control-allow-methods")
            .unwrap()
            .contains("DELETE")
    );
    assert!(
        r.header("access-control-allow-headers")
            .unwrap()
            .contains("mcp-param-region")
    );
    let r = request(
        h.local_addr(),
        "OPTIONS",
        "/mcp",
        &[("Origin", "https://evil.example")],
        b"",
    );
    assert_eq!(r.status, 403);
}

struct Tokens;
impl Authorizer for Tokens {
    fn authorize(&self, token: &str, resource: &str) -> Result<serde_json::Value, AuthError> {
        assert!(resource.ends_with("/mcp"));
        match token {
            "good" => Ok(json!({"sub": "alice"})),
            "weak" => Err(AuthError::InsufficientScope {
                scope: "mcp:write".into(),
            }),
            _ => Err(AuthError::Invalid("unknown token".into())),
        }
    }
}

#[test]
fn bearer_tokens_are_checked_and_the_metadata_is_served() {
    let ctl = Ctl::new();
    let cfg = HttpConfig::builder()
        .auth(
            AuthConfig::builder(Arc::new(Tokens))
                .authorization_servers(["https://auth.example"])
                .scopes(["mcp:read"])
                .build(),
        )
        .build();
    let h = HttpServer::builder()
        .config(cfg)
        .build(TestService(ctl.clone()))
        .unwrap()
        .spawn()
        .unwrap();
    let a = h.local_addr();
    let host = format!("127.0.0.1:{}", a.port());
    let hh = ("Host", host.as_str());
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, hh],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 401);
    let www = r.header("www-authenticate").unwrap();
    let prm = format!("http://{host}/.well-known/oauth-protected-resource/mcp");
    assert!(www.starts_with("Bearer "), "{www}");
    assert!(
        www.contains(&format!("resource_metadata=\"{prm}\"")),
        "{www}"
    );
    assert!(www.contains("scope=\"mcp:read\""));
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, hh, ("Authorization", "Bearer bad")],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 401);
    assert!(
        r.header("www-authenticate")
            .unwrap()
            .contains("invalid_token")
    );
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, hh, ("Authorization", "Bearer weak")],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 403);
    assert!(
        r.header("www-authenticate")
            .unwrap()
            .contains("insufficient_scope")
    );
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, hh, ("Authorization", "Bearer good")],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 200);
    // The claims reached the service.
    let info = ctl.infos.lock().unwrap().last().cloned().unwrap();
    assert_eq!(info.auth.unwrap()["sub"], "alice");
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let r = request(a, "GET", path, &[hh], b"");
        assert_eq!(r.status, 200, "{path}");
        let doc = r.json();
        assert_eq!(doc["resource"], format!("http://{host}/mcp"));
        assert_eq!(doc["authorization_servers"][0], "https://auth.example");
    }
}
