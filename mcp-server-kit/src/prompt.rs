//! Prompts: templates of messages with named string arguments, and their completers.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_core::types::{
    ContentBlock, GetPromptResult, Icon, Prompt as PromptDef, PromptArgument, PromptMessage, Role,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::Context;
use crate::error::Error;
use crate::results::{Blob, Structured};
use crate::schema::JsonSchema;

/// Completes one argument: given the partial value and the other arguments already filled in,
/// returns candidate values (the kit keeps the first 100 and reports the total).
pub type Completer = dyn Fn(&str, &BTreeMap<String, String>) -> Vec<String> + Send + Sync + 'static;

/// What a prompt handler may return: the same short forms as a tool or a resource, each
/// becoming one user message (`String`/`&str` as text, a [`Blob`] as image or audio content,
/// `serde_json::Value` or [`Structured`] as JSON text, a [`ContentBlock`] as it is), or the
/// messages in full (`PromptMessage`, `Vec<PromptMessage>`, [`GetPromptResult`]).
pub trait IntoPromptResult {
    /// Converts into a result.
    fn into_prompt_result(self) -> GetPromptResult;

    /// Converts into a result, or says why it cannot be one; the kit calls this. Only a
    /// conversion that can fail ([`Structured`], whose `Serialize` may refuse) overrides it,
    /// so that the failure reaches the client as an error rather than as a message to the
    /// model.
    ///
    /// # Errors
    /// When the value cannot be turned into messages.
    fn try_into_prompt_result(self) -> Result<GetPromptResult, Error>
    where
        Self: Sized,
    {
        Ok(self.into_prompt_result())
    }
}

/// One user message holding `content`.
fn user_message(content: ContentBlock) -> GetPromptResult {
    vec![PromptMessage {
        role: Role::User,
        content,
        extra: serde_json::Map::new(),
    }]
    .into_prompt_result()
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> GetPromptResult {
        user_message(ContentBlock::text(self))
    }
}

impl IntoPromptResult for &str {
    fn into_prompt_result(self) -> GetPromptResult {
        user_message(ContentBlock::text(self))
    }
}

impl IntoPromptResult for ContentBlock {
    fn into_prompt_result(self) -> GetPromptResult {
        user_message(self)
    }
}

impl IntoPromptResult for Blob {
    fn into_prompt_result(self) -> GetPromptResult {
        user_message(self.into_content())
    }
}

impl IntoPromptResult for Value {
    fn into_prompt_result(self) -> GetPromptResult {
        user_message(ContentBlock::text(self.to_string()))
    }
}

impl<T: Serialize + JsonSchema> IntoPromptResult for Structured<T> {
    fn into_prompt_result(self) -> GetPromptResult {
        match serde_json::to_value(&self.0) {
            Ok(v) => v.into_prompt_result(),
            Err(e) => user_message(ContentBlock::text(format!(
                "prompt could not be serialized: {e}"
            ))),
        }
    }

    fn try_into_prompt_result(self) -> Result<GetPromptResult, Error> {
        serde_json::to_value(&self.0)
            .map(IntoPromptResult::into_prompt_result)
            .map_err(|e| Error::Message(format!("prompt could not be serialized: {e}")))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> GetPromptResult {
        vec![self].into_prompt_result()
    }
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> GetPromptResult {
        self
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult {
            messages: self,
            ..Default::default()
        }
    }
}

pub(crate) type PromptFn = dyn Fn(&BTreeMap<String, String>, &Context) -> Result<GetPromptResult, Error>
    + Send
    + Sync
    + 'static;

/// A prompt with its handler.
///
/// ```
/// use mcp_server_kit::{Context, Error, Prompt};
/// use mcp_core::types::{PromptMessage, Role};
///
/// let p = Prompt::new("greet", |args, _ctx: &Context| {
///     Ok::<_, Error>(vec![PromptMessage::text(Role::User, format!("Hello, {}", args["name"]))])
/// })
/// .argument("name", "Who to greet", true);
/// assert_eq!(p.name(), "greet");
/// ```
#[derive(Clone)]
pub struct Prompt {
    pub(crate) def: PromptDef,
    pub(crate) get: Arc<PromptFn>,
    pub(crate) completers: BTreeMap<String, Arc<Completer>>,
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt").field("def", &self.def).finish()
    }
}

