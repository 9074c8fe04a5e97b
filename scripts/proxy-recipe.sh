#!/usr/bin/env bash
# The tested deployment recipe for mcp-http-blocking: nginx (deploy/nginx/mcp.conf) in front of
# `everything --http`, on loopback only. Proves that
#   (a) MCP works through the proxy: initialize + session id, tools/call as JSON, a tools/call
#       answered as SSE with the progress events passed on one by one before the result, a GET
#       stream, DELETE; Host not served by the proxy gets 421, a foreign Origin still gets the
#       server's 403;
#   (b) an absurd Content-Length is refused by nginx (413), the server's threads and fds do not
#       grow over 50 such requests;
#   (c) a 64 MiB header line without a line break is refused by nginx (400), the server's
#       VmRSS / VmHWM stay flat;
#   (d) 2,000 concurrent idle connections (nothing sent / half a head / a finished request left
#       open) keep the server's thread count within a small bound;
#   (e) 100 long-lived GET streams from one address: limit_conn passes 64 and refuses the rest
#       (503), the server's threads stay bounded, and a client on another loopback address is
#       still served;
# then, for contrast, runs (b), (c) and (d) against the server directly and prints how much its
# threads, fds and memory grow (information, not a pass/fail check).
#
#   scripts/proxy-recipe.sh            (installs nginx with apt-get if it is missing: needs root)
#   EVERYTHING_BIN=path  KEEP_RUNDIR=1  PROXY_RECIPE_IDLE=2000
#
# Ends with the plain line "proxy-recipe: N passed, M failed"; exits 1 if a check failed.
set -uo pipefail
trap '' PIPE # writes to sockets the peer closed must fail, not kill the script

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CONF="$ROOT/deploy/nginx/mcp.conf"
BIN="${EVERYTHING_BIN:-$ROOT/target/release/everything}"
IDLE="${PROXY_RECIPE_IDLE:-2000}"
T_START=$EPOCHREALTIME

die() { echo "proxy-recipe: error: $*" >&2; echo "proxy-recipe: 0 passed, 1 failed"; exit 1; }
log() { echo "== $*"; }
PASSED=0 FAILED=0 SUMMARY=()
check() { # check NAME CONDITION-EXIT-STATUS DETAIL
  local name=$1 ok=$2 detail=$3
  if [ "$ok" = 0 ]; then PASSED=$((PASSED + 1)); SUMMARY+=("PASS $name: $detail")
  else FAILED=$((FAILED + 1)); SUMMARY+=("FAIL $name: $detail"); fi
  echo "   ${SUMMARY[-1]}"
}
info() { SUMMARY+=("INFO $*"); echo "   INFO $*"; }
is() { [ "$@" ] && echo 0 || echo 1; } # is A -op B  ->  0 when the test holds
elapsed() { printf '%.2f' "$(echo "$EPOCHREALTIME - $1" | bc)"; }

# ---- prerequisites
[ -f "$CONF" ] || die "no $CONF"
command -v curl >/dev/null || die "curl not found"
command -v bc >/dev/null || die "bc not found"
if ! command -v nginx >/dev/null; then
  log "installing nginx (apt-get)"
  [ "$(id -u)" = 0 ] || die "nginx is missing; install it as root: apt-get -y install nginx"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get -y -qq install nginx >/dev/null || die "apt-get install nginx failed"
fi
if [ ! -x "$BIN" ]; then
  log "building everything (cargo build --release -p mcp-examples)"
  (cd "$ROOT" && cargo build --release -p mcp-examples) || die "build failed"
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((IDLE + 300)) ]; then
  IDLE=$(($(ulimit -n) - 300))
  echo "   (open-file limit $(ulimit -n): using $IDLE idle connections)"
fi
# The knobs the bounds below are derived from, read from the config under test.
PERIP=$(sed -n 's/^ *limit_conn mcp_perip \([0-9]*\);.*/\1/p' "$CONF")
KEEPALIVE=$(sed -n 's/^ *keepalive \([0-9]*\);.*/\1/p' "$CONF")
[ -n "$PERIP" ] && [ -n "$KEEPALIVE" ] || die "limit_conn mcp_perip / keepalive not found in $CONF"

