//! How many held-out sums the model answers right, by greedy decoding with chapter 20's
//! cache, on the model with its adapters merged in.

use ch15_modern_layer::{Recipe, TinyModel};
use ch20_real_model::generate::{Choice, Limits, generate};
use ch20_real_model::model::pack_weights;
use ch20_real_model::tokenizer::decode;

use crate::error::LoraError;
use crate::examples::Encoder;
use crate::task::Sum;

/// The longest answer decoded: "99 + 99 = 198." and the end of the reply fit in it.
pub const ANSWER_TOKENS: usize = 16;

/// One held-out question and what the model answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answered {
    /// The question.
    pub sum: Sum,
    /// The reply's text, up to the end-of-reply token (not included).
    pub reply: String,
}

impl Answered {
    /// Whether the reply is the answer, in the one form taught.
    pub fn correct(&self) -> bool {
        self.reply.trim() == self.sum.answer()
    }
}

/// The model's greedy reply to `sum`: the new ids, up to [`ANSWER_TOKENS`] of them, the
/// end-of-reply token last when the model chose it.
///
/// # Shapes
/// Returns at most `ANSWER_TOKENS` ids.
pub fn reply_ids(
    model: &TinyModel,
    recipe: &Recipe,
    encoder: &Encoder,
    context_length: usize,
    sum: &Sum,
) -> Result<Vec<u32>, LoraError> {
    let limits = Limits {
        max_new_tokens: ANSWER_TOKENS,
        eos: Some(encoder.eos),
        context_length,
    };
    let prompt = encoder.prompt_ids(sum)?;
    Ok(generate(
        model,
        recipe,
        &prompt,
        Choice::Greedy,
        &limits,
        |_| {},
    )?)
}

/// The model's greedy reply to each sum.
///
/// # Shapes
/// `sums`: any number; returns one reply each.
pub fn answer_all(
    model: &TinyModel,
    recipe: &Recipe,
    encoder: &Encoder,
    context_length: usize,
    sums: &[Sum],
    mut progress: impl FnMut(usize),
) -> Result<Vec<Answered>, LoraError> {
    // Every prompt goes through the same weights: pack them once for the products of the
    // prompts (chapter 20's narrative does the same), not once per prompt. The packed copy
    // lives until the answers are in, while nothing writes the weights.
    let _packed = pack_weights(model);
    let mut all = Vec::with_capacity(sums.len());
    for (n, sum) in sums.iter().enumerate() {
        let mut ids = reply_ids(model, recipe, encoder, context_length, sum)?;
        if ids.last() == Some(&encoder.eos) {
            ids.pop();
        }
        all.push(Answered {
            sum: *sum,
            reply: decode(&encoder.tokenizer, &ids)?,
        });
        progress(n + 1);
    }
    Ok(all)
}

/// The fraction answered right.
pub fn accuracy(answered: &[Answered]) -> f64 {
    let right = answered.iter().filter(|a| a.correct()).count();
    right as f64 / answered.len().max(1) as f64
}
