//! Tools: listing and calling (the [`Tool`] definition is in `definitions`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{CacheScope, Cursor, Meta, ResultType};
use super::content::ContentBlock;
use super::definitions::Tool;
use super::input_required::InputResponses;
use super::tasks::TaskMetadata;

/// Result of `tools/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// The tools of this page.
    pub tools: Vec<Tool>,
    /// Where the next page starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// 2026-07-28 cache lifetime hint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// 2026-07-28 cache scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// 2026-07-28 discriminator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ListToolsResult {
    /// A single page with these tools.
    pub fn new(tools: Vec<Tool>) -> Self {
        ListToolsResult {
            tools,
            ..Default::default()
        }
    }
}

/// Params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// The tool.
    pub name: String,
    /// The arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// 2025-11-25: run as a task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// 2026-07-28 input-required retry: answers to the server's input requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// 2026-07-28 input-required retry: the opaque state echoed back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata (required in 2026-07-28).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolRequestParams {
    /// Calls `name` without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        CallToolRequestParams {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Sets the arguments.
    pub fn with_arguments(mut self, args: Map<String, Value>) -> Self {
        self.arguments = Some(args);
        self
    }
}

/// Result of `tools/call`. A tool's own failure is a result with `isError: true`, not a
/// protocol error, so the model can see it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured output.
    pub content: Vec<ContentBlock>,
    /// Structured output (2025-06-18+), matching the tool's `outputSchema`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// True when the tool failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// 2026-07-28 discriminator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl crate::jsonrpc::sealed::Sealed for CallToolResult {}

/// The usual result (text blocks and nothing else) is written member by member; any other goes
/// through the derived `Serialize`, which writes the same bytes more slowly (its `flatten`
/// makes every member name go through the string escaper).
impl crate::jsonrpc::ResultValue for CallToolResult {
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        if self.is_plain_text() {
            self.write_plain_text(out)
        } else {
            serde_json::to_writer(out, self)
        }
    }

    fn to_raw(&self) -> Result<Box<serde_json::value::RawValue>, serde_json::Error> {
        crate::jsonrpc::to_raw(self)
    }
}

/// A `tools/call` result that is one text block and nothing else, the most common answer of a
/// tool, borrowed: written as the same bytes as [`CallToolResult::text`] with the same
/// `result_type`, without building that result (its content list, its block, their maps) only
/// to drop it once written.
#[derive(Debug, Clone, PartialEq)]
pub struct TextToolResult<'a> {
    /// The text.
    pub text: &'a str,
    /// 2026-07-28 discriminator, as [`CallToolResult::result_type`].
    pub result_type: Option<ResultType>,
}

impl TextToolResult<'_> {
    /// The same result as an owned [`CallToolResult`].
    pub fn to_result(&self) -> CallToolResult {
        CallToolResult {
            result_type: self.result_type.clone(),
            ..CallToolResult::text(self.text)
        }
    }
}

impl crate::jsonrpc::sealed::Sealed for TextToolResult<'_> {}

impl crate::jsonrpc::ResultValue for TextToolResult<'_> {
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        out.extend_from_slice(br#"{"content":["#);
        write_text_block(out, self.text)?;
        out.push(b']');
        write_result_type_and_end(out, self.result_type.as_ref())
    }

    fn to_raw(&self) -> Result<Box<serde_json::value::RawValue>, serde_json::Error> {
        crate::jsonrpc::to_raw(&self.to_result())
    }
}

