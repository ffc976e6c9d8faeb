//! The other direction of [`crate::unpermute`]: transformers' half-split rows of `W_q` and
//! `W_k` reordered as llama.cpp's converter writes them into a GGUF file, for its
//! interleaved RoPE.

/// The rows of a `[heads · head_dim, d_in]` weight reordered from half-split pairs to
/// interleaved ones, head by head: row `i` of a head goes to `2i`, row `i + head_dim/2` to
/// `2i + 1`.
///
/// # Shapes
/// `weight`: `heads · head_dim` rows of `d_in` values, row-major. Returns the same shape.
pub fn interleave_rows(
    weight: &[f32],
    heads: usize,
    head_dim: usize,
    d_in: usize,
) -> Vec<f32> {
    let half = head_dim / 2;
    let mut out = vec![0.0; weight.len()];
    for h in 0..heads {
        for i in 0..half {
            for (pair, from) in [(0, i), (1, i + half)] {
                let from = h * head_dim + from;
                let to = h * head_dim + 2 * i + pair;
                out[to * d_in..(to + 1) * d_in]
                    .copy_from_slice(&weight[from * d_in..(from + 1) * d_in]);
            }
        }
    }
    out
}
