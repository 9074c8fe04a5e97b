"""A small MCP server on the official Python SDK (PyPI `mcp`, MCPServer API), for the interop
tour of OUR client (`target/release/tour`, see scripts/interop.sh).

Usage: python py_server.py            stdio
       python py_server.py --http     Streamable HTTP on 127.0.0.1, a port the kernel picks;
                                      prints "listening on http://127.0.0.1:PORT/mcp" to stderr

The SDK serves both eras on the same server: `initialize` (2025-11-25 and older) and the
2026-07-28 `server/discover` with per-request `_meta`. In 2026-07-28 the tools that need the
client (elicitation, sampling, roots, through `Resolve(...)`) answer with an `input_required`
result, and the client retries the call with its answers. What the tour checks is in
fixtures/python.json.
"""

from __future__ import annotations

import socket
import sys
import warnings
from typing import Annotated

from mcp_types import Completion, ListRootsResult, ListToolsResult, PromptReference, SamplingMessage, TextContent
from pydantic import BaseModel

from mcp.server.mcpserver import Context, Elicit, ElicitationResult, ListRoots, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.simplefilter("ignore", MCPDeprecationWarning)

PAGE = 4


class PagedServer(MCPServer):
    """`tools/list` in pages of four (cursor: the offset), so the client must follow
    `nextCursor`; the SDK itself returns every tool at once."""

    async def _handle_list_tools(self, ctx, params):  # type: ignore[no-untyped-def,override]
        tools = await self.list_tools()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE
        return ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)


server = PagedServer(name="interop-python", version="1.0.0", instructions="A Python SDK server for the interop tour.")


@server.tool(description="Echoes the text back, prefixed with 'Echo: '.")
def echo(text: str) -> str:
    return f"Echo: {text}"


@server.tool(description="Adds two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Fails on purpose: a tool error, not a protocol error.")
def fail() -> str:
    raise ToolError("this tool always fails")


@server.tool(description="Sends two log messages (info, then warning) before answering.")
async def chatty(ctx: Context) -> str:
    await ctx.info("chatty started")
    await ctx.warning("chatty is about to finish")
    return "said two things"


@server.tool(description="Reports progress three times, then answers.")
async def count(steps: int, ctx: Context) -> str:
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
    return f"counted to {steps}"


class Person(BaseModel):
    name: str
    age: int = 30


def ask_person() -> Elicit[Person]:
    return Elicit("Who are you?", Person)


@server.tool(description="Asks the user for a name and an age (elicitation).")
def greet_user(person: Annotated[ElicitationResult[Person], Resolve(ask_person)]) -> str:
    if person.action == "accept":
        return f"Hello {person.data.name}, age {person.data.age}"
    return f"no answer: {person.action}"


def ask_model(topic: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=f"Write about {topic}"))], max_tokens=50)


@server.tool(description="Asks the client's model to write about a topic (sampling).")
def write(topic: str, sampled: Annotated[object, Resolve(ask_model)]) -> str:
    content = getattr(sampled, "content", None)
    text = getattr(content, "text", None)
    return f"The model wrote: {text}"


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool(description="Lists the client's roots.")
def show_roots(roots: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    return "roots: " + ", ".join(str(r.uri) for r in roots.roots)


def ask_name() -> Elicit[Person]:
    return Elicit("Whose poem?", Person)


def ask_poem(person: Annotated[Person, Resolve(ask_name)]) -> Sample:
    text = f"A poem for {person.name}"
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=text))], max_tokens=50)


@server.tool(description="Two rounds of input: asks for a name, then asks the model for a poem for it.")
def poem(sampled: Annotated[object, Resolve(ask_poem)]) -> str:
    return f"Poem: {getattr(getattr(sampled, 'content', None), 'text', None)}"


@server.tool(description="Reports progress every 50 ms for `seconds`, then answers (long enough to cancel).")
async def wait(seconds: float, ctx: Context) -> str:
    import anyio

    steps = max(1, int(seconds / 0.05))
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps)
        await anyio.sleep(0.05)
    return f"waited {seconds} s"


@server.tool(description="Announces that py://greeting changed (notifications/resources/updated).")
async def touch(ctx: Context) -> str:
    await ctx.notify_resource_updated("py://greeting")
    return "touched py://greeting"


@server.resource("py://greeting", name="greeting", description="A fixed greeting.", mime_type="text/plain")
def greeting() -> str:
    return "Hello from the Python SDK"


@server.resource("py://items/{item_id}", name="item", description="One item by id.", mime_type="application/json")
def item(item_id: str) -> str:
    return '{"id": "%s", "python": true}' % item_id


@server.prompt(description="A prompt that greets someone by name.")
def greeting_prompt(name: str) -> str:
    return f"Please greet {name} warmly."


@server.completion()
async def complete(ref, argument, context):  # type: ignore[no-untyped-def]
    if isinstance(ref, PromptReference) and argument.name == "name":
        names = ["Ada", "Alan", "Grace"]
        return Completion(values=[n for n in names if n.startswith(argument.value)])
    return None


def main() -> None:
    if sys.argv[1:] == ["--http"]:
        import anyio
        import uvicorn

        # Bind first (loopback, any free port) so the port is known before serving.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        port = sock.getsockname()[1]
        app = server.streamable_http_app(host="127.0.0.1")
        config = uvicorn.Config(app, log_level="warning")
        print(f"listening on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
        anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))
    elif sys.argv[1:]:
        sys.exit("usage: python py_server.py [--http]")
    else:
        server.run()


if __name__ == "__main__":
    main()
