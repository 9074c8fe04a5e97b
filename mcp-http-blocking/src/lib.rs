//! Streamable HTTP transport for MCP on plain threads.
//!
//! Not implemented yet: this crate is a placeholder in the workspace so the layout matches the
//! product description. It exports nothing, so nothing can mistake it for a working transport.
#![deny(missing_docs)]
