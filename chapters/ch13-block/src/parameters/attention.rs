//! The parameter count of multi-head attention, kept in its own file because it is an
//! exercise.

/// The parameters of chapter 7's `MultiHeadAttention(d_model, d_model, ..)`: three
/// projections `d_model × d_model` (with a bias each when `qkv_bias`) and `out_proj`,
/// `d_model × d_model` with its bias. The number of heads does not matter: the heads split
/// the projections, they do not add to them. GPT-2 small (`d_model = 768`, biases):
/// `4·768·768 + 4·768 = 2 362 368`.
// ANCHOR: attention_parameter_count
pub fn attention_parameter_count(d_model: usize, qkv_bias: bool) -> usize {
    let projection = d_model * d_model;
    let qkv_biases = if qkv_bias { 3 * d_model } else { 0 };
    3 * projection + qkv_biases + (projection + d_model)
}
// ANCHOR_END: attention_parameter_count
