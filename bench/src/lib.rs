//! What the mcport echo servers share: the arguments and the input schema of the one tool,
//! the same surface as this project's `examples/src/bin/echo.rs`.

/// The `echo` tool's arguments.
#[derive(serde::Deserialize)]
pub struct EchoArgs {
    /// The text answered back.
    pub message: String,
}

/// The `echo` tool's input schema, written out (mcport takes a JSON schema value).
pub fn echo_schema() -> mcport::Value {
    mcport::json!({
        "type": "object",
        "properties": { "message": { "type": "string", "description": "Text to echo" } },
        "required": ["message"]
    })
}
