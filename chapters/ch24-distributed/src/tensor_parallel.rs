//! Tensor-parallel heads (Shoeybi et al., "Megatron-LM: Training Multi-Billion Parameter
//! Language Models Using Model Parallelism"): each rank owns the projections of some
//! heads, computes their attention over the whole sequence, and multiplies by its rows of
//! the output projection. The layer's output is the sum of the ranks' partial outputs: an
//! all-reduce. Float additions do not associate, so the bits of that sum depend on the
//! order in which the library adds them; gathering the partial sums and adding them in
//! rank order gives the same bits on every rank and in every run.

use shared::{Result, Tensor, randn};

use crate::ulysses::{causal_attention, check_heads};

/// One attention layer's projections, `x @ w` for each.
#[derive(Clone, Debug)]
pub struct Projections {
    /// `[d_model, heads · head_dim]`.
    pub w_query: Tensor,
    /// `[d_model, heads · head_dim]`.
    pub w_key: Tensor,
    /// `[d_model, heads · head_dim]`.
    pub w_value: Tensor,
    /// `[heads · head_dim, d_model]`.
    pub w_out: Tensor,
}

impl Projections {
    /// Draws the four matrices from the standard normal, scaled by `1/√d_model`, in the
    /// order query, key, value, out.
    ///
    /// # Shapes
    /// Returns the shapes above.
    pub fn random(d_model: usize, heads: usize, head_dim: usize) -> Projections {
        let scale = 1.0 / (d_model as f32).sqrt();
        let wide = heads * head_dim;
        Projections {
            w_query: randn(&[d_model, wide]) * scale,
            w_key: randn(&[d_model, wide]) * scale,
            w_value: randn(&[d_model, wide]) * scale,
            w_out: randn(&[wide, d_model]) * scale,
        }
    }
}

/// The partial output of rank `rank` of `world`: its heads' attention times its rows of
/// the output projection.
///
/// # Shapes
/// `x`: `[tokens, d_model]`; returns `[tokens, d_model]`.
// ANCHOR: rank_partial
pub fn rank_partial(
    x: &Tensor, // [tokens, d_model]
    w: &Projections,
    heads: usize,
    rank: usize,
    world: usize,
) -> Result<Tensor> {
    let mine = check_heads("tensor_parallel", heads, world)?;
    let wide = w.w_query.size(1) / heads * mine; // my heads' columns
    let head_dim = wide / mine;
    let tokens = x.size(0);
    let split = |w: &Tensor| {
        x.matmul(&w.narrow(1, rank * wide, wide)) // [tokens, mine · head_dim]
            .reshape([tokens, mine, head_dim])
            .transpose(0, 1)
            .unsqueeze(0)
            .contiguous()
    };
    let context =
        causal_attention(&split(&w.w_query), &split(&w.w_key), &split(&w.w_value))?;
    let context = context
        .squeeze_dim(0)
        .transpose(0, 1)
        .reshape([tokens, wide]);
    Ok(context.matmul(&w.w_out.narrow(0, rank * wide, wide)))
}
// ANCHOR_END: rank_partial

/// The partial outputs added in rank order, `((p₀ + p₁) + p₂) + …`: the fixed order that
/// makes every rank and every run agree.
///
/// # Shapes
/// All `[tokens, d_model]`, at least one; returns the same.
// ANCHOR: in_rank_order
pub fn sum_in_rank_order(partials: &[Tensor]) -> Tensor {
    let mut sum = partials[0].clone();
    for p in &partials[1..] {
        sum = &sum + p;
    }
    sum
}
// ANCHOR_END: in_rank_order

/// The layer in one process with every head at once: one rank of one, whose single
/// product by the whole output projection adds in another order than any sum of partial
/// outputs.
///
/// # Shapes
/// `x`: `[tokens, d_model]`; returns `[tokens, d_model]`.
pub fn all_heads(x: &Tensor, w: &Projections, heads: usize) -> Result<Tensor> {
    rank_partial(x, w, heads, 0, 1)
}
