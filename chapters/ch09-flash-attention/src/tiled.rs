//! FlashAttention's algorithm written with tensor operations (Dao et al., 2022,
//! "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness"; the loop
//! order of FlashAttention-2, Dao, 2023).
//!
//! Chapter 7's attention computes the whole `[queries, keys]` score matrix, its softmax,
//! and only then the weighted sum of the values. Here the queries go in blocks, and for
//! each block the keys and values go in blocks too: every tile of scores is turned into
//! weights with the online softmax and added into the output right away, then forgotten.
//! Nothing of size `queries × keys` ever exists; each block of queries keeps its output
//! rows, a running maximum and a running sum.
//!
//! This version uses the same tensor operations as the reference script, so it prints
//! PyTorch's digits; [`crate::kernel`] computes the same thing fast.

use shared::{Tensor, cat, zeros};

use crate::blocks::{key_block_count, tile_needs_mask};

/// `softmax(q·kᵀ/√d)·v` (with the causal mask if `causal`), computed in tiles of `block`
/// queries by `block` keys with the online softmax, skipping the tiles above the diagonal.
///
/// # Shapes
/// `q`: `[.., queries, d]`, `k`: `[.., keys, d]`, `v`: `[.., keys, d_v]`, the same leading
/// dims. Returns `[.., queries, d_v]`. `block > 0`.
// ANCHOR: tiled_attention
pub fn tiled_attention(
    q: &Tensor, // [.., queries, d]
    k: &Tensor, // [.., keys, d]
    v: &Tensor, // [.., keys, d_v]
    block: usize,
    causal: bool,
) -> Tensor {
    let (queries, keys) = (q.size(-2), k.size(-2));
    let scale = (q.size(-1) as f32).sqrt();
    let mut outputs = Vec::new();
    for q_start in (0..queries).step_by(block) {
        let q_len = block.min(queries - q_start);
        let q_block = q.narrow(-2, q_start, q_len); // [.., q_len, d]
        // Per row: the running maximum, the running Σ exp(s - max), and the
        // output so far.
        let mut row_shape = q_block.sizes().to_vec(); // [.., q_len, d]
        *row_shape.last_mut().expect("q has a last dim") = 1;
        let mut max = Tensor::full(&row_shape, f32::NEG_INFINITY); // [.., q_len, 1]
        let mut sum = zeros(&row_shape); // [.., q_len, 1]
        *row_shape.last_mut().expect("q has a last dim") = v.size(-1);
        let mut out = zeros(&row_shape); // [.., q_len, d_v]
        for kb in 0..key_block_count(q_start + q_len, keys, block, causal) {
            let k_start = kb * block;
            let k_len = block.min(keys - k_start);
            let k_block = k.narrow(-2, k_start, k_len);
            let v_block = v.narrow(-2, k_start, k_len);
            let mut scores = q_block.matmul(&k_block.transpose(-2, -1)) / scale;
            if tile_needs_mask(q_start, k_start + k_len, causal) {
                // Key j is hidden from query i when j > i (absolute positions).
                let hidden = |i: usize, j: usize| k_start + j > q_start + i;
                let future = Tensor::from_vec(
                    (0..q_len)
                        .flat_map(|i| (0..k_len).map(move |j| hidden(i, j)))
                        .collect(),
                    &[q_len, k_len],
                );
                scores.masked_fill_(&future, f32::NEG_INFINITY);
            }
            let new_max = max.maximum(&scores.max_dim(-1, true).0);
            // This tile's unnormalised weights.
            let weights = (&scores - &new_max).exp();
            let rescale = (&max - &new_max).exp(); // exp(old max - new max)
            sum = &(&rescale * &sum) + &weights.sum_dim(-1, true);
            out = &(&rescale * &out) + &weights.matmul(&v_block);
            max = new_max;
        }
        outputs.push(&out / &sum);
    }
    cat(&outputs, -2)
}
// ANCHOR_END: tiled_attention
