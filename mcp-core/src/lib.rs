//! The Model Context Protocol as plain data and a sans-I/O state machine.
//!
//! `mcp-core` holds every MCP message of every released revision (2024-11-05 .. 2026-07-28),
//! the JSON-RPC codec, version negotiation for both eras, and the engine that applies the
//! protocol rules (lifecycle, request ids, pending requests, cancellation, progress, timeouts as
//! data). It never opens a socket or reads a clock: transports and servers are built on top
//! (`mcp-stdio`, `mcp-http-blocking`, `mcp-server-kit`). The one place that starts threads is
//! [`executor`], the bounded pool those three share, so that they grow threads and push back
//! on their callers by one policy.
//!
//! # A request's path through the crate
//!
//! 1. A transport decodes the bytes into a [`Message`](jsonrpc::Message) (`jsonrpc`) and hands it to the
//!    [`Session`](service::Session) it opened through the `service` seam.
//! 2. The session steps the server engine ([`engine::ServerEngine::handle`]), which settles the
//!    era and version (`version`), reads the `_meta` envelope, checks the method and capability
//!    gates and records the request as pending; it answers the lifecycle itself and hands the
//!    rest back as [`engine::ServerStep::Dispatch`].
//! 3. The session reads the params as typed messages (`types`), works out the result, fits it to
//!    the peer's revision ([`types::shape`]) and answers through the engine
//!    ([`engine::ServerEngine::respond`], which drops the answer to a cancelled request); the
//!    message goes out, encoded by `jsonrpc`, through the [`Outbound`](service::Outbound).
//!
//! A client runs the same path the other way round through [`engine::ClientEngine`].
//!
//! ```
//! use mcp_core::jsonrpc::{decode, Message};
//!
//! let msg = decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
//! assert_eq!(msg.method(), Some("ping"));
//! assert_eq!(msg.to_vec(), br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
//! ```
#![deny(missing_docs)]

pub mod base64;
pub mod engine;
pub mod executor;
pub mod id_map;
pub mod jsonrpc;
pub mod queue;
pub mod service;
pub mod transport;
pub mod types;
pub mod version;
mod word_scan;
