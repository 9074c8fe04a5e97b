//! Finding the authorization server of an MCP server: protected resource metadata (RFC 9728),
//! then the authorization server's metadata (RFC 8414, or OpenID Connect Discovery), with the
//! 2025-03-26 fallbacks for servers that publish no resource metadata.

use serde_json::Value;

use super::FlowError;
use super::http::Http;
use super::url::Url;

/// What discovery learnt about the server and its authorization server.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The `resource` parameter to send (RFC 8707): the metadata's `resource`, or the server
    /// URL when there is no resource metadata.
    pub resource: String,
    /// The resource metadata URL it came from (None: 2025-03-26 fallback).
    pub metadata_url: Option<String>,
    /// `scopes_supported` of the resource metadata.
    pub resource_scopes: Option<Vec<String>>,
    /// The authorization server.
    pub server: ServerMetadata,
}

/// The parts of authorization server metadata a client uses.
#[derive(Debug, Clone, Default)]
pub struct ServerMetadata {
    /// `issuer` (None when the endpoints are the 2025-03-26 defaults).
    pub issuer: Option<String>,
    /// `authorization_endpoint`.
    pub authorization_endpoint: String,
    /// `token_endpoint`.
    pub token_endpoint: String,
    /// `registration_endpoint` (dynamic client registration, RFC 7591).
    pub registration_endpoint: Option<String>,
    /// `scopes_supported`.
    pub scopes_supported: Option<Vec<String>>,
    /// `token_endpoint_auth_methods_supported` (absent means `client_secret_basic`).
    pub token_auth_methods: Option<Vec<String>>,
    /// `code_challenge_methods_supported`.
    pub code_challenge_methods: Option<Vec<String>>,
    /// `client_id_metadata_document_supported`.
    pub client_id_metadata_documents: bool,
    /// `authorization_response_iss_parameter_supported` (RFC 9207): the authorization
    /// response always carries `iss`, so one without it is refused.
    pub iss_parameter_supported: bool,
    /// `dpop_signing_alg_values_supported` (RFC 9449 §5.1): the server binds tokens to a
    /// DPoP key signed with one of these.
    // Read only by the DPoP code, which needs feature `oauth-jwt`.
    #[cfg_attr(not(feature = "oauth-jwt"), allow(dead_code))]
    pub dpop_signing_algs: Option<Vec<String>>,
    /// False for the 2025-03-26 default endpoints (no metadata document at all).
    pub from_document: bool,
}

impl ServerMetadata {
    /// Reads a metadata document; None without the two endpoints a client needs.
    pub fn from_json(v: &Value) -> Option<ServerMetadata> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let list = |k: &str| {
            v.get(k).and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
        };
        Some(ServerMetadata {
            issuer: s("issuer"),
            authorization_endpoint: s("authorization_endpoint").unwrap_or_default(),
            token_endpoint: s("token_endpoint")?,
            registration_endpoint: s("registration_endpoint"),
            scopes_supported: list("scopes_supported"),
            token_auth_methods: list("token_endpoint_auth_methods_supported"),
            code_challenge_methods: list("code_challenge_methods_supported"),
            client_id_metadata_documents: v
                .get("client_id_metadata_document_supported")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            dpop_signing_algs: list("dpop_signing_alg_values_supported"),
            iss_parameter_supported: v
                .get("authorization_response_iss_parameter_supported")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            from_document: true,
        })
    }

    /// The 2025-03-26 defaults: `/authorize`, `/token` and `/register` at `origin`.
    pub fn defaults(origin: &str) -> ServerMetadata {
        ServerMetadata {
            authorization_endpoint: format!("{origin}/authorize"),
            token_endpoint: format!("{origin}/token"),
            registration_endpoint: Some(format!("{origin}/register")),
            ..ServerMetadata::default()
        }
    }

    /// Whether the server lists `method` for token endpoint authentication (RFC 8414: an
    /// absent list means `client_secret_basic` only).
    pub fn supports_auth(&self, method: &str) -> bool {
        match &self.token_auth_methods {
            Some(l) => l.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }
}

