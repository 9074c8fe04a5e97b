// Checks our MCP Apps server against the official package @modelcontextprotocol/ext-apps (its
// zod schemas and constants) and the MCP results around it against @modelcontextprotocol/core.
//
//   node validate.mjs server APPS_BIN OUT_DIR   talks to the `apps` example over stdio, checks
//       its tool, view resource, tool result and capability; writes what the host page needs
//       into OUT_DIR (view.html, call.json: the tool's arguments and result)
//   node validate.mjs view REPORT_JSON          checks what the view sent the host page
//       (ui/initialize, ui/notifications/initialized, size changes) and what it rendered
//
// Run from the folder holding node_modules (scripts/apps-check.sh runs it in .cache/apps/).
// Prints one line per check; exits 1 when any failed.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { writeFileSync, readFileSync } from "node:fs";
import { join } from "node:path";

import * as apps from "@modelcontextprotocol/ext-apps";
import * as appsServer from "@modelcontextprotocol/ext-apps/server";
import * as core from "@modelcontextprotocol/core";

const TOOL = "show_weather";
const ARGS = { city: "Paris" };

let failures = 0;
function check(what, ok, detail) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${ok || detail === undefined ? "" : ": " + detail}`);
  if (!ok) failures += 1;
}
// The package's zod schemas let unknown keys through (a misspelt `connectDomain` would pass);
// its generated JSON Schema closes the objects (`additionalProperties: false`). This walks the
// JSON Schema of the definition named like the zod schema and lists keys it does not define.
const jsonSchemas = JSON.parse(readFileSync(
  new URL(import.meta.resolve("@modelcontextprotocol/ext-apps/schema.json")), "utf8"));
const definitions = jsonSchemas.definitions ?? jsonSchemas.$defs ?? {};
function unknownKeys(node, value, path) {
  if (!node || typeof value !== "object" || value === null || Array.isArray(value)) return [];
  const props = node.properties;
  if (!props) return [];
  const found = [];
  for (const [k, v] of Object.entries(value)) {
    if (props[k]) found.push(...unknownKeys(props[k], v, `${path}.${k}`));
    else if (node.additionalProperties === false) found.push(`${path}.${k}`);
  }
  return found;
}
function schema(what, zod, value, definition) {
  const r = zod.safeParse(value);
  check(what, r.success, r.success ? undefined : JSON.stringify(r.error.issues));
  if (definition) {
    const extra = unknownKeys(definitions[definition], value, "$");
    check(`${what}: no keys outside ${definition}`, extra.length === 0, extra.join(", "));
  }
  return r.success;
}

// A JSON-RPC conversation with a stdio server: one request at a time, answers by id.
function stdioServer(bin) {
  const child = spawn(bin, [], { stdio: ["pipe", "pipe", "inherit"] });
  const waiting = new Map();
  let failed = null;
  child.on("error", (e) => {
    failed = e;
    for (const w of waiting.values()) w({ error: { message: String(e) } });
    waiting.clear();
  });
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    let msg;
    try { msg = JSON.parse(line); } catch { return; }
    const w = waiting.get(msg.id);
    if (w) { waiting.delete(msg.id); w(msg); }
  });
  let id = 0;
  return {
    request(method, params) {
      id += 1;
      const mine = id;
      return new Promise((resolve, reject) => {
        if (failed) { reject(new Error(`${method}: ${failed}`)); return; }
        const timer = setTimeout(() => reject(new Error(`${method}: no answer in 10 s`)), 10000);
        waiting.set(mine, (msg) => {
          clearTimeout(timer);
          if (msg.error) reject(new Error(`${method}: ${JSON.stringify(msg.error)}`));
          else resolve(msg.result);
        });
        child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: mine, method, params }) + "\n");
      });
    },
    notify(method, params) {
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, params }) + "\n");
    },
    close() {
      if (failed) return Promise.resolve();
      child.stdin.end();
      return new Promise((resolve) => child.on("exit", resolve));
    },
  };
}

async function server(bin, out) {
  // The 2026-07-28 handshake: the capability is declared there.
  const modern = stdioServer(bin);
  const discover = await modern.request("server/discover", {});
  check(
    `server/discover declares ${appsServer.EXTENSION_ID}`,
    typeof discover?.capabilities?.extensions?.[appsServer.EXTENSION_ID] === "object",
    JSON.stringify(discover?.capabilities),
  );
  await modern.close();

  // A 2025-11-25 host that declares the extension, as real hosts do today.
  const s = stdioServer(bin);
  const uiCap = { mimeTypes: [apps.RESOURCE_MIME_TYPE] };
  const clientCaps = { extensions: { [appsServer.EXTENSION_ID]: uiCap } };
  check("our client declaration is what getUiCapability reads",
    JSON.stringify(appsServer.getUiCapability(clientCaps)) === JSON.stringify(uiCap));
  await s.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: clientCaps,
    clientInfo: { name: "apps-check", version: "1" },
  });
  s.notify("notifications/initialized", {});

  const tools = await s.request("tools/list", {});
  schema("tools/list result (core ListToolsResultSchema)", core.ListToolsResultSchema, tools);
  const tool = tools.tools.find((t) => t.name === TOOL);
  check(`tool ${TOOL} is listed`, !!tool);
  const ui = tool?._meta?.ui;
  schema("tool _meta.ui (McpUiToolMetaSchema)", apps.McpUiToolMetaSchema, ui, "McpUiToolMeta");
  const uri = ui?.resourceUri;
  check("_meta.ui.resourceUri is a ui:// URI", typeof uri === "string" && uri.startsWith("ui://"), uri);
  check(`deprecated _meta["${apps.RESOURCE_URI_META_KEY}"] names the same view`,
    tool?._meta?.[apps.RESOURCE_URI_META_KEY] === uri, JSON.stringify(tool?._meta));

  const listed = await s.request("resources/list", {});
  schema("resources/list result (core ListResourcesResultSchema)", core.ListResourcesResultSchema, listed);
  const entry = listed.resources.find((r) => r.uri === uri);
  check("the view is listed", !!entry);
  check(`listed mimeType is ${apps.RESOURCE_MIME_TYPE}`, entry?.mimeType === apps.RESOURCE_MIME_TYPE, entry?.mimeType);
  schema("listed _meta.ui (McpUiResourceMetaSchema)", apps.McpUiResourceMetaSchema, entry?._meta?.ui ?? {}, "McpUiResourceMeta");

  const read = await s.request("resources/read", { uri });
  schema("resources/read result (core ReadResourceResultSchema)", core.ReadResourceResultSchema, read);
  const content = read.contents?.[0];
  check("read content has the view's URI", content?.uri === uri, content?.uri);
  check(`read mimeType is ${apps.RESOURCE_MIME_TYPE}`, content?.mimeType === apps.RESOURCE_MIME_TYPE, content?.mimeType);
  schema("read _meta.ui (McpUiResourceMetaSchema)", apps.McpUiResourceMetaSchema, content?._meta?.ui ?? {}, "McpUiResourceMeta");
  check("read content is an HTML5 document",
    typeof content?.text === "string" && /^<!DOCTYPE html>/i.test(content.text));

  const result = await s.request("tools/call", { name: TOOL, arguments: ARGS });
  schema("tools/call result (core CallToolResultSchema)", core.CallToolResultSchema, result);
  check("the result has text content for hosts without views",
    Array.isArray(result.content) && result.content.some((b) => b.type === "text" && b.text));
  schema("the result as ui/notifications/tool-result (McpUiToolResultNotificationSchema)",
    apps.McpUiToolResultNotificationSchema,
    { method: "ui/notifications/tool-result", params: result });
  schema("the arguments as ui/notifications/tool-input (McpUiToolInputNotificationSchema)",
    apps.McpUiToolInputNotificationSchema,
    { method: "ui/notifications/tool-input", params: { arguments: ARGS } });
  await s.close();

  writeFileSync(join(out, "view.html"), content?.text ?? "");
  writeFileSync(join(out, "call.json"), JSON.stringify({
    protocolVersion: apps.LATEST_PROTOCOL_VERSION, csp: content?._meta?.ui?.csp ?? null,
    arguments: ARGS, result,
  }));
}

function view(reportPath) {
  const report = JSON.parse(readFileSync(reportPath, "utf8"));
  check("the host page finished", report.done === true, JSON.stringify(report.error ?? report));
  const from = report.fromView ?? [];
  // The schemas describe a message without its JSON-RPC envelope (jsonrpc, id).
  const body = (m) => ({ method: m.method, params: m.params });
  const init = from.find((m) => m.method === "ui/initialize");
  check("the view sent ui/initialize", !!init, JSON.stringify(from));
  if (init) schema("its ui/initialize (McpUiInitializeRequestSchema)", apps.McpUiInitializeRequestSchema, body(init), "McpUiInitializeRequest");
  const initialized = from.find((m) => m.method === "ui/notifications/initialized");
  check("the view sent ui/notifications/initialized", !!initialized);
  if (initialized) {
    schema("its initialized (McpUiInitializedNotificationSchema)", apps.McpUiInitializedNotificationSchema, body(initialized), "McpUiInitializedNotification");
  }
  check("initialized came after ui/initialize", from.indexOf(initialized) > from.indexOf(init));
  for (const m of from.filter((m) => m.method === "ui/notifications/size-changed")) {
    schema("its size-changed (McpUiSizeChangedNotificationSchema)", apps.McpUiSizeChangedNotificationSchema, body(m), "McpUiSizeChangedNotification");
  }
  const shown = report.viewText ?? "";
  const data = report.structured ?? {};
  check("the view shows the city", shown.includes(data.city), shown);
  check("the view shows the temperature", shown.includes(`${data.temperatureC} °C`), shown);
  check("the view shows the conditions", shown.includes(data.conditions), shown);
  check("the view was rendered (data-state)", report.viewState === "rendered", report.viewState);
}

const [mode, a, b] = process.argv.slice(2);
try {
  if (mode === "server") await server(a, b);
  else if (mode === "view") view(a);
  else throw new Error("usage: validate.mjs server APPS_BIN OUT_DIR | view REPORT_JSON");
} catch (e) {
  check("ran to the end", false, e.message);
}
console.log(`apps ${mode}: ${failures === 0 ? "all checks passed" : failures + " failed"}`);
process.exit(failures === 0 ? 0 : 1);
