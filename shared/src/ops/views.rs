//! Views: new shapes over the same numbers.
//!
//! `transpose`, `t`, `permute`, `select`/`get` (PyTorch's `t[i]`), `slice`/`narrow`,
//! `unsqueeze` and `squeeze` never copy: they only change the shape and the strides (how far
//! to step in memory for each dim). `view` reinterprets a row-major buffer under a new shape,
//! which only works when the tensor is contiguous; `reshape` copies when it must.

use std::ops::{Bound, RangeBounds};

use ndarray::{Axis, IxDyn, Slice};

use crate::error::{Error, Result, or_panic, shape_list};
use crate::tensor::{Element, Tensor, normalize_dim};

impl<E: Element> Tensor<E> {
    /// `t.transpose(dim0, dim1)`: swaps two dims (a view).
    ///
    /// # Shapes
    /// `[.., a, .., b, ..]` becomes `[.., b, .., a, ..]`.
    pub fn f_transpose(&self, dim0: i64, dim1: i64) -> Result<Tensor<E>> {
        let a = self.f_dim_index("transpose", dim0)?;
        let b = self.f_dim_index("transpose", dim1)?;
        let mut data = self.data.clone();
        data.swap_axes(a, b);
        Ok(Tensor::from_array(data))
    }

    /// Plain form of [`Tensor::f_transpose`].
    #[track_caller]
    pub fn transpose(&self, dim0: i64, dim1: i64) -> Tensor<E> {
        or_panic(self.f_transpose(dim0, dim1))
    }

    /// `t.t()` / `t.T`: the transpose of a matrix; 0-d and 1-D tensors come back unchanged.
    ///
    /// # Shapes
    /// `[m, n]` becomes `[n, m]`; only for tensors of at most 2 dims.
    pub fn f_t(&self) -> Result<Tensor<E>> {
        match self.dim() {
            0 | 1 => Ok(self.clone()),
            2 => self.f_transpose(0, 1),
            n => Err(Error::Shape {
                op: "t",
                detail: format!(
                    "expects a tensor with <= 2 dimensions, but self is {n}D (shape {})",
                    shape_list(self.dims())
                ),
            }),
        }
    }

    /// Plain form of [`Tensor::f_t`].
    #[track_caller]
    pub fn t(&self) -> Tensor<E> {
        or_panic(self.f_t())
    }

    /// `t.permute(dims)`: reorders all dims (a view). `dims[i]` says which old dim becomes
    /// new dim `i`.
    ///
    /// # Shapes
    /// `dims` is a permutation of `0..ndim` (negative entries count from the end);
    /// returns `[shape[dims[0]], shape[dims[1]], ...]`.
    pub fn f_permute(&self, dims: &[i64]) -> Result<Tensor<E>> {
        let ndim = self.dim();
        let mut order = Vec::with_capacity(ndim);
        for &d in dims {
            order.push(normalize_dim("permute", d, ndim)?);
        }
        let mut seen = vec![false; ndim];
        for &d in &order {
            seen[d] = true;
        }
        if order.len() != ndim || seen.contains(&false) {
            return Err(Error::Shape {
                op: "permute",
                detail: format!(
                    "dims {dims:?} are not a permutation of the {ndim} dims of a tensor of \
                     shape {}",
                    shape_list(self.dims())
                ),
            });
        }
        Ok(Tensor::from_array(self.data.clone().permuted_axes(order)))
    }

    /// Plain form of [`Tensor::f_permute`].
    #[track_caller]
    pub fn permute(&self, dims: &[i64]) -> Tensor<E> {
        or_panic(self.f_permute(dims))
    }

    /// Works out a requested shape with at most one `-1` (inferred from the element count).
    fn f_infer_shape(&self, op: &'static str, shape: &[i64]) -> Result<Vec<usize>> {
        let numel = self.numel();
        let invalid = || Error::Shape {
            op,
            detail: format!("shape {shape:?} is invalid for input of size {numel}"),
        };
        let inferred: Vec<usize> = shape
            .iter()
            .enumerate()
            .filter(|&(_, &d)| d == -1)
            .map(|(i, _)| i)
            .collect();
        if inferred.len() > 1 || shape.iter().any(|&d| d < -1) {
            return Err(invalid());
        }
        let known: usize = shape
            .iter()
            .filter(|&&d| d >= 0)
            .map(|&d| d as usize)
            .product();
        let mut out: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
        if let Some(&i) = inferred.first() {
            if known == 0 || !numel.is_multiple_of(known) {
                return Err(invalid());
            }
            out[i] = numel / known;
        } else if known != numel {
            return Err(invalid());
        }
        Ok(out)
    }

