//! DeepSeek Sparse Attention: softmax attention over the keys a small indexer picks.
//!
//! DeepSeek-V3.2 keeps softmax attention but lets each query attend to only `k` of the
//! keys before it (2048 in the model). A "lightning indexer", a few cheap heads with small
//! features, scores every visible key,
//! `I[t, s] = Σ_h w[t, h] · ReLU(q_I[t, h] · k_I[s])`, the top `k` scores are kept, and the
//! main attention's scores of every other key are set to `-inf` before the softmax. The
//! indexer still looks at every key, but with a few features; the expensive attention
//! looks at `k`.
//!
//! A kernel reads keys a tile at a time: summarise the kept keys per tile with chapter 16's
//! block mask and its tiled kernel reads only the tiles that hold a kept key. Keys picked
//! one by one fall in most tiles; picked a tile at a time (the indexer's scores pooled per
//! tile, the best tiles kept for a whole tile of queries, as NSA and MoBA select blocks),
//! they leave whole tiles unread.

use ch05_causal::mask::causal_mask;
use ch05_causal::masked_softmax::masked_softmax;
use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::kernel::{Visits, flex_kernel};
use ch16_flex_attention::recipes::unchanged;
use shared::{Result, Tensor, zeros};

/// Which keys each query keeps, `[T, T]`: `true` at `[t, s]` where query `t` reads key `s`.
pub type Kept = Tensor<bool>;

/// The indexer's scores, one index head at a time:
/// `I[t, s] = Σ_h w[t, h] · ReLU(q_I[t, h] · k_I[s])`.
///
/// # Shapes
/// `q_index`: `[T, heads, d_I]`, `k_index`: `[T, d_I]`, `w`: `[T, heads]`. Returns `[T, T]`.
// ANCHOR: index_scores
pub fn index_scores(q_index: &Tensor, k_index: &Tensor, w: &Tensor) -> Tensor {
    let mut scores = zeros(&[q_index.size(0), k_index.size(0)]);
    for h in 0..q_index.size(1) {
        let head = q_index.select(1, h).matmul(&k_index.t()).relu();
        scores += w.slice(1, h..h + 1) * head;
    }
    scores
}
// ANCHOR_END: index_scores

/// `true` where key `s` is among the `top_k` best index scores of the keys query `t` sees.
///
/// # Shapes
/// `scores`: `[T, T]`. Returns `[T, T]`.
// ANCHOR: top_k_kept
pub fn top_k_kept(scores: &Tensor, top_k: usize) -> Kept {
    let t = scores.size(0);
    let hidden = causal_mask(t);
    let visible = scores.masked_fill(&hidden, f32::NEG_INFINITY);
    let (_, top) = visible.topk(top_k.min(t), -1, true, true);
    let mut kept = vec![false; t * t];
    for (row, keys) in top.to_vec().chunks(top.size(1)).enumerate() {
        for &key in keys {
            // A query with fewer than top_k keys to see also "picks" future
            // ones (score -inf): drop them.
            kept[row * t + key as usize] = key as usize <= row;
        }
    }
    Tensor::from_vec(kept, &[t, t])
}
// ANCHOR_END: top_k_kept

/// The indexer's scores pooled per tile: the best score query tile `qt` gives a visible key
/// of key tile `kt` (`-inf` for a tile entirely in the future).
///
/// # Shapes
/// `scores`: `[T, T]`, `tile` ≥ 1. Returns `[⌈T/tile⌉, ⌈T/tile⌉]`.
// ANCHOR: tile_scores
pub fn tile_scores(scores: &Tensor, tile: usize) -> Tensor {
    let t = scores.size(0);
    let visible = scores
        .masked_fill(&causal_mask(t), f32::NEG_INFINITY)
        .to_vec();
    let n = t.div_ceil(tile);
    let mut pooled = vec![f32::NEG_INFINITY; n * n];
    for (i, row) in visible.chunks(t).enumerate() {
        for (j, &score) in row.iter().enumerate() {
            let best = &mut pooled[(i / tile) * n + j / tile];
            *best = best.max(score);
        }
    }
    Tensor::from_vec(pooled, &[n, n])
}
// ANCHOR_END: tile_scores

/// Block selection: every tile of queries keeps the `top_tiles` tiles of keys with the best
/// pooled scores, and each query reads the keys of those tiles it can see.
///
/// # Shapes
/// `scores`: `[T, T]`, `tile` ≥ 1. Returns `[T, T]`.
// ANCHOR: top_k_tiles_kept
pub fn top_k_tiles_kept(scores: &Tensor, tile: usize, top_tiles: usize) -> Kept {
    let t = scores.size(0);
    let pooled = tile_scores(scores, tile);
    let n = pooled.size(0);
    let (_, top) = pooled.topk(top_tiles.min(n), -1, true, true);
    let mut chosen = vec![false; n * n];
    for (qt, tiles) in top.to_vec().chunks(top.size(1)).enumerate() {
        for &kt in tiles {
            chosen[qt * n + kt as usize] = true;
        }
    }
    let kept = (0..t * t)
        .map(|e| {
            let (i, j) = (e / t, e % t);
            chosen[(i / tile) * n + j / tile] && j <= i
        })
        .collect();
    Tensor::from_vec(kept, &[t, t])
}
// ANCHOR_END: top_k_tiles_kept

/// Softmax attention over the kept keys only.
///
/// # Shapes
/// `q`, `k`: `[T, d]`, `v`: `[T, d_v]`, `kept`: `[T, T]`. Returns `[T, d_v]`.
// ANCHOR: sparse_attention
pub fn sparse_attention(q: &Tensor, k: &Tensor, v: &Tensor, kept: &Kept) -> Tensor {
    let hidden = kept.logical_not();
    masked_softmax(&q.matmul(&k.t()), &hidden, q.size(1)).matmul(v)
}
// ANCHOR_END: sparse_attention

/// Sparse attention by chapter 16's tiled kernel: a mask_mod that keeps the kept keys, its
/// block mask in tiles of `tile × tile`, and the kernel, which skips every tile without a
/// kept key. Returns the output, the block mask and the tiles the kernel visited; the output
/// equals [`sparse_attention`] up to rounding.
///
/// # Shapes
/// `q`, `k`: `[T, d]`, `v`: `[T, d_v]`, `kept`: `[T, T]`, `tile` ≥ 1. Returns `[T, d_v]`.
// ANCHOR: sparse_attention_tiled
pub fn sparse_attention_tiled(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    kept: &Kept,
    tile: usize,
) -> Result<(Tensor, BlockMask, Visits)> {
    let (queries, keys) = (kept.size(0), kept.size(1));
    let kept = kept.to_vec();
    let keeps = |_b: usize, _h: usize, i: usize, j: usize| kept[i * keys + j];
    let block_mask = BlockMask::new(keeps, 1, 1, queries, keys, tile)?;
    let one_head = |x: &Tensor| x.unsqueeze(0).unsqueeze(0);
    let (out, visits) = flex_kernel(
        &one_head(q),
        &one_head(k),
        &one_head(v),
        &block_mask,
        unchanged,
        keeps,
    )?;
    Ok((out.squeeze_dim(0).squeeze_dim(0), block_mask, visits))
}
// ANCHOR_END: sparse_attention_tiled
