//! The resource server's side (features `server` and `oauth`): an [`Authorizer`] that asks the
//! authorization server about each token by OAuth 2.0 Token Introspection (RFC 7662), for
//! servers whose tokens are opaque or that would rather not verify signatures themselves.
//!
//! A token passes when the authorization server says it is `active`, it has not expired, its
//! audience names this server (the MCP authorization spec forbids accepting tokens issued for
//! another resource) and it carries the required scopes (else 403 `insufficient_scope`).
//! Answers for good tokens are cached for a short while (bounded in time and in entries), so a
//! busy client does not cost an introspection call per request.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::FlowError;
use super::http::Http;
use crate::{AuthError, Authorizer};

/// Settings of an [`Introspection`] authorizer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IntrospectionConfig {
    /// The authorization server's `introspection_endpoint`.
    pub(crate) endpoint: String,
    /// This resource server's credentials at the authorization server (HTTP Basic), if it
    /// wants them (most do).
    pub(crate) client_id: Option<String>,
    /// The secret that goes with `client_id`.
    pub(crate) client_secret: Option<String>,
    /// Scopes every request needs (a token lacking one gets 403 `insufficient_scope`).
    pub(crate) required_scopes: Vec<String>,
    /// Require the token's `aud` to name this server's URL (default true). Turn it off only
    /// for an authorization server that does not put audiences in introspection answers.
    pub(crate) check_audience: bool,
    /// Longest time a good answer is reused (default 60 s; never past the token's `exp`).
    pub(crate) cache_ttl: Duration,
    /// Most answers kept (default 1,024).
    pub(crate) cache_size: usize,
    /// Longest wait for the authorization server (default 10 s).
    pub(crate) timeout: Duration,
}

impl IntrospectionConfig {
    /// A builder starting from the defaults, with the settings that have none.
    pub fn builder(endpoint: impl Into<String>) -> IntrospectionConfigBuilder {
        IntrospectionConfigBuilder {
            config: IntrospectionConfig::new(endpoint.into()),
        }
    }

    /// The authorization server's `introspection_endpoint`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// This resource server's credentials at the authorization server (HTTP Basic), if it
    /// wants them (most do).
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The secret that goes with `client_id`.
    pub fn client_secret(&self) -> Option<&str> {
        self.client_secret.as_deref()
    }

    /// Scopes every request needs (a token lacking one gets 403 `insufficient_scope`).
    pub fn required_scopes(&self) -> &[String] {
        &self.required_scopes
    }

    /// Require the token's `aud` to name this server's URL (default true). Turn it off only
    /// for an authorization server that does not put audiences in introspection answers.
    pub fn check_audience(&self) -> bool {
        self.check_audience
    }

    /// Longest time a good answer is reused (default 60 s; never past the token's `exp`).
    pub fn cache_ttl(&self) -> Duration {
        self.cache_ttl
    }

    /// Most answers kept (default 1,024).
    pub fn cache_size(&self) -> usize {
        self.cache_size
    }

    /// Longest wait for the authorization server (default 10 s).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
}

/// Builds a [`IntrospectionConfig`]: one method per setting, named after it, then
/// [`build`](IntrospectionConfigBuilder::build).
#[derive(Debug, Clone)]
#[must_use]
pub struct IntrospectionConfigBuilder {
    config: IntrospectionConfig,
}

impl IntrospectionConfigBuilder {
    /// This resource server's credentials at the authorization server (HTTP Basic), if it
    /// wants them (most do).
    pub fn client_id(mut self, v: impl Into<String>) -> Self {
        self.config.client_id = Some(v.into());
        self
    }

    /// The secret that goes with `client_id`.
    pub fn client_secret(mut self, v: impl Into<String>) -> Self {
        self.config.client_secret = Some(v.into());
        self
    }

    /// Scopes every request needs (a token lacking one gets 403 `insufficient_scope`).
    pub fn required_scopes(mut self, v: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.config.required_scopes = v.into_iter().map(Into::into).collect();
        self
    }

    /// Require the token's `aud` to name this server's URL (default true). Turn it off only
    /// for an authorization server that does not put audiences in introspection answers.
    pub fn check_audience(mut self, v: bool) -> Self {
        self.config.check_audience = v;
        self
    }

