//! How fast decoding can go: each new token reads every weight once, and the cache.

use crate::config::Config;

/// The most tokens a second that decoding can reach when memory delivers `bandwidth` bytes
/// a second and the cache holds `cached_tokens`: every float32 weight a step uses is read
/// once per token (the embedding table only for its one row, unless it is also the output
/// head), and so are the cached keys and values of every layer.
///
/// # Shapes
/// Numbers only.
// ANCHOR: decode_speed_bound
pub fn decode_speed_bound(
    config: &Config,
    bandwidth: f64,
    cached_tokens: usize,
) -> f64 {
    let table = config.vocab_size * config.d_model;
    let read = if config.tied_embeddings {
        // the table as the head, and one of its rows as the input
        config.parameter_count() + config.d_model
    } else {
        // the head, and one row of the table
        config.parameter_count() - table + config.d_model
    };
    let cache =
        cached_tokens * config.n_layers * 2 * config.n_kv_heads * config.head_dim;
    bandwidth / (4.0 * (read + cache) as f64)
}
// ANCHOR_END: decode_speed_bound
