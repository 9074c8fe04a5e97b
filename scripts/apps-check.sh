#!/usr/bin/env bash
# MCP Apps (io.modelcontextprotocol/ui): our `apps` example checked against the official
# @modelcontextprotocol/ext-apps package, and its view rendered in a real headless browser.
#
#   scripts/apps-check.sh
#
# 1. Installs Debian's chromium when it is missing (apt-get, as root: CI runs as root), and
#    the pinned packages of scripts/apps/package.json (+ lock) under .cache/apps/.
# 2. scripts/apps/validate.mjs talks to target/release/apps over stdio and checks the tool's
#    _meta.ui, the view's listing and resources/read content (MIME type, _meta.ui), the tool
#    result as a ui/notifications/tool-result and the server's capability against the
#    package's schemas (zod, plus its JSON Schema for unknown keys) and the SDK core's.
# 3. Serves scripts/apps/host.html (a minimal host: the view in a sandboxed iframe under the
#    view's CSP, ui/initialize answered, then tool-input, tool-result and a ping) with the view
#    and the tool's real result on 127.0.0.1, loads it in headless chromium with a virtual time
#    budget (no sleeps), and checks from the dumped DOM that the view rendered the result and
#    that every message it sent validates against the package's schemas.
# Exits non-zero on any failure. APPS_BIN points at another build of the example.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/scripts/apps"
CACHE="$ROOT/.cache/apps"
BIN="${APPS_BIN:-$ROOT/target/release/apps}"

die() { echo "apps-check: error: $*" >&2; exit 1; }
log() { echo "== $*"; }

command -v node >/dev/null || die "node not found (Node >= 20)"
command -v npm >/dev/null || die "npm not found"
command -v python3 >/dev/null || die "python3 not found (reads the dumped DOM)"

# ---- chromium
CHROMIUM="$(command -v chromium || true)"
if [ -z "$CHROMIUM" ]; then
  [ "$(id -u)" = 0 ] || die "chromium is missing; install Debian's chromium (apt-get install chromium) or run as root"
  log "installing chromium (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends chromium >/dev/null; } \
    || die "apt-get install chromium failed"
  CHROMIUM="$(command -v chromium)" || die "chromium not on PATH after install"
fi

# ---- the example
if [ ! -x "$BIN" ] && [ -z "${APPS_BIN:-}" ]; then
  log "release binary missing: cargo build --release -p mcp-examples --bin apps"
  (cd "$ROOT" && cargo build --release -p mcp-examples --bin apps) || die "cargo build failed"
fi
[ -x "$BIN" ] || die "$BIN was not built"
BIN="$(realpath "$BIN")"

# ---- the ext-apps package, from the committed lock file
want="$(sha256sum "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -c1-16)"
mkdir -p "$CACHE"
if [ ! -d "$CACHE/node_modules" ] || [ "$(cat "$CACHE/.stamp" 2>/dev/null || true)" != "$want" ]; then
  log "installing @modelcontextprotocol/ext-apps into $CACHE"
  rm -rf "$CACHE/node_modules"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$CACHE/"
  (cd "$CACHE" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed"
  echo "$want" > "$CACHE/.stamp"
fi
cp "$HERE/validate.mjs" "$HERE/serve.mjs" "$CACHE/"

RUN="$CACHE/run"
rm -rf "$RUN"
mkdir -p "$RUN"
cp "$HERE/host.html" "$RUN/"

# ---- (a) the metadata against the package's schemas
log "validate: the apps example's tool, view and result against @modelcontextprotocol/ext-apps"
(cd "$CACHE" && timeout 60 node validate.mjs server "$BIN" "$RUN")

# ---- (b) the view in headless chromium
log "render: the view in headless chromium, inside scripts/apps/host.html"
mkfifo "$RUN/port"
(cd "$CACHE" && exec node serve.mjs "$RUN") > "$RUN/port" &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
exec 3<"$RUN/port"
read -r -t 20 -u 3 PORT || die "the page server did not start"
[[ "$PORT" =~ ^[0-9]+$ ]] || die "the page server said $PORT, not a port"

# --virtual-time-budget: chromium runs the page until it is idle (network, tasks) or the
# budget of virtual time is spent, then dumps the DOM; nothing waits on the wall clock.
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
  --user-data-dir="$RUN/profile" --virtual-time-budget=10000 \
  --dump-dom "http://127.0.0.1:$PORT/host.html" > "$RUN/dom.html" 2> "$RUN/chromium.log" \
  || { tail -20 "$RUN/chromium.log" >&2; die "chromium failed"; }

python3 - "$RUN/dom.html" "$RUN/report.json" <<'EOF'
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<pre id="report">(.*?)</pre>', dom, re.S)
if not m:
    sys.exit("apps-check: error: no #report in the dumped DOM")
open(sys.argv[2], "w", encoding="utf-8").write(html.unescape(m.group(1)))
EOF
(cd "$CACHE" && node validate.mjs view "$RUN/report.json")
echo "apps-check: passed"
