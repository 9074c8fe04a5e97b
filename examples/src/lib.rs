//! Shared plumbing for the example binaries: pick the transport from the command line.

use mcp_server_kit::Server;

/// Serves `server` on stdio, the default. Returns when the client closes stdin.
///
/// # Errors
/// A transport error, or an unknown command-line argument.
pub fn serve(
    server: Server,
    mut args: impl Iterator<Item = String>,
) -> Result<(), Box<dyn std::error::Error>> {
    match args.next().as_deref() {
        None | Some("--stdio") => Ok(mcp_stdio::serve(server)?),
        Some(other) => Err(format!("unknown argument {other:?}; usage: [--stdio]").into()),
    }
}
