"""The official Python SDK's part in scripts/scale-recipe.sh (PyPI mcp 2.3.0, the venv of
scripts/interop.sh).

Usage: python scale-recipe.py ACTION URL [ARGS...]   (URL: the nginx in front of the instances)

  pages MODE            list every tool, page by page (MODE legacy or 2026-07-28)
  input URL             2026-07-28: call confirm_delete, which asks for input (input_required);
                        the SDK answers and retries with the sealed requestState
  session N             legacy: one session, N tools/call of greet and a full tool listing
  notify MODE NAME=URL...  listen for test://watched-resource through nginx (MODE legacy:
                        resources/subscribe + the session's GET stream; 2026-07-28:
                        subscriptions/listen), then call test_tick on each instance directly
                        (NAME=URL, that instance's own address), one after the other, and time
                        how long until the listener hears the update

Prints one JSON object on stdout; exits 1 on failure. The shell script reads nginx's access log
to see which instance served each request.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from contextlib import AsyncExitStack
from typing import Any

import anyio

from mcp import types
from mcp.client.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.simplefilter("ignore", MCPDeprecationWarning)
TIMEOUT = 20.0
WATCHED = "test://watched-resource"


def client(url: str, mode: str, **kw: Any) -> Client:
    return Client(
        url,
        mode=mode,
        read_timeout_seconds=TIMEOUT,
        client_info=types.Implementation(name="scale-recipe-py", version="1.0.0"),
        cache=None,
        **kw,
    )


def text_of(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def list_pages(c: Client) -> tuple[int, int]:
    pages, tools, cursor = 0, 0, None
    while True:
        page = await c.list_tools(cursor=cursor, cache_mode="bypass")
        pages += 1
        tools += len(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return pages, tools


async def pages(url: str, mode: str) -> dict[str, Any]:
    async with client(url, mode) as c:
        n, tools = await list_pages(c)
        return {"protocol": c.protocol_version, "pages": n, "tools": tools}


async def input_required(url: str) -> dict[str, Any]:
    asked: list[str] = []

    async def on_elicit(_ctx: Any, params: types.ElicitRequestParams) -> Any:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async with client(url, "2026-07-28", elicitation_callback=on_elicit) as c:
        res = await c.call_tool("confirm_delete", {"filename": "report.txt"})
        answer = text_of(res)
        if asked != ["Delete report.txt?"] or answer != "deleted report.txt":
            raise RuntimeError(f"asked {asked}, answered {answer!r}")
        return {"protocol": c.protocol_version, "asked": asked, "answer": answer}


async def session(url: str, n: int) -> dict[str, Any]:
    async with client(url, "legacy") as c:
        for i in range(n):
            res = await c.call_tool("greet", {"name": f"n{i}"})
            if text_of(res) != f"Hello, n{i}!":
                raise RuntimeError(f"call {i}: {text_of(res)!r}")
        pages_, tools = await list_pages(c)
        return {"protocol": c.protocol_version, "calls": n, "pages": pages_, "tools": tools}


async def notify(url: str, mode: str, targets: list[tuple[str, str]]) -> dict[str, Any]:
    heard_tx, heard_rx = anyio.create_memory_object_stream[float](16)

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == WATCHED:
            heard_tx.send_nowait(time.perf_counter())

    times: dict[str, float] = {}
    # 2026-07-28 events come from the listen stream alone (not also from the message handler).
    extra = {"message_handler": on_message} if mode == "legacy" else {}
    async with client(url, mode, **extra) as listener, AsyncExitStack() as stack:
        direct = [(name, await stack.enter_async_context(client(u, "2026-07-28"))) for name, u in targets]
        # One call on each first, so the times below hold no first-call costs of the client.
        for _, d in direct:
            await d.call_tool("greet", {"name": "warm-up"})
        if mode == "legacy":
            await listener.subscribe_resource(WATCHED)
            await run_ticks(direct, heard_rx, times)
        else:
            async with listener.listen(resource_subscriptions=[WATCHED]) as sub:

                async def pump() -> None:
                    async for event in sub:
                        if type(event).__name__ == "ResourceUpdated":
                            heard_tx.send_nowait(time.perf_counter())

                async with anyio.create_task_group() as tg:
                    tg.start_soon(pump)
                    await run_ticks(direct, heard_rx, times)
                    tg.cancel_scope.cancel()
        return {"protocol": listener.protocol_version, "ms": times}


async def run_ticks(direct: list[tuple[str, Client]], heard: Any, times: dict[str, float]) -> None:
    for name, d in direct:
        t0 = time.perf_counter()
        res = await d.call_tool("test_tick", {})
        if "updated" not in text_of(res):
            raise RuntimeError(f"test_tick on {name}: {text_of(res)!r}")
        with anyio.fail_after(10):
            t1 = await heard.receive()
        times[name] = round((t1 - t0) * 1000, 2)


def main() -> int:
    argv = sys.argv[1:]
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    action, url, rest = argv[0], argv[1], argv[2:]
    if action == "pages":
        run = lambda: pages(url, rest[0])  # noqa: E731
    elif action == "input":
        run = lambda: input_required(url)  # noqa: E731
    elif action == "session":
        run = lambda: session(url, int(rest[0]))  # noqa: E731
    elif action == "notify":
        targets = [tuple(t.split("=", 1)) for t in rest[1:]]
        run = lambda: notify(url, rest[0], targets)  # noqa: E731
    else:
        print(f"unknown action {action}", file=sys.stderr)
        return 2
    try:
        out = anyio.run(run)
    except Exception as e:  # reported on stdout for the shell script, as JSON
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