RUN="$(mktemp -d /tmp/proxy-recipe.XXXXXX)"
chmod 755 "$RUN" # nginx workers run as nobody when started by root

SRV_PID="" NGX_PID="" HELD=()
cleanup() {
  close_all
  [ -n "$NGX_PID" ] && kill "$NGX_PID" 2>/dev/null && wait "$NGX_PID" 2>/dev/null
  [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
  if [ -n "${KEEP_RUNDIR:-}" ]; then echo "run directory kept: $RUN"; else rm -rf "$RUN"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- helpers: /proc, sockets, waiting with a deadline
field() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; } # field PID Threads
nfds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
. "$(dirname "$0")/recipe-lib.sh" # port_listening free_port wait_until can_connect gone
open_fd() { # open_fd PORT: a connection in $FD, remembered in HELD
  exec {FD}<>"/dev/tcp/127.0.0.1/$1" || return 1
  HELD+=("$FD")
}
close_all() { local fd; for fd in "${HELD[@]}"; do exec {fd}<&-; done; HELD=(); }
status_of() { # status_of FD [SECONDS]: the status code of the response on FD (or "none")
  local line
  if IFS= read -r -t "${2:-5}" line <&"$1" && [[ $line =~ ^HTTP/1\.[01]\ ([0-9]{3}) ]]; then
    echo "${BASH_REMATCH[1]}"
  else echo none; fi
}
statuses() { # statuses SECONDS FD...: "COUNT STATUS ..." of the responses on these FDs
  local fd deadline=$((EPOCHSECONDS + $1)) left; shift
  for fd in "$@"; do
    left=$((deadline - EPOCHSECONDS)); [ "$left" -ge 1 ] || left=1
    status_of "$fd" "$left"
  done | sort | uniq -c | xargs
}
head_of() { # head_of FD: the response head on FD, CR stripped, up to the blank line
  local line
  while IFS= read -r -t 5 line <&"$1"; do
    line=${line%$'\r'}; [ -z "$line" ] && return 0; echo "$line"
  done
}

ACCEPT='Accept: application/json, text/event-stream'
JSON='Content-Type: application/json'
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"proxy-recipe","version":"1"}}}'
PV='MCP-Protocol-Version: 2025-06-18'
session_of() { # session_of PORT [curl args]: initialize, print the Mcp-Session-Id
  local port=$1; shift
  curl -sS -m 10 -D - -o /dev/null "$@" "http://127.0.0.1:$port/mcp" -H "$JSON" -H "$ACCEPT" -d "$INIT" |
    tr -d '\r' | sed -n 's/^[Mm][Cc][Pp]-[Ss]ession-[Ii][Dd]: //p'
}

# ---- start the server and nginx
start_server() { # start_server NAME: sets SRV_PID and SRV_PORT
  log "starting $BIN --http 127.0.0.1:0 ($1)"
  "$BIN" --http 127.0.0.1:0 2>"$RUN/$1.log" &
  SRV_PID=$!
  wait_until 15 grep -q 'listening on http://' "$RUN/$1.log" || die "server did not start: $(cat "$RUN/$1.log")"
  SRV_PORT=$(sed -n 's#.*listening on http://127\.0\.0\.1:\([0-9]*\)/mcp.*#\1#p' "$RUN/$1.log")
  [ -n "$SRV_PORT" ] || die "no port in: $(cat "$RUN/$1.log")"
}
start_server behind-nginx

