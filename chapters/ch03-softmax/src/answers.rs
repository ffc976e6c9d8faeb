//! The answers the chapter's prediction exercises choose from: each question is a function
//! that returns one of these, and its test measures which one is right.

/// What a change of the scores does to a row of softmax weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The same weights (up to rounding).
    Unchanged,
    /// The largest weight grows: the row moves towards one-hot.
    Sharper,
    /// The largest weight shrinks: the row moves towards uniform.
    Flatter,
}
