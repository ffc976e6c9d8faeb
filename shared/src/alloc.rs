//! Where the memory of a new tensor comes from: one checked path for every operation whose
//! result can be larger than its inputs (creation, broadcasting, `repeat`, `expand`, `cat`,
//! products).
//!
//! A size is checked twice before any memory is touched: its element count and its byte
//! count must fit in the address space (else PyTorch's "Storage size calculation
//! overflowed"), and the memory must then really be granted (`try_reserve_exact`, else
//! PyTorch's "can't allocate memory: you tried to allocate N bytes"). Either way the caller
//! gets an [`Error`] naming the operation, the shape and the bytes, in debug and release
//! builds alike, instead of a `capacity overflow` panic or an abort of the whole program
//! (which is what a plain `Vec::with_capacity` of terabytes does).

use rayon::iter::IndexedParallelIterator;

use crate::element::Element;
use crate::error::{Error, Result, f_checked_numel, shape_list};

/// An empty `Vec` with room for exactly the elements of `shape`, or an error.
///
/// # Shapes
/// `shape`: the shape of the tensor about to be made.
pub(crate) fn f_alloc<E: Element>(
    op: &'static str,
    shape: &[usize],
) -> Result<Vec<E>> {
    let numel = f_checked_numel(op, shape, std::mem::size_of::<E>())?;
    let mut values = Vec::new();
    values
        .try_reserve_exact(numel)
        .map_err(|_| Error::InvalidArgument {
            op,
            detail: format!(
                "can't allocate memory: you tried to allocate {} bytes (shape {})",
                // Cannot overflow: `f_checked_numel` checked the byte count.
                numel * std::mem::size_of::<E>(),
                shape_list(shape)
            ),
        })?;
    Ok(values)
}

/// Fills `values` (emptied first) with `len` zeros as [`crate::creation::zeros_in_parallel`] does, in the
/// memory it already holds when it has room for them.
pub(crate) fn push_zeros_in_parallel(values: &mut Vec<f32>, len: usize) {
    // Below this (256 KiB), one thread clears the buffer sooner than it could hand out work.
    const MIN_PARALLEL: usize = 1 << 16;
    if len < MIN_PARALLEL {
        values.clear();
        values.resize(len, 0.0);
    } else {
        rayon::iter::repeat_n(0.0f32, len).collect_into_vec(values);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_size_is_an_error_naming_the_op_shape_and_bytes() {
        let err = f_alloc::<f32>("add", &[1 << 20, 1 << 20]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "add: can't allocate memory: you tried to allocate 4398046511104 bytes \
             (shape [1048576, 1048576])"
        );
        let err = f_alloc::<i64>("randint", &[1 << 31, 1 << 31]).unwrap_err();
        assert!(err.to_string().contains("overflowed"), "{err}");
        let err = f_alloc::<f32>("eye", &[1 << 62, 4]).unwrap_err();
        assert!(err.to_string().contains("overflowed"), "{err}");
    }
}