    /// Longest time a good answer is reused (default 60 s; never past the token's `exp`).
    pub fn cache_ttl(mut self, v: Duration) -> Self {
        self.config.cache_ttl = v;
        self
    }

    /// Most answers kept (default 1,024). An answer of more than 64 KiB of JSON is used once
    /// and not kept, so the cache holds at most 64 MiB at the default size.
    pub fn cache_size(mut self, v: usize) -> Self {
        self.config.cache_size = v;
        self
    }

    /// Longest wait for the authorization server (default 10 s).
    pub fn timeout(mut self, v: Duration) -> Self {
        self.config.timeout = v;
        self
    }

    /// The finished [`IntrospectionConfig`].
    pub fn build(self) -> IntrospectionConfig {
        self.config
    }
}

impl IntrospectionConfig {
    /// Introspection at `endpoint`, with the defaults for the rest.
    fn new(endpoint: String) -> IntrospectionConfig {
        IntrospectionConfig {
            endpoint,
            client_id: None,
            client_secret: None,
            required_scopes: Vec::new(),
            check_audience: true,
            cache_ttl: Duration::from_secs(60),
            cache_size: 1024,
            timeout: Duration::from_secs(10),
        }
    }
}

/// A resource server's [`Authorizer`] (features `server` and `oauth`) that asks the
/// authorization server about each token by OAuth 2.0 Token Introspection (RFC 7662).
///
/// A token passes when the answer says it is `active`, it has not expired, its `aud` names this
/// server's URL and it carries the required scopes (else 403 `insufficient_scope`). Good
/// answers are reused for a short while (bounded in time and entries); an endpoint that does
/// not answer makes the request 503 rather than 401, so the client keeps its token.
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_http_blocking::oauth::{Introspection, IntrospectionConfig};
/// use mcp_http_blocking::{AuthConfig, HttpConfig};
///
/// let check = IntrospectionConfig::builder("https://auth.example.com/oauth/introspect")
///     .client_id("mcp-server")
///     .client_secret("its-secret")
///     .required_scopes(["mcp:tools"])
///     .build();
/// let cfg = HttpConfig::builder()
///     .auth(
///         AuthConfig::builder(Arc::new(Introspection::new(check)))
///             .authorization_servers(["https://auth.example.com"])
///             .scopes(["mcp:tools"])
///             .public_url("https://mcp.example.com")
///             .build(),
///     )
///     .build();
/// ```
pub struct Introspection {
    cfg: IntrospectionConfig,
    http: Http,
    cache: Mutex<HashMap<(String, String), Cached>>,
}

struct Cached {
    claims: Value,
    until: Instant,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.cfg.endpoint)
            .field("required_scopes", &self.cfg.required_scopes)
            .finish_non_exhaustive()
    }
}

impl Introspection {
    /// An authorizer with these settings.
    pub fn new(cfg: IntrospectionConfig) -> Introspection {
        let http = Http::new(cfg.timeout, "mcp-http-blocking-introspection");
        Introspection {
            cfg,
            http,
            cache: Mutex::new(HashMap::new()),
        }
    }

    fn cache(&self) -> MutexGuard<'_, HashMap<(String, String), Cached>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Asks the authorization server; the claims of an acceptable token and how long they
    /// may be reused.
    fn introspect(&self, token: &str, resource: &str) -> Result<(Value, Instant), AuthError> {
        let basic = match (&self.cfg.client_id, &self.cfg.client_secret) {
            (Some(id), secret) => Some((id.as_str(), secret.as_deref().unwrap_or(""))),
            _ => None,
        };
        let claims = self
            .http
            .post_form(
                &self.cfg.endpoint,
                &[("token", token), ("token_type_hint", "access_token")],
                basic,
            )
            .map_err(introspection_failed)?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let mut until = Instant::now() + self.cfg.cache_ttl;
        if let Some(left) = judge_times(&claims, now)? {
            until = until.min(Instant::now().checked_add(left).unwrap_or(until));
        }
        if self.cfg.check_audience && !audience_names(&claims, resource) {
            return Err(AuthError::Invalid(format!(
                "the token was not issued for {resource}"
            )));
        }
        Ok((claims, until))
    }

