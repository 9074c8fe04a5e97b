#!/usr/bin/env bash
# The tested multi-instance recipe (deploy/multi/): three `everything --http` instances sharing a
# state secret (generated here, into the run directory) and a Redis for notifications, with
# distinct instance tags, behind nginx (deploy/multi/mcp-multi.conf), all on 127.0.0.1. Proves
# through nginx, with the official Python SDK client (PyPI mcp 2.3.0, the venv of
# scripts/interop.sh) and with our `client` binary:
#   (a) paginated tool lists whose pages come from different instances (2026-07-28: every page
#       request goes round-robin; the next page's cursor was sealed by another instance);
#   (b) an input_required answer whose retry (with the sealed requestState) lands on another
#       instance;
#   (c) legacy sessions (initialize handshake) that keep working over many requests, every one
#       routed by the session id's tag to the instance that holds the session;
#   (d) a resource update published on one instance reaching a listener connected to another
#       (2026-07-28 subscriptions/listen, and a legacy session's GET stream), timed;
#   (e) the loss of one instance (SIGKILL) costing only its own legacy sessions (404, so
#       clients start again), while stateless traffic and the other sessions carry on.
# Which instance served a request is read from nginx's access log ($upstream_addr).
#
#   scripts/scale-recipe.sh     (installs nginx and redis-server with apt-get if missing: root)
#   EVERYTHING_BIN=path (built with --features redis)  CLIENT_BIN=path  KEEP_RUNDIR=1
#
# Ends with "scale-recipe: N passed, M failed"; exits 1 if a check failed.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CONF="$ROOT/deploy/multi/mcp-multi.conf"
BIN="${EVERYTHING_BIN:-$ROOT/target/release/everything}"
CLIENT="${CLIENT_BIN:-$ROOT/target/release/client}"
VENV="$ROOT/.cache/interop/py"
PYREQ="$ROOT/scripts/interop/requirements.txt"
DRIVER="$ROOT/scripts/scale-recipe.py"
PAGE_SIZE=5
NODES=(node-a node-b node-c)
T_START=$EPOCHREALTIME

die() { echo "scale-recipe: error: $*" >&2; echo "scale-recipe: 0 passed, 1 failed"; exit 1; }
log() { echo "== [$(elapsed "$T_START") s] $*"; }
PASSED=0 FAILED=0 SUMMARY=()
check() { # check NAME CONDITION-EXIT-STATUS DETAIL
  local name=$1 ok=$2 detail=$3
  if [ "$ok" = 0 ]; then PASSED=$((PASSED + 1)); SUMMARY+=("PASS $name: $detail")
  else FAILED=$((FAILED + 1)); SUMMARY+=("FAIL $name: $detail"); fi
  echo "   ${SUMMARY[-1]}"
}
is() { [ "$@" ] && echo 0 || echo 1; } # is A -op B  ->  0 when the test holds
elapsed() { printf '%.1f' "$(echo "$EPOCHREALTIME - $1" | bc)"; }

# ---- prerequisites
[ -f "$CONF" ] || die "no $CONF"
for tool in curl bc python3; do command -v "$tool" >/dev/null || die "$tool not found"; done
missing=()
command -v nginx >/dev/null || missing+=(nginx)
command -v redis-server >/dev/null || missing+=(redis-server)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} (apt-get)"
  [ "$(id -u)" = 0 ] || die "${missing[*]} missing; install as root: apt-get -y install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get -y -qq install "${missing[@]}" >/dev/null ||
    die "apt-get install ${missing[*]} failed"
fi
# The binary must know --redis-url: one built without the feature says so at once.
redis_capable() {
  [ -x "$BIN" ] || return 1
  ! "$BIN" --redis-url redis://127.0.0.1:1/ </dev/null 2>&1 | grep -q 'without Redis support'
}
if ! redis_capable; then
  [ -z "${EVERYTHING_BIN:-}" ] || die "$BIN was built without the redis feature"
  log "building everything with Redis (cargo build --release -p mcp-examples --features redis)"
  (cd "$ROOT" && cargo build --release -p mcp-examples --features redis --bin everything --bin client) ||
    die "build failed"
