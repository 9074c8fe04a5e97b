//! OAuth 2.1 for MCP clients (feature `oauth`): an [`OAuthProvider`] to put in
//! [`HttpClientConfig::auth`](crate::client::HttpClientConfig::auth). It waits for the server's
//! first 401 and then does what the MCP authorization spec asks of a client:
//!
//! 1. discovery: protected resource metadata (RFC 9728; the URL in `WWW-Authenticate`, else
//!    the path-based then the root well-known URL), checking that its `resource` covers the
//!    server URL; then the authorization server's metadata (RFC 8414 or OpenID Connect
//!    Discovery, in the 2025-11-25 order). A server with no resource metadata gets the
//!    2025-03-26 treatment: metadata at its origin, else `/authorize`, `/token`, `/register`;
//! 2. the client identity: pre-registered credentials, else a client ID metadata document URL
//!    when the server supports them, else dynamic client registration (RFC 7591, with the
//!    `application_type` of SEP-837);
//! 3. scopes: those of the challenge, else the resource's `scopes_supported`, else none;
//!    `offline_access` is added only when the authorization server lists it;
//! 4. a token: authorization code with PKCE S256 through the host's browser callback (with a
//!    `state` check and the RFC 9207 `iss` check), or client credentials, or cross-app access
//!    (RFC 8693 token exchange at the identity provider, then the RFC 7523 JWT bearer grant),
//!    or the JWT bearer grant with the host's own JWT (workload identity federation); always
//!    with the `resource` parameter (RFC 8707). Token endpoint authentication:
//!    `client_secret_basic`, `client_secret_post`, `none`, and `private_key_jwt` with feature
//!    `oauth-jwt`. With `oauth-jwt`, tokens are DPoP-bound (RFC 9449) when the authorization
//!    server takes ES256 proofs: every request then carries a fresh proof;
//! 5. later: refresh tokens when the token expires or is refused, and a scope step-up when a
//!    403 `insufficient_scope` asks for scopes the token lacks (never for scopes it already
//!    has: that loop cannot end well); a refused token that had worked makes the provider read
//!    the resource metadata again, and a new authorization server there gets a new
//!    registration and sign-in (SEP-2352);
//! 6. across runs of the host, with an [`AuthStore`] in [`OAuthConfig::store`]: every new token
//!    is saved with the client identity, and the next run adopts them (after checking that
//!    the server's resource and authorization server are the ones they were saved for) instead
//!    of signing in and registering again.

mod discovery;
#[cfg(feature = "oauth-jwt")]
mod dpop;
mod error;
mod http;
#[cfg(feature = "server")]
mod introspection;
#[cfg(feature = "oauth-jwt")]
mod jwt;
mod loopback;
mod pkce;
mod saved;
mod token;
mod url;

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use discovery::Discovered;
pub use error::FlowError;
#[cfg(feature = "server")]
pub use introspection::{Introspection, IntrospectionConfig, IntrospectionConfigBuilder};
#[cfg(feature = "oauth-jwt")]
pub use jwt::PrivateKey;
pub use loopback::LoopbackRedirect;
pub use saved::{AuthStore, SavedAuth};
pub use token::Token;

use crate::client::{AuthError, AuthProvider, Challenge};
#[cfg(feature = "oauth-jwt")]
use dpop::Dpop;
use http::Http;
use token::Registered;

/// Without feature `oauth-jwt` there is no DPoP (its ES256 is p256's): a type with no values,
/// so an `Option<&Dpop>` is always None and the token code needs no second version.
#[cfg(not(feature = "oauth-jwt"))]
enum Dpop {}

/// The host's browser step: gets the authorization URL, shows it to the user, and returns the
/// URL the authorization server redirected to (with `code` and `state`), or the host's own
/// error (the sign-in then fails with it).
pub type Browser =
    Arc<dyn Fn(&str) -> Result<String, Box<dyn std::error::Error + Send + Sync>> + Send + Sync>;

