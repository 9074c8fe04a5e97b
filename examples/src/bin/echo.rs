//! The smallest useful MCP server: one tool, `echo`, that answers its `message` as text.
//! Run it under any MCP client as a stdio server: `target/release/echo`.
use mcp_server_kit::{Context, Error, Server, Tool, schema::Schema};

#[derive(serde::Deserialize)]
struct EchoArgs {
    message: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server =
        mcp_examples::configure(Server::builder("echo", env!("CARGO_PKG_VERSION")), &args)?
            .tool(
                Tool::new("echo", |args: EchoArgs, _ctx: &Context| {
                    Ok::<_, Error>(args.message)
                })
                .description("Echoes the message back as text")
                .input_schema(
                    Schema::object()
                        .property("message", Schema::string().description("Text to echo")),
                ),
            )
            // The echo handler never blocks: it runs on the stdio reader with no hand-off.
            .quick_handlers(true)
            .build()?;
    mcp_examples::serve(server, args.into_iter())?;
    Ok(())
}
