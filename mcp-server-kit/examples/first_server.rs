use mcp_server_kit::schema::JsonSchema;
use mcp_server_kit::{Context, NoArgs, Prompt, Resource, Server, Structured, Tool};
static NOTES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

#[derive(serde::Deserialize, JsonSchema)]
struct Note {
    /// The note's text
    text: String,
}
#[derive(serde::Serialize, JsonSchema)]
struct Notes {
    notes: Vec<String>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("notes", "1.0.0")
        .tool(Tool::typed("add_note", |note: Note, _: &Context| {
            NOTES.lock().unwrap().push(note.text);
            Ok("noted")
        }))
        .tool(Tool::typed("list_notes", |_: NoArgs, _: &Context| {
            let notes = NOTES.lock().unwrap().clone();
            Ok(Structured(Notes { notes }))
        }))
        .resource(Resource::new("notes://all", "notes", |_: &Context| {
            Ok(NOTES.lock().unwrap().join("\n"))
        }))
        .prompt(Prompt::new("summarize", |_, _| Ok("Summarize notes://all")));
    Ok(mcp_stdio::serve(server.build()?)?)
}