/// How the provider gets tokens.
#[derive(Clone)]
pub enum Grant {
    /// Authorization code with PKCE (a user signs in).
    AuthorizationCode {
        /// The redirect URI registered for the client.
        redirect_uri: String,
        /// The browser step.
        browser: Browser,
    },
    /// Client credentials (a machine acting for itself; needs [`OAuthConfig::credentials`]).
    ClientCredentials,
    /// Cross-app access (enterprise-managed authorization): the user's identity assertion
    /// from their identity provider is exchanged there for an identity assertion grant
    /// (RFC 8693), which the MCP server's authorization server takes as a JWT bearer grant
    /// (RFC 7523). Needs [`OAuthConfig::credentials`] for the authorization server.
    CrossApp(CrossApp),
    /// The JWT bearer grant (RFC 7523 §2.1) with a JWT the host already has, such as a
    /// workload's identity token from its platform (workload identity federation, SEP-1933).
    /// The source is called for every token request, so it can hand out a fresh JWT when the
    /// last one has expired. A refusal is final for that request: the same JWT would be
    /// refused again, and another grant would not be what the host asked for.
    /// [`OAuthConfig::credentials`] are optional (the client id, if the server wants one).
    JwtBearer(Assertion),
}

/// Where the [`Grant::JwtBearer`] assertion comes from: called for each token request.
/// A failure is the host's own error.
pub type Assertion =
    Arc<dyn Fn() -> Result<String, Box<dyn std::error::Error + Send + Sync>> + Send + Sync>;

impl fmt::Debug for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Grant::AuthorizationCode { redirect_uri, .. } => f
                .debug_struct("AuthorizationCode")
                .field("redirect_uri", redirect_uri)
                .finish_non_exhaustive(),
            Grant::ClientCredentials => f.write_str("ClientCredentials"),
            Grant::JwtBearer(_) => f.write_str("JwtBearer(..)"),
            Grant::CrossApp(c) => f
                .debug_struct("CrossApp")
                .field("idp_token_endpoint", &c.idp_token_endpoint)
                .finish_non_exhaustive(),
        }
    }
}

/// What cross-app access needs from the identity provider.
#[derive(Clone)]
#[non_exhaustive]
pub struct CrossApp {
    /// The identity provider's token endpoint.
    pub(crate) idp_token_endpoint: String,
    /// The user's ID token from the identity provider.
    pub(crate) id_token: String,
    /// This client's id at the identity provider.
    pub(crate) idp_client_id: Option<String>,
    /// This client's secret at the identity provider (sent with `client_secret_post`).
    pub(crate) idp_client_secret: Option<String>,
}

impl CrossApp {
    /// A builder starting from the defaults, with the settings that have none.
    pub fn builder(
        idp_token_endpoint: impl Into<String>,
        id_token: impl Into<String>,
    ) -> CrossAppBuilder {
        CrossAppBuilder {
            config: CrossApp {
                idp_token_endpoint: idp_token_endpoint.into(),
                id_token: id_token.into(),
                idp_client_id: None,
                idp_client_secret: None,
            },
        }
    }

    /// The identity provider's token endpoint.
    pub fn idp_token_endpoint(&self) -> &str {
        &self.idp_token_endpoint
    }

    /// The user's ID token from the identity provider.
    pub fn id_token(&self) -> &str {
        &self.id_token
    }

    /// This client's id at the identity provider.
    pub fn idp_client_id(&self) -> Option<&str> {
        self.idp_client_id.as_deref()
    }

    /// This client's secret at the identity provider (sent with `client_secret_post`).
    pub fn idp_client_secret(&self) -> Option<&str> {
        self.idp_client_secret.as_deref()
    }
}

/// Builds a [`CrossApp`]: one method per setting, named after it, then
/// [`build`](CrossAppBuilder::build).
#[derive(Clone)]
#[must_use]
pub struct CrossAppBuilder {
    config: CrossApp,
}

impl CrossAppBuilder {
    /// This client's id at the identity provider.
    pub fn idp_client_id(mut self, v: impl Into<String>) -> Self {
        self.config.idp_client_id = Some(v.into());
        self
    }

    /// This client's secret at the identity provider (sent with `client_secret_post`).
    pub fn idp_client_secret(mut self, v: impl Into<String>) -> Self {
        self.config.idp_client_secret = Some(v.into());
        self
    }

    /// The finished [`CrossApp`].
    pub fn build(self) -> CrossApp {
        self.config
    }
}

/// Client credentials the host already has (pre-registration).
#[derive(Clone)]
#[non_exhaustive]
pub struct Credentials {
    /// The client id.
    pub(crate) client_id: String,
    /// The client secret, for `client_secret_basic` / `client_secret_post`.
    pub(crate) client_secret: Option<String>,
    /// A P-256 key for `private_key_jwt` (feature `oauth-jwt`).
    #[cfg(feature = "oauth-jwt")]
    pub(crate) private_key: Option<PrivateKey>,
    /// The authorization server that issued them, when the host says.
    pub(crate) issuer: Option<String>,
}

