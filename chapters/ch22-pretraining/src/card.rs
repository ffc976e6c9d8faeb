//! The model card: how many parameters each part of a model holds. At this size the
//! embeddings are small (84 characters) and the layers hold nearly everything, a third in
//! the attention and two thirds in the feed-forward networks.

use std::fmt;

use crate::model::Model;

/// The parts of a model, as the card counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The token table (and GPT-2's position table).
    Embedding,
    /// The attention's four projections.
    Attention,
    /// The feed-forward networks: GPT-2's MLP, Llama's SwiGLU.
    Mlp,
    /// The norms' weights.
    Norms,
}

impl Part {
    /// Every part, in the card's order.
    pub const ALL: [Part; 4] =
        [Part::Embedding, Part::Attention, Part::Mlp, Part::Norms];

    /// The part a parameter belongs to, by its name in `named_parameters()`.
    pub fn of(name: &str) -> Part {
        if name.starts_with("wte.") || name.starts_with("wpe.") {
            Part::Embedding
        } else if name.contains(".attn.") {
            Part::Attention
        } else if name.contains(".mlp.") || name.contains(".ffn.") {
            Part::Mlp
        } else {
            Part::Norms
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Part::Embedding => "embedding",
            Part::Attention => "attention",
            Part::Mlp => "MLP",
            Part::Norms => "norms",
        })
    }
}

/// The number of parameters in each part, in [`Part::ALL`]'s order.
// ANCHOR: parameters_by_part
pub fn parameters_by_part(model: &Model) -> [usize; 4] {
    let mut counts = [0; 4];
    for (name, p) in model.named_parameters() {
        counts[Part::of(&name) as usize] += p.numel();
    }
    counts
}
// ANCHOR_END: parameters_by_part
