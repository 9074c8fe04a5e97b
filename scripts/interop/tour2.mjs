// Interop tour with the official TypeScript SDK v2 client (npm @modelcontextprotocol/client).
//
// Usage: node tour2.mjs FIXTURES.json LABEL [--mode MODE] -- SERVER_COMMAND [ARGS...]   (stdio)
//        node tour2.mjs FIXTURES.json LABEL [--mode MODE] --http URL   (Streamable HTTP, e.g. http://127.0.0.1:PORT/mcp)
//        node tour2.mjs FIXTURES.json LABEL [--mode MODE] --sse URL    (2024-11-05 HTTP+SSE; legacy mode only)
//
// MODE picks the v2 client's `versionNegotiation` (default 2026-07-28):
//   2026-07-28 (or any other revision): `{ pin: MODE }`: server/discover at connect, and the modern
//              era at exactly that revision or a failed connect (no fallback);
//   auto:      `'auto'`: probe with server/discover, fall back to initialize; the tour then
//              follows whichever era was negotiated;
//   legacy:    `'legacy'` (the SDK's default): the plain 2025 initialize handshake.
// On the stdio transport the SDK runs the discover probe on a short-lived sibling process, so
// a modern stdio tour starts the server twice.
//
// The steps are those of tour.mjs: list and call every tool (with sampling, elicitation and roots
// handlers registered, since fixture tools call back into the client), read every resource (and
// the template instances the fixtures name), get every prompt, ask for completions. Legacy era:
// also ping, logging/setLevel and resources/subscribe + unsubscribe. Modern era (2026-07-28):
// server/discover instead of ping; logs are asked for per request (`_meta` logLevel "debug")
// instead of logging/setLevel; sampling/elicitation/roots arrive as input_required results that
// the SDK fulfils through the same handlers; list_changed and resource updates travel on a
// subscriptions/listen stream. Where the fixture file describes an answer, it must match (see
// match.mjs). Prints one line per step, then a summary line; exits 1 when a step failed.
import { readFileSync } from "node:fs";
import { Client, StreamableHTTPClientTransport, SSEClientTransport, LOG_LEVEL_META_KEY } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ok, fail, check, step, describe, tourPrompts, tourCompletions, summary } from "./steps.mjs";
import { synthesizeArgs, elicitAnswer, SAMPLING_ANSWER, ROOTS } from "./match.mjs";

const USAGE =
  "usage: node tour2.mjs FIXTURES.json LABEL [--mode 2026-07-28|auto|legacy] (-- SERVER_COMMAND [ARGS...] | --http URL | --sse URL)";

// ---- arguments
const argv = process.argv.slice(2);
if (argv.length < 3) usage();
const fixturesPath = argv[0];
const label = argv[1];
let rest = argv.slice(2);
let mode = "2026-07-28";
if (rest[0] === "--mode") {
  if (rest.length < 2) usage();
  mode = rest[1];
  rest = rest.slice(2);
}
const how = rest[0];
const target = rest.slice(1);
const okArgs = (how === "--" && target.length >= 1) || ((how === "--http" || how === "--sse") && target.length === 1);
if (!okArgs) usage();
if (how === "--sse" && mode !== "legacy") {
  console.error("tour2: --sse speaks only the 2024-11-05 transport: use --mode legacy");
  process.exit(2);
}
function usage() {
  console.error(USAGE);
  process.exit(2);
}

const fx = JSON.parse(readFileSync(fixturesPath, "utf8"));
const TIMEOUT = { timeout: 30000 };
const negotiation = mode === "legacy" ? { mode: "legacy" } : mode === "auto" ? { mode: "auto" } : { mode: { pin: mode } };

// ---- what the client callbacks and the wire saw
let currentTool = null;
const seen = { sampling: [], elicitation: [], roots: 0, toolsChanged: 0, updated: [] };
const wire = { progress: [], logs: [] };
let toolsChangedWaiter = null;

