//! llama.cpp's rows of `W_q` and `W_k`, put back in the order chapter 15's RoPE expects.
//! Exercise: see `cargo run -p learn -- hint ch20-real-model unpermute_rows`.

/// The rows of a `[heads · head_dim, d_in]` weight reordered from interleaved pairs to
/// half-split ones, head by head.
///
/// # Shapes
/// `weight`: `heads · head_dim` rows of `d_in` values, row-major. Returns the same shape.
pub fn unpermute_rows(
    weight: &[f32],
    heads: usize,
    head_dim: usize,
    d_in: usize,
) -> Vec<f32> {
    // TODO: in every head, llama.cpp stored the row of half-split feature `i` at row `2i`
    // and the row of feature `i + head_dim/2` at row `2i + 1`; return the rows in
    // half-split order (features 0 .. head_dim of each head), `d_in` values a row.
    let _ = (weight, heads, head_dim, d_in);
    todo!("unpermute_rows")
}
