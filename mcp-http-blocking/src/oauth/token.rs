//! Client identity (registration) and the token endpoint: the grants, and how the client
//! authenticates itself there.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::FlowError;
use super::discovery::{Discovered, ServerMetadata};
use super::http::Http;
use super::pkce::{Pkce, random_token};
use super::url::{Url, form, parse_form, with_query};
use super::{Browser, Credentials, CrossApp, Dpop};

/// An access token and what came with it.
#[derive(Clone)]
pub struct Token {
    /// The access token.
    pub access: String,
    /// The refresh token, if one was issued.
    pub refresh: Option<String>,
    /// The scopes granted (the answer's `scope`, else those asked for).
    pub scopes: Vec<String>,
    /// When it expires, if the server said.
    pub expires: Option<Instant>,
    /// A DPoP-bound token (`token_type` `DPoP`, RFC 9449): sent with the `DPoP` scheme and a
    /// proof of the provider's key on every request.
    pub dpop: bool,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("scopes", &self.scopes)
            .field("expires", &self.expires)
            .field("refresh", &self.refresh.is_some())
            .field("dpop", &self.dpop)
            .finish_non_exhaustive()
    }
}

impl Token {
    /// The `Authorization` header value: `Bearer ...`, or `DPoP ...` for a bound token.
    pub fn header(&self) -> String {
        let scheme = if self.dpop { "DPoP" } else { "Bearer" };
        format!("{scheme} {}", self.access)
    }

    /// Reads a token endpoint answer (RFC 6749 §5.1); `proved` says whether the request
    /// carried a DPoP proof (only then can the token be a DPoP one).
    fn from_answer(
        endpoint: &str,
        (v, proved): (Value, bool),
        asked: &[String],
        old_refresh: Option<&str>,
    ) -> Result<Token, FlowError> {
        let bad = |what| FlowError::BadAnswer {
            url: endpoint.to_owned(),
            what,
        };
        let v = &v;
        let access = v
            .get("access_token")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("the token answer has no access_token"))?;
        let kind = v.get("token_type").and_then(Value::as_str).unwrap_or("");
        let dpop = proved && kind.eq_ignore_ascii_case("dpop");
        if !dpop && !kind.eq_ignore_ascii_case("bearer") {
            return Err(bad(
                "the token type is not Bearer (nor DPoP for a proved request)",
            ));
        }
        let scopes = v
            .get("scope")
            .and_then(Value::as_str)
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_else(|| asked.to_vec());
        Ok(Token {
            access: access.to_owned(),
            refresh: v
                .get("refresh_token")
                .and_then(Value::as_str)
                .or(old_refresh)
                .map(str::to_owned),
            scopes,
            // Untrusted: a lifetime past a year is read as a year (an absurd one must not
            // overflow the clock; at worst the client refreshes early).
            expires: v
                .get("expires_in")
                .and_then(Value::as_u64)
                .and_then(|s| Instant::now().checked_add(Duration::from_secs(s.min(MAX_LIFETIME)))),
            dpop,
        })
    }
}

/// The redirect the browser step came back with: its query's parameters. Any scheme is
/// taken, a native app's private-use one (`com.example.app:/cb`, RFC 8252 §7.1) as well as
/// http(s); the fragment is dropped.
struct RedirectBack(Vec<(String, String)>);

impl RedirectBack {
    /// None when `back` does not start with a scheme (RFC 3986 §3.1).
    fn parse(back: &str) -> Option<RedirectBack> {
        let (scheme, _) = back.split_once(':')?;
        let mut chars = scheme.chars();
        let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !scheme_ok {
            return None;
        }
        let without_fragment = back.split('#').next().unwrap_or_default();
        let query = without_fragment.split_once('?').map_or("", |(_, q)| q);
        Some(RedirectBack(parse_form(query)))
    }

    fn param(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }
}

/// The longest token lifetime taken from a token endpoint's `expires_in` (one year).
pub(crate) const MAX_LIFETIME: u64 = 365 * 24 * 3600;

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthMethod {
    /// A public client: `client_id` in the body only.
    None,
    /// HTTP Basic with the secret.
    SecretBasic,
    /// The secret in the body.
    SecretPost,
    /// A signed JWT assertion (feature `oauth-jwt`).
    PrivateKeyJwt,
}