    /// Remembers `claims`, keeping the cache within its size: expired answers go first,
    /// then the one that would expire soonest.
    fn remember(&self, key: (String, String), claims: Value, until: Instant) {
        if self.cfg.cache_size == 0
            || self.cfg.cache_ttl.is_zero()
            || mcp_core::jsonrpc::json_len(&claims) > MAX_CACHED_ANSWER
        {
            return;
        }
        let mut cache = self.cache();
        if cache.len() >= self.cfg.cache_size {
            let now = Instant::now();
            cache.retain(|_, c| c.until > now);
        }
        if cache.len() >= self.cfg.cache_size {
            let soonest = cache
                .iter()
                .min_by_key(|(_, c)| c.until)
                .map(|(k, _)| k.clone());
            if let Some(k) = soonest {
                cache.remove(&k);
            }
        }
        cache.insert(key, Cached { claims, until });
    }

    /// The scopes of `claims` that the configuration requires and the token lacks.
    fn missing_scopes(&self, claims: &Value) -> Vec<&str> {
        let granted: Vec<&str> = claims
            .get("scope")
            .and_then(Value::as_str)
            .map(|s| s.split_whitespace().collect())
            .unwrap_or_default();
        self.cfg
            .required_scopes
            .iter()
            .map(String::as_str)
            .filter(|s| !granted.contains(s))
            .collect()
    }
}

/// An answer of the endpoint that says nothing about the token (it is down, or refused this
/// server's credentials) leaves the token unchecked: 503, not 401. An OAuth error answer about
/// the request itself (`invalid_request`) is the token's problem.
fn introspection_failed(e: FlowError) -> AuthError {
    match e {
        FlowError::Refused { ref error, .. } if error == "invalid_request" => {
            AuthError::Invalid("the token could not be read".into())
        }
        // ureq's error, as this crate's Error::Http, stays the source.
        FlowError::Http(e) => AuthError::Unavailable(Box::new(e)),
        other => AuthError::Unavailable(Box::new(other)),
    }
}

/// True when the `aud` claim (a string or an array) names `resource` (trailing slashes
/// aside).
fn audience_names(claims: &Value, resource: &str) -> bool {
    let want = resource.trim_end_matches('/');
    let same = |v: &Value| v.as_str().is_some_and(|a| a.trim_end_matches('/') == want);
    match claims.get("aud") {
        Some(Value::Array(items)) => items.iter().any(same),
        Some(v) => same(v),
        None => false,
    }
}

impl Authorizer for Introspection {
    fn authorize(&self, token: &str, resource: &str) -> Result<Value, AuthError> {
        let key = (token.to_owned(), resource.to_owned());
        let cached = {
            let mut cache = self.cache();
            match cache.get(&key) {
                Some(c) if c.until > Instant::now() => Some(c.claims.clone()),
                Some(_) => {
                    cache.remove(&key);
                    None
                }
                None => None,
            }
        };
        let claims = match cached {
            Some(c) => c,
            None => {
                let (claims, until) = self.introspect(token, resource)?;
                self.remember(key, claims.clone(), until);
                claims
            }
        };
        let missing = self.missing_scopes(&claims);
        if !missing.is_empty() {
            return Err(AuthError::InsufficientScope {
                scope: self.cfg.required_scopes.join(" "),
            });
        }
        Ok(claims)
    }
}

/// The largest introspection answer the cache keeps, in bytes of JSON: an answer may be up to
/// the 1 MiB body limit, and a thousand of those would be a gigabyte held for tokens.
pub(crate) const MAX_CACHED_ANSWER: usize = 64 * 1024;

