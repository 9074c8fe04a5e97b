//! Interop probe between this SDK and the official Rust SDK, rmcp (crates.io, pinned 3.11.0).
//!
//! ```text
//! rmcp-interop client [--mode legacy|modern|auto] (-- COMMAND [ARGS...] | --http URL)
//! rmcp-interop server [--http [--stateless] [--json]]
//! ```
//!
//! `client`: rmcp's client (child-process or Streamable HTTP transport) tours our `everything`
//! server (best started with `EVERYTHING_CLOCK=manual`, so `test_tick` drives the dynamic tool
//! and the watched resource instead of timers). One `  ok` / `  FAIL` line per step, a summary,
//! exit status 1 when a step failed.
//!
//! `server`: a small rmcp server (stdio, or Streamable HTTP on 127.0.0.1 with a port the kernel
//! picks, announced as "listening on http://127.0.0.1:PORT/mcp" on stderr) for our client's
//! tour (`target/release/tour scripts/interop/fixtures/rmcp.json ...`).

#![allow(deprecated)] // sampling, logging and subscribe are SEP-deprecated in rmcp, still spoken

mod client;
mod server;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match args.first().map(String::as_str) {
        Some("client") => rt.block_on(client::run(&args[1..])),
        Some("server") => rt.block_on(server::run(&args[1..])),
        _ => {
            eprintln!(
                "usage: rmcp-interop client [--mode legacy|modern|auto] (-- COMMAND [ARGS...] | --http URL)\n       rmcp-interop server [--http [--stateless] [--json]]"
            );
            ExitCode::from(2)
        }
    }
}
