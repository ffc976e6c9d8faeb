//! A KV cache that grows in place.
//!
//! Chapter 15's step rebuilds its cache at every token: the new key is concatenated to the
//! cached ones (a copy of the whole cache), the window's rule picks the keys to keep
//! (another copy), and chapter 7's `repeat_kv` copies each key/value head out once for
//! every query head of its group (`n_heads / n_kv_heads` more copies). Keys and values alike,
//! in every layer, at every token: with thousands of cached tokens the copies cost more
//! than the attention that reads them.
//!
//! Here each layer's keys and values live in buffers allocated once, with room to spare
//! (more positions than in use, doubled when full, as a `Vec` grows). A new token's key and
//! value are written into the next free position, and the products read the positions in
//! use as a view, copying nothing. The grouped query heads read their key/value head as a
//! view too: the queries `[batch, n_heads, 1, head_dim]` are viewed as `[batch,
//! n_kv_heads, n_rep, 1, head_dim]`, the keys `[batch, n_kv_heads, cached, head_dim]` as
//! `[batch, n_kv_heads, 1, cached, head_dim]`, and the product broadcasts each key/value
//! head over its group where `repeat_kv` copied it. Every score and every mixed value is
//! the same products of the same numbers, added in the same order, as chapter 15's step:
//! the same bits.
//!
//! A local layer's window and StreamingLLM's sink tokens keep their rule (chapter 15's
//! `kept`): after the new token is written, the positions the rule drops (after the sink
//! tokens, before the window) are closed up by moving the window down, in place.

use ch07_multihead_split::heads::{merge_heads, split_heads};
use ch14_generation::KvCache;
use ch15_modern_layer::rope::{apply_rope, rope_tables};
use ch15_modern_layer::sinks::softmax_with_sink;
use ch15_modern_layer::softcap::softcap;
use ch15_modern_layer::{Attention, Layer, Recipe, TinyModel};
use shared::nn::Linear;
use shared::{Tensor, cat, zeros};

/// One layer's keys and values, in buffers that grow in place.
pub struct GrowingCache {
    /// `[batch, n_kv_heads, capacity, head_dim]`: the first `len` positions are in use.
    keys: Tensor,
    /// `[batch, n_kv_heads, capacity, head_dim]`, as `keys`.
    values: Tensor,
    /// Positions in use.
    len: usize,
    /// With `Some(w)`, a local layer: the last `w` tokens are kept, and the sinks.
    window: Option<usize>,
    /// StreamingLLM's sink tokens, kept beside a local layer's window.
    sink_tokens: usize,
}

impl GrowingCache {
    /// A cache holding `cache`'s keys and values (chapter 14's, as a prefill leaves it),
    /// with room for `capacity` tokens before it grows; `sink_tokens` as the recipe says.
    ///
    /// # Shapes
    /// `cache`: `[batch, n_kv_heads, cached, head_dim]` keys and values.
    pub fn new(cache: &KvCache, sink_tokens: usize, capacity: usize) -> GrowingCache {
        let len = cache.keys.size(2);
        let mut grown = GrowingCache {
            keys: cache.keys.clone(),
            values: cache.values.clone(),
            len,
            window: cache.window,
            sink_tokens,
        };
        grown.grow(capacity.max(len + 1));
        grown
    }

    /// Positions in use.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no position is in use.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Positions the buffers hold before they must grow.
    pub fn capacity(&self) -> usize {
        self.keys.size(2)
    }

    /// The keys in use, a view of the buffer (no copy).
    ///
    /// # Shapes
    /// Returns `[batch, n_kv_heads, len, head_dim]`.
    pub fn keys(&self) -> Tensor {
        self.keys.narrow(2, 0, self.len)
    }

    /// The values in use, a view of the buffer (no copy).
    ///
    /// # Shapes
    /// Returns `[batch, n_kv_heads, len, head_dim]`.
    pub fn values(&self) -> Tensor {
        self.values.narrow(2, 0, self.len)
    }

    /// Writes one token's key and value into the next free position (growing the buffers
    /// when full), then drops what a local layer's window no longer keeps.
    ///
    /// # Shapes
    /// `k`, `v`: `[batch, n_kv_heads, 1, head_dim]`.
    pub fn append(&mut self, k: &Tensor, v: &Tensor) {
        if self.len == self.capacity() {
            self.grow(2 * self.capacity());
        }
        let at: Tensor<i64> = Tensor::from(vec![self.len]);
        self.keys.index_copy_(2, &at, k);
        self.values.index_copy_(2, &at, v);
        self.len += 1;
        self.evict();
    }

    /// New buffers of `capacity` positions, the positions in use copied over: the one copy
    /// of the cache, and rare (each doubles the room).
    fn grow(&mut self, capacity: usize) {
        let room = |t: &Tensor| {
            let mut shape = t.sizes().to_vec();
            shape[2] = capacity - self.len;
            cat(&[&t.narrow(2, 0, self.len), &zeros(&shape)], 2)
        };
        (self.keys, self.values) = (room(&self.keys), room(&self.values));
    }

