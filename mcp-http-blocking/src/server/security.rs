//! Checks that run before any MCP processing: Host and Origin allowlists (DNS rebinding),
//! CORS, bearer-token authorization, and the `=?base64?...?=` header encoding.

use crate::server::http::{HttpRequest, HttpResponse};

/// Which `Origin` header values are accepted. A request without `Origin` (not from a browser)
/// is always accepted; browsers always send it on cross-origin requests.
#[derive(Debug, Clone, Default)]
pub enum OriginPolicy {
    /// Only pages served from the local machine: `http(s)://localhost`, `127.0.0.1`, `[::1]`,
    /// any port (the default).
    #[default]
    Loopback,
    /// Exactly these origins (`https://app.example.com`); an entry may end in `:*` for any port.
    List(Vec<String>),
    /// Any origin (only for servers that authenticate every request).
    Any,
}

fn split_port(hostport: &str) -> (&str, Option<&str>) {
    if let Some(rest) = hostport.strip_prefix('[') {
        // IPv6 literal: [::1]:8080
        match rest.split_once(']') {
            Some((h, tail)) => (
                &hostport[..h.len() + 2],
                tail.strip_prefix(':').filter(|p| !p.is_empty()),
            ),
            None => (hostport, None),
        }
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    }
}

fn is_loopback_name(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host == "127.0.0.1" || host == "[::1]"
}

impl OriginPolicy {
    /// Whether `origin` passes.
    pub fn allows(&self, origin: &str) -> bool {
        match self {
            OriginPolicy::Any => true,
            OriginPolicy::Loopback => {
                let rest = origin
                    .strip_prefix("http://")
                    .or_else(|| origin.strip_prefix("https://"));
                match rest {
                    Some(hp) if !hp.contains('/') => is_loopback_name(split_port(hp).0),
                    _ => false,
                }
            }
            OriginPolicy::List(list) => list.iter().any(|allowed| {
                if let Some(prefix) = allowed.strip_suffix(":*") {
                    origin == prefix
                        || origin
                            .strip_prefix(prefix)
                            .and_then(|r| r.strip_prefix(':'))
                            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                } else {
                    origin == allowed
                }
            }),
        }
    }
}

/// Checks the Host header against the allowlist (`None`: loopback names only).
pub(crate) fn host_allowed(allowed: Option<&[String]>, host: &str) -> bool {
    let name = split_port(host.trim()).0;
    match allowed {
        None => is_loopback_name(name),
        Some(list) => list
            .iter()
            .any(|a| a == "*" || a.eq_ignore_ascii_case(name) || a.eq_ignore_ascii_case(host)),
    }
}

/// Whether `host` (a `Host` header) names `port`: its port, or 80 when it has none (the
/// resource URL built from it is `http://`).
pub(crate) fn host_names_port(host: &str, port: u16) -> bool {
    match split_port(host.trim()).1 {
        Some(p) => p.parse::<u16>().is_ok_and(|p| p == port),
        None => port == 80,
    }
}

/// Whether any `Host` passes `allowed` (a `*` in the list).
pub(crate) fn hosts_open(allowed: Option<&[String]>) -> bool {
    allowed.is_some_and(|l| l.iter().any(|a| a == "*"))
}

/// Why a token was refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum AuthError {
    /// Missing, malformed, expired or for another audience: 401. The text is protocol data,
    /// not an error value: the client gets it as the challenge's `error_description`.
    Invalid(String),
    /// Valid but lacking scope: 403 with `error="insufficient_scope"`.
    InsufficientScope {
        /// The scopes the request needs.
        scope: String,
    },
    /// The token could not be checked now (the authorization server did not answer): 503,
    /// so the client retries later rather than throwing a good token away. Holds the failure
    /// (for the log; the client learns nothing of it).
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthError::Invalid(why) => write!(f, "invalid token: {why}"),
            AuthError::InsufficientScope { scope } => write!(f, "insufficient scope: {scope}"),
            AuthError::Unavailable(e) => write!(f, "the token cannot be checked now: {e}"),
        }
    }
}

impl std::error::Error for AuthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AuthError::Unavailable(e) => Some(e.as_ref()),
            AuthError::Invalid(_) | AuthError::InsufficientScope { .. } => None,
        }
    }
}

