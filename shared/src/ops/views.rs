//! Views: new shapes over the same numbers.
//!
//! `transpose`, `t`, `permute`, `select`/`get` (PyTorch's `t[i]`), `slice`/`narrow`,
//! `unsqueeze` and `squeeze` never copy: they only change the shape and the strides (how far
//! to step in memory for each dim). `view` puts a new shape over the same numbers, which
//! works whenever each new dim can be given a stride (always for a contiguous tensor, and
//! for many transposed or sliced ones); `reshape` copies when it must.

use std::ops::{Bound, RangeBounds};

use ndarray::{Axis, Dimension, IxDyn, ShapeBuilder, Slice};

use crate::error::{Error, Result, or_panic, shape_list};
use crate::tensor::{Element, Tensor, normalize_dim};

/// What `view` and `reshape` accept as a shape: sizes as `usize` (an array such as
/// `[b, t, h, d / h]`, or a slice), or as `i64` where one entry may be `-1` (`&[b, t, -1]`),
/// as PyTorch's `view(*shape)` takes them.
pub trait IntoShape {
    /// The sizes as `i64`, `-1` for the one to infer.
    fn into_shape(self) -> Vec<i64>;
}

/// A size as `i64`; one too large for it stays too large (and is refused as such).
fn size_i64(size: usize) -> i64 {
    i64::try_from(size).unwrap_or(i64::MAX)
}

impl<const N: usize> IntoShape for [usize; N] {
    fn into_shape(self) -> Vec<i64> {
        self.iter().map(|&d| size_i64(d)).collect()
    }
}

impl IntoShape for &[usize] {
    fn into_shape(self) -> Vec<i64> {
        self.iter().map(|&d| size_i64(d)).collect()
    }
}

impl IntoShape for &Vec<usize> {
    fn into_shape(self) -> Vec<i64> {
        self.as_slice().into_shape()
    }
}

impl<const N: usize> IntoShape for &[i64; N] {
    fn into_shape(self) -> Vec<i64> {
        self.to_vec()
    }
}

impl IntoShape for &[i64] {
    fn into_shape(self) -> Vec<i64> {
        self.to_vec()
    }
}

impl IntoShape for &Vec<i64> {
    fn into_shape(self) -> Vec<i64> {
        self.clone()
    }
}

impl IntoShape for Vec<i64> {
    fn into_shape(self) -> Vec<i64> {
        self
    }
}

impl<E: Element> Tensor<E> {
    /// `t.transpose(dim0, dim1)`: swaps two dims (a view).
    ///
    /// ```
    /// use shared::tensor;
    /// let x = tensor!([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]);
    /// assert_eq!(
    ///     x.transpose(0, 1).to_string(),
    ///     "tensor([[0.1000, 0.4000],\n        [0.2000, 0.5000],\n        [0.3000, 0.6000]])"
    /// );
    /// ```
    ///
    /// # Shapes
    /// `[.., a, .., b, ..]` becomes `[.., b, .., a, ..]`; a 0-d tensor takes dims `0`/`-1`.
    pub fn f_transpose(&self, dim0: i64, dim1: i64) -> Result<Tensor<E>> {
        let a = self.f_dim_index_or_scalar("transpose", dim0)?;
        let b = self.f_dim_index_or_scalar("transpose", dim1)?;
        // A 0-d tensor accepts dims 0 and -1 and stays as it is, as in PyTorch.
        let (Some(a), Some(b)) = (a, b) else {
            return Ok(self.clone());
        };
        if self.is_expanded() {
            let mut view = self.array();
            view.swap_axes(a, b);
            return Ok(Tensor::from_expanded_view(view));
        }
        let mut data = self.stored.clone();
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
                    shape_list(self.sizes())
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
        let mut duplicate = false;
        for &d in &order {
            duplicate |= seen[d];
            seen[d] = true;
        }
        if order.len() != ndim || duplicate {
            let why = if duplicate {
                "duplicate dims are not allowed".to_string()
            } else {
                format!(
                    "number of dims don't match: the tensor has {}, the order names {}",
                    crate::error::rank(ndim),
                    order.len()
                )
            };
            return Err(Error::Shape {
                op: "permute",
                detail: format!(
                    "dims {dims:?} are not a permutation of the {ndim} dims of a tensor of \
                     shape {} ({why})",
                    shape_list(self.sizes())
                ),
            });
        }
        if self.is_expanded() {
            return Ok(Tensor::from_expanded_view(
                self.array().permuted_axes(order),
            ));
        }
        Ok(Tensor::from_array(self.stored.clone().permuted_axes(order)))
    }

