//! Joining tensors: `cat` along an existing dim, `stack` along a new one, and `repeat`.

use std::borrow::Borrow;

use ndarray::{ArrayView, ArrayViewMut, Axis, IxDyn, Zip};

use crate::error::{Error, Result, or_panic, shape_list};
use crate::ops::views::out_of_range_with_new_dim;
use crate::tensor::{Element, Tensor, normalize_dim};

/// `torch.cat(tensors, dim)`: joins tensors end to end along `dim`.
///
/// Like PyTorch, a 1-D tensor with no elements (shape `[0]`) is skipped whatever the other
/// shapes are: code that grows a result from `empty(&[0])` works for any rank.
///
/// # Shapes
/// All shapes equal except along `dim`; the result's `dim` is the sum of theirs. No 0-d
/// tensors.
pub fn f_cat<E: Element, T: Borrow<Tensor<E>>>(
    tensors: &[T],
    dim: i64,
) -> Result<Tensor<E>> {
    let tensors: Vec<&Tensor<E>> = tensors.iter().map(Borrow::borrow).collect();
    if tensors.is_empty() {
        return Err(Error::InvalidArgument {
            op: "cat",
            detail: "expected a non-empty list of tensors".into(),
        });
    }
    if let Some(i) = tensors.iter().position(|t| t.dim() == 0) {
        return Err(Error::Shape {
            op: "cat",
            detail: format!(
                "zero-dimensional tensor (at position {i}) cannot be concatenated"
            ),
        });
    }
    let skipped = |t: &Tensor<E>| t.sizes() == [0];
    // The shapes are checked against the first tensor that is not skipped.
    // Only empty 1-D tensors: PyTorch's legacy rule skips them all and checks no dim (a
    // `[0]` result whatever `dim` is, as `torch.cat([empty, empty], 1)` gives).
    let Some(first) = tensors.iter().copied().find(|t| !skipped(t)) else {
        return Ok(tensors[0].clone());
    };
    let d = normalize_dim("cat", dim, first.dim())?;
    for (i, t) in tensors.iter().enumerate().filter(|(_, t)| !skipped(t)) {
        let shapes = format!(
            "shapes {} and {}",
            shape_list(first.sizes()),
            shape_list(t.sizes())
        );
        if t.dim() != first.dim() {
            return Err(Error::Shape {
                op: "cat",
                detail: format!(
                    "Tensors must have same number of dimensions: got {} and {} ({shapes})",
                    first.dim(),
                    t.dim()
                ),
            });
        }
        if let Some(j) =
            (0..t.dim()).find(|&j| j != d && t.sizes()[j] != first.sizes()[j])
        {
            return Err(Error::Shape {
                op: "cat",
                detail: format!(
                    "Sizes of tensors must match except in dimension {d}. Expected size {} but \
                     got size {} for tensor number {i} in the list ({shapes})",
                    first.sizes()[j],
                    t.sizes()[j]
                ),
            });
        }
    }
    let views: Vec<_> = tensors
        .iter()
        .filter(|t| !skipped(t))
        .map(|t| t.array())
        .collect();
    let mut out_shape = first.sizes().to_vec();
    out_shape[d] = 0;
    for v in &views {
        out_shape[d] = out_shape[d]
            .checked_add(v.shape()[d])
            .ok_or_else(|| storage_overflow("cat", &out_shape))?;
    }
    // Like PyTorch's, the result is a fresh row-major tensor, whatever the inputs' layouts.
    crate::storage::f_new("cat", &out_shape, |mut out| {
        let mut at = 0;
        for v in &views {
            let n = v.shape()[d];
            copy_rows(out.slice_axis_mut(Axis(d), (at..at + n).into()), v.view());
            at += n;
        }
    })
}

