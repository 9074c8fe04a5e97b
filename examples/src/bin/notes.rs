//! A small notes server, the kind a user writes first: tools to add, list and search notes kept
//! in memory (and to clear them, once the user confirms in a form), each note readable as a `notes://note/{id}` resource (plus `notes://all`, every
//! note at once), and a prompt that asks the model to summarize the notes on a topic.
//!
//! Every schema comes from a type (`#[derive(JsonSchema)]`) and every handler returns a plain
//! value the kit converts: text, `Structured` data, a resource's text whose URI and MIME type
//! the kit fills in, a prompt's string as one user message.
//!
//! Run it under an MCP client as a stdio server (`target/release/notes`), or with
//! `--http 127.0.0.1:8080` for Streamable HTTP on `/mcp`.
use std::sync::{Mutex, MutexGuard};

use mcp_server_kit::schema::JsonSchema;
use mcp_server_kit::types::ToolAnnotations;
use mcp_server_kit::{
    Context, Elicited, Error, NoArgs, Prompt, Resource, ResourceTemplate, Server, Structured, Tool,
};
use serde::{Deserialize, Serialize};

/// One note.
#[derive(Clone, Serialize, JsonSchema)]
struct Note {
    /// Its id, as in `notes://note/{id}`.
    id: u32,
    /// What it says.
    text: String,
    /// Tags it is filed under.
    tags: Vec<String>,
}

/// The notes kept so far, and the next id to give.
#[derive(Default)]
struct Book {
    notes: Vec<Note>,
    next_id: u32,
}

/// The book, the server's state (`ServerBuilder::state`): every handler reads it, on
/// whichever thread it runs, hence the lock.
#[derive(Default)]
struct Notes(Mutex<Book>);

impl Notes {
    /// The book, even if a handler panicked while holding it: a note is pushed whole or not
    /// at all, so what is there is still consistent.
    fn book(&self) -> MutexGuard<'_, Book> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Arguments of `add_note`.
#[derive(Deserialize, JsonSchema)]
struct AddNote {
    /// What the note says.
    text: String,
    /// Tags to file it under.
    #[serde(default)]
    tags: Vec<String>,
}

/// Arguments of `search_notes`.
#[derive(Deserialize, JsonSchema)]
struct Search {
    /// Words the note must contain (case does not matter).
    query: String,
    /// Only notes with this tag.
    tag: Option<String>,
}

/// The form `clear_notes` shows the user before it deletes anything.
#[derive(Deserialize, JsonSchema)]
struct ConfirmClear {
    /// Delete them? This cannot be undone.
    delete: bool,
}

/// A list of notes, as `list_notes` and `search_notes` answer.
#[derive(Serialize, JsonSchema)]
struct Found {
    /// The notes, oldest first.
    notes: Vec<Note>,
}

/// Arguments of the `summarize` prompt.
#[derive(Deserialize, JsonSchema)]
struct Summarize {
    /// Only notes with this tag; all notes when left out.
    tag: Option<String>,
}

/// A note as a resource reads: its text, then its tags.
fn as_markdown(note: &Note) -> String {
    if note.tags.is_empty() {
        note.text.clone()
    } else {
        format!("{}\n\ntags: {}", note.text, note.tags.join(", "))
    }
}

fn server(notes: Notes, args: &[String]) -> Result<Server, Box<dyn std::error::Error>> {
    let read_only = ToolAnnotations {
        read_only_hint: Some(true),
        ..Default::default()
    };
    let builder = Server::builder("notes", env!("CARGO_PKG_VERSION"));
    let builder = mcp_examples::configure(builder, args)?
        .instructions("Keeps notes: add_note keeps one, search_notes finds them.")
        // Every handler reads the book with `ctx.state::<Notes>()`.
        .state(notes)
        .tool(
            Tool::typed("add_note", |a: AddNote, ctx: &Context| {
                let mut book = ctx.state::<Notes>()?.book();
                book.next_id += 1;
                let id = book.next_id;
                book.notes.push(Note {
                    id,
                    text: a.text,
                    tags: a.tags,
                });
                Ok::<_, Error>(format!("Kept as notes://note/{id}"))
            })
            .description("Keeps a note"),
        )
        .tool(
            Tool::typed("list_notes", |_: NoArgs, ctx: &Context| {
                let notes = ctx.state::<Notes>()?.book().notes.clone();
                Ok::<_, Error>(Structured(Found { notes }))
            })
            .description("Lists every note")
            .annotations(read_only.clone()),
        )
        .tool(
            Tool::typed("search_notes", |a: Search, ctx: &Context| {
                let query = a.query.to_lowercase();
                let notes = (ctx.state::<Notes>()?.book().notes.iter())
                    .filter(|n| n.text.to_lowercase().contains(&query))
                    .filter(|n| a.tag.as_ref().is_none_or(|t| n.tags.contains(t)))
                    .cloned()
                    .collect();
                Ok::<_, Error>(Structured(Found { notes }))
            })
            .description("Finds the notes that contain some words")
            .annotations(read_only),
        )
        .tool(
            Tool::typed("clear_notes", |_: NoArgs, ctx: &Context| {
                let notes = ctx.state::<Notes>()?;
                let count = notes.book().notes.len();
                // Asked before anything is deleted: over 2026-07-28 the handler runs again
                // with the answer, so what comes before the question must be harmless.
                let answer =
                    ctx.elicit_form::<ConfirmClear>(format!("Delete all {count} notes?"))?;
                if !matches!(answer, Elicited::Accepted(ConfirmClear { delete: true })) {
                    return Ok::<_, Error>("Kept every note".to_owned());
                }
                let gone = std::mem::take(&mut notes.book().notes).len();
                Ok(format!("Deleted {gone} notes"))
            })
            .description("Deletes every note, once the user confirms")
            .annotations(ToolAnnotations {
                destructive_hint: Some(true),
                ..Default::default()
            }),
        )
        .resource(
            Resource::new("notes://all", "all notes", |ctx: &Context| {
                let book = ctx.state::<Notes>()?.book();
                let texts: Vec<String> = book.notes.iter().map(as_markdown).collect();
                Ok::<_, Error>(texts.join("\n\n---\n\n"))
            })
            .description("Every note, oldest first")
            .mime_type("text/markdown"),
        )
        .resource_template(
            ResourceTemplate::new("notes://note/{id}", "note", |uri, vars, ctx: &Context| {
                let book = ctx.state::<Notes>()?.book();
                let id = vars.get("id").and_then(|id| id.parse::<u32>().ok());
                match book.notes.iter().find(|n| Some(n.id) == id) {
                    Some(note) => Ok(as_markdown(note)),
                    None => Err(Error::ResourceNotFound(uri.to_owned())),
                }
            })?
            .description("One note")
            .mime_type("text/markdown"),
        )
        .prompt(
            Prompt::typed("summarize", |a: Summarize, ctx: &Context| {
                let book = ctx.state::<Notes>()?.book();
                let picked: Vec<String> = (book.notes.iter())
                    .filter(|n| a.tag.as_ref().is_none_or(|t| n.tags.contains(t)))
                    .map(as_markdown)
                    .collect();
                let about = a.tag.map_or(String::new(), |t| format!(" tagged {t:?}"));
                Ok::<_, Error>(format!(
                    "Summarize my notes{about} in a few bullet points:\n\n{}",
                    picked.join("\n\n---\n\n")
                ))
            })
            .description("Asks the model to summarize the notes"),
        );
    Ok(builder.build()?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = server(Notes::default(), &args)?;
    mcp_examples::serve(server, args.into_iter())?;
    Ok(())
}