nginx_up() { can_connect "$NGX_PORT" || gone "$NGX_PID"; }
for attempt in 1 2 3 4 5; do
  NGX_PORT=$(free_port) || die "no free port"
  sed -e "s/127\.0\.0\.1:8081/127.0.0.1:$SRV_PORT/" -e "s/127\.0\.0\.1:8080/127.0.0.1:$NGX_PORT/" \
    "$CONF" >"$RUN/mcp.conf"
  nginx -p "$RUN/" -e "$RUN/error.log" -c "$RUN/mcp.conf" 2>>"$RUN/nginx.out" &
  NGX_PID=$!
  wait_until 10 nginx_up || die "nginx did not start in 10 s"
  can_connect "$NGX_PORT" && break
  wait "$NGX_PID" 2>/dev/null; NGX_PID=""
  grep -q 'Address already in use' "$RUN/error.log" "$RUN/nginx.out" 2>/dev/null || die "nginx failed: $(cat "$RUN/error.log" "$RUN/nginx.out")"
done
[ -n "$NGX_PID" ] || die "nginx could not bind a port"
worker_up() { NGX_WORKER=$(pgrep -P "$NGX_PID" | head -1); [ -n "$NGX_WORKER" ]; }
wait_until 10 worker_up || die "no nginx worker process"
echo "   server pid $SRV_PID on 127.0.0.1:$SRV_PORT; nginx $(nginx -v 2>&1 | sed 's/.*\///') pid $NGX_PID on 127.0.0.1:$NGX_PORT; run dir $RUN"
U="http://127.0.0.1:$NGX_PORT/mcp"

# ---- (a) MCP through the proxy
log "(a) MCP through nginx"
curl -sS -m 10 -D "$RUN/a1.h" -o "$RUN/a1.b" "$U" -H "$JSON" -H "$ACCEPT" -d "$INIT"
SID=$(tr -d '\r' <"$RUN/a1.h" | sed -n 's/^[Mm][Cc][Pp]-[Ss]ession-[Ii][Dd]: //p')
check "a/initialize" "$(is -n "$SID" -a "$(grep -c '"protocolVersion":"2025-06-18"' "$RUN/a1.b")" -ge 1)" \
  "$(head -1 "$RUN/a1.h" | tr -d '\r'), Mcp-Session-Id ${SID:0:12}..."
S=(-H "$JSON" -H "$ACCEPT" -H "Mcp-Session-Id: $SID" -H "$PV")
code=$(curl -sS -m 10 -o /dev/null -w '%{http_code}' "$U" "${S[@]}" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}')
check "a/initialized" "$(is "$code" = 202)" "notification answered $code"
body=$(curl -sS -m 10 "$U" "${S[@]}" -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}')
check "a/tools-call-json" "$(is "$(grep -c 'This is a simple text response for testing.' <<<"$body")" = 1)" "test_simple_text: ${body:0:90}..."

# SSE: stamp every line as it arrives; the tool waits 50 ms between its three progress steps.
curl -sS -N -m 10 -D "$RUN/a3.h" "$U" "${S[@]}" \
  -d '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"p-1"}}}' |
  while IFS= read -r line; do [[ $line == data:* ]] && echo "$EPOCHREALTIME $line"; done >"$RUN/a3.events"
ctype=$(tr -d '\r' <"$RUN/a3.h" | sed -n 's/^[Cc]ontent-[Tt]ype: //p')
order=$(awk '/notifications\/progress/ { printf "P" } /"result"/ { printf "R" }' "$RUN/a3.events")
t_first=$(awk '/notifications\/progress/ { print $1; exit }' "$RUN/a3.events")
t_result=$(awk '/"result"/ { print $1; exit }' "$RUN/a3.events")
gap_ms=$(echo "(${t_result:-0} - ${t_first:-0}) * 1000 / 1" | bc)
check "a/tools-call-sse" "$(is "$ctype" = text/event-stream -a "$order" = PPPR -a "$gap_ms" -ge 60)" \
  "Content-Type $ctype, events $order (P progress, R result), first progress ${gap_ms} ms before the result (unbuffered: >= 60, the tool sleeps 2 x 50 ms)"

# GET stream: the head arrives at once and the stream stays open (read the head, then hang up).
open_fd "$NGX_PORT"
printf 'GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n%s\r\n\r\n' "$NGX_PORT" "$SID" "$PV" >&"$FD"
ghead=$(head_of "$FD")
close_all
check "a/get-stream" "$(is "$(grep -c -E '^HTTP/1.1 200|^Content-Type: text/event-stream' <<<"$ghead")" = 2)" \
  "$(head -1 <<<"$ghead"), $(grep -i '^content-type' <<<"$ghead")"
