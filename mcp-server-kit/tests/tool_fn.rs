//! `#[tool]`: plain functions served as tools, called through a real session.
#![cfg(feature = "derive")]

use mcp_server_kit::schema::JsonSchema;
use mcp_server_kit::{Context, Error, Server, Structured, tool};
use serde_json::json;

mod common;
use common::Peer;

/// Adds two integers.
#[tool]
fn add(
    /// The first.
    left: i32,
    /// The second; 1 when left out.
    right: Option<i32>,
) -> i64 {
    i64::from(left) + i64::from(right.unwrap_or(1))
}

/// Divides, refusing zero.
#[tool(name = "divide", description = "Divides a by b")]
fn div(a: f64, #[arg(description = "Not zero")] b: f64) -> Result<f64, String> {
    if b == 0.0 {
        return Err("cannot divide by zero".to_owned());
    }
    Ok(a / b)
}

#[derive(serde::Serialize, JsonSchema)]
struct Who {
    /// The client's name.
    client: String,
    /// What was asked.
    asked: String,
}

/// Says who asked, from the context.
#[tool]
fn whoami(ctx: &Context, question: String) -> Structured<Who> {
    let client = ctx.client_info().map_or(String::new(), |i| i.name.clone());
    Structured(Who {
        client,
        asked: question,
    })
}

/// Does nothing.
#[tool]
fn nothing() {}

/// Parses a number; any error type boxed passes through `?`.
#[tool]
fn parse(text: String) -> Result<i64, Box<dyn std::error::Error + Send + Sync>> {
    Ok(text.trim().parse::<i64>()?)
}

fn server() -> Server {
    Server::builder("t", "1")
        .tool(add_tool())
        .tool(div_tool())
        .tool(whoami_tool())
        .tool(nothing_tool())
        .tool(parse_tool())
        .build()
        .unwrap()
}

#[test]
fn plain_functions_are_listed_with_schemas_from_their_parameters() {
    let p = Peer::open(&server());
    p.initialize("2025-11-25", json!({}));
    let list = p.request(1, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();

    let add = tool("add");
    assert_eq!(add["description"], "Adds two integers.");
    assert_eq!(add["inputSchema"]["required"], json!(["left"]));
    assert_eq!(
        add["inputSchema"]["properties"]["left"]["description"],
        "The first."
    );
    assert_eq!(add["inputSchema"]["properties"]["left"]["type"], "integer");
    let div = tool("divide");
    assert_eq!(div["description"], "Divides a by b");
    assert_eq!(
        div["inputSchema"]["properties"]["b"]["description"],
        "Not zero"
    );
    assert_eq!(div["inputSchema"]["required"], json!(["a", "b"]));
    // The context is no argument; the structured result declares its schema.
    let who = tool("whoami");
    assert_eq!(who["inputSchema"]["required"], json!(["question"]));
    assert!(
        who["inputSchema"]["properties"].get("ctx").is_none(),
        "{who}"
    );
    assert_eq!(who["outputSchema"]["required"], json!(["client", "asked"]));
    assert_eq!(tool("nothing")["inputSchema"]["type"], "object");
}

#[test]
fn plain_functions_answer_calls() {
    let p = Peer::open(&server());
    p.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}}),
    );
    p.response(0);
    p.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |id: i64, name: &str, args: serde_json::Value| {
        p.request(id, "tools/call", json!({"name": name, "arguments": args}))["result"].clone()
    };
    assert_eq!(
        call(1, "add", json!({"left": 2, "right": 5}))["content"][0]["text"],
        "7"
    );
    assert_eq!(
        call(2, "add", json!({"left": 2}))["content"][0]["text"],
        "3"
    );
    assert_eq!(
        call(3, "divide", json!({"a": 1, "b": 4}))["content"][0]["text"],
        "0.25"
    );
    // An `Err` is the tool's error, told to the model.
    let r = call(4, "divide", json!({"a": 1, "b": 0}));
    assert_eq!(r["isError"], true);
    assert_eq!(r["content"][0]["text"], "cannot divide by zero");
    // Arguments that do not fit the parameters never reach the function.
    let r = call(5, "add", json!({"left": "two"}));
    assert_eq!(r["isError"], true, "{r}");
    let r = call(6, "whoami", json!({"question": "who?"}));
    assert_eq!(
        r["structuredContent"],
        json!({"client": "probe", "asked": "who?"})
    );
    let r = call(8, "parse", json!({"text": " 12 "}));
    assert_eq!(r["content"][0]["text"], "12");
    let r = call(9, "parse", json!({"text": "twelve"}));
    assert_eq!(r["isError"], true);
    assert_eq!(r["content"][0]["text"], "invalid digit found in string");
    let r = call(7, "nothing", json!({}));
    assert_eq!(r["content"], json!([]));
    assert!(r.get("isError").is_none_or(|e| e == false), "{r}");
}

/// What `bump` counts, kept by the server.
#[derive(Default)]
struct Counter(std::sync::atomic::AtomicU64);

/// Counts its calls, in the server's state.
#[tool]
fn bump(ctx: &Context) -> Result<u64, Error> {
    let counter = ctx.state::<Counter>()?;
    Ok(counter.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1)
}

#[test]
fn handlers_share_the_servers_state_and_a_missing_one_is_a_tool_error() {
    let with = Server::builder("t", "1")
        .state(Counter::default())
        .tool(bump_tool())
        .build()
        .unwrap();
    // Two sessions, one state.
    for (id, want) in [(1, "1"), (2, "2")] {
        let p = Peer::open(&with);
        p.initialize("2025-11-25", json!({}));
        let r = p.request(id, "tools/call", json!({"name": "bump"}));
        assert_eq!(r["result"]["content"][0]["text"], want, "{r}");
    }
    let without = Server::builder("t", "1").tool(bump_tool()).build().unwrap();
    let p = Peer::open(&without);
    p.initialize("2025-11-25", json!({}));
    let r = p.request(1, "tools/call", json!({"name": "bump"}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Counter"), "{text}");
}

#[test]
fn the_function_stays_callable() {
    assert_eq!(add(40, Some(2)), 42);
    assert_eq!(div(1.0, 0.0), Err("cannot divide by zero".to_owned()));
    let _: Error = "unused".into();
}