    /// Plain form of [`Tensor::f_permute`].
    #[track_caller]
    pub fn permute(&self, dims: &[i64]) -> Tensor<E> {
        or_panic(self.f_permute(dims))
    }

    /// Works out a requested shape with at most one `-1` (inferred from the element count),
    /// with PyTorch's checks and messages.
    fn f_infer_shape(&self, op: &'static str, shape: &[i64]) -> Result<Vec<usize>> {
        let numel = self.numel();
        let error = |detail: String| Error::Shape { op, detail };
        if let Some(i) = shape.iter().position(|&d| d < -1) {
            return Err(error(format!(
                "invalid shape dimension {} at index {i} of shape {shape:?}",
                shape[i]
            )));
        }
        let inferred: Vec<usize> =
            (0..shape.len()).filter(|&i| shape[i] == -1).collect();
        if inferred.len() > 1 {
            return Err(error(format!(
                "only one dimension can be inferred (shape {shape:?})"
            )));
        }
        let mut out: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
        // As in PyTorch, the sizes are first multiplied as they come (wrapping around), and
        // a product that is too large only counts once the shape otherwise fits.
        let known = (0..out.len())
            .filter(|&i| shape[i] != -1)
            .fold(1usize, |p, i| p.wrapping_mul(out[i]));
        match inferred.first() {
            Some(_) if known == 0 => {
                return Err(error(format!(
                    "cannot reshape tensor of 0 elements into shape {shape:?} because the \
                     unspecified dimension size -1 can be any value and is ambiguous"
                )));
            }
            Some(&i) if numel.is_multiple_of(known) => out[i] = numel / known,
            None if known == numel => {}
            _ => {
                return Err(error(format!(
                    "shape '{shape:?}' is invalid for input of size {numel}"
                )));
            }
        }
        // `[2^62, 2^62, 0]` for 0 elements gets here: its sizes alone do not fit.
        crate::error::f_checked_numel(op, &out, std::mem::size_of::<E>()).map_err(|_| {
            error(format!(
                "shape {shape:?} is too large: numel: integer multiplication overflow"
            ))
        })?;
        Ok(out)
    }

    /// `t.view(shape)`: the same numbers under a new shape, without copying; one entry may
    /// be `-1`. A contiguous tensor can always be viewed. Another one (a transpose, a slice)
    /// can be viewed when every new dim stays inside one run of dims that lie evenly spaced
    /// in memory, e.g. `x.t().view(&[3, 2])`; otherwise it is an error, as in PyTorch (call
    /// `reshape`, which copies when it must).
    ///
    /// ```
    /// use shared::tensor;
    /// let x = tensor!([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]);
    /// let [rows, cols] = x.dims();
    /// assert_eq!(x.view([rows * cols]).to_string(), "tensor([0.1000, 0.2000, 0.3000, 0.4000, 0.5000, 0.6000])");
    /// assert_eq!(x.view(&[3, -1]).to_string(), "tensor([[0.1000, 0.2000],\n        [0.3000, 0.4000],\n        [0.5000, 0.6000]])");
    /// ```
    ///
    /// # Shapes
    /// The product of `shape` must equal `numel()`.
    pub fn f_view(&self, shape: impl IntoShape) -> Result<Tensor<E>> {
        let shape = self.f_infer_shape("view", &shape.into_shape())?;
        if self.is_expanded() {
            return self.f_view_expanded(&shape);
        }
        if self.is_contiguous() {
            let data = self
                .stored
                .clone()
                .into_shape_with_order(IxDyn(&shape))
                .expect("a contiguous tensor with the right element count");
            return Ok(Tensor::from_array(data));
        }
        let strides: Vec<usize> =
            self.stored.strides().iter().map(|&s| s as usize).collect();
        let new_strides = self.f_view_strides(&strides, &shape)?;
        Ok(self.restrided(&shape, &new_strides))
    }

