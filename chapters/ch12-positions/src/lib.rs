//! # Chapter 12: order, positions and rotary position embeddings
//!
//! Attention compares every query with every key, and nothing in that comparison says where
//! a token stands: shuffle the tokens and, without a mask, the outputs are shuffled the same
//! way. A language model must know that "dog bites man" is not "man bites dog", so the
//! positions are put in by hand. The original transformer adds a fixed pattern of sines and
//! cosines to every token (Vaswani et al., 2017, "Attention Is All You Need", §3.5); GPT-2
//! adds a learned vector per position instead; today's models (Llama, Mistral, Qwen, ...)
//! rotate every query and key by an angle proportional to its position (RoPE, Su et al.,
//! 2021, "RoFormer"), so that a query-key score depends only on how far apart they are.
//! RoPE is written in two conventions that pair up different features: this chapter builds
//! both and shows they are the same rotation.
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

// Attention alone ignores order.
pub mod order;

// Positions added to the tokens: fixed sinusoids, or learned vectors.
pub mod frequencies;

#[cfg_attr(feature = "exercise", path = "../exercises/sinusoidal.rs")]
pub mod sinusoidal;

pub mod learned;

// Positions as rotations of the queries and keys (RoPE), in its two conventions.
#[cfg_attr(feature = "exercise", path = "../exercises/rotate_half.rs")]
pub mod rotate_half;

#[cfg_attr(feature = "exercise", path = "../exercises/half_split.rs")]
pub mod half_split;

pub mod interleaved;

#[cfg_attr(feature = "exercise", path = "../exercises/pairing.rs")]
pub mod pairing;

// RoPE at given positions, inside attention, and over a longer context.
pub mod at_positions;

#[cfg_attr(feature = "exercise", path = "../exercises/rope_attention.rs")]
pub mod rope_attention;

#[cfg_attr(feature = "exercise", path = "../exercises/interpolation.rs")]
pub mod interpolation;

// What the chapter prints.
pub mod narrative;

pub use at_positions::rope_at;
pub use frequencies::{inv_freq, rope_angles};
pub use half_split::rope_half_split;
pub use interleaved::rope_interleaved;
pub use interpolation::interpolated_offset;
pub use learned::TokenAndPositionEmbedding;
pub use order::{inverse_permutation, permute_tokens};
pub use pairing::half_split_features;
pub use rope_attention::rope_attention_scores;
pub use rotate_half::rotate_half;
pub use sinusoidal::sinusoidal_encoding;
