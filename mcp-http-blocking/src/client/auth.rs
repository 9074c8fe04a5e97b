//! The authorization hook of the HTTP client: an [`AuthProvider`] gives the `Authorization`
//! header of every request to the MCP endpoint, and hears the server's refusals (401, and 403
//! with `insufficient_scope`) as a parsed [`Challenge`], so it can get a token (or more scopes)
//! before the client sends the request again. The client bounds the rounds per request
//! ([`AUTH_ROUNDS`]), so a provider that keeps saying "try again" cannot loop forever.
//!
//! The OAuth 2.1 provider is in [`crate::oauth`] (feature `oauth`); [`BearerToken`] is the plain
//! static one.

use std::fmt;

/// Most refusals answered with a new token before the request fails: the first 401, then a
/// scope step-up or two.
pub(crate) const AUTH_ROUNDS: u32 = 3;

/// Supplies the `Authorization` header and reacts to refusals. Called from the client's request
/// threads, possibly at the same time: implementations lock what they share.
pub trait AuthProvider: Send + Sync + fmt::Debug {
    /// The `Authorization` header value for the next request (`Bearer ...`), or None to send
    /// none.
    fn authorization(&self) -> Option<String>;

    /// Every header that authorizes a request with HTTP `method` to `url` (without query):
    /// `Authorization`, and what must go with it. A sender-constrained token (DPoP, RFC 9449)
    /// needs a proof made for this very method and URL, fresh for each request, which a single
    /// header value cannot carry. The default is the [`authorization`](Self::authorization)
    /// value alone.
    fn request_headers(&self, method: &str, url: &str) -> Vec<(String, String)> {
        let _ = (method, url);
        self.authorization()
            .map(|a| vec![("Authorization".to_owned(), a)])
            .unwrap_or_default()
    }

    /// The server refused a request (HTTP 401, or 403). Return `Ok(())` once a retry can
    /// succeed (a new token is ready); `Err` says why not, and the request fails with it.
    /// This may block for as long as authorizing takes (a user in a browser).
    ///
    /// # Errors
    /// Why authorizing failed or cannot help; it becomes part of the request's error.
    fn challenged(&self, challenge: &Challenge) -> Result<(), AuthError>;
}