/// `to.assign(&from)` one row (the last dim) at a time: a row contiguous on both sides is
/// one copy, where `assign` over any number of dims steps its index number by number (a
/// rotation's `cat` of two halves of every row spent most of its time there).
///
/// # Shapes
/// `to`, `from`: the same shape, at least one dim.
fn copy_rows<E: Element>(
    mut to: ArrayViewMut<'_, E, IxDyn>,
    from: ArrayView<'_, E, IxDyn>,
) {
    let last = Axis(to.ndim() - 1);
    Zip::from(to.lanes_mut(last))
        .and(from.lanes(last))
        .for_each(|mut to, from| match from.as_slice() {
            Some(from) if to.is_standard_layout() => to
                .as_slice_mut()
                .expect("a contiguous row")
                .copy_from_slice(from),
            _ => to.assign(&from),
        });
}

/// The overflow error of [`crate::error::f_checked_numel`] for a size that does not even
/// fit in one `usize`.
fn storage_overflow(op: &'static str, shape: &[usize]) -> Error {
    Error::Shape {
        op,
        detail: format!(
            "Storage size calculation overflowed with sizes={} and more",
            shape_list(shape)
        ),
    }
}

/// Plain form of [`f_cat`].
#[track_caller]
pub fn cat<E: Element, T: Borrow<Tensor<E>>>(tensors: &[T], dim: i64) -> Tensor<E> {
    or_panic(f_cat(tensors, dim))
}

/// `torch.stack(tensors, dim)`: puts same-shaped tensors side by side along a new dim.
///
/// # Shapes
/// All inputs `[s..]`; the result has `tensors.len()` inserted at `dim`.
pub fn f_stack<E: Element, T: Borrow<Tensor<E>>>(
    tensors: &[T],
    dim: i64,
) -> Result<Tensor<E>> {
    let first = tensors.first().ok_or(Error::InvalidArgument {
        op: "stack",
        detail: "stack expects a non-empty TensorList".into(),
    })?;
    let first = first.borrow();
    let d = normalize_dim("stack", dim, first.dim() + 1)
        .map_err(|_| out_of_range_with_new_dim("stack", dim, first.sizes()))?;
    for (i, t) in tensors.iter().enumerate() {
        let t = t.borrow();
        if t.sizes() != first.sizes() {
            return Err(Error::Shape {
                op: "stack",
                detail: format!(
                    "stack expects each tensor to be equal size, but got {} at entry 0 and {} \
                     at entry {i}",
                    shape_list(first.sizes()),
                    shape_list(t.sizes())
                ),
            });
        }
    }
    let mut out_shape = first.sizes().to_vec();
    out_shape.insert(d, tensors.len());
    crate::storage::f_new("stack", &out_shape, |mut out| {
        for (i, t) in tensors.iter().enumerate() {
            out.index_axis_mut(Axis(d), i).assign(&t.borrow().array());
        }
    })
}

/// Plain form of [`f_stack`].
#[track_caller]
pub fn stack<E: Element, T: Borrow<Tensor<E>>>(tensors: &[T], dim: i64) -> Tensor<E> {
    or_panic(f_stack(tensors, dim))
}

impl<E: Element> Tensor<E> {
    /// `t.repeat(repeats)`: tiles the tensor `repeats[i]` times along each dim. With more
    /// repeats than dims, the tensor first gains leading dims of size 1, so
    /// `x.repeat(&[3, 1, 1])` on a `[16, 6]` matrix stacks three copies: `[3, 16, 6]`.
    ///
    /// # Shapes
    /// `repeats.len() >= ndim`; the result is `[repeats[i] * padded_shape[i]]`.
    pub fn f_repeat(&self, repeats: &[usize]) -> Result<Tensor<E>> {
        if repeats.len() < self.dim() {
            return Err(Error::Shape {
                op: "repeat",
                detail: format!(
                    "Number of dimensions of repeat dims can not be smaller than number of \
                     dimensions of tensor (repeats {repeats:?} for shape {})",
                    shape_list(self.sizes())
                ),
            });
        }
        let mut padded = vec![1; repeats.len() - self.dim()];
        padded.extend_from_slice(self.sizes());
        let source = self
            .array()
            .into_shape_with_order(IxDyn(&padded))
            .map(|v| v.to_shared())
            .unwrap_or_else(|_| {
                let c = self.contiguous();
                c.stored
                    .into_shape_with_order(IxDyn(&padded))
                    .expect("contiguous")
            });
        let mut out_shape = Vec::with_capacity(padded.len());
        for (n, r) in padded.iter().zip(repeats) {
            // Checked: `[2, 3].repeat([2^62, 2^62])` must not wrap around to a small tensor.
            let size = n.checked_mul(*r).ok_or_else(|| Error::Shape {
                op: "repeat",
                detail: format!(
                    "Storage size calculation overflowed: repeats {repeats:?} of shape {}",
                    shape_list(self.sizes())
                ),
            })?;
            out_shape.push(size);
        }
        // Each output element reads the source element at its index modulo the source shape.
        crate::storage::f_new("repeat", &out_shape, |mut out| {
            let mut src = vec![0; padded.len()];
            for (index, o) in out.indexed_iter_mut() {
                for (i, s) in src.iter_mut().enumerate() {
                    *s = index[i] % padded[i];
                }
                *o = source[IxDyn(&src)];
            }
        })
    }

