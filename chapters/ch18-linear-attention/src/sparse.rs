//! DeepSeek Sparse Attention: softmax attention over the keys a small indexer picks.
//!
//! DeepSeek-V3.2 keeps softmax attention but lets each query attend to only `k` of the
//! keys before it (2048 in the model). A "lightning indexer", a few cheap heads with small
//! features, scores every visible key,
//! `I[t, s] = Σ_h w[t, h] · ReLU(q_I[t, h] · k_I[s])`, the top `k` scores are kept, and the
//! main attention's scores of every other key are set to `-inf` before the softmax. The
//! indexer still looks at every key, but with a few features; the expensive attention
//! looks at `k`.

use ch05_causal::mask::causal_mask;
use ch05_causal::masked_softmax::masked_softmax;
use shared::{Tensor, zeros};

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
    for h in 0..q_index.size(1) as i64 {
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
