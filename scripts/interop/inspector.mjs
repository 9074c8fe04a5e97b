// Interop tour with the MCP Inspector's headless CLI (npm @modelcontextprotocol/inspector,
// `--cli`): every step is one CLI run, as a script or CI job would use it, with `--format json`.
//
// Usage: node inspector.mjs FIXTURES.json LABEL --era ERA --expect REVISION -- SERVER_COMMAND [ARGS...]
//        node inspector.mjs FIXTURES.json LABEL --era ERA --expect REVISION --http URL
//
// ERA is the CLI's --protocol-era (legacy: the 2025 initialize handshake, its default; modern:
// 2026-07-28; auto: probe, then fall back); `initialize` must report REVISION. Steps:
// logging/setLevel (before 2026-07-28), tools/list --strict (the fixtures' required tools and
// schemas, and the CLI's schema portability check), tools/call of each fixture tool that needs
// no client callback (the CLI does not offer sampling or elicitation; its JSON output carries no
// progress or log notifications), resources/list, resources/templates/list, resources/read of
// each fixture resource, prompts/list, prompts/get of each fixture prompt, and skills/list
// --verify when the server declares the skills extension. Results are checked against the
// fixtures with match.mjs. Run it with the Node the Inspector needs (>= 22.19): the CLI is
// started with this same Node, from this script's folder.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ok, fail, check, report, summary } from "./steps.mjs";

const USAGE =
  "usage: node inspector.mjs FIXTURES.json LABEL --era legacy|auto|modern --expect REVISION (-- SERVER_COMMAND [ARGS...] | --http URL)";
const argv = process.argv.slice(2);
const [fixturesPath, label] = argv;
let era, expect, rest = argv.slice(2);
while (rest[0] === "--era" || rest[0] === "--expect") {
  if (rest[0] === "--era") era = rest[1];
  else expect = rest[1];
  rest = rest.slice(2);
}
const how = rest[0];
const target = rest.slice(1);
if (!label || !era || !expect || !((how === "--" && target.length) || (how === "--http" && target.length === 1))) {
  console.error(USAGE);
  process.exit(2);
}

const fx = JSON.parse(readFileSync(fixturesPath, "utf8"));
const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
// The CLI keeps a catalog, client config and secrets under ~/.mcp-inspector: give it a
// throw-away home so a tour neither reads nor leaves the user's.
const home = mkdtempSync(join(tmpdir(), "mcp-inspector-home-"));
process.on("exit", () => rmSync(home, { recursive: true, force: true }));
// The server goes last: after `--`, a command's own flags are not read as the CLI's.
const serverArgs = how === "--" ? ["--", ...target] : ["--transport", "http", "--server-url", target[0]];

// One CLI run: resolves to { code, out (the printed result, or undefined), stdout, stderr }.
function inspector(args) {
  const all = [CLI, "--cli", "--format", "json", "--protocol-era", era, ...args, ...serverArgs];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, all, {
      env: { ...process.env, HOME: home, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30000);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // --format json prints one object, {"result": ...}.
      let out;
      try {
        out = JSON.parse(stdout).result;
      } catch {
        out = undefined;
      }
      resolve({ code: signal ? `killed (${signal}, 30 s)` : code, out, stdout, stderr });
    });
  });
}

// A step that must exit 0 with a JSON answer; returns the answer, or undefined after a FAIL.
async function run(name, args, okCodes = [0]) {
  const r = await inspector(args);
  if (!okCodes.includes(r.code) || r.out === undefined) {
    const why = (r.stderr.trim().split("\n").slice(-3).join(" | ") || r.stdout.trim()).slice(0, 400);
    fail(name, `exit ${r.code}: ${why}`);
    return undefined;
  }
  return r.out;
}

// An answer is checked where the fixtures describe it; otherwise answering is enough.
function answered(name, res, pattern) {
  if (pattern === undefined) ok(name, "answered");
  else check(name, res, pattern);
}

// key=value pairs for --tool-arg / --prompt-args when every value is a string (the CLI's
// plain form); otherwise one JSON object (--tool-args-json, tools only).
function stringPairs(args) {
  const entries = Object.entries(args ?? {});
  return entries.every(([, v]) => typeof v === "string") ? entries.map(([k, v]) => `${k}=${v}`) : null;
}

// ---- initialize: the negotiated revision and the server's capabilities
const init = await run("initialize", ["--method", "initialize"]);
if (init) {
  check(`initialize protocolVersion ${expect}`, init.protocolVersion, expect);
  check("initialize capabilities", init.capabilities, { tools: "<any>", resources: "<any>", prompts: "<any>" });
}
// logging/setLevel exists only before 2026-07-28 (later, a log level travels with each request).
if (init?.capabilities?.logging && init.protocolVersion < "2026-07-28") {
  const res = await run("logging/setLevel debug", ["--method", "logging/setLevel", "--log-level", "debug"]);
  if (res) check("logging/setLevel debug", res, {});
}

