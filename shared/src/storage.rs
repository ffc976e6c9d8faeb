//! New tensors from checked memory ([`crate::alloc`]): filled through a mutable view, from
//! values already pushed, or all zeros.

use ndarray::{ArcArray, ArrayViewMut, IxDyn};

use crate::alloc::{f_alloc, push_zeros_in_parallel};
use crate::error::Result;
use crate::tensor::{Element, Tensor};

/// The zeros of a tensor of `shape`, written by the current rayon pool's threads when there
/// are many (see [`crate::creation::zeros_in_parallel`]), or the error of [`f_alloc`].
///
/// # Shapes
/// Returns the product of `shape` zeros.
pub(crate) fn f_zeros_in_parallel(
    op: &'static str,
    shape: &[usize],
) -> Result<Vec<f32>> {
    let mut values = f_alloc(op, shape)?;
    push_zeros_in_parallel(&mut values, shape.iter().product());
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
pub(crate) fn from_checked_vec<E: Element>(
    values: Vec<E>,
    shape: &[usize],
) -> Tensor<E> {
    Tensor::from_array(
        ArcArray::from_shape_vec(IxDyn(shape), values)
            .expect("the values were allocated for this shape"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