/// Where to look for protected resource metadata: the URL the challenge named, then the
/// path-based well-known URL, then the root one (RFC 9728 §3.1, MCP 2025-11-25).
pub fn resource_metadata_urls(server: &Url, from_challenge: Option<&str>) -> Vec<String> {
    let mut urls = Vec::new();
    if let Some(u) = from_challenge {
        urls.push(u.to_owned());
    }
    if !server.path.is_empty() {
        urls.push(server.well_known_inserted("oauth-protected-resource"));
    }
    urls.push(format!(
        "{}/.well-known/oauth-protected-resource",
        server.origin()
    ));
    urls.dedup();
    urls
}

/// Where to look for an issuer's metadata, in the order MCP 2025-11-25 gives: for an issuer
/// with a path, RFC 8414 path insertion, OpenID Connect path insertion, then OpenID Connect
/// path appending; for one without, RFC 8414 then OpenID Connect.
pub fn server_metadata_urls(issuer: &Url) -> Vec<String> {
    let mut urls = vec![
        issuer.well_known_inserted("oauth-authorization-server"),
        issuer.well_known_inserted("openid-configuration"),
    ];
    if !issuer.path.is_empty() {
        urls.push(issuer.well_known_appended("openid-configuration"));
    }
    urls
}

/// Runs discovery for the MCP endpoint `server_url`.
///
/// # Errors
/// A resource metadata document whose `resource` does not cover the server URL (a server may
/// not send tokens for another resource's audience our way), one without authorization
/// servers, an authorization server without metadata, or an unparseable URL.
///
/// `version`, the MCP revision the client speaks, goes with every request as
/// `MCP-Protocol-Version` (the authorization spec: clients SHOULD send it during discovery, so
/// the server can answer for that revision).
pub(crate) fn discover(
    http: &Http,
    server_url: &str,
    from_challenge: Option<&str>,
    version: Option<&str>,
) -> Result<Discovered, FlowError> {
    let server = Url::parse(server_url).ok_or_else(|| FlowError::NotAUrl(server_url.to_owned()))?;
    let mut prm = None;
    let mut failure = None;
    for url in resource_metadata_urls(&server, from_challenge) {
        match http.get_json(&url, version) {
            Ok(Some(doc)) => {
                prm = Some((url, doc));
                break;
            }
            Ok(None) => {}
            Err(e) => {
                log::debug!("protected resource metadata: {e}");
                failure.get_or_insert(e);
            }
        }
    }
    let Some((metadata_url, doc)) = prm else {
        // Only a server with no resource metadata at all (4xx at every URL) is taken for a
        // 2025-03-26 one, whose authorization server is its own origin: a fetch that failed
        // (5xx, a redirect, a timeout) says nothing of the revision, and a server whose
        // challenge names its metadata has some (2025-06-18 on: clients MUST use it).
        if let Some(e) = failure {
            return Err(e);
        }
        if let Some(named) = from_challenge {
            return Err(FlowError::BadAnswer {
                url: named.to_owned(),
                what: "the resource metadata the challenge names is not there",
            });
        }
        return legacy(http, &server, version);
    };
    let bad = |what| FlowError::BadAnswer {
        url: metadata_url.clone(),
        what,
    };
    let resource = doc
        .get("resource")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("names no resource"))?;
    let parsed = Url::parse(resource).ok_or_else(|| bad("the resource is not an http(s) URL"))?;
    if !server.is_covered_by(&parsed) {
        return Err(FlowError::WrongResource {
            resource: resource.to_owned(),
            server: server_url.to_owned(),
        });
    }
    let issuer = doc
        .get("authorization_servers")
        .and_then(Value::as_array)
        .and_then(|a| a.iter().find_map(Value::as_str))
        .ok_or_else(|| bad("names no authorization server"))?
        .to_owned();
    let server_meta = server_metadata(http, &issuer, version)?;
    let resource_scopes = doc
        .get("scopes_supported")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        });
    Ok(Discovered {
        resource: resource.to_owned(),
        metadata_url: Some(metadata_url),
        resource_scopes,
        server: server_meta,
    })
}

