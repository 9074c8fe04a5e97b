//! What handlers return, in the short forms the kinds share: anything a tool handler may
//! return ([`IntoToolResult`]), data given as [`Structured`], and bytes as a [`Blob`]. Tools,
//! resources and prompts all read these; none of them owns them.

use mcp_core::types::{CallToolResult, ContentBlock, EmbeddedResource, ResourceContents};
use serde::Serialize;
use serde_json::Value;

use crate::schema::JsonSchema;

/// What a tool handler may return: a full [`CallToolResult`], or something that reads as one.
pub trait IntoToolResult {
    /// Converts into a result.
    fn into_tool_result(self) -> CallToolResult;

    /// The `outputSchema` every result of this type fits, if it promises one: the tool then
    /// declares it (see [`Structured`]). `None` by default.
    fn output_schema() -> Option<Value>
    where
        Self: Sized,
    {
        None
    }

    /// The result's text, when the result is one text block and nothing else (`Err(self)`
    /// otherwise, the default): the kit then writes the answer straight from the string
    /// instead of building a [`CallToolResult`] to write and drop. `String` and `&str` say so.
    fn into_text(self) -> Result<String, Self>
    where
        Self: Sized,
    {
        Err(self)
    }
}

/// A handler result given as data: the kit puts it in `structuredContent`, repeats it as JSON
/// text for clients older than 2025-06-18 (which only read `content`), and the tool declares
/// `outputSchema` from `T`'s [`JsonSchema`], so the result's shape is written once, in `T`.
///
/// `T` should serialize to a JSON object, as `structuredContent` must be one. In debug builds
/// the kit checks each result against the schema derived from `T` (with
/// [`validate`](crate::validate)); a mismatch (a hand-written `Serialize` or `JsonSchema` that
/// disagree) is logged and turned into a tool error result naming the member, so tests catch
/// it; release builds skip the check.
///
/// ```
/// # #[cfg(feature = "derive")] {
/// use mcp_server_kit::{Context, Error, NoArgs, Structured, Tool, schema::JsonSchema};
///
/// #[derive(serde::Serialize, JsonSchema)]
/// struct Stats {
///     /// Notes kept.
///     count: u32,
/// }
///
/// let tool = Tool::typed("stats", |_: NoArgs, _ctx: &Context| {
///     Ok::<_, Error>(Structured(Stats { count: 3 }))
/// });
/// let out = tool.definition().output_schema.as_ref().unwrap();
/// assert_eq!(out["required"], serde_json::json!(["count"]));
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Structured<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolResult for Structured<T> {
    fn into_tool_result(self) -> CallToolResult {
        match serde_json::to_value(&self.0) {
            Ok(v) => CallToolResult::structured(v),
            // A map with non-string keys, a failing Serialize: the handler's bug, told as such.
            Err(e) => CallToolResult::error(format!("result could not be serialized: {e}")),
        }
    }

    fn output_schema() -> Option<Value> {
        Some(T::schema())
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }

    fn into_text(self) -> Result<String, Self> {
        Ok(self)
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }

    fn into_text(self) -> Result<String, Self> {
        Ok(self.to_owned())
    }
}

/// JSON without a declared shape: an object becomes `structuredContent` (and its text), any
/// other value text alone, as `structuredContent` must be an object. Return [`Structured`]
/// to declare the `outputSchema` as well.
impl IntoToolResult for Value {
    fn into_tool_result(self) -> CallToolResult {
        if self.is_object() {
            CallToolResult::structured(self)
        } else {
            CallToolResult::text(self.to_string())
        }
    }
}

/// Numbers, booleans and characters read as their text, as a function returning one means.
macro_rules! text_of_display {
    ($($t:ty),*) => {$(
        impl IntoToolResult for $t {
            fn into_tool_result(self) -> CallToolResult {
                CallToolResult::text(self.to_string())
            }

            fn into_text(self) -> Result<String, Self> {
                Ok(self.to_string())
            }
        }
    )*};
}

text_of_display!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64, bool, char
);

/// Nothing to say: a result with no content (the call succeeded).
impl IntoToolResult for () {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(Vec::new())
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![self])
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(self)
    }
}

/// Bytes with their MIME type, as a handler returns them: a resource's blob contents, a tool's
/// image or audio content, a prompt's image message. The kit does the base64 encoding the
/// protocol wants, so handlers deal in bytes.
///
/// ```
/// use mcp_server_kit::Blob;
/// let png = Blob::new("image/png", vec![0x89, b'P', b'N', b'G']);
/// assert_eq!(png.base64(), "iVBORw==");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    mime_type: String,
    bytes: Vec<u8>,
}

impl Blob {
    /// `bytes` of type `mime_type` (such as `image/png`).
    pub fn new(mime_type: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Blob {
        Blob {
            mime_type: mime_type.into(),
            bytes: bytes.into(),
        }
    }

    /// The MIME type.
    pub fn mime_type(&self) -> &str {
        &self.mime_type
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes in base64 (standard alphabet, padded), as the protocol carries them.
    pub fn base64(&self) -> String {
        mcp_core::base64::base64(&self.bytes)
    }

    /// As content of a tool result or prompt message: `image/*` becomes image content,
    /// `audio/*` audio content; any other type has no content kind of its own, so it travels
    /// as an embedded resource under an empty `data:` URI of its type.
    pub(crate) fn into_content(self) -> ContentBlock {
        let data = self.base64();
        if self.mime_type.starts_with("image/") {
            ContentBlock::image(data, self.mime_type)
        } else if self.mime_type.starts_with("audio/") {
            ContentBlock::audio(data, self.mime_type)
        } else {
            let uri = format!("data:{},", self.mime_type);
            let contents = with_mime(ResourceContents::blob(uri, data), &self.mime_type);
            ContentBlock::Resource(EmbeddedResource {
                resource: contents,
                annotations: None,
                meta: None,
                extra: serde_json::Map::new(),
            })
        }
    }
}

impl IntoToolResult for Blob {
    fn into_tool_result(self) -> mcp_core::types::CallToolResult {
        mcp_core::types::CallToolResult::new(vec![self.into_content()])
    }
}

/// Sets the MIME type of resource contents.
pub fn with_mime(contents: ResourceContents, mime_type: &str) -> ResourceContents {
    match contents {
        ResourceContents::Text(mut t) => {
            t.mime_type = Some(mime_type.to_owned());
            ResourceContents::Text(t)
        }
        ResourceContents::Blob(mut b) => {
            b.mime_type = Some(mime_type.to_owned());
            ResourceContents::Blob(b)
        }
    }
}
