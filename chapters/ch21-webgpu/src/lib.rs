//! # Chapter 21: attention on the GPU, from one invocation per row to FlashAttention
//!
//! FlashAttention (Dao et al., 2022, "FlashAttention: Fast and Memory-Efficient Exact
//! Attention with IO-Awareness") was made for a GPU's memory hierarchy: a large, slow
//! global memory that every invocation can read, a small, fast workgroup memory shared by
//! the invocations of one workgroup, and registers of each invocation's own. Chapter 9 ran
//! its tiles on the CPU; here the same algorithm runs as WebGPU compute kernels, written in
//! WGSL and started from Rust through wgpu, step by step:
//!
//! - [`device`]: finding an adapter and opening a device; [`error`]: what can go wrong;
//! - [`first_program`]: the first GPU program, adding two arrays: every step of the host
//!   code once, in one function;
//! - [`kernels`]: the four kernels, each a `.wgsl` file: one invocation per query row, one
//!   workgroup per row, FlashAttention's forward pass in tiles, split-KV decoding;
//! - [`workgroup_memory`] and [`tiles`]: how large a tile fits the device's workgroup
//!   memory;
//! - [`launch`]: the host code: buffers, pipelines, bind groups, dispatches, reading back;
//! - [`key_reads`]: how often each kernel reads a key from global memory;
//! - [`tolerance`]: how far a GPU's result may lie from the CPU's, derived from the inputs;
//! - [`timing`]: timing a kernel on the device.
//!
//! With `--features exercise`, three functions come from `exercises/` instead, where
//! the learner writes them: [`key_reads::key_reads_after_cache`],
//! [`workgroup_memory::largest_tile_k_with_scores`] and the WGSL of
//! [`kernels::WINDOW_TILES`].

pub mod device;
pub mod error;
pub mod first_program;
pub mod kernels;
pub mod key_reads;
pub mod launch;
pub mod narrative;
pub mod setup;
pub mod tiles;
pub mod timing;
pub mod tolerance;
pub mod workgroup_memory;