/// A client identity at the authorization server.
#[derive(Clone)]
pub(crate) struct Registered {
    pub(crate) client_id: String,
    secret: Option<String>,
    method: AuthMethod,
    #[cfg(feature = "oauth-jwt")]
    key: Option<super::PrivateKey>,
}

impl Registered {
    /// Pre-registered credentials, with the method the server supports.
    pub(crate) fn from_credentials(c: &Credentials, meta: &ServerMetadata) -> Registered {
        #[cfg(feature = "oauth-jwt")]
        let has_key = c.private_key.is_some();
        #[cfg(not(feature = "oauth-jwt"))]
        let has_key = false;
        let method =
            if has_key && (meta.supports_auth("private_key_jwt") || c.client_secret.is_none()) {
                AuthMethod::PrivateKeyJwt
            } else {
                choose_method(meta, c.client_secret.is_some())
            };
        Registered {
            client_id: c.client_id.clone(),
            secret: c.client_secret.clone(),
            method,
            #[cfg(feature = "oauth-jwt")]
            key: c.private_key.clone(),
        }
    }

    /// A client identity an earlier run saved (see `saved`); None for `private_key_jwt`,
    /// whose key is not saved, and for methods this crate does not know.
    pub(crate) fn restored(
        client_id: &str,
        secret: Option<&str>,
        method: &str,
    ) -> Option<Registered> {
        Some(Registered {
            client_id: client_id.to_owned(),
            secret: secret.map(str::to_owned),
            method: method_named(method)?,
            #[cfg(feature = "oauth-jwt")]
            key: None,
        })
    }

    /// The secret, for saving.
    pub(crate) fn secret(&self) -> Option<&str> {
        self.secret.as_deref()
    }

