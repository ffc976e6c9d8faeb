//! The model: token and position embeddings, chapter 7's causal multi-head attention, and a
//! linear head that turns each position's vector into one score (logit) per token id.
//!
//! Attention is the model's only way to move information between positions: the
//! embeddings and the head work on each position alone. So whatever the trained model
//! knows about the token two places back, its attention weights must have fetched.

use ch07_multihead_split::multihead::MultiHeadAttention;
use shared::nn::{Embedding, Linear};
use shared::{Tensor, arange};

use crate::task::{TOKENS, VOCAB};

/// The size of every position's vector (embeddings and attention).
pub const D_MODEL: usize = 16;
/// Attention heads; each sees `D_MODEL / HEADS` features.
pub const HEADS: usize = 2;

/// Embeddings, one causal multi-head attention layer, a linear head.
// ANCHOR: model_struct
pub struct AttentionModel {
    /// `[VOCAB, D_MODEL]`: what each token id is.
    pub tok_emb: Embedding,
    /// `[TOKENS, D_MODEL]`: where each position is; without it, attention
    /// could not tell "two back" from any other earlier position.
    pub pos_emb: Embedding,
    /// Chapter 7's causal multi-head attention, `D_MODEL → D_MODEL`, no dropout.
    pub attn: MultiHeadAttention,
    /// `[VOCAB, D_MODEL]` with bias: one logit per token id.
    pub head: Linear,
}
// ANCHOR_END: model_struct

impl AttentionModel {
    /// Draws the parameters from the default generator in PyTorch's order: token table,
    /// position table, `W_query`, `W_key`, `W_value`, `out_proj`, head.
    pub fn new() -> AttentionModel {
        AttentionModel {
            tok_emb: Embedding::new(VOCAB, D_MODEL),
            pos_emb: Embedding::new(TOKENS, D_MODEL),
            attn: MultiHeadAttention::new(
                D_MODEL, D_MODEL, TOKENS, 0.0, HEADS, false,
            ),
            head: Linear::new(D_MODEL, VOCAB, true),
        }
    }

    /// Every parameter with PyTorch's name, in `model.named_parameters()` order.
    pub fn named_parameters(&self) -> Vec<(&'static str, &Tensor)> {
        vec![
            ("tok_emb.weight", &self.tok_emb.weight),
            ("pos_emb.weight", &self.pos_emb.weight),
            ("attn.W_query.weight", &self.attn.w_query.weight),
            ("attn.W_key.weight", &self.attn.w_key.weight),
            ("attn.W_value.weight", &self.attn.w_value.weight),
            ("attn.out_proj.weight", &self.attn.out_proj.weight),
            ("attn.out_proj.bias", bias_of(&self.attn.out_proj)),
            ("head.weight", &self.head.weight),
            ("head.bias", bias_of(&self.head)),
        ]
    }

    /// The input of the attention: each token's vector plus its position's vector.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]` with `tokens <= TOKENS`. Returns `[batch, tokens, D_MODEL]`.
    // ANCHOR: embed
    pub fn embed(&self, ids: &Tensor<i64>) -> Tensor {
        let positions = arange(0, ids.size(1), 1);
        &self.tok_emb.forward(ids) + &self.pos_emb.forward(&positions)
    }
    // ANCHOR_END: embed
}

/// The bias of a layer made with one (`out_proj` and the head).
fn bias_of(layer: &Linear) -> &Tensor {
    layer.bias.as_ref().expect("made with a bias")
}

impl Default for AttentionModel {
    fn default() -> AttentionModel {
        AttentionModel::new()
    }
}
