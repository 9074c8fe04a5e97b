"""Interop tour with the official Python SDK client (PyPI `mcp`).

Usage: python tour.py FIXTURES.json LABEL MODE -- SERVER_COMMAND [ARGS...]   (stdio)
       python tour.py FIXTURES.json LABEL MODE --http URL    (Streamable HTTP, e.g. http://127.0.0.1:PORT/mcp)
       python tour.py FIXTURES.json LABEL MODE --sse URL     (2024-11-05 HTTP+SSE, e.g. http://127.0.0.1:PORT/sse)

MODE is `legacy` (initialize handshake; also ping, logging/setLevel, resources/subscribe) or a
modern revision such as `2026-07-28` (server/discover, subscriptions/listen, sampling and
elicitation through InputRequiredResult, logs opted in per request). The same steps as tour.mjs:
list and call every tool, read every resource, get every prompt, ask for completions; where the
fixture file describes an answer, the answer must match it (see match.py). Prints one line per
step and a summary line; exits 1 when a step failed.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from typing import Any

import anyio
from match import ROOTS, SAMPLING_ANSWER, elicit_answer, match, synthesize_args

import mcp
from mcp import types
from mcp.client.client import Client
from mcp.client.sse import sse_client
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.simplefilter("ignore", MCPDeprecationWarning)
TIMEOUT = 30.0


def dump(model: Any) -> Any:
    """Wire-shaped JSON of an SDK model (aliases, no unset fields)."""
    if hasattr(model, "model_dump"):
        return model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return model


class Tour:
    def __init__(self, fx: dict[str, Any], label: str, mode: str) -> None:
        self.fx = fx
        self.label = label
        self.mode = mode
        self.steps = 0
        self.failures = 0
        self.current_tool: str | None = None
        self.sampling: list[dict[str, Any]] = []
        self.elicitation: list[dict[str, Any]] = []
        self.roots = 0
        self.logs: list[dict[str, Any]] = []
        self.tools_changed = anyio.Event()

    # ---- reporting
    def ok(self, name: str, note: str | None = None) -> None:
        self.steps += 1
        print(f"  ok   {name}" + (f" ({note})" if note else ""), flush=True)

    def fail(self, name: str, why: str) -> None:
        self.steps += 1
        self.failures += 1
        print(f"  FAIL {name}: {why}", flush=True)

    def check(self, name: str, actual: Any, pattern: Any) -> bool:
        errs = match(actual, pattern)
        if not errs:
            self.ok(name)
        else:
            got = json.dumps(actual)[:600]
            self.fail(name, "; ".join(errs[:5]) + f"\n       got: {got}")
        return not errs

    async def step(self, name: str, fn: Any) -> Any:
        try:
            return await fn()
        except Exception as e:  # a failed step is reported, the tour goes on
            self.fail(name, f"{type(e).__name__}: {e}")
            return None

    # ---- client callbacks
    async def on_sampling(self, _ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        self.sampling.append({"tool": self.current_tool, "params": dump(params)})
        return types.CreateMessageResult.model_validate(SAMPLING_ANSWER)

    async def on_elicitation(self, _ctx: Any, params: types.ElicitRequestParams) -> Any:
        p = dump(params)
        self.elicitation.append({"tool": self.current_tool, "params": p})
        f = self.fx["tools"].get(self.current_tool or "", {})
        answer = f.get("answer") or elicit_answer(p.get("requestedSchema"))
        return types.ElicitResult.model_validate(answer)

    async def on_roots(self, _ctx: Any) -> Any:
        self.roots += 1
        return types.ListRootsResult.model_validate({"roots": ROOTS})

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(dump(params))

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_changed.set()

    # ---- the tour
    async def run(self, transport: str, target: list[str]) -> int:
        print(f"tour {self.label} ({transport}): {' '.join(target)}", flush=True)
        started = time.monotonic()
        server: Any
        if transport == "http":
            server = target[0]  # a URL string: the SDK's streamable_http_client
        elif transport == "sse":
            server = sse_client(target[0])
        else:
            server = mcp.StdioServerParameters(command=target[0], args=target[1:])
        legacy = self.mode == "legacy"
        client = Client(
            server,
            mode=self.mode,
            read_timeout_seconds=TIMEOUT,
            sampling_callback=self.on_sampling,
            elicitation_callback=self.on_elicitation,
            list_roots_callback=self.on_roots,
            logging_callback=self.on_log,
            message_handler=self.on_message,
            log_level=None if legacy else "debug",
            client_info=types.Implementation(name="mcp-blocking-interop-py", version="1.0.0"),
            cache=None,
        )
        try:
            async with client:
                self.ok("connect", f"mode {self.mode}, protocol {client.protocol_version}")
                await self.tour(client, started, legacy)
        except Exception as e:
            self.fail("session", f"{type(e).__name__}: {e}")
        print(
            f"tour {self.label}: {'PASS' if self.failures == 0 else 'FAIL'}, "
            f"{self.steps - self.failures}/{self.steps} steps ok (server asked for roots {self.roots}x, "
            f"sampling {len(self.sampling)}x, elicitation {len(self.elicitation)}x)",
            flush=True,
        )
        return 0 if self.failures == 0 else 1

    async def tour(self, client: Client, started: float, legacy: bool) -> None:
        fx = self.fx
        caps = dump(client.server_capabilities) or {}
        if legacy:
            await self.step("ping", lambda: self._ping(client))
            if caps.get("logging") is not None:
                await self.step("logging/setLevel", lambda: self._set_level(client))
            elif fx["required"]["tools"]:
                self.fail("logging capability", "server does not declare logging")
        else:
            if client.protocol_version != self.mode:
                self.fail("protocol version", f"wanted {self.mode}, got {client.protocol_version}")
            await self.step("server/discover", lambda: self._discover(client))

        tools = await self.step("tools/list", lambda: self._list_tools(client)) or []
        late = [n for n in fx.get("late_tools", []) if not any(t["name"] == n for t in tools)]
        if late:
            await self.step("tools/list_changed", lambda: self._wait_tools_changed(client, started, late, legacy))
            tools = await self.step("tools/list (after list_changed)", lambda: self._list_tools(client)) or tools
        errs = []
        for t in tools:
            if not t.get("description"):
                errs.append(f"{t['name']}: no description")
            if (t.get("inputSchema") or {}).get("type") != "object":
                errs.append(f"{t['name']}: inputSchema.type is not object")
        missing = [n for n in fx["required"]["tools"] if not any(t["name"] == n for t in tools)]
        if missing:
            errs.append("missing tools: " + ", ".join(missing))
        if errs:
            self.fail("tools/list shape", "; ".join(errs))
        else:
            self.ok("tools/list shape", f"{len(tools)} tools")
        for name, pattern in fx.get("tool_schemas", {}).items():
            t = next((x for x in tools if x["name"] == name), None)
            if t is not None:
                self.check(f"tools/list {name} schema", t, pattern)
        for t in tools:
            await self._call_tool(client, t)

        if caps.get("resources") is not None or fx["required"]["resources"]:
            await self._resources(client, legacy)
        if caps.get("prompts") is not None or fx["required"]["prompts"]:
            await self._prompts(client)
        for c in fx.get("completions", []):
            ref = c["ref"]
            what = f"completion/complete {ref.get('name') or ref.get('uri')} {c['argument']['name']}"
            await self.step(what, lambda c=c, what=what: self._complete(client, c, what))

    async def _ping(self, client: Client) -> None:
        self.check("ping", dump(await client.send_ping()), {})

    async def _set_level(self, client: Client) -> None:
        self.check("logging/setLevel debug", dump(await client.set_logging_level("debug")), {})

    async def _discover(self, client: Client) -> None:
        res = dump(await client.session.discover())
        if self.mode not in res.get("supportedVersions", []):
            self.fail("server/discover", f"{self.mode} not in supportedVersions {res.get('supportedVersions')}")
        else:
            self.check("server/discover", res, {"supportedVersions": "<any>", "capabilities": "<any>"})

    async def _list_tools(self, client: Client) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            out.extend(dump(t) for t in page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return out

    async def _wait_tools_changed(self, client: Client, started: float, late: list[str], legacy: bool) -> None:
        remaining = max(0.0, started + 8.0 - time.monotonic())
        if legacy:
            with anyio.fail_after(remaining):
                await self.tools_changed.wait()
        else:
            # 2026-07-28: list_changed only travels on a subscriptions/listen stream, so a tool
            # added before the stream opened shows up in a fresh list instead.
            async with client.listen(tools_list_changed=True) as sub:
                if not sub.honored.tools_list_changed:
                    self.fail("subscriptions/listen", "server did not honor toolsListChanged")
                    return
                listed = await self._list_tools(client)
                if all(any(t["name"] == n for t in listed) for n in late):
                    self.ok("tools/list_changed", f"{', '.join(late)} present once listening")
                    return
                with anyio.fail_after(remaining):
                    async for event in sub:
                        if type(event).__name__ == "ToolsListChanged":
                            break
        self.ok("tools/list_changed", f"announced {', '.join(late)}")

    async def _call_tool(self, client: Client, t: dict[str, Any]) -> None:
        name = t["name"]
        skip = self.fx.get("skip_tools", {}).get(name)
        if skip:
            print(f"  skip tools/call {name}: {skip}", flush=True)
            return
        f = self.fx["tools"].get(name, {})
        args = f.get("args")
        if args is None:
            args = synthesize_args(t.get("inputSchema"))
        progress: list[list[float | None]] = []

        async def on_progress(p: float, total: float | None, _message: str | None) -> None:
            progress.append([p, total])

        self.current_tool = name
        before = (len(self.sampling), len(self.elicitation), len(self.logs))
        res = await self.step(
            f"tools/call {name}", lambda: client.call_tool(name, args, progress_callback=on_progress)
        )
        self.current_tool = None
        if res is None:
            return
        res = dump(res)
        if "result" in f:
            self.check(f"tools/call {name}", res, f["result"])
        elif not isinstance(res.get("content"), list):
            self.fail(f"tools/call {name}", "no content array")
        else:
            note = "isError" if res.get("isError") else f"{len(res['content'])} content item(s)"
            self.ok(f"tools/call {name}", note)
        for kind, seen, idx in (("sampling", self.sampling, 0), ("elicitation", self.elicitation, 1)):
            if kind in f:
                got = seen[before[idx] :]
                what = f"{name} {'sampling/createMessage' if kind == 'sampling' else 'elicitation/create'}"
                if len(got) != 1:
                    self.fail(what, f"expected 1 request, got {len(got)}")
                else:
                    self.check(what, got[0]["params"], f[kind])
        if f.get("roots") and self.roots == 0:
            self.fail(f"{name} roots/list", "the server never asked for roots")
        if "logs" in f:
            got_logs = [{k: v for k, v in log.items() if k != "_meta"} for log in self.logs[before[2] :]]
            self.check(f"{name} notifications/message", got_logs, f["logs"])
        if "progress" in f:
            self.check(f"{name} notifications/progress", progress, f["progress"])

    async def _resources(self, client: Client, legacy: bool) -> None:
        fx = self.fx

        async def list_all() -> list[dict[str, Any]]:
            out: list[dict[str, Any]] = []
            cursor = None
            while True:
                page = await client.list_resources(cursor=cursor, cache_mode="bypass")
                out.extend(dump(r) for r in page.resources)
                cursor = page.next_cursor
                if cursor is None:
                    return out

        resources = await self.step("resources/list", list_all) or []
        errs = [f"{r.get('uri')}: missing uri or name" for r in resources if not r.get("uri") or not r.get("name")]
        missing = [u for u in fx["required"]["resources"] if not any(r["uri"] == u for r in resources)]
        if missing:
            errs.append("missing resources: " + ", ".join(missing))
        if errs:
            self.fail("resources/list shape", "; ".join(errs))
        else:
            self.ok("resources/list shape", f"{len(resources)} resources")

        async def templates() -> list[dict[str, Any]]:
            return [dump(t) for t in (await client.list_resource_templates(cache_mode="bypass")).resource_templates]

        tpls = await self.step("resources/templates/list", templates) or []
        missing = [u for u in fx["required"]["resourceTemplates"] if not any(t["uriTemplate"] == u for t in tpls)]
        if missing:
            self.fail("resources/templates/list shape", "missing templates: " + ", ".join(missing))
        else:
            self.ok("resources/templates/list shape", f"{len(tpls)} templates")

        for uri in [r["uri"] for r in resources] + fx.get("extra_reads", []):
            res = await self.step(
                f"resources/read {uri}", lambda uri=uri: client.read_resource(uri, cache_mode="bypass")
            )
            if res is None:
                continue
            res = dump(res)
            pattern = fx.get("resources", {}).get(uri)
            if pattern is not None:
                self.check(f"resources/read {uri}", res, pattern)
            elif not res.get("contents"):
                self.fail(f"resources/read {uri}", "no contents")
            else:
                self.ok(f"resources/read {uri}")

        for uri in fx.get("subscribe", []):
            if legacy:
                await self.step(f"resources/subscribe {uri}", lambda uri=uri: self._subscribe(client, uri))
            else:
                await self.step(f"subscriptions/listen {uri}", lambda uri=uri: self._listen(client, uri))

    async def _subscribe(self, client: Client, uri: str) -> None:
        self.check(f"resources/subscribe {uri}", dump(await client.subscribe_resource(uri)), {})
        self.check(f"resources/unsubscribe {uri}", dump(await client.unsubscribe_resource(uri)), {})

    async def _listen(self, client: Client, uri: str) -> None:
        async with client.listen(resource_subscriptions=[uri]) as sub:
            honored = dump(sub.honored)
            self.check(f"subscriptions/listen {uri} acknowledged", honored, {"resourceSubscriptions": [uri]})

    async def _prompts(self, client: Client) -> None:
        fx = self.fx

        async def list_prompts() -> list[dict[str, Any]]:
            return [dump(p) for p in (await client.list_prompts(cache_mode="bypass")).prompts]

        prompts = await self.step("prompts/list", list_prompts) or []
        errs = [f"{p.get('name')}: missing name or description" for p in prompts if not p.get("description")]
        missing = [n for n in fx["required"]["prompts"] if not any(p["name"] == n for p in prompts)]
        if missing:
            errs.append("missing prompts: " + ", ".join(missing))
        if errs:
            self.fail("prompts/list shape", "; ".join(errs))
        else:
            self.ok("prompts/list shape", f"{len(prompts)} prompts")
        for p in prompts:
            f = fx.get("prompts", {}).get(p["name"], {})
            args = f.get("args")
            if args is None:
                args = {a["name"]: "test" for a in p.get("arguments", []) if a.get("required")}
            res = await self.step(f"prompts/get {p['name']}", lambda p=p, args=args: client.get_prompt(p["name"], args))
            if res is None:
                continue
            res = dump(res)
            if "result" in f:
                self.check(f"prompts/get {p['name']}", res, f["result"])
            elif not res.get("messages"):
                self.fail(f"prompts/get {p['name']}", "no messages")
            else:
                self.ok(f"prompts/get {p['name']}")

    async def _complete(self, client: Client, c: dict[str, Any], what: str) -> None:
        ref_json = c["ref"]
        ref: Any
        if ref_json["type"] == "ref/prompt":
            ref = types.PromptReference(type="ref/prompt", name=ref_json["name"])
        else:
            ref = types.ResourceTemplateReference(type="ref/resource", uri=ref_json["uri"])
        res = dump(await client.complete(ref, c["argument"]))
        if not isinstance((res.get("completion") or {}).get("values"), list):
            self.fail(what, "completion.values is not an array")
        else:
            self.check(what, res, c.get("result", {"completion": {"values": "<any>"}}))


def main() -> int:
    argv = sys.argv[1:]
    how = argv[3] if len(argv) > 3 else None
    if not ((how == "--" and len(argv) >= 5) or (how in ("--http", "--sse") and len(argv) == 5)):
        print(
            "usage: python tour.py FIXTURES.json LABEL MODE (-- SERVER_COMMAND [ARGS...] | --http URL | --sse URL)",
            file=sys.stderr,
        )
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        fx = json.load(fh)
    tour = Tour(fx, argv[1], argv[2])
    transport = {"--": "stdio", "--http": "http", "--sse": "sse"}[how]
    return anyio.run(tour.run, transport, argv[4:])


if __name__ == "__main__":
    sys.exit(main())