    /// The token endpoint authentication method's registered name.
    pub(crate) fn method_name(&self) -> &'static str {
        match self.method {
            AuthMethod::None => "none",
            AuthMethod::SecretBasic => "client_secret_basic",
            AuthMethod::SecretPost => "client_secret_post",
            AuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// A client ID metadata document URL as the client id (a public client).
    pub(crate) fn metadata_document(url: &str) -> Registered {
        Registered {
            client_id: url.to_owned(),
            secret: None,
            method: AuthMethod::None,
            #[cfg(feature = "oauth-jwt")]
            key: None,
        }
    }

    /// POSTs `params` to the token endpoint with this client's authentication (and a DPoP
    /// proof when `dpop` is given); the answer, and whether a proof went with it.
    fn token_request(
        &self,
        http: &Http,
        d: &Discovered,
        mut params: Vec<(&'static str, String)>,
        dpop: Option<&Dpop>,
    ) -> Result<(Value, bool), FlowError> {
        let endpoint = &d.server.token_endpoint;
        let mut basic = None;
        match self.method {
            AuthMethod::None => params.push(("client_id", self.client_id.clone())),
            AuthMethod::SecretPost => {
                params.push(("client_id", self.client_id.clone()));
                params.push(("client_secret", self.secret.clone().unwrap_or_default()));
            }
            AuthMethod::SecretBasic => {
                basic = Some((
                    self.client_id.as_str(),
                    self.secret.as_deref().unwrap_or(""),
                ));
            }
            AuthMethod::PrivateKeyJwt => {
                #[cfg(feature = "oauth-jwt")]
                {
                    let key = self
                        .key
                        .as_ref()
                        .ok_or(FlowError::Config("private_key_jwt without a key"))?;
                    let audience = d.server.issuer.clone().unwrap_or_else(|| endpoint.clone());
                    params.push(("client_id", self.client_id.clone()));
                    params.push((
                        "client_assertion_type",
                        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
                    ));
                    params.push((
                        "client_assertion",
                        super::jwt::client_assertion(key, &self.client_id, &audience)?,
                    ));
                }
                #[cfg(not(feature = "oauth-jwt"))]
                return Err(FlowError::Config(
                    "private_key_jwt needs the oauth-jwt feature",
                ));
            }
        }
        let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        post_token(http, endpoint, &pairs, basic, dpop)
    }
}

/// A token request, with a DPoP proof when `dpop` is given. An authorization server that wants
/// a nonce in the proof answers `use_dpop_nonce` with a `DPoP-Nonce` header (RFC 9449 §8): the
/// request goes once more with a proof carrying it, and the nonce is kept for later requests.
fn post_token(
    http: &Http,
    endpoint: &str,
    pairs: &[(&str, &str)],
    basic: Option<(&str, &str)>,
    dpop: Option<&Dpop>,
) -> Result<(Value, bool), FlowError> {
    let Some(dp) = dpop else {
        return Ok((http.post_form(endpoint, pairs, basic)?, false));
    };
    #[cfg(feature = "oauth-jwt")]
    {
        let mut answer = None;
        for _ in 0..2 {
            let proof = dp.token_proof(endpoint)?;
            let a = http.post_form_raw(endpoint, pairs, basic, Some(&proof))?;
            let fresh = a.dpop_nonce.as_deref().is_some_and(|n| dp.set_as_nonce(n));
            let again = fresh && a.error() == Some("use_dpop_nonce");
            answer = Some(a);
            if !again {
                break;
            }
        }
        let answer = answer.ok_or(FlowError::Config("no token request was made"))?;
        answer.into_result(endpoint).map(|v| (v, true))
    }
    #[cfg(not(feature = "oauth-jwt"))]
    match *dp {}
}

/// The token endpoint authentication for a client with (or without) a secret: Basic when the
/// server takes it, else the secret in the body, else none.
fn choose_method(meta: &ServerMetadata, has_secret: bool) -> AuthMethod {
    if !has_secret {
        AuthMethod::None
    } else if meta.supports_auth("client_secret_basic") {
        AuthMethod::SecretBasic
    } else if meta.supports_auth("client_secret_post") {
        AuthMethod::SecretPost
    } else {
        AuthMethod::SecretBasic
    }
}

fn method_named(name: &str) -> Option<AuthMethod> {
    Some(match name {
        "none" => AuthMethod::None,
        "client_secret_basic" => AuthMethod::SecretBasic,
        "client_secret_post" => AuthMethod::SecretPost,
        _ => return None,
    })
}

/// The OpenID `application_type` (SEP-837) a redirect URI implies: `native` for a client whose
/// redirect comes back to the user's own machine (a loopback address, `localhost`, or a
/// private-use scheme such as `com.example.app:/cb`), `web` for one that comes back to a web
/// server. An authorization server applies different redirect rules to the two (a `web` client
/// may not use `localhost`), so registering the wrong one gets the redirect refused.
pub(crate) fn application_type(redirect_uri: &str) -> &'static str {
    let Some(u) = Url::parse(redirect_uri) else {
        // Not http(s): a private-use URI scheme, which only native apps use.
        return "native";
    };
    let host = match u.authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => u.authority.split(':').next().unwrap_or(""),
    };
    let loopback = host == "localhost"
        || host.ends_with(".localhost")
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    if loopback { "native" } else { "web" }
}

/// Dynamic client registration (RFC 7591), with the `application_type` given or, when None,
/// the one the redirect URI implies.
pub(crate) fn register(
    http: &Http,
    meta: &ServerMetadata,
    client_name: &str,
    redirect_uri: &str,
    refresh: bool,
    app_type: Option<&str>,
) -> Result<Registered, FlowError> {
    let endpoint = meta
        .registration_endpoint
        .as_deref()
        .ok_or(FlowError::Unsupported(
            "offers no registration and no client credentials were given",
        ))?;
    // Ask to be a public client when the server allows it (a client that cannot keep a
    // secret should not have one), else the first secret method it takes.
    let wanted = ["none", "client_secret_basic", "client_secret_post"]
        .into_iter()
        .find(|m| meta.supports_auth(m))
        .unwrap_or("client_secret_basic");
    let mut grants = vec!["authorization_code"];
    if refresh {
        grants.push("refresh_token");
    }
    let body = json!({
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": grants,
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted,
        "application_type": app_type.unwrap_or_else(|| application_type(redirect_uri)),
    });
    let answer = http.post_json(endpoint, &body)?;
    let client_id = answer
        .get("client_id")
        .and_then(Value::as_str)
        .ok_or_else(|| FlowError::BadAnswer {
            url: endpoint.to_owned(),
            what: "the registration answer has no client_id",
        })?;
    let secret = answer
        .get("client_secret")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let method = answer
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .and_then(method_named)
        .unwrap_or_else(|| choose_method(meta, secret.is_some()));
    Ok(Registered {
        client_id: client_id.to_owned(),
        secret,
        method,
        #[cfg(feature = "oauth-jwt")]
        key: None,
    })
}

