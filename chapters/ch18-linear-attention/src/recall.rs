//! Associative recall: what a state of fixed size forgets.
//!
//! Write `n` key–value pairs, then read every key back. Softmax attention keeps all `n`
//! pairs and, with sharp enough scores, finds each key's own value. A `d_v × d_k` state
//! can hold at most `d_k` pairs without interference (keys at right angles to each
//! other); past that, linear attention's sum blurs every pair into the others, and the
//! delta rule keeps the newest pairs exact at the cost of the older ones. No training
//! here: random unit keys, random values, and the three memories as the chapter built them.

use std::ops::Range;

use shared::{Tensor, arange, zeros};

use crate::delta::delta_write;

/// How much the softmax sharpens the scores `k_i · k_j` of unit keys.
pub const SHARPNESS: f32 = 16.0;

/// What every key reads back from the three memories after all the pairs were written:
/// linear attention's state, the delta rule's (`β = 1`), and softmax attention over the
/// pairs.
///
/// # Shapes
/// `keys`: `[n, d_k]` (unit length), `values`: `[n, d_v]`. Returns three `[n, d_v]`.
// ANCHOR: recall
pub fn recall(keys: &Tensor, values: &Tensor) -> [Tensor; 3] {
    let mut summed = zeros(&[values.size(1), keys.size(1)]);
    let mut replaced = zeros(&[values.size(1), keys.size(1)]);
    for i in 0..keys.size(0) {
        let (key, value) = (keys.get(i), values.get(i));
        summed += value.outer(&key);
        replaced = delta_write(&replaced, &key, &value, 1.0);
    }
    let weights = (keys.matmul(&keys.t()) * SHARPNESS).softmax(-1);
    [
        keys.matmul(&summed.t()),
        keys.matmul(&replaced.t()),
        weights.matmul(values),
    ]
}
// ANCHOR_END: recall

/// How many of the pairs `rows` read back a vector nearer to their own value than to any
/// other stored value.
///
/// # Shapes
/// `recalled`, `values`: `[n, d_v]`; `rows` within `0..n`.
pub fn pairs_recalled(
    recalled: &Tensor,
    values: &Tensor,
    rows: Range<usize>,
) -> usize {
    let gaps = recalled.slice(0, rows.clone()).unsqueeze(1) - values.unsqueeze(0);
    let nearest = (&gaps * &gaps).sum_dim(-1, false).argmin_dim(-1, false);
    let own = arange(rows.start, rows.end, 1);
    nearest
        .to_vec()
        .iter()
        .zip(own.to_vec())
        .filter(|&(&got, want)| got == want)
        .count()
}
