//! Learned position embeddings, as GPT-2 (and Raschka's book) build the input of the first
//! layer: one trainable vector per token id, plus one trainable vector per position.
//!
//! The position table has `context_length` rows, so the model cannot read longer sequences
//! than it was trained on; the sinusoids and RoPE have no such table.

use shared::nn::Embedding;
use shared::{Tensor, arange};

/// Token embeddings plus position embeddings (`tok_emb(ids) + pos_emb(arange(n))`).
#[derive(Clone, Debug)]
// ANCHOR: token_and_position
pub struct TokenAndPositionEmbedding {
    /// `Embedding(vocab_size, d)`: one vector per token id.
    pub tok_emb: Embedding,
    /// `Embedding(context_length, d)`: one vector per position.
    pub pos_emb: Embedding,
}

impl TokenAndPositionEmbedding {
    /// Draws the token table, then the position table, from this thread's
    /// generator (the order decides which random numbers each gets), as
    /// `nn.Embedding` initialises them.
    ///
    /// # Shapes
    /// `tok_emb.weight`: `[vocab_size, d]`; `pos_emb.weight`: `[context_length, d]`.
    pub fn new(vocab_size: usize, context_length: usize, d: usize) -> Self {
        let tok_emb = Embedding::new(vocab_size, d);
        let pos_emb = Embedding::new(context_length, d);
        TokenAndPositionEmbedding { tok_emb, pos_emb }
    }

    /// The vector of every token: its token's embedding plus its position's.
    ///
    /// # Shapes
    /// `ids`: `[.., tokens]`, `tokens <= context_length`. Returns `[.., tokens, d]`.
    pub fn forward(&self, ids: &Tensor<i64>) -> Tensor {
        let positions = arange(0, ids.size(-1), 1); // 0, 1, .., tokens - 1
        &self.tok_emb.forward(ids) + &self.pos_emb.forward(&positions)
    }
}
// ANCHOR_END: token_and_position
