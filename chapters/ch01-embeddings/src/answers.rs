//! The answers the chapter's prediction exercises choose from: each question is a function
//! that returns one of these, and its test measures which one is right.

/// How closely two ways of computing the same numbers agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// Every number is the same `f32`, bit for bit.
    BitForBit,
    /// The numbers differ in their last bits, as sums taken in another order do.
    UpToRounding,
}