impl Credentials {
    /// A builder starting from the defaults, with the settings that have none.
    pub fn builder(client_id: impl Into<String>) -> CredentialsBuilder {
        CredentialsBuilder {
            config: Credentials::new(client_id.into()),
        }
    }

    /// The client id.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The client secret, for `client_secret_basic` / `client_secret_post`.
    pub fn client_secret(&self) -> Option<&str> {
        self.client_secret.as_deref()
    }

    /// A P-256 key for `private_key_jwt` (feature `oauth-jwt`).
    #[cfg(feature = "oauth-jwt")]
    pub fn private_key(&self) -> Option<&PrivateKey> {
        self.private_key.as_ref()
    }

    /// The authorization server (its issuer identifier) that issued these credentials, if
    /// set.
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }
}

/// Builds a [`Credentials`]: one method per setting, named after it, then
/// [`build`](CredentialsBuilder::build).
#[derive(Clone)]
#[must_use]
pub struct CredentialsBuilder {
    config: Credentials,
}

impl CredentialsBuilder {
    /// The client secret, for `client_secret_basic` / `client_secret_post`.
    pub fn client_secret(mut self, v: impl Into<String>) -> Self {
        self.config.client_secret = Some(v.into());
        self
    }

    /// A P-256 key for `private_key_jwt` (feature `oauth-jwt`).
    #[cfg(feature = "oauth-jwt")]
    pub fn private_key(mut self, v: PrivateKey) -> Self {
        self.config.private_key = Some(v);
        self
    }

    /// The authorization server (its issuer identifier, exactly as its metadata names it)
    /// that issued these credentials: they are sent to no other. Without it, they are bound to
    /// the first authorization server discovery names, and a server that later names
    /// another is refused ([`FlowError::IssuerMismatch`]): a client id means something at
    /// one authorization server only, and a secret shown to another is a secret lost.
    pub fn issuer(mut self, v: impl Into<String>) -> Self {
        self.config.issuer = Some(v.into());
        self
    }

    /// The finished [`Credentials`].
    pub fn build(self) -> Credentials {
        self.config
    }
}

impl Credentials {
    /// A client id with no secret (a public client) until one is set.
    fn new(client_id: String) -> Credentials {
        Credentials {
            client_id,
            client_secret: None,
            #[cfg(feature = "oauth-jwt")]
            private_key: None,
            issuer: None,
        }
    }
}

/// Settings of an [`OAuthProvider`].
#[derive(Clone)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// How tokens are obtained.
    pub(crate) grant: Grant,
    /// `client_name` for dynamic registration.
    pub(crate) client_name: String,
    /// `application_type` for dynamic registration (SEP-837: `native` or `web`). None: the
    /// one the redirect URI implies: `native` for a loopback, `localhost` or private-use
    /// scheme redirect, `web` otherwise.
    pub(crate) application_type: Option<String>,
    /// Pre-registered credentials (used instead of any registration).
    pub(crate) credentials: Option<Credentials>,
    /// The URL of this client's ID metadata document, used as its `client_id` when the
    /// authorization server supports them.
    pub(crate) client_metadata_url: Option<String>,
    /// Fixed scopes to ask for, instead of choosing them from the challenge and metadata.
    pub(crate) scopes: Option<Vec<String>>,
    /// Ask for a refresh token (`offline_access` when the server lists it; the
    /// `refresh_token` grant in registration).
    pub(crate) offline_access: bool,
    /// Longest wait for one HTTP exchange with an authorization server (default 30 s).
    pub(crate) timeout: Duration,
    /// Most scope step-ups in a row (default 2).
    pub(crate) max_step_ups: u32,
    /// Where the sign-in is kept across runs (default none: it lasts as long as the provider).
    pub(crate) store: Option<Arc<dyn AuthStore>>,
    /// Ask for DPoP-bound tokens (RFC 9449, SEP-1932) when the authorization server signs
    /// them with ES256 (`dpop_signing_alg_values_supported`; default true): a token that leaks
    /// is then useless without the provider's key, which never leaves the process.
    #[cfg(feature = "oauth-jwt")]
    pub(crate) dpop: bool,
}

impl OAuthConfig {
    /// A builder starting from the defaults, with the settings that have none.
    pub fn builder(grant: Grant) -> OAuthConfigBuilder {
        OAuthConfigBuilder {
            config: OAuthConfig::new(grant),
        }
    }

