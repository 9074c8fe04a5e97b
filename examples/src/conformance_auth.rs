//! The client side of the MCP conformance suite's `auth/*` scenarios. The suite runs the
//! client with the server URL as the last argument, the scenario in `MCP_CONFORMANCE_SCENARIO`
//! and, for some scenarios, credentials in `MCP_CONFORMANCE_CONTEXT` (a JSON object). Its mock
//! authorization servers approve at once, so the browser step here is a GET that reads the
//! redirect's `Location`.

use std::sync::Arc;
use std::time::Duration;

use mcp_client::oauth::{Credentials, CrossApp, Grant, OAuthConfig, OAuthProvider, PrivateKey};
use mcp_client::{AuthProvider, Client, HttpClientConfig, Revision};
use mcp_core::version::ProtocolVersion;
use serde_json::{Value, json};

/// The client ID metadata document URL the suite expects in `auth/basic-cimd` (it is never
/// fetched by the client; the authorization server would).
pub const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The redirect URI registered by the conformance client (never contacted: the headless
/// browser only reads the redirect).
pub const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The authorization provider for a scenario: None for scenarios that are not `auth/*`.
///
/// # Errors
/// A context that is not a JSON object, or unusable credentials in it.
pub fn authorizer_for(
    scenario: &str,
    context: Option<&str>,
) -> Result<Option<Arc<dyn AuthProvider>>, String> {
    if !scenario.starts_with("auth/") {
        return Ok(None);
    }
    let ctx: Value = match context {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?,
        None => json!({}),
    };
    let field = |k: &str| ctx.get(k).and_then(Value::as_str).map(str::to_owned);
    let credentials = field("client_id").map(|id| {
        let creds = Credentials::builder(id);
        match field("client_secret") {
            Some(secret) => creds.client_secret(secret),
            None => creds,
        }
    });
    let mut cfg = if let Some(id_token) = field("idp_id_token") {
        let token_endpoint = field("idp_token_endpoint")
            .ok_or("the context has an ID token but no idp_token_endpoint")?;
        let mut cross = CrossApp::builder(token_endpoint, id_token);
        if let Some(id) = field("idp_client_id") {
            cross = cross.idp_client_id(id);
        }
        OAuthConfig::builder(Grant::CrossApp(cross.build()))
    } else if let Some(jwt) = field("valid_jwt") {
        // Workload identity federation: the workload's JWT is the grant (RFC 7523).
        OAuthConfig::builder(Grant::JwtBearer(Arc::new(move || Ok(jwt.clone()))))
    } else if scenario.starts_with("auth/client-credentials") {
        let mut creds = credentials
            .clone()
            .ok_or("client credentials need a client_id in the context")?;
        if let Some(pem) = field("private_key_pem") {
            let alg = field("signing_algorithm").unwrap_or_else(|| "ES256".into());
            if alg != "ES256" {
                return Err(format!(
                    "signing algorithm {alg} is not supported (ES256 is)"
                ));
            }
            creds = creds.private_key(PrivateKey::from_pem(&pem).map_err(|e| e.to_string())?);
        }
        OAuthConfig::builder(Grant::ClientCredentials).credentials(creds.build())
    } else {
        let browser = OAuthProvider::headless_browser(Duration::from_secs(10));
        let cfg = OAuthConfig::authorization_code(REDIRECT_URI, browser);
        if scenario == "auth/basic-cimd" {
            cfg.client_metadata_url(CLIENT_METADATA_URL)
        } else {
            cfg
        }
    };
    if let Some(c) = credentials.filter(|_| !scenario.starts_with("auth/client-credentials")) {
        cfg = cfg.credentials(c.build());
    }
    let cfg = cfg.client_name("mcp-blocking-conformance").build();
    Ok(Some(Arc::new(OAuthProvider::new(cfg))))
}

/// The conformance entry point for an `auth/*` scenario: when `MCP_CONFORMANCE_SCENARIO`
/// names one, runs it against the last command-line argument (the server URL) and returns
/// the exit status; otherwise None. `MCP_CONFORMANCE_DEBUG=1` logs to stderr.
pub fn main_if_auth_scenario() -> Option<std::process::ExitCode> {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").ok()?;
    if !scenario.starts_with("auth/") {
        return None;
    }
    if std::env::var_os("MCP_CONFORMANCE_DEBUG").is_some() {
        let _ = env_logger::Builder::new()
            .filter_level(log::LevelFilter::Debug)
            .try_init();
    }
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT").ok();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("client: no server URL given");
        return Some(std::process::ExitCode::from(2));
    };
    Some(match run(&scenario, context.as_deref(), &url) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("client: {scenario}: {why}");
            std::process::ExitCode::FAILURE
        }
    })
}