/// Why an [`AuthProvider`] cannot answer a refusal with a better token.
#[derive(Debug)]
#[non_exhaustive]
pub enum AuthError {
    /// A fixed token ([`BearerToken`]) was refused: there is nothing else to offer.
    FixedTokenRefused {
        /// The HTTP status (401 or 403).
        status: u16,
        /// The challenge's `error` parameter, if any.
        error: Option<String>,
    },
    /// The server asks for scopes that the token already has.
    ScopesAlreadyHeld {
        /// The scopes the challenge names.
        needed: Vec<String>,
        /// The token's scopes.
        have: Vec<String>,
    },
    /// The server kept asking for more scopes beyond the provider's limit of step-ups.
    TooManyStepUps(u32),
    /// The refusal is not an authorization challenge (a 403 without `insufficient_scope`).
    NotAChallenge(u16),
    /// Getting a token failed (discovery, registration, the token endpoint, the user): the
    /// provider's own error. The crate's OAuth provider puts an `oauth::FlowError` here (feature
    /// `oauth`): `downcast_ref::<FlowError>()` tells a refusal from an outage.
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::FixedTokenRefused { status, error } => {
                write!(f, "the fixed bearer token was refused (HTTP {status}")?;
                if let Some(e) = error {
                    write!(f, ", {e}")?;
                }
                f.write_str(")")
            }
            AuthError::ScopesAlreadyHeld { needed, have } => write!(
                f,
                "the server wants scopes [{}] and the token already has [{}]",
                needed.join(" "),
                have.join(" ")
            ),
            AuthError::TooManyStepUps(n) => write!(f, "gave up after {n} scope step-ups"),
            AuthError::NotAChallenge(status) => {
                write!(f, "HTTP {status} is not an authorization challenge")
            }
            AuthError::Failed(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for AuthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AuthError::Failed(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

impl AuthError {
    /// [`AuthError::Failed`] with this error.
    pub fn failed(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> AuthError {
        AuthError::Failed(e.into())
    }
}

/// A refusal by the server, with its `WWW-Authenticate` challenge.
#[derive(Debug, Clone, Default)]
pub struct Challenge {
    /// The HTTP status (401 or 403).
    pub status: u16,
    /// The MCP endpoint URL the request went to.
    pub url: String,
    /// The `Authorization` header the refused request carried (to tell a stale refusal, one
    /// that another request's new token already answered, from a fresh one).
    pub sent: Option<String>,
    /// The scheme of the challenge read: `Bearer`, else `DPoP` (RFC 9449 §7.1), else empty.
    pub scheme: String,
    /// The parameters of that challenge (names lower-cased), in order.
    pub params: Vec<(String, String)>,
    /// The response's `DPoP-Nonce` header (RFC 9449 §9): the nonce the server wants in the
    /// next proof, with `error="use_dpop_nonce"`.
    pub dpop_nonce: Option<String>,
    /// The MCP revision of the refused request (the session's, or the one its `initialize`
    /// asks for): a provider sends it as `MCP-Protocol-Version` on its discovery requests, so
    /// the server can answer them for that revision (the authorization spec's SHOULD).
    pub protocol_version: Option<String>,
}

impl Challenge {
    /// Builds a challenge from the `WWW-Authenticate` header values of a response (the
    /// `Bearer` one is used, else the `DPoP` one; without either, the parameters stay empty).
    pub fn new(status: u16, url: &str, sent: Option<String>, headers: &[&str]) -> Challenge {
        let all: Vec<_> = headers
            .iter()
            .flat_map(|h| parse_www_authenticate(h))
            .collect();
        let pick = |name: &str| all.iter().find(|(s, _)| s.eq_ignore_ascii_case(name));
        let (scheme, params) = pick("bearer")
            .or_else(|| pick("dpop"))
            .cloned()
            .unwrap_or_default();
        Challenge {
            status,
            url: url.to_owned(),
            sent,
            scheme,
            params,
            dpop_nonce: None,
            protocol_version: None,
        }
    }

    /// The same challenge with the MCP revision of the refused request.
    pub fn with_protocol_version(mut self, version: Option<String>) -> Challenge {
        self.protocol_version = version;
        self
    }

    /// The same challenge with the response's `DPoP-Nonce` header value.
    pub fn with_dpop_nonce(mut self, nonce: Option<String>) -> Challenge {
        self.dpop_nonce = nonce;
        self
    }

    /// One parameter's value (name case-insensitive).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The protected resource metadata URL (RFC 9728 §5.1).
    pub fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata")
    }

    /// The scopes the server asks for (space-separated in the header).
    pub fn scopes(&self) -> Option<Vec<String>> {
        // An empty `scope` names none: as if it were absent (the resource's own list then
        // decides), not a demand for no scope at all.
        let scopes: Vec<String> = self
            .param("scope")?
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        (!scopes.is_empty()).then_some(scopes)
    }

    /// The `error` code (`invalid_token`, `insufficient_scope`).
    pub fn error(&self) -> Option<&str> {
        self.param("error")
    }

    /// True for a 403 that asks for more scopes (a step-up can help).
    pub fn insufficient_scope(&self) -> bool {
        self.status == 403 && self.error() == Some("insufficient_scope")
    }
}

/// Parses a `WWW-Authenticate` value (RFC 9110 §11.6.1): one or more challenges, each a scheme
/// followed by `name=value` or `name="quoted value"` parameters (a bare token68 is skipped).
pub(crate) fn parse_www_authenticate(header: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let b = header.as_bytes();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && (b[*i] == b' ' || b[*i] == b'\t' || b[*i] == b',') {
            *i += 1;
        }
    };
    let is_token = |c: u8| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/".contains(&c);
    loop {
        skip_ws(&mut i);
        if i >= b.len() {
            return out;
        }
        // A token: a scheme, or a parameter name when `=` follows.
        let start = i;
        while i < b.len() && is_token(b[i]) {
            i += 1;
        }
        if i == start {
            // Not a token: skip one byte so malformed input cannot stall the loop.
            i += 1;
            continue;
        }
        let word = &header[start..i];
        let mut j = i;
        while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
            j += 1;
        }
        let is_param = j < b.len() && b[j] == b'=' && !out.is_empty() && {
            // `token68==` (padding) is not a parameter.
            !(j + 1 < b.len() && b[j + 1] == b'=')
        };
        if !is_param {
            // A new challenge's scheme (or a token68, which we keep as nothing).
            if j < b.len() && b[j] == b'=' {
                i = j;
                while i < b.len() && b[i] == b'=' {
                    i += 1;
                }
                continue;
            }
            out.push((word.to_owned(), Vec::new()));
            continue;
        }
        i = j + 1;
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        let value = if i < b.len() && b[i] == b'"' {
            i += 1;
            let mut v = String::new();
            let mut chars = header[i..].char_indices();
            let mut end = header.len();
            while let Some((k, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, e)) = chars.next() {
                            v.push(e);
                        }
                    }
                    '"' => {
                        end = i + k + 1;
                        break;
                    }
                    _ => v.push(c),
                }
            }
            i = end;
            v
        } else {
            let s = i;
            while i < b.len() && b[i] != b',' && b[i] != b' ' && b[i] != b'\t' {
                i += 1;
            }
            header[s..i].to_owned()
        };
        if let Some((_, params)) = out.last_mut() {
            params.push((word.to_ascii_lowercase(), value));
        }
    }
}

