//! How big the KV cache of a recipe card grows: a global layer caches every token, a
//! local layer only its window, so a schedule of mostly local layers caps most of it.

use crate::recipe::CacheCard;

/// The bytes of the keys and values a model with `card`'s shape caches after `tokens`
/// tokens: per layer `2 · kv_heads · head_dim · cached · bytes_per_value`, where `cached`
/// is `tokens` on a global layer and `min(tokens, window)` on a local one. A `u64`: a big
/// model's cache passes 4 GiB, more than a 32-bit `usize` holds.
///
/// # Shapes
/// Scalars.
// ANCHOR: recipe_cache_bytes
pub fn recipe_cache_bytes(card: &CacheCard, tokens: usize) -> u64 {
    (0..card.layers)
        .map(|layer| {
            let cached = card.window_of(layer).map_or(tokens, |w| w.min(tokens));
            2 * card.kv_heads * card.head_dim * cached * card.bytes_per_value
        })
        .map(|bytes| bytes as u64)
        .sum()
}
// ANCHOR_END: recipe_cache_bytes
