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
//! bytes; see [`serve`]), so any instance continues what another started, and
//! `--instance-tag TAG` puts `TAG.` in front of the legacy session ids and task ids this instance mints, so
//! a proxy can route each session to the instance that holds it. `--redis-url URL` (examples
//! built with the `redis` feature) joins the instances' resource updates and list changes
//! through Redis pub/sub, so a client listening on one instance hears of a change made on
//! another. `--page-size N` sets how many items a list page holds (default 100), so a few
//! dozen tools already make several pages (the multi-instance recipe wants pages that land
//! on different instances).
//!
//! `--no-rate-limits` turns off the kit's per-client rate limits over HTTP (on by default:
//! 50 tool calls a second per client): the benchmarks and the soak send far more than any
//! interactive client from one address, and measure the server, not its limiter.

use mcp_server_kit::{Server, ServerBuilder};

#[cfg(feature = "full")]
pub mod conformance_auth;
pub mod server_proc;
#[cfg(all(unix, feature = "full"))]
mod signal;

/// The usage line the examples print for `--help` (the flags, then [`USAGE_NOTE`]).
pub const USAGE: &str = "[--stdio | --http ADDR [--bearer-token TOKEN]] \
[--state-secret-file PATH] [--instance-tag TAG] [--redis-url URL] [--page-size N] [--no-rate-limits]";

/// What follows the flags of the usage line.
pub const USAGE_NOTE: &str = "(ADDR such as 127.0.0.1:8080; serves /mcp)";

/// The Redis channel the examples' instances publish on and listen to (`--redis-url`).
pub const REDIS_CHANNEL: &str = "mcp-examples";

/// The command line, parsed: flags in any order, each at most once.
#[derive(Default)]
struct Options {
    http: Option<String>,
    token: Option<String>,
    secret_file: Option<String>,
    instance_tag: Option<String>,
    redis_url: Option<String>,
    page_size: Option<String>,
    no_rate_limits: bool,
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
                "--no-rate-limits" if !o.no_rate_limits => {
                    o.no_rate_limits = true;
                    continue;
                }
                "--http" => &mut o.http,
                "--bearer-token" => &mut o.token,
                "--state-secret-file" => &mut o.secret_file,
                "--instance-tag" => &mut o.instance_tag,
                "--redis-url" => &mut o.redis_url,
                "--page-size" => &mut o.page_size,
                _ => {
                    return Err(format!(
                        "unknown argument {flag:?}; usage: {USAGE}   {USAGE_NOTE}"
                    ));
                }
            };
            match (slot.is_some(), it.next()) {
                (false, Some(v)) => *slot = Some(v.clone()),
                _ => {
                    return Err(format!(
                        "{flag} takes one value, once; usage: {USAGE}   {USAGE_NOTE}"
                    ));
                }
            }
        }
        let http_only = o.token.is_some() || o.instance_tag.is_some() || o.secret_file.is_some();
        if (stdio && o.http.is_some()) || (http_only && o.http.is_none()) {
            return Err(format!("usage: {USAGE}   {USAGE_NOTE}"));
        }
        Ok(o)
    }
}

/// Applies what the command line says about the server itself to its builder, before
/// `build`: with `--redis-url URL`
/// (feature `redis`), a [`RedisBroadcast`](mcp_server_kit::broadcast) on [`REDIS_CHANNEL`];
/// with `--page-size N`, the size of list pages; with `--no-rate-limits`,
/// no rate limits over HTTP ([`ServerBuilder::rate_limits`]).
///
/// # Errors
/// Unknown arguments, a page size that is not a positive number, a Redis server that cannot be reached, or
/// `--redis-url` in a binary built without the `redis` feature.
pub fn configure(
    builder: ServerBuilder,
    args: &[String],
) -> Result<ServerBuilder, Box<dyn std::error::Error>> {
    let opts = Options::parse(args)?;
    let mut builder = builder;
    // Task ids carry the tag too, so a balancer routes tasks/* to the task's instance (the
    // tag is an HTTP option, and the kit serves tasks only with `full`).
    #[cfg(feature = "full")]
    if let Some(tag) = &opts.instance_tag {
        builder = builder.task_id_prefix(tag);
    }
    if let Some(n) = &opts.page_size {
        match n.parse::<usize>() {
            Ok(n) if n > 0 => builder = builder.page_size(n),
            _ => return Err(format!("--page-size wants a positive number, not {n:?}").into()),
        }
    }
    if let Some(url) = &opts.redis_url {
        builder = with_redis(builder, url)?;
    }
    let builder = if opts.no_rate_limits {
        builder.rate_limits(mcp_server_kit::RateLimits::off())
    } else {
        builder
    };
    Ok(builder)
}

#[cfg(feature = "redis")]
fn with_redis(
    builder: ServerBuilder,
    url: &str,
) -> Result<ServerBuilder, Box<dyn std::error::Error>> {
    let redis = mcp_server_kit::broadcast::RedisBroadcast::connect(url, REDIS_CHANNEL)
        .map_err(|e| format!("--redis-url: {e}"))?;
    Ok(builder.broadcast(std::sync::Arc::new(redis)))
}

#[cfg(not(feature = "redis"))]
fn with_redis(
    _builder: ServerBuilder,
    _url: &str,
) -> Result<ServerBuilder, Box<dyn std::error::Error>> {
    Err(
        "--redis-url: this binary was built without Redis support; build it with \
`cargo build --release -p mcp-examples --features redis`"
            .into(),
    )
}

/// Serves `server` on the transport the arguments name. Returns when the client closes stdin
/// (stdio), or on HTTP after SIGTERM or Ctrl-C, once the server has drained. Over HTTP,
/// `--state-secret-file PATH` gives the transport the secret its instances share
/// ([`HttpConfigBuilder::state_secret`](mcp_http_blocking::HttpConfigBuilder::state_secret)).
///
/// # Errors
/// A transport error, arguments that name no transport, or a secret file that cannot be read
/// or holds fewer than 32 bytes.
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
    if let Some(path) = &opts.secret_file {
        cfg = cfg.state_secret(mcp_http_blocking::StateSecret::from_file(path)?);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn page_size_must_be_a_positive_number() {
        let b = || Server::builder("t", "1");
        assert!(configure(b(), &args(&["--page-size", "7"])).is_ok());
        for bad in ["0", "-1", "many"] {
            let e = configure(b(), &args(&["--page-size", bad])).err();
            assert!(e.is_some_and(|e| e.to_string().contains("--page-size")));
        }
    }

    /// Without the feature the flag is refused with a message that says how to get it,
    /// rather than ignored (a recipe would run with instances that never hear each other).
    #[cfg(not(feature = "redis"))]
    #[test]
    fn redis_url_is_refused_without_the_feature() {
        let e = configure(
            Server::builder("t", "1"),
            &args(&["--redis-url", "redis://127.0.0.1:1/"]),
        )
        .err()
        .map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains("--features redis")),
            "{e:?}"
        );
    }

    /// With the feature, the URL is used: an unreachable server is an error at start.
    #[cfg(feature = "redis")]
    #[test]
    fn redis_url_connects_with_the_feature() {
        let e = configure(
            Server::builder("t", "1"),
            &args(&["--redis-url", "redis://127.0.0.1:1/"]),
        )
        .err()
        .map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.starts_with("--redis-url: redis:")),
            "{e:?}"
        );
    }
}