    /// `t.view(shape)`: the same row-major numbers under a new shape; one entry may be `-1`.
    /// Like PyTorch, refuses a non-contiguous tensor (call `contiguous()` first, or use
    /// `reshape`).
    ///
    /// # Shapes
    /// The product of `shape` must equal `numel()`.
    pub fn f_view(&self, shape: &[i64]) -> Result<Tensor<E>> {
        let shape = self.f_infer_shape("view", shape)?;
        if !self.is_contiguous() {
            return Err(Error::Shape {
                op: "view",
                detail: format!(
                    "the tensor of shape {} is not contiguous, so it cannot be viewed as {}; \
                     call .contiguous() first or use .reshape(...)",
                    shape_list(self.dims()),
                    shape_list(&shape)
                ),
            });
        }
        let data = self
            .data
            .clone()
            .into_shape_with_order(IxDyn(&shape))
            .expect("a contiguous tensor with the right element count");
        Ok(Tensor::from_array(data))
    }

    /// Plain form of [`Tensor::f_view`].
    #[track_caller]
    pub fn view(&self, shape: &[i64]) -> Tensor<E> {
        or_panic(self.f_view(shape))
    }

    /// `t.reshape(shape)`: like `view`, but copies a non-contiguous tensor first.
    ///
    /// # Shapes
    /// The product of `shape` must equal `numel()`; one entry may be `-1`.
    pub fn f_reshape(&self, shape: &[i64]) -> Result<Tensor<E>> {
        let target = self.f_infer_shape("reshape", shape)?;
        let target: Vec<i64> = target.iter().map(|&d| d as i64).collect();
        self.contiguous().f_view(&target)
    }

    /// Plain form of [`Tensor::f_reshape`].
    #[track_caller]
    pub fn reshape(&self, shape: &[i64]) -> Tensor<E> {
        or_panic(self.f_reshape(shape))
    }