/// Fetches and checks an issuer's metadata (its `issuer` must be the one asked for).
fn server_metadata(
    http: &Http,
    issuer: &str,
    version: Option<&str>,
) -> Result<ServerMetadata, FlowError> {
    let parsed = Url::parse(issuer).ok_or_else(|| FlowError::NotAUrl(issuer.to_owned()))?;
    let mut last = None;
    for url in server_metadata_urls(&parsed) {
        match http.get_json(&url, version) {
            Ok(Some(doc)) => {
                let Some(meta) = ServerMetadata::from_json(&doc) else {
                    last = Some(Box::new(no_token_endpoint(&url)));
                    continue;
                };
                let same = meta
                    .issuer
                    .as_deref()
                    .is_some_and(|i| i.trim_end_matches('/') == issuer.trim_end_matches('/'));
                if !same {
                    return Err(FlowError::IssuerMismatch {
                        expected: issuer.to_owned(),
                        got: meta.issuer,
                    });
                }
                return Ok(meta);
            }
            Ok(None) => {}
            Err(e) => last = Some(Box::new(e)),
        }
    }
    Err(FlowError::NoMetadata {
        issuer: issuer.to_owned(),
        last,
    })
}

fn no_token_endpoint(url: &str) -> FlowError {
    FlowError::BadAnswer {
        url: url.to_owned(),
        what: "the metadata has no token endpoint",
    }
}

/// 2025-03-26: no resource metadata; the authorization server is the MCP server's origin,
/// with its RFC 8414 metadata there or else the default endpoints.
fn legacy(http: &Http, server: &Url, version: Option<&str>) -> Result<Discovered, FlowError> {
    let origin = server.origin();
    let url = format!("{origin}/.well-known/oauth-authorization-server");
    let meta = match http.get_json(&url, version)? {
        Some(doc) => ServerMetadata::from_json(&doc).ok_or_else(|| no_token_endpoint(&url))?,
        None => ServerMetadata::defaults(&origin),
    };
    Ok(Discovered {
        resource: server.without_query(),
        metadata_url: None,
        resource_scopes: None,
        server: meta,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_order() {
        let s = Url::parse("http://h:1/api/mcp").unwrap();
        assert_eq!(
            resource_metadata_urls(&s, Some("http://h:1/custom.json")),
            [
                "http://h:1/custom.json",
                "http://h:1/.well-known/oauth-protected-resource/api/mcp",
                "http://h:1/.well-known/oauth-protected-resource",
            ]
        );
        let root = Url::parse("http://h:1").unwrap();
        assert_eq!(
            resource_metadata_urls(&root, None),
            ["http://h:1/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn server_metadata_order() {
        let with_path = Url::parse("https://as.example/tenant1").unwrap();
        assert_eq!(
            server_metadata_urls(&with_path),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
        let root = Url::parse("https://as.example/").unwrap();
        assert_eq!(
            server_metadata_urls(&root),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn metadata_fields_and_defaults() {
        let v = serde_json::json!({
            "issuer": "https://as", "authorization_endpoint": "https://as/a",
            "token_endpoint": "https://as/t", "scopes_supported": ["x", "offline_access"],
            "client_id_metadata_document_supported": true
        });
        let m = ServerMetadata::from_json(&v).unwrap();
        assert!(m.client_id_metadata_documents);
        assert!(!m.iss_parameter_supported);
        assert!(m.supports_auth("client_secret_basic") && !m.supports_auth("none"));
        assert!(ServerMetadata::from_json(&serde_json::json!({"issuer": "x"})).is_none());
        let d = ServerMetadata::defaults("http://h:1");
        assert_eq!(d.token_endpoint, "http://h:1/token");
        assert!(!d.from_document);
    }
}
