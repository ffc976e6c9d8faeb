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
    /// A dimension argument outside `[-ndim, ndim)` (a 0-d tensor accepts `0` and `-1`, as in
    /// PyTorch, where a scalar counts as one dim for dim arguments).
    #[error(
        "{op}: dim {dim} is out of range for a tensor of {} (expected to be in range of \
         [{}, {}], but got {dim})",
        rank(*ndim),
        -(*ndim.max(&1) as i64),
        *ndim.max(&1) as i64 - 1
    )]
    DimOutOfRange {
        /// The operation.
        op: &'static str,
        /// The dim as the caller gave it (negative dims count from the end).
        dim: i64,
        /// How many dims the tensor has.
        ndim: usize,
    },
    /// An index outside the size of the dimension it indexes.
    #[error(
        "{op}: index {index} is out of bounds for dimension {dim} with size {size}"
    )]
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

/// The rank in words, with the right number: `0 dimensions`, `1 dimension`, `2 dimensions`.
pub(crate) fn rank(ndim: usize) -> String {
    if ndim == 1 {
        "1 dimension".to_string()
    } else {
        format!("{ndim} dimensions")
    }
}

/// The number of elements of `shape`, or PyTorch's error when the product, or the bytes it
/// takes, does not fit in memory addresses (`[2^62, 4]` floats would wrap around to a small
/// number in unchecked arithmetic, and a tensor would silently come out empty).
///
/// # Shapes
/// `shape`: any list of sizes; `elem_bytes`: the size of one element.
pub(crate) fn f_checked_numel(
    op: &'static str,
    shape: &[usize],
    elem_bytes: usize,
) -> Result<usize> {
    // The product of the non-zero sizes must fit, even when a zero makes the tensor empty:
    // strides are computed from them (PyTorch checks the same: "Stride calculation overflowed").
    let mut product: usize = 1;
    for &d in shape {
        product = match product.checked_mul(d.max(1)) {
            Some(p) if p <= isize::MAX as usize => p,
            _ => return Err(overflow(op, shape)),
        };
    }
    if product
        .checked_mul(elem_bytes.max(1))
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(overflow(op, shape));
    }
    Ok(if shape.contains(&0) { 0 } else { product })
}

/// PyTorch's message for sizes whose product does not fit: `Storage size calculation
/// overflowed with sizes=[4611686018427387904, 4]`.
fn overflow(op: &'static str, shape: &[usize]) -> Error {
    Error::Shape {
        op,
        detail: format!(
            "Storage size calculation overflowed with sizes={}",
            shape_list(shape)
        ),
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
