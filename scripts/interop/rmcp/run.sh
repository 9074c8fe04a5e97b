#!/usr/bin/env bash
# Interop with the official Rust SDK, rmcp 3.11.0 (see README.md here). Builds the probe
# (in .cache/rmcp/target, or $RMCP_TARGET_DIR; a no-op once built); needs
# target/release/{everything,tour}
# (cargo build --release -p mcp-examples). Runs:
#   rmcp client -> everything, stdio and Streamable HTTP, modes legacy, modern, auto, and legacy
#                  asking for 2025-06-18, 2025-03-26 and 2024-11-05 (12 tours)
#   our tour    -> rmcp server, stdio and Streamable HTTP, --legacy and --auto (4 tours), and
#                  2026-07-28 against rmcp's stateless HTTP mode: plain, with JSON answers, and
#                  requiring the per-request protocol signals (3 tours)
# Ends with "rmcp interop: N passed, M failed"; exits 1 if a tour failed.
set -uo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
# Built under the ignored .cache (CI keeps installs there), once; later runs rebuild nothing.
TARGET="${RMCP_TARGET_DIR:-$ROOT/.cache/rmcp/target}"
PROBE="$TARGET/release/rmcp-interop"
EVERYTHING="$ROOT/target/release/everything"
TOUR="$ROOT/target/release/tour"
FIXTURES="$ROOT/scripts/interop/fixtures/rmcp.json"
TIMEOUT="${RMCP_TOUR_TIMEOUT:-120}"
export NO_PROXY="127.0.0.1,localhost" no_proxy="127.0.0.1,localhost"

for f in "$EVERYTHING" "$TOUR"; do
  [ -x "$f" ] || { echo "missing $f: cargo build --release -p mcp-examples" >&2; exit 2; }
done
(cd "$HERE" && CARGO_TARGET_DIR="$TARGET" cargo build --release --locked --quiet) || exit 2

LOGS="$(mktemp -d)"
passed=0
failed=0
summary=()
srv_pid=""
stop() { [ -z "$srv_pid" ] || { kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; srv_pid=""; }; }
trap 'stop; rm -rf "$LOGS"' EXIT

# start NAME CMD...: a server that prints "listening on http://ADDR/mcp" on stderr; sets $addr
start() {
  local log="$LOGS/$1.server.log"
  shift
  "$@" </dev/null >/dev/null 2>"$log" &
  srv_pid=$!
  addr=""
  for _ in $(seq 1 150); do
    addr="$(grep -o 'listening on http://[^/]*' "$log" | head -1 | sed 's|listening on http://||')"
    [ -n "$addr" ] && return 0
    sleep 0.1
  done
  echo "server $* did not start (see $log)" >&2
  return 1
}

run() {
  local name="$1" rc
  shift
  echo "== $name"
  timeout "$TIMEOUT" "$@" 2>&1 | tee "$LOGS/$name.log"
  rc="${PIPESTATUS[0]}"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); summary+=("PASS $name")
  else
    failed=$((failed + 1)); summary+=("FAIL $name (exit $rc): $(grep -m2 'FAIL' "$LOGS/$name.log" | tr '\n' ';' | cut -c1-200)")
  fi
}

# MODE[:REVISION]: the revision `initialize` asks for (legacy mode only)
for variant in legacy modern auto legacy:2025-06-18 legacy:2025-03-26 legacy:2024-11-05; do
  mode="${variant%%:*}"
  extra=()
  name="$mode"
  case "$variant" in *:*) extra=(--version "${variant#*:}"); name="${variant#*:}" ;; esac
  run "rmcp-client-stdio-$name" "$PROBE" client --mode "$mode" "${extra[@]}" -- env EVERYTHING_CLOCK=manual "$EVERYTHING"
  if start "everything-$name" env EVERYTHING_CLOCK=manual "$EVERYTHING" --http 127.0.0.1:0; then
    run "rmcp-client-http-$name" "$PROBE" client --mode "$mode" "${extra[@]}" --http "http://$addr/mcp"
  else
    failed=$((failed + 1)); summary+=("FAIL rmcp-client-http-$name: server did not start")
  fi
  stop
done

run "tour-rmcp-stdio-legacy" "$TOUR" "$FIXTURES" rmcp-stdio-legacy --legacy --expect 2025-11-25 -- "$PROBE" server
run "tour-rmcp-stdio-auto" "$TOUR" "$FIXTURES" rmcp-stdio-auto --auto --expect 2026-07-28 -- "$PROBE" server
for variant in "legacy:--legacy --expect 2025-11-25:" "auto:--auto --expect 2026-07-28:" \
  "auto-stateless:--auto --expect 2026-07-28:--stateless" "auto-stateless-json:--auto --expect 2026-07-28:--stateless --json" \
  "modern-stateless-strict:--modern --expect 2026-07-28:--stateless --strict"; do
  IFS=: read -r name tour_args srv_args <<<"$variant"
  # shellcheck disable=SC2086 # the flags are words
  if start "rmcp-$name" "$PROBE" server --http $srv_args; then
    # shellcheck disable=SC2086
    run "tour-rmcp-http-$name" "$TOUR" "$FIXTURES" "rmcp-http-$name" $tour_args --http "http://$addr/mcp"
  else
    failed=$((failed + 1)); summary+=("FAIL tour-rmcp-http-$name: server did not start")
  fi
  stop
done

echo
for line in "${summary[@]}"; do echo "$line"; done
echo "rmcp interop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