fi
if [ ! -x "$CLIENT" ]; then
  log "building client (cargo build --release -p mcp-examples --bin client)"
  (cd "$ROOT" && cargo build --release -p mcp-examples --bin client) || die "build failed"
fi
# The Python SDK: the venv scripts/interop.sh keeps (same place, same pinned requirements, same
# stamp), installed the same way when that script has not run yet.
py_stamp="$(sha256sum "$PYREQ" | sha256sum | cut -c1-16)-$(python3 -c 'import sys; print(sys.version.split()[0])')"
if [ "$(cat "$VENV/.stamp" 2>/dev/null)" != "$py_stamp" ]; then
  log "installing the Python SDK into $VENV (as scripts/interop.sh does)"
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$PYREQ" || die "pip install failed"
  echo "$py_stamp" >"$VENV/.stamp"
fi
# The driver; its stderr (the SDK's warnings) goes to the run directory.
py() { "$VENV/bin/python" -u "$DRIVER" "$@" 2>>"$RUN/python.err"; }

RUN="$(mktemp -d /tmp/scale-recipe.XXXXXX)"
chmod 755 "$RUN" # nginx workers run as nobody when started by root
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  if [ -n "${KEEP_RUNDIR:-}" ]; then echo "run directory kept: $RUN"; else rm -rf "$RUN"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- helpers
. "$(dirname "$0")/recipe-lib.sh" # port_listening free_port wait_until can_connect gone

# ---- secret, Redis, the instances, nginx
head -c 48 /dev/urandom >"$RUN/state-secret"
chmod 600 "$RUN/state-secret"

for attempt in 1 2 3 4 5; do
  REDIS_PORT=$(free_port) || die "no free port"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$RUN/redis.log" 2>&1 &
  REDIS_PID=$!
  wait_until 10 grep -q -e 'Ready to accept connections' -e 'Address already in use' "$RUN/redis.log" || true
  grep -q 'Ready to accept connections' "$RUN/redis.log" && break
  wait "$REDIS_PID" 2>/dev/null; REDIS_PID=""
done
[ -n "$REDIS_PID" ] || die "redis-server did not start: $(cat "$RUN/redis.log")"
PIDS+=("$REDIS_PID")
REDIS_URL="redis://127.0.0.1:$REDIS_PORT/"

declare -A PORT PID NAME_OF
start_node() { # start_node NAME
  local n=$1
  EVERYTHING_CLOCK=manual RUST_LOG=warn "$BIN" --http 127.0.0.1:0 --instance-tag "$n" \
    --state-secret-file "$RUN/state-secret" --redis-url "$REDIS_URL" --page-size "$PAGE_SIZE" \
    2>"$RUN/$n.log" &
  PID[$n]=$!
  PIDS+=("${PID[$n]}")
  wait_until 15 grep -q 'listening on http://' "$RUN/$n.log" || die "$n did not start: $(cat "$RUN/$n.log")"
  PORT[$n]=$(sed -n 's#.*listening on http://127\.0\.0\.1:\([0-9]*\)/mcp.*#\1#p' "$RUN/$n.log")
  NAME_OF["127.0.0.1:${PORT[$n]}"]=$n
}
for n in "${NODES[@]}"; do start_node "$n"; done
log "redis-server pid $REDIS_PID on 127.0.0.1:$REDIS_PORT; $(for n in "${NODES[@]}"; do printf '%s pid %s on 127.0.0.1:%s; ' "$n" "${PID[$n]}" "${PORT[$n]}"; done)"

# The manual clock's first step adds test_dynamic_tool; take it on every instance now, so their
# tool lists are the same (a page from one continues a page from another).
for n in "${NODES[@]}"; do
  "$CLIENT" --modern "http://127.0.0.1:${PORT[$n]}/mcp" call test_tick >/dev/null 2>"$RUN/tick.err" ||
    die "test_tick on $n: $(cat "$RUN/tick.err")"