    /// The strides `view` gives `shape` over memory laid out with `strides`, or PyTorch's
    /// error when no strides can (a dim of the new shape would span two runs of memory).
    fn f_view_strides(
        &self,
        strides: &[usize],
        shape: &[usize],
    ) -> Result<Vec<usize>> {
        view_strides(self.sizes(), strides, shape).ok_or_else(|| Error::Shape {
            op: "view",
            detail: format!(
                "view size is not compatible with input tensor's size and stride (at least \
                 one dimension spans across two contiguous subspaces): shape {} with \
                 strides {} cannot be viewed as {}. Use .reshape(...) instead.",
                shape_list(self.sizes()),
                shape_list(strides),
                shape_list(shape)
            ),
        })
    }

    /// `view` of an expanded tensor: its repeats step by 0, so a new dim may only split or
    /// merge dims whose strides line up, as in PyTorch (`[3, 1]` expanded to `[3, 4]` views
    /// as `[3, 2, 2]` but not as `[12]`). Nothing is copied but the stored elements.
    fn f_view_expanded(&self, shape: &[usize]) -> Result<Tensor<E>> {
        if self.numel() == 0 {
            return Tensor::f_from_vec(Vec::new(), shape);
        }
        let strides: Vec<usize> =
            self.array().strides().iter().map(|&s| s as usize).collect();
        let new_strides = self.f_view_strides(&strides, shape)?;
        let layout = IxDyn(shape).strides(IxDyn(&new_strides));
        // SAFETY: `view_strides` only regroups the dims, so every index of the new shape
        // addresses a memory offset that an index of `self.array()` addresses: all inside
        // the stored buffer, which `self` keeps alive while the view is read.
        let view = unsafe {
            ndarray::ArrayView::from_shape_ptr(layout, self.stored.as_ptr())
        };
        Ok(Tensor::from_expanded_view(view))
    }

    /// The same elements under a new shape and new strides (counted in the memory of
    /// `self`), as PyTorch's `as_strided`. ndarray cannot give an existing buffer new
    /// strides, so the stretch of memory `self` covers is copied once, gaps included, and
    /// the new strides are laid over the copy: the values and the memory order (which
    /// `uniform_` and dropout follow) are PyTorch's.
    fn restrided(&self, shape: &[usize], strides: &[usize]) -> Tensor<E> {
        let fresh = || {
            Tensor::from_array(
                ndarray::ArcArray::from_shape_vec(IxDyn(shape), self.to_vec())
                    .expect("same element count"),
            )
        };
        if self.numel() == 0 {
            return fresh();
        }
        let own: Vec<usize> =
            self.stored.strides().iter().map(|&s| s as usize).collect();
        let offset = |index: &[usize], strides: &[usize]| -> usize {
            index.iter().zip(strides).map(|(i, s)| i * s).sum()
        };
        let last: Vec<usize> = self.sizes().iter().map(|&n| n - 1).collect();
        let mut memory = vec![E::default(); offset(&last, &own) + 1];
        // Our elements, laid into the copy under our own strides (one strided copy).
        match ndarray::ArrayViewMut::from_shape(
            IxDyn(self.sizes()).strides(IxDyn(&own)),
            &mut memory,
        ) {
            Ok(mut laid) => laid.assign(&self.stored),
            Err(_) => {
                for (index, &value) in self.stored.indexed_iter() {
                    memory[offset(index.slice(), &own)] = value;
                }
            }
        }
        ndarray::ArcArray::from_shape_vec(
            IxDyn(shape).strides(IxDyn(strides)),
            memory,
        )
        .map(Tensor::from_array)
        // ndarray refuses strides it cannot check (a dim that steps by 0): copy instead.
        .unwrap_or_else(|_| fresh())
    }

    /// Plain form of [`Tensor::f_view`].
    #[track_caller]
    pub fn view(&self, shape: impl IntoShape) -> Tensor<E> {
        or_panic(self.f_view(shape))
    }

    /// `t.reshape(shape)`: a `view` when the strides allow one, else a copy in row-major
    /// order under the new shape.
    ///
    /// # Shapes
    /// The product of `shape` must equal `numel()`; one entry may be `-1`.
    pub fn f_reshape(&self, shape: impl IntoShape) -> Result<Tensor<E>> {
        let target = self.f_infer_shape("reshape", &shape.into_shape())?;
        let target: Vec<i64> = target.iter().map(|&d| d as i64).collect();
        self.f_view(&target)
            .or_else(|_| self.contiguous().f_view(&target))
    }

    /// Plain form of [`Tensor::f_reshape`].
    #[track_caller]
    pub fn reshape(&self, shape: impl IntoShape) -> Tensor<E> {
        or_panic(self.f_reshape(shape))
    }