const client = new Client(
  { name: "mcp-blocking-interop-ts2", version: "1.0.0" },
  {
    capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } },
    versionNegotiation: negotiation,
  },
);
client.setRequestHandler("sampling/createMessage", async (req) => {
  seen.sampling.push({ tool: currentTool, params: req.params });
  return SAMPLING_ANSWER;
});
client.setRequestHandler("elicitation/create", async (req) => {
  seen.elicitation.push({ tool: currentTool, params: req.params });
  const f = currentTool && fx.tools[currentTool];
  return f && f.answer ? f.answer : elicitAnswer(req.params.requestedSchema);
});
client.setRequestHandler("roots/list", async () => {
  seen.roots += 1;
  return { roots: ROOTS };
});
client.setNotificationHandler("notifications/message", () => {
  // Recorded in wire order by the tap below.
});
client.setNotificationHandler("notifications/tools/list_changed", () => {
  seen.toolsChanged += 1;
  if (toolsChangedWaiter) toolsChangedWaiter();
});
client.setNotificationHandler("notifications/resources/updated", (n) => {
  seen.updated.push(n.params?.uri);
});
// SDK-level errors that do not reject a request (dropped inbound requests, bad notifications):
// shown, since they are often the first sign of an interop problem.
const sdkErrors = [];
client.onerror = (e) => {
  sdkErrors.push(describe(e));
  console.log(`  note client.onerror: ${describe(e)}`);
};

let transport;
if (how === "--http") transport = new StreamableHTTPClientTransport(new URL(target[0]));
else if (how === "--sse") transport = new SSEClientTransport(new URL(target[0]));
else transport = new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" });
const kind = { "--": "stdio", "--http": "http", "--sse": "sse" }[how];
console.log(`tour ${label} (${kind}, mode ${mode}): ${target.join(" ")}`);
const started = Date.now();

const connected = await step("connect", async () => {
  await client.connect(transport, TIMEOUT);
  // Tap the wire: notification handlers run a microtask after the SDK sees a message while
  // responses settle at once, so a notification that shares a read with its response could be
  // missed by a handler. The tap records notifications in wire order before the SDK looks.
  const sdkOnMessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg.method === "notifications/progress") wire.progress.push(msg.params);
    if (msg.method === "notifications/message") wire.logs.push({ tool: currentTool, params: msg.params });
    sdkOnMessage?.(msg, extra);
  };
  ok("connect", `era ${client.getProtocolEra()}, protocol ${client.getNegotiatedProtocolVersion()}`);
  return true;
});
if (!connected) await finish();

const modern = client.getProtocolEra() === "modern";
if (mode !== "legacy" && mode !== "auto" && client.getNegotiatedProtocolVersion() !== mode) {
  fail("protocol version", `wanted ${mode}, got ${client.getNegotiatedProtocolVersion()}`);
}
if (mode === "legacy" && modern) fail("protocol era", "legacy mode negotiated a modern era");
const caps = client.getServerCapabilities() ?? {};
// Modern era: logs only when asked for, per request.
const logMeta = modern ? { _meta: { [LOG_LEVEL_META_KEY]: "debug" } } : {};

if (modern) {
  await step("server/discover", async () => {
    const res = await client.discover(TIMEOUT);
    if (!Array.isArray(res.supportedVersions) || !res.supportedVersions.includes(client.getNegotiatedProtocolVersion())) {
      fail("server/discover", `negotiated ${client.getNegotiatedProtocolVersion()} not in supportedVersions ${JSON.stringify(res.supportedVersions)}`);
    } else {
      check("server/discover", res, { supportedVersions: "<any>", capabilities: "<any>" });
    }
  });
} else {
  await step("ping", async () => check("ping", await client.ping(TIMEOUT), {}));
  if (caps.logging) {
    await step("logging/setLevel", async () =>
      check("logging/setLevel debug", await client.setLoggingLevel("debug", TIMEOUT), {}));
  } else if (fx.required.tools.length) {
    fail("logging capability", "server does not declare logging");
  }
}

