//! The tiled kernel: chapter 9's FlashAttention loop, generic over a score_mod and a
//! mask_mod, steered by a block mask.
//!
//! For each head and each tile of queries it walks the tiles of keys, and:
//! - skips an **empty** tile without reading its keys or values;
//! - on a **full** tile, computes the scores and applies the score_mod, with no mask;
//! - on a **partial** tile, also calls the mask_mod on every entry and sets the hidden
//!   scores to `-∞`.
//!
//! The tile's scores then go through chapter 9's online softmax, row by row, and are
//! added into the output right away. Query head `h` reads key/value head `h / groups`
//! where they are, so grouped-query attention costs no copy of the keys and values.
//! Because the two functions are generic parameters, each recipe compiles to its own
//! loop, the function calls inlined.
//!
//! The kernel reads keys and values one row at a time through [`KvRows`]: from two
//! tensors in [`flex_kernel`], from any other store (chapter 17's paged cache) in
//! [`flex_kernel_over`]. It also keeps what the online softmax knows at the end of a
//! row, the log-sum-exp `max + ln(sum)`, which merges attention over parts of the keys.
//!
//! [`flex_kernel_over`] is the algorithm as the chapter shows it, and [`flex_kernel`] runs
//! it on two tensors. Faster versions of it (the same bits in vector instructions, and
//! chapter 9's fused arithmetic) live outside the chapter, in the workspace's `perf`
//! crate, each tested against this listing.

use ch09_flash_attention::online::OnlineSoftmax;
use shared::{Result, Tensor};

use crate::block_mask::{BlockMask, TileVisit};
use crate::formula::check_shapes;
pub use crate::kernel_io::{KernelOutput, Visits, check_block_mask, check_queries};
use crate::kv_rows::{InTensors, KvRows, elements};
use crate::recipes::{MaskMod, ScoreMod};

pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `softmax(mask(score_mod(q·kᵀ/√d)))·v` in tiles of `block_mask.tile`, visiting only
/// the tiles that `block_mask` does not mark empty, and how many it visited. A query that
/// sees no key gets zeros (as PyTorch's `flex_attention`). The block mask must come from
/// the same `mask_mod`. It is [`flex_kernel_over`] on the two tensors.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`, `k`: `[batch, kv_heads, keys, d]`, `v`:
/// `[batch, kv_heads, keys, d_v]`, `heads` a multiple of `kv_heads`; `block_mask` for
/// `queries × keys` and for 1 or `batch` batches, 1 or `heads` heads. Returns
/// `[batch, heads, queries, d_v]`.
pub fn flex_kernel(
    q: &Tensor, // [batch, heads, queries, d]
    k: &Tensor, // [batch, kv_heads, keys, d]
    v: &Tensor, // [batch, kv_heads, keys, d_v]
    block_mask: &BlockMask,
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod,
) -> Result<(Tensor, Visits)> {
    check_shapes("flex_kernel", q, k, v)?;
    let [batch, heads, queries, _] = q.dims();
    check_block_mask(
        "flex_kernel",
        block_mask,
        [batch, heads, queries, k.size(2)],
    )?;
    let kv = InTensors::new(k, v)?;
    let result = flex_kernel_over(q, &kv, block_mask, score_mod, mask_mod)?;
    Ok((result.out, result.visits))
}

/// The kernel itself: [`flex_kernel`] over keys and values read row by row from `kv`
/// (tensors, or chapter 17's paged cache), with every query's log-sum-exp.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`; `kv` of sizes `[batch, kv_heads, keys, d, d_v]`,
/// `heads` a multiple of `kv_heads`; `block_mask` as for [`flex_kernel`]. Returns
/// `[batch, heads, queries, d_v]` and `[batch, heads, queries]`.
// ANCHOR: flex_kernel
pub fn flex_kernel_over(
    q: &Tensor, // [batch, heads, queries, d]
    kv: &impl KvRows,
    block_mask: &BlockMask,
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod,
) -> Result<KernelOutput> {
    let groups = check_queries("flex_kernel_over", q, kv.sizes())?;
    let [batch, heads, queries, d] = q.dims();
    let [_, _, keys, _, d_v] = kv.sizes();
    check_block_mask(
        "flex_kernel_over",
        block_mask,
        [batch, heads, queries, keys],
    )?;
    let q = elements(q);
    let scale = (1.0 / (d as f64).sqrt()) as f32;
    let tile = block_mask.tile;
    let mut out = vec![0.0f32; batch * heads * queries * d_v];
    let mut lse = vec![f32::NEG_INFINITY; batch * heads * queries];
    let mut visits = Visits::default();
    let mut scores = vec![0.0f32; tile];
    for b in 0..batch {
        for h in 0..heads {
            // Query head h reads key/value head h / groups where it lies: no copy.
            let kv_head = h / groups;
            let head = (b * heads + h) * queries; // this head's first query
            let q_row = |i: usize| &q[(head + i) * d..][..d];
            for qt in 0..block_mask.q_tiles() {
                let rows = qt * tile..((qt + 1) * tile).min(queries);
                let mut state = vec![OnlineSoftmax::new(); rows.len()];
                let mut acc = vec![0.0f32; rows.len() * d_v];
                for visit in block_mask.visit(b, h, qt) {
                    visits.record(&visit);
                    let TileVisit {
                        keys: cols, masked, ..
                    } = visit;
                    for (r, i) in rows.clone().enumerate() {
                        let scores = &mut scores[..cols.len()];
                        for (s, j) in scores.iter_mut().zip(cols.clone()) {
                            *s = if masked && !mask_mod(b, h, i, j) {
                                f32::NEG_INFINITY
                            } else {
                                let k_row = kv.k_row(b, kv_head, j);
                                let score = dot(q_row(i), k_row) * scale;
                                score_mod(score, b, h, i, j)
                            };
                        }
                        if scores.iter().all(|&s| s == f32::NEG_INFINITY) {
                            continue; // query i sees no key of this tile
                        }
                        // The scores become this tile's weights.
                        let rescale = state[r].update(scores);
                        let acc_row = &mut acc[r * d_v..][..d_v];
                        acc_row.iter_mut().for_each(|a| *a *= rescale);
                        for (&w, j) in scores.iter().zip(cols.clone()) {
                            let v_row = kv.v_row(b, kv_head, j);
                            for (a, x) in acc_row.iter_mut().zip(v_row) {
                                *a += w * x;
                            }
                        }
                    }
                }
                for (r, i) in rows.enumerate() {
                    let OnlineSoftmax { max, sum } = state[r];
                    let acc_row = &acc[r * d_v..][..d_v];
                    let out = &mut out[(head + i) * d_v..][..d_v];
                    for (o, a) in out.iter_mut().zip(acc_row) {
                        *o = if sum > 0.0 { a / sum } else { 0.0 };
                    }
                    if sum > 0.0 {
                        lse[head + i] = max + sum.ln();
                    }
                }
            }
        }
    }
    Ok(KernelOutput {
        out: Tensor::from_vec(out, &[batch, heads, queries, d_v]),
        lse: Tensor::from_vec(lse, &[batch, heads, queries]),
        visits,
    })
}
// ANCHOR_END: flex_kernel
