//! How PyTorch's CPU back-end orders its arithmetic, reproduced so that every printed digit
//! is PyTorch's: the orders of MKL's matrix products, the packed GEMM for large ones, the
//! cascade sums, SLEEF's `exp` and `log`, the GELU formulas, the elementwise loop of GELU
//! and SiLU (its blocks in vector lanes), layer_norm's moments, a float `arange`, the
//! elementwise loop's vectors, libstdc++'s sorting order, the softmax lanes, the normal
//! sampler's vector `log` and `sincos`, and the one choice of instruction set
//! ([`isa::Isa`]).
//!
//! The operations in [`crate::ops`] say what they compute (PyTorch's semantics, shapes,
//! errors) and call one of these. Each file opens with the rule it reproduces and where it
//! was measured. Nothing here is public: chapters that need an exact primitive to print
//! PyTorch's digits take it from [`crate::exact`].

pub(crate) mod arange;
pub(crate) mod avx_mathfun;
pub(crate) mod batched;
pub(crate) mod cascade_sum;
pub(crate) mod column_sweeps;
pub(crate) mod dot_orders;
pub(crate) mod elementwise;
pub(crate) mod exp_rows;
pub(crate) mod gcc_order;
pub(crate) mod gelu;
pub(crate) mod gemm;
pub(crate) mod lanes;
pub(crate) mod matmul;
pub(crate) mod packed_once;
pub(crate) mod parallel;
pub(crate) mod row_dots;
pub(crate) mod silu;
pub(crate) mod softmax;
pub(crate) mod vec_math;
pub(crate) mod vector_loop;
pub(crate) mod welford;
