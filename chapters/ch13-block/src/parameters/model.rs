//! The parameter count of a whole model, kept in its own file because it is an exercise.

use super::ModelShape;

/// Every parameter of a GPT-style model of the shape `m`: the two embeddings, `n_layers`
/// blocks (two layer norms, attention, the MLP), the final layer norm, and the output head
/// unless it is tied to the token embedding. GPT-2 small: 124 439 808.
///
/// # Shapes
/// Returns a count (`u64`: large models pass what a 32-bit `usize` holds).
// ANCHOR: model_parameter_count
pub fn model_parameter_count(m: &ModelShape) -> u64 {
    let [v, c, d, layers] =
        [m.vocab_size, m.context_length, m.d_model, m.n_layers].map(|n| n as u64);
    let bias = u64::from(m.bias);
    let layer_norm = d + bias * d; // weight, and a bias when there are biases
    let attention = 4 * d * d + bias * 4 * d; // W_query, W_key, W_value, out_proj
    let mlp = 8 * d * d + bias * (4 * d + d); // c_fc [4d, d], c_proj [d, 4d]
    let block = 2 * layer_norm + attention + mlp;
    let head = if m.tied_output { 0 } else { v * d };
    v * d + c * d + layers * block + layer_norm + head
}
// ANCHOR_END: model_parameter_count
