//! The answers the chapter's prediction exercises choose from: each question is a function
//! that returns one of these, and its test measures which one is right.

/// Two ways of computing something, compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The same numbers, up to rounding.
    Same,
    /// Different numbers.
    Different,
}