// ---- tools
async function listAllTools() {
  // One page at a time (the explicit-cursor path), as tour.mjs does, so pagination is ours to see;
  // then one aggregated call to fill the SDK's tools/list cache, which callTool reads for
  // output-schema validation.
  const tools = [];
  let cursor;
  let first = true;
  while (first || cursor) {
    const page = first
      ? await client.listTools(undefined, { ...TIMEOUT, cacheMode: "refresh" })
      : await client.listTools({ cursor }, TIMEOUT);
    tools.push(...page.tools);
    cursor = page.nextCursor;
    first = false;
  }
  return tools;
}
let tools = (await step("tools/list", listAllTools)) ?? [];
const late = (fx.late_tools ?? []).filter((n) => !tools.some((t) => t.name === n));
let toolSub;
if (late.length) {
  const deadline = started + 8000;
  const waitForChange = () =>
    new Promise((resolve, reject) => {
      if (seen.toolsChanged > 0) return resolve();
      const t = setTimeout(
        () => reject(new Error(`no notifications/tools/list_changed within 8 s (waiting for ${late})`)),
        Math.max(0, deadline - Date.now()),
      );
      toolsChangedWaiter = () => {
        clearTimeout(t);
        resolve();
      };
    });
  await step("tools/list_changed", async () => {
    if (!modern) {
      await waitForChange();
      ok("tools/list_changed", `announced ${late.join(", ")}`);
      return;
    }
    // 2026-07-28: list_changed travels only on a subscriptions/listen stream; a tool added before
    // the stream opened shows up in a fresh list instead.
    toolSub = await client.listen({ toolsListChanged: true }, TIMEOUT);
    if (!toolSub.honoredFilter?.toolsListChanged) {
      fail("subscriptions/listen tools", `server did not honor toolsListChanged: ${JSON.stringify(toolSub.honoredFilter)}`);
      return;
    }
    ok("subscriptions/listen tools acknowledged", JSON.stringify(toolSub.honoredFilter));
    const listed = await listAllTools();
    if (late.every((n) => listed.some((t) => t.name === n))) {
      ok("tools/list_changed", `${late.join(", ")} present once listening`);
      return;
    }
    seen.toolsChanged = 0;
    await waitForChange();
    ok("tools/list_changed", `announced ${late.join(", ")}`);
  });
  tools = (await step("tools/list (after list_changed)", listAllTools)) ?? tools;
  if (toolSub) {
    await step("subscriptions/listen tools close", async () => {
      await toolSub.close();
      const how = await Promise.race([toolSub.closed, new Promise((r) => setTimeout(() => r("timeout"), 5000))]);
      if (how === "local") ok("subscriptions/listen tools close");
      else fail("subscriptions/listen tools close", `closed: ${how}`);
    });
  }
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
  const before = { s: seen.sampling.length, e: seen.elicitation.length, r: seen.roots, l: wire.logs.length, p: wire.progress.length };
  // onprogress makes the SDK send a progressToken; the values are read from the wire tap.
  const res = await step(`tools/call ${name}`, () =>
    client.callTool({ name, arguments: args, ...logMeta }, { ...TIMEOUT, onprogress: () => {} }),
  );
  currentTool = null;
  if (res === undefined) continue;
  if (f.result) check(`tools/call ${name}`, res, f.result);
  else if (!Array.isArray(res.content)) fail(`tools/call ${name}`, "no content array");
  else ok(`tools/call ${name}`, res.isError ? "isError" : `${res.content.length} content item(s)`);
  // TOUR2_VERBOSE=1: show what the tools the fixtures do not describe answered.
  if (process.env.TOUR2_VERBOSE && !f.result) console.log(`       got: ${JSON.stringify(res).slice(0, 400)}`);
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
  if (f.roots && seen.roots === before.r) fail(`${name} roots/list`, "the server never asked for roots");
  if (f.logs) {
    // Notifications sent before the response arrive before it. The modern era adds a
    // subscription/request `_meta` to notifications: compare without it.
    const got = wire.logs.slice(before.l).map((x) => {
      const { _meta, ...params } = x.params ?? {};
      return params;
    });
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
    let first = true;
    while (first || cursor) {
      const page = first
        ? await client.listResources(undefined, { ...TIMEOUT, cacheMode: "bypass" })
        : await client.listResources({ cursor }, TIMEOUT);
      all.push(...page.resources);
      cursor = page.nextCursor;
      first = false;
    }
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
    (await client.listResourceTemplates(undefined, { ...TIMEOUT, cacheMode: "bypass" })).resourceTemplates)) ?? [];
  {
    const missing = fx.required.resourceTemplates.filter((u) => !templates.some((t) => t.uriTemplate === u));
    if (missing.length) fail("resources/templates/list shape", `missing templates: ${missing.join(", ")}`);
    else ok("resources/templates/list shape", `${templates.length} templates`);
  }
  const uris = [...resources.map((r) => r.uri), ...(fx.extra_reads ?? [])];
  for (const uri of uris) {
    const res = await step(`resources/read ${uri}`, () => client.readResource({ uri }, { ...TIMEOUT, cacheMode: "bypass" }));
    if (res === undefined) continue;
    const pattern = fx.resources?.[uri];
    if (pattern) check(`resources/read ${uri}`, res, pattern);
    else if (!Array.isArray(res.contents) || res.contents.length === 0) fail(`resources/read ${uri}`, "no contents");
    else ok(`resources/read ${uri}`);
  }
  for (const uri of fx.subscribe ?? []) {
    if (!modern) {
      await step(`resources/subscribe ${uri}`, async () =>
        check(`resources/subscribe ${uri}`, await client.subscribeResource({ uri }, TIMEOUT), {}));
      await step(`resources/unsubscribe ${uri}`, async () =>
        check(`resources/unsubscribe ${uri}`, await client.unsubscribeResource({ uri }, TIMEOUT), {}));
      continue;
    }
    await step(`subscriptions/listen ${uri}`, async () => {
      const sub = await client.listen({ resourceSubscriptions: [uri] }, TIMEOUT);
      check(`subscriptions/listen ${uri} acknowledged`, sub.honoredFilter, { resourceSubscriptions: [uri] });
      await sub.close();
      const closedHow = await Promise.race([sub.closed, new Promise((r) => setTimeout(() => r("timeout"), 5000))]);
      if (closedHow === "local") ok(`subscriptions/listen ${uri} close`);
      else fail(`subscriptions/listen ${uri} close`, `closed: ${closedHow}`);
    });
  }
}

