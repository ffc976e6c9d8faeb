//! The answers a prediction exercise chooses from.

/// What reaches `A` at the first step, when `B` is still zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GradOfA {
    /// Exactly zero, in every entry.
    Zero,
    /// Numbers as large as `B`'s gradient.
    AsLargeAsB,
    /// Small numbers, but not zero.
    SmallButNotZero,
}
