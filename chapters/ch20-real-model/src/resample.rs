//! Resample ablation: a head's output replaced by what it gave on other tokens.

use shared::{Tensor, where_};

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
    let width = merged_heads.size(-1);
    let from_donor: Vec<bool> = (0..width).map(|c| c / head_dim == head).collect();
    where_(&Tensor::from_vec(from_donor, &[width]), donor, merged_heads)
}
