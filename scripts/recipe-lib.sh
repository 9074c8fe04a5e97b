# Shell helpers the recipe scripts share (sourced, not run): free loopback ports, waiting for
# a condition with a deadline, connecting, and whether a process is gone.
port_listening() { # is a TCP socket listening on this port (IPv4 or IPv6)?
  local hex; hex=$(printf ':%04X ' "$1")
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A" { print $2 " " }' | grep -q "$hex"
}
free_port() {
  local p i
  for i in $(seq 100); do
    p=$((20000 + RANDOM % 12000)) # below the ephemeral range, so no client socket takes it
    port_listening "$p" || { echo "$p"; return 0; }
  done
  return 1
}
wait_until() { # wait_until SECONDS CMD...: poll CMD every 0.1 s until it succeeds or time runs out
  local deadline=$((${EPOCHREALTIME/./} + $1 * 1000000)); shift
  until "$@"; do
    [ "${EPOCHREALTIME/./}" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}
can_connect() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }
