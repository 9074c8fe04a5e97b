// Interop tour with the official TypeScript SDK client (legacy era, 2025-11-25).
//
// Usage: node tour.mjs FIXTURES.json LABEL -- SERVER_COMMAND [ARGS...]   (stdio)
//        node tour.mjs FIXTURES.json LABEL --http URL   (Streamable HTTP, e.g. http://127.0.0.1:PORT/mcp)
//        node tour.mjs FIXTURES.json LABEL --sse URL    (2024-11-05 HTTP+SSE, e.g. http://127.0.0.1:PORT/sse)
//
// Connects to the server, then lists and calls every tool, reads every resource (and the
// template instances the fixtures name), gets every prompt, asks for completions, sets the log
// level and pings. Where the fixture file describes a tool, resource or prompt, the answer must
// match it (see match.mjs). Registers sampling, elicitation and roots handlers, because fixture
// tools call back into the client. Prints one line per step, then a summary line; exits 1 when a
// step failed.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { ok, fail, check, step, tourPrompts, tourCompletions, summary } from "./steps.mjs";
import { synthesizeArgs, elicitAnswer, SAMPLING_ANSWER, ROOTS } from "./match.mjs";

const argv = process.argv.slice(2);
const how = argv[2];
const okArgs = (how === "--" && argv.length >= 4) || ((how === "--http" || how === "--sse") && argv.length === 4);
if (!okArgs) {
  console.error("usage: node tour.mjs FIXTURES.json LABEL (-- SERVER_COMMAND [ARGS...] | --http URL | --sse URL)");
  process.exit(2);
}
const fx = JSON.parse(readFileSync(argv[0], "utf8"));
const label = argv[1];
const target = argv.slice(3);
const TIMEOUT = { timeout: 30000 };

// What the callbacks saw, per tool being called.
let currentTool = null;
const seen = { sampling: [], elicitation: [], roots: 0, toolsChanged: 0 };
const wire = { progress: [], logs: [] };
let toolsChangedWaiter = null;

const client = new Client(
  { name: "mcp-blocking-interop-ts", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
);
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  seen.sampling.push({ tool: currentTool, params: req.params });
  return SAMPLING_ANSWER;
});
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  seen.elicitation.push({ tool: currentTool, params: req.params });
  const f = currentTool && fx.tools[currentTool];
  return f && f.answer ? f.answer : elicitAnswer(req.params.requestedSchema);
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  seen.roots += 1;
  return { roots: ROOTS };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, () => {
  // Recorded by the wire tap below, in order.
});
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  seen.toolsChanged += 1;
  if (toolsChangedWaiter) toolsChangedWaiter();
});

let transport;
if (how === "--http") transport = new StreamableHTTPClientTransport(new URL(target[0]));
else if (how === "--sse") transport = new SSEClientTransport(new URL(target[0]));
else transport = new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" });
const kind = { "--": "stdio", "--http": "http", "--sse": "sse" }[how];
console.log(`tour ${label} (${kind}): ${target.join(" ")}`);
const started = Date.now();
const connected = await step("initialize", async () => {
  await client.connect(transport, TIMEOUT);
  // Tap the wire: the SDK runs notification handlers a microtask after it sees them but handles
  // responses at once, so a progress notification that shares a read with its response reaches
  // no handler. The tap records notifications in wire order, before the SDK looks at them.
  const sdkOnMessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg.method === "notifications/progress") wire.progress.push(msg.params);
    if (msg.method === "notifications/message") wire.logs.push({ tool: currentTool, params: msg.params });
    sdkOnMessage?.(msg, extra);
  };
  ok("initialize", `protocol ${transport._protocolVersion ?? "2025-11-25"}`);
  return true;
});
if (!connected) await finish();

const caps = client.getServerCapabilities() ?? {};
await step("ping", async () => check("ping", await client.ping(TIMEOUT), {}));
if (caps.logging) {
  await step("logging/setLevel", async () =>
    check("logging/setLevel debug", await client.setLoggingLevel("debug", TIMEOUT), {}));
} else if (fx.required.tools.length) {
  fail("logging capability", "server does not declare logging");
}

