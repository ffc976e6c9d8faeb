//! llama.cpp's rows of `W_q` and `W_k`, put back in the order chapter 15's RoPE expects.
//!
//! Chapter 12 built RoPE two ways: Meta's turns the *interleaved* pairs (features `2i` and
//! `2i + 1`), Hugging Face's the *half-split* pairs (features `i` and `i + d/2`). Both are
//! the same rotation of differently ordered features, so a checkpoint trained with one runs
//! with the other once the rows of `W_q` and `W_k` that make each head's features are
//! reordered. Hugging Face's Llama checkpoints are half-split; llama.cpp runs interleaved
//! RoPE, so its converter reorders every head's rows to interleaved: row `i` of the first
//! half goes to `2i`, row `i` of the second half to `2i + 1`. Reading its file, we undo that
//! (transformers' GGUF loader does the same). The values `W_v` makes are never rotated, so
//! its rows stay as they are.

/// The rows of a `[heads · head_dim, d_in]` weight reordered from interleaved pairs to
/// half-split ones, head by head: row `2i` of a head goes to `i`, row `2i + 1` to
/// `i + head_dim/2`.
///
/// A row is `d_in` floats, or, for a weight kept quantised, the bytes of its blocks.
///
/// # Shapes
/// `weight`: `heads · head_dim` rows of `d_in` values, row-major. Returns the same shape.
// ANCHOR: unpermute
pub fn unpermute_rows<T: Copy>(
    weight: &[T],
    heads: usize,
    head_dim: usize,
    d_in: usize,
) -> Vec<T> {
    let half = head_dim / 2;
    let mut out = weight.to_vec(); // every row is written over below
    for h in 0..heads {
        for i in 0..half {
            for (pair, to) in [(0, i), (1, i + half)] {
                let from = h * head_dim + 2 * i + pair;
                let to = h * head_dim + to;
                out[to * d_in..(to + 1) * d_in]
                    .copy_from_slice(&weight[from * d_in..(from + 1) * d_in]);
            }
        }
    }
    out
}
// ANCHOR_END: unpermute
