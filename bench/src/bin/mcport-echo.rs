//! mcport's inline server (`McpServer`): the tool runs on the thread that reads stdin.
//!
//! One tool, `echo`, with a required string `message`, answered as one text block: the same
//! surface as this project's `examples/src/bin/echo.rs`, so `stdio-bench` sends all of them the
//! same bytes.

use mcp_compare::{EchoArgs, echo_schema};
use mcport::{McpServer, ToolReply};

fn main() -> std::io::Result<()> {
    let schema = echo_schema();
    McpServer::new("mcport-echo", env!("CARGO_PKG_VERSION"))
        .typed_tool(
            "echo",
            "Echoes the message back as text",
            schema,
            // literal_text: the message itself, not its JSON encoding (`ToolReply::text` would
            // add quotes), as our echo answers.
            |args: EchoArgs| ToolReply::literal_text(args.message),
        )
        .serve()
}
