//! The `notes` example over real stdio pipes: its tools list schemas derived from its types,
//! and a note added with one tool is found by another, read as its resource and summarized by
//! the typed prompt; clearing them asks the user first, in a form made from a type.

mod common;
use common::Client;
use serde_json::json;

#[test]
fn notes_over_stdio() {
    let mut c = Client::spawn_program(env!("CARGO_BIN_EXE_notes"));
    c.initialize("2025-11-25", json!({"elicitation": {}}));

    let list = c.result("tools/list", json!({}));
    let tools = list["tools"].as_array().unwrap();
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();
    let add = tool("add_note");
    assert_eq!(add["inputSchema"]["required"], json!(["text"]));
    assert_eq!(
        add["inputSchema"]["properties"]["text"]["description"],
        "What the note says."
    );
    assert_eq!(
        add["inputSchema"]["properties"]["tags"]["items"]["type"],
        "string"
    );
    let search = tool("search_notes");
    assert_eq!(search["inputSchema"]["required"], json!(["query"]));
    // The structured answer's schema, nested notes included.
    let note = &search["outputSchema"]["properties"]["notes"]["items"];
    assert_eq!(note["required"], json!(["id", "text", "tags"]));

    let added = c.call_tool("add_note", json!({"text": "Buy milk", "tags": ["home"]}));
    assert_eq!(added["content"][0]["text"], "Kept as notes://note/1");
    let found = c.call_tool("search_notes", json!({"query": "MILK"}));
    assert_eq!(
        found["structuredContent"],
        json!({"notes": [{"id": 1, "text": "Buy milk", "tags": ["home"]}]})
    );
    let missing = c.call_tool("add_note", json!({"tags": []}));
    assert_eq!(missing["isError"], true, "{missing}");
    assert!(
        missing["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("text")
    );

    let read = c.result("resources/read", json!({"uri": "notes://note/1"}));
    assert_eq!(
        read["contents"],
        json!([{"uri": "notes://note/1", "mimeType": "text/markdown", "text": "Buy milk\n\ntags: home"}])
    );
    let prompt = c.result(
        "prompts/get",
        json!({"name": "summarize", "arguments": {"tag": "home"}}),
    );
    let text = prompt["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("Buy milk"), "{text}");

    // Clearing asks first; a form declined or answered "no" keeps the notes.
    for answer in [
        json!({"action": "decline"}),
        json!({"action": "accept", "content": {"delete": false}}),
        json!({"action": "accept", "content": {"delete": true}}),
    ] {
        let id = c.request("tools/call", json!({"name": "clear_notes"}));
        let ask = c.server_request("elicitation/create");
        assert_eq!(ask["params"]["message"], "Delete all 1 notes?");
        assert_eq!(
            ask["params"]["requestedSchema"],
            json!({"type": "object", "required": ["delete"], "properties": {
                "delete": {"type": "boolean",
                           "description": "Delete them? This cannot be undone."}}})
        );
        let deletes = answer["content"]["delete"] == true;
        c.reply(&ask["id"], answer);
        let r = c.response(&id);
        let said = if deletes {
            "Deleted 1 notes"
        } else {
            "Kept every note"
        };
        assert_eq!(r["result"]["content"][0]["text"], said, "{r}");
    }
    let all = c.call_tool("list_notes", json!({}));
    assert_eq!(all["structuredContent"], json!({"notes": []}));
    assert!(c.close().success());
}