    /// How tokens are obtained.
    pub fn grant(&self) -> &Grant {
        &self.grant
    }

    /// `client_name` for dynamic registration.
    pub fn client_name(&self) -> &str {
        &self.client_name
    }

    /// `application_type` for dynamic registration (SEP-837: `native` or `web`). None: the
    /// one the redirect URI implies: `native` for a loopback, `localhost` or private-use
    /// scheme redirect, `web` otherwise.
    pub fn application_type(&self) -> Option<&str> {
        self.application_type.as_deref()
    }

    /// Pre-registered credentials (used instead of any registration).
    pub fn credentials(&self) -> Option<&Credentials> {
        self.credentials.as_ref()
    }

    /// The URL of this client's ID metadata document, used as its `client_id` when the
    /// authorization server supports them.
    pub fn client_metadata_url(&self) -> Option<&str> {
        self.client_metadata_url.as_deref()
    }

    /// Fixed scopes to ask for, instead of choosing them from the challenge and metadata.
    pub fn scopes(&self) -> Option<&[String]> {
        self.scopes.as_deref()
    }

    /// Ask for a refresh token (`offline_access` when the server lists it; the
    /// `refresh_token` grant in registration).
    pub fn offline_access(&self) -> bool {
        self.offline_access
    }

    /// Longest wait for one HTTP exchange with an authorization server (default 30 s).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Most scope step-ups in a row (default 2).
    pub fn max_step_ups(&self) -> u32 {
        self.max_step_ups
    }

    /// Where the sign-in is kept across runs (default none: it lasts as long as the provider).
    pub fn store(&self) -> Option<&Arc<dyn AuthStore>> {
        self.store.as_ref()
    }

    /// Ask for DPoP-bound tokens (RFC 9449, SEP-1932) when the authorization server signs
    /// them with ES256 (`dpop_signing_alg_values_supported`; default true): a token that leaks
    /// is then useless without the provider's key, which never leaves the process.
    #[cfg(feature = "oauth-jwt")]
    pub fn dpop(&self) -> bool {
        self.dpop
    }
}

/// Builds a [`OAuthConfig`]: one method per setting, named after it, then
/// [`build`](OAuthConfigBuilder::build).
#[derive(Clone)]
#[must_use]
pub struct OAuthConfigBuilder {
    config: OAuthConfig,
}

impl OAuthConfigBuilder {
    /// `client_name` for dynamic registration.
    pub fn client_name(mut self, v: impl Into<String>) -> Self {
        self.config.client_name = v.into();
        self
    }

    /// `application_type` for dynamic registration (SEP-837: `native` or `web`). None: the
    /// one the redirect URI implies: `native` for a loopback, `localhost` or private-use
    /// scheme redirect, `web` otherwise.
    pub fn application_type(mut self, v: impl Into<String>) -> Self {
        self.config.application_type = Some(v.into());
        self
    }

    /// Pre-registered credentials (used instead of any registration).
    pub fn credentials(mut self, v: Credentials) -> Self {
        self.config.credentials = Some(v);
        self
    }

    /// The URL of this client's ID metadata document, used as its `client_id` when the
    /// authorization server supports them.
    pub fn client_metadata_url(mut self, v: impl Into<String>) -> Self {
        self.config.client_metadata_url = Some(v.into());
        self
    }

    /// Fixed scopes to ask for, instead of choosing them from the challenge and metadata.
    pub fn scopes(mut self, v: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.config.scopes = Some(v.into_iter().map(Into::into).collect());
        self
    }

    /// Ask for a refresh token (`offline_access` when the server lists it; the
    /// `refresh_token` grant in registration).
    pub fn offline_access(mut self, v: bool) -> Self {
        self.config.offline_access = v;
        self
    }

    /// Longest wait for one HTTP exchange with an authorization server (default 30 s).
    pub fn timeout(mut self, v: Duration) -> Self {
        self.config.timeout = v;
        self
    }

    /// Most scope step-ups in a row (default 2).
    pub fn max_step_ups(mut self, v: u32) -> Self {
        self.config.max_step_ups = v;
        self
    }

    /// Where the sign-in is kept across runs (default none: it lasts as long as the provider).
    pub fn store(mut self, v: Arc<dyn AuthStore>) -> Self {
        self.config.store = Some(v);
        self
    }

