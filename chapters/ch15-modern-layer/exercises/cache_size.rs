//! Exercise: the KV cache of a recipe card. Replace the `todo!()`; test with
//! `cargo test -p ch15-modern-layer --features exercise recipe_cache_bytes`.

use crate::recipe::CacheCard;

/// The bytes of the keys and values a model with `card`'s shape caches after `tokens`
/// tokens: per layer `2 · kv_heads · head_dim · cached · bytes_per_value`, where `cached`
/// is `tokens` on a global layer and `min(tokens, window)` on a local one. A `u64`: a big
/// model's cache passes 4 GiB, more than a 32-bit `usize` holds.
///
/// # Shapes
/// Scalars.
pub fn recipe_cache_bytes(card: &CacheCard, tokens: usize) -> u64 {
    // TODO: before you write it, predict: how much smaller than with every layer global
    // is the cache of 5 local layers (window 1024) to 1 global, at 32 768 tokens?
    // Then add up the layers; card.window_of(layer) tells a local layer's window.
    let _ = (card, tokens);
    todo!("recipe_cache_bytes")
}