/// Validates bearer tokens (signature, expiry, audience per RFC 8707, scopes). Called on every
/// request to the MCP endpoint; the claims it returns reach the service as
/// [`mcp_core::service::SessionInfo::auth`]. The token itself is never passed on.
pub trait Authorizer: Send + Sync {
    /// Checks `token` (the text after `Bearer `) for a request to `resource` (this server's
    /// canonical URL).
    ///
    /// # Errors
    /// [`AuthError`] when the request must be refused.
    fn authorize(&self, token: &str, resource: &str) -> Result<serde_json::Value, AuthError>;
}

/// Headers answering an allowed cross-origin request.
pub(crate) fn cors_headers(resp: &mut HttpResponse, origin: &str) {
    resp.headers
        .push(("Access-Control-Allow-Origin".into(), origin.into()));
    resp.headers.push((
        "Access-Control-Expose-Headers".into(),
        "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate".into(),
    ));
    resp.headers.push(("Vary".into(), "Origin".into()));
}

/// The answer to a CORS preflight from an allowed origin.
pub(crate) fn preflight(req: &HttpRequest, origin: &str) -> HttpResponse {
    // Mcp-Param-* names depend on the tool, so requested headers are echoed back when every one
    // is a plain token; anything else falls back to the fixed list.
    let fixed = "Content-Type, Accept, Authorization, MCP-Protocol-Version, Mcp-Session-Id, \
                 Mcp-Method, Mcp-Name, Last-Event-ID";
    let allow_headers = match req.header("Access-Control-Request-Headers") {
        Some(h)
            if h.split(',').all(|n| {
                let n = n.trim();
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            }) =>
        {
            h.to_owned()
        }
        _ => fixed.to_owned(),
    };
    let mut resp = HttpResponse::empty(204)
        .with_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
        .with_header("Access-Control-Allow-Headers", allow_headers)
        .with_header("Access-Control-Max-Age", "600");
    cors_headers(&mut resp, origin);
    resp
}

/// Decodes a header value that may use the `=?base64?...?=` form of 2026-07-28.
/// `None` when the form is used but the content is not strict base64 (see `mcp_core::base64::decode_strict`) or
/// not UTF-8. A value that only starts or only ends like the form is taken literally.
pub(crate) fn decode_header_value(v: &str) -> Option<String> {
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => String::from_utf8(mcp_core::base64::decode_strict(b64)?).ok(),
        None => Some(v.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_header_values_decode() {
        assert_eq!(
            decode_header_value("tools/call").as_deref(),
            Some("tools/call")
        );
        assert_eq!(
            decode_header_value("=?base64?5pel5pys6Kqe?=").as_deref(),
            Some("日本語")
        );
        assert_eq!(
            decode_header_value("=?base64?aGk=?=").as_deref(),
            Some("hi")
        );
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=?=").as_deref(),
            Some("Hello")
        );
        assert_eq!(decode_header_value("=?base64??=").as_deref(), Some(""));
        // Strict: missing padding, characters outside the alphabet, padding inside or beyond
        // the last group, spare bits set.
        for bad in [
            "aGk",
            "SGVsbG8",
            "a",
            "a$b=",
            "SGVs!!!bG8=",
            "aG=k",
            "aGk=aGk=",
            "a===",
            "aGl=",
        ] {
            assert_eq!(
                decode_header_value(&format!("=?base64?{bad}?=")),
                None,
                "{bad}"
            );
        }
        // Half the form is no form: the value is literal.
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=").as_deref(),
            Some("=?base64?SGVsbG8=")
        );
        assert_eq!(decode_header_value("SGVsbG8=").as_deref(), Some("SGVsbG8="));
    }

    #[test]
    fn origin_and_host_rules() {
        let p = OriginPolicy::Loopback;
        assert!(p.allows("http://localhost:3000"));
        assert!(p.allows("http://127.0.0.1"));
        assert!(p.allows("https://[::1]:8443"));
        assert!(!p.allows("http://evil.example"));
        assert!(!p.allows("http://localhost.evil.example"));
        assert!(!p.allows("null"));
        let l = OriginPolicy::List(vec!["https://app.example:*".into(), "https://x.y".into()]);
        assert!(l.allows("https://app.example:444"));
        assert!(l.allows("https://app.example"));
        assert!(!l.allows("https://app.example.evil:1"));
        assert!(l.allows("https://x.y"));
        assert!(!l.allows("https://x.y:1"));
        assert!(host_allowed(None, "localhost:8080"));
        assert!(host_allowed(None, "[::1]:1"));
        assert!(!host_allowed(None, "rebind.example:8080"));
        let hosts = vec!["mcp.example".to_owned()];
        assert!(host_allowed(Some(&hosts), "mcp.example:443"));
        assert!(!host_allowed(Some(&hosts), "localhost"));
    }
}
