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

use std::borrow::Cow;

use ch09_flash_attention::online::OnlineSoftmax;
use shared::{Error, Result, Tensor};

use crate::block_mask::{BlockMask, TileKind};
use crate::formula::check_shapes;
use crate::recipes::{MaskMod, ScoreMod};

/// How many tiles the kernel computed, over every batch and head.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Visits {
    /// Full tiles: computed without a mask.
    pub full: usize,
    /// Partial tiles: computed and masked.
    pub partial: usize,
}

/// The elements of `t` in row-major order, borrowed when `t` holds them that way.
pub(crate) fn elements(t: &Tensor) -> Cow<'_, [f32]> {
    match t.as_slice() {
        Some(slice) => Cow::Borrowed(slice),
        None => Cow::Owned(t.to_vec()),
    }
}

/// One head's queries and the key/value head it reads, as rows of numbers.
struct Head<'a> {
    q: &'a [f32],
    k: &'a [f32],
    v: &'a [f32],
    d: usize,
    d_v: usize,
}

impl Head<'_> {
    fn q_row(&self, i: usize) -> &[f32] {
        &self.q[i * self.d..][..self.d]
    }
    fn k_row(&self, j: usize) -> &[f32] {
        &self.k[j * self.d..][..self.d]
    }
    fn v_row(&self, j: usize) -> &[f32] {
        &self.v[j * self.d_v..][..self.d_v]
    }
}

pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `softmax(mask(score_mod(q·kᵀ/√d)))·v` in tiles of `block_mask.tile`, visiting only
/// the tiles that `block_mask` does not mark empty, and how many it visited. A query that
/// sees no key gets zeros (as PyTorch's `flex_attention`). The block mask must come from
/// the same `mask_mod`.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`, `k`: `[batch, kv_heads, keys, d]`, `v`:
/// `[batch, kv_heads, keys, d_v]`, `heads` a multiple of `kv_heads`; `block_mask` for
/// `queries × keys` and for 1 or `batch` batches, 1 or `heads` heads. Returns
/// `[batch, heads, queries, d_v]`.
// ANCHOR: flex_kernel
pub fn flex_kernel(
    q: &Tensor, // [batch, heads, queries, d]
    k: &Tensor, // [batch, kv_heads, keys, d]
    v: &Tensor, // [batch, kv_heads, keys, d_v]
    block_mask: &BlockMask,
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod,
) -> Result<(Tensor, Visits)> {
    let groups = check_shapes("flex_kernel", q, k, v)?;
    let [batch, heads, queries, d] = q.dims();
    let [_, kv_heads, keys, d_v] = v.dims();
    check_block_mask("flex_kernel", block_mask, [batch, heads, queries, keys])?;
    let (q, k, v) = (q.contiguous(), k.contiguous(), v.contiguous());
    let (q, k, v) = (elements(&q), elements(&k), elements(&v));
    let scale = (1.0 / (d as f64).sqrt()) as f32;
    let tile = block_mask.tile;
    let mut out = vec![0.0f32; batch * heads * queries * d_v];
    let mut visits = Visits::default();
    let mut scores = vec![0.0f32; tile];
    for b in 0..batch {
        for h in 0..heads {
            // Query head h reads key/value head h / groups where it lies: no copy.
            let kv = b * kv_heads + h / groups;
            let head = Head {
                q: &q[(b * heads + h) * queries * d..][..queries * d],
                k: &k[kv * keys * d..][..keys * d],
                v: &v[kv * keys * d_v..][..keys * d_v],
                d,
                d_v,
            };
            let out = &mut out[(b * heads + h) * queries * d_v..][..queries * d_v];
            for qt in 0..block_mask.q_tiles() {
                let rows = qt * tile..((qt + 1) * tile).min(queries);
                let mut state = vec![OnlineSoftmax::new(); rows.len()];
                let mut acc = vec![0.0f32; rows.len() * d_v];
                for kt in 0..block_mask.kv_tiles() {
                    let masked = match block_mask.kind(b, h, qt, kt) {
                        TileKind::Empty => continue,
                        TileKind::Full => false,
                        TileKind::Partial => true,
                    };
                    if masked {
                        visits.partial += 1;
                    } else {
                        visits.full += 1;
                    }
                    let cols = kt * tile..((kt + 1) * tile).min(keys);
                    for (r, i) in rows.clone().enumerate() {
                        let scores = &mut scores[..cols.len()];
                        for (s, j) in scores.iter_mut().zip(cols.clone()) {
                            *s = if masked && !mask_mod(b, h, i, j) {
                                f32::NEG_INFINITY
                            } else {
                                let score = dot(head.q_row(i), head.k_row(j)) * scale;
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
                            let v_row = head.v_row(j);
                            for (a, x) in acc_row.iter_mut().zip(v_row) {
                                *a += w * x;
                            }
                        }
                    }
                }
                for (r, i) in rows.enumerate() {
                    let sum = state[r].sum;
                    let acc_row = &acc[r * d_v..][..d_v];
                    for (o, a) in out[i * d_v..][..d_v].iter_mut().zip(acc_row) {
                        *o = if sum > 0.0 { a / sum } else { 0.0 };
                    }
                }
            }
        }
    }
    Ok((Tensor::from_vec(out, &[batch, heads, queries, d_v]), visits))
}
// ANCHOR_END: flex_kernel

/// Checks for `op` that `block_mask` covers `queries × keys` for `batch` batches and
/// `heads` heads.
///
/// # Shapes
/// Sizes only.
pub fn check_block_mask(
    op: &'static str,
    block_mask: &BlockMask,
    [batch, heads, queries, keys]: [usize; 4],
) -> Result<()> {
    let fits = block_mask.queries == queries
        && block_mask.keys == keys
        && (block_mask.batch == 1 || block_mask.batch == batch)
        && (block_mask.heads == 1 || block_mask.heads == heads);
    if fits {
        return Ok(());
    }
    Err(Error::Shape {
        op,
        detail: format!(
            "the block mask covers {} queries × {} keys for {} batches and {} heads, the \
             attention has {queries} queries × {keys} keys for {batch} batches and {heads} heads",
            block_mask.queries, block_mask.keys, block_mask.batch, block_mask.heads
        ),
    })
}
