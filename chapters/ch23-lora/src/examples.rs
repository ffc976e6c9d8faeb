//! A sum as the model reads it: the prompt (the question, in the chat template when the model
//! has one), then the answer and the end-of-reply token. Only the answer's tokens are
//! learned: their labels are the token ids, every other label is [`IGNORE`].

use ch20_real_model::chat::{conversation, render};
use ch20_real_model::loader::Loaded;
use ch20_real_model::tokenizer::encode;
use shared::Tensor;
use tokenizers::Tokenizer;

use crate::error::LoraError;
use crate::masked_loss::IGNORE;
use crate::task::Sum;

/// Turns sums into token ids, as the model was trained to read a question.
pub struct Encoder {
    /// The model's tokenizer.
    pub tokenizer: Tokenizer,
    /// The chat template with the start and end tokens' text; `None` for a model without
    /// one (chapter 20's tiny checkpoints), which reads the question as plain text.
    pub chat: Option<(String, String, String)>,
    /// The token that ends a reply, learned after the answer.
    pub eos: u32,
}

/// One sum's tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    /// The prompt's ids, then the answer's, then the end of the reply.
    pub ids: Vec<u32>,
    /// How many of them are the prompt.
    pub prompt_len: usize,
}

impl Encoder {
    /// The encoder of a loaded model.
    pub fn new(loaded: &Loaded) -> Result<Encoder, LoraError> {
        let eos = loaded.eos.ok_or_else(|| {
            LoraError::Model(format!(
                "{} names no end-of-sequence token: the answers need one to end",
                loaded.path.display()
            ))
        })?;
        let text = |id: Option<u32>| {
            id.and_then(|i| loaded.tokenizer.id_to_token(i))
                .unwrap_or_default()
        };
        let chat = loaded
            .chat_template
            .clone()
            .map(|t| (t, text(loaded.bos), text(loaded.eos)));
        Ok(Encoder {
            tokenizer: loaded.tokenizer.clone(),
            chat,
            eos,
        })
    }

    /// The text the model continues: the question in the chat template, ending where the
    /// assistant's turn begins, or the question and a new line.
    pub fn prompt(&self, sum: &Sum) -> Result<String, LoraError> {
        Ok(match &self.chat {
            Some((template, bos, eos)) => {
                render(template, &conversation(&sum.question(), None), bos, eos)?
            }
            None => format!("{}\n", sum.question()),
        })
    }

    /// The prompt's ids.
    pub fn prompt_ids(&self, sum: &Sum) -> Result<Vec<u32>, LoraError> {
        Ok(encode(&self.tokenizer, &self.prompt(sum)?)?)
    }

    /// The prompt's ids, the answer's and the end of the reply.
    // ANCHOR: example
    pub fn example(&self, sum: &Sum) -> Result<Example, LoraError> {
        let mut ids = self.prompt_ids(sum)?;
        let prompt_len = ids.len();
        ids.extend(encode(&self.tokenizer, &sum.answer())?);
        ids.push(self.eos);
        Ok(Example { ids, prompt_len })
    }
    // ANCHOR_END: example
}

/// A batch of examples, padded on the right to the longest.
#[derive(Clone, Debug)]
pub struct Batch {
    /// `[batch, tokens]`: the ids, padded with the end-of-reply token.
    pub ids: Tensor<i64>,
    /// `[batch, tokens]`: the answer's ids where they are, [`IGNORE`] on the prompt and the
    /// padding.
    pub labels: Tensor<i64>,
}

/// The examples side by side, padded on the right with `pad`. With the causal mask a
/// position never sees the padding after it, so the padding changes no logit that counts.
///
/// # Shapes
/// Returns `[examples, longest]` ids and labels.
// ANCHOR: batch
pub fn batch(examples: &[Example], pad: u32) -> Batch {
    let longest = examples.iter().map(|e| e.ids.len()).max().unwrap_or(0);
    let mut ids = Vec::with_capacity(examples.len() * longest);
    let mut labels = Vec::with_capacity(examples.len() * longest);
    for e in examples {
        for t in 0..longest {
            let id = e.ids.get(t).copied();
            ids.push(i64::from(id.unwrap_or(pad)));
            labels.push(match id {
                Some(id) if t >= e.prompt_len => i64::from(id),
                _ => IGNORE,
            });
        }
    }
    let shape = [examples.len(), longest];
    Batch {
        ids: Tensor::from_vec(ids, &shape),
        labels: Tensor::from_vec(labels, &shape),
    }
}
// ANCHOR_END: batch