done

nginx_up() { can_connect "$NGX_PORT" || gone "$NGX_PID"; }
NGX_PID=""
for attempt in 1 2 3 4 5; do
  NGX_PORT=$(free_port) || die "no free port"
  sed -e "s/127\.0\.0\.1:8081/127.0.0.1:${PORT[node-a]}/" -e "s/127\.0\.0\.1:8082/127.0.0.1:${PORT[node-b]}/" \
    -e "s/127\.0\.0\.1:8083/127.0.0.1:${PORT[node-c]}/" -e "s/127\.0\.0\.1:8080/127.0.0.1:$NGX_PORT/" \
    "$CONF" >"$RUN/mcp-multi.conf"
  nginx -p "$RUN/" -e "$RUN/error.log" -c "$RUN/mcp-multi.conf" 2>>"$RUN/nginx.out" &
  NGX_PID=$!
  wait_until 10 nginx_up || die "nginx did not start in 10 s"
  can_connect "$NGX_PORT" && break
  wait "$NGX_PID" 2>/dev/null; NGX_PID=""
  grep -q 'Address already in use' "$RUN/error.log" "$RUN/nginx.out" 2>/dev/null || die "nginx failed: $(cat "$RUN/error.log" "$RUN/nginx.out")"
done
[ -n "$NGX_PID" ] || die "nginx could not bind a port"
PIDS+=("$NGX_PID")
U="http://127.0.0.1:$NGX_PORT/mcp"
ACCESS="$RUN/access.log"
echo "   nginx $(nginx -v 2>&1 | sed 's/.*\///') pid $NGX_PID on 127.0.0.1:$NGX_PORT; run dir $RUN"

# ---- reading the access log
mark() { wc -l <"$ACCESS"; }
since() { tail -n "+$(($1 + 1))" "$ACCESS"; } # since MARK: the lines logged after MARK
# served LINES: per line, the instance that answered (the last upstream tried) and the method
served() {
  sed -n 's/.*upstream=\([^ ]*, \)*\([0-9.:]*\) session="\([^"]*\)" method="\([^"]*\)" name="\([^"]*\)".*/\2 \4 \5 \3/p' |
    while read -r addr method name session; do echo "${NAME_OF[$addr]:-$addr} ${method:--} ${name:--} ${session:--}"; done
}
count_by() { sort | uniq -c | awk '{ printf "%s%s x%s", sep, $2, $1; sep = ", " }'; } # "node-a x3, ..."
# changes: how many times the instance (first word) differs from the line before
changes() { awk 'NR > 1 && $1 != prev { c++ } { prev = $1 } END { print c + 0 }'; }
CROSSED=0 CROSS_TOTAL=0
ended() { since "$1" | grep -q '"DELETE /mcp'; } # ended MARK: a session was closed (DELETE logged)
has_lines() { [ "$(since "$1" | served | grep -c " $2 ")" -ge "$3" ]; } # has_lines MARK METHOD N

# ---- (a) paginated lists
log "(a) tools/list page by page, page size $PAGE_SIZE, through nginx"
m=$(mark)
out=$(py pages "$U" 2026-07-28)
pages=$(sed -n 's/.*"pages": \([0-9]*\).*/\1/p' <<<"$out")
wait_until 5 has_lines "$m" tools/list "${pages:-1}"
lines=$(since "$m" | served | grep ' tools/list ')
by=$(awk '{ print $1 }' <<<"$lines" | count_by) crossed=$(changes <<<"$lines")
CROSSED=$((CROSSED + crossed)) CROSS_TOTAL=$((CROSS_TOTAL + $(wc -l <<<"$lines") - 1))
check "a/python-2026-pages" "$(is "${pages:-0}" -ge 3 -a "$(wc -l <<<"$lines")" = "${pages:-x}" -a "$crossed" -ge 2)" \
  "Python SDK (2026-07-28): $out; pages served by $by; $crossed of $((pages - 1)) next-page requests went to another instance than the page before"

