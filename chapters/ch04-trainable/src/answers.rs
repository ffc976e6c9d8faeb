//! The answers the chapter's prediction exercises choose from: each question is a function
//! that returns one of these, and its test measures which one is right.

/// How a row's entropy changes, on average, as the key size `d_k` grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trend {
    /// It falls towards 0: the weights become one-hot.
    Falls,
    /// It stays about where it was.
    StaysAbout,
    /// It grows towards `ln n`: the weights become uniform.
    Grows,
}
