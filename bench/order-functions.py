#!/usr/bin/env python3
"""Writes a symbol ordering file for the linker: the functions a stdio server runs in a usual
session, those it runs on every request first, then those it ran once (start-up, the
handshake, the tool list), from a callgrind profile taken with mangled names. Linked in that
order (lld's `--symbol-ordering-file`), the code a running server uses sits in a few
contiguous pages instead of being spread over the whole text: the kernel maps a file's pages
in 64 KiB windows around each page touched, so the spread decides how much of the binary is
resident (idle RSS), and the per-request part is what the instruction TLB holds between
requests.

    python3 bench/order-functions.py SERVER [CALLS] > ORDER

SERVER is a binary built with its symbols (`RUSTFLAGS="-C strip=none"`, which leaves the
symbols' names as in the stripped build; `--config profile.release.strip=false` would not).
The session: `initialize`, `notifications/initialized`, `tools/list`, `ping`, then CALLS
(default 2000) calls of the first listed tool, one at a time, each with the string arguments
its input schema requires. `scripts/echo-order.sh` runs it for `echo`. Symbols that a later
build no longer has are skipped by the linker, so a stale file costs nothing but its effect.
"""

import collections
import json
import os
import re
import subprocess
import sys
import tempfile


def session(server: str, calls: int, profile: str) -> None:
    """Runs SERVER under callgrind through the usual session."""
    cmd = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={profile}"]
    p = subprocess.Popen(cmd + [server], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    assert p.stdin is not None and p.stdout is not None

    def ask(msg: dict) -> dict:
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
        if "id" not in msg:
            return {}
        return json.loads(p.stdout.readline())

    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "order-functions", "version": "1"}}})
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})["result"]["tools"]
    ask({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    tool = tools[0]
    args = {k: "hello" for k in tool.get("inputSchema", {}).get("required", [])}
    for i in range(calls):
        answer = ask({"jsonrpc": "2.0", "id": 3 + i, "method": "tools/call",
                      "params": {"name": tool["name"], "arguments": args}})
        assert "result" in answer, answer
    p.stdin.close()
    p.wait()


def costs(profile: str, binary: str) -> collections.Counter:
    """Each function of BINARY with the instructions it ran itself."""
    objects: dict[str, str] = {}
    names: dict[str, str] = {}
    cost: collections.Counter[str] = collections.Counter()
    in_binary = False
    function = None
    after_call = False
    for line in open(profile, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"(c?)ob=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                objects[m.group(2)] = m.group(3)
            if not m.group(1):
                in_binary = objects.get(m.group(2), "") == binary
            continue
        m = re.match(r"(c?)fn=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if not m.group(1):
                function = names[m.group(2)] if in_binary else None
            continue
        if line.startswith("calls="):
            # The next cost line is the call's inclusive cost, not this function's own.
            after_call = True
            continue
        if not line or line[0] not in "0123456789+-*":
            continue
        if after_call:
            after_call = False
            continue
        if function is not None:
            fields = line.split()
            if len(fields) > 1:
                cost[function] += int(fields[-1])
    return cost


def main() -> None:
    server = os.path.realpath(sys.argv[1])
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    with tempfile.TemporaryDirectory() as tmp:
        profile = os.path.join(tmp, "callgrind.out")
        session(server, calls, profile)
        cost = costs(profile, server)
    hot, once = [], []
    for name, n in cost.items():
        # Recursion cycles are suffixed 'N; addresses and callgrind's own labels are no symbols.
        name = re.sub(r"'\d+$", "", name)
        if name.startswith(("0x", "(")):
            continue
        (hot if n >= calls else once).append((n, name))
    seen = set()
    for _, name in sorted(hot, reverse=True) + sorted(once, reverse=True):
        if name not in seen:
            seen.add(name)
            print(name)


if __name__ == "__main__":
    main()