/// Whether an introspection answer says the token is good now (`now`: seconds since the
/// epoch): active, not expired, already valid. Returns how long it stays good when it says
/// (`exp`). `exp` and `nbf` are NumericDates (RFC 7519 §2: seconds, a fraction allowed); one
/// that is not a number is refused, never read as "no expiry".
fn judge_times(claims: &Value, now: f64) -> Result<Option<Duration>, AuthError> {
    if claims.get("active").and_then(Value::as_bool) != Some(true) {
        return Err(AuthError::Invalid("the token is not active".into()));
    }
    let date = |name: &str| match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|d| d.is_finite())
            .map(Some)
            .ok_or_else(|| AuthError::Invalid(format!("the token's {name} is not a date"))),
    };
    if date("nbf")?.is_some_and(|nbf| nbf > now) {
        return Err(AuthError::Invalid("the token is not valid yet".into()));
    }
    match date("exp")? {
        Some(exp) if exp <= now => Err(AuthError::Invalid("the token has expired".into())),
        Some(exp) => Ok(Some(
            Duration::try_from_secs_f64(exp - now).unwrap_or(Duration::MAX),
        )),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_large_answer_is_not_kept() {
        let i = Introspection::new(IntrospectionConfig::builder("http://127.0.0.1:9/i").build());
        let until = Instant::now() + Duration::from_secs(30);
        let big = json!({"sub": "x".repeat(MAX_CACHED_ANSWER)});
        i.remember(("a".into(), "r".into()), big, until);
        i.remember(("b".into(), "r".into()), json!({"sub": "b"}), until);
        let cache = i.cache();
        assert_eq!(cache.len(), 1);
        assert!(cache.contains_key(&("b".to_owned(), "r".to_owned())));
    }

    #[test]
    fn the_cache_keeps_its_size_dropping_what_expires_first() {
        let cfg = IntrospectionConfig::builder("http://127.0.0.1:9/introspect")
            .cache_size(2)
            .build();
        let i = Introspection::new(cfg);
        let t0 = Instant::now();
        let key = |t: &str| (t.to_owned(), "r".to_owned());
        i.remember(key("a"), json!(1), t0 + Duration::from_secs(30));
        i.remember(key("b"), json!(2), t0 + Duration::from_secs(10));
        i.remember(key("c"), json!(3), t0 + Duration::from_secs(20));
        let cache = i.cache();
        assert_eq!(cache.len(), 2);
        assert!(!cache.contains_key(&key("b")), "the soonest to expire left");
    }

    #[test]
    fn an_unreachable_endpoint_is_unavailable_and_a_bad_request_is_invalid() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let e = introspection_failed(FlowError::Http(crate::Error::Http {
            url: "x".into(),
            source: ureq::Error::Io(refused),
        }));
        let AuthError::Unavailable(inner) = &e else {
            panic!("{e:?}")
        };
        // The transport failure itself, not a description of it.
        assert!(
            matches!(
                inner.downcast_ref::<crate::Error>(),
                Some(crate::Error::Http { .. })
            ),
            "{inner:?}"
        );
        assert!(matches!(
            introspection_failed(FlowError::Refused {
                url: "x".into(),
                error: "invalid_request".into(),
                description: None,
            }),
            AuthError::Invalid(_)
        ));
        assert!(matches!(
            introspection_failed(FlowError::Status {
                url: "x".into(),
                status: 503,
            }),
            AuthError::Unavailable(_)
        ));
    }

    #[test]
    fn expiry_and_start_are_numeric_dates_and_anything_else_is_refused() {
        let now = 1_000_000.0;
        let ok = |v: serde_json::Value| judge_times(&v, now);
        assert!(ok(json!({"active": true})).unwrap().is_none());
        assert_eq!(
            ok(json!({"active": true, "exp": now + 30.0})).unwrap(),
            Some(Duration::from_secs(30))
        );
        for bad in [
            json!({"active": false}),
            json!({"active": "true"}),
            json!({"active": true, "exp": now - 10.5}),
            json!({"active": true, "exp": now}),
            json!({"active": true, "exp": "1"}),
            json!({"active": true, "exp": [1]}),
            json!({"active": true, "nbf": now + 60.0}),
            json!({"active": true, "nbf": "soon"}),
        ] {
            assert!(
                matches!(ok(bad.clone()), Err(AuthError::Invalid(_))),
                "{bad}"
            );
        }
        assert!(ok(json!({"active": true, "nbf": now - 1.0, "exp": now + 0.5})).is_ok());
    }

    #[test]
    fn the_audience_is_a_string_or_a_list() {
        let r = "https://mcp.example/mcp";
        assert!(audience_names(&json!({"aud": r}), r));
        assert!(audience_names(
            &json!({"aud": "https://mcp.example/mcp/"}),
            r
        ));
        assert!(audience_names(&json!({"aud": ["x", r]}), r));
        assert!(!audience_names(
            &json!({"aud": "https://other.example/mcp"}),
            r
        ));
        assert!(!audience_names(&json!({}), r));
    }
}
