//! Typed MCP messages for every released revision (2024-11-05 .. 2026-07-28).
//!
//! One set of Rust types covers all five revisions: a field that not every revision has is an
//! `Option` left out when `None`, and every struct keeps the fields it does not know in
//! `extra` (the schemas allow them), so decoding and re-encoding loses nothing. Types are
//! named after the schema definitions (`CallToolRequestParams`, `CallToolResult`, `Tool`...).
//!
//! What a given peer revision may receive is decided by [`shape`], which trims (or refuses)
//! a serialized message for that revision. The typed method sets ([`ClientRequest`],
//! [`ServerRequest`], [`ClientNotification`], [`ServerNotification`]) turn raw
//! [`jsonrpc`](crate::jsonrpc) messages into these types and back.
//!
//! ```
//! use mcp_core::types::{CallToolResult, ClientRequest, CallToolRequestParams};
//!
//! let req = ClientRequest::CallTool(CallToolRequestParams::new("echo")).to_request(1).unwrap();
//! assert_eq!(req.method, "tools/call");
//! let back = ClientRequest::from_request(&req).unwrap();
//! assert_eq!(back.method(), "tools/call");
//! let json = serde_json::to_string(&CallToolResult::text("hi")).unwrap();
//! assert_eq!(json, r#"{"content":[{"type":"text","text":"hi"}]}"#);
//! ```

mod common;
mod completion;
mod content;
mod definitions;
mod elicitation;
mod input_required;
mod lifecycle;
mod logging;
mod messages;
pub mod methods;
mod notifications;
mod pagination;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod sans_meta;
pub mod shape;
pub mod skills;
mod subscriptions;
mod tasks;
pub mod tasks_ext;
mod tools;

pub use common::*;
pub use completion::*;
pub use content::*;
pub use definitions::*;
pub use elicitation::*;
pub use input_required::*;
pub use lifecycle::*;
pub use logging::*;
pub use messages::*;
pub use notifications::*;
pub use pagination::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use subscriptions::*;
pub use tasks::*;
pub use tools::*;
