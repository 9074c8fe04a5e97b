//! A high-level, blocking MCP server: register tools, resources, templates, prompts and
//! completers, then serve them on any transport.
//!
//! The kit computes the server's capabilities from what you register, runs handlers on a bounded
//! executor (`mcp_core::executor`: an idle worker, else a new one up to `max_workers`, else a
//! bounded queue), so a slow tool never blocks `ping` or cancellation, turns a panicking
//! handler into a -32603 error, and gives each handler a [`Context`] for progress, logging,
//! cancellation and the calls back to the client (sampling, elicitation, roots) — the same
//! handler code in the legacy and the 2026-07-28 era.
//!
//! The kit depends on `mcp-core` only. A transport crate runs it: `mcp_stdio::serve(server)`
//! for stdio, `mcp-http-blocking` for Streamable HTTP, both through the
//! [`Service`](mcp_core::service::Service) seam that [`Server`] implements.
//!
//! # A request's path through the kit
//!
//! 1. The transport opens a session through [`Server`] (`server`), which builds a `KitSession`
//!    over the state every session shares (`shared`: registry, config, executor).
//! 2. It hands each message to `Session::handle` (`session`), which steps `mcp-core`'s server
//!    engine; the engine answers `initialize`, `ping` and the like itself, and passes on the rest.
//! 3. Lists go straight to `dispatch`; calls to a handler go to a worker of the executor, or,
//!    where the transport lets `handle` block, run right there after `Outbound::will_block`
//!    (which stdio answers by handing its reading to another thread; skipped for handlers
//!    declared quick with `ServerBuilder::quick_handlers`).
//!    `dispatch` finds the tool, prompt, resource or completer and runs it under `catch_unwind`,
//!    opening and sealing `requestState` with `request_state`.
//! 4. The handler (`tool`, `resource`, `prompt`) gets a [`Context`] (`context`) for progress,
//!    logging and calls back to the client, which the session carries out.
//! 5. The session shapes the result for the request's protocol version and sends it on the
//!    transport's [`Outbound`](mcp_core::service::Outbound).
//!
//! A `tools/call` of a tool that runs as a task (tasks extension, feature `tasks`,
//! `Tool::task_support`) takes a side path at step 3: `tasks` stores the task in its
//! `TaskStore`, answers the handle at once and runs the same handler on the executor, where
//! the `Context` reports to the task; `tasks/get`, `tasks/update` and `tasks/cancel` are
//! answered from the store. Without the feature (the default) that path is not built: the
//! extension is never declared, `tasks/*` get -32601 and every call is an ordinary one.
//!
//! Agent Skills (the skills extension) are a catalog, [`skills::Skills`], given to
//! [`ServerBuilder::skills`]: `skills/list`, `skills/get` and `resources/directory/read` are
//! answered from it at step 3 like the lists, and `resources/read` of a `skill://` URI looks
//! there before the registry.
//!
//! # What handlers return
//!
//! Tools, resources and prompts take the same short forms, each converted by the kit
//! ([`IntoToolResult`], [`IntoResourceResult`], [`IntoPromptResult`]): a `String` or `&str`
//! (text content; a resource's text contents under the URI being read and the MIME type
//! declared on it; one user message), a [`Blob`] (bytes with a MIME type: image or audio
//! content, a resource's blob), JSON (`serde_json::Value`, or [`Structured`] to declare the
//! shape too), or the protocol's full result types when a handler needs more. A tool's text is
//! also its cheapest answer: it is written straight from the string, with no result object
//! built in between ([`IntoToolResult::into_text`]). Tool arguments ([`Tool::typed`]) and
//! prompt arguments ([`Prompt::typed`]) are types of their own, which publish their schema or
//! argument list.
//!
//! ```
//! use mcp_server_kit::{Context, Error, Server, Tool, schema::Schema};
//!
//! #[derive(serde::Deserialize)]
//! struct Args { message: String }
//!
//! let server = Server::builder("echo", "1.0.0")
//!     .tool(
//!         Tool::new("echo", |a: Args, _ctx: &Context| Ok::<_, Error>(a.message))
//!             .description("Echoes the message back")
//!             .input_schema(Schema::object().property("message", Schema::string())),
//!     )
//!     .build()?;
//! // mcp_stdio::serve(server) would now serve it on stdin/stdout.
//! # Ok::<(), Error>(())
//! ```
#![deny(missing_docs)]