/// The authorization code grant with PKCE: the browser step, the `state` check, the code
/// exchange.
/// Whether the authorization server can serve the authorization code grant as the spec
/// wants it (PKCE with S256, an authorization endpoint): checked before anything is sent to
/// it, a registration included.
pub(crate) fn can_authorize(d: &Discovered) -> Result<(), FlowError> {
    if d.server.from_document {
        let s256 = d
            .server
            .code_challenge_methods
            .as_ref()
            .is_some_and(|m| m.iter().any(|x| x == "S256"));
        if !s256 {
            return Err(FlowError::Unsupported("does not support PKCE with S256"));
        }
    }
    if d.server.authorization_endpoint.is_empty() {
        return Err(FlowError::Unsupported("has no authorization endpoint"));
    }
    Ok(())
}

pub(crate) fn authorization_code(
    http: &Http,
    d: &Discovered,
    client: &Registered,
    redirect_uri: &str,
    browser: &Browser,
    scopes: &[String],
    dpop: Option<&Dpop>,
) -> Result<Token, FlowError> {
    can_authorize(d)?;
    let pkce = Pkce::new()?;
    let state = random_token(24)?;
    let scope = scopes.join(" ");
    let mut q = vec![
        ("response_type", "code"),
        ("client_id", client.client_id.as_str()),
        ("redirect_uri", redirect_uri),
        ("code_challenge", pkce.challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("state", state.as_str()),
        ("resource", d.resource.as_str()),
    ];
    if !scope.is_empty() {
        q.push(("scope", scope.as_str()));
    }
    let url = with_query(&d.server.authorization_endpoint, &form(&q));
    // The host's own error, kept as it is.
    let back = browser(&url).map_err(|e| match e.downcast::<FlowError>() {
        // The loopback redirect's own failure.
        Ok(flow) => *flow,
        Err(host) => FlowError::Host(host),
    })?;
    let back = RedirectBack::parse(&back).ok_or(FlowError::NotAUrl(back))?;
    if back.param("state").as_deref() != Some(state.as_str()) {
        return Err(FlowError::StateMismatch);
    }
    check_iss(&d.server, back.param("iss").as_deref())?;
    if let Some(error) = back.param("error") {
        return Err(FlowError::Refused {
            url: d.server.authorization_endpoint.clone(),
            error,
            description: back.param("error_description"),
        });
    }
    let code = back.param("code").ok_or_else(|| FlowError::BadAnswer {
        url: d.server.authorization_endpoint.clone(),
        what: "the redirect carries no code",
    })?;
    let answer = client.token_request(
        http,
        d,
        vec![
            ("grant_type", "authorization_code".into()),
            ("code", code),
            ("redirect_uri", redirect_uri.into()),
            ("code_verifier", pkce.verifier),
            ("resource", d.resource.clone()),
        ],
        dpop,
    )?;
    Token::from_answer(&d.server.token_endpoint, answer, scopes, None)
}

/// RFC 9207 (SEP-2468): the authorization response's `iss` must be, character for character,
/// the issuer recorded from the authorization server's metadata. That is what stops a mix-up
/// attack, where a response from another authorization server is passed off as this one's
/// (its code would go to this token endpoint). No normalization at all: a trailing slash, case
/// or a default port make another string, and another string is refused. A missing `iss` is
/// refused only when the metadata promised one; a present one is compared whether or not it
/// was promised. Without recorded metadata (the 2025-03-26 default endpoints) there is nothing
/// to compare with.
fn check_iss(meta: &ServerMetadata, iss: Option<&str>) -> Result<(), FlowError> {
    match (iss, meta.issuer.as_deref()) {
        (Some(got), Some(want)) if got != want => Err(FlowError::IssuerMismatch {
            expected: want.to_owned(),
            got: Some(got.to_owned()),
        }),
        (None, Some(want)) if meta.iss_parameter_supported => Err(FlowError::IssuerMismatch {
            expected: want.to_owned(),
            got: None,
        }),
        _ => Ok(()),
    }
}

/// The client credentials grant.
pub(crate) fn client_credentials(
    http: &Http,
    d: &Discovered,
    client: &Registered,
    scopes: &[String],
    dpop: Option<&Dpop>,
) -> Result<Token, FlowError> {
    let mut params = vec![
        ("grant_type", "client_credentials".to_owned()),
        ("resource", d.resource.clone()),
    ];
    if !scopes.is_empty() {
        params.push(("scope", scopes.join(" ")));
    }
    let answer = client.token_request(http, d, params, dpop)?;
    Token::from_answer(&d.server.token_endpoint, answer, scopes, None)
}

/// Cross-app access: RFC 8693 token exchange of the ID token at the identity provider for an
/// identity assertion grant (ID-JAG), then the RFC 7523 JWT bearer grant with it at the
/// MCP server's authorization server.
pub(crate) fn cross_app(
    http: &Http,
    d: &Discovered,
    client: &Registered,
    x: &CrossApp,
    scopes: &[String],
    dpop: Option<&Dpop>,
) -> Result<Token, FlowError> {
    let audience = d
        .server
        .issuer
        .clone()
        .ok_or(FlowError::Unsupported("names no issuer in its metadata"))?;
    let scope = scopes.join(" ");
    let mut params = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:id-jag",
        ),
        ("audience", audience.as_str()),
        ("resource", d.resource.as_str()),
        ("subject_token", x.id_token.as_str()),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token",
        ),
    ];
    if !scope.is_empty() {
        params.push(("scope", scope.as_str()));
    }
    if let Some(id) = &x.idp_client_id {
        params.push(("client_id", id.as_str()));
    }
    if let Some(secret) = &x.idp_client_secret {
        params.push(("client_secret", secret.as_str()));
    }
    let exchanged = http.post_form(&x.idp_token_endpoint, &params, None)?;
    let grant = exchanged
        .get("access_token")
        .and_then(Value::as_str)
        .ok_or_else(|| FlowError::BadAnswer {
            url: x.idp_token_endpoint.clone(),
            what: "the token exchange answer has no access_token",
        })?;
    let issued = exchanged.get("issued_token_type").and_then(Value::as_str);
    if issued.is_some_and(|t| t != "urn:ietf:params:oauth:token-type:id-jag") {
        return Err(FlowError::BadAnswer {
            url: x.idp_token_endpoint.clone(),
            what: "the identity provider issued something else than an identity assertion grant",
        });
    }
    let mut params = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
        ),
        ("assertion", grant.to_owned()),
        ("resource", d.resource.clone()),
    ];
    if !scope.is_empty() {
        params.push(("scope", scope.clone()));
    }
    let answer = client.token_request(http, d, params, dpop)?;
    Token::from_answer(&d.server.token_endpoint, answer, scopes, None)
}