    /// Chapter 15's rule for a cache of `len` tokens, the last one new: the keys it sees are
    /// the first `sink_tokens` and the last `window`; those between move out, the window
    /// moves down next to the sinks.
    fn evict(&mut self) {
        let Some(window) = self.window else { return };
        let end = self.len.saturating_sub(window); // the first position the window keeps
        if end <= self.sink_tokens {
            return; // nothing between the sinks and the window
        }
        let kept = self.len - end;
        let to: Tensor<i64> = Tensor::from(
            (self.sink_tokens..self.sink_tokens + kept).collect::<Vec<_>>(),
        );
        for buffer in [&mut self.keys, &mut self.values] {
            // The window copied out first: written over itself, its view would share the
            // buffer and make the write copy the whole of it.
            let moved = buffer.narrow(2, end, kept);
            let moved = Tensor::from_vec(moved.to_vec(), moved.sizes());
            buffer.index_copy_(2, &to, &moved);
        }
        self.len = self.sink_tokens + kept;
    }
}

/// `t` with its heads in groups: `[batch, n_heads, rows, cols]` viewed as `[batch,
/// n_kv_heads, n_heads / n_kv_heads, rows, cols]`, query head `g·n_rep + r` at `[g, r]`.
///
/// # Shapes
/// `t`: `[batch, n_heads, rows, cols]`, `n_heads` a multiple of `n_kv_heads`.
fn grouped(t: &Tensor, n_kv_heads: usize) -> Tensor {
    let (b, h, rows, cols) = (t.size(0), t.size(1), t.size(2), t.size(3));
    t.reshape([b, n_kv_heads, h / n_kv_heads, rows, cols])
}

/// The attention weights of one new token's queries over the cache, as chapter 15's
/// `Attention::weights` computes them (scaled, softcapped, softmaxed with the sinks if the
/// recipe says so), each key/value head read in place by its group of query heads.
///
/// # Shapes
/// `q`: `[batch, n_heads, 1, head_dim]`, `keys`: `[batch, n_kv_heads, cached, head_dim]`.
/// Returns `[batch, n_heads, 1, cached]`.
// ANCHOR: grouped_weights
pub fn grouped_weights(
    attn: &Attention,
    q: &Tensor,
    keys: &Tensor,
    recipe: &Recipe,
) -> Tensor {
    let scale = (1.0 / (attn.head_dim as f64).sqrt()) as f32;
    let scores = grouped(q, attn.n_kv_heads)
        .matmul(&keys.unsqueeze(2).transpose(-2, -1)) // [b, kv, n_rep, 1, cached]
        .reshape([q.size(0), attn.n_heads, 1, keys.size(2)]);
    let mut scores = scores * scale;
    if let Some(cap) = recipe.softcap {
        scores = softcap(&scores, cap);
    }
    match &attn.sinks {
        Some(sinks) if recipe.sinks => softmax_with_sink(&scores, sinks),
        _ => scores.softmax(-1),
    }
}
// ANCHOR_END: grouped_weights

/// Chapter 15's `Attention::step` with a cache that grows in place: the new token's key
/// and value written into the cache, its queries against the cached keys, the weights
/// mixing the cached values, each key/value head read by its group of query heads in place.
///
/// # Shapes
/// `x_new`: `[batch, 1, d_model]`. Returns `[batch, 1, d_model]`.
// ANCHOR: attention_step
pub fn attention_step(
    attn: &Attention,
    x_new: &Tensor,
    position: usize,
    cache: &mut GrowingCache,
    recipe: &Recipe,
) -> Tensor {
    let (q, k, v) = attn.qkv(x_new, &[position], recipe);
    let heads = attn.gated(&attend(attn, &q, &k, &v, cache, recipe), x_new, recipe);
    attn.out_proj.forward(&heads)
}
// ANCHOR_END: attention_step

/// The new token's key and value written into the cache, its queries against the cached
/// keys, the weights mixing the cached values; the heads merged.
///
/// # Shapes
/// `q`: `[batch, n_heads, 1, head_dim]`, `k`, `v`: `[batch, n_kv_heads, 1, head_dim]`.
/// Returns `[batch, 1, n_heads · head_dim]`.
// ANCHOR: attend
pub fn attend(
    attn: &Attention,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    cache: &mut GrowingCache,
    recipe: &Recipe,
) -> Tensor {
    cache.append(k, v);
    let weights = grouped_weights(attn, q, &cache.keys(), recipe);
    let context = grouped(&weights, attn.n_kv_heads)
        .matmul(&cache.values().unsqueeze(2)) // [b, kv, n_rep, 1, head_dim]
        .reshape([q.size(0), attn.n_heads, 1, attn.head_dim]);
    merge_heads(&context)
}
// ANCHOR_END: attend

