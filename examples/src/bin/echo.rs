//! The smallest useful MCP server: one tool, `echo`, that answers its `message` as text.
//! Run it under any MCP client as a stdio server: `target/release/echo`.
use mcp_server_kit::{Context, Error, Server, Tool, schema::JsonSchema};

#[derive(serde::Deserialize, JsonSchema)]
struct EchoArgs {
    /// Text to echo
    message: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server =
        mcp_examples::configure(Server::builder("echo", env!("CARGO_PKG_VERSION")), &args)?
            .tool(
                // The input schema comes from EchoArgs: `message`, required, "Text to echo".
                Tool::typed("echo", |args: EchoArgs, _ctx: &Context| {
                    Ok::<_, Error>(args.message)
                })
                .description("Echoes the message back as text"),
            )
            // The echo handler never blocks: it runs on the stdio reader with no hand-off.
            .quick_handlers(true)
            .build()?;
    mcp_examples::serve(server, args.into_iter())?;
    Ok(())
}
