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
            // Alice again, with a refreshed token (a new `exp`).
            "good2" => Ok(json!({"sub": "alice", "exp": 4_000_000_000u64})),
            "other" => Ok(json!({"sub": "bob"})),
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

fn authorized_server() -> (mcp_http_blocking::ServerHandle, String) {
    let cfg = HttpConfig::builder()
        .auth(
            AuthConfig::builder(Arc::new(Tokens))
                .authorization_servers(["https://auth.example"])
                .build(),
        )
        .build();
    let h = HttpServer::builder()
        .config(cfg)
        .build(TestService(Ctl::new()))
        .unwrap()
        .spawn()
        .unwrap();
    let host = format!("127.0.0.1:{}", h.local_addr().port());
    (h, host)
}

/// A session id is no credential: a valid token of another user does not reach someone
/// else's session (POST, GET stream, DELETE all find no such session), while the owner's
/// refreshed token does.
#[test]
fn a_session_is_bound_to_the_user_who_opened_it() {
    let (h, host) = authorized_server();
    let a = h.local_addr();
    let hh = ("Host", host.as_str());
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, hh, ("Authorization", "Bearer good")],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 200);
    let sid = r.header("mcp-session-id").unwrap().to_owned();
    let sid_h = ("Mcp-Session-Id", sid.as_str());
    let pv = ("MCP-Protocol-Version", "2025-06-18");
    let ping = rpc(2, "ping", json!({}));
    let as_user = |token: &str, method: &str, body: &[u8]| {
        let auth = format!("Bearer {token}");
        let accept = if method == "GET" {
            ("Accept", "text/event-stream")
        } else {
            ACCEPT_BOTH
        };
        request(
            a,
            method,
            "/mcp",
            &[
                accept,
                JSON_CT,
                hh,
                sid_h,
                pv,
                ("Authorization", auth.as_str()),
            ],
            body,
        )
    };
    assert_eq!(as_user("other", "POST", &ping).status, 404);
    assert_eq!(as_user("other", "GET", b"").status, 404);
    assert_eq!(as_user("other", "DELETE", b"").status, 404);
    assert_eq!(as_user("good2", "POST", &ping).status, 200);
    assert_eq!(as_user("good", "DELETE", b"").status, 200);
}

/// The bearer scheme ignores case; what is not a bearer token (RFC 6750 `b64token`) is
/// refused without being checked; the metadata answers a browser's preflight.
#[test]
fn bearer_scheme_and_token_syntax_and_the_metadata_preflight() {
    let (h, host) = authorized_server();
    let a = h.local_addr();
    let hh = ("Host", host.as_str());
    let post = |auth: &str| {
        request(
            a,
            "POST",
            "/mcp",
            &[ACCEPT_BOTH, JSON_CT, hh, ("Authorization", auth)],
            &init_body("2025-06-18"),
        )
    };
    assert_eq!(post("BEARER good").status, 200);
    assert_eq!(post("bEaReR good").status, 200);
    let r = post("Bearer go od,x");
    assert_eq!(r.status, 400);
    assert!(
        r.header("www-authenticate")
            .unwrap()
            .contains("invalid_request")
    );
    let r = request(
        a,
        "OPTIONS",
        "/.well-known/oauth-protected-resource/mcp",
        &[
            hh,
            ("Origin", "http://localhost:3000"),
            ("Access-Control-Request-Method", "GET"),
            ("Access-Control-Request-Headers", "mcp-protocol-version"),
        ],
        b"",
    );
    assert!(r.status == 204 || r.status == 200, "{}", r.status);
    assert!(r.header("access-control-allow-origin").is_some());
}

/// Accepts a token only for the resource it was issued for (the resource URL with `~` for
/// `:`, to stay a valid bearer token), as a real authorizer checks the audience.
struct Audience;
impl Authorizer for Audience {
    fn authorize(&self, token: &str, resource: &str) -> Result<serde_json::Value, AuthError> {
        if token.replace('~', ":") == resource {
            Ok(json!({"sub": "alice"}))
        } else {
            Err(AuthError::Invalid("another audience".into()))
        }
    }
}

fn audience_server(cfg: mcp_http_blocking::HttpConfigBuilder) -> mcp_http_blocking::ServerHandle {
    HttpServer::builder()
        .config(cfg.build())
        .build(TestService(Ctl::new()))
        .unwrap()
        .spawn()
        .unwrap()
}