/// The JWT bearer grant (RFC 7523 §2.1) with the host's own assertion, authenticated as
/// `client` when there is one, else with no client authentication at all (RFC 7523 §3.1
/// allows that: the assertion is the authorization).
pub(crate) fn jwt_bearer(
    http: &Http,
    d: &Discovered,
    client: Option<&Registered>,
    assertion: &str,
    scopes: &[String],
    dpop: Option<&Dpop>,
) -> Result<Token, FlowError> {
    let mut params = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
        ),
        ("assertion", assertion.to_owned()),
        ("resource", d.resource.clone()),
    ];
    if !scopes.is_empty() {
        params.push(("scope", scopes.join(" ")));
    }
    let answer = match client {
        Some(c) => c.token_request(http, d, params, dpop)?,
        None => {
            let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
            post_token(http, &d.server.token_endpoint, &pairs, None, dpop)?
        }
    };
    Token::from_answer(&d.server.token_endpoint, answer, scopes, None)
}

/// The refresh token grant (the old refresh token is kept when no new one comes).
pub(crate) fn refresh(
    http: &Http,
    d: &Discovered,
    client: &Registered,
    refresh_token: &str,
    scopes: &[String],
    dpop: Option<&Dpop>,
) -> Result<Token, FlowError> {
    let answer = client.token_request(
        http,
        d,
        vec![
            ("grant_type", "refresh_token".into()),
            ("refresh_token", refresh_token.into()),
            ("resource", d.resource.clone()),
        ],
        dpop,
    )?;
    Token::from_answer(
        &d.server.token_endpoint,
        answer,
        scopes,
        Some(refresh_token),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A native app's private-use scheme redirect (RFC 8252 §7.1) is read like an http one.
    #[test]
    fn a_private_use_scheme_redirect_is_read() {
        let back =
            RedirectBack::parse("com.example.app:/oauth2redirect?code=c%201&state=s#frag").unwrap();
        assert_eq!(back.param("code").as_deref(), Some("c 1"));
        assert_eq!(back.param("state").as_deref(), Some("s"));
        let back = RedirectBack::parse("http://127.0.0.1:5/cb?state=x&code=y").unwrap();
        assert_eq!(back.param("code").as_deref(), Some("y"));
        assert!(RedirectBack::parse("no scheme here").is_none());
        assert!(RedirectBack::parse("1abc:/x?code=y").is_none());
        assert!(
            RedirectBack::parse("app:/cb")
                .unwrap()
                .param("code")
                .is_none()
        );
    }

    /// An authorization server's absurd `expires_in` (it crashed the client on the clock's
    /// overflow) reads as the longest lifetime believed.
    #[test]
    fn an_absurd_lifetime_is_capped_not_a_crash() {
        let answer = serde_json::json!({"access_token": "a", "token_type": "Bearer",
            "expires_in": u64::MAX});
        let t = Token::from_answer("http://as/token", (answer, false), &[], None).unwrap();
        let left = t.expires.unwrap().saturating_duration_since(Instant::now());
        assert!(left <= Duration::from_secs(MAX_LIFETIME), "{left:?}");
        assert!(left > Duration::from_secs(MAX_LIFETIME - 60), "{left:?}");
    }

    #[test]
    fn iss_is_compared_exactly() {
        let mut meta = ServerMetadata {
            issuer: Some("http://localhost:4000".into()),
            iss_parameter_supported: true,
            ..ServerMetadata::default()
        };
        assert!(check_iss(&meta, Some("http://localhost:4000")).is_ok());
        for wrong in [
            "http://localhost:4000/",
            "HTTP://localhost:4000",
            "http://LOCALHOST:4000",
            "http://localhost:4000/%2F",
            "https://evil.example.com",
            "",
        ] {
            assert!(check_iss(&meta, Some(wrong)).is_err(), "{wrong:?}");
        }
        assert!(check_iss(&meta, None).is_err(), "promised but missing");
        meta.iss_parameter_supported = false;
        assert!(check_iss(&meta, None).is_ok(), "not promised, not sent");
        assert!(check_iss(&meta, Some("https://evil.example.com")).is_err());
        let defaults = ServerMetadata::defaults("http://h:1");
        assert!(check_iss(&defaults, None).is_ok());
    }

    #[test]
    fn application_type_follows_the_redirect() {
        for native in [
            "http://localhost:3000/callback",
            "http://127.0.0.1:9/cb",
            "http://127.3.4.5/cb",
            "http://[::1]:8080/cb",
            "http://app.localhost/cb",
            "com.example.app:/oauth2redirect",
        ] {
            assert_eq!(application_type(native), "native", "{native}");
        }
        for web in [
            "https://app.example.com/callback",
            "http://10.0.0.1/cb",
            "https://localhost.example.com/cb",
        ] {
            assert_eq!(application_type(web), "web", "{web}");
        }
    }
}
