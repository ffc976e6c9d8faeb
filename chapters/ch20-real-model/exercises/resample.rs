//! Resample ablation: a head's output replaced by what it gave on other tokens.
//! Exercise: see `cargo run -p learn -- hint ch20-real-model resample_ablate`.

use shared::Tensor;

/// `merged_heads` with head `head`'s columns (`head·head_dim .. (head+1)·head_dim`) taken
/// from `donor`, the merged heads of the same layer on other tokens; every other column
/// kept.
///
/// # Shapes
/// `merged_heads`, `donor`: `[batch, tokens, n_heads · head_dim]`. Returns the same shape.
pub fn resample_ablate(
    merged_heads: &Tensor,
    donor: &Tensor,
    head: usize,
    head_dim: usize,
) -> Tensor {
    // TODO: every value of head `head`'s columns comes from `donor` (same sequence, same
    // position, same column); every other value from `merged_heads`, unchanged.
    let _ = (merged_heads, donor, head, head_dim);
    todo!("resample_ablate")
}