code=$(curl -sS -m 10 -o /dev/null -w '%{http_code}' -X DELETE "$U" -H "Mcp-Session-Id: $SID" -H "$PV")
check "a/delete" "$(is "${code:0:1}" = 2)" "DELETE with the session id answered $code"
code=$(curl -sS -m 10 -o /dev/null -w '%{http_code}' "$U" -H "Host: rebind.example:$NGX_PORT" -H "$JSON" -H "$ACCEPT" -d "$INIT")
check "a/host-rebinding" "$(is "$code" = 421)" "Host: rebind.example answered $code by nginx"
code=$(curl -sS -m 10 -o "$RUN/a5.b" -w '%{http_code}' "$U" -H 'Origin: http://evil.example' -H "$JSON" -H "$ACCEPT" -d "$INIT")
check "a/origin" "$(is "$code" = 403 -a "$(grep -c 'Origin not allowed' "$RUN/a5.b")" = 1)" \
  "Origin: http://evil.example answered $code by the server (Origin forwarded)"
code=$(curl -sS -m 10 -o /dev/null -w '%{http_code}' "$U" -H "Host: localhost:$NGX_PORT" -H "Origin: http://localhost:$NGX_PORT" -H "$JSON" -H "$ACCEPT" -d "$INIT")
check "a/loopback-origin" "$(is "$code" = 200)" "Host/Origin localhost answered $code"