/// A fixed token sent as `Authorization: Bearer TOKEN`; a refusal is final.
#[derive(Clone)]
pub struct BearerToken(String);

impl BearerToken {
    /// A provider that always sends `token`.
    pub fn new(token: impl Into<String>) -> BearerToken {
        BearerToken(token.into())
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

impl AuthProvider for BearerToken {
    fn authorization(&self) -> Option<String> {
        Some(format!("Bearer {}", self.0))
    }

    fn challenged(&self, challenge: &Challenge) -> Result<(), AuthError> {
        Err(AuthError::FixedTokenRefused {
            status: challenge.status,
            error: challenge.error().map(str::to_owned),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_parameters_quoted_and_plain() {
        let h = r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", error_description="a \"quoted\" word""#;
        let c = Challenge::new(403, "http://x/mcp", None, &[h]);
        assert_eq!(c.error(), Some("insufficient_scope"));
        assert_eq!(
            c.scopes(),
            Some(vec!["mcp:basic".to_owned(), "mcp:write".to_owned()])
        );
        assert_eq!(
            c.resource_metadata(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.param("ERROR_description"), Some(r#"a "quoted" word"#));
        assert!(c.insufficient_scope());
        let plain = Challenge::new(401, "u", None, &["Bearer realm=mcp,error=invalid_token"]);
        assert_eq!(plain.param("realm"), Some("mcp"));
        assert_eq!(plain.error(), Some("invalid_token"));
        assert!(!plain.insufficient_scope());
    }

    #[test]
    fn several_challenges_and_token68() {
        let all = parse_www_authenticate(r#"Basic abc==, Bearer scope="a", DPoP algs="ES256""#);
        let schemes: Vec<&str> = all.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(schemes, ["Basic", "Bearer", "DPoP"]);
        assert!(all[0].1.is_empty());
        assert_eq!(all[1].1, [("scope".to_owned(), "a".to_owned())]);
        let empty = Challenge::new(401, "u", None, &[r#"Bearer scope="", realm="r""#]);
        assert_eq!(empty.scopes(), None, "an empty scope names none");
        let c = Challenge::new(401, "u", None, &["Basic realm=\"x\"", "Bearer scope=s"]);
        assert_eq!(c.param("scope"), Some("s"));
        assert_eq!(c.param("realm"), None);
    }

    #[test]
    fn a_dpop_challenge_is_read_when_there_is_no_bearer_one() {
        let h = r#"DPoP error="use_dpop_nonce", resource_metadata="http://x/prm""#;
        let c = Challenge::new(401, "u", None, &[h]).with_dpop_nonce(Some("n-1".into()));
        assert_eq!(c.scheme, "DPoP");
        assert_eq!(c.error(), Some("use_dpop_nonce"));
        assert_eq!(c.resource_metadata(), Some("http://x/prm"));
        assert_eq!(c.dpop_nonce.as_deref(), Some("n-1"));
        let both = Challenge::new(401, "u", None, &[r#"DPoP algs="ES256", Bearer scope="a""#]);
        assert_eq!(both.scheme, "Bearer");
        assert_eq!(both.param("scope"), Some("a"));
    }

    #[test]
    fn malformed_headers_do_not_panic() {
        for h in [
            "",
            "=",
            "Bearer =",
            "Bearer a=\"unterminated",
            ",,,",
            "Bearer a=b=c",
            "ü=\"ä\"",
        ] {
            let _ = parse_www_authenticate(h);
        }
        let c = Challenge::new(401, "u", None, &["Bearer"]);
        assert!(c.params.is_empty());
    }
}
