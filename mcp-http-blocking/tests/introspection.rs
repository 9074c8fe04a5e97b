//! The introspection authorizer in front of the crate's own server, against a small
//! introspection endpoint on tiny_http that knows a few tokens and counts its calls. Real
//! sockets on 127.0.0.1.
#![cfg(all(feature = "server", feature = "oauth"))]

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::form::parse as parse_form;
use common::{Ctl, TestService, init_body, request};
use mcp_http_blocking::oauth::{Introspection, IntrospectionConfig};
use mcp_http_blocking::{AuthConfig, HttpConfig, HttpServer, ServerHandle};
use serde_json::{Value, json};

/// An introspection endpoint: token -> its answer; every call is recorded with its
/// `Authorization` header.
struct Endpoint {
    url: String,
    server: Arc<tiny_http::Server>,
    calls: Arc<AtomicUsize>,
    auth_seen: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    fn start(tokens: HashMap<String, Value>) -> Endpoint {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!(
            "http://{}/introspect",
            server.server_addr().to_ip().unwrap()
        );
        let calls = Arc::new(AtomicUsize::new(0));
        let auth_seen = Arc::new(Mutex::new(Vec::new()));
        let (s, c, a) = (server.clone(), calls.clone(), auth_seen.clone());
        let thread = std::thread::spawn(move || {
            for mut req in s.incoming_requests() {
                c.fetch_add(1, Ordering::SeqCst);
                if let Some(h) = req
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Authorization"))
                {
                    a.lock().unwrap().push(h.value.to_string());
                }
                let mut body = String::new();
                let _ = req.as_reader().read_to_string(&mut body);
                let form: HashMap<String, String> = parse_form(&body).into_iter().collect();
                let answer = form
                    .get("token")
                    .and_then(|t| tokens.get(t))
                    .cloned()
                    .unwrap_or(json!({"active": false}));
                let resp = tiny_http::Response::from_string(answer.to_string()).with_header(
                    tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap(),
                );
                let _ = req.respond(resp);
            }
        });
        Endpoint {
            url,
            server,
            calls,
            auth_seen,
            thread: Some(thread),
        }
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn serve(check: IntrospectionConfig) -> ServerHandle {
    HttpServer::builder()
        .bind("127.0.0.1:0")
        .config(
            HttpConfig::builder()
                .auth(
                    AuthConfig::builder(Arc::new(Introspection::new(check)))
                        .authorization_servers(["http://127.0.0.1:9"])
                        .scopes(["mcp:tools"])
                        .public_url("http://mcp.test")
                        .build(),
                )
                .build(),
        )
        .io_timeout(Duration::from_secs(5))
        .build(TestService(Ctl::new()))
        .unwrap()
        .spawn()
        .unwrap()
}

/// An `initialize` POST with `token`: the HTTP status and the `WWW-Authenticate` header.
fn post(h: &ServerHandle, token: &str) -> (u16, String) {
    let bearer = format!("Bearer {token}");
    let r = request(
        h.local_addr(),
        "POST",
        "/mcp",
        &[
            ("Authorization", bearer.as_str()),
            ("Accept", "application/json, text/event-stream"),
            ("Content-Type", "application/json"),
        ],
        &init_body("2025-11-25"),
    );
    let challenge = r.header("www-authenticate").unwrap_or("").to_owned();
    (r.status, challenge)
}

const RESOURCE: &str = "http://mcp.test/mcp";

fn tokens() -> HashMap<String, Value> {
    let later = now() + 3600;
    [
        ("good", json!({"active": true, "aud": RESOURCE, "scope": "mcp:tools mcp:read", "exp": later, "sub": "alice"})),
        ("listed", json!({"active": true, "aud": ["other", RESOURCE], "scope": "mcp:tools", "exp": later})),
        ("elsewhere", json!({"active": true, "aud": "http://other.test/mcp", "scope": "mcp:tools", "exp": later})),
        ("expired", json!({"active": true, "aud": RESOURCE, "scope": "mcp:tools", "exp": now() - 10})),
        ("narrow", json!({"active": true, "aud": RESOURCE, "scope": "mcp:read", "exp": later})),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

#[test]
fn tokens_are_checked_for_activity_expiry_audience_and_scope() {
    let ep = Endpoint::start(tokens());
    let h = serve(
        IntrospectionConfig::builder(&ep.url)
            .client_id("mcp-server")
            .client_secret("s3cret")
            .required_scopes(["mcp:tools"])
            .build(),
    );
    assert_eq!(post(&h, "good").0, 200);
    assert_eq!(post(&h, "listed").0, 200, "aud as a list");
    for bad in ["unknown", "elsewhere", "expired"] {
        let (status, challenge) = post(&h, bad);
        assert_eq!(status, 401, "{bad}");
        assert!(challenge.contains("invalid_token"), "{bad}: {challenge}");
    }
    let (status, challenge) = post(&h, "narrow");
    assert_eq!(status, 403);
    assert!(challenge.contains("insufficient_scope"), "{challenge}");
    // The resource server authenticated itself at the endpoint.
    let seen = ep.auth_seen.lock().unwrap().clone();
    assert!(!seen.is_empty() && seen.iter().all(|a| a.starts_with("Basic ")));
    h.shutdown();
}

#[test]
fn a_good_answer_is_reused_and_a_bad_one_is_not() {
    let ep = Endpoint::start(tokens());
    let h = serve(IntrospectionConfig::builder(&ep.url).build());
    for _ in 0..5 {
        assert_eq!(post(&h, "good").0, 200);
    }
    assert_eq!(ep.calls(), 1, "one introspection for five requests");
    for _ in 0..3 {
        assert_eq!(post(&h, "unknown").0, 401);
    }
    assert_eq!(ep.calls(), 4, "refusals are asked again");
    h.shutdown();
}

#[test]
fn an_endpoint_that_does_not_answer_is_503_not_401() {
    // A port with nothing listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let h =
        serve(IntrospectionConfig::builder(format!("http://127.0.0.1:{port}/introspect")).build());
    assert_eq!(post(&h, "good").0, 503);
    h.shutdown();
}
