// A small MCP server on the official TypeScript SDK v2 (npm @modelcontextprotocol/server), for the
// interop tour of OUR client (target/release/tour, fixtures/ts2.json).
//
// Usage: node ts2_server.mjs            stdio (serveStdio: both eras on one entry; the opening
//                                       exchange, server/discover or initialize, picks the era)
//        node ts2_server.mjs --http     Streamable HTTP (createMcpHandler behind node:http) on
//                                       127.0.0.1, a port the kernel picks; prints
//                                       "listening on http://127.0.0.1:PORT/mcp" on stderr
//
// One factory builds the server for every era and, over HTTP, for every request. Tools that need
// the client (elicitation, sampling, roots) return `inputRequired(...)`: in 2026-07-28 that goes
// on the wire as an input_required result the client retries with its answers; in 2025-era
// connections the SDK's legacy shim turns it into server-to-client requests. Logs and progress
// go out as related notifications. `touch` announces a change of ts2://greeting to
// subscriptions/listen streams (2026-07-28) or resources/subscribe subscribers (legacy stdio).
import http from "node:http";
import {
  McpServer,
  ResourceTemplate,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
  inputResponse,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

const useHttp = process.argv.includes("--http");
const GREETING = "ts2://greeting";

// How `touch` announces a resource change: set per transport below.
let announceUpdate = async (_server, _uri) => {};
// Legacy (2025-era) resources/subscribe bookkeeping, per server instance.
const legacySubscriptions = new WeakMap();

const obj = (properties, required = []) => fromJsonSchema({ type: "object", properties, required });

function build(ctx) {
  const mcp = new McpServer(
    { name: "interop-ts2", version: "1.0.0" },
    {
      capabilities: { logging: {}, resources: { subscribe: true, listChanged: true } },
      instructions: "A TypeScript SDK v2 server for the interop tour.",
    },
  );
  const text = (t) => ({ content: [{ type: "text", text: t }] });

  mcp.registerTool(
    "echo",
    {
      description: "Echoes the text back, prefixed with 'Echo: '.",
      inputSchema: obj({ text: { type: "string" } }, ["text"]),
      outputSchema: obj({ result: { type: "string" } }, ["result"]),
    },
    async ({ text: t }) => ({ ...text(`Echo: ${t}`), structuredContent: { result: `Echo: ${t}` } }),
  );
  mcp.registerTool(
    "add",
    {
      description: "Adds two integers.",
      inputSchema: obj({ a: { type: "integer" }, b: { type: "integer" } }, ["a", "b"]),
      outputSchema: obj({ result: { type: "integer" } }, ["result"]),
    },
    async ({ a, b }) => ({ ...text(String(a + b)), structuredContent: { result: a + b } }),
  );
  mcp.registerTool(
    "fail",
    { description: "Fails on purpose: a tool error, not a protocol error.", inputSchema: obj({}) },
    async () => ({ isError: true, content: [{ type: "text", text: "this tool always fails" }] }),
  );
  mcp.registerTool(
    "count",
    {
      description: "Reports progress once per step, then answers.",
      inputSchema: obj({ steps: { type: "integer" } }, ["steps"]),
    },
    async ({ steps }, c) => {
      const token = c.mcpReq._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        if (token !== undefined) {
          await c.mcpReq.notify({
            method: "notifications/progress",
            params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
          });
        }
      }
      return text(`counted to ${steps}`);
    },
  );
  mcp.registerTool(
    "chatty",
    { description: "Sends two log messages (info, then warning) before answering.", inputSchema: obj({}) },
    async (_args, c) => {
      await c.mcpReq.log("info", "chatty started");
      await c.mcpReq.log("warning", "chatty is about to finish");
      return text("said two things");
    },
  );
  mcp.registerTool(
    "greet_user",
    { description: "Asks the user for a name and an age (elicitation).", inputSchema: obj({}) },
    async (_args, c) => {
      const r = inputResponse(c.mcpReq.inputResponses, "person");
      if (r.kind === "missing") {
        return inputRequired({
          inputRequests: {
            person: inputRequired.elicit({
              message: "Who are you?",
              requestedSchema: {
                type: "object",
                properties: { name: { type: "string" }, age: { type: "integer", default: 30 } },
                required: ["name"],
              },
            }),
          },
        });
      }
      if (r.kind === "elicit" && r.action === "accept") return text(`Hello ${r.content?.name}, age ${r.content?.age}`);
      return text(`no answer: ${r.kind === "elicit" ? r.action : r.kind}`);
    },
  );
  mcp.registerTool(
    "write",
    {
      description: "Asks the client's model to write about a topic (sampling).",
      inputSchema: obj({ topic: { type: "string" } }, ["topic"]),
    },
    async ({ topic }, c) => {
      const r = inputResponse(c.mcpReq.inputResponses, "draft");
      if (r.kind !== "sampling") {
        return inputRequired({
          inputRequests: {
            draft: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: `Write about ${topic}` } }],
              maxTokens: 50,
            }),
          },
        });
      }
      return text(`The model wrote: ${r.result.content?.text}`);
    },
  );
  mcp.registerTool(
    "show_roots",
    { description: "Lists the client's roots.", inputSchema: obj({}) },
    async (_args, c) => {
      const r = inputResponse(c.mcpReq.inputResponses, "roots");
      if (r.kind !== "roots") return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
      return text(`roots: ${r.roots.map((x) => x.uri).join(", ")}`);
    },
  );
  mcp.registerTool(
    "poem",
    {
      description: "Two rounds of input: asks for a name, then asks the model for a poem for it.",
      inputSchema: obj({}),
    },
    async (_args, c) => {
      // Round 1 asks for the name; round 2 (name known, carried in requestState) asks the model.
      const state = c.mcpReq.requestState();
      const who = inputResponse(c.mcpReq.inputResponses, "who");
      const name = who.kind === "elicit" && who.action === "accept" ? who.content?.name : state;
      if (typeof name !== "string") {
        return inputRequired({
          inputRequests: {
            who: inputRequired.elicit({
              message: "Whose poem?",
              requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
            }),
          },
        });
      }
      const poem = inputResponse(c.mcpReq.inputResponses, "poem");
      if (poem.kind !== "sampling") {
        return inputRequired({
          requestState: name,
          inputRequests: {
            poem: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: `A poem for ${name}` } }],
              maxTokens: 50,
            }),
          },
        });
      }
      return text(`Poem: ${poem.result.content?.text}`);
    },
  );
  mcp.registerTool(
    "wait",
    {
      description: "Reports progress every 50 ms for `seconds`, then answers (long enough to cancel).",
      inputSchema: obj({ seconds: { type: "number" } }, ["seconds"]),
    },
    async ({ seconds }, c) => {
      const token = c.mcpReq._meta?.progressToken;
      const steps = Math.max(1, Math.floor(seconds / 0.05));
      for (let i = 1; i <= steps; i++) {
        if (c.mcpReq.signal.aborted) throw new Error("cancelled");
        if (token !== undefined) {
          await c.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: i, total: steps } });
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return text(`waited ${seconds} s`);
    },
  );
  mcp.registerTool(
    "touch",
    { description: `Announces that ${GREETING} changed (notifications/resources/updated).`, inputSchema: obj({}) },
    async () => {
      await announceUpdate(mcp, GREETING);
      return text(`touched ${GREETING}`);
    },
  );

  mcp.registerResource(
    "greeting",
    GREETING,
    { description: "A fixed greeting.", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "Hello from the TypeScript SDK v2" }] }),
  );
  mcp.registerResource(
    "item",
    new ResourceTemplate("ts2://items/{item_id}", {
      list: undefined,
      complete: { item_id: (value) => ["7", "70", "8"].filter((x) => x.startsWith(value)) },
    }),
    { description: "One item by id.", mimeType: "application/json" },
    async (uri, vars) => ({
      contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id: vars.item_id, ts2: true }) }],
    }),
  );
  mcp.registerPrompt(
    "greeting_prompt",
    { description: "Asks for a warm greeting.", argsSchema: obj({ name: { type: "string" } }, ["name"]) },
    async ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Please greet ${name} warmly.` } }] }),
  );

  // 2025-era resources/subscribe: McpServer does not serve it; the low-level server does.
  if (ctx?.era !== "modern") {
    const subs = new Set();
    legacySubscriptions.set(mcp, subs);
    mcp.server.setRequestHandler("resources/subscribe", async (req) => {
      subs.add(req.params.uri);
      return {};
    });
    mcp.server.setRequestHandler("resources/unsubscribe", async (req) => {
      subs.delete(req.params.uri);
      return {};
    });
  }
  return mcp;
}

const log = (e) => process.stderr.write(`ts2_server: ${e instanceof Error ? e.message : String(e)}\n`);

if (!useHttp) {
  // stdio: serveStdio routes the instance's outbound change notifications onto the open
  // subscriptions/listen streams (modern); a legacy connection gets them only if subscribed.
  announceUpdate = async (mcp, uri) => {
    const subs = legacySubscriptions.get(mcp);
    if (subs && !subs.has(uri)) return;
    await mcp.server.sendResourceUpdated({ uri });
  };
  serveStdio(build, { onerror: log });
} else {
  const handler = createMcpHandler(build, { onerror: log });
  // Over HTTP every request gets a fresh instance; change events go through the handler's bus
  // to the open subscriptions/listen streams. (Legacy HTTP is stateless: no unsolicited delivery.)
  announceUpdate = async (_mcp, uri) => handler.notify.resourceUpdated(uri);
  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`);
      if (url.pathname !== "/mcp") {
        res.writeHead(404).end("not found");
        return;
      }
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
        else if (v !== undefined) headers.set(k, v);
      }
      const abort = new AbortController();
      res.on("close", () => abort.abort());
      const request = new Request(url, {
        method: req.method,
        headers,
        body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
        signal: abort.signal,
      });
      const response = await handler.fetch(request);
      const out = {};
      response.headers.forEach((v, k) => {
        out[k] = v;
      });
      res.writeHead(response.status, out);
      if (!response.body) {
        res.end();
        return;
      }
      const reader = response.body.getReader();
      abort.signal.addEventListener("abort", () => reader.cancel().catch(() => {}));
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
      res.end();
    } catch (e) {
      log(e);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address();
    process.stderr.write(`listening on http://127.0.0.1:${port}/mcp\n`);
  });
  const stop = () => {
    handler.close().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
