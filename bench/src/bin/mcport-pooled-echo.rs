//! mcport's controlled runtime (`ConcurrentMcpServer`) with its default `RuntimeConfig`: a
//! reader, a pool of handler threads and one ordered writer.
//!
//! Same tool as `mcport-echo`; only the runtime differs, so the two rows show what mcport's
//! hand-off to workers costs.

use mcp_compare::{EchoArgs, echo_schema};
use mcport::{ConcurrentMcpServer, RequestContext, RuntimeConfig, ToolReply};

fn main() -> std::io::Result<()> {
    let schema = echo_schema();
    ConcurrentMcpServer::new("mcport-pooled-echo", env!("CARGO_PKG_VERSION"))
        .typed_tool(
            "echo",
            "Echoes the message back as text",
            schema,
            |_ctx: &RequestContext, args: EchoArgs| ToolReply::literal_text(args.message),
        )
        .serve(RuntimeConfig::default())
}
