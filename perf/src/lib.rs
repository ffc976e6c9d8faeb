//! # attention-perf: making it fast
//!
//! The chapters hold the lesson: each listing is the algorithm as the page shows it. What
//! makes a listing fast lives here, outside the chapters, numbered after the listing it
//! speeds up: version 1 is the chapter's listing, versions 2, 3, … are faster ones, each
//! with its contract in one line (the same bits, or within a bound derived from the sizes),
//! and each tested against the listing in `tests/`, as llm.c's `dev/cuda` checks kernel
//! `N` against the CPU reference. No chapter depends on this crate.
//!
//! - [`flex`]: chapter 16's FlexAttention kernel;
//! - [`linear`]: chapter 18's chunked linear attention and chunked Gated DeltaNet;
//! - [`dsa`]: chapter 18's DeepSeek Sparse Attention kernel;
//! - `quantised` (with the feature `real-model`): chapter 20's one-row product over
//!   quantised blocks;
//! - [`pinned`], [`settings`]: what the benchmarks (`benches/`) share: thread pools pinned
//!   to cores, sizes and criterion's settings from the environment;
//! - [`peak_memory`]: the peak memory of one call, for the examples that check what a
//!   chapter says a form of attention holds;
//! - [`command_line`]: the `--name value` arguments and flags of the timing examples.
//!
//! The benchmarks, the speed and memory examples (`examples/`) and the scripts that run
//! them and write the book's tables (`scripts/`) are here too; the appendix "Making it
//! fast" tells their story.

pub mod command_line;
pub mod dsa;
pub mod flex;
pub mod linear;
pub mod peak_memory;
pub mod pinned;
#[cfg(feature = "real-model")]
pub mod quantised;
pub mod settings;
