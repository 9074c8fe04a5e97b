//! Shared plumbing for the example binaries: pick the transport from the command line.
//!
//! `PROGRAM` alone (or `--stdio`) serves stdio; `PROGRAM --http 127.0.0.1:PORT` serves
//! Streamable HTTP on `/mcp` (and the 2024-11-05 HTTP+SSE transport on `/sse` and `/messages`).

use mcp_server_kit::Server;

#[cfg(feature = "full")]
pub mod conformance_auth;

/// The usage line the examples print for `--help`.
pub const USAGE: &str = "[--stdio | --http ADDR]   (ADDR such as 127.0.0.1:8080; serves /mcp)";

/// Serves `server` on the transport the arguments name. Returns when the client closes stdin
/// (stdio) or never (HTTP, until the process is stopped).
///
/// # Errors
/// A transport error, or arguments that name no transport.
pub fn serve(
    server: Server,
    args: impl Iterator<Item = String>,
) -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = args.collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] | ["--stdio"] => Ok(mcp_stdio::serve(server)?),
        ["--http", addr] => serve_http(server, addr),
        _ => Err(format!("unknown arguments {args:?}; usage: {USAGE}").into()),
    }
}

#[cfg(feature = "full")]
fn serve_http(server: Server, addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let http = mcp_http_blocking::HttpServer::builder()
        .bind(addr)
        .build(server)?;
    // Scripts wait for this line (on stderr: stdout is not ours to use in stdio mode, and we
    // keep the habit).
    eprintln!("listening on http://{}/mcp", http.local_addr());
    Ok(http.run()?)
}

#[cfg(not(feature = "full"))]
fn serve_http(_server: Server, _addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    Err("this binary was built without HTTP support (build with the `full` feature)".into())
}
