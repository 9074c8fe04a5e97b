use mcp_server_kit::schema::JsonSchema;
use mcp_server_kit::{Context, NoArgs, Prompt, Resource, Server, Structured, Tool};
type Book = std::sync::Mutex<Vec<String>>; // the server's state, read with ctx.state
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
        .state(Book::default())
        .tool(Tool::typed("add_note", |note: Note, ctx: &Context| {
            ctx.state::<Book>()?.lock().unwrap().push(note.text);
            Ok("noted")
        }))
        .tool(Tool::typed("list_notes", |_: NoArgs, ctx: &Context| {
            let notes = ctx.state::<Book>()?.lock().unwrap().clone();
            Ok(Structured(Notes { notes }))
        }))
        .resource(Resource::new("notes://all", "notes", |ctx: &Context| {
            Ok(ctx.state::<Book>()?.lock().unwrap().join("\n"))
        }))
        .prompt(Prompt::new("summarize", |_, _| Ok("Summarize notes://all")));
    Ok(mcp_stdio::serve(server.build()?)?)
}