    /// Ask for DPoP-bound tokens (RFC 9449, SEP-1932) when the authorization server signs
    /// them with ES256 (`dpop_signing_alg_values_supported`; default true): a token that leaks
    /// is then useless without the provider's key, which never leaves the process.
    #[cfg(feature = "oauth-jwt")]
    pub fn dpop(mut self, v: bool) -> Self {
        self.config.dpop = v;
        self
    }

    /// The finished [`OAuthConfig`].
    pub fn build(self) -> OAuthConfig {
        self.config
    }
}

impl OAuthConfig {
    /// A builder for the authorization code grant with PKCE through `browser` (the usual
    /// [`builder`](OAuthConfig::builder) with [`Grant::AuthorizationCode`]).
    pub fn authorization_code(
        redirect_uri: impl Into<String>,
        browser: Browser,
    ) -> OAuthConfigBuilder {
        OAuthConfig::builder(Grant::AuthorizationCode {
            redirect_uri: redirect_uri.into(),
            browser,
        })
    }

    /// Any grant, with the defaults for the rest.
    fn new(grant: Grant) -> OAuthConfig {
        OAuthConfig {
            grant,
            client_name: concat!("mcp-http-blocking/", env!("CARGO_PKG_VERSION")).to_owned(),
            application_type: None,
            credentials: None,
            client_metadata_url: None,
            scopes: None,
            offline_access: true,
            timeout: Duration::from_secs(30),
            max_step_ups: 2,
            store: None,
            #[cfg(feature = "oauth-jwt")]
            dpop: true,
        }
    }
}

impl OAuthProvider {
    /// The resource server wants its nonce in the proofs (RFC 9449 §9): keep it and retry.
    /// A retry even when the nonce is the one already kept: another request may have
    /// brought it while this one was under way with an older proof. The client bounds the
    /// rounds of one request (three), so a server
    /// that refuses its own nonce cannot make it loop.
    fn dpop_nonce(&self, st: &State, ch: &Challenge) -> Result<(), FlowError> {
        #[cfg(feature = "oauth-jwt")]
        if let (Some(dp), Some(n)) = (&st.dpop, &ch.dpop_nonce) {
            dp.set_rs_nonce(n);
            return Ok(());
        }
        let _ = (self, st);
        Err(FlowError::BadAnswer {
            url: ch.url.clone(),
            what: if ch.dpop_nonce.is_none() {
                "asks for a DPoP nonce without giving one"
            } else {
                "asks for a DPoP nonce for a token that is not a DPoP one"
            },
        })
    }
}

/// An OAuth 2.1 [`AuthProvider`]. See the [module](self) docs.
pub struct OAuthProvider {
    cfg: OAuthConfig,
    http: Http,
    state: Mutex<State>,
}

impl fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthProvider")
            .field("grant", &self.cfg.grant)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    found: Option<Discovered>,
    client: Option<Registered>,
    token: Option<Token>,
    step_ups: u32,
    /// The authorization server the pre-registered credentials went to first (its issuer,
    /// else its token endpoint): the only one they go to.
    credentials_for: Option<String>,
    /// What the store had when the provider was made: adopted once discovery shows it fits.
    restore: Option<SavedAuth>,
    /// The DPoP key, made when a first authorization server takes DPoP.
    #[cfg(feature = "oauth-jwt")]
    dpop: Option<Arc<Dpop>>,
}

impl OAuthProvider {
    /// A provider with these settings (nothing happens before the first refusal).
    pub fn new(cfg: OAuthConfig) -> OAuthProvider {
        let http = Http::new(cfg.timeout, &cfg.client_name);
        let restore = cfg.store.as_ref().and_then(|s| s.load());
        OAuthProvider {
            cfg,
            http,
            state: Mutex::new(State {
                restore,
                ..State::default()
            }),
        }
    }

    /// A browser step for hosts with no user: GETs the authorization URL without following
    /// the redirect and returns its `Location`. Right for authorization servers that
    /// approve at once (tests, conformance suites), useless for a real sign-in page.
    pub fn headless_browser(timeout: Duration) -> Browser {
        let http = Http::new(timeout, "mcp-http-blocking-oauth");
        Arc::new(move |url: &str| Ok(http.location(url)?))
    }

