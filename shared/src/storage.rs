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

use ndarray::{ArcArray, ArrayViewMut, IxDyn};

use crate::error::{Error, Result, f_checked_numel, shape_list};
use crate::tensor::{Element, Tensor};

/// An empty `Vec` with room for exactly the elements of `shape`, or an error.
///
/// # Shapes
/// `shape`: the shape of the tensor about to be made.
pub(crate) fn f_alloc<E: Element>(op: &'static str, shape: &[usize]) -> Result<Vec<E>> {
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

/// The zeros of a tensor of `shape`, written by the current rayon pool's threads when there
/// are many (see [`crate::creation::zeros_in_parallel`]), or the error of [`f_alloc`].
///
/// # Shapes
/// Returns the product of `shape` zeros.
pub(crate) fn f_zeros_in_parallel(op: &'static str, shape: &[usize]) -> Result<Vec<f32>> {
    let mut values = f_alloc(op, shape)?;
    crate::creation::push_zeros_in_parallel(&mut values, shape.iter().product());
    Ok(values)
}

/// A tensor of `shape` whose elements `fill` writes (in row-major order, through a mutable
/// view that starts out holding `E::default()`), or the error of [`f_alloc`].
///
/// # Shapes
/// Returns `shape`.
pub(crate) fn f_new<E: Element>(
    op: &'static str,
    shape: &[usize],
    fill: impl FnOnce(ArrayViewMut<'_, E, IxDyn>),
) -> Result<Tensor<E>> {
    let mut values = f_alloc(op, shape)?;
    values.resize(shape.iter().product(), E::default());
    let mut array = ArcArray::from_shape_vec(IxDyn(shape), values)
        .expect("the element count was checked by f_alloc");
    fill(array.view_mut());
    Ok(Tensor::from_array(array))
}

/// A tensor of `shape` holding `values`, which the caller pushed into a `Vec` from
/// [`f_alloc`] (so that its size was checked before it was filled).
///
/// # Shapes
/// `values.len()` is the product of `shape`.
pub(crate) fn from_checked_vec<E: Element>(values: Vec<E>, shape: &[usize]) -> Tensor<E> {
    Tensor::from_array(
        ArcArray::from_shape_vec(IxDyn(shape), values)
            .expect("the values were allocated for this shape"),
    )
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

    #[test]
    fn the_fill_writes_in_row_major_order() {
        let t = f_new::<f32>("test", &[2, 2], |mut out| {
            for (i, x) in out.iter_mut().enumerate() {
                *x = i as f32;
            }
        })
        .unwrap();
        assert_eq!(t.to_vec(), vec![0.0, 1.0, 2.0, 3.0]);
    }
}
