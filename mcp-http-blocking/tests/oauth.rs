//! The OAuth provider end to end on 127.0.0.1: the crate's own server as the protected resource
//! (its bearer hook, its resource metadata, its 401/403 challenges) and a small authorization
//! server on tiny_http that checks what a real one checks (PKCE S256, the code, `state`
//! echoing, the refresh token) and records every request.
#![cfg(all(feature = "server", feature = "oauth"))]

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use common::form::{encode, parse as parse_form, s256, split_target};
use common::{Ctl, TestService, WAIT, next, req};
use crossbeam_channel::Receiver;
use mcp_core::jsonrpc::Message;
use mcp_core::transport::Incoming;
use mcp_http_blocking::client::{HttpClient, HttpClientConfig};
use mcp_http_blocking::oauth::{
    AuthStore, Credentials, FlowError, Grant, LoopbackRedirect, OAuthConfig, OAuthConfigBuilder,
    OAuthProvider, SavedAuth,
};
use mcp_http_blocking::{AuthConfig, AuthError, Authorizer, HttpConfig, HttpServer, ServerHandle};
use serde_json::{Value, json};

const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// One request the authorization server saw: `METHOD /path` and its parameters.
type Seen = (String, HashMap<String, String>);

#[derive(Default)]
struct AsState {
    seen: Vec<Seen>,
    /// code -> (challenge, scopes)
    codes: HashMap<String, (String, String)>,
    /// refresh token -> scopes
    refresh: HashMap<String, String>,
    issued: u32,
    /// What the authorization response's `iss` is (RFC 9207).
    iss: Iss,
    /// Leave `authorization_response_iss_parameter_supported` out of the metadata.
    iss_unadvertised: bool,
    /// The client id registration hands out (default `dyn-client`).
    client_id: Option<String>,
    /// Take DPoP proofs (ES256) and issue DPoP-bound tokens to requests with one.
    dpop: bool,
    /// The nonce the token endpoint wants in DPoP proofs.
    as_nonce: Option<String>,
    /// Leave `code_challenge_methods_supported` out of the metadata (no PKCE).
    no_pkce: bool,
}

/// The `iss` the mock puts on its authorization responses.
#[derive(Default, Clone, Copy, Debug)]
enum Iss {
    #[default]
    Correct,
    Missing,
    Wrong,
    TrailingSlash,
}

/// Tokens the authorization server issued, with their scopes (what the resource server checks).
type Tokens = Arc<Mutex<HashMap<String, Vec<String>>>>;

struct MockAs {
    url: String,
    server: Arc<tiny_http::Server>,
    state: Arc<Mutex<AsState>>,
    thread: Option<JoinHandle<()>>,
}

impl MockAs {
    fn start(tokens: Tokens) -> MockAs {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let state = Arc::new(Mutex::new(AsState::default()));
        let (s, st, base) = (server.clone(), state.clone(), url.clone());
        let thread = std::thread::spawn(move || {
            for mut req in s.incoming_requests() {
                let mut body = String::new();
                let _ = req.as_reader().read_to_string(&mut body);
                let (status, header, answer) = handle(&base, &st, &tokens, &req, &body);
                let mut resp = tiny_http::Response::from_string(answer.to_string())
                    .with_status_code(status)
                    .with_header(
                        tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap(),
                    );
                if let Some((name, value)) = header {
                    resp = resp.with_header(tiny_http::Header::from_bytes(name, value).unwrap());
                }
                let _ = req.respond(resp);
            }
        });
        MockAs {
            url,
            server,
            state,
            thread: Some(thread),
        }
    }

