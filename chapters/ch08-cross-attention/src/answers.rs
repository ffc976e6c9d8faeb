//! The answers the chapter's prediction exercises choose from: each question is a function
//! that returns one of these, and its test measures which one is right.

/// What shuffling the other sequence does to one result of cross-attention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The same numbers in the same places (up to rounding).
    Unchanged,
    /// The same numbers, moved the way the tokens were (up to rounding).
    ShuffledLikeTheTokens,
    /// Other numbers.
    Different,
}
