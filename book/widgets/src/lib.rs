//! The book's interactive widgets, compiled to WebAssembly for the pages of the book.
//!
//! Everything a page shows is computed by the chapters' own code, so the numbers a reader
//! sees in the browser are the numbers `cargo run` prints:
//! - [`chapters`]: every chapter's printed story, for the "run this chapter" panels;
//! - [`heatmap`]: a chapter's attention weights under the settings a reader picks;
//! - [`blocks`]: chapter 17's block pool filling as requests arrive;
//! - [`gpu`]: the inputs of chapter 21's WebGPU kernels, which the page runs itself, and
//!   chapter 9's result on the CPU to compare them with;
//! - [`controls`]: which settings each chapter's widget offers, and where they start;
//! - [`request`]: the one entry point a page calls, a request in and an answer out,
//!   both JSON.
//!
//! `scripts/build-wasm.sh` compiles this crate to `wasm32-unknown-unknown`; the functions
//! the page calls are in [`abi`], a plain C interface over the module's memory (no
//! JavaScript glue to generate). Natively the same crate builds the `widget-numbers`
//! binary, which answers the same requests, so the browser check compares the page with
//! the native code.

pub mod abi;
pub mod blocks;
pub mod chapters;
pub mod controls;
pub mod gpu;
pub mod heatmap;
pub mod request;
pub mod seed;