    /// Plain form of [`Tensor::f_repeat`].
    #[track_caller]
    pub fn repeat(&self, repeats: &[usize]) -> Tensor<E> {
        or_panic(self.f_repeat(repeats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor;

    #[test]
    fn cat_and_stack() {
        let a = tensor!([[1.0, 2.0]]);
        let b = tensor!([[3.0, 4.0]]);
        assert_eq!(cat(&[&a, &b], 0).shape(), [2, 2]);
        assert_eq!(cat(&[&a, &b], -1).to_vec(), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(stack(&[a.clone(), b.clone()], 0).shape(), [2, 1, 2]);
        let err = f_cat(&[&a, &tensor!([1.0])], 0).unwrap_err().to_string();
        assert_eq!(
            err,
            "cat: Tensors must have same number of dimensions: got 2 and 1 (shapes [1, 2] and [1])"
        );
        // A 1-D tensor of no elements is skipped, as in PyTorch.
        assert_eq!(cat(&[&a, &crate::zeros(&[0])], 1).shape(), [1, 2]);
    }

    proptest::proptest! {
        /// Pieces in any layout (row-major, transposed, narrowed) join as ndarray's own
        /// `concatenate` joins them.
        #[test]
        fn cat_joins_pieces_of_any_layout(
            sizes in proptest::collection::vec(1usize..5, 3),
            dim in 0usize..3,
            transposed in proptest::bool::ANY,
            cut in 0usize..4,
        ) {
            let n: usize = sizes.iter().product();
            let whole = Tensor::from_vec((0..n).map(|i| i as f32).collect(), &sizes);
            let row_major = Tensor::from_vec((0..n).map(|i| -(i as f32)).collect(), &sizes);
            let mut pieces = vec![whole.clone(), row_major];
            if transposed {
                // The transpose of a tensor of transposed sizes: the same sizes, not
                // contiguous.
                let flipped = [sizes[2], sizes[1], sizes[0]];
                let t = Tensor::from_vec((0..n).map(|i| 0.5 * i as f32).collect(), &flipped);
                pieces.push(t.transpose(0, 2));
            }
            // A narrowed view along `dim` (rows that are not contiguous in the last dim).
            let keep = sizes[dim] - cut.min(sizes[dim] - 1);
            pieces.push(whole.narrow(dim as i64, 0, keep));
            let joined = cat(&pieces, dim as i64);
            let views: Vec<_> = pieces.iter().map(|p| p.array()).collect();
            let views: Vec<_> = views.iter().map(|v| v.view()).collect();
            let expected = ndarray::concatenate(Axis(dim), &views).unwrap();
            proptest::prop_assert_eq!(joined.sizes(), expected.shape());
            proptest::prop_assert_eq!(joined.to_vec(), expected.iter().copied().collect::<Vec<_>>());
        }
    }

    #[test]
    fn repeat_adds_leading_dims() {
        let m = tensor!([[1, 2], [3, 4]]);
        let r = m.repeat(&[3, 1, 1]);
        assert_eq!(r.shape(), [3, 2, 2]);
        assert_eq!(r.get(2).to_vec(), vec![1, 2, 3, 4]);
        assert_eq!(m.repeat(&[1, 2]).to_vec(), vec![1, 2, 1, 2, 3, 4, 3, 4]);
    }
}
