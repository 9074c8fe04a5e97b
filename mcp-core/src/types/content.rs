//! Content blocks: what tools return, prompts contain and sampling exchanges.
//!
//! [`ContentBlock`] (text, image, audio, resource_link, resource) and
//! [`SamplingMessageContentBlock`] (text, image, audio, tool_use, tool_result) are tagged by
//! `type`. Decoding does not go through serde's internally-tagged machinery (which buffers
//! every block into an intermediate tree before it knows the variant): one pass reads all the
//! fields any variant may have into [`RawContent`], then the `type` picks the variant. Fields
//! that belong to another variant are kept in `extra`, so nothing the peer sent is lost.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Annotations, Icon, Meta};
use super::definitions::Resource;

/// Text content.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Client hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Base64 image or audio data with its MIME type (`ImageContent`, `AudioContent`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaContent {
    /// Base64-encoded bytes.
    pub data: String,
    /// MIME type, such as `image/png` or `audio/wav`.
    pub mime_type: String,
    /// Client hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `ImageContent`.
pub type ImageContent = MediaContent;
/// `AudioContent` (2025-03-26+).
pub type AudioContent = MediaContent;
/// `ResourceLink` (2025-06-18+): a [`Resource`] plus `type: "resource_link"`.
pub type ResourceLink = Resource;

/// Text contents of a resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Binary contents of a resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded bytes.
    pub blob: String,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The contents of a resource: text or blob (told apart by which field is present).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// `TextResourceContents`.
    Text(TextResourceContents),
    /// `BlobResourceContents`.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text(TextResourceContents {
            uri: uri.into(),
            text: text.into(),
            ..Default::default()
        })
    }

    /// Blob contents (already base64).
    pub fn blob(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        ResourceContents::Blob(BlobResourceContents {
            uri: uri.into(),
            blob: blob.into(),
            ..Default::default()
        })
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawResourceContents {
    uri: String,
    mime_type: Option<String>,
    text: Option<String>,
    blob: Option<String>,
    #[serde(rename = "_meta")]
    meta: Option<Meta>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = RawResourceContents::deserialize(d)?;
        match (r.text, r.blob) {
            (Some(text), blob) => {
                let mut extra = r.extra;
                if let Some(b) = blob {
                    extra.insert("blob".into(), Value::String(b));
                }
                Ok(ResourceContents::Text(TextResourceContents {
                    uri: r.uri,
                    mime_type: r.mime_type,
                    text,
                    meta: r.meta,
                    extra,
                }))
            }
            (None, Some(blob)) => Ok(ResourceContents::Blob(BlobResourceContents {
                uri: r.uri,
                mime_type: r.mime_type,
                blob,
                meta: r.meta,
                extra: r.extra,
            })),
            (None, None) => Err(de::Error::custom("resource contents need `text` or `blob`")),
        }
    }
}

/// A resource embedded in a prompt or tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Client hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A content block of a tool result, prompt message or embedded tool result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// `type: "text"`.
    Text(TextContent),
    /// `type: "image"`.
    Image(ImageContent),
    /// `type: "audio"` (2025-03-26+).
    Audio(AudioContent),
    /// `type: "resource_link"` (2025-06-18+).
    ResourceLink(ResourceLink),
    /// `type: "resource"`.
    Resource(EmbeddedResource),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent {
            text: text.into(),
            ..Default::default()
        })
    }

    /// An image block (`data` is base64).
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(MediaContent {
            data: data.into(),
            mime_type: mime_type.into(),
            ..Default::default()
        })
    }

    /// An audio block (`data` is base64).
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(MediaContent {
            data: data.into(),
            mime_type: mime_type.into(),
            ..Default::default()
        })
    }

    /// A link to a resource.
    pub fn resource_link(resource: Resource) -> Self {
        ContentBlock::ResourceLink(resource)
    }

    /// An embedded resource.
    pub fn resource(contents: ResourceContents) -> Self {
        ContentBlock::Resource(EmbeddedResource {
            resource: contents,
            annotations: None,
            meta: None,
            extra: Map::new(),
        })
    }

    /// The `type` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::Resource(_) => "resource",
        }
    }

    /// The text, for text blocks.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    fn extra_mut(&mut self) -> &mut Map<String, Value> {
        match self {
            ContentBlock::Text(c) => &mut c.extra,
            ContentBlock::Image(c) | ContentBlock::Audio(c) => &mut c.extra,
            ContentBlock::ResourceLink(c) => &mut c.extra,
            ContentBlock::Resource(c) => &mut c.extra,
        }
    }
}

