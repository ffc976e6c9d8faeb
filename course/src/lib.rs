//! # course: the harness around the chapters of *Attention from Scratch*
//!
//! The tensors, operations and printing live in the crate `shared`; this crate holds what
//! makes a chapter a chapter of the course:
//!
//! - [`narrative`]: a chapter's printed story ([`Narrative`], its [`Step`]s, the [`Seed`] it
//!   runs with), the Python print helpers, and the output tests against PyTorch
//!   ([`chapter_output_tests!`]);
//! - [`platform`] and [`printed`]: whether this run computes as the reference platform
//!   where PyTorch's outputs were made, and the comparison of printed text within its
//!   printed digits used elsewhere (libtorch on another processor, a GPU);
//! - [`cli`]: the command line every chapter binary shares (the story, `--seed`,
//!   `--heatmaps`, `--device`, `doctor`);
//! - [`hints`]: a chapter's exercises and their hints, which `learn` shows;
//! - [`manifest`]: a chapter's `chapter.toml`, what the tools around it need to know;
//! - [`process`]: how a chapter's program runs long work: on a thread of its own rayon
//!   pool, with the allocator told to keep freed memory;
//! - `quiet_proptest` (feature `proptest`, for the exercises' tests): property tests that
//!   print one message when they fail.
//!
//! ```
//! use course::{Narrative, Seed};
//! use shared::{manual_seed, randn};
//!
//! fn narrative(seed: Seed) -> shared::Result<Narrative> {
//!     let mut story = Narrative::new("Chapter 0: Two numbers");
//!     manual_seed(seed.or(123));
//!     story.step("Two draws").print(randn(&[2]));
//!     Ok(story)
//! }
//! let text = narrative(Seed::ARTICLES).unwrap().to_string();
//! assert_eq!(text, "# Chapter 0: Two numbers\n\n## Two draws\ntensor([-0.1115,  0.1204])\n\n");
//! ```

pub mod cli;
pub mod doctor;
pub mod hints;
pub mod manifest;
pub mod narrative;
pub mod platform;
pub mod printed;
pub mod process;
#[cfg(not(target_arch = "wasm32"))]
pub mod quiet_proptest;

pub use narrative::{Narrative, Seed, Step};
