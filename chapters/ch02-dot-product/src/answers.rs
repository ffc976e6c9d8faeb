//! The answers the chapter's prediction exercises choose from: each question is a function
//! that returns one of these, and its test measures which one is right.

/// Two ways to score a query against a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// `x·y`, the chapter's scores.
    DotProduct,
    /// `x·y / (|x|·|y|)`, [`cosine_scores`](crate::top_key::cosine_scores).
    Cosine,
}
