//! Shared plumbing for the example binaries: pick the transport from the command line.
//!
//! `PROGRAM` alone (or `--stdio`) serves stdio; `PROGRAM --http 127.0.0.1:PORT` serves
//! Streamable HTTP on `/mcp` (and the 2024-11-05 HTTP+SSE transport on `/sse` and `/messages`).
//! With `--bearer-token TOKEN` as well, HTTP requests must carry `Authorization: Bearer TOKEN`
//! (the server's authorization hook: others get 401 with a `WWW-Authenticate` challenge that
//! points at the RFC 9728 resource metadata).
//!
//! Several instances behind a load balancer: `--state-secret-file PATH` keys the 2026-07-28
//! `requestState` and the pagination cursors with a secret the instances share (at least 32
//! bytes; see [`configure`]), so any instance continues what another started, and
//! `--instance-tag TAG` puts `TAG.` in front of the legacy session ids this instance mints, so
//! a proxy can route each session to the instance that holds it.

use mcp_server_kit::{Server, ServerBuilder};

#[cfg(feature = "full")]
pub mod conformance_auth;
pub mod server_proc;
#[cfg(all(unix, feature = "full"))]
mod signal;

/// The usage line the examples print for `--help`.
pub const USAGE: &str = "[--stdio | --http ADDR [--bearer-token TOKEN]] \
[--state-secret-file PATH] [--instance-tag TAG]   (ADDR such as 127.0.0.1:8080; serves /mcp)";

/// The command line, parsed: flags in any order, each at most once.
#[derive(Default)]
struct Options {
    http: Option<String>,
    token: Option<String>,
    secret_file: Option<String>,
    instance_tag: Option<String>,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options::default();
        let mut it = args.iter();
        let mut stdio = false;
        while let Some(flag) = it.next() {
            let slot = match flag.as_str() {
                "--stdio" if !stdio => {
                    stdio = true;
                    continue;
                }
                "--http" => &mut o.http,
                "--bearer-token" => &mut o.token,
                "--state-secret-file" => &mut o.secret_file,
                "--instance-tag" => &mut o.instance_tag,
                _ => return Err(format!("unknown argument {flag:?}; usage: {USAGE}")),
            };
            match (slot.is_some(), it.next()) {
                (false, Some(v)) => *slot = Some(v.clone()),
                _ => return Err(format!("{flag} takes one value, once; usage: {USAGE}")),
            }
        }
        let http_only = o.token.is_some() || o.instance_tag.is_some();
        if (stdio && o.http.is_some()) || (http_only && o.http.is_none()) {
            return Err(format!("usage: {USAGE}"));
        }
        Ok(o)
    }
}

/// Applies what the command line says about the server itself to its builder, before
/// `build`: with `--state-secret-file PATH`, the secret its instances share
/// ([`ServerBuilder::state_secret`](mcp_server_kit::ServerBuilder)).
///
/// # Errors
/// Unknown arguments, or a secret file that cannot be read or holds fewer than 32 bytes.
pub fn configure(
    builder: ServerBuilder,
    args: &[String],
) -> Result<ServerBuilder, Box<dyn std::error::Error>> {
    let opts = Options::parse(args)?;
    match opts.secret_file {
        None => Ok(builder),
        #[cfg(feature = "full")]
        Some(path) => Ok(builder.state_secret(mcp_server_kit::StateSecret::from_file(path)?)),
        #[cfg(not(feature = "full"))]
        Some(_) => Err(
            "this binary was built without sealed request states (build with the \
`full` feature)"
                .into(),
        ),
    }
}

/// Serves `server` on the transport the arguments name. Returns when the client closes stdin
/// (stdio), or on HTTP after SIGTERM or Ctrl-C, once the server has drained.
/// (`--state-secret-file` is [`configure`]'s, applied before the server was built.)
///
/// # Errors
/// A transport error, or arguments that name no transport.
pub fn serve(
    server: Server,
    args: impl Iterator<Item = String>,
) -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = args.collect();
    let opts = Options::parse(&args)?;
    match &opts.http {
        None => Ok(mcp_stdio::serve(server)?),
        Some(addr) => serve_http(server, addr, &opts),
    }
}

#[cfg(feature = "full")]
fn serve_http(
    server: Server,
    addr: &str,
    opts: &Options,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut cfg = mcp_http_blocking::HttpConfig::builder();
    if let Some(tag) = &opts.instance_tag {
        cfg = cfg.instance_tag(mcp_http_blocking::InstanceTag::new(tag.as_str())?);
    }
    if let Some(t) = &opts.token {
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
    _opts: &Options,
) -> Result<(), Box<dyn std::error::Error>> {
    Err("this binary was built without HTTP support (build with the `full` feature)".into())
}
