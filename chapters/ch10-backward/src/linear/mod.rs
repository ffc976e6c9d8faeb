//! `nn.Linear`'s backward: `y = x·Wᵀ + b`.
//!
//! Flatten every leading dim of `x` into `T` rows (`x2`: `[T, d_in]`, as PyTorch does for
//! a batch): `y2 = x2·Wᵀ + b`. The matrix-product rule gives
//! - `grad_x2 = grad_y2·W` (`[T, d_out]·[d_out, d_in]`),
//! - `grad_Wᵀ = x2ᵀ·grad_y2`, so `grad_W = grad_y2ᵀ·x2` (`[d_out, T]·[T, d_in]`): every
//!   token of every sequence adds its share, because all of them used the same `W`;
//! - `grad_b = Σ_t grad_y2[t]`, the column sums: `b` was added to every row.

use shared::Tensor;

#[cfg_attr(feature = "exercise", path = "../../exercises/linear_backward.rs")]
mod backward;
pub use backward::linear_backward;

/// The gradients of one `Linear` layer's parameters and of its input.
#[derive(Clone, Debug)]
pub struct LinearGrads {
    /// `[out_features, in_features]`, like the weight.
    pub weight: Tensor,
    /// `[out_features]`, or `None` for a layer without bias.
    pub bias: Option<Tensor>,
    /// The shape of the layer's input `x`: `[.., in_features]`.
    pub input: Tensor,
}
