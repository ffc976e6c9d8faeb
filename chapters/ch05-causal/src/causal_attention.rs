//! Causal self-attention as a module: chapter 4's `SelfAttentionV2` plus the causal mask and
//! dropout on the attention weights, for a batch of sequences.
//!
//! The module keeps a mask for the longest sequence it accepts (`context_length`) and uses
//! its top-left `n × n` corner for a sequence of `n` tokens. The forward pass is in
//! [`crate::forward`].
//!
//! Two notes on the blog post's code (for the book):
//! - It creates the layers in the order `W_query`, `W_value`, `W_key` (Raschka's book uses
//!   query, key, value). The order decides which random numbers each layer draws, and the
//!   article's printed outputs (here and in chapter 6) need this order, so it is kept.
//! - The article's listing carries stray call-out markers (a `1` before a closing
//!   parenthesis and after `return`); they are not code and are dropped.
//!
//! The article stores the mask as a 0/1 float buffer and calls `.bool()` on every forward
//! pass; here it is stored as the boolean mask directly.

use shared::Tensor;
use shared::nn::{Dropout, Linear};

use crate::mask::causal_mask;

/// Causal self-attention (the blog post's `CausalAttention`).
#[derive(Clone, Debug)]
// ANCHOR: causal_attention
pub struct CausalAttention {
    /// The size of each output vector.
    pub d_out: usize,
    /// `Linear(d_in, d_out)`: the queries.
    pub w_query: Linear,
    /// `Linear(d_in, d_out)`: the keys.
    pub w_key: Linear,
    /// `Linear(d_in, d_out)`: the values.
    pub w_value: Linear,
    /// Drops attention weights while training (a fresh module is in training mode).
    pub dropout: Dropout,
    /// `[context_length, context_length]`, `true` above the diagonal: the future.
    pub mask: Tensor<bool>,
}

impl CausalAttention {
    /// Creates the layers in the article's order (query, *value*, key), each
    /// initialised as `nn.Linear(d_in, d_out, bias=qkv_bias)`, a dropout of
    /// probability `dropout`, and the causal mask for up to `context_length` tokens.
    ///
    /// # Shapes
    /// Layer weights `[d_out, d_in]`; `mask`: `[context_length, context_length]`.
    pub fn new(
        d_in: usize,
        d_out: usize,
        context_length: usize,
        dropout: f64,
        qkv_bias: bool,
    ) -> CausalAttention {
        let w_query = Linear::new(d_in, d_out, qkv_bias);
        let w_value = Linear::new(d_in, d_out, qkv_bias);
        let w_key = Linear::new(d_in, d_out, qkv_bias);
        CausalAttention {
            d_out,
            w_query,
            w_key,
            w_value,
            dropout: Dropout::new(dropout),
            mask: causal_mask(context_length),
        }
    }
}
// ANCHOR_END: causal_attention