    /// `t.select(dim, index)`: one slice along `dim`, which disappears (a view).
    /// `t.select(0, i)` is PyTorch's `t[i]`; negative indices count from the end.
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., ..]`; `index` in `[-n, n)`.
    pub fn f_select(&self, dim: i64, index: i64) -> Result<Tensor<E>> {
        let d = self.f_dim_index("select", dim)?;
        let size = self.dims()[d];
        let i = if index < 0 {
            index + size as i64
        } else {
            index
        };
        if i < 0 || i >= size as i64 {
            return Err(Error::IndexOutOfRange {
                op: "select",
                index,
                dim: d,
                size,
            });
        }
        Ok(Tensor::from_array(
            self.data.clone().index_axis_move(Axis(d), i as usize),
        ))
    }

    /// Plain form of [`Tensor::f_select`].
    #[track_caller]
    pub fn select(&self, dim: i64, index: i64) -> Tensor<E> {
        or_panic(self.f_select(dim, index))
    }

    /// PyTorch's `t[i]`: the `i`-th slice along the first dim (a view).
    ///
    /// # Shapes
    /// `[n, rest..]` becomes `[rest..]`.
    #[track_caller]
    pub fn get(&self, index: i64) -> Tensor<E> {
        or_panic(self.f_select(0, index))
    }

    /// PyTorch's `t[.., a:b, ..]` on one dim: the indices in `range` along `dim` (a view).
    /// Out-of-range bounds are clamped, as Python slicing does.
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., len(range ∩ 0..n), ..]`.
    pub fn f_slice(&self, dim: i64, range: impl RangeBounds<usize>) -> Result<Tensor<E>> {
        let d = self.f_dim_index("slice", dim)?;
        let size = self.dims()[d];
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s + 1,
            Bound::Unbounded => 0,
        }
        .min(size);
        let end = match range.end_bound() {
            Bound::Included(&e) => e + 1,
            Bound::Excluded(&e) => e,
            Bound::Unbounded => size,
        }
        .clamp(start, size);
        let data = self
            .data
            .clone()
            .slice_axis_move(Axis(d), Slice::from(start..end));
        Ok(Tensor::from_array(data))
    }

    /// Plain form of [`Tensor::f_slice`].
    #[track_caller]
    pub fn slice(&self, dim: i64, range: impl RangeBounds<usize>) -> Tensor<E> {
        or_panic(self.f_slice(dim, range))
    }

    /// `t.narrow(dim, start, length)`: `length` indices from `start` along `dim` (a view).
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., length, ..]`; needs `start + length <= n`.
    pub fn f_narrow(&self, dim: i64, start: usize, length: usize) -> Result<Tensor<E>> {
        let d = self.f_dim_index("narrow", dim)?;
        let size = self.dims()[d];
        if start + length > size {
            return Err(Error::Shape {
                op: "narrow",
                detail: format!(
                    "start ({start}) + length ({length}) exceeds dimension size ({size}) of \
                     dim {d} (shape {})",
                    shape_list(self.dims())
                ),
            });
        }
        self.f_slice(dim, start..start + length)
    }

    /// Plain form of [`Tensor::f_narrow`].
    #[track_caller]
    pub fn narrow(&self, dim: i64, start: usize, length: usize) -> Tensor<E> {
        or_panic(self.f_narrow(dim, start, length))
    }

    /// `t.unsqueeze(dim)`: inserts a dim of size 1 at `dim` (a view).
    ///
    /// # Shapes
    /// `dim` in `[-ndim-1, ndim]`; the result has one more dim.
    pub fn f_unsqueeze(&self, dim: i64) -> Result<Tensor<E>> {
        let d = normalize_dim("unsqueeze", dim, self.dim() + 1)?;
        Ok(Tensor::from_array(self.data.clone().insert_axis(Axis(d))))
    }

    /// Plain form of [`Tensor::f_unsqueeze`].
    #[track_caller]
    pub fn unsqueeze(&self, dim: i64) -> Tensor<E> {
        or_panic(self.f_unsqueeze(dim))
    }

    /// `t.squeeze()`: drops every dim of size 1 (a view).
    ///
    /// # Shapes
    /// `[1, 6, 1, 2]` becomes `[6, 2]`.
    pub fn squeeze(&self) -> Tensor<E> {
        let mut data = self.data.clone();
        for d in (0..data.ndim()).rev() {
            if data.shape()[d] == 1 {
                data = data.index_axis_move(Axis(d), 0);
            }
        }
        Tensor::from_array(data)
    }

    /// `t.squeeze(dim)`: drops `dim` if its size is 1, else returns the tensor unchanged.
    ///
    /// # Shapes
    /// `[.., 1, ..]` becomes `[.., ..]`.
    pub fn f_squeeze_dim(&self, dim: i64) -> Result<Tensor<E>> {
        let d = self.f_dim_index("squeeze", dim)?;
        if self.dims()[d] == 1 {
            Ok(Tensor::from_array(
                self.data.clone().index_axis_move(Axis(d), 0),
            ))
        } else {
            Ok(self.clone())
        }
    }

    /// Plain form of [`Tensor::f_squeeze_dim`].
    #[track_caller]
    pub fn squeeze_dim(&self, dim: i64) -> Tensor<E> {
        or_panic(self.f_squeeze_dim(dim))
    }

    /// Iterates over the first dim, like Python's `for x_i in t:` (each item is a view).
    ///
    /// # Shapes
    /// `[n, rest..]` yields `n` tensors of shape `[rest..]`; a 0-d tensor is an error.
    pub fn f_iter(&self) -> Result<impl Iterator<Item = Tensor<E>> + '_> {
        if self.dim() == 0 {
            return Err(Error::Shape {
                op: "iter",
                detail: "iteration over a 0-d tensor".into(),
            });
        }
        Ok((0..self.dims()[0]).map(|i| self.get(i as i64)))
    }

    /// Plain form of [`Tensor::f_iter`].
    #[track_caller]
    pub fn iter(&self) -> impl Iterator<Item = Tensor<E>> + '_ {
        or_panic(self.f_iter())
    }
}

#[cfg(test)]
mod tests {
    use crate::tensor;

    #[test]
    fn transpose_is_a_view_with_swapped_strides() {
        let m = tensor!([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let t = m.t();
        assert_eq!(t.shape(), [3, 2]);
        assert!(!t.is_contiguous());
        assert_eq!(t.to_vec(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        assert_eq!(t.contiguous().to_vec(), t.to_vec());
    }

    #[test]
    fn view_infers_minus_one_and_refuses_non_contiguous() {
        let m = tensor!([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        assert_eq!(m.view(&[3, -1]).shape(), [3, 2]);
        let err = m.t().f_view(&[6]).unwrap_err().to_string();
        assert!(err.starts_with("view: the tensor of shape [3, 2] is not contiguous"));
        assert_eq!(
            m.t().reshape(&[6]).to_vec(),
            vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
        );
    }

    #[test]
    fn slices_clamp_like_python() {
        let v = tensor!([0, 1, 2, 3, 4]);
        assert_eq!(v.slice(0, 1..3).to_vec(), vec![1, 2]);
        assert_eq!(v.slice(0, ..10).to_vec(), vec![0, 1, 2, 3, 4]);
        assert_eq!(v.slice(0, 7..).numel(), 0);
        assert_eq!(v.get(-1).item(), 4);
    }
}