    /// The current token, if any.
    pub fn token(&self) -> Option<Token> {
        self.lock().token.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Discovery, unless done already for the same resource metadata URL (and `afresh` is
    /// false). When it finds another authorization server than before (SEP-2352: the
    /// resource moved), nothing of the old one is kept: its client id, token and refresh
    /// token mean nothing at the new one, and must not be shown to it.
    fn discovered(
        &self,
        st: &mut State,
        ch: &Challenge,
        afresh: bool,
    ) -> Result<Discovered, FlowError> {
        if let (Some(d), false) = (&st.found, afresh) {
            let same = match ch.resource_metadata() {
                Some(u) => d.metadata_url.as_deref() == Some(u),
                None => true,
            };
            if same {
                return Ok(d.clone());
            }
        }
        let d = discovery::discover(
            &self.http,
            &ch.url,
            ch.resource_metadata(),
            ch.protocol_version.as_deref(),
        )?;
        if let Some(old) = &st.found {
            let moved = old.server.issuer != d.server.issuer
                || old.server.token_endpoint != d.server.token_endpoint;
            if moved {
                log::info!(
                    "{} now uses the authorization server {}: signing in there afresh",
                    ch.url,
                    d.server
                        .issuer
                        .as_deref()
                        .unwrap_or(&d.server.token_endpoint)
                );
                st.client = None;
                st.token = None;
                st.step_ups = 0;
            }
        }
        st.found = Some(d.clone());
        Ok(d)
    }

    /// The scopes to ask for: fixed ones, else the challenge's, else the resource's
    /// `scopes_supported`, else none; plus `offline_access` when wanted and listed.
    fn select_scopes(&self, ch: &Challenge, d: &Discovered) -> Vec<String> {
        let mut scopes = self
            .cfg
            .scopes
            .clone()
            .or_else(|| ch.scopes())
            .or_else(|| d.resource_scopes.clone())
            .unwrap_or_default();
        self.add_offline_access(&mut scopes, d);
        scopes
    }

    fn add_offline_access(&self, scopes: &mut Vec<String>, d: &Discovered) {
        let listed = d
            .server
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == "offline_access"));
        let code = matches!(self.cfg.grant, Grant::AuthorizationCode { .. });
        if self.cfg.offline_access
            && code
            && listed
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".into());
        }
    }

    /// Gets a token for `scopes` with the configured grant.
    /// Errors: a [`FlowError`], the host's own (browser step, JWT source) inside
    /// [`FlowError::Host`]; [`AuthError::Failed`] keeps it as the source.
    fn obtain(
        &self,
        st: &mut State,
        d: &Discovered,
        scopes: &[String],
    ) -> Result<Token, FlowError> {
        let dpop = self.dpop_for(st, d)?;
        let dpop = dpop.as_deref();
        let token = match &self.cfg.grant {
            Grant::AuthorizationCode {
                redirect_uri,
                browser,
            } => {
                token::can_authorize(d)?;
                let client = self.client(st, d, redirect_uri)?;
                token::authorization_code(
                    &self.http,
                    d,
                    &client,
                    redirect_uri,
                    browser,
                    scopes,
                    dpop,
                )?
            }
            Grant::ClientCredentials => {
                let client = self.preregistered(st, d)?;
                st.client = Some(client.clone());
                token::client_credentials(&self.http, d, &client, scopes, dpop)?
            }
            Grant::CrossApp(x) => {
                let client = self.preregistered(st, d)?;
                st.client = Some(client.clone());
                token::cross_app(&self.http, d, &client, x, scopes, dpop)?
            }
            Grant::JwtBearer(source) => {
                let client = self
                    .credentials(st, d)?
                    .map(|c| Registered::from_credentials(c, &d.server));
                st.client.clone_from(&client);
                let jwt = source().map_err(FlowError::Host)?;
                token::jwt_bearer(&self.http, d, client.as_ref(), &jwt, scopes, dpop)?
            }
        };
        st.token = Some(token.clone());
        self.save(st);
        Ok(token)
    }

    /// The DPoP key to prove possession of, when this authorization server takes ES256 DPoP
    /// proofs and the configuration wants DPoP (made the first time).
    #[cfg(feature = "oauth-jwt")]
    fn dpop_for(&self, st: &mut State, d: &Discovered) -> Result<Option<Arc<Dpop>>, FlowError> {
        let es256 = d
            .server
            .dpop_signing_algs
            .as_ref()
            .is_some_and(|a| a.iter().any(|x| x == "ES256"));
        if !self.cfg.dpop || !es256 {
            return Ok(None);
        }
        if st.dpop.is_none() {
            st.dpop = Some(Arc::new(Dpop::generate()?));
        }
        Ok(st.dpop.clone())
    }

    /// Without feature `oauth-jwt`: never DPoP.
    #[cfg(not(feature = "oauth-jwt"))]
    fn dpop_for(&self, _st: &mut State, _d: &Discovered) -> Result<Option<Arc<Dpop>>, FlowError> {
        Ok(None)
    }

    /// The current token, refreshed first when it is about to expire.
    fn current(&self, st: &mut State) -> Option<Token> {
        let expired = st
            .token
            .as_ref()
            .and_then(|t| t.expires)
            .is_some_and(|e| Instant::now() + Duration::from_secs(10) >= e);
        if expired {
            self.refresh(st);
        }
        st.token.clone()
    }

    /// Hands the current token and client to the store, if there is one.
    fn save(&self, st: &State) {
        let (Some(store), Some(d), Some(client), Some(token)) =
            (&self.cfg.store, &st.found, &st.client, &st.token)
        else {
            return;
        };
        store.save(&SavedAuth {
            resource: d.resource.clone(),
            token_endpoint: d.server.token_endpoint.clone(),
            client_id: client.client_id.clone(),
            client_secret: client.secret().map(str::to_owned),
            auth_method: client.method_name().to_owned(),
            access_token: token.access.clone(),
            refresh_token: token.refresh.clone(),
            scopes: token.scopes.clone(),
            expires_at: token.expires.map(saved::unix_secs),
        });
    }

    /// Adopts the saved sign-in when it was saved for this resource and authorization
    /// server; true when its access token is there to try.
    fn adopt_saved(&self, st: &mut State, d: &Discovered) -> bool {
        let Some(saved) = st.restore.take() else {
            return false;
        };
        if saved.resource != d.resource || saved.token_endpoint != d.server.token_endpoint {
            log::info!(
                "not using the saved sign-in: it is for {} at {}, this server is {} at {}",
                saved.resource,
                saved.token_endpoint,
                d.resource,
                d.server.token_endpoint
            );
            return false;
        }
        if st.client.is_none() {
            // Pre-registered credentials come from the configuration, not the store.
            let Ok(credentials) = self.credentials(st, d) else {
                return false;
            };
            st.client = match credentials {
                Some(c) => Some(Registered::from_credentials(c, &d.server)),
                None => Registered::restored(
                    &saved.client_id,
                    saved.client_secret.as_deref(),
                    &saved.auth_method,
                ),
            };
        }
        st.token = Some(saved.token());
        true
    }

    fn preregistered(&self, st: &mut State, d: &Discovered) -> Result<Registered, FlowError> {
        let c = self.credentials(st, d)?.ok_or(FlowError::Config(
            "this grant needs pre-registered client credentials",
        ))?;
        Ok(Registered::from_credentials(c, &d.server))
    }

    /// The pre-registered credentials, if any, for this authorization server: the one they
    /// name, or the first they went to (any other is refused, never shown them).
    fn credentials(
        &self,
        st: &mut State,
        d: &Discovered,
    ) -> Result<Option<&Credentials>, FlowError> {
        let Some(c) = &self.cfg.credentials else {
            return Ok(None);
        };
        let here = d
            .server
            .issuer
            .clone()
            .unwrap_or_else(|| d.server.token_endpoint.clone());
        let bound = c.issuer.as_ref().or(st.credentials_for.as_ref());
        if let Some(bound) = bound {
            if *bound != here {
                return Err(FlowError::IssuerMismatch {
                    expected: bound.clone(),
                    got: Some(here),
                });
            }
        }
        st.credentials_for.get_or_insert(here);
        Ok(Some(c))
    }

    /// The client identity for the authorization code grant (kept once known).
    fn client(
        &self,
        st: &mut State,
        d: &Discovered,
        redirect_uri: &str,
    ) -> Result<Registered, FlowError> {
        if let Some(c) = &st.client {
            return Ok(c.clone());
        }
        let c = if let Some(creds) = self.credentials(st, d)? {
            Registered::from_credentials(creds, &d.server)
        } else if let (Some(url), true) = (
            &self.cfg.client_metadata_url,
            d.server.client_id_metadata_documents,
        ) {
            Registered::metadata_document(url)
        } else {
            token::register(
                &self.http,
                &d.server,
                &self.cfg.client_name,
                redirect_uri,
                self.cfg.offline_access,
                self.cfg.application_type.as_deref(),
            )?
        };
        st.client = Some(c.clone());
        Ok(c)
    }

    /// Uses the refresh token, if there is one; true when a new token came.
    fn refresh(&self, st: &mut State) -> bool {
        let Some(d) = st.found.clone() else {
            return false;
        };
        // A bound token's refresh token is bound too (RFC 9449 §5): the proof goes with it.
        let dpop = match st.token.as_ref().map(|t| t.dpop) {
            Some(true) => self.dpop_for(st, &d).ok().flatten(),
            _ => None,
        };
        let (Some(tok), Some(client)) = (&st.token, &st.client) else {
            return false;
        };
        let Some(rt) = tok.refresh.clone() else {
            return false;
        };
        match token::refresh(&self.http, &d, client, &rt, &tok.scopes, dpop.as_deref()) {
            Ok(t) => {
                st.token = Some(t);
                self.save(st);
                true
            }
            Err(e) => {
                log::info!("refreshing the token failed: {e}");
                st.token = None;
                false
            }
        }
    }
}

