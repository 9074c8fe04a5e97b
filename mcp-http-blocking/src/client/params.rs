//! `x-mcp-header` (2026-07-28): a tool's `inputSchema` may mark properties whose values the
//! client mirrors into `Mcp-Param-{Name}` request headers on `tools/call`, so gateways can
//! route on them without reading the body. The client learns the marks from `tools/list`
//! answers as they pass through, and drops tools whose marks are invalid, as the spec says it
//! must.

use std::collections::HashMap;

use serde_json::Value;

use super::headers::encode_value;

/// Header marks of one tool: the property path (through `properties` keys only) and the
/// header name.
pub(crate) type Marks = Vec<(Vec<String>, String)>;

/// Tools remembered at most (a server with more still works; the excess get no headers).
const MAX_TOOLS: usize = 10_000;

/// RFC 9110 token characters.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn walk(schema: &Value, path: &mut Vec<String>, out: &mut Marks) -> Result<(), String> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, sub) in props {
        path.push(key.clone());
        if let Some(h) = sub.get("x-mcp-header") {
            let name = h
                .as_str()
                .filter(|n| !n.is_empty() && n.bytes().all(is_tchar))
                .ok_or_else(|| format!("x-mcp-header of {path:?} is not a token"))?;
            match sub.get("type") {
                None => {}
                Some(Value::String(t))
                    if matches!(t.as_str(), "string" | "integer" | "boolean") => {}
                Some(other) => {
                    return Err(format!("x-mcp-header on {path:?} of type {other}"));
                }
            }
            if out.iter().any(|(_, n)| n.eq_ignore_ascii_case(name)) {
                return Err(format!("x-mcp-header {name:?} appears twice"));
            }
            out.push((path.clone(), name.to_owned()));
        }
        walk(sub, path, out)?;
        path.pop();
    }
    Ok(())
}

/// The marks of one `inputSchema`; an error when one is invalid.
pub(crate) fn marks(schema: &Value) -> Result<Marks, String> {
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out)?;
    Ok(out)
}

/// The `Mcp-Param-*` headers for a call with `arguments`.
pub(crate) fn headers(marks: &Marks, arguments: &Value) -> Vec<(String, String)> {
    marks
        .iter()
        .filter_map(|(path, name)| {
            let mut v = arguments;
            for k in path {
                v = v.get(k)?;
            }
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return None,
            };
            Some((format!("Mcp-Param-{name}"), encode_value(&text)))
        })
        .collect()
}

/// Reads a `tools/list` result: remembers each valid tool's marks and removes the tools with
/// invalid ones. True when the result was changed.
pub(crate) fn filter_tools(result: &mut Value, store: &mut HashMap<String, Marks>) -> bool {
    let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
        return false;
    };
    let before = tools.len();
    tools.retain(|tool| {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        match tool.get("inputSchema").map(marks).unwrap_or(Ok(Vec::new())) {
            Ok(m) => {
                if m.is_empty() {
                    store.remove(name);
                } else if store.len() < MAX_TOOLS || store.contains_key(name) {
                    store.insert(name.to_owned(), m);
                }
                true
            }
            Err(why) => {
                log::warn!("dropping tool {name:?}: {why}");
                store.remove(name);
                false
            }
        }
    });
    tools.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn marks_become_headers_and_invalid_tools_are_dropped() {
        let mut result = json!({"tools": [
            {"name": "route", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "opts": {"type": "object", "properties": {
                    "n": {"type": "integer", "x-mcp-header": "N"}}},
                "plain": {"type": "string"}}}},
            {"name": "bad-type", "inputSchema": {"type": "object", "properties": {
                "o": {"type": "object", "x-mcp-header": "O"}}}},
            {"name": "bad-name", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "has space"}}}},
            {"name": "dup", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "X"},
                "b": {"type": "string", "x-mcp-header": "x"}}}},
            {"name": "none", "inputSchema": {"type": "object"}}
        ]});
        let mut store = HashMap::new();
        assert!(filter_tools(&mut result, &mut store));
        let names: Vec<&str> = result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["route", "none"]);
        let mut hs = headers(
            &store["route"],
            &json!({"region": "eu-west", "opts": {"n": 3}, "plain": "p"}),
        );
        hs.sort();
        hs.reverse();
        assert_eq!(
            hs,
            [
                ("Mcp-Param-Region".to_owned(), "eu-west".to_owned()),
                ("Mcp-Param-N".to_owned(), "3".to_owned())
            ]
        );
        let hs = headers(&store["route"], &json!({"region": "Zürich"}));
        assert_eq!(hs[0].1, encode_value("Zürich"));
        assert!(hs[0].1.starts_with("=?base64?"));
        assert!(!store.contains_key("none"));
    }
}
