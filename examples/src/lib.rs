//! Shared plumbing for the example binaries: pick the transport from the command line.
//!
//! `PROGRAM` alone (or `--stdio`) serves stdio; `PROGRAM --http 127.0.0.1:PORT` serves
//! Streamable HTTP on `/mcp` (and the 2024-11-05 HTTP+SSE transport on `/sse` and `/messages`).
//! With `--bearer-token TOKEN` as well, HTTP requests must carry `Authorization: Bearer TOKEN`
//! (the server's authorization hook: others get 401 with a `WWW-Authenticate` challenge that
//! points at the RFC 9728 resource metadata).

use mcp_server_kit::Server;

#[cfg(feature = "full")]
pub mod conformance_auth;
pub mod server_proc;
#[cfg(all(unix, feature = "full"))]
mod signal;

/// The usage line the examples print for `--help`.
pub const USAGE: &str = "[--stdio | --http ADDR [--bearer-token TOKEN]]   \
(ADDR such as 127.0.0.1:8080; serves /mcp)";

/// Serves `server` on the transport the arguments name. Returns when the client closes stdin
/// (stdio), or on HTTP after SIGTERM or Ctrl-C, once the server has drained.
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
        ["--http", addr] => serve_http(server, addr, None),
        ["--http", addr, "--bearer-token", token] | ["--bearer-token", token, "--http", addr] => {
            serve_http(server, addr, Some(token))
        }
        _ => Err(format!("unknown arguments {args:?}; usage: {USAGE}").into()),
    }
}

#[cfg(feature = "full")]
fn serve_http(
    server: Server,
    addr: &str,
    token: Option<&str>,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut cfg = mcp_http_blocking::HttpConfig::builder();
    if let Some(t) = token {
        cfg = cfg.auth(
            mcp_http_blocking::AuthConfig::builder(std::sync::Arc::new(FixedToken(t.to_owned())))
                .build(),
        );
    }
    let cfg = cfg.build();
    let http = mcp_http_blocking::HttpServer::builder()
        .bind(addr)
        .config(cfg)
        .build(server)?;
    #[cfg(unix)]
    let termination = signal::Termination::install()?;
    // Scripts wait for this line (on stderr: stdout is not ours to use in stdio mode, and we
    // keep the habit).
    eprintln!("listening on http://{}/mcp", http.local_addr());
    #[cfg(not(unix))]
    return Ok(http.run()?);
    #[cfg(unix)]
    {
        let handle = http.spawn()?;
        // SIGTERM (a rolling restart) or Ctrl-C: stop accepting, let the requests in flight
        // finish (up to the server's shutdown grace), end the streams, then exit.
        termination.wait()?;
        eprintln!("draining: no new connections; requests in flight finish");
        handle.shutdown();
        eprintln!("stopped");
        Ok(())
    }
}

/// Accepts one fixed token (a demonstration: a real server checks a signed token's issuer,
/// audience, expiry and scopes here).
#[cfg(feature = "full")]
struct FixedToken(String);

#[cfg(feature = "full")]
impl mcp_http_blocking::Authorizer for FixedToken {
    fn authorize(
        &self,
        token: &str,
        _resource: &str,
    ) -> Result<serde_json::Value, mcp_http_blocking::AuthError> {
        // Every byte is compared, so the time taken does not tell how much of a guess matched.
        let (a, b) = (token.as_bytes(), self.0.as_bytes());
        let differ =
            a.len() != b.len() || a.iter().zip(b).fold(0, |acc, (x, y)| acc | (x ^ y)) != 0;
        if differ {
            Err(mcp_http_blocking::AuthError::Invalid(
                "not the server's token".into(),
            ))
        } else {
            Ok(serde_json::json!({ "sub": "bearer-token" }))
        }
    }
}

#[cfg(not(feature = "full"))]
fn serve_http(
    _server: Server,
    _addr: &str,
    _token: Option<&str>,
) -> Result<(), Box<dyn std::error::Error>> {
    Err("this binary was built without HTTP support (build with the `full` feature)".into())
}
