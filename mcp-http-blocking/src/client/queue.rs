//! The HTTP client's receiving queue: [`mcp_core::queue`], bounded in bytes as well as in
//! messages, so a server cannot fill memory with few, large messages (256 of up to 16 MiB
//! each) while the client's reader falls behind, for example while its replies wait for a
//! server that never acknowledges them. This module only sizes the client's events.

use mcp_core::queue::message_size;
pub(crate) use mcp_core::queue::{DEFAULT_MAX_QUEUED_BYTES, Feeder, byte_bounded};
use mcp_core::transport::Incoming;

/// The bytes an event holds, about (a failure holds a short description).
pub(crate) fn incoming_size(ev: &Incoming) -> usize {
    const FAILURE: usize = 256;
    match ev {
        Incoming::Message(m) => message_size(m),
        _ => FAILURE,
    }
}
