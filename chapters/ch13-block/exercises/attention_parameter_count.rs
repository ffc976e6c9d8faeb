//! Exercise: how many parameters multi-head attention learns. Replace the `todo!()`; test
//! with `cargo test -p ch13-block --features exercise attention_parameter_count`.

/// The parameters of chapter 7's `MultiHeadAttention(d_model, d_model, ..)`, with biases on
/// the query, key and value projections when `qkv_bias` (`out_proj` always has one).
pub fn attention_parameter_count(d_model: usize, qkv_bias: bool) -> usize {
    // TODO: add up the weights and biases of W_query, W_key, W_value and out_proj. Does the
    // number of heads matter?
    let _ = (d_model, qkv_bias);
    todo!("attention_parameter_count")
}
