//! A blocking MCP client on plain threads: no async runtime, no futures.
//!
//! What it is for: a host program that talks to MCP servers and wants ordinary function
//! calls. [`Client`] does the handshake of either protocol era (the 2026-07-28 `server/discover`
//! with its per-request `_meta`, or the legacy `initialize`, or both with a fallback), then
//! offers one blocking method per request: [`Client::list_tools`] (an iterator that follows
//! `nextCursor`), [`Client::call_tool`], [`Client::read_resource`], [`Client::get_prompt`],
//! [`Client::complete`], [`Client::listen`] / [`Client::subscribe`], and so on. Skills (the
//! `io.modelcontextprotocol/skills` extension) are listed with [`Client::list_skills`] and
//! read one verified file at a time with [`Client::read_skill_file`]. The server's
//! own questions (sampling, elicitation, roots) go to handlers registered on the
//! [`ClientBuilder`]; in 2026-07-28 they arrive inside `input_required` results and the
//! client retries the call with the answers, so the caller never sees the difference.
//!
//! What it is not for: it knows no transport by itself beyond a pair of channels
//! ([`Transport`]); the stdio child-process transport ([`StdioTransport`]) is here, and the
//! Streamable HTTP one (`mcp-http-blocking`'s client) is glued in only with the `http`
//! feature (`ClientBuilder::connect_http`), so a stdio-only host pulls in no HTTP crate.
//!
//! Threads: one reader per connection (drives the sans-I/O
//! [`ClientEngine`](mcp_core::engine::ClientEngine), routes answers, enforces timeouts) and one
//! that runs the handlers for legacy server requests, so the reader never waits on user code.
//! Each call waits on its own bounded channel with a deadline. When the server goes away,
//! every waiting call fails at once with [`Error::Closed`] saying why.
//!
//! A request's path through the modules: `builder` does the handshake and makes the
//! [`Client`]; `client` checks the params and runs the `input_required` rounds; `call` applies
//! the [`CallOptions`] and waits for the answer; `connection` (the engine state and the reader
//! thread) numbers the request, registers its waiter and puts it on the [`Transport`]
//! (`transport`, or `http` for Streamable HTTP); the reader thread matches the server's answer
//! to the waiter and sends server requests to `handlers`; back in `client` the result is
//! decoded. `pages` and `listen` are built on the same calls; every failure is an `error`
//! [`Error`].
//!
//! ```no_run
//! use mcp_client::{CallOptions, Client, Revision};
//! use mcp_stdio::ChildBuilder;
//! use serde_json::json;
//!
//! # fn main() -> Result<(), mcp_client::Error> {
//! let client = Client::builder()
//!     .client_info("demo-host", "0.1.0")
//!     .revision(Revision::Auto)
//!     .spawn(ChildBuilder::new("my-mcp-server"))?;
//! for tool in client.list_tools() {
//!     println!("{}", tool?.name);
//! }
//! let options = CallOptions::new().on_progress(|p| eprintln!("{} / {:?}", p.progress, p.total));
//! let result = client.call_tool_with("echo", json!({"text": "hi"}), &options)?;
//! println!("{:?}", result.content);
//! client.close()?;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

/// The crate's README, whose Rust blocks are compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod apps;
mod builder;
mod call;
mod client;
mod connection;
mod era_cache;
mod error;
mod handlers;
#[cfg(feature = "http")]
mod http;
mod list_limits;
mod listen;
mod pages;
mod skills;
mod task_handle;
mod tasks;
mod tool_tasks;
mod transport;

pub use builder::{ClientBuilder, Revision};
pub use call::{CallOptions, CancelHandle, TaskCallback};
pub use client::{Client, MAX_INPUT_REQUESTS, MAX_INPUT_ROUNDS, NO_ARGUMENTS};
pub use connection::{NotificationCallback, ProgressCallback};
pub use era_cache::EraCache;
pub use error::{Closed, Error, SharedError, Unexpected};
pub use handlers::{ElicitationHandler, RootsProvider, SamplingHandler};
#[cfg(feature = "http")]
pub use http::{
    AuthError, AuthProvider, BearerToken, Challenge, HttpClientConfig, HttpClientConfigBuilder,
    HttpTransport,
};
pub use listen::Subscription;
/// OAuth 2.1 for HTTP servers (feature `oauth`): see [`oauth::OAuthProvider`].
#[cfg(feature = "oauth")]
pub use mcp_http_blocking::oauth;
pub use pages::{PageKind, Pages, Prompts, ResourceTemplates, Resources, Tools};
pub use skills::{SkillEntries, SkillError, SkillFile};
pub use task_handle::{DEFAULT_POLL_INTERVAL, MAX_POLL_INTERVAL, MIN_POLL_INTERVAL, TaskHandle};
pub use tasks::{MAX_TASK_INPUTS, Started};
pub use transport::{ChannelTransport, StdioTransport, Transport};

pub use mcp_core::engine::{ProgressUpdate, Timeout};
pub use mcp_core::types::LoggingLevel;
/// A task as `tasks/get` describes it (the tasks extension).
pub use mcp_core::types::tasks_ext::DetailedTask;
