//! # shared: a small tensor crate that computes, draws and prints like PyTorch
//!
//! Every chapter of *Attention from Scratch* builds on this crate; the course around the
//! chapters (their printed story, their command line) is the crate `course`. It mirrors
//! PyTorch's names (`manual_seed`, `randn`, `matmul`, `softmax`, `masked_fill`,
//! `nn::Linear`, ...) so a line of the PyTorch articles translates to one line of Rust, and
//! it reproduces PyTorch 2.13.0 bit for bit where the tutorials depend on it: the CPU random
//! generator, the initialisation of `nn.Linear` and `nn.Embedding`, dropout masks, and the
//! exact text of `print(tensor)`.
//!
//! ```
//! use shared::{manual_seed, randn, tensor};
//! let inputs = tensor!([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]]);
//! let scores = inputs.matmul(&inputs.t());
//! assert_eq!(scores.shape().to_string(), "torch.Size([2, 2])");
//! manual_seed(123);
//! assert_eq!(randn(&[2]).to_string(), "tensor([-0.1115,  0.1204])");
//! ```
//!
//! Operations that can fail on shapes come in two forms, as in `tch`: `f_matmul` returns a
//! [`Result`], `matmul` panics with the same message, which names the operation and the
//! shapes.

mod alloc;
pub mod backend;
pub mod cpu;
pub mod creation;
pub mod element;
pub mod error;
pub mod exact;
pub mod fmt;
pub mod identity;
mod kernels;
pub mod nn;
pub mod ops;
pub mod rng;
pub mod simd;
mod storage;
pub mod tensor;
pub mod testing;
pub mod viz;

pub use backend::{Device, device, set_device};
pub use cpu::{get_num_threads, set_num_threads};
pub use creation::{
    arange, empty, f_arange, f_empty, f_ones, f_rand, f_randn, f_zeros, ones, rand,
    randn, zeros,
};
pub use error::{Error, Result};
pub use fmt::Size;
pub use identity::{eye, eye_m, f_eye_m};
pub use ops::activation::GeluApproximate;
pub use ops::compare::{f_where_, where_};
pub use ops::einsum::{einsum, einsum_n, f_einsum, f_einsum_n};
pub use ops::join::{cat, f_cat, f_stack, stack};
pub use ops::outer::{f_polar, polar};
pub use ops::views::{IntoShape, Position};
pub use rng::{f_randint, manual_seed, randint};
/// The `tch` crate the libtorch back-end is built on, for code that calls libtorch itself
/// (chapter 9's benchmarks time PyTorch's own kernels through it), at the same version.
#[cfg(feature = "tch")]
pub use tch;
pub use tensor::{Element, Tensor};
