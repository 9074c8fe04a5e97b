//! One conversion story: the same short return types (text, a [`Blob`], JSON, [`Structured`],
//! the full result types) work for tools, resources and prompts, each driven through a real
//! session; typed prompt arguments declare themselves from their type and refuse a call that
//! leaves a required one out.
#![cfg(feature = "derive")]

use std::collections::BTreeMap;

use mcp_core::types::{PromptMessage, ResourceContents, Role};
use mcp_server_kit::schema::JsonSchema;
use mcp_server_kit::{
    Blob, Context, Error, NoArgs, Prompt, Resource, ResourceTemplate, Server, Structured, Tool,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod common;
use common::Peer;

/// A result with a shape, for the `Structured` and JSON forms.
#[derive(Serialize, JsonSchema)]
struct Count {
    /// How many.
    count: u32,
}

const PNG: &[u8] = &[0x89, b'P', b'N', b'G'];

fn session(server: Server) -> Peer {
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({}));
    p
}

// ---------------------------------------------------------------- tools

fn tool_server() -> Server {
    Server::builder("convert", "1.0.0")
        .tool(Tool::new("string", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(String::from("owned"))
        }))
        .tool(Tool::new("str", |_: NoArgs, _: &Context| {
            Ok::<_, Error>("borrowed")
        }))
        .tool(Tool::new("image", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(Blob::new("image/png", PNG))
        }))
        .tool(Tool::new("audio", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(Blob::new("audio/wav", b"RIFF".to_vec()))
        }))
        .tool(Tool::new("pdf", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(Blob::new("application/pdf", b"%PDF".to_vec()))
        }))
        .tool(Tool::new("object", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(json!({"count": 2}))
        }))
        .tool(Tool::new("number", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(json!(7))
        }))
        .tool(Tool::typed("structured", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(Structured(Count { count: 3 }))
        }))
        .build()
        .unwrap()
}

fn call(p: &Peer, id: i64, name: &str) -> Value {
    let r = p.request(id, "tools/call", json!({"name": name, "arguments": {}}));
    r.get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{name}: {r}"))
}