/// `{"type":"text","text":...}`, as the derived `Serialize` of a plain text block writes it.
fn write_text_block(out: &mut Vec<u8>, text: &str) -> Result<(), serde_json::Error> {
    out.extend_from_slice(br#"{"type":"text","text":"#);
    serde_json::to_writer(&mut *out, text)?;
    out.push(b'}');
    Ok(())
}

/// A plain text result's last member, if any, and its closing brace.
fn write_result_type_and_end(
    out: &mut Vec<u8>,
    kind: Option<&ResultType>,
) -> Result<(), serde_json::Error> {
    if let Some(kind) = kind {
        out.extend_from_slice(br#","resultType":"#);
        serde_json::to_writer(&mut *out, kind.as_str())?;
    }
    out.push(b'}');
    Ok(())
}

impl CallToolResult {
    /// Whether the result holds only what [`write_plain_text`](Self::write_plain_text) writes:
    /// text blocks without annotations, `_meta` or unknown members, and no structured content,
    /// `_meta` or unknown members of its own.
    fn is_plain_text(&self) -> bool {
        self.structured_content.is_none()
            && self.meta.is_none()
            && self.extra.is_empty()
            && self.content.iter().all(|block| {
                matches!(block, ContentBlock::Text(t)
                    if t.annotations.is_none() && t.meta.is_none() && t.extra.is_empty())
            })
    }

    /// The bytes the derived `Serialize` writes for a plain text result, in its member order.
    fn write_plain_text(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        out.extend_from_slice(br#"{"content":["#);
        for (i, block) in self.content.iter().enumerate() {
            if let ContentBlock::Text(t) = block {
                if i > 0 {
                    out.push(b',');
                }
                write_text_block(out, &t.text)?;
            }
        }
        out.push(b']');
        match self.is_error {
            Some(true) => out.extend_from_slice(br#","isError":true"#),
            Some(false) => out.extend_from_slice(br#","isError":false"#),
            None => {}
        }
        write_result_type_and_end(out, self.result_type.as_ref())
    }

    /// A result with these blocks.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            content,
            ..Default::default()
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult::new(vec![ContentBlock::text(text)])
    }

    /// A failed result (`isError: true`) with one text block.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            is_error: Some(true),
            ..CallToolResult::text(text)
        }
    }

    /// A structured result; the JSON text is also put in a text block, as the spec asks,
    /// for clients that do not read `structuredContent`.
    pub fn structured(value: Value) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(value.to_string())],
            structured_content: Some(value),
            ..Default::default()
        }
    }

    /// Whether `isError` is set.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    /// The text of the result's text blocks, joined by newlines (other blocks skipped): what a
    /// caller that wants the words of a result reads.
    pub fn text_content(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }

    /// `structuredContent` read as `T`; `None` when the result has none.
    pub fn structured_as<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Option<Result<T, serde_json::Error>> {
        self.structured_content.as_ref().map(T::deserialize)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{CallToolResult, ResultType, TextToolResult};
    use crate::jsonrpc::ResultValue;
    use crate::types::common::Annotations;
    use crate::types::content::ContentBlock;

    #[test]
    fn a_caller_reads_the_text_and_the_structured_value() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Sum {
            total: i64,
        }
        let r = CallToolResult::new(vec![
            ContentBlock::text("a"),
            ContentBlock::image("AAAA", "image/png"),
            ContentBlock::text("b"),
        ]);
        assert_eq!(r.text_content(), "a\nb");
        assert!(r.structured_as::<Sum>().is_none());
        let r = CallToolResult::structured(json!({"total": 3}));
        assert_eq!(r.structured_as::<Sum>().unwrap().unwrap(), Sum { total: 3 });
        assert!(r.structured_as::<Vec<i64>>().unwrap().is_err());
    }

    /// The hand-written path writes exactly the derived serializer's bytes, and stands aside for
    /// whatever it does not write.
    #[test]
    fn a_written_result_has_the_derived_bytes() {
        let mut annotated = ContentBlock::text("a");
        if let ContentBlock::Text(t) = &mut annotated {
            t.annotations = Some(Annotations::default());
        }
        let mut with_extra = CallToolResult::text("x");
        with_extra.extra.insert("later".into(), json!(1));
        let mut cases = vec![
            CallToolResult::text("hello"),
            CallToolResult::text("quote \" backslash \\ newline \n tab \t nul \u{0} é ✓ 😀"),
            CallToolResult::text(""),
            CallToolResult::new(vec![]),
            CallToolResult::error("it failed"),
            CallToolResult::new(vec![ContentBlock::text("one"), ContentBlock::text("two")]),
            CallToolResult::new(vec![
                ContentBlock::text("t"),
                ContentBlock::image("AA==", "image/png"),
            ]),
            CallToolResult::new(vec![annotated]),
            with_extra,
            CallToolResult {
                structured_content: Some(json!({"n": 1})),
                ..CallToolResult::text("s")
            },
        ];
        for kind in [
            ResultType::Complete,
            ResultType::Task,
            ResultType::Other("x\"y".into()),
        ] {
            cases.push(CallToolResult {
                result_type: Some(kind),
                is_error: Some(false),
                ..CallToolResult::text("r")
            });
        }
        for result in &cases {
            let mut written = Vec::new();
            result.write_json(&mut written).unwrap();
            let derived = serde_json::to_vec(result).unwrap();
            assert_eq!(
                String::from_utf8(written).unwrap(),
                String::from_utf8(derived).unwrap()
            );
        }
        assert!(CallToolResult::text("hello").is_plain_text());
        assert!(!cases[6].is_plain_text() && !cases[7].is_plain_text());
        assert!(!cases[8].is_plain_text() && !cases[9].is_plain_text());
    }

    /// The borrowed text result writes what the owned one writes, member for member, in every
    /// form it can take.
    #[test]
    fn a_text_result_writes_what_the_owned_one_writes() {
        let kinds = [
            None,
            Some(ResultType::Complete),
            Some(ResultType::Other("x\"y".into())),
        ];
        for text in [
            "",
            "hello",
            "a \"quoted\" \\ line\nwith\tcontrol \u{1}",
            "é ✓ 😀",
        ] {
            for kind in &kinds {
                let borrowed = TextToolResult {
                    text,
                    result_type: kind.clone(),
                };
                let owned = CallToolResult {
                    result_type: kind.clone(),
                    ..CallToolResult::text(text)
                };
                let (mut a, mut b) = (Vec::new(), Vec::new());
                borrowed.write_json(&mut a).unwrap();
                owned.write_json(&mut b).unwrap();
                assert_eq!(a, b);
                assert_eq!(a, serde_json::to_vec(&owned).unwrap());
                assert_eq!(
                    borrowed.to_raw().unwrap().get(),
                    owned.to_raw().unwrap().get()
                );
                assert_eq!(borrowed.to_result(), owned);
            }
        }
    }
}
