//! One error type for every operation that can fail on shapes, dims or indices.
//!
//! Each message starts with the operation's name and then says what was wrong with the
//! shapes involved, so a learner sees `matmul: mat1 and mat2 shapes cannot be multiplied
//! (6x3 and 2x2)` instead of an index panic from deep inside the crate.

/// What went wrong, and in which operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The shapes of the operands do not fit together (or do not fit the operation).
    #[error("{op}: {detail}")]
    Shape {
        /// The operation, as PyTorch names it (`matmul`, `view`, `cat`, ...).
        op: &'static str,
        /// What is wrong, naming the shapes involved.
        detail: String,
    },
    /// A dimension argument outside `[-ndim, ndim)`.
    #[error("{op}: dim {dim} is out of range for a tensor of {ndim} dimensions")]
    DimOutOfRange {
        /// The operation.
        op: &'static str,
        /// The dim as the caller gave it (negative dims count from the end).
        dim: i64,
        /// How many dims the tensor has.
        ndim: usize,
    },
    /// An index outside the size of the dimension it indexes.
    #[error("{op}: index {index} is out of bounds for dimension {dim} with size {size}")]
    IndexOutOfRange {
        /// The operation.
        op: &'static str,
        /// The index as the caller gave it.
        index: i64,
        /// The dimension indexed.
        dim: usize,
        /// The size of that dimension.
        size: usize,
    },
    /// An argument that is wrong whatever the shapes (a probability outside [0, 1], say).
    #[error("{op}: {detail}")]
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// A device that cannot be used here (unknown name, no `tch` feature, no GPU, ...).
    #[error("device: {detail}")]
    Device {
        /// What is missing, and how to fix it.
        detail: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Turns the `f_` form of an operation into its plain form: the same message, as a panic
/// that points at the caller's line (that is what `#[track_caller]` is for).
#[track_caller]
pub(crate) fn or_panic<T>(result: Result<T>) -> T {
    match result {
        Ok(value) => value,
        Err(error) => panic!("{error}"),
    }
}

/// Writes a shape the way PyTorch's matmul messages do: `6x3`.
pub(crate) fn shape_x(shape: &[usize]) -> String {
    shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

/// Writes a shape as a list: `[6, 3]`.
pub(crate) fn shape_list(shape: &[usize]) -> String {
    format!("{shape:?}")
}