# ---- (b) absurd Content-Length
absurd() { # absurd PORT: send the head and one byte of a 999999999999999-byte body; print the status
  open_fd "$1" || { echo none; return; }
  printf 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 999999999999999\r\n\r\n{' >&"$FD" 2>/dev/null
  status_of "$FD"
  close_all
}
log "(b) Content-Length: 999999999999999, 50 times, through nginx"
th0=$(field "$SRV_PID" Threads) fd0=$(nfds "$SRV_PID")
codes=$(for i in $(seq 50); do absurd "$NGX_PORT"; done | sort | uniq -c | xargs)
th1=$(field "$SRV_PID" Threads) fd1=$(nfds "$SRV_PID")
check "b/413-by-nginx" "$(is "$codes" = "50 413")" "statuses: $codes"
check "b/server-threads-flat" "$(is $((th1 - th0)) -le 2)" "server threads $th0 -> $th1, fds $fd0 -> $fd1"
B_PROXY="threads $th0 -> $th1, fds $fd0 -> $fd1"

# ---- (c) 64 MiB header line without a line break
bigline() { # bigline PORT: send a header line of 64 MiB and no CRLF; the writer's pid in WRITER
  open_fd "$1" || return 1
  { printf 'GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: '; head -c $((64 << 20)) /dev/zero | tr '\0' a; } >&"$FD" 2>/dev/null &
  WRITER=$!
}
log "(c) a 64 MiB header line, through nginx"
rss0=$(field "$SRV_PID" VmRSS) hwm0=$(field "$SRV_PID" VmHWM) nhwm0=$(field "$NGX_WORKER" VmHWM)
t0=$EPOCHREALTIME
bigline "$NGX_PORT"
code=$(status_of "$FD" 20)
wait_until 30 gone "$WRITER" || kill "$WRITER" 2>/dev/null
close_all
rss1=$(field "$SRV_PID" VmRSS) hwm1=$(field "$SRV_PID" VmHWM) nhwm1=$(field "$NGX_WORKER" VmHWM)
check "c/400-by-nginx" "$(is "$code" = 400 -o "$code" = 494)" "status $code after $(elapsed "$t0") s"
check "c/server-rss-flat" "$(is $((hwm1 - hwm0)) -le 1024 -a $((rss1 - rss0)) -le 1024)" \
  "server VmRSS $rss0 -> $rss1 kB, VmHWM $hwm0 -> $hwm1 kB (nginx worker VmHWM $nhwm0 -> $nhwm1 kB)"
C_PROXY="server VmRSS $rss0 -> $rss1 kB, VmHWM $hwm0 -> $hwm1 kB"

# ---- (d) idle connections
hold_idle() { # hold_idle PORT N: N connections, a third each sending nothing / half a head / a whole request
  local i
  for ((i = 0; i < $2; i++)); do
    open_fd "$1" || { echo "   could only open $i connections"; return 1; }
    case $((i % 3)) in
      1) printf 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl' >&"$FD" 2>/dev/null ;;
      2) printf 'GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n' >&"$FD" 2>/dev/null ;;
    esac
  done
}
peak_threads() { # peak_threads PID: the highest Threads count over 2 s (0.1 s apart)
  local i t max=0
  for i in $(seq 20); do
    t=$(field "$1" Threads); [ "${t:-0}" -gt "$max" ] && max=$t
    sleep 0.1
  done
  echo "$max"
}
log "(d) $IDLE idle connections to nginx"
# The bounds of (d) and (e) are counted from this floor: threads still ending from (d) must not
# hide growth in (e).
FLOOR=$(field "$SRV_PID" Threads)
th0=$FLOOR rss0=$(field "$SRV_PID" VmRSS)
t0=$EPOCHREALTIME
hold_idle "$NGX_PORT" "$IDLE"
opened=${#HELD[@]}
t_open=$(elapsed "$t0")
# Every third connection sent a whole request: wait until all of those have an answer.
# Measured while all of them are open (well within client_header_timeout, 10 s).
thp=$(peak_threads "$SRV_PID") rss1=$(field "$SRV_PID" VmRSS)
read -r code took < <(curl -sS -m 20 -o /dev/null -w '%{http_code} %{time_total}' --interface 127.0.0.2 "$U" -H "$JSON" -H "$ACCEPT" -d "$INIT")
nconn=$(field "$NGX_WORKER" VmRSS)
whole=(); for ((i = 2; i < opened; i += 3)); do whole+=("${HELD[$i]}"); done
codes=$(statuses 2 "${whole[@]}")
close_all
# A forwarded connection costs the server one thread (two while a handler's answer is written
# from another thread); idle pooled connections one each; +8 for the server's own housekeeping.
bound=$((2 * PERIP + KEEPALIVE + 8))
check "d/server-threads-bounded" "$(is "$opened" = "$IDLE" -a $((thp - th0)) -le "$bound")" \
  "$opened connections (opened in $t_open s, held $(elapsed "$t0") s): server threads $th0 -> peak $thp (bound +$bound = 2 x limit_conn $PERIP + keepalive $KEEPALIVE + 8), VmRSS $rss0 -> $rss1 kB; nginx worker VmRSS $nconn kB; answers to the whole requests: $codes"
check "d/still-serving" "$(is "$code" = 200)" "initialize from 127.0.0.2 while they were held: $code in $took s"
check "d/all-answered" "$(case "$codes" in *none*) echo 1 ;; *) echo 0 ;; esac)" "every whole request was answered within 2 s: $codes"
D_PROXY="threads $th0 -> peak $thp"

# ---- (e) long-lived streams: the per-address cap
N_STREAMS=$((PERIP + 36))
log "(e) $N_STREAMS GET streams from 127.0.0.1 (one per session), limit_conn $PERIP"
sids=()
for i in $(seq "$N_STREAMS"); do sids+=("$(session_of "$NGX_PORT")"); done
th0=$FLOOR
for sid in "${sids[@]}"; do
  open_fd "$NGX_PORT" || break
  printf 'GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n%s\r\n\r\n' "$sid" "$PV" >&"$FD" 2>/dev/null
done
codes=$(statuses 3 "${HELD[@]}")
thp=$(peak_threads "$SRV_PID")
code_other=$(curl -sS -m 10 -o /dev/null -w '%{http_code}' --interface 127.0.0.2 "$U" -H "$JSON" -H "$ACCEPT" -d "$INIT")
code_same=$(curl -sS -m 10 -o /dev/null -w '%{http_code}' "$U" -H "$JSON" -H "$ACCEPT" -d "$INIT")
close_all
for sid in "${sids[@]}"; do curl -sS -m 5 -o /dev/null -X DELETE "$U" -H "Mcp-Session-Id: $sid" -H "$PV"; done
n200=$(grep -o '[0-9]* 200' <<<"$codes" | cut -d' ' -f1) n503=$(grep -o '[0-9]* 503' <<<"$codes" | cut -d' ' -f1)
nnone=$(grep -o '[0-9]* none' <<<"$codes" | cut -d' ' -f1)
check "e/limit-conn" "$(is "${n503:-0}" = $((N_STREAMS - PERIP)) -a "${n200:-0}" = "$PERIP")" \
  "statuses: $codes (nginx forwarded $PERIP, all answered at once; refused the rest)"
check "e/server-threads-bounded" "$(is $((thp - th0)) -le "$bound")" "server threads $th0 (before (d)) -> peak $thp with $PERIP streams open (bound +$bound)"
check "e/other-address-served" "$(is "$code_other" = 200 -a "$code_same" = 503)" \
  "while held: initialize from 127.0.0.2 $code_other, from 127.0.0.1 $code_same"

# ---- contrast: the same against the server directly (measured, not checked)
# A fresh server, so that threads still ending from the phases above do not blur the numbers.
stop_pid() { kill "$1" 2>/dev/null; wait_until 10 gone "$1"; wait "$1" 2>/dev/null; }
stop_pid "$NGX_PID"; NGX_PID=""
stop_pid "$SRV_PID"; SRV_PID=""
start_server direct
log "contrast: the same traffic straight to the server"
th0=$(field "$SRV_PID" Threads) fd0=$(nfds "$SRV_PID")
codes=$(for i in $(seq 50); do absurd "$SRV_PORT"; done | sort | uniq -c | xargs)
th1=$(field "$SRV_PID" Threads) fd1=$(nfds "$SRV_PID")
info "direct/b: 50 absurd Content-Length requests: statuses $codes; server threads $th0 -> $th1 (+$((th1 - th0))), fds $fd0 -> $fd1 (+$((fd1 - fd0))) (through nginx: $B_PROXY)"

rss0=$(field "$SRV_PID" VmRSS) hwm0=$(field "$SRV_PID" VmHWM)
t0=$EPOCHREALTIME
bigline "$SRV_PORT"
wait_until 60 gone "$WRITER" || kill "$WRITER" 2>/dev/null
rss1=$(field "$SRV_PID" VmRSS) hwm1=$(field "$SRV_PID" VmHWM)
close_all
info "direct/c: 64 MiB header line: the writer was done or cut off after $(elapsed "$t0") s; VmRSS $rss0 -> $rss1 kB (+$(((rss1 - rss0) / 1024)) MiB), VmHWM $hwm0 -> $hwm1 kB (through nginx: $C_PROXY)"

th0=$(field "$SRV_PID" Threads)
t0=$EPOCHREALTIME
hold_idle "$SRV_PORT" "$IDLE"
opened=${#HELD[@]}
wait_until 10 eval '[ $(($(field "$SRV_PID" Threads) - th0)) -ge $opened ]'
th1=$(field "$SRV_PID" Threads) rss1=$(field "$SRV_PID" VmRSS)
close_all
info "direct/d: $opened idle connections: server threads $th0 -> $th1 (+$((th1 - th0))), VmRSS $rss1 kB, in $(elapsed "$t0") s (through nginx: $D_PROXY)"
if gone "$SRV_PID"; then check "server-alive" 1 "the server process died"
else check "server-alive" 0 "the server process survived all of it"; fi

# ---- summary
echo
echo "summary (nginx $(nginx -v 2>&1 | sed 's/.*\///'), $(elapsed "$T_START") s):"
printf '  %s\n' "${SUMMARY[@]}"
echo "proxy-recipe: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
