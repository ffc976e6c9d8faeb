//! The chat template: how a conversation becomes one string of text with special tokens.
//!
//! An instruction-tuned model was trained on conversations written in one fixed layout;
//! SmolLM2's is ChatML, every message `<|im_start|>role\ncontent<|im_end|>\n`, and the
//! prompt ends with `<|im_start|>assistant\n` for the model to continue. The layout ships
//! inside the model file as a Jinja template (`tokenizer.chat_template`), rendered here with
//! `minijinja` and the options transformers renders it with (blocks trimmed). SmolLM2's
//! template adds a system message of its own when the conversation has none.

use minijinja::{Environment, context};
use serde::Serialize;

use crate::error::LoadError;

/// One message of a conversation.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// What it says.
    pub content: String,
}

impl Message {
    /// A message from `role`.
    pub fn new(role: &str, content: &str) -> Message {
        Message {
            role: role.into(),
            content: content.into(),
        }
    }
}

/// The conversation `messages` as the model reads it, ending with the assistant's turn.
// ANCHOR: render
pub fn render(
    template: &str,
    messages: &[Message],
    bos: &str,
    eos: &str,
) -> Result<String, LoadError> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    let failed =
        |e: minijinja::Error| LoadError::Tokenizer(format!("chat template: {e}"));
    env.add_template("chat", template).map_err(failed)?;
    let ctx = context! {
        messages,
        add_generation_prompt => true,
        bos_token => bos,
        eos_token => eos,
    };
    env.get_template("chat")
        .and_then(|t| t.render(ctx))
        .map_err(failed)
}
// ANCHOR_END: render

/// The messages of `--chat TEXT`, with `--system TEXT` first if given.
pub fn conversation(user: &str, system: Option<&str>) -> Vec<Message> {
    let mut messages: Vec<Message> = system
        .map(|s| Message::new("system", s))
        .into_iter()
        .collect();
    messages.push(Message::new("user", user));
    messages
}