impl AuthProvider for OAuthProvider {
    fn authorization(&self) -> Option<String> {
        let mut st = self.lock();
        self.current(&mut st).as_ref().map(Token::header)
    }

    /// `Authorization`, and for a DPoP-bound token a fresh proof for this method and URL,
    /// with the token's hash and the server's latest nonce.
    fn request_headers(&self, method: &str, url: &str) -> Vec<(String, String)> {
        let mut st = self.lock();
        let Some(token) = self.current(&mut st) else {
            return Vec::new();
        };
        let authorization = ("Authorization".to_owned(), token.header());
        #[cfg(feature = "oauth-jwt")]
        if let (true, Some(dp)) = (token.dpop, &st.dpop) {
            let nonce = dp.rs_nonce();
            return match dp.proof(method, url, Some(&token.access), nonce.as_deref()) {
                Ok(p) => vec![authorization, ("DPoP".to_owned(), p)],
                Err(e) => {
                    log::warn!("no DPoP proof for {method} {url}: {e}");
                    vec![authorization]
                }
            };
        }
        let _ = (method, url);
        vec![authorization]
    }

    fn challenged(&self, ch: &Challenge) -> Result<(), AuthError> {
        let mut st = self.lock();
        let current = st.token.as_ref().map(Token::header);
        if current.is_some() && current != ch.sent {
            // Another request already got a new token: just retry.
            return Ok(());
        }
        if ch.status == 401 && ch.error() == Some("use_dpop_nonce") {
            return self.dpop_nonce(&st, ch).map_err(AuthError::failed);
        }
        if ch.insufficient_scope() {
            let needed = ch.scopes().unwrap_or_default();
            let have = st
                .token
                .as_ref()
                .map(|t| t.scopes.clone())
                .unwrap_or_default();
            if needed.is_empty() || needed.iter().all(|s| have.contains(s)) {
                return Err(AuthError::ScopesAlreadyHeld { needed, have });
            }
            if st.step_ups >= self.cfg.max_step_ups {
                return Err(AuthError::TooManyStepUps(self.cfg.max_step_ups));
            }
            st.step_ups += 1;
            let d = self
                .discovered(&mut st, ch, false)
                .map_err(AuthError::failed)?;
            let mut scopes = have;
            for s in needed {
                if !scopes.contains(&s) {
                    scopes.push(s);
                }
            }
            self.add_offline_access(&mut scopes, &d);
            self.obtain(&mut st, &d, &scopes)
                .map_err(AuthError::failed)?;
            return Ok(());
        }
        if ch.status != 401 {
            return Err(AuthError::NotAChallenge(ch.status));
        }
        // A token that worked is refused: the resource may have moved to another authorization
        // server (SEP-2352), so its metadata is read again rather than trusted from before.
        let d = self
            .discovered(&mut st, ch, current.is_some())
            .map_err(AuthError::failed)?;
        if current.is_none() && self.adopt_saved(&mut st, &d) {
            let fresh = st
                .token
                .as_ref()
                .and_then(|t| t.expires)
                .is_none_or(|e| Instant::now() + Duration::from_secs(10) < e);
            if fresh || self.refresh(&mut st) {
                return Ok(());
            }
        }
        if current.is_some() && self.refresh(&mut st) {
            return Ok(());
        }
        st.step_ups = 0;
        let scopes = self.select_scopes(ch, &d);
        self.obtain(&mut st, &d, &scopes)
            .map_err(AuthError::failed)?;
        Ok(())
    }
}
