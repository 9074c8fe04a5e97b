#!/usr/bin/env bash
# A stdio server's footprint (issue #14, README "A stdio server's size"): with the kit's default
# features its dependency tree stays at 20 crates at most, and `echo` built the minimal way stays
# under 1.6 MB stripped. Run last in CI: the minimal build replaces target/release/echo, which the
# interop scripts use in its full form.
set -euo pipefail
cd "$(dirname "$0")/.."

crates=$(cargo tree -p mcp-server-kit -p mcp-stdio -e normal --prefix none | sed 's/ (\*)$//' | grep -v '^$' | sort -u | wc -l)
echo "stdio server dependency tree: $crates crates (at most 20)"

cargo build --release -p mcp-examples --no-default-features --bin echo
bytes=$(stat -c %s target/release/echo)
echo "echo, release, stripped: $bytes bytes (under 1,600,000)"

status=0
if [ "$crates" -gt 20 ]; then
    echo "FAIL: the stdio server's tree has $crates crates" >&2
    status=1
fi
if [ "$bytes" -ge 1600000 ]; then
    echo "FAIL: echo is $bytes bytes" >&2
    status=1
fi
exit $status
