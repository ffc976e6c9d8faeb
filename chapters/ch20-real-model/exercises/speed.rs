//! How fast decoding can go. Exercise: see `cargo run -p learn -- hint ch20-real-model decode_speed_bound`.

use crate::config::Config;

/// The most tokens a second that decoding can reach when memory delivers `bandwidth` bytes
/// a second and the cache holds `cached_tokens`.
///
/// # Shapes
/// Numbers only.
pub fn decode_speed_bound(
    config: &Config,
    bandwidth: f64,
    cached_tokens: usize,
) -> f64 {
    // TODO: count the float32 values one decoding step must read from memory (every weight
    // it multiplies by, and every cached key and value), and divide the bandwidth by their
    // bytes.
    let _ = (config, bandwidth, cached_tokens);
    todo!("decode_speed_bound")
}