    /// `t.select(dim, index)`: one slice along `dim`, which disappears (a view).
    /// `t.select(0, i)` is PyTorch's `t[i]`; `index` is any integer (a loop's `usize`, or a
    /// negative `i64` counting from the end).
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., ..]`; `index` in `[-n, n)`.
    pub fn f_select(&self, dim: i64, index: impl Position) -> Result<Tensor<E>> {
        let index = index.to_i64();
        self.f_not_scalar("select")?;
        let d = self.f_dim_index("select", dim)?;
        let size = self.sizes()[d];
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
        if self.is_expanded() {
            let view = self.array().index_axis_move(Axis(d), i as usize);
            return Ok(Tensor::from_expanded_view(view));
        }
        Ok(Tensor::from_array(
            self.stored.clone().index_axis_move(Axis(d), i as usize),
        ))
    }

    /// Plain form of [`Tensor::f_select`].
    #[track_caller]
    pub fn select(&self, dim: i64, index: impl Position) -> Tensor<E> {
        or_panic(self.f_select(dim, index))
    }

    /// PyTorch's `t[i]`: the `i`-th slice along the first dim (a view). `i` is any integer
    /// (a loop's `usize` as well as a negative `i64` counting from the end).
    ///
    /// # Shapes
    /// `[n, rest..]` becomes `[rest..]`.
    #[track_caller]
    pub fn get(&self, index: impl Position) -> Tensor<E> {
        or_panic(self.f_select(0, index))
    }

    /// PyTorch's `t[.., a:b, ..]` on one dim: the indices in `range` along `dim` (a view).
    /// As in Python, negative bounds count from the end (`-2..` is the last two) and bounds
    /// out of range are clamped (`..10` of 6 is all 6, `7..` is empty).
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., len(range ∩ 0..n), ..]`; not for a 0-d tensor.
    pub fn f_slice<P: Position>(
        &self,
        dim: i64,
        range: impl RangeBounds<P>,
    ) -> Result<Tensor<E>> {
        self.f_not_scalar("slice")?;
        let d = self.f_dim_index("slice", dim)?;
        let size = self.sizes()[d] as i64;
        // Python's rule: a negative bound counts from the end, then clamp into 0..=size.
        let clamp = |i: i64| {
            if i < 0 {
                i.saturating_add(size).max(0)
            } else {
                i.min(size)
            }
        };
        let start = match range.start_bound() {
            Bound::Included(&s) => clamp(s.to_i64()),
            Bound::Excluded(&s) => clamp(s.to_i64()).saturating_add(1).min(size),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) if e.to_i64() == -1 => size,
            Bound::Included(&e) => clamp(e.to_i64().saturating_add(1)),
            Bound::Excluded(&e) => clamp(e.to_i64()),
            Bound::Unbounded => size,
        }
        .max(start);
        let range = Slice::from(start as usize..end as usize);
        if self.is_expanded() {
            let view = self.array().slice_axis_move(Axis(d), range);
            return Ok(Tensor::from_expanded_view(view));
        }
        let data = self.stored.clone().slice_axis_move(Axis(d), range);
        Ok(Tensor::from_array(data))
    }

    /// Plain form of [`Tensor::f_slice`].
    #[track_caller]
    pub fn slice<P: Position>(
        &self,
        dim: i64,
        range: impl RangeBounds<P>,
    ) -> Tensor<E> {
        or_panic(self.f_slice(dim, range))
    }

    /// `t.narrow(dim, start, length)`: `length` indices from `start` along `dim` (a view).
    /// A negative `start` counts from the end, as in PyTorch.
    ///
    /// # Shapes
    /// `[.., n, ..]` becomes `[.., length, ..]`; `start` in `[-n, n]` and the `length`
    /// indices from it must lie inside the dim.
    pub fn f_narrow<P: Position>(
        &self,
        dim: i64,
        start: P,
        length: usize,
    ) -> Result<Tensor<E>> {
        self.f_not_scalar("narrow")?;
        let d = self.f_dim_index("narrow", dim)?;
        let size = self.sizes()[d];
        let given = start.to_i64();
        let n = size as i64;
        if given < -n || given > n {
            return Err(Error::Shape {
                op: "narrow",
                detail: format!(
                    "start out of range (expected to be in range of [{}, {n}], but got {given}) \
                     for dim {d} of shape {}",
                    -n,
                    shape_list(self.sizes())
                ),
            });
        }
        let start = if given < 0 { given + n } else { given } as usize;
        if length > size - start {
            return Err(Error::Shape {
                op: "narrow",
                detail: format!(
                    "start ({start}) + length ({length}) exceeds dimension size ({size}) of \
                     dim {d} (shape {})",
                    shape_list(self.sizes())
                ),
            });
        }
        let range = Slice::from(start..start + length);
        if self.is_expanded() {
            let view = self.array().slice_axis_move(Axis(d), range);
            return Ok(Tensor::from_expanded_view(view));
        }
        let data = self.stored.clone().slice_axis_move(Axis(d), range);
        Ok(Tensor::from_array(data))
    }

    /// Plain form of [`Tensor::f_narrow`].
    #[track_caller]
    pub fn narrow<P: Position>(
        &self,
        dim: i64,
        start: P,
        length: usize,
    ) -> Tensor<E> {
        or_panic(self.f_narrow(dim, start, length))
    }

    /// The error of the ops that pick along a dim (`select`, `slice`, `narrow`), which a
    /// 0-d tensor does not have: `select() cannot be applied to a 0-dim tensor`.
    fn f_not_scalar(&self, op: &'static str) -> Result<()> {
        if self.dim() == 0 {
            return Err(Error::Shape {
                op,
                detail: format!(
                    "{op}() cannot be applied to a 0-dim tensor (shape [])"
                ),
            });
        }
        Ok(())
    }

    /// `t.unsqueeze(dim)`: inserts a dim of size 1 at `dim` (a view).
    ///
    /// # Shapes
    /// `dim` in `[-ndim-1, ndim]`; the result has one more dim.
    pub fn f_unsqueeze(&self, dim: i64) -> Result<Tensor<E>> {
        let d = normalize_dim("unsqueeze", dim, self.dim() + 1)
            .map_err(|_| out_of_range_with_new_dim("unsqueeze", dim, self.sizes()))?;
        if self.is_expanded() {
            return Ok(Tensor::from_expanded_view(
                self.array().insert_axis(Axis(d)),
            ));
        }
        Ok(Tensor::from_array(self.stored.clone().insert_axis(Axis(d))))
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
        if self.is_expanded() {
            let mut view = self.array();
            for d in (0..view.ndim()).rev() {
                if view.shape()[d] == 1 {
                    view = view.index_axis_move(Axis(d), 0);
                }
            }
            return Tensor::from_expanded_view(view);
        }
        let mut data = self.stored.clone();
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
    /// `[.., 1, ..]` becomes `[.., ..]`; a 0-d tensor takes dims `0`/`-1` and stays 0-d.
    pub fn f_squeeze_dim(&self, dim: i64) -> Result<Tensor<E>> {
        let Some(d) = self.f_dim_index_or_scalar("squeeze", dim)? else {
            return Ok(self.clone());
        };
        if self.sizes()[d] == 1 {
            if self.is_expanded() {
                let view = self.array().index_axis_move(Axis(d), 0);
                return Ok(Tensor::from_expanded_view(view));
            }
            Ok(Tensor::from_array(
                self.stored.clone().index_axis_move(Axis(d), 0),
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
        Ok((0..self.sizes()[0]).map(|i| self.get(i)))
    }

    /// Plain form of [`Tensor::f_iter`].
    #[track_caller]
    pub fn iter(&self) -> impl Iterator<Item = Tensor<E>> + '_ {
        or_panic(self.f_iter())
    }
}

/// A position along a dim, as `get`, `select`, `narrow` and `slice` take it: `usize` counts
/// from the start, signed integers may be negative and then count from the end (`-1` is the
/// last index). `randint` takes its bounds the same way.
pub trait Position: Copy {
    /// The position as an `i64` (a `usize` beyond `i64::MAX` saturates, which is out of
    /// range for every tensor anyway).
    fn to_i64(self) -> i64;
}

impl Position for usize {
    fn to_i64(self) -> i64 {
        i64::try_from(self).unwrap_or(i64::MAX)
    }
}

impl Position for i64 {
    fn to_i64(self) -> i64 {
        self
    }
}

impl Position for i32 {
    fn to_i64(self) -> i64 {
        self.into()
    }
}

impl Position for isize {
    fn to_i64(self) -> i64 {
        self as i64
    }
}

/// The error of the ops that add a dim (`unsqueeze`, `stack`), whose `dim` may also be
/// `ndim`: it names the tensor's own rank and the range `[-ndim-1, ndim]`.
pub(crate) fn out_of_range_with_new_dim(
    op: &'static str,
    dim: i64,
    shape: &[usize],
) -> Error {
    let n = shape.len() as i64 + 1;
    Error::Shape {
        op,
        detail: format!(
            "dim {dim} is out of range for a tensor of {} (shape {}; expected to be in range \
             of [{}, {}], but got {dim})",
            crate::error::rank(shape.len()),
            shape_list(shape),
            -n,
            n - 1
        ),
    }
}

/// PyTorch's rule (`computeStride`) for the strides of a view of a non-contiguous tensor,
/// or `None` when no strides exist.
///
/// The old dims are cut into runs: a run continues to the left while a dim's stride is the
/// run's stride times the elements to its right (dims of size 1 never break a run). Inside
/// one run the numbers are evenly spaced in memory, so the run can be re-cut into any new
/// dims whose sizes multiply to the run's count. A new dim that would span two runs has no
/// stride: that is when `view` fails.
fn view_strides(
    old_shape: &[usize],
    old_strides: &[usize],
    new_shape: &[usize],
) -> Option<Vec<usize>> {
    if old_shape.is_empty() {
        return Some(vec![1; new_shape.len()]);
    }
    let mut new_strides = vec![0; new_shape.len()];
    // Walk both shapes from the last dim; `view_d` is the next new dim to give a stride.
    let mut view_d = new_shape.len() as isize - 1;
    let mut chunk_stride = *old_strides.last().expect("at least one dim");
    let (mut tensor_numel, mut view_numel) = (1usize, 1usize);
    for tensor_d in (0..old_shape.len()).rev() {
        tensor_numel *= old_shape[tensor_d];
        let run_ends = tensor_d == 0
            || (old_shape[tensor_d - 1] != 1
                && old_strides[tensor_d - 1] != tensor_numel * chunk_stride);
        if run_ends {
            while view_d >= 0
                && (view_numel < tensor_numel || new_shape[view_d as usize] == 1)
            {
                new_strides[view_d as usize] = view_numel * chunk_stride;
                view_numel *= new_shape[view_d as usize];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_stride = old_strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    (view_d == -1).then_some(new_strides)
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
    fn view_infers_minus_one_and_follows_the_strides() {
        let m = tensor!([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        assert_eq!(m.view(&[3, -1]).shape(), [3, 2]);
        // The transpose's two dims lie in two runs: flattening them spans both.
        let err = m.t().f_view(&[6]).unwrap_err().to_string();
        assert!(err.starts_with(
            "view: view size is not compatible with input tensor's size and stride"
        ));
        assert!(err.ends_with("Use .reshape(...) instead."));
        assert_eq!(
            m.t().reshape(&[6]).to_vec(),
            vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
        );
        // Splitting one dim of a transpose stays inside a run, so it is a view with strides.
        let split = m.t().view(&[3, 1, 2]);
        assert_eq!(split.to_vec(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        assert!(!split.is_contiguous());
        assert_eq!(
            super::view_strides(&[3, 2], &[1, 3], &[3, 2]),
            Some(vec![1, 3])
        );
        assert_eq!(super::view_strides(&[3, 2], &[1, 3], &[6]), None);
    }

    #[test]
    fn slices_clamp_like_python() {
        let v = tensor!([0, 1, 2, 3, 4]);
        assert_eq!(v.slice(0, 1..3).to_vec(), vec![1, 2]);
        assert_eq!(v.slice(0, ..10).to_vec(), vec![0, 1, 2, 3, 4]);
        assert_eq!(v.slice(0, 7..).numel(), 0);
        assert_eq!(v.slice(0, -2..).to_vec(), vec![3, 4]);
        assert_eq!(v.slice(0, -10..3).to_vec(), vec![0, 1, 2]);
        assert_eq!(v.slice(0, ..-1).to_vec(), vec![0, 1, 2, 3]);
        assert_eq!(v.get(-1).item(), 4);
        assert_eq!(v.narrow(0, -2, 2).to_vec(), vec![3, 4]);
        assert_eq!(v.narrow(0, 5, 0).numel(), 0);
    }
}