fn audience_auth() -> mcp_http_blocking::AuthConfigBuilder {
    AuthConfig::builder(Arc::new(Audience)).authorization_servers(["https://auth.example"])
}

/// An `initialize` POSTed to `a` with `Host: host` and the bearer `token`.
fn post_as(a: std::net::SocketAddr, host: &str, token: &str) -> Resp {
    let auth = format!("Bearer {token}");
    request(
        a,
        "POST",
        "/mcp",
        &[
            ACCEPT_BOTH,
            JSON_CT,
            ("Host", host),
            ("Authorization", &auth),
        ],
        &init_body("2025-06-18"),
    )
}

/// The audience a token is checked for is this server's URL, never one the client names in
/// `Host`: a token issued for another server on the same host (another port) is refused, and
/// a server that allows every `Host` must be told its URL.
#[test]
fn the_audience_never_comes_from_a_host_the_client_chooses() {
    let h = audience_server(HttpConfig::builder().auth(audience_auth().build()));
    let a = h.local_addr();
    let ours = format!("127.0.0.1:{}", a.port());
    let other = format!("127.0.0.1:{}", a.port().wrapping_add(1).max(1));
    let post = |host: &str, token: &str| post_as(a, host, token);
    // This server's own token, through its own address: served.
    assert_eq!(
        post(&ours, &format!("http://{ours}/mcp").replace(':', "~")).status,
        200
    );
    // A token for the server on the next port, with a Host naming that port: refused before
    // the token is looked at, and no metadata of that other server is made up either.
    let r = post(&other, &format!("http://{other}/mcp").replace(':', "~"));
    assert_eq!(r.status, 421, "a token for another port was checked");
    let r = request(
        a,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[("Host", other.as_str())],
        b"",
    );
    assert_eq!(r.status, 421);

    // Every Host allowed and no public URL: refused at build time.
    let open = HttpConfig::builder()
        .allowed_hosts(["*"])
        .auth(audience_auth().build());
    let err = HttpServer::builder()
        .config(open.clone().build())
        .build(TestService(Ctl::new()))
        .err()
        .expect("an open server with Host-made audiences was built");
    assert!(
        matches!(err, mcp_http_blocking::Error::InvalidConfig { .. }),
        "{err}"
    );
    // The same on another HTTP server (the transport alone): 421 at request time.
    let core = mcp_http_blocking::StreamableHttp::new(TestService(Ctl::new()), open.build());
    let req = mcp_http_blocking::HttpRequest::new("POST", "/mcp")
        .with_header("Host", "evil.example")
        .with_header("Content-Type", "application/json")
        .with_header("Authorization", "Bearer http~//evil.example/mcp");
    assert_eq!(
        core.handle(&req, &mut &init_body("2025-06-18")[..]).status,
        421
    );
    // With the public URL set, every Host is checked for that URL alone.
    let h = audience_server(
        HttpConfig::builder()
            .allowed_hosts(["*"])
            .auth(audience_auth().public_url("https://mcp.example/").build()),
    );
    let a = h.local_addr();
    let post = |host: &str, token: &str| post_as(a, host, token);
    assert_eq!(post("evil.example", "http~//evil.example/mcp").status, 401);
    assert_eq!(post("evil.example", "https~//mcp.example/mcp").status, 200);
}

/// MCP wants protected resource metadata to name at least one authorization server: a server
/// whose tokens come from none (a fixed token) publishes no metadata and points at none.
#[test]
fn without_an_authorization_server_no_metadata_is_published() {
    let h = audience_server(
        HttpConfig::builder().auth(AuthConfig::builder(Arc::new(Audience)).build()),
    );
    let a = h.local_addr();
    let host = format!("127.0.0.1:{}", a.port());
    let hh = ("Host", host.as_str());
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        assert_eq!(request(a, "GET", path, &[hh], b"").status, 404, "{path}");
    }
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, hh],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 401);
    let www = r.header("www-authenticate").unwrap();
    assert!(www.starts_with("Bearer"), "{www}");
    assert!(!www.contains("resource_metadata"), "{www}");
    let r = request(
        a,
        "POST",
        "/mcp",
        &[ACCEPT_BOTH, JSON_CT, hh, ("Authorization", "Bearer nope")],
        &init_body("2025-06-18"),
    );
    assert_eq!(r.status, 401);
    let www = r.header("www-authenticate").unwrap();
    assert!(www.starts_with("Bearer error=\"invalid_token\""), "{www}");
}