#[test]
fn tools_convert_every_short_form() {
    let p = session(tool_server());
    assert_eq!(
        call(&p, 2, "string")["content"],
        json!([{"type": "text", "text": "owned"}])
    );
    assert_eq!(
        call(&p, 3, "str")["content"],
        json!([{"type": "text", "text": "borrowed"}])
    );
    assert_eq!(
        call(&p, 4, "image")["content"],
        json!([{"type": "image", "data": "iVBORw==", "mimeType": "image/png"}])
    );
    assert_eq!(call(&p, 5, "audio")["content"][0]["type"], "audio");
    // A type with no content kind of its own travels as an embedded resource.
    let pdf = call(&p, 6, "pdf");
    assert_eq!(pdf["content"][0]["type"], "resource");
    assert_eq!(
        pdf["content"][0]["resource"],
        json!({"uri": "data:application/pdf,", "mimeType": "application/pdf", "blob": "JVBERg=="})
    );
    let object = call(&p, 7, "object");
    assert_eq!(object["structuredContent"], json!({"count": 2}));
    assert_eq!(object["content"][0]["text"], r#"{"count":2}"#);
    // Not an object: structuredContent must be one, so text alone.
    let number = call(&p, 8, "number");
    assert!(number.get("structuredContent").is_none(), "{number}");
    assert_eq!(number["content"][0]["text"], "7");
    let structured = call(&p, 9, "structured");
    assert_eq!(structured["structuredContent"], json!({"count": 3}));

    let list = p.request(10, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let find = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();
    assert_eq!(
        find("structured")["outputSchema"]["required"],
        json!(["count"])
    );
    // Bare JSON promises no shape.
    assert!(find("object").get("outputSchema").is_none());
}

// ---------------------------------------------------------------- resources

fn resource_server() -> Server {
    let template = ResourceTemplate::new("notes://note/{id}", "note", |_uri, vars, _: &Context| {
        Ok::<_, Error>(format!("note {}", vars["id"]))
    })
    .unwrap()
    .mime_type("text/markdown");
    Server::builder("convert", "1.0.0")
        .resource(
            Resource::new("r://string", "string", |_: &Context| {
                Ok::<_, Error>(String::from("owned"))
            })
            .mime_type("text/markdown"),
        )
        .resource(Resource::new("r://str", "str", |_: &Context| {
            Ok::<_, Error>("borrowed")
        }))
        .resource(Resource::new("r://blob", "blob", |_: &Context| {
            Ok::<_, Error>(Blob::new("image/png", PNG))
        }))
        .resource(Resource::new("r://value", "value", |_: &Context| {
            Ok::<_, Error>(json!({"count": 2}))
        }))
        .resource(Resource::new(
            "r://structured",
            "structured",
            |_: &Context| Ok::<_, Error>(Structured(Count { count: 3 })),
        ))
        .resource(Resource::new("r://one", "one", |_: &Context| {
            Ok::<_, Error>(ResourceContents::text("r://one#part", "a part"))
        }))
        .resource(Resource::new("r://full", "full", |_: &Context| {
            Ok(vec![
                ResourceContents::text("r://full/a", "a"),
                ResourceContents::text("r://full/b", "b"),
            ])
        }))
        .resource_template(template)
        .build()
        .unwrap()
}

fn read(p: &Peer, id: i64, uri: &str) -> Value {
    let r = p.request(id, "resources/read", json!({"uri": uri}));
    r["result"]["contents"].clone()
}

#[test]
fn resources_convert_every_short_form() {
    let p = session(resource_server());
    // The kit fills in the URI and the resource's MIME type.
    assert_eq!(
        read(&p, 2, "r://string"),
        json!([{"uri": "r://string", "mimeType": "text/markdown", "text": "owned"}])
    );
    // No MIME type declared: none made up.
    assert_eq!(
        read(&p, 3, "r://str"),
        json!([{"uri": "r://str", "text": "borrowed"}])
    );
    assert_eq!(
        read(&p, 4, "r://blob"),
        json!([{"uri": "r://blob", "mimeType": "image/png", "blob": "iVBORw=="}])
    );
    assert_eq!(
        read(&p, 5, "r://value"),
        json!([{"uri": "r://value", "mimeType": "application/json", "text": r#"{"count":2}"#}])
    );
    assert_eq!(
        read(&p, 6, "r://structured"),
        json!([{"uri": "r://structured", "mimeType": "application/json", "text": r#"{"count":3}"#}])
    );
    // The full forms are passed on as they are.
    assert_eq!(
        read(&p, 7, "r://one"),
        json!([{"uri": "r://one#part", "text": "a part"}])
    );
    assert_eq!(read(&p, 8, "r://full").as_array().unwrap().len(), 2);
    // A template's text gets the concrete URI read and the template's MIME type.
    assert_eq!(
        read(&p, 9, "notes://note/42"),
        json!([{"uri": "notes://note/42", "mimeType": "text/markdown", "text": "note 42"}])
    );
}

// ---------------------------------------------------------------- prompts

fn prompt_server() -> Server {
    let untyped =
        |f: fn() -> Value| move |_: &BTreeMap<String, String>, _: &Context| Ok::<_, Error>(f());
    Server::builder("convert", "1.0.0")
        .prompt(Prompt::new("string", |_, _: &Context| {
            Ok::<_, Error>(String::from("owned"))
        }))
        .prompt(Prompt::new("str", |_, _: &Context| {
            Ok::<_, Error>("borrowed")
        }))
        .prompt(Prompt::new("image", |_, _: &Context| {
            Ok::<_, Error>(Blob::new("image/png", PNG))
        }))
        .prompt(Prompt::new("value", untyped(|| json!({"count": 2}))))
        .prompt(Prompt::new("structured", |_, _: &Context| {
            Ok::<_, Error>(Structured(Count { count: 3 }))
        }))
        .prompt(Prompt::new("message", |_, _: &Context| {
            Ok::<_, Error>(PromptMessage::text(Role::Assistant, "from the model"))
        }))
        .prompt(Prompt::new("messages", |_, _: &Context| {
            Ok::<_, Error>(vec![
                PromptMessage::text(Role::User, "one"),
                PromptMessage::text(Role::Assistant, "two"),
            ])
        }))
        .prompt(
            Prompt::typed("summarize", |a: Summarize, _: &Context| {
                let style = a.style.map_or(String::new(), |s| format!(" ({s:?})"));
                Ok::<_, Error>(format!("Summarize the notes about {}{style}", a.topic))
            })
            .description("Summarizes notes"),
        )
        .build()
        .unwrap()
}

/// A typed prompt's arguments.
#[derive(Deserialize, JsonSchema)]
struct Summarize {
    /// The topic the notes are about.
    topic: String,
    /// How to write it.
    style: Option<Style>,
}

/// A prompt argument read from a string.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Style {
    /// A few bullets.
    Bullets,
    /// Prose.
    Prose,
}

fn messages(p: &Peer, id: i64, name: &str) -> Value {
    let r = p.request(id, "prompts/get", json!({"name": name}));
    r["result"]["messages"].clone()
}

#[test]
fn prompts_convert_every_short_form() {
    let p = session(prompt_server());
    assert_eq!(
        messages(&p, 2, "string"),
        json!([{"role": "user", "content": {"type": "text", "text": "owned"}}])
    );
    assert_eq!(
        messages(&p, 3, "str"),
        json!([{"role": "user", "content": {"type": "text", "text": "borrowed"}}])
    );
    assert_eq!(
        messages(&p, 4, "image"),
        json!([{"role": "user", "content": {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}}])
    );
    assert_eq!(
        messages(&p, 5, "value"),
        json!([{"role": "user", "content": {"type": "text", "text": r#"{"count":2}"#}}])
    );
    assert_eq!(
        messages(&p, 6, "structured"),
        json!([{"role": "user", "content": {"type": "text", "text": r#"{"count":3}"#}}])
    );
    assert_eq!(messages(&p, 7, "message")[0]["role"], "assistant");
    assert_eq!(messages(&p, 8, "messages").as_array().unwrap().len(), 2);
}

#[test]
fn typed_prompt_declares_and_reads_its_arguments() {
    let p = session(prompt_server());
    let list = p.request(2, "prompts/list", json!({}));
    let summarize = list["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "summarize")
        .unwrap()
        .clone();
    assert_eq!(
        summarize["arguments"],
        json!([
            {"name": "style", "description": "How to write it.", "required": false},
            {"name": "topic", "description": "The topic the notes are about.", "required": true},
        ])
    );

    let r = p.request(
        3,
        "prompts/get",
        json!({"name": "summarize", "arguments": {"topic": "rust", "style": "bullets"}}),
    );
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"],
        "Summarize the notes about rust (Bullets)"
    );
    // The optional argument may be left out.
    let r = p.request(
        4,
        "prompts/get",
        json!({"name": "summarize", "arguments": {"topic": "rust"}}),
    );
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"],
        "Summarize the notes about rust"
    );
}

#[test]
fn typed_prompt_refuses_a_missing_required_argument() {
    let p = session(prompt_server());
    let r = p.request(
        2,
        "prompts/get",
        json!({"name": "summarize", "arguments": {"style": "prose"}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains("topic"), "{message}");
}

#[test]
fn typed_prompt_refuses_a_value_its_type_does_not_take() {
    let p = session(prompt_server());
    let r = p.request(
        2,
        "prompts/get",
        json!({"name": "summarize", "arguments": {"topic": "rust", "style": "haiku"}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains("haiku"), "{message}");
}

// ---------------------------------------------------------------- base64

#[test]
fn blob_base64_matches_rfc_4648_vectors() {
    for (plain, encoded) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ] {
        assert_eq!(Blob::new("text/plain", plain.as_bytes()).base64(), encoded);
    }
    let all: Vec<u8> = (0..=255).collect();
    let b64 = Blob::new("application/octet-stream", all).base64();
    assert!(b64.starts_with("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g"));
    assert!(b64.ends_with("+/w=="), "{b64}");
}

// ---------------------------------------------------------------- a notes-style server

/// A note to keep.
#[derive(Deserialize, JsonSchema)]
struct AddNote {
    /// The note's text.
    text: String,
    /// Tags to file it under.
    #[serde(default)]
    tags: Vec<String>,
    /// Where the note came from.
    source: Option<Source>,
}

/// A nested argument type.
#[derive(Deserialize, JsonSchema)]
struct Source {
    /// A link.
    url: String,
}

/// What a search finds.
#[derive(Serialize, JsonSchema)]
struct Found {
    /// The matching notes.
    notes: Vec<String>,
}

/// A search.
#[derive(Deserialize, JsonSchema)]
struct Search {
    /// Words to look for.
    query: String,
}

#[test]
fn notes_style_server_lists_schemas_from_its_types() {
    let server = Server::builder("notes", "1.0.0")
        .tool(Tool::typed("add", |a: AddNote, _: &Context| {
            let from = a.source.map(|s| s.url).unwrap_or_default();
            Ok::<_, Error>(format!("added {} {:?} {from}", a.text, a.tags))
        }))
        .tool(Tool::typed("search", |a: Search, _: &Context| {
            Ok::<_, Error>(Structured(Found {
                notes: vec![a.query],
            }))
        }))
        .build()
        .unwrap();
    let p = session(server);
    let list = p.request(2, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let add = tools.iter().find(|t| t["name"] == "add").unwrap();
    let input = &add["inputSchema"];
    assert_eq!(input["type"], "object");
    assert_eq!(input["required"], json!(["text"]));
    assert_eq!(
        input["properties"]["text"]["description"],
        "The note's text."
    );
    assert_eq!(input["properties"]["tags"]["type"], "array");
    assert_eq!(input["properties"]["tags"]["items"]["type"], "string");
    // The nested type is written in place, with its own required field.
    let source = &input["properties"]["source"];
    assert_eq!(source["properties"]["url"]["description"], "A link.");
    assert_eq!(source["required"], json!(["url"]));
    let search = tools.iter().find(|t| t["name"] == "search").unwrap();
    assert_eq!(search["inputSchema"]["required"], json!(["query"]));
    assert_eq!(search["outputSchema"]["required"], json!(["notes"]));
    assert_eq!(
        search["outputSchema"]["properties"]["notes"]["items"]["type"],
        "string"
    );

    let r = p.request(
        3,
        "tools/call",
        json!({"name": "search", "arguments": {"query": "milk"}}),
    );
    assert_eq!(r["result"]["structuredContent"], json!({"notes": ["milk"]}));
}
