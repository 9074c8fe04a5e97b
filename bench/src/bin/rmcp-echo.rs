//! rmcp's stdio server on a multi-threaded tokio runtime, the way rmcp documents a stdio server:
//! a `#[tool_router]` handler served over `rmcp::transport::stdio()`.
//!
//! Same tool as our `echo`: `echo` with a required string `message`, one text block back.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::transport::stdio;
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
    let service = Echo.serve(stdio()).await?;
    service.waiting().await?;
    Ok(())
}
