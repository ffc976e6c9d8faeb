//! # timing: what the chapters' benchmarks share
//!
//! - [`pinned`]: rayon pools whose threads are pinned one to a core, so that a timed call
//!   on two threads really runs on two cores;
//! - [`settings`]: sizes read from the environment, and criterion's settings for variants
//!   that take seconds a call (chapters 16 and 18, run by `scripts/bench-part4.sh`).

pub mod pinned;
pub mod settings;
