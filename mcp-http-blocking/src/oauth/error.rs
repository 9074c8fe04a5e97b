//! Why getting a token failed: the one error type of the OAuth flow. The provider hands it to
//! the HTTP client inside [`AuthError::Failed`](crate::client::AuthError::Failed), where a host
//! finds it again with `downcast_ref::<FlowError>()` on the source, to tell a user who refused
//! from a server that is down.

use std::fmt;

/// Why the OAuth flow could not get a token.
#[derive(Debug)]
#[non_exhaustive]
pub enum FlowError {
    /// An exchange with an endpoint failed below HTTP (connection, TLS, timeout, an answer
    /// over the size limit): [`crate::Error::Http`], with the URL.
    Http(crate::Error),
    /// An endpoint answered with an HTTP status the flow cannot use, and no OAuth error.
    Status {
        /// The endpoint.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// Refused with an OAuth error: by an endpoint (RFC 6749 §5.2, RFC 7591 §3.2.2), or by
    /// the user or the authorization server at the authorization step (§4.1.2.1, `url` is
    /// then the authorization endpoint).
    Refused {
        /// Who refused.
        url: String,
        /// The `error` code, such as `invalid_grant` or `access_denied`.
        error: String,
        /// The `error_description`, if any (protocol text from the server, for a log).
        description: Option<String>,
    },
    /// An answer lacks what the flow needs, or is not what the standards say.
    BadAnswer {
        /// Who answered.
        url: String,
        /// What is wrong with it.
        what: &'static str,
    },
    /// No metadata was found for the authorization server: each well-known URL was tried.
    NoMetadata {
        /// The issuer.
        issuer: String,
        /// The last failure, when a URL failed rather than had nothing.
        last: Option<Box<FlowError>>,
    },
    /// The resource metadata is for another resource than the server asked for: following
    /// it would hand a token for one server to another (RFC 9728 §3.3).
    WrongResource {
        /// The resource the metadata names.
        resource: String,
        /// The MCP server's URL.
        server: String,
    },
    /// The authorization server's metadata or response names another issuer than expected
    /// (RFC 8414 §3.3, RFC 9207), or omits the `iss` it promised.
    IssuerMismatch {
        /// The issuer expected.
        expected: String,
        /// The issuer named, if any.
        got: Option<String>,
    },
    /// The redirect's `state` is not the request's: a possible cross-site request forgery.
    StateMismatch,
    /// The authorization server cannot serve this client as configured (no PKCE with S256,
    /// no authorization endpoint, no registration and no credentials, ...).
    Unsupported(&'static str),
    /// A URL given or found is not an absolute http(s) URL.
    NotAUrl(String),
    /// The loopback redirect listener failed, or no redirect came in time
    /// ([`std::io::ErrorKind::TimedOut`]).
    Redirect(std::io::Error),
    /// The host's own part failed (opening the browser, the assertion or token source): its
    /// error, kept as the source.
    Host(Box<dyn std::error::Error + Send + Sync>),
    /// The configuration cannot work (for example `private_key_jwt` without a key).
    Config(&'static str),
    /// No randomness from the operating system, or a key could not be made or used.
    Crypto(&'static str),
}

impl FlowError {
    /// An OAuth error answer's `error` code, if this is one.
    pub fn oauth_error(&self) -> Option<&str> {
        match self {
            FlowError::Refused { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl fmt::Display for FlowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlowError::Http(e) => fmt::Display::fmt(e, f),
            FlowError::Status { url, status } => write!(f, "{url}: HTTP {status}"),
            FlowError::Refused {
                url,
                error,
                description,
            } => {
                write!(f, "{url} refused: {error}")?;
                match description {
                    Some(d) => write!(f, " ({d})"),
                    None => Ok(()),
                }
            }
            FlowError::BadAnswer { url, what } => write!(f, "{url}: {what}"),
            FlowError::NoMetadata { issuer, last } => {
                write!(f, "no metadata for the authorization server {issuer}")?;
                match last {
                    Some(e) => write!(f, " ({e})"),
                    None => Ok(()),
                }
            }
            FlowError::WrongResource { resource, server } => write!(
                f,
                "the resource metadata is for {resource}, not for {server}: refusing to authorize"
            ),
            FlowError::IssuerMismatch { expected, got } => match got {
                Some(g) => write!(f, "the issuer is {g:?}, not {expected:?}: refused"),
                None => write!(
                    f,
                    "no issuer named, although {expected} promises one: refused"
                ),
            },
            FlowError::StateMismatch => f.write_str(
                "the redirect's state does not match the request's (possible CSRF): refused",
            ),
            FlowError::Unsupported(why) => write!(f, "the authorization server {why}"),
            FlowError::NotAUrl(u) => write!(f, "not an http(s) URL: {u:?}"),
            FlowError::Redirect(e) => write!(f, "the redirect: {e}"),
            FlowError::Host(e) => fmt::Display::fmt(e, f),
            FlowError::Config(why) | FlowError::Crypto(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for FlowError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FlowError::Http(e) => Some(e),
            FlowError::NoMetadata { last: Some(e), .. } => Some(e.as_ref()),
            FlowError::Redirect(e) => Some(e),
            FlowError::Host(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}
