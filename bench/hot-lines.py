#!/usr/bin/env python3
"""How much code one request runs through: the 64-byte lines and 4 KiB pages of machine code
holding an instruction that ran at least once a request, from a callgrind profile taken with
per-instruction counts. Instruction counts say how much work a call does; this says how much
of the instruction cache and TLB it needs after the switch back from the client.

    target/release/stdio-bench -n 10000 --window 1 --server \\
        "valgrind --tool=callgrind --dump-instr=yes --compress-pos=no \\
         --callgrind-out-file=/tmp/cg.out SERVER"
    python3 bench/hot-lines.py /tmp/cg.out 10000 [TOP]

The second argument is the number of requests; TOP (default 20) lists the functions with the
most hot lines. The binary needs its symbols for the names (build with
`--config 'profile.release.strip=false'`); the totals do not.
"""

import collections
import re
import sys


def main() -> None:
    path = sys.argv[1]
    requests = int(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    names: dict[str, str] = {}
    function = "?"
    address = 0
    after_call = False
    counts: collections.Counter[int] = collections.Counter()
    owner: dict[int, str] = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if not line:
            continue
        if line.startswith(("fn=", "cfn=")):
            m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("fn="):
                    function = names.get(m.group(1), "?")
            continue
        if line.startswith("calls="):
            # The next cost line is the call's inclusive cost, not this instruction's own.
            after_call = True
            continue
        if line[0] not in "0123456789+-*":
            continue
        fields = line.split()
        if fields[0].startswith("0x"):
            address = int(fields[0], 16)
        if after_call:
            after_call = False
            continue
        # positions: instr line, then the Ir count.
        if len(fields) > 2:
            counts[address] += int(fields[2])
            owner[address] = function
    hot: dict[str, set[int]] = collections.defaultdict(set)
    for address, n in counts.items():
        if n >= requests:
            hot[owner[address]].add(address >> 6)
    lines = set().union(*hot.values()) if hot else set()
    pages = {line >> 6 for line in lines}
    print(f"hot lines: {len(lines)} ({len(lines) * 64 / 1024:.1f} KiB), hot pages: {len(pages)}")
    for name, its in sorted(hot.items(), key=lambda kv: -len(kv[1]))[:top]:
        print(f"{len(its):5d}  {name[:140]}")


if __name__ == "__main__":
    main()
