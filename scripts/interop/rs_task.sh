#!/usr/bin/env bash
# Tour rs-ref-tasks: OUR client example follows a task of the official TypeScript reference server
# (@modelcontextprotocol/server-everything on SDK 1.32.2, whose `simulate-research-query` runs
# only as an experimental 2025-11-25 task): `client task call` asks for the task (params.task),
# polls tasks/get at the server's pollInterval and takes the result from tasks/result.
#
#   rs_task.sh CLIENT -- SERVER COMMAND...
set -euo pipefail
client="$1"; shift
[ "${1:-}" = "--" ] && shift
set +e
out="$("$client" --revision 2025-11-25 task call simulate-research-query '{"topic":"interop"}' -- "$@" 2>&1)"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  echo "  FAIL task call simulate-research-query: exit $rc: $(head -c 300 <<<"$out")"
  exit 1
fi
if grep -q '^client: task .* started' <<<"$out"; then
  echo "  ok tools/call simulate-research-query became a task (CreateTaskResult)"
else
  echo "  FAIL tools/call simulate-research-query: no task was started: $(head -c 300 <<<"$out")"
  exit 1
fi
if grep -q 'Research Report: interop' <<<"$out"; then
  echo "  ok tasks/get polled to the end, tasks/result gave the report"
else
  echo "  FAIL the task's result is not the report: $(head -c 300 <<<"$out")"
  exit 1
fi