m=$(mark)
if "$CLIENT" --modern "$U" tools >"$RUN/a2.json" 2>"$RUN/a2.err"; then ntools=$(grep -c '"name"' "$RUN/a2.json"); else ntools=0; fi
wait_until 5 has_lines "$m" tools/list 3
lines=$(since "$m" | served | grep ' tools/list ')
by=$(awk '{ print $1 }' <<<"$lines" | count_by) crossed=$(changes <<<"$lines") n=$(wc -l <<<"$lines")
CROSSED=$((CROSSED + crossed)) CROSS_TOTAL=$((CROSS_TOTAL + n - 1))
check "a/client-2026-pages" "$(is "$ntools" -gt "$PAGE_SIZE" -a "$crossed" -ge 2)" \
  "our client (--modern): $ntools tools in $n pages served by $by; $crossed of $((n - 1)) next-page requests went to another instance $(head -c 200 "$RUN/a2.err")"

m=$(mark)
out=$(py pages "$U" legacy)
pages=$(sed -n 's/.*"pages": \([0-9]*\).*/\1/p' <<<"$out")
wait_until 5 ended "$m" # the session's last request, logged once answered
lines=$(since "$m" | served)
by=$(awk '{ print $1 }' <<<"$lines" | count_by) nsess=$(awk '$4 != "-" { print $4 }' <<<"$lines" | sort -u | wc -l)
check "a/python-legacy-pages" "$(is "${pages:-0}" -ge 3 -a "$(awk '$4 != "-" { print $1 }' <<<"$lines" | sort -u | wc -l)" = 1)" \
  "Python SDK (legacy session): $out; every request of the session on one instance: $by"

# ---- (b) input_required: the retry on another instance
log "(b) input_required through nginx"
m=$(mark)
out=$(py input "$U")
wait_until 5 has_lines "$m" tools/call 2
lines=$(since "$m" | served | grep ' tools/call ')
crossed=$(changes <<<"$lines") n=$(wc -l <<<"$lines")
CROSSED=$((CROSSED + crossed)) CROSS_TOTAL=$((CROSS_TOTAL + n - 1))
check "b/python-2026-retry" "$(is "$n" = 2 -a "$crossed" = 1 -a "$(grep -c '"answer": "deleted report.txt"' <<<"$out")" = 1)" \
  "Python SDK: $out; first call on $(head -1 <<<"$lines" | cut -d' ' -f1), retry with the requestState on $(tail -1 <<<"$lines" | cut -d' ' -f1)"

m=$(mark)
# --no-tasks: our client declares the tasks extension by default, and multi_input would then
# run as a task (checked next); here it is the input_required retry that must cross instances.
MCP_CONFORMANCE_CONTEXT='{"toolCalls":[{"name":"multi_input","arguments":{}}]}' \
  "$CLIENT" --modern --no-tasks "$U" conformance >"$RUN/b2.json" 2>"$RUN/b2.err"
rc=$?
wait_until 5 has_lines "$m" tools/call 2
lines=$(since "$m" | served | grep ' tools/call ')
crossed=$(changes <<<"$lines") n=$(wc -l <<<"$lines")
CROSSED=$((CROSSED + crossed)) CROSS_TOTAL=$((CROSS_TOTAL + n - 1))
check "b/client-2026-retry" "$(is "$rc" = 0 -a "$n" = 2 -a "$crossed" = 1 -a "$(grep -c '"text": "name' "$RUN/b2.json")" = 1)" \
  "our client: multi_input (two questions in one input_required round) first on $(head -1 <<<"$lines" | cut -d' ' -f1), retry on $(tail -1 <<<"$lines" | cut -d' ' -f1); answered $(grep -o '"text": "name .*"' "$RUN/b2.json" | head -1) $(head -c 200 "$RUN/b2.err")"