/// The revision to speak in a scenario. The suite names the wire version of each scenario in
/// `MCP_CONFORMANCE_PROTOCOL_VERSION` (its mock servers speak only that one: the 2026-07-28
/// mock refuses a legacy `initialize` without the version header), so a version it names is
/// spoken exactly; without one (or with one this crate does not know) the client does what a
/// current client does: 2026-07-28 first, falling back to the legacy handshake.
pub fn revision_for(wire: Option<&str>) -> Revision {
    match wire.and_then(ProtocolVersion::parse) {
        Some(v) => Revision::Exact(v),
        None => Revision::Auto,
    }
}

/// What the client does in an `auth/*` scenario: connect (authorizing on the way), list the
/// tools, call the first one with no arguments (the call is where scope step-ups happen),
/// print what it got, close.
///
/// # Errors
/// Any failure on the way, as text for stderr.
pub fn run(scenario: &str, context: Option<&str>, url: &str) -> Result<(), String> {
    let mut config = HttpClientConfig::builder();
    if let Some(auth) = authorizer_for(scenario, context)? {
        config = config.auth(auth);
    }
    let config = config.build();
    let client = Client::builder()
        .client_info("mcp-blocking-conformance", env!("CARGO_PKG_VERSION"))
        .revision(revision_for(
            std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
                .ok()
                .as_deref(),
        ))
        .connect_http_with(url, config)
        .map_err(|e| format!("connecting: {e}"))?;
    let outcome = exercise(&client);
    let closed = client.close();
    outcome?;
    closed.map_err(|e| format!("closing: {e}"))?;
    Ok(())
}

fn exercise(client: &Client) -> Result<(), String> {
    let tools: Vec<_> = client
        .list_tools()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("tools/list: {e}"))?;
    println!("{} tool(s)", tools.len());
    if let Some(tool) = tools.first() {
        let result = client
            .call_tool(&tool.name, json!({}))
            .map_err(|e| format!("tools/call {}: {e}", tool.name))?;
        println!(
            "{}",
            serde_json::to_string(&result).map_err(|e| e.to_string())?
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenario_wire_version_is_spoken() {
        let modern = revision_for(Some("2026-07-28"));
        assert!(matches!(
            modern,
            Revision::Exact(ProtocolVersion::V2026_07_28)
        ));
        assert!(matches!(
            revision_for(Some("2025-11-25")),
            Revision::Exact(ProtocolVersion::V2025_11_25)
        ));
        assert!(matches!(revision_for(None), Revision::Auto));
        assert!(matches!(revision_for(Some("1999-01-01")), Revision::Auto));
    }

    #[test]
    fn a_workload_jwt_in_the_context_is_a_jwt_bearer_grant() {
        let ctx = r#"{"name":"auth/wif-jwt-bearer","client_id":"w","valid_jwt":"a.b.c"}"#;
        let auth = authorizer_for("auth/wif-jwt-bearer", Some(ctx))
            .unwrap()
            .unwrap();
        assert!(format!("{auth:?}").contains("JwtBearer"), "{auth:?}");
    }
}
