#!/usr/bin/env bash
# Regenerates examples/echo.order, the order in which `echo` is linked (examples/build.rs):
# the functions a usual session runs, per-request ones first (bench/order-functions.py says
# why). Run it after changes on the request path or a new compiler; it needs valgrind.
# The symbols' names depend on the compiler, the features and the profile, so this builds
# echo exactly as `cargo build --release -p mcp-examples --no-default-features` does, with
# its symbols kept (RUSTFLAGS do not change the names), in a target directory of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO_TARGET_DIR=target/order RUSTFLAGS="-C strip=none" \
    cargo build --release -p mcp-examples --no-default-features --bin echo
python3 bench/order-functions.py target/order/release/echo "${1:-2000}" > examples/echo.order.new
mv examples/echo.order.new examples/echo.order
echo "examples/echo.order: $(wc -l < examples/echo.order) functions"