// ---- tools
async function listAllTools() {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, TIMEOUT);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}
let tools = (await step("tools/list", listAllTools)) ?? [];
const late = (fx.late_tools ?? []).filter((n) => !tools.some((t) => t.name === n));
if (late.length) {
  // Late tools appear a few seconds after start and are announced by list_changed.
  const deadline = started + 8000;
  await step("tools/list_changed", async () => {
    if (seen.toolsChanged === 0) {
      await new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`no notifications/tools/list_changed within 8 s (waiting for ${late})`)),
          Math.max(0, deadline - Date.now()),
        );
        toolsChangedWaiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    ok("tools/list_changed", `announced ${late.join(", ")}`);
  });
  tools = (await step("tools/list (after list_changed)", listAllTools)) ?? tools;
}
{
  const errs = [];
  for (const t of tools) {
    if (!t.name) errs.push("a tool without name");
    if (!t.description) errs.push(`${t.name}: no description`);
    if (!t.inputSchema || t.inputSchema.type !== "object") errs.push(`${t.name}: inputSchema.type is not object`);
  }
  const missing = fx.required.tools.filter((n) => !tools.some((t) => t.name === n));
  if (missing.length) errs.push(`missing tools: ${missing.join(", ")}`);
  if (errs.length) fail("tools/list shape", errs.join("; "));
  else ok("tools/list shape", `${tools.length} tools`);
}
for (const [name, pattern] of Object.entries(fx.tool_schemas ?? {})) {
  const t = tools.find((x) => x.name === name);
  if (t) check(`tools/list ${name} schema`, t, pattern);
}
for (const t of tools) {
  const name = t.name;
  if (fx.skip_tools?.[name]) {
    console.log(`  skip tools/call ${name}: ${fx.skip_tools[name]}`);
    continue;
  }
  const f = fx.tools[name] ?? {};
  const args = f.args ?? synthesizeArgs(t.inputSchema);
  currentTool = name;
  const before = { s: seen.sampling.length, e: seen.elicitation.length, l: wire.logs.length, p: wire.progress.length };
  // onprogress makes the SDK send a progressToken; the values are read from the wire tap.
  const res = await step(`tools/call ${name}`, () =>
    client.callTool({ name, arguments: args }, CallToolResultSchema, { ...TIMEOUT, onprogress: () => {} }),
  );
  currentTool = null;
  if (res === undefined) continue;
  if (f.result) check(`tools/call ${name}`, res, f.result);
  else if (!Array.isArray(res.content)) fail(`tools/call ${name}`, "no content array");
  else ok(`tools/call ${name}`, res.isError ? "isError" : `${res.content.length} content item(s)`);
  if (f.sampling) {
    const got = seen.sampling.slice(before.s);
    if (got.length !== 1) fail(`${name} sampling/createMessage`, `expected 1 request, got ${got.length}`);
    else check(`${name} sampling/createMessage`, got[0].params, f.sampling);
  }
  if (f.elicitation) {
    const got = seen.elicitation.slice(before.e);
    if (got.length !== 1) fail(`${name} elicitation/create`, `expected 1 request, got ${got.length}`);
    else check(`${name} elicitation/create`, got[0].params, f.elicitation);
  }
  if (f.roots && seen.roots === 0) fail(`${name} roots/list`, "the server never asked for roots");
  if (f.logs) {
    // Notifications sent before the response are delivered before it: no waiting needed.
    const got = wire.logs.slice(before.l).map((x) => x.params);
    check(`${name} notifications/message`, got, f.logs);
  }
  if (f.progress) {
    const got = wire.progress.slice(before.p).map((p) => [p.progress, p.total]);
    check(`${name} notifications/progress`, got, f.progress);
  }
}

// ---- resources
if (caps.resources || fx.required.resources.length) {
  const resources = (await step("resources/list", async () => {
    const all = [];
    let cursor;
    do {
      const page = await client.listResources(cursor ? { cursor } : {}, TIMEOUT);
      all.push(...page.resources);
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  })) ?? [];
  {
    const errs = resources.filter((r) => !r.uri || !r.name).map((r) => `${r.uri}: missing uri or name`);
    const missing = fx.required.resources.filter((u) => !resources.some((r) => r.uri === u));
    if (missing.length) errs.push(`missing resources: ${missing.join(", ")}`);
    if (errs.length) fail("resources/list shape", errs.join("; "));
    else ok("resources/list shape", `${resources.length} resources`);
  }
  const templates = (await step("resources/templates/list", async () =>
    (await client.listResourceTemplates({}, TIMEOUT)).resourceTemplates)) ?? [];
  {
    const missing = fx.required.resourceTemplates.filter((u) => !templates.some((t) => t.uriTemplate === u));
    if (missing.length) fail("resources/templates/list shape", `missing templates: ${missing.join(", ")}`);
    else ok("resources/templates/list shape", `${templates.length} templates`);
  }
  const uris = [...resources.map((r) => r.uri), ...(fx.extra_reads ?? [])];
  for (const uri of uris) {
    const res = await step(`resources/read ${uri}`, () => client.readResource({ uri }, TIMEOUT));
    if (res === undefined) continue;
    const pattern = fx.resources?.[uri];
    if (pattern) check(`resources/read ${uri}`, res, pattern);
    else if (!Array.isArray(res.contents) || res.contents.length === 0) fail(`resources/read ${uri}`, "no contents");
    else ok(`resources/read ${uri}`);
  }
  for (const uri of fx.subscribe ?? []) {
    await step(`resources/subscribe ${uri}`, async () =>
      check(`resources/subscribe ${uri}`, await client.subscribeResource({ uri }, TIMEOUT), {}));
    await step(`resources/unsubscribe ${uri}`, async () =>
      check(`resources/unsubscribe ${uri}`, await client.unsubscribeResource({ uri }, TIMEOUT), {}));
  }
}

// ---- prompts and completions
await tourPrompts(client, fx, caps, TIMEOUT, TIMEOUT);
await tourCompletions(client, fx, caps, TIMEOUT);

await finish();

async function finish() {
  try {
    await client.close();
  } catch {
    // The server may already be gone; the tour result stands.
  }
  summary(
    label,
    `server asked for roots ${seen.roots}x, sampling ${seen.sampling.length}x, elicitation ${seen.elicitation.length}x`,
  );
}
