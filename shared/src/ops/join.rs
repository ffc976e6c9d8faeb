//! Joining tensors: `cat` along an existing dim, `stack` along a new one, and `repeat`.

use std::borrow::Borrow;

use ndarray::{ArcArray, Axis, Dimension, IxDyn};

use crate::error::{Error, Result, or_panic, shape_list};
use crate::tensor::{Element, Tensor, normalize_dim};

/// `torch.cat(tensors, dim)`: joins tensors end to end along `dim`.
///
/// # Shapes
/// All shapes equal except along `dim`; the result's `dim` is the sum of theirs.
pub fn f_cat<E: Element, T: Borrow<Tensor<E>>>(tensors: &[T], dim: i64) -> Result<Tensor<E>> {
    let first = tensors.first().ok_or(Error::InvalidArgument {
        op: "cat",
        detail: "expected a non-empty list of tensors".into(),
    })?;
    let first = first.borrow();
    let d = normalize_dim("cat", dim, first.dim())?;
    for t in tensors {
        let t = t.borrow();
        let fits = t.dim() == first.dim()
            && (0..t.dim()).all(|i| i == d || t.dims()[i] == first.dims()[i]);
        if !fits {
            return Err(Error::Shape {
                op: "cat",
                detail: format!(
                    "sizes of tensors must match except in dimension {d} (shapes {} and {})",
                    shape_list(first.dims()),
                    shape_list(t.dims())
                ),
            });
        }
    }
    let views: Vec<_> = tensors.iter().map(|t| t.borrow().data.view()).collect();
    let data = ndarray::concatenate(Axis(d), &views).expect("shapes checked above");
    // Like PyTorch's, the result is a fresh row-major tensor, whatever the inputs' layouts.
    Ok(Tensor::from_array(
        data.as_standard_layout().into_owned().into_shared(),
    ))
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
pub fn f_stack<E: Element, T: Borrow<Tensor<E>>>(tensors: &[T], dim: i64) -> Result<Tensor<E>> {
    let first = tensors.first().ok_or(Error::InvalidArgument {
        op: "stack",
        detail: "expected a non-empty list of tensors".into(),
    })?;
    let first = first.borrow();
    let d = normalize_dim("stack", dim, first.dim() + 1)?;
    for t in tensors {
        let t = t.borrow();
        if t.dims() != first.dims() {
            return Err(Error::Shape {
                op: "stack",
                detail: format!(
                    "expects each tensor to be equal size, but got {} and {}",
                    shape_list(first.dims()),
                    shape_list(t.dims())
                ),
            });
        }
    }
    let views: Vec<_> = tensors.iter().map(|t| t.borrow().data.view()).collect();
    let data = ndarray::stack(Axis(d), &views).expect("shapes checked above");
    Ok(Tensor::from_array(
        data.as_standard_layout().into_owned().into_shared(),
    ))
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
                    "number of repeat dims ({}) can not be smaller than number of tensor dims \
                     ({}, shape {})",
                    repeats.len(),
                    self.dim(),
                    shape_list(self.dims())
                ),
            });
        }
        let mut padded = vec![1; repeats.len() - self.dim()];
        padded.extend_from_slice(self.dims());
        let source = self
            .data
            .view()
            .into_shape_with_order(IxDyn(&padded))
            .map(|v| v.to_shared())
            .unwrap_or_else(|_| {
                let c = self.contiguous();
                c.data
                    .into_shape_with_order(IxDyn(&padded))
                    .expect("contiguous")
            });
        let out_shape: Vec<usize> = padded.iter().zip(repeats).map(|(n, r)| n * r).collect();
        // Each output element reads the source element at its index modulo the source shape.
        let data = ArcArray::from_shape_fn(IxDyn(&out_shape), |index| {
            let src: Vec<usize> = (0..index.ndim()).map(|i| index[i] % padded[i]).collect();
            source[IxDyn(&src)]
        });
        Ok(Tensor::from_array(data))
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
            "cat: sizes of tensors must match except in dimension 0 (shapes [1, 2] and [1])"
        );
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
