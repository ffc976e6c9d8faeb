//! The cache of multi-head latent attention, in bytes per token.

/// Bytes one token adds to an MLA cache: every layer stores the compressed latent
/// (`latent_dim` values) and the decoupled RoPE key shared by all heads (`rope_dim`
/// values), and nothing per head.
///
/// # Shapes
/// Scalars: counts, and 2 bytes per value for bfloat16.
// ANCHOR: mla_bytes
pub fn mla_bytes_per_token(
    layers: usize,
    latent_dim: usize,
    rope_dim: usize,
    bytes_per_value: usize,
) -> u64 {
    (layers * (latent_dim + rope_dim) * bytes_per_value) as u64
}
// ANCHOR_END: mla_bytes
