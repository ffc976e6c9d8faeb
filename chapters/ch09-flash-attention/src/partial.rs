//! Attention over a part of the keys, kept unfinished so that it can be combined with the
//! other parts later: per query row, the largest score `max`, the sum `Σ exp(s - max)` and
//! the output `Σ exp(s - max)·v` not yet divided by that sum. The tiles of
//! [`crate::tiled`] are such parts, taken one after another; [`crate::merge`] combines
//! parts computed anywhere, in any order.

use shared::Tensor;

/// The unfinished attention of the queries over some of the keys.
#[derive(Clone, Debug)]
pub struct Partial {
    /// The largest score of every query row over these keys, `[.., queries, 1]`.
    pub max: Tensor,
    /// `Σ exp(s - max)` over these keys, `[.., queries, 1]`.
    pub sum: Tensor,
    /// `Σ exp(s - max)·v` over these keys, `[.., queries, d_v]`.
    pub out: Tensor,
}

/// The part of `softmax(q·kᵀ/√d)·v` that the given keys and values contribute, unfinished.
///
/// # Shapes
/// `q`: `[.., queries, d]`, `k`: `[.., keys, d]`, `v`: `[.., keys, d_v]`, at least one key.
pub fn partial_attention(q: &Tensor, k: &Tensor, v: &Tensor) -> Partial {
    let scale = (q.size(-1) as f32).sqrt();
    let scores = q.matmul(&k.transpose(-2, -1)) / scale; // [.., queries, keys]
    let max = scores.max_dim(-1, true).0; // [.., queries, 1]
    let weights = (&scores - &max).exp(); // unnormalised
    Partial {
        sum: weights.sum_dim(-1, true),
        out: weights.matmul(v),
        max,
    }
}

impl Partial {
    /// The attention output these keys give on their own: `out / sum`.
    ///
    /// # Shapes
    /// Returns `[.., queries, d_v]`.
    pub fn finish(&self) -> Tensor {
        &self.out / &self.sum
    }
}
