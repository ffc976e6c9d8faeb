//! FlexAttention's definition, in tensor operations:
//!
//! ```text
//! scores = q·kᵀ · scale                       [batch, heads, queries, keys]
//! scores = score_mod(score, b, h, q_idx, kv_idx)   for every entry
//! scores = -∞ where !mask_mod(b, h, q_idx, kv_idx)
//! out    = softmax(scores) · v
//! ```
//!
//! With grouped-query attention, query head `h` reads key/value head `h / groups`; here
//! the key and value heads are repeated to one per query head first, as chapter 7 does.
//! PyTorch's `flex_attention` run eagerly computes these same operations in this same
//! order: the reference script checks that its output equals this formula bit for bit.

use ch07_multihead_split::grouped::repeat_kv;
use shared::{Error, Result, Tensor};

use crate::recipes::{MaskMod, ScoreMod};

/// Checks the shapes of `q`, `k`, `v` for `op`: `[batch, heads, queries, d]`,
/// `[batch, kv_heads, keys, d]`, `[batch, kv_heads, keys, d_v]` with `heads` a multiple of
/// `kv_heads`.
///
/// # Shapes
/// As above; returns `(heads / kv_heads)`, the query heads per key/value head.
pub fn check_shapes(
    op: &'static str,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
) -> Result<usize> {
    let (qs, ks, vs) = (q.sizes(), k.sizes(), v.sizes());
    let fits = qs.len() == 4
        && ks.len() == 4
        && vs.len() == 4
        && qs[0] == ks[0]
        && ks[0] == vs[0]
        && ks[1] == vs[1]
        && ks[2] == vs[2]
        && qs[3] == ks[3]
        && ks[1] > 0
        && qs[1].is_multiple_of(ks[1]);
    if !fits {
        return Err(Error::Shape {
            op,
            detail: format!(
                "expected q [batch, heads, queries, d], k [batch, kv_heads, keys, d] and v \
                 [batch, kv_heads, keys, d_v] with heads a multiple of kv_heads, got q \
                 {qs:?}, k {ks:?}, v {vs:?}"
            ),
        });
    }
    Ok(qs[1] / ks[1])
}

/// The mask as a tensor of booleans, `true` where the key is hidden.
///
/// # Shapes
/// Returns `[batch, heads, queries, keys]`.
pub fn hidden(
    mask_mod: impl MaskMod,
    [batch, heads, queries, keys]: [usize; 4],
) -> Tensor<bool> {
    let mut values = Vec::with_capacity(batch * heads * queries * keys);
    for b in 0..batch {
        for h in 0..heads {
            for q_idx in 0..queries {
                values.extend((0..keys).map(|kv_idx| !mask_mod(b, h, q_idx, kv_idx)));
            }
        }
    }
    Tensor::from_vec(values, &[batch, heads, queries, keys])
}

/// `score_mod` applied to every score, each with its own indices.
///
/// # Shapes
/// `scores`: `[batch, heads, queries, keys]`; returns the same shape.
pub fn modified(scores: &Tensor, score_mod: impl ScoreMod) -> Tensor {
    let [batch, heads, queries, keys] = scores.dims();
    let values = scores.to_vec();
    let mut out = Vec::with_capacity(values.len());
    for b in 0..batch {
        for h in 0..heads {
            for q_idx in 0..queries {
                let row = ((b * heads + h) * queries + q_idx) * keys;
                out.extend((0..keys).map(|kv_idx| {
                    score_mod(values[row + kv_idx], b, h, q_idx, kv_idx)
                }));
            }
        }
    }
    Tensor::from_vec(out, &[batch, heads, queries, keys])
}

/// `softmax(mask(score_mod(q·kᵀ/√d)))·v`: attention with any score_mod and mask_mod.
/// Every query must see at least one key (a row of `-∞` has no softmax).
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`, `k`: `[batch, kv_heads, keys, d]`, `v`:
/// `[batch, kv_heads, keys, d_v]`, `heads` a multiple of `kv_heads`. Returns
/// `[batch, heads, queries, d_v]`.
// ANCHOR: flex_attention
pub fn flex_attention(
    q: &Tensor, // [batch, heads, queries, d]
    k: &Tensor, // [batch, kv_heads, keys, d]
    v: &Tensor, // [batch, kv_heads, keys, d_v]
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod,
) -> Result<Tensor> {
    let groups = check_shapes("flex_attention", q, k, v)?;
    let (k, v) = (repeat_kv(k, groups), repeat_kv(v, groups));
    let scale = (1.0 / (q.size(-1) as f64).sqrt()) as f32;
    let scores = q.matmul(&k.transpose(-2, -1)) * scale;
    let scores = modified(&scores, score_mod);
    let hidden = hidden(mask_mod, scores.dims());
    Ok(scores
        .masked_fill(&hidden, f32::NEG_INFINITY)
        .softmax(-1)
        .matmul(&v))
}
// ANCHOR_END: flex_attention
