//! The cache of multi-head latent attention, in bytes per token.

/// Bytes one token adds to an MLA cache: every layer stores the compressed latent
/// (`latent_dim` values) and the decoupled RoPE key shared by all heads (`rope_dim`
/// values), and nothing per head.
///
/// # Shapes
/// Scalars: counts, and 2 bytes per value for bfloat16.
pub fn mla_bytes_per_token(
    layers: usize,
    latent_dim: usize,
    rope_dim: usize,
    bytes_per_value: usize,
) -> u64 {
    // TODO: what one layer stores for one token, times the layers, times the bytes of a
    // value. No key or value per head: that is the point of the latent.
    let _ = (layers, latent_dim, rope_dim, bytes_per_value);
    todo!("mla_bytes_per_token: the latent and the RoPE key, per layer")
}
