// Pattern matching for the interop tours (the Python twin is match.py; keep them in step).
//
// A pattern is plain JSON: objects match objects that have at least the pattern's keys, arrays
// match arrays of the same length element by element, other values match by strict equality.
// String markers: "<any>" anything present, "<absent>" (as an object value) the key must be
// missing, "<nonempty>" a non-empty string, "<png>"/"<wav>" base64 of a PNG/WAV file, "<re:X>" a
// string in which the regular expression X is found. {"$json": P}: a string holding JSON that
// matches P.

const PNG_SIG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function b64(s) {
  if (typeof s !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return null;
  return Buffer.from(s, "base64");
}

export function match(actual, pattern, path = "$") {
  if (typeof pattern === "string" && pattern.startsWith("<") && pattern.endsWith(">")) {
    const m = pattern.slice(1, -1);
    if (m === "any") return actual === undefined ? [`${path}: missing`] : [];
    if (m === "nonempty") return typeof actual === "string" && actual.length > 0 ? [] : [`${path}: expected a non-empty string`];
    if (m === "png") {
      const b = b64(actual);
      return b && PNG_SIG.every((x, i) => b[i] === x) ? [] : [`${path}: expected base64 PNG data`];
    }
    if (m === "wav") {
      const b = b64(actual);
      return b && b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WAVE"
        ? [] : [`${path}: expected base64 WAV data`];
    }
    if (m.startsWith("re:")) {
      return typeof actual === "string" && new RegExp(m.slice(3)).test(actual)
        ? [] : [`${path}: ${JSON.stringify(actual)} does not match /${m.slice(3)}/`];
    }
  }
  if (pattern !== null && typeof pattern === "object" && !Array.isArray(pattern) && "$json" in pattern) {
    if (typeof actual !== "string") return [`${path}: expected a JSON string`];
    let parsed;
    try {
      parsed = JSON.parse(actual);
    } catch {
      return [`${path}: not valid JSON: ${actual}`];
    }
    return match(parsed, pattern.$json, `${path}(json)`);
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array`];
    if (actual.length !== pattern.length) return [`${path}: expected ${pattern.length} items, got ${actual.length}`];
    return pattern.flatMap((p, i) => match(actual[i], p, `${path}[${i}]`));
  }
  if (pattern !== null && typeof pattern === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return [`${path}: expected an object`];
    const errs = [];
    for (const [k, p] of Object.entries(pattern)) {
      if (p === "<absent>") {
        if (k in actual) errs.push(`${path}.${k}: must be absent`);
      } else if (!(k in actual)) errs.push(`${path}.${k}: missing`);
      else errs.push(...match(actual[k], p, `${path}.${k}`));
    }
    return errs;
  }
  return actual === pattern ? [] : [`${path}: expected ${JSON.stringify(pattern)}, got ${JSON.stringify(actual)}`];
}

// Arguments for a tool the fixtures do not describe: every required property gets its default,
// its first enum value, or a plain value of its type.
export function synthesizeArgs(schema) {
  const out = {};
  const props = schema?.properties ?? {};
  for (const name of schema?.required ?? []) out[name] = sample(props[name] ?? {});
  return out;
}

function sample(s) {
  if ("default" in s) return s.default;
  if (Array.isArray(s.enum)) return s.enum[0];
  if (Array.isArray(s.oneOf) && s.oneOf[0]?.const !== undefined) return s.oneOf[0].const;
  switch (s.type) {
    case "integer":
    case "number":
      return 1;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return "hello";
  }
}

// Accept an elicitation the fixtures do not describe, filling every field.
export function elicitAnswer(schema) {
  const content = {};
  for (const [k, s] of Object.entries(schema?.properties ?? {})) {
    if (s.type === "array") {
      const items = s.items ?? {};
      const first = items.enum?.[0] ?? items.anyOf?.[0]?.const;
      content[k] = first === undefined ? [] : [first];
    } else content[k] = sample(s);
  }
  return { action: "accept", content };
}

export const SAMPLING_ANSWER = {
  role: "assistant",
  content: { type: "text", text: "This is a test response from the client" },
  model: "test-model",
  stopReason: "endTurn",
};

export const ROOTS = [{ uri: "file:///tmp/mcp-interop-root", name: "interop-root" }];
