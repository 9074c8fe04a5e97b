//! Keeping a sign-in across runs of the host: what an [`OAuthProvider`](super::OAuthProvider)
//! hands to an [`AuthStore`] after each new token, and takes back when it starts.
//!
//! A restored token is not sent at once. The provider first lets the server refuse a request
//! without a token, discovers its resource and authorization server as usual, and adopts the
//! saved token and client only when both are the ones they were saved for: a token never goes
//! to a server it was not issued for, whatever file the host happened to load.

use std::fmt;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::token::{MAX_LIFETIME, Token};

/// What a sign-in produced, in a form a host can keep (a file, the OS keychain). Serializes
/// with serde; it holds secrets, so store it as a password is stored.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedAuth {
    /// The protected resource the token is for (the RFC 8707 `resource`).
    pub resource: String,
    /// The token endpoint of the authorization server that issued the token and knows the
    /// client.
    pub token_endpoint: String,
    /// The client id there (registered, pre-registered or a metadata document URL).
    pub client_id: String,
    /// The secret of a dynamically registered confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint: `none`, `client_secret_basic`,
    /// `client_secret_post` or `private_key_jwt`.
    pub auth_method: String,
    /// The access token.
    pub access_token: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// The scopes granted.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// When the access token expires, in seconds since the Unix epoch, if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
}

impl fmt::Debug for SavedAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SavedAuth")
            .field("resource", &self.resource)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("auth_method", &self.auth_method)
            .field("scopes", &self.scopes)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// Where a provider keeps its [`SavedAuth`]. Called with the provider's lock held, so a slow
/// store delays the requests waiting for a token, nothing else.
///
/// ```
/// use std::path::PathBuf;
/// use mcp_http_blocking::oauth::{AuthStore, SavedAuth};
///
/// /// One JSON file per server (the host picks the path by server URL).
/// struct FileStore(PathBuf);
///
/// impl AuthStore for FileStore {
///     fn load(&self) -> Option<SavedAuth> {
///         serde_json::from_slice(&std::fs::read(&self.0).ok()?).ok()
///     }
///     fn save(&self, saved: &SavedAuth) {
///         if let Ok(json) = serde_json::to_vec(saved) {
///             // A real host would also make the file readable by the user alone.
///             let _ = std::fs::write(&self.0, json);
///         }
///     }
/// }
/// ```
pub trait AuthStore: Send + Sync {
    /// The saved sign-in, if any (read once, when the provider is made).
    fn load(&self) -> Option<SavedAuth>;
    /// Keeps `saved`, replacing what was there (after every new or refreshed token).
    fn save(&self, saved: &SavedAuth);
}

impl SavedAuth {
    /// The token as the provider holds it (an expiry in the past reads as "expired now").
    pub(crate) fn token(&self) -> Token {
        // The file may have been edited: an expiry past what the clocks hold reads as the
        // longest lifetime a token endpoint is believed for.
        let expires = self.expires_at.map(|at| {
            let left = UNIX_EPOCH
                .checked_add(Duration::from_secs(at))
                .map_or(Duration::from_secs(MAX_LIFETIME), |at| {
                    at.duration_since(SystemTime::now()).unwrap_or_default()
                })
                .min(Duration::from_secs(MAX_LIFETIME));
            Instant::now()
                .checked_add(left)
                .unwrap_or_else(Instant::now)
        });
        Token {
            access: self.access_token.clone(),
            refresh: self.refresh_token.clone(),
            scopes: self.scopes.clone(),
            expires,
            // The DPoP key is not saved, so a saved token is a bearer one (a bound token saved
            // by an earlier run is refused, and a new sign-in follows).
            dpop: false,
        }
    }
}

/// Seconds since the Unix epoch at `when` (an `Instant` of this process).
pub(crate) fn unix_secs(when: Instant) -> u64 {
    let left = when.saturating_duration_since(Instant::now());
    SystemTime::now()
        .checked_add(left)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(expires_at: Option<u64>) -> SavedAuth {
        SavedAuth {
            resource: "https://mcp.example/mcp".into(),
            token_endpoint: "https://as.example/token".into(),
            client_id: "c".into(),
            client_secret: Some("s3cret".into()),
            auth_method: "client_secret_basic".into(),
            access_token: "at".into(),
            refresh_token: Some("rt".into()),
            scopes: vec!["mcp:read".into()],
            expires_at,
        }
    }

    #[test]
    fn round_trips_through_json_and_hides_secrets_in_debug() {
        let s = saved(Some(4_000_000_000));
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<SavedAuth>(&json).unwrap(), s);
        let shown = format!("{s:?}");
        for secret in ["s3cret", "\"at\"", "\"rt\""] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }

    #[test]
    fn expiry_survives_the_trip_to_unix_time_and_back() {
        let in_an_hour = unix_secs(Instant::now() + Duration::from_secs(3600));
        let t = saved(Some(in_an_hour)).token();
        let left = t.expires.unwrap().saturating_duration_since(Instant::now());
        assert!((3590..=3600).contains(&left.as_secs()), "{left:?}");
        // An expiry in the past is "now": the provider refreshes before using the token.
        let t = saved(Some(1)).token();
        assert!(t.expires.unwrap() <= Instant::now());
        // An edited file's expiry past what the clocks hold is no crash, and saving a token
        // that lives as long as any is believed to works too.
        let t = saved(Some(u64::MAX)).token();
        let left = t.expires.unwrap().saturating_duration_since(Instant::now());
        assert!(left <= Duration::from_secs(MAX_LIFETIME), "{left:?}");
        assert!(unix_secs(t.expires.unwrap()) > 0);
    }
}