// ---- resource updates (fixture `updates`): listening (2026-07-28) or subscribed (legacy) to
// `uri`, a call of `tool` must bring notifications/resources/updated for it within 5 s.
for (const u of fx.updates ?? []) {
  const what = `notifications/resources/updated ${u.uri}`;
  await step(what, async () => {
    let sub;
    if (modern) sub = await client.listen({ resourceSubscriptions: [u.uri] }, TIMEOUT);
    else await client.subscribeResource({ uri: u.uri }, TIMEOUT);
    const before = seen.updated.length;
    try {
      await client.callTool({ name: u.tool, arguments: u.args ?? {} }, TIMEOUT);
      const deadline = Date.now() + 5000;
      while (!seen.updated.slice(before).includes(u.uri) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      if (seen.updated.slice(before).includes(u.uri)) ok(what, modern ? "on the listen stream" : "subscribed");
      else fail(what, `not within 5 s of calling ${u.tool}`);
    } finally {
      if (sub) await sub.close();
      else await client.unsubscribeResource({ uri: u.uri }, TIMEOUT).catch(() => {});
    }
  });
}

// ---- prompts and completions
await tourPrompts(client, fx, caps, TIMEOUT, { ...TIMEOUT, cacheMode: "bypass" });
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
    `server asked for roots ${seen.roots}x, sampling ${seen.sampling.length}x, elicitation ${seen.elicitation.length}x;${sdkErrors.length} client.onerror`,
  );
}
