#!/usr/bin/env bash
# A stdio server's footprint (issue #14, README "A stdio server's size"): with the kit's default
# features its dependency tree stays at 20 crates at most, and `echo` built the minimal way stays
# under 1.62 MB stripped, and the order it is linked in (examples/echo.order) still names its
# functions. Run last in CI: the minimal build replaces target/release/echo, which the
# interop scripts use in its full form.
set -euo pipefail
cd "$(dirname "$0")/.."

crates=$(cargo tree -p mcp-server-kit -p mcp-stdio -e normal --prefix none | sed 's/ (\*)$//' | grep -v '^$' | sort -u | wc -l)
echo "stdio server dependency tree: $crates crates (at most 20)"

cargo build --release -p mcp-examples --no-default-features --bin echo
bytes=$(stat -c %s target/release/echo)
echo "echo, release, stripped: $bytes bytes (under 1,620,000)"

# echo is linked with the functions a usual session runs first (examples/echo.order, README
# "Its memory"): that keeps its idle RSS below mcport's. The file names symbols, which code
# changes rename or remove; a file that names too few of them has lost its effect silently, so
# it is held to the build here (its names are those of this build with the symbols kept).
order_ok=1
if [ "$(uname -m)" = x86_64 ] && [ "$(uname -s)" = Linux ]; then
    CARGO_TARGET_DIR=target/order RUSTFLAGS="-C strip=none" \
        cargo build --release -p mcp-examples --no-default-features --bin echo
    listed=$(sort -u examples/echo.order | wc -l)
    found=$(nm target/order/release/echo | awk '{print $NF}' | sort -u \
        | comm -12 - <(sort -u examples/echo.order) | wc -l)
    echo "examples/echo.order: $found of its $listed functions are in this build (at least 90%)"
    if [ $((found * 100)) -lt $((listed * 90)) ]; then
        order_ok=0
    fi
fi

status=0
if [ "$order_ok" -eq 0 ]; then
    echo "FAIL: examples/echo.order is stale: run scripts/echo-order.sh (needs valgrind)" >&2
    status=1
fi
if [ "$crates" -gt 20 ]; then
    echo "FAIL: the stdio server's tree has $crates crates" >&2
    status=1
fi
if [ "$bytes" -ge 1620000 ]; then
    echo "FAIL: echo is $bytes bytes" >&2
    status=1
fi
exit $status