    fn seen(&self, what: &str) -> Vec<HashMap<String, String>> {
        let st = self.state.lock().unwrap();
        st.seen
            .iter()
            .filter(|(w, _)| w == what)
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// The `grant_type` of each token request, in order.
    fn grants(&self) -> Vec<String> {
        self.seen("POST /token")
            .iter()
            .map(|p| p["grant_type"].clone())
            .collect()
    }

    fn requests(&self) -> usize {
        self.state.lock().unwrap().seen.len()
    }
}

impl Drop for MockAs {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn handle(
    base: &str,
    st: &Mutex<AsState>,
    tokens: &Tokens,
    req: &tiny_http::Request,
    body: &str,
) -> (u16, Option<(&'static str, String)>, Value) {
    let (path, query) = split_target(req.url());
    let what = format!("{} {}", req.method(), path);
    let mut params: HashMap<String, String> = match req.method() {
        tiny_http::Method::Post if body.starts_with('{') => {
            let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
            v.as_object()
                .map(|o| o.iter().map(|(k, v)| (k.clone(), v.to_string())).collect())
                .unwrap_or_default()
        }
        tiny_http::Method::Post => parse_form(body).into_iter().collect(),
        _ => query
            .map(|q| parse_form(q).into_iter().collect())
            .unwrap_or_default(),
    };
    if let Some(h) = req
        .headers()
        .iter()
        .find(|h| h.field.equiv("Authorization"))
    {
        params.insert("authorization".into(), h.value.to_string());
    }
    if let Some(h) = req.headers().iter().find(|h| h.field.equiv("DPoP")) {
        params.insert("dpop".into(), h.value.to_string());
    }
    if let Some(h) = req
        .headers()
        .iter()
        .find(|h| h.field.equiv("MCP-Protocol-Version"))
    {
        params.insert("mcp-protocol-version".into(), h.value.to_string());
    }
    let mut s = st.lock().unwrap();
    s.seen.push((what.clone(), params.clone()));
    let p = |k: &str| params.get(k).cloned().unwrap_or_default();
    match what.as_str() {
        "GET /.well-known/oauth-authorization-server" => (
            200,
            None,
            without_pkce(
                s.no_pkce,
                with_dpop(
                    s.dpop,
                    with_iss_support(
                        !s.iss_unadvertised,
                        json!({
                            "issuer": base,
                            "authorization_endpoint": format!("{base}/authorize"),
                            "token_endpoint": format!("{base}/token"),
                            "registration_endpoint": format!("{base}/register"),
                            "response_types_supported": ["code"],
                            "code_challenge_methods_supported": ["S256"],
                            "token_endpoint_auth_methods_supported": ["none"],
                            "scopes_supported": ["mcp:read", "mcp:write", "offline_access"],
                        }),
                    ),
                ),
            ),
        ),
        "POST /register" => (
            201,
            None,
            json!({"client_id": s.client_id.as_deref().unwrap_or("dyn-client"),
                   "token_endpoint_auth_method": "none"}),
        ),
        "GET /authorize" => {
            s.issued += 1;
            let code = format!("code-{}", s.issued);
            s.codes
                .insert(code.clone(), (p("code_challenge"), p("scope")));
            let iss = match s.iss {
                Iss::Correct => format!("&iss={}", encode(base)),
                Iss::Missing => String::new(),
                Iss::Wrong => "&iss=https%3A%2F%2Fevil.example.com".into(),
                Iss::TrailingSlash => format!("&iss={}", encode(&format!("{base}/"))),
            };
            let location = format!(
                "{}?code={code}&state={}{iss}",
                p("redirect_uri"),
                p("state")
            );
            (302, Some(("Location", location)), json!({}))
        }
        "POST /token" => {
            let proof = params.get("dpop").map(|p| proof_claims(p));
            if let (Some(want), Some(claims)) = (&s.as_nonce, &proof) {
                if claims["nonce"].as_str() != Some(want.as_str()) {
                    return (
                        400,
                        Some(("DPoP-Nonce", want.clone())),
                        json!({"error": "use_dpop_nonce"}),
                    );
                }
            }
            let kind = if s.dpop && proof.is_some() {
                "DPoP"
            } else {
                "Bearer"
            };
            let scopes = match p("grant_type").as_str() {
                "authorization_code" => match s.codes.remove(&p("code")) {
                    Some((challenge, scopes)) if s256(&p("code_verifier")) == challenge => scopes,
                    _ => return (400, None, json!({"error": "invalid_grant"})),
                },
                "refresh_token" => match s.refresh.get(&p("refresh_token")) {
                    Some(scopes) => scopes.clone(),
                    None => return (400, None, json!({"error": "invalid_grant"})),
                },
                "urn:ietf:params:oauth:grant-type:jwt-bearer" if p("assertion") == "good-jwt" => {
                    p("scope")
                }
                "urn:ietf:params:oauth:grant-type:jwt-bearer" => {
                    return (400, None, json!({"error": "invalid_grant"}));
                }
                _ => return (400, None, json!({"error": "unsupported_grant_type"})),
            };
            // This server never grants mcp:admin.
            let scopes = scopes
                .split_whitespace()
                .filter(|s| *s != "mcp:admin")
                .collect::<Vec<_>>()
                .join(" ");
            s.issued += 1;
            let access = format!("tok-{}", s.issued);
            let refresh = format!("rt-{}", s.issued);
            s.refresh.insert(refresh.clone(), scopes.clone());
            tokens.lock().unwrap().insert(
                access.clone(),
                scopes.split_whitespace().map(str::to_owned).collect(),
            );
            (
                200,
                None,
                json!({"access_token": access, "token_type": kind, "expires_in": 3600,
                       "refresh_token": refresh, "scope": scopes}),
            )
        }
        _ => (404, None, json!({"error": "not_found"})),
    }
}

fn without_pkce(on: bool, mut meta: Value) -> Value {
    if on {
        meta.as_object_mut()
            .unwrap()
            .remove("code_challenge_methods_supported");
    }
    meta
}

fn with_dpop(on: bool, mut meta: Value) -> Value {
    if on {
        meta["dpop_signing_alg_values_supported"] = json!(["ES256"]);
    }
    meta
}

/// The claims of a DPoP proof, after checking its header and its ES256 signature under the
/// JWK it carries (with p256, as a resource server would).
fn proof_claims(proof: &str) -> Value {
    let parts: Vec<&str> = proof.split('.').collect();
    assert_eq!(parts.len(), 3, "{proof}");
    let header: Value = serde_json::from_slice(&b64url(parts[0])).unwrap();
    assert_eq!(header["typ"], "dpop+jwt");
    assert_eq!(header["alg"], "ES256");
    assert!(header["jwk"].get("d").is_none());
    #[cfg(feature = "oauth-jwt")]
    {
        use p256::ecdsa::signature::Verifier;
        let mut sec1 = vec![4u8];
        sec1.extend(b64url(header["jwk"]["x"].as_str().unwrap()));
        sec1.extend(b64url(header["jwk"]["y"].as_str().unwrap()));
        let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(&sec1).unwrap();
        let sig = p256::ecdsa::Signature::from_slice(&b64url(parts[2])).unwrap();
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(
            key.verify(input.as_bytes(), &sig).is_ok(),
            "a valid signature"
        );
    }
    let mut claims: Value = serde_json::from_slice(&b64url(parts[1])).unwrap();
    claims["jwk"] = header["jwk"].clone();
    claims
}

fn b64url(s: &str) -> Vec<u8> {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let (mut bits, mut n, mut out) = (0u32, 0, Vec::new());
    for c in s.bytes() {
        let v = ABC.iter().position(|&a| a == c).expect("base64url") as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
            bits &= (1 << n) - 1;
        }
    }
    out
}

fn with_iss_support(on: bool, mut meta: Value) -> Value {
    if on {
        meta["authorization_response_iss_parameter_supported"] = json!(true);
    }
    meta
}

/// The resource server's token check: issued, not revoked, with the scopes required now.
struct Rs {
    tokens: Tokens,
    required: Mutex<Vec<String>>,
    /// Every bearer token presented.
    presented: Mutex<Vec<String>>,
}

impl Authorizer for Rs {
    fn authorize(&self, token: &str, _resource: &str) -> Result<Value, AuthError> {
        self.presented.lock().unwrap().push(token.to_owned());
        let tokens = self.tokens.lock().unwrap();
        let scopes = tokens
            .get(token)
            .ok_or_else(|| AuthError::Invalid("unknown or revoked token".into()))?;
        let required = self.required.lock().unwrap().clone();
        if required.iter().all(|r| scopes.contains(r)) {
            Ok(json!({"scopes": scopes}))
        } else {
            Err(AuthError::InsufficientScope {
                scope: required.join(" "),
            })
        }
    }
}

struct Setup {
    as_: MockAs,
    rs: Arc<Rs>,
    server: ServerHandle,
}

fn setup() -> Setup {
    let tokens: Tokens = Arc::default();
    let as_ = MockAs::start(tokens.clone());
    let rs = Arc::new(Rs {
        tokens,
        required: Mutex::new(vec!["mcp:read".into()]),
        presented: Mutex::default(),
    });
    let server = HttpServer::builder()
        .bind("127.0.0.1:0")
        .config(
            HttpConfig::builder()
                .auth(
                    AuthConfig::builder(rs.clone())
                        .authorization_servers(vec![as_.url.clone()])
                        .scopes(["mcp:read"])
                        .build(),
                )
                .build(),
        )
        .io_timeout(Duration::from_secs(5))
        .build(TestService(Ctl::new()))
        .unwrap()
        .spawn()
        .unwrap();
    Setup { as_, rs, server }
}

fn endpoint(h: &ServerHandle) -> String {
    format!("http://{}/mcp", h.local_addr())
}

fn connect(url: &str, cfg: OAuthConfig) -> HttpClient {
    let auth = Arc::new(OAuthProvider::new(cfg));
    HttpClient::connect(url, HttpClientConfig::builder().auth(auth).build()).unwrap()
}

fn headless() -> OAuthConfig {
    headless_builder().build()
}

fn headless_builder() -> OAuthConfigBuilder {
    OAuthConfig::authorization_code(REDIRECT, OAuthProvider::headless_browser(WAIT))
}

/// The next event, which must be a request that failed without an answer (authorization
/// gave up), whose reason is the OAuth flow's typed error and passes `check`; its text.
fn failed_with(rx: &Receiver<Incoming>, check: impl FnOnce(&FlowError) -> bool) -> String {
    match rx.recv_timeout(WAIT).expect("an event in time") {
        Incoming::Failed { error, .. } => match error.downcast_ref() {
            Some(mcp_http_blocking::Error::Unauthorized { source, .. }) => {
                let flow = std::error::Error::source(source)
                    .and_then(|e| e.downcast_ref::<FlowError>())
                    .unwrap_or_else(|| panic!("not a FlowError: {source:?}"));
                assert!(check(flow), "{flow:?}");
                source.to_string()
            }
            _ => panic!("expected a refusal the provider could not help with, got {error:?}"),
        },
        other => panic!("expected a failed exchange, got {other:?}"),
    }
}

fn initialize() -> Message {
    req(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    )
}

fn ok(m: &Message) -> Value {
    match m {
        Message::Response(r) => r.result().unwrap(),
        other => panic!("expected a result, got {other:?}"),
    }
}

#[test]
fn authorization_code_flow_end_to_end() {
    let s = setup();
    let url = endpoint(&s.server);
    let c = connect(&url, headless());
    c.sender().send(initialize()).unwrap();
    assert_eq!(ok(&next(&c.receiver()))["protocolVersion"], "2025-11-25");

    // Discovery says which revision it is for (issue 20): the one `initialize` asks for.
    let meta = s.as_.seen("GET /.well-known/oauth-authorization-server");
    assert!(!meta.is_empty(), "the metadata was fetched");
    for m in &meta {
        assert_eq!(
            m.get("mcp-protocol-version").map(String::as_str),
            Some("2025-11-25"),
            "{m:?}"
        );
    }
    let reg = s.as_.seen("POST /register");
    assert_eq!(reg.len(), 1, "one dynamic registration");
    assert!(reg[0]["redirect_uris"].contains(REDIRECT));
    // SEP-837: a loopback redirect is a native application.
    assert_eq!(reg[0]["application_type"], "\"native\"");
    assert!(reg[0]["grant_types"].contains("refresh_token"));
    let auth = s.as_.seen("GET /authorize");
    assert_eq!(auth.len(), 1);
    let a = &auth[0];
    assert_eq!(a["client_id"], "dyn-client");
    assert_eq!(a["code_challenge_method"], "S256");
    assert_eq!(a["resource"], url, "RFC 8707 resource is the server URL");
    // The challenge's scope, plus offline_access because the server lists it.
    assert_eq!(a["scope"], "mcp:read offline_access");
    let tok = s.as_.seen("POST /token");
    assert_eq!(tok.len(), 1);
    assert_eq!(tok[0]["resource"], url);
    assert_eq!(tok[0]["client_id"], "dyn-client");
    assert!(!tok[0].contains_key("authorization"), "a public client");

    // The token is reused: no more traffic to the authorization server.
    let before = s.as_.requests();
    c.sender().send(req(2, "ping", json!({}))).unwrap();
    ok(&next(&c.receiver()));
    assert_eq!(s.as_.requests(), before);
}

#[test]
fn step_up_on_insufficient_scope_then_refresh_on_revocation() {
    let s = setup();
    let c = connect(&endpoint(&s.server), headless());
    c.sender().send(initialize()).unwrap();
    ok(&next(&c.receiver()));

    *s.rs.required.lock().unwrap() = vec!["mcp:read".into(), "mcp:write".into()];
    c.sender().send(req(2, "ping", json!({}))).unwrap();
    ok(&next(&c.receiver()));
    let auth = s.as_.seen("GET /authorize");
    assert_eq!(auth.len(), 2, "a second authorization for the step-up");
    let scopes: Vec<&str> = auth[1]["scope"].split(' ').collect();
    for want in ["mcp:read", "mcp:write", "offline_access"] {
        assert!(scopes.contains(&want), "{want} in {scopes:?}");
    }
    assert_eq!(s.as_.seen("POST /register").len(), 1, "registered once");

    // Revoke every token: the next request gets 401 and the refresh token answers it.
    s.rs.tokens.lock().unwrap().clear();
    c.sender().send(req(3, "ping", json!({}))).unwrap();
    ok(&next(&c.receiver()));
    let grants = s.as_.grants();
    assert_eq!(
        grants,
        ["authorization_code", "authorization_code", "refresh_token"]
    );
    assert_eq!(s.as_.seen("GET /authorize").len(), 2, "no new sign-in");
}

#[test]
fn step_ups_are_bounded() {
    let s = setup();
    let c = connect(&endpoint(&s.server), headless());
    c.sender().send(initialize()).unwrap();
    ok(&next(&c.receiver()));
    // The resource wants a scope its authorization server never grants: the client tries a
    // bounded number of step-ups, then the request fails instead of looping.
    *s.rs.required.lock().unwrap() = vec!["mcp:read".into(), "mcp:admin".into()];
    c.sender().send(req(2, "ping", json!({}))).unwrap();
    // The provider gives up (a failed exchange), or the last 403 comes back as an error.
    match c.receiver().recv_timeout(WAIT).expect("an event in time") {
        Incoming::Failed { .. } | Incoming::Message(Message::Error(_)) => {}
        other => panic!("expected a failure, got {other:?}"),
    }
    let attempts = s.as_.seen("GET /authorize").len();
    assert!((2..=3).contains(&attempts), "{attempts} authorizations");
}

#[test]
fn the_hosts_browser_error_comes_back_as_the_source() {
    let s = setup();
    let no_browser: mcp_http_blocking::oauth::Browser = Arc::new(|_: &str| {
        Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no browser here").into())
    });
    let c = connect(
        &endpoint(&s.server),
        OAuthConfig::authorization_code(REDIRECT, no_browser).build(),
    );
    c.sender().send(initialize()).unwrap();
    let error = match c.receiver().recv_timeout(WAIT).expect("an event in time") {
        Incoming::Failed { error, .. } => error,
        other => panic!("expected a failed exchange, got {other:?}"),
    };
    // Error::Unauthorized -> AuthError::Failed -> FlowError::Host -> the host's io::Error.
    let auth = std::error::Error::source(error.as_ref()).expect("the AuthError");
    let flow = auth.source().expect("the flow's error");
    assert!(
        matches!(flow.downcast_ref(), Some(FlowError::Host(_))),
        "{flow:?}"
    );
    let host = flow.source().expect("the host's error");
    let io = host.downcast_ref::<std::io::Error>().expect("an io::Error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert!(s.as_.seen("POST /token").is_empty(), "nothing redeemed");
}

#[test]
fn a_redirect_with_another_state_is_refused() {
    let s = setup();
    let inner = OAuthProvider::headless_browser(WAIT);
    let tamper: mcp_http_blocking::oauth::Browser = Arc::new(move |u: &str| {
        let back = inner(u)?;
        let cut = back.find("&state=").unwrap_or(back.len());
        Ok(format!("{}&state=forged", &back[..cut]))
    });
    let c = connect(
        &endpoint(&s.server),
        OAuthConfig::authorization_code(REDIRECT, tamper).build(),
    );
    c.sender().send(initialize()).unwrap();
    let why = failed_with(&c.receiver(), |e| matches!(e, FlowError::StateMismatch));
    assert!(why.contains("state"), "{why}");
    assert!(
        s.as_.seen("POST /token").is_empty(),
        "the code was not redeemed"
    );
}

/// A store in memory, shared by the "runs" of a test.
#[derive(Default)]
struct MemStore(Mutex<Option<SavedAuth>>);

impl AuthStore for MemStore {
    fn load(&self) -> Option<SavedAuth> {
        self.0.lock().unwrap().clone()
    }
    fn save(&self, saved: &SavedAuth) {
        *self.0.lock().unwrap() = Some(saved.clone());
    }
}

/// One run of a host: a provider on `store`, initialize, one ping.
fn run_with(url: &str, store: &Arc<MemStore>) {
    let c = connect(url, headless_builder().store(store.clone()).build());
    c.sender().send(initialize()).unwrap();
    ok(&next(&c.receiver()));
    c.sender().send(req(2, "ping", json!({}))).unwrap();
    ok(&next(&c.receiver()));
}

/// A first run of a host with a store: the server, its URL, the store and what it saved.
fn first_run() -> (Setup, String, Arc<MemStore>, SavedAuth) {
    let s = setup();
    let url = endpoint(&s.server);
    let store = Arc::new(MemStore::default());
    run_with(&url, &store);
    let saved = store.load().expect("the sign-in was saved");
    (s, url, store, saved)
}

#[test]
fn the_next_run_uses_the_saved_sign_in() {
    let (s, url, store, saved) = first_run();
    assert_eq!(saved.resource, url);
    assert_eq!(saved.client_id, "dyn-client");
    assert_eq!(saved.auth_method, "none");
    assert!(saved.refresh_token.is_some() && saved.expires_at.is_some());
    assert_eq!(s.as_.seen("GET /authorize").len(), 1);

    // A second run: no sign-in, no registration, no token request; the saved token is sent
    // only after discovery showed it belongs here.
    let before = s.as_.seen("POST /token").len();
    run_with(&url, &store);
    assert_eq!(s.as_.seen("GET /authorize").len(), 1, "no new sign-in");
    assert_eq!(s.as_.seen("POST /register").len(), 1, "no new registration");
    assert_eq!(
        s.as_.seen("POST /token").len(),
        before,
        "the saved token is still good"
    );
    let presented = s.rs.presented.lock().unwrap();
    assert!(
        presented
            .iter()
            .filter(|t| **t == saved.access_token)
            .count()
            >= 3
    );
}

#[test]
fn a_revoked_saved_token_is_refreshed_with_the_saved_client_and_saved_again() {
    let (s, url, store, first) = first_run();
    s.rs.tokens.lock().unwrap().clear();

    run_with(&url, &store);
    let grants = s.as_.grants();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    let refresh = &s.as_.seen("POST /token")[1];
    assert_eq!(refresh["client_id"], "dyn-client", "the saved client id");
    assert_eq!(
        Some(&refresh["refresh_token"]),
        first.refresh_token.as_ref()
    );
    assert_eq!(s.as_.seen("GET /authorize").len(), 1, "no new sign-in");
    assert_eq!(s.as_.seen("POST /register").len(), 1, "no new registration");
    let second = store.load().unwrap();
    assert_ne!(
        second.access_token, first.access_token,
        "the new token was saved"
    );
}

#[test]
fn a_sign_in_saved_for_another_server_is_never_sent_here() {
    let s = setup();
    let url = endpoint(&s.server);
    let store = Arc::new(MemStore::default());
    store.save(&SavedAuth {
        resource: "https://elsewhere.example/mcp".into(),
        token_endpoint: format!("{}/token", s.as_.url),
        client_id: "other-client".into(),
        client_secret: None,
        auth_method: "none".into(),
        access_token: "foreign-token".into(),
        refresh_token: Some("foreign-refresh".into()),
        scopes: vec!["mcp:read".into()],
        expires_at: None,
    });
    run_with(&url, &store);
    assert!(
        !s.rs
            .presented
            .lock()
            .unwrap()
            .iter()
            .any(|t| t == "foreign-token"),
        "the foreign token reached this server"
    );
    let tok = s.as_.seen("POST /token");
    assert!(tok.iter().all(|p| p.get("refresh_token").is_none()));
    assert_eq!(
        s.as_.seen("GET /authorize").len(),
        1,
        "a sign-in of its own"
    );
    assert_eq!(
        store.load().unwrap().resource,
        url,
        "replaced by this server's"
    );
}

/// A browser in another process, as far as the provider can tell: follows the authorization
/// server's redirect to the loopback listener on a thread of its own.
fn browser_process(url: &str) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let location = OAuthProvider::headless_browser(WAIT)(url)?;
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        let rest = location.strip_prefix("http://").unwrap();
        let (host, target) = rest.split_at(rest.find('/').unwrap());
        let mut s = std::net::TcpStream::connect(host).unwrap();
        write!(s, "GET {target} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
        let mut page = String::new();
        let _ = s.read_to_string(&mut page);
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    });
    Ok(())
}

#[test]
fn a_sign_in_through_the_loopback_redirect_listener() {
    let s = setup();
    let redirect = LoopbackRedirect::bind().unwrap();
    let cfg = OAuthConfig::authorization_code(
        redirect.redirect_uri(),
        redirect.browser(WAIT, browser_process),
    )
    .build();
    let c = connect(&endpoint(&s.server), cfg);
    c.sender().send(initialize()).unwrap();
    ok(&next(&c.receiver()));
    let reg = s.as_.seen("POST /register");
    assert!(reg[0]["redirect_uris"].contains(redirect.redirect_uri()));
    let tok = s.as_.seen("POST /token");
    assert_eq!(tok.len(), 1);
    assert_eq!(tok[0]["redirect_uri"], redirect.redirect_uri());
}

/// RFC 9207 (SEP-2468): the authorization response's `iss` is compared exactly with the
/// metadata's issuer; on a mismatch, or when it is missing though promised, the code never
/// reaches the token endpoint.
#[test]
fn the_authorization_response_iss_is_checked() {
    for (iss, unadvertised, accepted) in [
        (Iss::Correct, false, true),
        (Iss::Missing, true, true),
        (Iss::Missing, false, false),
        (Iss::Wrong, false, false),
        (Iss::Wrong, true, false),
        (Iss::TrailingSlash, false, false),
    ] {
        let s = setup();
        {
            let mut st = s.as_.state.lock().unwrap();
            st.iss = iss;
            st.iss_unadvertised = unadvertised;
        }
        let c = connect(&endpoint(&s.server), headless());
        c.sender().send(initialize()).unwrap();
        let case = format!("{iss:?}, unadvertised: {unadvertised}");
        if accepted {
            ok(&next(&c.receiver()));
            assert_eq!(s.as_.seen("POST /token").len(), 1, "{case}");
        } else {
            failed_with(&c.receiver(), |e| {
                matches!(e, FlowError::IssuerMismatch { .. })
            });
            assert_eq!(s.as_.seen("GET /authorize").len(), 1, "{case}");
            assert!(s.as_.seen("POST /token").is_empty(), "{case}");
        }
    }
}

/// What the mock resource server holds: which authorization server its metadata names, the
/// tokens it takes, and every authorization it was shown.
struct RsState {
    auth_server: String,
    tokens: Tokens,
    /// After the first request it lets through: the authorization server (and its tokens) to
    /// move to, as a resource whose authorization server was replaced would.
    move_to: Option<(String, Tokens)>,
    /// `(Authorization, DPoP)` headers of every POST.
    seen: Vec<(Option<String>, Option<String>)>,
    /// Take DPoP-bound tokens (the `DPoP` scheme with a proof) instead of bearer ones.
    dpop: bool,
    /// The nonce it wants in DPoP proofs.
    rs_nonce: Option<String>,
    /// The status its resource metadata is answered with (200: the document).
    metadata_status: u16,
}

/// A small MCP resource server on tiny_http (the crate's own server cannot change its
/// authorization server while running): resource metadata at the path-based well-known URL,
/// `Bearer` challenges, and a JSON answer to every request it lets through.
struct MockRs {
    url: String,
    server: Arc<tiny_http::Server>,
    state: Arc<Mutex<RsState>>,
    thread: Option<JoinHandle<()>>,
}

impl MockRs {
    fn start(auth_server: &str, tokens: Tokens) -> MockRs {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let base = format!("http://{}", server.server_addr().to_ip().unwrap());
        let url = format!("{base}/mcp");
        let state = Arc::new(Mutex::new(RsState {
            auth_server: auth_server.to_owned(),
            tokens,
            move_to: None,
            seen: Vec::new(),
            dpop: false,
            rs_nonce: None,
            metadata_status: 200,
        }));
        let (s, st, mcp) = (server.clone(), state.clone(), url.clone());
        let thread = std::thread::spawn(move || {
            for mut req in s.incoming_requests() {
                let mut body = String::new();
                let _ = req.as_reader().read_to_string(&mut body);
                let header = |name: &'static str| {
                    req.headers()
                        .iter()
                        .find(|h| h.field.equiv(name))
                        .map(|h| h.value.to_string())
                };
                let (status, headers, answer) = rs_handle(
                    &mcp,
                    &st,
                    req.method(),
                    req.url(),
                    header("Authorization"),
                    header("DPoP"),
                    &body,
                );
                let mut resp = tiny_http::Response::from_string(answer.to_string())
                    .with_status_code(status)
                    .with_header(
                        tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap(),
                    );
                for (n, v) in headers {
                    resp = resp.with_header(tiny_http::Header::from_bytes(n, v).unwrap());
                }
                let _ = req.respond(resp);
            }
        });
        MockRs {
            url,
            server,
            state,
            thread: Some(thread),
        }
    }
}

