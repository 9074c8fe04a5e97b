//! What every handler of a request shares: the settings, the service, the legacy sessions, the
//! event store and, on the core of an [`crate::HttpServer`], the watchdog of inline handlers.

use std::sync::Arc;

use mcp_core::executor::Executor;
use mcp_core::service::{Sealer, Service};

use crate::server::answer::Watch;
use crate::server::config::HttpConfig;
use crate::server::sessions::Registry;
use crate::server::store::EventStore;

/// The state of one transport, shared by its clones and by the handlers of each era.
pub(crate) struct ServerContext {
    pub(crate) cfg: Arc<HttpConfig>,
    pub(crate) service: Arc<dyn Service>,
    pub(crate) sessions: Registry,
    pub(crate) store: Arc<dyn EventStore>,
    /// Present when sessions run handlers inline (the core of an [`crate::HttpServer`]).
    pub(crate) watch: Option<Watch>,
    /// With `watch`: delivers a legacy request to its session when the session runs handlers
    /// inside `handle` and the caller writes the answer itself (nobody could write it while
    /// the handler blocks). Idle workers end after 10 s.
    pub(crate) deliver: Option<Executor>,
    /// Given to every session: seals what 2026-07-28 clients carry between requests.
    pub(crate) sealer: Arc<dyn Sealer>,
    /// The port the carrying server listens on, when this crate's server carries it: a
    /// resource URL built from `Host` must name it (see `StreamableHttp::base_url`).
    pub(crate) listen_port: Option<u16>,
}
