//! The kernel as a drop-in core of chapter 7's `MultiHeadAttention`.
//!
//! A multi-head attention module is projections around an attention core: project `x`
//! into queries, keys and values, split them into heads, run the core in every head,
//! merge the heads, project again. Only the core touches the `n × n` scores, so only the
//! core changes: [`forward_with_core`] is chapter 7's forward pass with the core as a
//! parameter, and [`Materialised`] and [`Flash`] are the two cores.

use ch07_multihead_split::heads::{merge_heads, split_heads};
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use shared::{Tensor, ones};

use crate::kernel::flash_attention;

/// The causal attention of every head: `softmax(q·kᵀ/√d, causal mask)·v`.
pub trait AttentionCore {
    /// # Shapes
    /// `q`, `k`: `[.., tokens, head_dim]`, `v`: `[.., tokens, d_v]`. Returns
    /// `[.., tokens, d_v]`.
    fn causal_attention(&self, q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor;
}

/// Chapter 7's core: the whole score matrix, masked, softmaxed, times the values.
#[derive(Clone, Copy, Debug, Default)]
pub struct Materialised;

/// This chapter's core: [`flash_attention`], in tiles, no score matrix.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flash;

// ANCHOR: cores
impl AttentionCore for Materialised {
    fn causal_attention(&self, q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor {
        let visible = ones(&[q.size(-2), k.size(-2)]).tril(0).bool();
        scaled_dot_product_attention(q, k, v, Some(&visible)).0
    }
}

impl AttentionCore for Flash {
    fn causal_attention(&self, q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor {
        flash_attention(q, k, v, true)
    }
}
// ANCHOR_END: cores

/// Chapter 7's `MultiHeadAttention::forward` with the attention core as a parameter:
/// project, split into heads, `core`, merge the heads, `out_proj`.
///
/// # Shapes
/// `x`: `[batch, tokens, d_in]` with `tokens <= context_length`. Returns
/// `[batch, tokens, d_out]`.
///
/// # Panics
/// If `mha`'s dropout is active (training mode with `p > 0`): the cores have no dropout.
// ANCHOR: forward_with_core
pub fn forward_with_core(
    mha: &MultiHeadAttention,
    x: &Tensor,
    core: &impl AttentionCore,
) -> Tensor {
    assert!(
        !mha.dropout.training || mha.dropout.p == 0.0,
        "forward_with_core: the attention cores have no dropout; use p = 0 or eval()"
    );
    let queries = split_heads(&mha.w_query.forward(x), mha.num_heads);
    let keys = split_heads(&mha.w_key.forward(x), mha.num_heads);
    let values = split_heads(&mha.w_value.forward(x), mha.num_heads);
    // [b, heads, tokens, head_dim]
    let context = core.causal_attention(&queries, &keys, &values);
    mha.out_proj.forward(&merge_heads(&context))
}
// ANCHOR_END: forward_with_core