impl Drop for MockRs {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn rs_handle(
    mcp: &str,
    st: &Mutex<RsState>,
    method: &tiny_http::Method,
    path: &str,
    authorization: Option<String>,
    dpop: Option<String>,
    body: &str,
) -> (u16, Vec<(&'static str, String)>, Value) {
    let metadata = mcp.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    let mut s = st.lock().unwrap();
    match (method, path) {
        (tiny_http::Method::Get, "/.well-known/oauth-protected-resource/mcp") => {
            if s.metadata_status != 200 {
                return (s.metadata_status, vec![], json!({}));
            }
            return (
                200,
                vec![],
                json!({"resource": mcp, "authorization_servers": [s.auth_server],
                       "scopes_supported": ["mcp:read"]}),
            );
        }
        (tiny_http::Method::Post, "/mcp") => {}
        _ => return (405, vec![], json!({})),
    }
    s.seen.push((authorization.clone(), dpop.clone()));
    let scheme = if s.dpop { "DPoP" } else { "Bearer" };
    let token = authorization
        .as_deref()
        .and_then(|a| a.strip_prefix(scheme))
        .and_then(|a| a.strip_prefix(' '));
    let proved = !s.dpop || dpop.is_some();
    let valid = proved && token.is_some_and(|t| s.tokens.lock().unwrap().contains_key(t));
    if valid && s.dpop {
        let claims = proof_claims(dpop.as_deref().unwrap_or_default());
        if let Some(want) = &s.rs_nonce {
            if claims["nonce"].as_str() != Some(want.as_str()) {
                return (
                    401,
                    vec![
                        (
                            "WWW-Authenticate",
                            format!(
                                "DPoP error=\"use_dpop_nonce\", resource_metadata=\"{metadata}\""
                            ),
                        ),
                        ("DPoP-Nonce", want.clone()),
                    ],
                    json!({"error": "use_dpop_nonce"}),
                );
            }
        }
    }
    if !valid {
        let mut challenge = format!("{scheme} resource_metadata=\"{metadata}\"");
        if token.is_some() {
            challenge.push_str(", error=\"invalid_token\"");
        }
        return (
            401,
            vec![("WWW-Authenticate", challenge)],
            json!({"error": "invalid_token"}),
        );
    }
    if let Some((to, tokens)) = s.move_to.take() {
        s.auth_server = to;
        s.tokens = tokens;
    }
    let msg: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let Some(id) = msg.get("id") else {
        return (202, vec![], json!({}));
    };
    let result = if msg["method"] == "initialize" {
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "serverInfo": {"name": "mock", "version": "1"}})
    } else {
        json!({})
    };
    (
        200,
        vec![],
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

/// SEP-2352: when the resource's metadata names another authorization server, the client
/// discovers it, registers there and signs in there; the first server's client id and
/// tokens never go to the second.
#[test]
fn a_new_authorization_server_gets_a_new_registration() {
    let (tokens1, tokens2): (Tokens, Tokens) = (Arc::default(), Arc::default());
    let as1 = MockAs::start(tokens1.clone());
    let as2 = MockAs::start(tokens2.clone());
    as1.state.lock().unwrap().client_id = Some("as1-client".into());
    as2.state.lock().unwrap().client_id = Some("as2-client".into());
    let rs = MockRs::start(&as1.url, tokens1);
    rs.state.lock().unwrap().move_to = Some((as2.url.clone(), tokens2.clone()));
    let c = connect(&rs.url, headless());
    c.sender().send(initialize()).unwrap();
    ok(&next(&c.receiver()));
    // The AS1 token is refused now: the client finds AS2 in the metadata.
    c.sender().send(req(2, "ping", json!({}))).unwrap();
    ok(&next(&c.receiver()));

    assert_eq!(as1.seen("POST /register").len(), 1);
    assert_eq!(as2.seen("POST /register").len(), 1, "registered at AS2");
    let at_as2: Vec<_> = as2
        .seen("GET /authorize")
        .into_iter()
        .chain(as2.seen("POST /token"))
        .collect();
    assert!(!at_as2.is_empty());
    for p in &at_as2 {
        assert_eq!(p["client_id"], "as2-client", "{p:?}");
    }
    assert_eq!(
        as2.grants(),
        ["authorization_code"],
        "no AS1 refresh token at AS2"
    );
    assert_eq!(
        as1.grants(),
        ["authorization_code"],
        "no refresh at the old AS"
    );
    let seen = rs.state.lock().unwrap().seen.clone();
    let last = seen.last().and_then(|(a, _)| a.clone()).unwrap();
    assert!(
        tokens2
            .lock()
            .unwrap()
            .contains_key(last.trim_start_matches("Bearer ")),
        "the last request carried an AS2 token"
    );
}

/// Pre-registered credentials belong to one authorization server: when the resource's
/// metadata names another (a move, or a server steering the client to an attacker's), the
/// credentials are never shown to it; the request fails with the issuers named. Credentials
/// that name their issuer are held to it from the first sign-in on.
#[test]
fn pre_registered_credentials_go_to_their_authorization_server_only() {
    let (tokens1, tokens2): (Tokens, Tokens) = (Arc::default(), Arc::default());
    let as1 = MockAs::start(tokens1.clone());
    let as2 = MockAs::start(tokens2.clone());
    let rs = MockRs::start(&as1.url, tokens1);
    rs.state.lock().unwrap().move_to = Some((as2.url.clone(), tokens2.clone()));
    let c = connect(&rs.url, jwt_bearer("good-jwt"));
    c.sender().send(initialize()).unwrap();
    ok(&next(&c.receiver()));
    assert_eq!(as1.grants().len(), 1);
    // The AS1 token is refused now and the metadata names AS2: refused, AS2 untouched.
    c.sender().send(req(2, "ping", json!({}))).unwrap();
    let why = failed_with(&c.receiver(), |e| {
        matches!(e, FlowError::IssuerMismatch { expected, got: Some(got) }
            if *expected == as1.url && *got == as2.url)
    });
    assert!(why.contains(&as2.url), "{why}");
    assert!(as2.seen("POST /token").is_empty(), "nothing sent to AS2");
    assert!(as2.seen("POST /register").is_empty());

    // Credentials that name AS2 are never sent to AS1, not even first.
    let (tokens3, tokens4): (Tokens, Tokens) = (Arc::default(), Arc::default());
    let as3 = MockAs::start(tokens3.clone());
    let as4 = MockAs::start(tokens4);
    let rs = MockRs::start(&as3.url, tokens3);
    let cfg = OAuthConfig::builder(Grant::JwtBearer(Arc::new(|| Ok("good-jwt".to_owned()))))
        .credentials(
            Credentials::builder("workload")
                .issuer(as4.url.clone())
                .build(),
        )
        .build();
    let c = connect(&rs.url, cfg);
    c.sender().send(initialize()).unwrap();
    failed_with(&c.receiver(), |e| {
        matches!(e, FlowError::IssuerMismatch { .. })
    });
    assert!(as3.seen("POST /token").is_empty(), "nothing sent to AS3");
}

/// A resource whose metadata cannot be fetched (5xx) is not taken for a 2025-03-26 server
/// (whose authorization server would be its own origin): the sign-in fails with the status,
/// and nothing goes anywhere else.
#[test]
fn resource_metadata_that_fails_is_no_fallback_to_2025_03_26() {
    let tokens: Tokens = Arc::default();
    let as_ = MockAs::start(tokens.clone());
    let rs = MockRs::start(&as_.url, tokens);
    rs.state.lock().unwrap().metadata_status = 503;
    let c = connect(&rs.url, jwt_bearer("good-jwt"));
    c.sender().send(initialize()).unwrap();
    failed_with(&c.receiver(), |e| {
        matches!(e, FlowError::Status { status: 503, .. })
    });
    assert!(as_.seen("POST /token").is_empty());
}

/// An authorization server without PKCE (S256) is refused before anything is sent to it: no
/// client is registered there for nothing.
#[test]
fn no_pkce_is_refused_before_registering() {
    let s = setup();
    s.as_.state.lock().unwrap().no_pkce = true;
    let c = connect(&endpoint(&s.server), headless());
    c.sender().send(initialize()).unwrap();
    failed_with(&c.receiver(), |e| matches!(e, FlowError::Unsupported(_)));
    assert!(s.as_.seen("POST /register").is_empty());
    assert!(s.as_.seen("GET /authorize").is_empty());
}

fn jwt_bearer(assertion: &'static str) -> OAuthConfig {
    OAuthConfig::builder(Grant::JwtBearer(Arc::new(move || Ok(assertion.to_owned()))))
        .credentials(Credentials::builder("workload").build())
        .build()
}

/// Workload identity federation (SEP-1933): the host's JWT goes to the token endpoint as an
/// RFC 7523 JWT bearer grant, with no browser and no registration; a refused JWT fails the
/// request after that one token request (no retry, no other grant).
#[test]
fn the_jwt_bearer_grant_with_the_hosts_assertion() {
    let s = setup();
    let c = connect(&endpoint(&s.server), jwt_bearer("good-jwt"));
    c.sender().send(initialize()).unwrap();
    ok(&next(&c.receiver()));
    let tok = s.as_.seen("POST /token");
    assert_eq!(tok.len(), 1);
    assert_eq!(
        tok[0]["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(tok[0]["assertion"], "good-jwt");
    assert_eq!(tok[0]["client_id"], "workload");
    assert_eq!(tok[0]["scope"], "mcp:read");
    assert!(s.as_.seen("POST /register").is_empty());
    assert!(s.as_.seen("GET /authorize").is_empty());

    let s = setup();
    let c = connect(&endpoint(&s.server), jwt_bearer("expired-jwt"));
    c.sender().send(initialize()).unwrap();
    failed_with(&c.receiver(), |e| e.oauth_error() == Some("invalid_grant"));
    assert_eq!(s.as_.grants().len(), 1, "no retry");
    assert!(s.as_.seen("GET /authorize").is_empty(), "no other grant");
}

/// DPoP (RFC 9449, SEP-1932): with an authorization server that takes ES256 proofs, the
/// token request carries a proof (again with the server's nonce when it asks for one), the
/// token is a DPoP one, and every request to the resource carries `Authorization: DPoP` with
/// a fresh proof for its method and URL, bound to the token by `ath`, with the resource's
/// nonce once it asked.
#[cfg(feature = "oauth-jwt")]
#[test]
fn dpop_bound_tokens_with_proofs_and_nonces() {
    let tokens: Tokens = Arc::default();
    let as_ = MockAs::start(tokens.clone());
    {
        let mut st = as_.state.lock().unwrap();
        st.dpop = true;
        st.as_nonce = Some("as-nonce".into());
    }
    let rs = MockRs::start(&as_.url, tokens);
    {
        let mut st = rs.state.lock().unwrap();
        st.dpop = true;
        st.rs_nonce = Some("rs-nonce".into());
    }
    let c = connect(&rs.url, headless());
    c.sender().send(initialize()).unwrap();
    ok(&next(&c.receiver()));
    c.sender().send(req(2, "ping", json!({}))).unwrap();
    ok(&next(&c.receiver()));

    let at_token = as_.seen("POST /token");
    assert_eq!(at_token.len(), 2, "the token request, again with the nonce");
    let first = proof_claims(&at_token[0]["dpop"]);
    let second = proof_claims(&at_token[1]["dpop"]);
    assert!(first.get("nonce").is_none());
    assert_eq!(second["nonce"], "as-nonce");
    for c in [&first, &second] {
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], format!("{}/token", as_.url));
        assert!(c.get("ath").is_none());
    }
    let key = &second["jwk"];

    let seen = rs.state.lock().unwrap().seen.clone();
    let proved: Vec<_> = seen
        .iter()
        .filter_map(|(a, p)| Some((a.clone()?, proof_claims(p.as_deref()?))))
        .collect();
    assert!(proved.len() >= 3, "{seen:?}");
    let mut jtis = Vec::new();
    for (i, (authorization, claims)) in proved.iter().enumerate() {
        let token = authorization
            .strip_prefix("DPoP ")
            .expect("the DPoP scheme");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], rs.url);
        assert_eq!(&claims["jwk"], key, "the same key as at the token endpoint");
        let ath = s256(token);
        assert_eq!(claims["ath"], ath, "ath is the token's SHA-256");
        // The first proof goes without the resource's nonce; it asks, and every later one has it.
        if i > 0 {
            assert_eq!(claims["nonce"], "rs-nonce");
        }
        jtis.push(claims["jti"].as_str().unwrap().to_owned());
    }
    assert!(proved[0].1.get("nonce").is_none());
    let n = jtis.len();
    jtis.sort();
    jtis.dedup();
    assert_eq!(jtis.len(), n, "a fresh jti for every request");
}
