//! Chapter 20's product of one row by a matrix kept in quantised blocks, faster. Version 1
//! is the listing, [`QuantMatrix::times_row`](ch20_real_model::quantised::QuantMatrix::times_row),
//! which stays in the chapter:
//!
//! - [`v2_same_bits`]: each block's weights computed in vector instructions, the same
//!   operations on the same numbers: the listing's bits.
//!
//! A model takes a version with
//! [`QuantModel::with_one_row_product`](ch20_real_model::quantised::QuantModel::with_one_row_product).

pub mod v2_same_bits;
