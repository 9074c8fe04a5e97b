#!/usr/bin/env bash
# A two-minute soak of `everything --http`: 32 clients of mixed traffic in both eras (sessions
# opened and deleted, JSON and SSE answers, progress, sampling and elicitation answered, GET
# streams, stateless calls with input_required retries), with the server's VmRSS, threads and
# descriptors sampled every 10 s. Fails when a request fails, when VmRSS grows more than 5%
# from the 30 s mark to the end, or when threads or descriptors do not come back after the
# load. Not a test (it takes minutes): run it by hand after changing the server.
#
#   scripts/soak.sh [--seconds S] [--clients N] [--every S]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
if [ ! -x target/release/http-soak ] || [ ! -x target/release/everything ]; then
  cargo build --release -p mcp-examples --bin http-soak --bin everything
fi
exec target/release/http-soak --server target/release/everything "$@"