/// A model's request to call a tool, inside sampling (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolUseContent {
    /// Id that the matching [`ToolResultContent`] refers to.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Tool arguments.
    pub input: Map<String, Value>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of a tool use, inside sampling (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The [`ToolUseContent::id`] this answers.
    pub tool_use_id: String,
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A content block of a sampling message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingMessageContentBlock {
    /// `type: "text"`.
    Text(TextContent),
    /// `type: "image"`.
    Image(ImageContent),
    /// `type: "audio"` (2025-03-26+).
    Audio(AudioContent),
    /// `type: "tool_use"` (2025-11-25+).
    ToolUse(ToolUseContent),
    /// `type: "tool_result"` (2025-11-25+).
    ToolResult(ToolResultContent),
}

impl SamplingMessageContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingMessageContentBlock::Text(TextContent {
            text: text.into(),
            ..Default::default()
        })
    }

    /// The `type` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            SamplingMessageContentBlock::Text(_) => "text",
            SamplingMessageContentBlock::Image(_) => "image",
            SamplingMessageContentBlock::Audio(_) => "audio",
            SamplingMessageContentBlock::ToolUse(_) => "tool_use",
            SamplingMessageContentBlock::ToolResult(_) => "tool_result",
        }
    }

    fn extra_mut(&mut self) -> &mut Map<String, Value> {
        match self {
            SamplingMessageContentBlock::Text(c) => &mut c.extra,
            SamplingMessageContentBlock::Image(c) | SamplingMessageContentBlock::Audio(c) => {
                &mut c.extra
            }
            SamplingMessageContentBlock::ToolUse(c) => &mut c.extra,
            SamplingMessageContentBlock::ToolResult(c) => &mut c.extra,
        }
    }
}

/// Every field any content variant may have, read in one pass.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawContent<'a> {
    /// Borrowed from the input when it can be: no allocation per block for the tag.
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    text: Option<String>,
    data: Option<String>,
    mime_type: Option<String>,
    annotations: Option<Annotations>,
    #[serde(rename = "_meta")]
    meta: Option<Meta>,
    uri: Option<String>,
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    size: Option<u64>,
    icons: Option<Vec<Icon>>,
    resource: Option<ResourceContents>,
    id: Option<String>,
    input: Option<Map<String, Value>>,
    tool_use_id: Option<String>,
    content: Option<Vec<ContentBlock>>,
    structured_content: Option<Value>,
    is_error: Option<bool>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

fn need<T>(v: Option<T>, kind: &str, field: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("`{kind}` content needs `{field}`"))
}

fn spill<T: Serialize>(extra: &mut Map<String, Value>, key: &str, v: Option<T>) {
    if let Some(v) = v {
        if let Ok(j) = serde_json::to_value(v) {
            extra.insert(key.to_owned(), j);
        }
    }
}

