//! transformers' rows of `W_q` and `W_k`, written as llama.cpp's converter writes them.
//! Exercise: see `cargo run -p learn -- hint ch20-real-model interleave_rows`.

/// The rows of a `[heads · head_dim, d_in]` weight reordered from half-split pairs to
/// interleaved ones, head by head.
///
/// # Shapes
/// `weight`: `heads · head_dim` rows of `d_in` values, row-major. Returns the same shape.
pub fn interleave_rows(
    weight: &[f32],
    heads: usize,
    head_dim: usize,
    d_in: usize,
) -> Vec<f32> {
    // TODO: in every head, transformers keeps the row of feature `i` of each RoPE pair in
    // the first half and its partner, feature `i + head_dim/2`, in the second; return the
    // rows in the order a GGUF file stores them, each pair's two rows side by side, `d_in`
    // values a row.
    let _ = (weight, heads, head_dim, d_in);
    todo!("interleave_rows")
}