// The derive names `::mcp_server_kit`; this lets the kit's own code use it too.
extern crate self as mcp_server_kit;

pub mod apps;
pub mod broadcast;
mod call_text;
mod context;
mod cursor;
mod dispatch;
mod error;
mod param_headers;
mod ping;
mod prompt;
mod rate;
mod request_state;
mod resource;
mod results;
pub mod schema;
mod server;
mod session;
mod shared;
#[cfg(feature = "skills")]
pub mod skills;
/// Without the `skills` feature: a catalog that cannot exist, so the kit's skills paths
/// compile away and skills requests get -32601.
#[cfg(not(feature = "skills"))]
#[path = "skills/off.rs"]
mod skills;
#[cfg(feature = "tasks")]
mod tasks;
/// Without the `tasks` feature: no task can be made, so the extension is never declared,
/// `tasks/*` get -32601 and every `tools/call` is an ordinary call.
#[cfg(not(feature = "tasks"))]
#[path = "tasks/off.rs"]
mod tasks;
mod tool;
pub mod uri_template;
pub mod validate;

pub use context::{Context, Elicited};
pub use error::{BadAnswer, Error, StartError};
pub use prompt::{Completer, IntoPromptResult, Prompt};
pub use rate::{RateLimit, RateLimited, RateLimits, RateLimitsBuilder};
pub use resource::{IntoResourceResult, Resource, ResourceTemplate};
pub use results::{Blob, IntoToolResult, Structured, with_mime};
pub use server::{Server, ServerBuilder};
#[cfg(feature = "tasks")]
pub use tasks::{DEFAULT_TASK_STORE_BYTES, MemoryTaskStore, TaskRecord, TaskStore, TaskStoreError};
pub use tool::{NoArgs, Tool};

/// Makes a plain function a tool: `NAME_tool()` beside it builds the [`Tool`] (feature
/// `derive`, on by default). The parameters are the arguments, with the schema
/// [`JsonSchema`](schema::JsonSchema) derives; the doc comments describe the tool and its
/// arguments; a `&Context` parameter gets the [`Context`].
///
/// ```
/// use mcp_server_kit::{Context, Server, tool};
///
/// /// Adds two integers.
/// #[tool]
/// fn add(
///     /// The first.
///     left: i32,
///     /// The second; 1 when left out.
///     right: Option<i32>,
/// ) -> i64 {
///     i64::from(left) + i64::from(right.unwrap_or(1))
/// }
///
/// /// Waits a while, reporting progress.
/// #[tool(name = "wait")]
/// fn wait_for(seconds: u8, ctx: &Context) -> Result<String, mcp_server_kit::Error> {
///     for s in 0..seconds {
///         if ctx.is_cancelled() {
///             return Err(mcp_server_kit::Error::Cancelled);
///         }
///         ctx.progress(f64::from(s), Some(f64::from(seconds)), None);
///     }
///     Ok("done".to_owned())
/// }
///
/// assert_eq!(add(2, None), 3); // still a plain function
/// let tool = add_tool();
/// let def = tool.definition();
/// assert_eq!(def.description.as_deref(), Some("Adds two integers."));
/// assert_eq!(def.input_schema["required"], serde_json::json!(["left"]));
/// assert_eq!(def.input_schema["properties"]["left"]["description"], "The first.");
/// let server = Server::builder("calc", "1").tool(tool).tool(wait_for_tool()).build()?;
/// # let _ = server;
/// # Ok::<(), mcp_server_kit::Error>(())
/// ```
#[cfg(feature = "derive")]
pub use mcp_derive::tool;

/// What the code `#[tool]` writes names; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use serde;
}

/// The protocol types handlers use, re-exported for convenience.
pub use mcp_core::types;
