//! The Model Context Protocol as plain data and a sans-I/O state machine.
//!
//! `mcp-core` holds every MCP message of every released revision (2024-11-05 .. 2026-07-28),
//! the JSON-RPC codec, version negotiation for both eras, and the engine that applies the
//! protocol rules (lifecycle, request ids, pending requests, cancellation, progress, timeouts as
//! data). It never starts a thread, opens a socket or reads a clock: transports and servers are
//! built on top (`mcp-stdio`, `mcp-http-blocking`, `mcp-server-kit`).
//!
//! ```
//! use mcp_core::jsonrpc::{decode, Message};
//!
//! let msg = decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
//! assert_eq!(msg.method(), Some("ping"));
//! assert_eq!(msg.to_vec(), br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
//! ```
#![deny(missing_docs)]

pub mod engine;
pub mod jsonrpc;
pub mod service;
pub mod types;
pub mod version;

pub use jsonrpc::{ErrorObject, Message, RequestId};
pub use version::{Era, ProtocolVersion};
