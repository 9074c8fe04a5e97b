//! SEP-2243 on the server: a tool argument whose input schema names a header with
//! `x-mcp-header` travels twice in a 2026-07-28 HTTP request, in the body and in an
//! `Mcp-Param-<name>` header, so that gateways and load balancers can route on it without
//! reading the body. The two must agree: a request whose header says one thing while the body
//! says another would be routed on a value the tool never sees, so it is refused (-32020, which
//! the HTTP transport answers with 400).

use mcp_core::jsonrpc::{ErrorObject, codes};
use serde_json::{Map, Value};

/// Checks the mirrored arguments of one `tools/call`: for every property of `schema` with an
/// `x-mcp-header` name, a non-null argument needs the header with the same value, and an absent
/// or null one needs the header to be absent. `headers` are the request's `Mcp-Param-*`
/// headers (name after the prefix, decoded value); names compare ignoring case, as in HTTP.
pub(crate) fn check(
    schema: &Map<String, Value>,
    args: &Value,
    headers: &[(String, String)],
) -> Result<(), ErrorObject> {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Ok(());
    };
    for (param, prop) in props {
        let Some(name) = prop.get("x-mcp-header").and_then(Value::as_str) else {
            continue;
        };
        let header = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str());
        let arg = args.get(param).filter(|v| !v.is_null());
        let agrees = match (arg, header) {
            (None, None) => true,
            (Some(a), Some(h)) => same(a, h),
            _ => false,
        };
        if !agrees {
            let detail = match (arg, header) {
                (Some(_), None) => {
                    format!("the Mcp-Param-{name} header is required with argument {param:?}")
                }
                (None, Some(_)) => {
                    format!("the Mcp-Param-{name} header is sent without argument {param:?}")
                }
                _ => format!("the Mcp-Param-{name} header does not match argument {param:?}"),
            };
            return Err(ErrorObject::new(codes::HEADER_MISMATCH, detail));
        }
    }
    Ok(())
}

/// Whether header text `h` stands for argument `a`: strings exactly, booleans as `true` and
/// `false`, numbers by value (a client writes them as its language prints them, `1e+21` or
/// `1000000000000000000000`, so the text is not compared).
fn same(a: &Value, h: &str) -> bool {
    match a {
        Value::String(s) => s == h,
        Value::Bool(b) => h == if *b { "true" } else { "false" },
        Value::Number(n) => match (n.as_f64(), h.trim().parse::<f64>()) {
            (Some(x), Ok(y)) => x == y,
            _ => n.to_string() == h,
        },
        // Only primitives are meant to be mirrored; anything else compares as its JSON text.
        other => serde_json::to_string(other).is_ok_and(|t| t == h),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Map<String, Value> {
        let v = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "query": {"type": "string"}
        }});
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn mirrored_arguments_must_agree_with_their_headers() {
        let s = schema();
        let args = json!({"region": "us-west1", "priority": 42, "verbose": false, "query": "q"});
        let all = h(&[
            ("region", "us-west1"),
            ("PRIORITY", "42"),
            ("Verbose", "false"),
        ]);
        assert!(check(&s, &args, &all).is_ok());
        assert!(check(&s, &json!({"priority": 4.0}), &h(&[("Priority", "4")])).is_ok());
        // Unannotated arguments are not mirrored; extra headers for them do not matter.
        assert!(check(&s, &json!({"query": "q"}), &h(&[("Other", "x")])).is_ok());
        let refused = [
            (json!({"region": "a"}), h(&[])),
            (json!({"region": "a"}), h(&[("Region", "b")])),
            (json!({}), h(&[("Region", "a")])),
            (json!({"region": null}), h(&[("Region", "null")])),
            (json!({"verbose": true}), h(&[("Verbose", "1")])),
            (json!({"priority": 42}), h(&[("Priority", "forty-two")])),
        ];
        for (args, headers) in refused {
            let e = check(&s, &args, &headers).unwrap_err();
            assert_eq!(e.code, codes::HEADER_MISMATCH, "{args} {headers:?}");
        }
        // A null argument needs no header.
        assert!(check(&s, &json!({"verbose": null}), &[]).is_ok());
    }
}
