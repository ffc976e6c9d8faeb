//! The few exact primitives a chapter needs to print PyTorch's digits where it computes
//! something itself, rather than through a [`Tensor`](crate::Tensor) operation. Everything
//! else about PyTorch's order of operations stays inside the crate.
//!
//! - [`expf_u10`]: the `exp` PyTorch's vectorised CPU kernels use (SLEEF's, within 1 ulp);
//! - [`tanhf_u10`]: the `tanh` of those kernels (SLEEF's, within 1 ulp), and
//!   [`gelu_ranges`] and [`silu_ranges`]: how GELU's and SiLU's kernels (forward and
//!   backward) cut a tensor between threads;
//! - [`zip_in_ranges`]: the elementwise loop of those kernels' backward passes (whole
//!   blocks of vectors, then each range's tail), with [`expf_u10_branch_free`] and
//!   [`tanhf_u10_branch_free`], the same two functions bit for bit without a branch, so
//!   that the loop runs them in vector lanes;
//! - [`layer_norm_moments`]: the mean and biased variance of one row as `layer_norm`'s
//!   kernel computes them (its backward reuses them), and
//!   [`compiled_for_this_processor`], to run such a row's arithmetic with the fused
//!   multiply-add instructions of this processor (the same bits as without);
//! - [`Capability`], [`capability`], [`set_capability`]: which build of PyTorch's CPU
//!   kernels is followed (its vector width decides how sums are split into lanes);
//!   [`ThreadSettings`]: that choice and PyTorch's thread count, taken along to the threads
//!   a chapter hands work to;
//! - [`gemm_with`]: the packed matrix product on a chosen instruction set (for timing it);
//! - [`row_dots_part`]: some outputs of a one-row product `x·Wᵀ` in the order
//!   `Linear::forward` adds them (MKL's `sgemv`), from rows of `W` the caller supplies (a
//!   quantised weight's rows, dequantised a few at a time).

pub use crate::cpu::{Capability, ThreadSettings, capability, set_capability};
pub use crate::kernels::elementwise::zip_in_ranges;
pub use crate::kernels::gelu::{
    gelu_ranges, sleef_tanhf as tanhf_u10,
    sleef_tanhf_branch_free as tanhf_u10_branch_free,
};
pub use crate::kernels::gemm::gemm_with;
pub use crate::kernels::lanes::compiled_for_this_processor;
pub use crate::kernels::row_dots::row_dots_part;
pub use crate::kernels::silu::silu_ranges;
pub use crate::kernels::vec_math::{
    expf_u10, expf_u10_steps as expf_u10_branch_free,
};
pub use crate::kernels::welford::row_moments as layer_norm_moments;