# The same call as a task: the task lives in the memory of the instance that started it, and
# its id carries that instance's tag, which nginx reads in the Mcp-Name header of tasks/get,
# tasks/update and tasks/cancel to send them there.
m=$(mark)
MCP_CONFORMANCE_CONTEXT='{"toolCalls":[{"name":"multi_input","arguments":{}}]}' \
  "$CLIENT" --modern "$U" conformance >"$RUN/b3.json" 2>"$RUN/b3.err"
rc=$?
wait_until 5 has_lines "$m" tasks/get 1
lines=$(since "$m" | served | grep -E ' (tools/call|tasks/[a-z]+) ')
first=$(grep ' tools/call ' <<<"$lines" | head -1 | cut -d' ' -f1)
ntask=$(grep -c ' tasks/' <<<"$lines") elsewhere=$(grep ' tasks/' <<<"$lines" | awk -v f="$first" '$1 != f' | wc -l)
check "b/client-2026-task" "$(is "$rc" = 0 -a "$(grep -c ' tools/call ' <<<"$lines")" = 1 -a "$ntask" -ge 2 -a "$elsewhere" = 0 -a "$(grep -c '"text": "name' "$RUN/b3.json")" = 1)" \
  "our client: multi_input as a task, started on ${first:-?}; $ntask tasks/* requests ($(grep ' tasks/' <<<"$lines" | awk '{ print $2 }' | sort | uniq -c | awk '{ printf "%s%s x%s", sep, $2, $1; sep = ", " }')), $elsewhere of them elsewhere $(head -c 200 "$RUN/b3.err")"

# ---- (c) legacy sessions over many requests
log "(c) legacy sessions over many requests"
session_check() { # session_check NAME MARK RC DETAIL: one session, all of it on its tag's instance
  local lines tags inst
  lines=$(since "$2" | served | awk '$4 != "-"')
  tags=$(awk '{ print $4 }' <<<"$lines" | sed 's/\..*//' | sort -u | xargs)
  inst=$(awk '{ print $1 }' <<<"$lines" | sort -u | xargs)
  check "$1" "$(is "$3" = 0 -a "$(wc -w <<<"$tags")" = 1 -a "$tags" = "$inst")" \
    "$4; $(wc -l <<<"$lines") requests carried the session id (tag $tags), all served by: $inst"
}
m=$(mark)
out=$(py session "$U" 60); rc=$?
wait_until 5 ended "$m"
session_check "c/python-legacy-session" "$m" "$rc" "Python SDK: $out"

calls=$(for i in $(seq 40); do printf '{"name":"greet","arguments":{"name":"c%s"}},' "$i"; done)
m=$(mark)
MCP_CONFORMANCE_CONTEXT="{\"toolCalls\":[${calls%,}]}" "$CLIENT" --legacy "$U" conformance >"$RUN/c2.json" 2>"$RUN/c2.err"
rc=$?
wait_until 5 ended "$m"
session_check "c/client-legacy-session" "$m" "$rc" \
  "our client (--legacy): $(grep -c '"text": "Hello, c' "$RUN/c2.json") of 40 greet calls answered $(head -c 200 "$RUN/c2.err")"

# ---- (d) a resource update from one instance to a listener on another
log "(d) resource updates across instances (test_tick on each instance directly, the listener through nginx)"
targets=(); for n in "${NODES[@]}"; do targets+=("$n=http://127.0.0.1:${PORT[$n]}/mcp"); done
NOTIFY_MS=()
notify_check() { # notify_check NAME OUT RC LISTENER-INSTANCE
  local name=$1 out=$2 rc=$3 at=$4 n ms cross=() local_ms=""
  for n in "${NODES[@]}"; do
    ms=$(sed -n "s/.*\"$n\": \([0-9.]*\).*/\1/p" <<<"$out")
    if [ "$n" = "$at" ]; then local_ms=$ms; else cross+=("$n ${ms:-none} ms"); NOTIFY_MS+=("${ms:-}"); fi
  done
  check "$name" "$(is "$rc" = 0 -a ${#cross[@]} = 2 -a -n "$at")" \
    "listener on ${at:-?}: heard the update published on ${cross[0]:-?}, on ${cross[1]:-?} (on its own instance: ${local_ms:-?} ms); $out"
}
m=$(mark)
out=$(py notify "$U" 2026-07-28 "${targets[@]}"); rc=$?
wait_until 5 has_lines "$m" subscriptions/listen 1
at=$(since "$m" | served | awk '$2 == "subscriptions/listen" { print $1; exit }')
notify_check "d/python-2026-listen" "$out" "$rc" "$at"

