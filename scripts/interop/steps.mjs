// What the two TypeScript tours share (tour.mjs drives the SDK v1 client, tour2.mjs the v2
// one): the step report, and the prompt and completion steps, whose client calls (listPrompts,
// getPrompt, complete) the two SDK lines spell alike. Each tour passes its own client, fixtures
// and request options.
import { match } from "./match.mjs";

// The running report: one line per step, counted for the summary.
export const report = { steps: 0, failures: 0 };

export function ok(name, note) {
  report.steps += 1;
  console.log(`  ok   ${name}${note ? ` (${note})` : ""}`);
}

export function fail(name, why) {
  report.steps += 1;
  report.failures += 1;
  console.log(`  FAIL ${name}: ${why}`);
}

// Compares `actual` with a fixture pattern (see match.mjs); true when it matches.
export function check(name, actual, pattern) {
  const errs = match(actual, pattern);
  if (errs.length === 0) ok(name);
  else fail(name, `${errs.slice(0, 5).join("; ")}\n       got: ${JSON.stringify(actual).slice(0, 600)}`);
  return errs.length === 0;
}

// An error as the report shows it: its class and JSON-RPC code when it has them.
export function describe(e) {
  if (!(e instanceof Error)) return String(e);
  const code = e.code !== undefined ? ` [code ${e.code}]` : "";
  return `${e.constructor?.name ?? "Error"}${code}: ${e.message}`;
}

// Runs `fn`; a throw is the step's failure (and `undefined` its result).
export async function step(name, fn) {
  try {
    return await fn();
  } catch (e) {
    fail(name, describe(e));
    return undefined;
  }
}

// prompts/list (its shape and the fixtures' required prompts), then prompts/get of each, its
// answer checked against the fixture where there is one. `listOptions`: the options of the
// listing request.
export async function tourPrompts(client, fx, caps, timeout, listOptions) {
  if (!caps.prompts && !fx.required.prompts.length) return;
  const prompts = (await step("prompts/list", async () => (await client.listPrompts(undefined, listOptions)).prompts)) ?? [];
  const errs = prompts.filter((p) => !p.name || !p.description).map((p) => `${p.name}: missing name or description`);
  const missing = fx.required.prompts.filter((n) => !prompts.some((p) => p.name === n));
  if (missing.length) errs.push(`missing prompts: ${missing.join(", ")}`);
  if (errs.length) fail("prompts/list shape", errs.join("; "));
  else ok("prompts/list shape", `${prompts.length} prompts`);
  for (const p of prompts) {
    const f = fx.prompts?.[p.name] ?? {};
    const args = f.args ?? Object.fromEntries((p.arguments ?? []).filter((a) => a.required).map((a) => [a.name, "test"]));
    const res = await step(`prompts/get ${p.name}`, () => client.getPrompt({ name: p.name, arguments: args }, timeout));
    if (res === undefined) continue;
    if (f.result) check(`prompts/get ${p.name}`, res, f.result);
    else if (!Array.isArray(res.messages) || res.messages.length === 0) fail(`prompts/get ${p.name}`, "no messages");
    else ok(`prompts/get ${p.name}`);
  }
}

// completion/complete of each fixture completion.
export async function tourCompletions(client, fx, caps, timeout) {
  if (!caps.completions && !fx.completions?.length) return;
  for (const c of fx.completions ?? []) {
    const what = `completion/complete ${c.ref.name ?? c.ref.uri} ${c.argument.name}`;
    await step(what, async () => {
      const res = await client.complete({ ref: c.ref, argument: c.argument }, timeout);
      if (!Array.isArray(res.completion?.values)) fail(what, "completion.values is not an array");
      else check(what, res, c.result ?? { completion: { values: "<any>" } });
    });
  }
}

// The summary line (with `extra`, what the tour's callbacks saw); exits 0 when every step
// passed.
export function summary(label, extra) {
  const { steps, failures } = report;
  console.log(`tour ${label}: ${failures === 0 ? "PASS" : "FAIL"}, ${steps - failures}/${steps} steps ok (${extra})`);
  process.exit(failures === 0 ? 0 : 1);
}
