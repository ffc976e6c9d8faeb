//! # Chapter 4: self-attention with trainable weights
//!
//! The attention of the previous chapters compared the input vectors with each other
//! directly, so there was nothing to learn. Here every token is first projected three times
//! by learned matrices: into a *query* (what this token looks for), a *key* (what it offers
//! to be found by) and a *value* (what it passes on when it is attended to). The scores are
//! dot products of queries with keys, divided by `√d_k` so that they do not grow with the
//! key size, turned into weights by softmax, and each token's output (its *context vector*)
//! is the weighted sum of the values. This is the scaled dot-product attention of Vaswani et
//! al., 2017, "Attention Is All You Need".
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

#[cfg_attr(feature = "exercise", path = "../exercises/forward.rs")]
pub mod forward;
pub mod narrative;
#[cfg_attr(feature = "exercise", path = "../exercises/scaled.rs")]
pub mod scaled;
pub mod self_attention;

pub use self_attention::{SelfAttentionV1, SelfAttentionV2};

/// The exercises and their hints, shown by `cargo run -p ch04-trainable -- hint NAME`.
pub const HINTS: &str = include_str!("../exercises/hints.md");
