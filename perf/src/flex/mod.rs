//! Chapter 16's FlexAttention kernel, faster. Version 1 is the listing,
//! [`flex_kernel_over`](ch16_flex_attention::kernel::flex_kernel_over), which stays in the
//! chapter; every version here walks the same block mask through
//! [`BlockMask::visit`](ch16_flex_attention::block_mask::BlockMask::visit):
//!
//! - [`v2_same_bits`]: the listing's additions in the listing's order, in vector
//!   instructions: the listing's bits;
//! - [`v3_fused`]: chapter 9's arithmetic (fused multiply-adds, weights in base 2) on the
//!   same tiles: within a bound derived from the sizes of the listing.
//!
//! Both take their inputs through [`inputs`], checked as the listing checks them.

pub mod inputs;
pub mod v2_same_bits;
pub mod v3_fused;
