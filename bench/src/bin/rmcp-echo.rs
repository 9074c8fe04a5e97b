//! rmcp's stdio server on a multi-threaded tokio runtime, the way rmcp documents a stdio server:
//! a `#[tool_router]` handler served over `rmcp::transport::stdio()` (or `stdio_pipes()` with
//! `--pipes`).
//!
//! Same tool as our `echo`: `echo` with a required string `message`, one text block back.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::transport::{stdio, stdio_pipes};
use rmcp::{ServiceExt, tool, tool_router};

#[derive(serde::Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct EchoArgs {
    /// Text to echo
    message: String,
}

#[derive(Clone)]
struct Echo;

#[tool_router(server_handler)]
impl Echo {
    #[tool(description = "Echoes the message back as text")]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        args.message
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `--pipes`: rmcp's non-blocking pipe transport, which its docs recommend when stdin and
    // stdout are pipes (as under stdio-bench); the default `stdio()` reads and writes on
    // tokio's blocking pool.
    let service = if std::env::args().any(|a| a == "--pipes") {
        Echo.serve(stdio_pipes()).await?
    } else {
        Echo.serve(stdio()).await?
    };
    service.waiting().await?;
    Ok(())
}