// ---- tools
const late = new Set(fx.late_tools ?? []);
// --strict: the CLI's own tool-schema portability check fails the run (exit 6) on an error.
const listed = (await run("tools/list --strict", ["--method", "tools/list", "--strict"]))?.tools ?? [];
{
  const errs = listed
    .filter((t) => !t.name || !t.description || t.inputSchema?.type !== "object")
    .map((t) => `${t.name}: needs name, description and an object inputSchema`);
  const missing = fx.required.tools.filter((n) => !late.has(n) && !listed.some((t) => t.name === n));
  if (missing.length) errs.push(`missing tools: ${missing.join(", ")}`);
  if (errs.length) fail("tools/list shape", errs.join("; "));
  else ok("tools/list shape", `${listed.length} tools`);
  for (const [name, pattern] of Object.entries(fx.tool_schemas ?? {})) {
    const t = listed.find((x) => x.name === name);
    if (t) check(`tools/list schema ${name}`, t, pattern);
  }
}
const callbacks = ["sampling", "elicitation", "answer", "url_elicitation", "roots"];
for (const [name, f] of Object.entries(fx.tools ?? {})) {
  if (late.has(name) || callbacks.some((k) => k in f) || fx.skip_tools?.[name]) continue;
  const pairs = stringPairs(f.args);
  const argFlags = pairs === null
    ? ["--tool-args-json", JSON.stringify(f.args)]
    : pairs.length ? ["--tool-arg", ...pairs] : [];
  // A tool result with isError ends the CLI with exit 5 (tool error), still printing the result.
  const res = await run(`tools/call ${name}`, ["--method", "tools/call", "--tool-name", name, ...argFlags],
    f.result?.isError ? [5] : [0]);
  const how = pairs?.length ? " (--tool-arg)" : pairs ? "" : " (--tool-args-json)";
  if (res) answered(`tools/call ${name}${how}`, res, f.result);
}

// ---- resources
const resources = (await run("resources/list", ["--method", "resources/list"]))?.resources ?? [];
{
  const errs = resources.filter((r) => !r.uri || !r.name).map((r) => `${r.uri}: needs uri and name`);
  const missing = fx.required.resources.filter((u) => !resources.some((r) => r.uri === u));
  if (missing.length) errs.push(`missing resources: ${missing.join(", ")}`);
  if (errs.length) fail("resources/list shape", errs.join("; "));
  else ok("resources/list shape", `${resources.length} resources`);
}
const templates = (await run("resources/templates/list", ["--method", "resources/templates/list"]))?.resourceTemplates ?? [];
{
  const missing = (fx.required.resourceTemplates ?? []).filter((u) => !templates.some((t) => t.uriTemplate === u));
  if (missing.length) fail("resources/templates/list shape", `missing templates: ${missing.join(", ")}`);
  else ok("resources/templates/list shape", `${templates.length} templates`);
}
for (const [uri, pattern] of Object.entries(fx.resources ?? {})) {
  const res = await run(`resources/read ${uri}`, ["--method", "resources/read", "--uri", uri]);
  if (res) answered(`resources/read ${uri}`, res, pattern);
}

// ---- prompts
const prompts = (await run("prompts/list", ["--method", "prompts/list"]))?.prompts ?? [];
{
  const errs = prompts.filter((p) => !p.name || !p.description).map((p) => `${p.name}: needs name and description`);
  const missing = fx.required.prompts.filter((n) => !prompts.some((p) => p.name === n));
  if (missing.length) errs.push(`missing prompts: ${missing.join(", ")}`);
  if (errs.length) fail("prompts/list shape", errs.join("; "));
  else ok("prompts/list shape", `${prompts.length} prompts`);
}
for (const [name, f] of Object.entries(fx.prompts ?? {})) {
  const pairs = stringPairs(f.args) ?? [];
  const res = await run(`prompts/get ${name}`,
    ["--method", "prompts/get", "--prompt-name", name, ...(pairs.length ? ["--prompt-args", ...pairs] : [])]);
  if (res) answered(`prompts/get ${name}`, res, f.result);
}

// ---- skills (SEP-2640), when the server declares the extension: the CLI's --verify reads every
// skill file and checks its frontmatter, digest and size; one JSON report per skill, exit 0 when
// all are verified.
if (init?.capabilities?.extensions?.["io.modelcontextprotocol/skills"]) {
  const r = await inspector(["--method", "skills/list", "--verify"]);
  let reports = [];
  try {
    reports = r.stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    reports = [];
  }
  const bad = reports.filter((x) => x.ok !== true).map((x) => `${x.uri}: ${x.outcome}`);
  if (r.code !== 0 || !reports.length || bad.length) {
    fail("skills/list --verify", `exit ${r.code}; ${bad.join("; ") || r.stderr.trim().slice(-300)}`);
  } else ok("skills/list --verify", `${reports.length} skills verified`);
}

summary(label, `${report.steps} checks, Inspector CLI --protocol-era ${era}`);