impl Prompt {
    /// A prompt; the handler gets the arguments (required ones are checked before it runs).
    pub fn new<R, F>(name: impl Into<String>, get: F) -> Prompt
    where
        R: IntoPromptResult,
        F: Fn(&BTreeMap<String, String>, &Context) -> Result<R, Error> + Send + Sync + 'static,
    {
        Prompt {
            def: PromptDef::new(name),
            get: Arc::new(move |args, ctx| get(args, ctx)?.try_into_prompt_result()),
            completers: BTreeMap::new(),
        }
    }

    /// A prompt whose arguments are a type of its own (`A: Deserialize + JsonSchema`, usually
    /// `#[derive(serde::Deserialize, JsonSchema)]`): the `arguments` declared in `prompts/list`
    /// are `A`'s top-level fields, with their doc comments as descriptions and `required`
    /// unless the field is an `Option` or has a serde default. A call that leaves out a
    /// required one gets -32602 naming it, before the handler runs.
    ///
    /// Prompt arguments are strings on the wire, so `A`'s fields should read from a string
    /// (`String`, `Option<String>`, a unit-variant enum); a value that does not fit is refused
    /// with -32602 too.
    ///
    /// ```
    /// # #[cfg(feature = "derive")] {
    /// use mcp_server_kit::{Context, Error, Prompt, schema::JsonSchema};
    ///
    /// #[derive(serde::Deserialize, JsonSchema)]
    /// struct Summarize {
    ///     /// The topic to summarize notes about.
    ///     topic: String,
    ///     /// How long the summary may be.
    ///     length: Option<String>,
    /// }
    ///
    /// let p = Prompt::typed("summarize", |a: Summarize, _ctx: &Context| {
    ///     Ok::<_, Error>(format!("Summarize my notes about {}", a.topic))
    /// });
    /// let args = p.definition().arguments.as_ref().unwrap();
    /// let topic = args.iter().find(|a| a.name == "topic").unwrap();
    /// assert_eq!(topic.required, Some(true));
    /// assert_eq!(topic.description.as_deref(), Some("The topic to summarize notes about."));
    /// let length = args.iter().find(|a| a.name == "length").unwrap();
    /// assert_eq!(length.required, Some(false));
    /// # }
    /// ```
    pub fn typed<A, R, F>(name: impl Into<String>, get: F) -> Prompt
    where
        A: DeserializeOwned + JsonSchema,
        R: IntoPromptResult,
        F: Fn(A, &Context) -> Result<R, Error> + Send + Sync + 'static,
    {
        let declared = declared_arguments(&A::schema());
        let mut prompt = Prompt::new(name, move |args: &BTreeMap<String, String>, ctx| {
            let object: serde_json::Map<String, Value> = args
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            let a: A = serde_json::from_value(Value::Object(object))
                .map_err(|e| Error::InvalidParams(format!("Invalid arguments: {e}")))?;
            get(a, ctx)
        });
        if !declared.is_empty() {
            prompt.def.arguments = Some(declared);
        }
        prompt
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The definition clients see in `prompts/list`.
    pub fn definition(&self) -> &PromptDef {
        &self.def
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Prompt {
        self.def.description = Some(text.into());
        self
    }

    /// Sets the display title.
    pub fn title(mut self, text: impl Into<String>) -> Prompt {
        self.def.title = Some(text.into());
        self
    }

    /// Declares an argument.
    pub fn argument(mut self, name: &str, description: &str, required: bool) -> Prompt {
        let arg = PromptArgument {
            name: name.to_owned(),
            description: Some(description.to_owned()),
            required: Some(required),
            ..Default::default()
        };
        self.def.arguments.get_or_insert_with(Vec::new).push(arg);
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Prompt {
        self.def.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Completes values of argument `arg` for `completion/complete`.
    pub fn complete<F>(mut self, arg: &str, f: F) -> Prompt
    where
        F: Fn(&str, &BTreeMap<String, String>) -> Vec<String> + Send + Sync + 'static,
    {
        self.completers.insert(arg.to_owned(), Arc::new(f));
        self
    }

    pub(crate) fn missing_required(&self, args: &BTreeMap<String, String>) -> Option<String> {
        self.def
            .arguments
            .iter()
            .flatten()
            .find(|a| a.required == Some(true) && !args.contains_key(&a.name))
            .map(|a| a.name.clone())
    }
}

/// The prompt arguments an object schema declares: its top-level properties, in the schema's
/// order (serde_json's map: by name), each
/// with its description and whether `required` lists it.
fn declared_arguments(schema: &Value) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| PromptArgument {
            name: name.clone(),
            description: prop["description"].as_str().map(str::to_owned),
            required: Some(required.contains(&name.as_str())),
            ..Default::default()
        })
        .collect()
}
