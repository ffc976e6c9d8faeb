//! Exercise (derive, then write): the scores of latent attention's absorbed path. Replace
//! the `todo!()`; test with
//! `cargo test -p ch17-inference --features exercise absorbed_scores`.

use shared::Tensor;

/// Every head's scores against the cached tokens, `(q_nope · (W_UK c) + q_pe · k_pe) ·
/// scale`, computed without expanding any latent: `q_nope · (W_UK c) = (q_nope W_UK) · c`.
///
/// # Shapes
/// `q_nope`: `[batch, heads, queries, nope_dim]`; `q_pe`: `[batch, heads, queries,
/// rope_dim]`; `w_uk`: `[heads, nope_dim, latent_dim]`; `latent`: `[batch, cached,
/// latent_dim]`; `rope_key`: `[batch, cached, rope_dim]`. Returns `[batch, heads, queries,
/// cached]`.
pub fn absorbed_scores(
    q_nope: &Tensor,
    q_pe: &Tensor,
    w_uk: &Tensor,
    latent: &Tensor,
    rope_key: &Tensor,
    scale: f32,
) -> Tensor {
    // TODO: fold W_UK into the query once, so that each head's query lives in the
    // latent's space; score it against every cached latent, add the scores of the shared
    // RoPE key, and scale. Which sizes does each product reduce over?
    let _ = (q_nope, q_pe, w_uk, latent, rope_key, scale);
    todo!("absorbed_scores")
}
