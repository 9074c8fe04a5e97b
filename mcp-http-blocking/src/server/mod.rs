//! The Streamable HTTP server, in layers that import downward only:
//!
//! 1. [`HttpServer`] (`http_server/`): the HTTP server, sockets and one thread per connection;
//!    it hands each request to the core.
//! 2. [`StreamableHttp`] (`streamable`): the transport core, independent of any HTTP server:
//!    Host, Origin and authorization checks, routing by path and method, and the choice of era
//!    for a POST; it calls the era handlers.
//! 3. The era handlers: `legacy` (sessions, GET streams, DELETE, the 2024-11-05 pair, over the
//!    session registry in `sessions`) and `stateless` (2026-07-28 exchanges). They share the
//!    transport's state (`context`) and hand each request's messages to the layer below.
//! 4. Answer delivery (`answer/`): a stream's messages in, a JSON or SSE answer out, and the
//!    escape that lets an answer start on another thread while its handler still runs.
//! 5. Shapes and settings that every layer uses: `http` (requests, responses, SSE bodies),
//!    `config`, `security`, `store`, and `seal` (the sealing of what 2026-07-28 clients
//!    carry between requests).

mod answer;
mod config;
mod context;
mod http;
mod http_server;
mod legacy;
mod seal;
mod security;
mod sessions;
mod stateless;
mod store;
mod streamable;

pub use config::{AuthConfig, AuthConfigBuilder, HttpConfig, HttpConfigBuilder, InstanceTag};
pub use http::{Body, EventBytes, HttpRequest, HttpResponse, SseBody, SseNext, StreamEnd};
pub use http_server::{HttpServer, HttpServerBuilder, ServerHandle};
pub use seal::{StateSealer, StateSecret};
#[cfg(all(test, feature = "client"))]
pub(crate) use security::decode_header_value;
pub use security::{AuthError, Authorizer, OriginPolicy};
pub use store::{EventStore, MemoryEventStore};
pub use streamable::{StreamableHttp, Sweeper};

/// Locks `m`, taking over the lock when a thread panicked while holding it. Every critical
/// section in the server is one take, store, insert, remove or walk, so a panic cannot leave
/// the data half-updated; refusing the poisoned lock instead would turn one panicked handler
/// into a server whose every later request panics too.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
