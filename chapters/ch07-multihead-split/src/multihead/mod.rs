//! The blog post's `MultiHeadAttention`: causal multi-head attention with one
//! projection per role, split into heads.
//!
//! Chapter 6's wrapper runs `num_heads` causal heads one after another, each with its own
//! three small `Linear`s. Here there is one `Linear` each for queries, keys and values,
//! `num_heads` times as wide; [`split_heads`](crate::heads::split_heads) cuts its output
//! into heads, one batched product computes every head's scores, and
//! [`merge_heads`](crate::heads::merge_heads) puts the heads' context vectors side by side
//! again. A last `Linear`, `out_proj`, mixes the heads (the wrapper has none). The forward
//! pass is in `multihead_forward.rs`, one of the exercises.
//!
//! With `out_proj` the identity and the heads' weights stacked, this computes exactly
//! what the wrapper computes (the chapter checks it).

use ch05_causal::causal_mask;
use shared::Tensor;
use shared::nn::{Dropout, Linear};

#[cfg_attr(feature = "exercise", path = "../../exercises/multihead_forward.rs")]
mod forward;

/// Causal multi-head attention with weight splits.
///
/// The article's `forward` does not run as printed: it calls `values.tranpose(1,2)` (a
/// typo for `transpose`) and `self.mask_bool()` (there is no such method: the buffer is
/// `self.mask`, made boolean with `.bool()`). The forward pass here is the corrected one,
/// the version of Raschka's book.
// ANCHOR: multihead_struct
pub struct MultiHeadAttention {
    /// The output size, `num_heads · head_dim`.
    pub d_out: usize,
    /// How many heads share the projections.
    pub num_heads: usize,
    /// The features per head, `d_out / num_heads`.
    pub head_dim: usize,
    /// `[d_out, d_in]`: the queries of all heads at once.
    pub w_query: Linear,
    /// `[d_out, d_in]`: the keys of all heads at once.
    pub w_key: Linear,
    /// `[d_out, d_in]`: the values of all heads at once.
    pub w_value: Linear,
    /// `[d_out, d_out]` (a bias unless made without): mixes the concatenated heads.
    pub out_proj: Linear,
    /// Applied to the attention weights during training.
    pub dropout: Dropout,
    /// `[context_length, context_length]`, `true` above the diagonal: the future to
    /// hide.
    pub mask: Tensor<bool>,
}
// ANCHOR_END: multihead_struct

impl MultiHeadAttention {
    /// `MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias)`: draws
    /// the `Linear`s from the default generator in the article's order (`W_query`, `W_key`,
    /// `W_value`, then `out_proj` with a bias), so `manual_seed` gives PyTorch's weights.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens, d_in]` with `tokens <= context_length`.
    ///
    /// # Panics
    /// If `d_out` is not divisible by `num_heads` (the article's `assert`).
    pub fn new(
        d_in: usize,
        d_out: usize,
        context_length: usize,
        dropout: f64,
        num_heads: usize,
        qkv_bias: bool,
    ) -> MultiHeadAttention {
        MultiHeadAttention::with_biases(
            d_in,
            d_out,
            context_length,
            dropout,
            num_heads,
            qkv_bias,
            true,
        )
    }

    /// [`MultiHeadAttention::new`] with a switch for `out_proj`'s bias too: GPT-2 has
    /// biases everywhere, nanoGPT's small models and most models since have none.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens, d_in]` with `tokens <= context_length`.
    ///
    /// # Panics
    /// If `d_out` is not divisible by `num_heads`.
    pub fn with_biases(
        d_in: usize,
        d_out: usize,
        context_length: usize,
        dropout: f64,
        num_heads: usize,
        qkv_bias: bool,
        out_bias: bool,
    ) -> MultiHeadAttention {
        assert!(
            num_heads > 0 && d_out.is_multiple_of(num_heads),
            "d_out must be divisible by num_heads"
        );
        MultiHeadAttention {
            d_out,
            num_heads,
            head_dim: d_out / num_heads,
            w_query: Linear::new(d_in, d_out, qkv_bias),
            w_key: Linear::new(d_in, d_out, qkv_bias),
            w_value: Linear::new(d_in, d_out, qkv_bias),
            out_proj: Linear::new(d_out, d_out, out_bias),
            dropout: Dropout::new(dropout),
            mask: causal_mask(context_length),
        }
    }

    /// Every trained tensor, mutable, in `named_parameters()` order: `W_query`, `W_key`,
    /// `W_value`, `out_proj`, each weight before its bias (the mask is a buffer).
    pub fn parameters_mut(&mut self) -> Vec<&mut Tensor> {
        let MultiHeadAttention {
            w_query,
            w_key,
            w_value,
            out_proj,
            ..
        } = self;
        [w_query, w_key, w_value, out_proj]
            .into_iter()
            .flat_map(|layer| {
                let Linear { weight, bias } = layer;
                std::iter::once(weight).chain(bias.as_mut())
            })
            .collect()
    }
}