impl RawContent<'_> {
    fn media(&mut self) -> Result<MediaContent, String> {
        Ok(MediaContent {
            data: need(self.data.take(), &self.kind, "data")?,
            mime_type: need(self.mime_type.take(), &self.kind, "mimeType")?,
            annotations: self.annotations.take(),
            meta: self.meta.take(),
            extra: Map::new(),
        })
    }

    fn text_content(&mut self) -> Result<TextContent, String> {
        Ok(TextContent {
            text: need(self.text.take(), "text", "text")?,
            annotations: self.annotations.take(),
            meta: self.meta.take(),
            extra: Map::new(),
        })
    }

    /// Moves every field no variant consumed into `extra`.
    fn spill_rest(self, extra: &mut Map<String, Value>) {
        spill(extra, "text", self.text);
        spill(extra, "data", self.data);
        spill(extra, "mimeType", self.mime_type);
        spill(extra, "annotations", self.annotations);
        spill(extra, "_meta", self.meta);
        spill(extra, "uri", self.uri);
        spill(extra, "name", self.name);
        spill(extra, "title", self.title);
        spill(extra, "description", self.description);
        spill(extra, "size", self.size);
        spill(extra, "icons", self.icons);
        spill(extra, "resource", self.resource);
        spill(extra, "id", self.id);
        spill(extra, "input", self.input);
        spill(extra, "toolUseId", self.tool_use_id);
        spill(extra, "content", self.content);
        spill(extra, "structuredContent", self.structured_content);
        spill(extra, "isError", self.is_error);
    }

    fn into_block(mut self) -> Result<ContentBlock, String> {
        let mut extra = std::mem::take(&mut self.extra);
        let mut block = match self.kind.as_ref() {
            "text" => ContentBlock::Text(self.text_content()?),
            "image" => ContentBlock::Image(self.media()?),
            "audio" => ContentBlock::Audio(self.media()?),
            "resource_link" => ContentBlock::ResourceLink(Resource {
                uri: need(self.uri.take(), "resource_link", "uri")?,
                name: need(self.name.take(), "resource_link", "name")?,
                title: self.title.take(),
                description: self.description.take(),
                mime_type: self.mime_type.take(),
                annotations: self.annotations.take(),
                size: self.size.take(),
                icons: self.icons.take(),
                meta: self.meta.take(),
                extra: Map::new(),
            }),
            "resource" => ContentBlock::Resource(EmbeddedResource {
                resource: need(self.resource.take(), "resource", "resource")?,
                annotations: self.annotations.take(),
                meta: self.meta.take(),
                extra: Map::new(),
            }),
            other => return Err(format!("unknown content type `{other}`")),
        };
        self.spill_rest(&mut extra);
        *block.extra_mut() = extra;
        Ok(block)
    }

    fn into_sampling(mut self) -> Result<SamplingMessageContentBlock, String> {
        let mut extra = std::mem::take(&mut self.extra);
        let mut block = match self.kind.as_ref() {
            "text" => SamplingMessageContentBlock::Text(self.text_content()?),
            "image" => SamplingMessageContentBlock::Image(self.media()?),
            "audio" => SamplingMessageContentBlock::Audio(self.media()?),
            "tool_use" => SamplingMessageContentBlock::ToolUse(ToolUseContent {
                id: need(self.id.take(), "tool_use", "id")?,
                name: need(self.name.take(), "tool_use", "name")?,
                input: need(self.input.take(), "tool_use", "input")?,
                meta: self.meta.take(),
                extra: Map::new(),
            }),
            "tool_result" => SamplingMessageContentBlock::ToolResult(ToolResultContent {
                tool_use_id: need(self.tool_use_id.take(), "tool_result", "toolUseId")?,
                content: need(self.content.take(), "tool_result", "content")?,
                structured_content: self.structured_content.take(),
                is_error: self.is_error.take(),
                meta: self.meta.take(),
                extra: Map::new(),
            }),
            other => return Err(format!("unknown sampling content type `{other}`")),
        };
        self.spill_rest(&mut extra);
        *block.extra_mut() = extra;
        Ok(block)
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ContentBlockVisitor)
    }
}

/// Reads a content block. When `type` comes first, as every SDK writes it, the rest of the
/// object is read straight into the variant's struct; otherwise the block is gathered into a
/// map first and sorted out from there.
struct ContentBlockVisitor;

impl<'de> de::Visitor<'de> for ContentBlockVisitor {
    type Value = ContentBlock;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a content block object")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<ContentBlock, A::Error> {
        use serde::de::value::MapAccessDeserializer;
        let first: Option<std::borrow::Cow<'de, str>> = map.next_key()?;
        match first.as_deref() {
            Some("type") => {
                let kind: std::borrow::Cow<'de, str> = map.next_value()?;
                let rest = MapAccessDeserializer::new(map);
                match kind.as_ref() {
                    "text" => TextContent::deserialize(rest).map(ContentBlock::Text),
                    "image" => MediaContent::deserialize(rest).map(ContentBlock::Image),
                    "audio" => MediaContent::deserialize(rest).map(ContentBlock::Audio),
                    "resource_link" => Resource::deserialize(rest).map(ContentBlock::ResourceLink),
                    "resource" => EmbeddedResource::deserialize(rest).map(ContentBlock::Resource),
                    other => Err(de::Error::custom(format!("unknown content type `{other}`"))),
                }
            }
            None => Err(de::Error::custom("content block without `type`")),
            Some(key) => {
                let mut all = Map::new();
                let key = key.to_owned();
                all.insert(key, map.next_value::<Value>()?);
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    all.insert(k, v);
                }
                RawContent::deserialize(Value::Object(all))
                    .map_err(de::Error::custom)?
                    .into_block()
                    .map_err(de::Error::custom)
            }
        }
    }
}

impl<'de> Deserialize<'de> for SamplingMessageContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RawContent::deserialize(d)?
            .into_sampling()
            .map_err(de::Error::custom)
    }
}

/// The content of a sampling message: one block, or (2025-11-25+) several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// A single block (every revision).
    Single(SamplingMessageContentBlock),
    /// Several blocks (2025-11-25+).
    Multiple(Vec<SamplingMessageContentBlock>),
}

impl SamplingContent {
    /// The blocks, one or many.
    pub fn blocks(&self) -> &[SamplingMessageContentBlock] {
        match self {
            SamplingContent::Single(b) => std::slice::from_ref(b),
            SamplingContent::Multiple(v) => v,
        }
    }
}

impl From<SamplingMessageContentBlock> for SamplingContent {
    fn from(b: SamplingMessageContentBlock) -> Self {
        SamplingContent::Single(b)
    }
}
