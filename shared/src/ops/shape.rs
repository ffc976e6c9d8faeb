//! Reshaping by dims rather than by a full shape: `flatten` merges a run of dims into one,
//! `expand` repeats dims of size 1 to a larger size.
//!
//! `x.flatten(1, -1)` turns a batch of `[b, t, d]` into rows of `t·d` numbers;
//! `mask.expand(&[b, t, t])` gives every sequence of a batch the same `[1, t, t]` mask.

use ndarray::{Axis, IxDyn};

use crate::error::{Error, Result, or_panic, shape_list};
use crate::ops::views::IntoShape;
use crate::tensor::{Element, Tensor, normalize_dim};

impl<E: Element> Tensor<E> {
    /// `t.flatten(start_dim, end_dim)`: merges the dims from `start_dim` to `end_dim`
    /// (both included, negative counting from the end) into one. A view when the tensor is
    /// contiguous, a copy otherwise (as `reshape`). A 0-d tensor becomes `[1]`.
    ///
    /// # Shapes
    /// `[a, b, c, d]` with `(1, 2)` becomes `[a, b·c, d]`; `(0, -1)` gives `[a·b·c·d]`.
    pub fn f_flatten(&self, start_dim: i64, end_dim: i64) -> Result<Tensor<E>> {
        // A 0-d tensor counts as one dim here, as in PyTorch.
        let ndim = self.dim().max(1);
        let start = normalize_dim("flatten", start_dim, ndim)?;
        let end = normalize_dim("flatten", end_dim, ndim)?;
        if start > end {
            return Err(Error::InvalidArgument {
                op: "flatten",
                detail: format!(
                    "start_dim cannot come after end_dim (start_dim {start_dim}, end_dim \
                     {end_dim}, shape {})",
                    shape_list(self.sizes())
                ),
            });
        }
        if self.dim() == 0 {
            return self.f_reshape(&[1]);
        }
        let dims = self.sizes();
        let merged: usize = dims[start..=end].iter().product();
        let shape: Vec<i64> = dims[..start]
            .iter()
            .chain([&merged])
            .chain(&dims[end + 1..])
            .map(|&d| d as i64)
            .collect();
        self.f_reshape(&shape)
    }

    /// Plain form of [`Tensor::f_flatten`].
    #[track_caller]
    pub fn flatten(&self, start_dim: i64, end_dim: i64) -> Tensor<E> {
        or_panic(self.f_flatten(start_dim, end_dim))
    }

    /// `t.expand(sizes)`: repeats each dim of size 1 to the size asked; `-1` keeps a dim as
    /// it is, and new leading dims may be added. Other dims must keep their size.
    ///
    /// A view, as in PyTorch: the repeated dims step by 0, so nothing is copied, whatever
    /// the size (`zeros(&[1]).expand(&[1 << 40])` costs nothing until an operation reads
    /// every repeat into a result of its own). The view is not contiguous, and `view` can
    /// only regroup the dims its strides allow; `reshape` copies when it must.
    ///
    /// ```
    /// use shared::tensor;
    /// let column = tensor!([[1.0], [2.0], [3.0]]);
    /// let wide = column.expand(&[3, 4]);
    /// assert!(!wide.is_contiguous());
    /// assert!(wide.f_view(&[12]).is_err());
    /// assert_eq!(wide.reshape(&[12]).to_vec()[..5], [1.0, 1.0, 1.0, 1.0, 2.0]);
    /// ```
    ///
    /// # Shapes
    /// `sizes.len() >= ndim`; `[3, 1]` with `[2, 3, 4]` becomes `[2, 3, 4]`.
    pub fn f_expand(&self, sizes: impl IntoShape) -> Result<Tensor<E>> {
        let shape = self.f_expanded_shape(&sizes.into_shape())?;
        // A view allocates nothing, but its element count must fit, as PyTorch's `numel`.
        crate::error::f_checked_numel("expand", &shape, 1)?;
        // The stored elements gain the new leading dims, with size 1: each dim where they
        // have size 1 and `shape` more is a repeat, read with stride 0.
        let mut stored = self.stored.clone();
        while stored.ndim() < shape.len() {
            stored.insert_axis_inplace(Axis(0));
        }
        let repeats = stored.shape() != shape.as_slice();
        Ok(Tensor {
            stored,
            expanded: repeats.then(|| IxDyn(&shape)),
        })
    }

    /// Plain form of [`Tensor::f_expand`].
    #[track_caller]
    pub fn expand(&self, sizes: impl IntoShape) -> Tensor<E> {
        or_panic(self.f_expand(sizes))
    }

    /// The shape `expand(sizes)` gives, checked as PyTorch checks it.
    fn f_expanded_shape(&self, sizes: &[i64]) -> Result<Vec<usize>> {
        let dims = self.sizes();
        let error = |detail: String| Error::Shape {
            op: "expand",
            detail,
        };
        if sizes.len() < dims.len() {
            return Err(error(format!(
                "the number of sizes provided ({}) must be greater or equal to the number of \
                 dimensions in the tensor ({}) (shape {})",
                sizes.len(),
                dims.len(),
                shape_list(dims)
            )));
        }
        let new_dims = sizes.len() - dims.len();
        let mut shape = vec![0; sizes.len()];
        // From the last dim backwards, as PyTorch checks (its message names the last clash).
        for (i, &size) in sizes.iter().enumerate().rev() {
            let target = match i.checked_sub(new_dims).map(|j| dims[j]) {
                // A new leading dim: its size must be given.
                None if size < 0 => {
                    return Err(error(format!(
                        "The expanded size of the tensor ({size}) isn't allowed in a leading, \
                         non-existing dimension {i}"
                    )));
                }
                None => size as usize,
                Some(existing) if size == -1 || size == existing as i64 => existing,
                Some(1) if size >= 0 => size as usize,
                Some(existing) => {
                    return Err(error(format!(
                        "The expanded size of the tensor ({size}) must match the existing size \
                         ({existing}) at non-singleton dimension {i}.  Target sizes: {sizes:?}.  \
                         Tensor sizes: {}",
                        shape_list(dims)
                    )));
                }
            };
            shape[i] = target;
        }
        Ok(shape)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Tensor, arange, tensor};

    #[test]
    fn flatten_merges_a_run_of_dims() {
        let x = arange(0.0f32, 24.0, 1.0).view(&[2, 3, 4]);
        assert_eq!(x.flatten(1, -1).sizes(), [2, 12]);
        assert_eq!(x.flatten(0, 1).sizes(), [6, 4]);
        assert_eq!(x.transpose(0, 2).flatten(0, -1).get(1).item(), 12.0);
        assert_eq!(Tensor::scalar(1.0).flatten(0, -1).sizes(), [1]);
        assert!(x.f_flatten(2, 1).is_err());
    }

    #[test]
    fn expand_repeats_dims_of_size_one() {
        let col = tensor!([[1.0], [2.0]]);
        let e = col.expand(&[3, -1, 2]);
        assert_eq!(e.sizes(), [3, 2, 2]);
        assert_eq!(e.get(2).to_vec(), vec![1.0, 1.0, 2.0, 2.0]);
        assert!(col.f_expand(&[3, 2]).unwrap_err().to_string().contains(
            "must match the existing size (2) at non-singleton dimension 0"
        ));
        assert!(col.f_expand(&[-1, 2, 2]).is_err());
    }
}
