//! Chapter 18's DeepSeek Sparse Attention kernel, faster. Version 1 is the listing,
//! [`dsa_kernel`](ch18_linear_attention::sparse_kernel::dsa_kernel), which stays in the
//! chapter:
//!
//! - [`v2_in_place`]: the listing's keys chosen by their scores' bits, the attention
//!   computed where the kept keys lie: the same keys, outputs within a derived bound of the
//!   listing;
//! - [`v2_tiled_same_bits`]: the block selection's attention
//!   ([`sparse_attention_tiled`](ch18_linear_attention::sparse::sparse_attention_tiled)) by
//!   version 2 of chapter 16's kernel: the listing's bits.
//!
//! What the first is built from: [`top_k_radix`] (the top `k` by the scores' bits), whose
//! passes over every score are [`top_k_compact`].

pub mod top_k_compact;
pub mod top_k_radix;
pub mod v2_in_place;
pub mod v2_tiled_same_bits;
