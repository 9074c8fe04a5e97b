//! Prompts: templates of messages with named string arguments, and their completers.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_core::types::{GetPromptResult, Icon, Prompt as PromptDef, PromptArgument, PromptMessage};

use crate::context::Context;
use crate::error::Error;

/// Completes one argument: given the partial value and the other arguments already filled in,
/// returns candidate values (the kit keeps the first 100 and reports the total).
pub type Completer = dyn Fn(&str, &BTreeMap<String, String>) -> Vec<String> + Send + Sync + 'static;

/// What a prompt handler may return.
pub trait IntoPromptResult {
    /// Converts into a result.
    fn into_prompt_result(self) -> GetPromptResult;
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
            get: Arc::new(move |args, ctx| {
                get(args, ctx).map(IntoPromptResult::into_prompt_result)
            }),
            completers: BTreeMap::new(),
        }
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
