"""Pattern matching for the interop tours (the JavaScript twin is match.mjs; keep them in step).

A pattern is plain JSON: objects match objects that have at least the pattern's keys, arrays
match arrays of the same length element by element, other values match by strict equality
(booleans never equal numbers). String markers: "<any>" anything present, "<absent>" (as an
object value) the key must be missing, "<nonempty>" a non-empty string, "<png>"/"<wav>" base64
of a PNG/WAV file, "<re:X>" a string in which the regular expression X is found.
{"$json": P}: a string holding JSON that matches P.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

_MISSING = object()


def _b64(s: Any) -> bytes | None:
    if not isinstance(s, str):
        return None
    try:
        return base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return None


def match(actual: Any, pattern: Any, path: str = "$") -> list[str]:
    if isinstance(pattern, str) and pattern.startswith("<") and pattern.endswith(">"):
        m = pattern[1:-1]
        if m == "any":
            return [f"{path}: missing"] if actual is _MISSING else []
        if m == "nonempty":
            return [] if isinstance(actual, str) and actual else [f"{path}: expected a non-empty string"]
        if m == "png":
            b = _b64(actual)
            return [] if b and b.startswith(b"\x89PNG\r\n\x1a\n") else [f"{path}: expected base64 PNG data"]
        if m == "wav":
            b = _b64(actual)
            return [] if b and b[:4] == b"RIFF" and b[8:12] == b"WAVE" else [f"{path}: expected base64 WAV data"]
        if m.startswith("re:"):
            ok = isinstance(actual, str) and re.search(m[3:], actual) is not None
            return [] if ok else [f"{path}: {json.dumps(actual)} does not match /{m[3:]}/"]
    if isinstance(pattern, dict) and "$json" in pattern:
        if not isinstance(actual, str):
            return [f"{path}: expected a JSON string"]
        try:
            parsed = json.loads(actual)
        except ValueError:
            return [f"{path}: not valid JSON: {actual}"]
        return match(parsed, pattern["$json"], f"{path}(json)")
    if isinstance(pattern, list):
        if not isinstance(actual, list):
            return [f"{path}: expected an array"]
        if len(actual) != len(pattern):
            return [f"{path}: expected {len(pattern)} items, got {len(actual)}"]
        return [e for i, p in enumerate(pattern) for e in match(actual[i], p, f"{path}[{i}]")]
    if isinstance(pattern, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object"]
        errs: list[str] = []
        for k, p in pattern.items():
            if p == "<absent>":
                if k in actual:
                    errs.append(f"{path}.{k}: must be absent")
            elif k not in actual:
                errs.append(f"{path}.{k}: missing")
            else:
                errs.extend(match(actual[k], p, f"{path}.{k}"))
        return errs
    same = actual == pattern and isinstance(actual, bool) == isinstance(pattern, bool)
    return [] if same else [f"{path}: expected {json.dumps(pattern)}, got {json.dumps(actual)}"]


def _sample(s: dict[str, Any]) -> Any:
    if "default" in s:
        return s["default"]
    if isinstance(s.get("enum"), list) and s["enum"]:
        return s["enum"][0]
    one_of = s.get("oneOf")
    if isinstance(one_of, list) and one_of and isinstance(one_of[0], dict) and "const" in one_of[0]:
        return one_of[0]["const"]
    return {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}.get(s.get("type"), "hello")


def synthesize_args(schema: dict[str, Any] | None) -> dict[str, Any]:
    """Arguments for a tool the fixtures do not describe: every required property gets a value."""
    schema = schema or {}
    props = schema.get("properties") or {}
    return {name: _sample(props.get(name) or {}) for name in schema.get("required") or []}


def elicit_answer(schema: dict[str, Any] | None) -> dict[str, Any]:
    """Accept an elicitation the fixtures do not describe, filling every field."""
    content: dict[str, Any] = {}
    for k, s in ((schema or {}).get("properties") or {}).items():
        if s.get("type") == "array":
            items = s.get("items") or {}
            first = (items.get("enum") or [None])[0]
            if first is None and items.get("anyOf"):
                first = items["anyOf"][0].get("const")
            content[k] = [] if first is None else [first]
        else:
            content[k] = _sample(s)
    return {"action": "accept", "content": content}


SAMPLING_ANSWER = {
    "role": "assistant",
    "content": {"type": "text", "text": "This is a test response from the client"},
    "model": "test-model",
    "stopReason": "endTurn",
}

ROOTS = [{"uri": "file:///tmp/mcp-interop-root", "name": "interop-root"}]