/// Every layer's prefill cache as a [`GrowingCache`] with room for `capacity` tokens.
///
/// # Shapes
/// `caches`: one per layer, `[batch, n_kv_heads, cached, head_dim]` each.
pub fn growing(
    caches: &[KvCache],
    recipe: &Recipe,
    capacity: usize,
) -> Vec<GrowingCache> {
    caches
        .iter()
        .map(|c| GrowingCache::new(c, recipe.sink_tokens, capacity))
        .collect()
}

/// Chapter 15's `TinyModel::step` over caches that grow in place: the logits of one new
/// token at `position`.
///
/// # Shapes
/// `token`: `[batch, 1]`. Returns `[batch, vocab_size]`.
// ANCHOR: step
pub fn step(
    model: &TinyModel,
    token: &Tensor<i64>,
    position: usize,
    caches: &mut [GrowingCache],
    recipe: &Recipe,
) -> Tensor {
    let mut x = model.tok_emb.forward(token);
    for (layer, cache) in model.layers.iter().zip(caches.iter_mut()) {
        let attn_in = layer.attn_norm.forward(&x);
        let h = &x + attention_step(&layer.attn, &attn_in, position, cache, recipe);
        x = &h + layer.ffn.forward(&layer.ffn_norm.forward(&h));
    }
    model
        .lm_head
        .forward(&model.final_norm.forward(&x))
        .select(1, -1)
}
// ANCHOR_END: step

/// `layer(x)` for each sequence's row alone: the one-row product a step of that sequence
/// alone takes, every row's outputs with its bits, the weight read once for all of them.
///
/// # Shapes
/// `x`: `[batch, 1, in_features]`. Returns `[batch, 1, out_features]`.
fn each_alone(layer: &Linear, x: &Tensor) -> Tensor {
    let (batch, width) = (x.size(0), x.size(2));
    let tokens = layer.forward_row_by_row(&x.reshape([1, batch, width]));
    tokens.reshape([batch, 1, layer.out_features()])
}

/// [`step`] for several sequences at once, each with its own caches (`[batch, ..]`): row
/// `b` of the logits has the bits of [`step`] on sequence `b` alone. A step of one sequence
/// reads every weight of the model for one row; here every weight is read once for the
/// whole batch, each row multiplied in the one-row order (a product of the whole batch
/// would add in another order, and change the last bits).
///
/// # Shapes
/// `token`: `[batch, 1]`. Returns `[batch, vocab_size]`.
pub fn step_side_by_side(
    model: &TinyModel,
    token: &Tensor<i64>,
    position: usize,
    caches: &mut [GrowingCache],
    recipe: &Recipe,
) -> Tensor {
    let mut x = model.tok_emb.forward(token);
    for (layer, cache) in model.layers.iter().zip(caches.iter_mut()) {
        x = layer_side_by_side(layer, &x, position, cache, recipe);
    }
    let logits = each_alone(&model.lm_head, &model.final_norm.forward(&x));
    logits.select(1, -1)
}

/// Chapter 15's layer for one new token of each sequence: [`attention_step`] and the
/// network, every product [`each_alone`].
///
/// # Shapes
/// `x`: `[batch, 1, d_model]`. Returns `[batch, 1, d_model]`.
fn layer_side_by_side(
    layer: &Layer,
    x: &Tensor,
    position: usize,
    cache: &mut GrowingCache,
    recipe: &Recipe,
) -> Tensor {
    let a = &layer.attn;
    let attn_in = layer.attn_norm.forward(x);
    // Chapter 15's `Attention::qkv`, its three projections each row alone.
    let mut q = split_heads(&each_alone(&a.w_query, &attn_in), a.n_heads);
    let mut k = split_heads(&each_alone(&a.w_key, &attn_in), a.n_kv_heads);
    let v = split_heads(&each_alone(&a.w_value, &attn_in), a.n_kv_heads);
    if let Some((q_norm, k_norm)) = &a.qk_norm
        && recipe.qk_norm
    {
        (q, k) = (q_norm.forward(&q), k_norm.forward(&k));
    }
    let (cos, sin) = rope_tables(
        &[position],
        a.head_dim,
        recipe.theta,
        recipe.llama31_scaling,
    );
    let (q, k) = (apply_rope(&q, &cos, &sin), apply_rope(&k, &cos, &sin));
    let heads = attend(a, &q, &k, &v, cache, recipe);
    // The output gate (if the recipe has one) of each sequence alone, as its own step.
    let gated: Vec<Tensor> = (0..x.size(0))
        .map(|b| a.gated(&heads.narrow(0, b, 1), &attn_in.narrow(0, b, 1), recipe))
        .collect();
    let h = x + each_alone(&a.out_proj, &cat(&gated, 0));
    let ffn_in = layer.ffn_norm.forward(&h);
    let f = &layer.ffn;
    let gate = each_alone(&f.w_gate, &ffn_in).silu();
    &h + each_alone(&f.w_down, &(gate * each_alone(&f.w_up, &ffn_in)))
}
