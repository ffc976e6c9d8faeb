//! The scores of multi-head latent attention's absorbed path: `W_UK` folded into the
//! query, so the cached latents are scored as they are.

use shared::Tensor;

/// Every head's scores against the cached tokens, `(q_nope · (W_UK c) + q_pe · k_pe) ·
/// scale`, computed without expanding any latent: `q_nope · (W_UK c) = (q_nope W_UK) · c`.
///
/// # Shapes
/// `q_nope`: `[batch, heads, queries, nope_dim]`; `q_pe`: `[batch, heads, queries,
/// rope_dim]`; `w_uk`: `[heads, nope_dim, latent_dim]`; `latent`: `[batch, cached,
/// latent_dim]`; `rope_key`: `[batch, cached, rope_dim]`. Returns `[batch, heads, queries,
/// cached]`.
// ANCHOR: absorbed_scores
pub fn absorbed_scores(
    q_nope: &Tensor,
    q_pe: &Tensor,
    w_uk: &Tensor,
    latent: &Tensor,
    rope_key: &Tensor,
    scale: f32,
) -> Tensor {
    let q_latent = q_nope.matmul(w_uk); // [b, heads, queries, latent_dim]
    let (latent, rope_key) = (latent.unsqueeze(1), rope_key.unsqueeze(1));
    (q_latent.matmul(&latent.transpose(2, 3))
        + q_pe.matmul(&rope_key.transpose(2, 3)))
        * scale
}
// ANCHOR_END: absorbed_scores
