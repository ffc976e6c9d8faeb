//! Exercise: how many parameters a whole model learns. Replace the `todo!()`; test with
//! `cargo test -p ch13-block --features exercise model_parameter_count`.

use super::ModelShape;

/// Every parameter of a GPT-style model of the shape `m`: the two embeddings, `n_layers`
/// blocks (two layer norms, attention, the MLP), the final layer norm, and the output head
/// unless it is tied to the token embedding.
///
/// # Shapes
/// Returns a count (`u64`: large models pass what a 32-bit `usize` holds).
pub fn model_parameter_count(m: &ModelShape) -> u64 {
    // TODO: predict GPT-2 small and GPT-2 medium first (d_model 1024, 24 blocks, the rest
    // as small). Then count, part by part, what each module holds: which parts lose
    // something without biases, and what does an untied output head add?
    let _ = m;
    todo!("model_parameter_count")
}
