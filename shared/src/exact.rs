//! The few exact primitives a chapter needs to print PyTorch's digits where it computes
//! something itself, rather than through a [`Tensor`](crate::Tensor) operation. Everything
//! else about PyTorch's order of operations stays inside the crate.
//!
//! - [`expf_u10`]: the `exp` PyTorch's vectorised CPU kernels use (SLEEF's, within 1 ulp);
//! - [`Capability`], [`capability`], [`set_capability`]: which build of PyTorch's CPU
//!   kernels is followed (its vector width decides how sums are split into lanes);
//!   [`ThreadSettings`]: that choice and PyTorch's thread count, taken along to the threads
//!   a chapter hands work to;
//! - [`gemm_with`]: the packed matrix product on a chosen instruction set (for timing it).

pub use crate::cpu::{Capability, ThreadSettings, capability, set_capability};
pub use crate::kernels::gemm::gemm_with;
pub use crate::kernels::vec_math::expf_u10;
