//! The target's pass over several new tokens at once, against its KV cache: the tokens'
//! queries, keys and values in one go, each query against the cached keys and the new
//! keys up to its own, and the logits after every one of them.
//!
//! Chapter 15's model steps one token at a time; speculative decoding needs the logits
//! after each of `k + 1` tokens from one pass. Every product is taken one query row at a
//! time (chapter 14's batch-invariant products), so each row's logits are the bits that
//! decoding the tokens one by one gives, however many rows the pass holds.

use ch07_multihead_split::heads::merge_heads;
use ch14_generation::KvCache;
use ch14_generation::gqa::repeat_kv;
use ch15_modern_layer::attention::visible;
use ch15_modern_layer::{Recipe, TinyModel};
use shared::{Tensor, cat, zeros};

/// One empty cache per layer of `model`.
///
/// # Shapes
/// Keys and values of `[1, n_kv_heads, 0, head_dim]`.
pub fn empty_caches(model: &TinyModel) -> Vec<KvCache> {
    model
        .layers
        .iter()
        .map(|layer| {
            let shape = [1, layer.attn.n_kv_heads, 0, layer.attn.head_dim];
            KvCache::new(zeros(&shape), zeros(&shape), None)
        })
        .collect()
}

/// The target's caches before speculation starts: every token of `prompt` but the last,
/// which the first pass reads together with the first proposals.
///
/// # Shapes
/// `prompt`: `[1, n]`; the caches hold `n - 1` tokens.
pub fn prefilled_caches(
    model: &TinyModel,
    prompt: &Tensor<i64>,
    recipe: &Recipe,
) -> Vec<KvCache> {
    let mut caches = empty_caches(model);
    let start = prompt.size(1) - 1;
    if start > 0 {
        target_pass(model, &prompt.narrow(1, 0, start), 0, &mut caches, recipe);
    }
    caches
}

/// The logits after each of `tokens`, at positions `start..`, the caches holding the
/// `start` tokens before them; their keys and values are appended to the caches. Every
/// layer must be global (its cache holds every token).
///
/// # Shapes
/// `tokens`: `[1, n]`. Returns `[1, n, vocab_size]`.
// ANCHOR: target_pass
pub fn target_pass(
    model: &TinyModel,
    tokens: &Tensor<i64>,
    start: usize,
    caches: &mut [KvCache],
    recipe: &Recipe,
) -> Tensor {
    let n = tokens.size(1);
    let positions: Vec<usize> = (start..start + n).collect();
    let mut x = model.tok_emb.forward(tokens);
    for (layer, cache) in model.layers.iter().zip(caches.iter_mut()) {
        let attn = &layer.attn;
        let x_norm = layer.attn_norm.forward(&x);
        let (q, k, v) = attn.qkv_row_by_row(&x_norm, &positions, recipe);
        cache.append(&k, &v);
        let v_rep = repeat_kv(&cache.values, attn.n_rep());
        let context: Vec<Tensor> = (0..n)
            .map(|i| {
                let seen = visible(start + i, None, 0); // the past and itself
                let keys = cache.keys.index_select(2, &seen);
                let w = attn.weights(&q.narrow(2, i, 1), &keys, recipe, None);
                w.matmul(&v_rep.index_select(2, &seen))
            })
            .collect();
        let merged = merge_heads(&cat(&context, 2));
        let h = &x + attn.output_row_by_row(&merged, &x_norm, recipe);
        x = &h + layer.ffn.forward_row_by_row(&layer.ffn_norm.forward(&h));
    }
    model.head_row_by_row(&model.final_norm.forward(&x))
}
// ANCHOR_END: target_pass

/// Forgets every cached token from `len` on: the drafts the target rejected.
///
/// # Shapes
/// Caches of `[1, n_kv_heads, ≥ len, head_dim]` become `[1, n_kv_heads, len, head_dim]`.
pub fn truncate(caches: &mut [KvCache], len: usize) {
    for cache in caches {
        *cache = KvCache::new(
            cache.keys.narrow(2, 0, len).contiguous(),
            cache.values.narrow(2, 0, len).contiguous(),
            None,
        );
    }
}