m=$(mark)
out=$(py notify "$U" legacy "${targets[@]}"); rc=$?
wait_until 5 ended "$m"
at=$(since "$m" | served | awk '$4 != "-" { print $1; exit }')
notify_check "d/python-legacy-get-stream" "$out" "$rc" "$at"

# ---- (e) one instance lost
log "(e) node-c killed (SIGKILL)"
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"scale-recipe","version":"1"}}}'
H=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18')
sids=()
for i in $(seq 6); do
  sid=$(curl -sS -m 10 -D - -o /dev/null "$U" "${H[@]}" -d "$INIT" | tr -d '\r' | sed -n 's/^[Mm][Cc][Pp]-[Ss]ession-[Ii][Dd]: //p')
  curl -sS -m 10 -o /dev/null "$U" "${H[@]}" -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  sids+=("$sid")
done
call_in() { # call_in SID: the status of a tools/call in that session
  curl -sS -m 10 -o /dev/null -w '%{http_code}' "$U" "${H[@]}" -H "Mcp-Session-Id: $1" \
    -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x"}}}'
}
statuses() { for s in "${sids[@]}"; do echo "${s%%.*}:$(call_in "$s")"; done | sort | uniq -c | xargs; }
before=$(statuses)
# SIGKILL: no draining, the sessions die with the process. (In braces: the shell's report of
# the killed job goes nowhere.)
{
  kill -KILL "${PID[node-c]}"
  wait_until 10 gone "${PID[node-c]}" || die "node-c did not die"
  wait "${PID[node-c]}"
} 2>/dev/null
after=$(statuses)
ok_after=1
[ "$after" = "2 node-a:200 2 node-b:200 2 node-c:404" ] && ok_after=0
check "e/legacy-sessions" "$ok_after" \
  "6 sessions (tag:status of a tools/call) before the kill: $before; after: $after (node-c's sessions get 404 from a backup instance, the others carry on)"

m=$(mark)
ok=0 fails=0
for i in $(seq 12); do
  if "$CLIENT" --modern "$U" call greet '{"name":"after"}' >/dev/null 2>>"$RUN/e2.err"; then ok=$((ok + 1)); else fails=$((fails + 1)); fi
done
out=$(py pages "$U" 2026-07-28); rc=$?
out2=$(py input "$U"); rc2=$?
out3=$(py session "$U" 10); rc3=$?
wait_until 5 ended "$m"
by=$(since "$m" | served | awk '{ print $1 }' | count_by)
retried=$(since "$m" | grep -c 'upstream=[^ ]*, ')
check "e/stateless-carries-on" "$(is "$ok" = 12 -a "$rc" = 0 -a "$rc2" = 0 -a "$rc3" = 0)" \
  "after the kill: our client $ok of 12 stateless calls; Python 2026 pages: $out; Python input_required: $out2; Python new legacy session: $out3; requests served by $by ($retried passed on by nginx after node-c refused the connection) $(head -c 200 "$RUN/e2.err")"

# ---- summary
ms_list=$(printf '%s\n' "${NOTIFY_MS[@]}" | grep -v '^$' | sort -n | xargs)
echo
echo "summary (nginx $(nginx -v 2>&1 | sed 's/.*\///'), $(redis-server --version | awk '{ print $3 }'), $(elapsed "$T_START") s):"
printf '  %s\n' "${SUMMARY[@]}"
echo "  FIGURE requests that continued another instance's state (next page, input_required retry): $CROSSED of $CROSS_TOTAL"
echo "  FIGURE cross-instance resource update, test_tick sent -> listener heard it (ms): ${ms_list:-none}"
echo "scale-recipe: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
