//! The [`Tensor`]: an n-dimensional array of `f32` (or `i64` token ids, or `bool` masks)
//! with PyTorch's names.
//!
//! Storage is an [`ndarray::ArcArray`]: a reference-counted buffer plus a shape and strides.
//! Cloning a tensor, transposing it, permuting it, selecting a row or slicing it only makes a
//! new shape and strides over the same buffer, as in PyTorch. One difference to know: writing
//! to a tensor whose buffer is shared (`masked_fill_`, `+=`) first copies the buffer, so a
//! write never shows through another view ("copy on write"). Tutorial code never relies on
//! writes through views, and this way no tensor can change behind a learner's back.
//!
//! `expand` is a view too: the tensor keeps its elements once and shows them repeated, with
//! stride 0 along the repeated dims, as PyTorch does. ndarray's owned arrays cannot step by 0,
//! so such a tensor stores its elements before expanding plus the shape it shows, and
//! `Tensor::array` lays the repeats over them when an operation reads it.

use ndarray::{ArcArray, ArrayView, Axis, Dimension, IxDyn};

pub use crate::element::Element;
use crate::error::{Error, Result};
use crate::fmt::{Size, Suffixes};

/// An n-dimensional tensor. `Tensor` alone means `Tensor<f32>`.
///
/// # Shapes
/// Any rank, 0-d scalars included (`shape() == []`).
#[derive(Clone)]
pub struct Tensor<E: Element = f32> {
    /// The elements, in any layout. For an expanded tensor, the elements before expanding,
    /// with size 1 along each dim that `expanded` repeats.
    pub(crate) stored: ArcArray<E, IxDyn>,
    /// The shape an expanded tensor shows (`None` for every other tensor).
    pub(crate) expanded: Option<IxDyn>,
}

impl<E: Element> PartialEq for Tensor<E> {
    /// Equal shapes and equal elements, however each tensor is laid out.
    fn eq(&self, other: &Self) -> bool {
        self.array() == other.array()
    }
}

impl<E: Element> Tensor<E> {
    /// Wraps an ndarray array (any layout).
    pub(crate) fn from_array(stored: ArcArray<E, IxDyn>) -> Self {
        Tensor {
            stored,
            expanded: None,
        }
    }

    /// The elements as an ndarray view: what every operation reads. An expanded tensor's
    /// repeats are laid over its stored elements with stride 0, never copied.
    ///
    /// # Shapes
    /// `sizes()`.
    pub(crate) fn array(&self) -> ArrayView<'_, E, IxDyn> {
        match &self.expanded {
            None => self.stored.view(),
            Some(shape) => self
                .stored
                .broadcast(shape.clone())
                .expect("expand checked the shape"),
        }
    }

    /// Whether this tensor is an expanded view that repeats its stored elements.
    pub(crate) fn is_expanded(&self) -> bool {
        self.expanded.is_some()
    }

    /// The elements as an owned array (sharing the buffer) for a view operation or a write.
    /// An expanded tensor is copied out first: a write to a repeated element must not show
    /// in its repeats (see the module's note on copy on write).
    ///
    /// # Shapes
    /// `sizes()`.
    pub(crate) fn shared_array(&self) -> ArcArray<E, IxDyn> {
        match self.expanded {
            None => self.stored.clone(),
            Some(_) => self.array().to_owned().into_shared(),
        }
    }

    /// An expanded tensor as a plain copy (its size checked: every repeat becomes an
    /// element), for an operation that needs its elements laid out; any other tensor as is.
    ///
    /// # Shapes
    /// `sizes()`.
    pub(crate) fn f_materialized(&self, op: &'static str) -> Result<Tensor<E>> {
        if !self.is_expanded() {
            return Ok(self.clone());
        }
        // The repeats laid out in row-major order, in memory whose size was checked.
        let mut values = crate::alloc::f_alloc(op, self.sizes())?;
        values.extend(self.array().iter().copied());
        let array = ArcArray::from_shape_vec(IxDyn(self.sizes()), values)
            .expect("one value per element of the shape");
        Ok(Tensor::from_array(array))
    }

    /// Makes an expanded tensor a plain copy before a write, so that the write changes one
    /// element and not its repeats (PyTorch refuses such writes; we copy, as for any write
    /// to a shared buffer).
    pub(crate) fn make_writable(&mut self) {
        if self.is_expanded() {
            *self = Tensor::from_array(self.shared_array());
        }
    }

    /// The tensor `view` shows, for a view operation (transpose, select, narrow, ...) done
    /// on [`Tensor::array`] of an expanded tensor: the dims that step by 0 stay expanded,
    /// and only the stored elements are copied, never their repeats.
    ///
    /// # Shapes
    /// `view`'s shape.
    pub(crate) fn from_expanded_view(view: ArrayView<'_, E, IxDyn>) -> Self {
        let shape = view.raw_dim();
        let mut collapsed = view;
        let mut repeats = false;
        for axis in 0..shape.ndim() {
            if collapsed.strides()[axis] == 0 && shape[axis] > 1 {
                collapsed.collapse_axis(Axis(axis), 0);
                repeats = true;
            }
        }
        Tensor {
            stored: collapsed.to_owned().into_shared(),
            expanded: repeats.then_some(shape),
        }
    }

    /// Makes a tensor from row-major values and a shape, like `torch.tensor(values).view(shape)`.
    ///
    /// # Shapes
    /// `values.len()` must be the product of `shape` (1 for a 0-d `shape == []`).
    pub fn f_from_vec(values: Vec<E>, shape: &[usize]) -> Result<Self> {
        let numel = crate::error::f_checked_numel(
            "from_vec",
            shape,
            std::mem::size_of::<E>(),
        )?;
        if values.len() != numel {
            return Err(Error::Shape {
                op: "from_vec",
                detail: format!(
                    "{} values cannot fill a tensor of shape {shape:?} ({numel} elements)",
                    values.len()
                ),
            });
        }
        let data = ArcArray::from_shape_vec(IxDyn(shape), values)
            .expect("the element count was checked above");
        Ok(Tensor::from_array(data))
    }

    /// Plain form of [`Tensor::f_from_vec`]: panics with the same message.
    #[track_caller]
    pub fn from_vec(values: Vec<E>, shape: &[usize]) -> Self {
        crate::error::or_panic(Self::f_from_vec(values, shape))
    }

    /// A 0-d tensor holding one value, like `torch.tensor(0.5)`.
    ///
    /// # Shapes
    /// Returns `[]`.
    pub fn scalar(value: E) -> Self {
        Self::from_vec(vec![value], &[])
    }

    /// The shape, printed as PyTorch prints `t.shape`: `torch.Size([6, 2])`.
    ///
    /// # Shapes
    /// One entry per dim; `[]` for a 0-d tensor.
    pub fn shape(&self) -> Size {
        Size(self.sizes().to_vec())
    }

    /// `t.size(dim)`: the length of one dim; negative dims count from the end.
    ///
    /// # Shapes
    /// `dim` in `[-ndim, ndim)`; a 0-d tensor has no size to ask for.
    pub fn f_size(&self, dim: i64) -> Result<usize> {
        if self.dim() == 0 {
            return Err(Error::Shape {
                op: "size",
                detail: format!(
                    "Dimension specified as {dim} but tensor has no dimensions (shape [])"
                ),
            });
        }
        let d = self.f_dim_index("size", dim)?;
        Ok(self.sizes()[d])
    }

    /// Plain form of [`Tensor::f_size`].
    #[track_caller]
    pub fn size(&self, dim: i64) -> usize {
        crate::error::or_panic(self.f_size(dim))
    }

    /// The shape as a slice, for code that computes with it (ATen's `t.sizes()`).
    ///
    /// # Shapes
    /// One entry per dim.
    pub fn sizes(&self) -> &[usize] {
        match &self.expanded {
            None => self.stored.shape(),
            Some(shape) => shape.slice(),
        }
    }

    /// The sizes as an array of `N`, to name them: `let [b, t, d] = x.f_dims()?;`, or an
    /// error naming both ranks when the tensor does not have `N` dims.
    ///
    /// # Shapes
    /// `self` has `N` dims.
    pub fn f_dims<const N: usize>(&self) -> Result<[usize; N]> {
        self.sizes().try_into().map_err(|_| Error::Shape {
            op: "dims",
            detail: format!(
                "expected a tensor of {}, got one of {} (shape {:?})",
                crate::error::rank(N),
                crate::error::rank(self.dim()),
                self.sizes()
            ),
        })
    }

    /// Plain form of [`Tensor::f_dims`]: `let [b, t, d] = x.dims();`.
    ///
    /// # Shapes
    /// `self` has `N` dims.
    #[track_caller]
    pub fn dims<const N: usize>(&self) -> [usize; N] {
        crate::error::or_panic(self.f_dims())
    }

    /// `t.dim()`: the number of dims (the rank).
    pub fn dim(&self) -> usize {
        self.sizes().len()
    }

    /// `t.numel()`: the number of elements.
    pub fn numel(&self) -> usize {
        self.sizes().iter().product()
    }

    /// PyTorch's dtype name: `torch.float32`, `torch.int64` or `torch.bool`.
    pub fn dtype(&self) -> &'static str {
        E::DTYPE
    }

    /// Whether the elements lie in row-major order with no gaps, like `t.is_contiguous()`.
    pub fn is_contiguous(&self) -> bool {
        self.array().is_standard_layout()
    }

    /// `t.contiguous()`: the same values in a fresh row-major buffer, or `self` if already so.
    ///
    /// # Shapes
    /// Same shape as `self`.
    pub fn contiguous(&self) -> Self {
        if self.is_contiguous() {
            self.clone()
        } else if self.has_contiguous_rows() {
            // `assign` copies such a view a row at a time (a large one in pieces on the
            // pool's threads).
            let mut copy = ndarray::ArrayD::<E>::default(self.stored.raw_dim());
            crate::kernels::parallel::assign(copy.view_mut(), self.stored.view());
            Tensor::from_array(copy.into_shared())
        } else {
            Tensor::from_vec(self.to_vec(), self.sizes())
        }
    }

    /// The values in row-major (logical) order.
    ///
    /// # Shapes
    /// `numel()` values.
    pub fn to_vec(&self) -> Vec<E> {
        if self.is_expanded() {
            // Every repeat becomes a value: the size is checked first.
            let mut values =
                crate::error::or_panic(crate::alloc::f_alloc("to_vec", self.sizes()));
            // A row at a time: a row that is not itself repeated is one memory copy (a
            // key/value head repeated for its group of query heads, every decoding step),
            // and the walk over the other dims is paid once per row, not once per value.
            for row in self.array().rows() {
                match row.as_slice() {
                    Some(row) => values.extend_from_slice(row),
                    None => values.extend(row.iter().copied()),
                }
            }
            return values;
        }
        if let Some(values) = self.as_slice() {
            return values.to_vec();
        }
        if self.has_contiguous_rows() {
            return self
                .contiguous()
                .stored
                .into_owned()
                .into_raw_vec_and_offset()
                .0;
        }
        // Another order (a transpose): `fold` walks ndarray's iterator a row at a time,
        // several times faster than `collect`, which asks for one element after another.
        self.array().iter().fold(
            Vec::with_capacity(self.numel()),
            |mut values, &x| {
                values.push(x);
                values
            },
        )
    }

    /// Whether the last dim steps by one element (heads split out of a projection, a
    /// slice of rows): such views are copied a row at a time.
    fn has_contiguous_rows(&self) -> bool {
        !self.is_expanded()
            && self.dim() > 1
            && self.stored.strides().last() == Some(&1)
    }

    /// The values as one slice, without copying, if they lie in row-major order with no
    /// gaps (`is_contiguous()`); `None` for other views (a transpose, a strided slice).
    /// What `t.contiguous().data_ptr()` gives in PyTorch, without the copy.
    ///
    /// # Shapes
    /// `numel()` values, row major.
    pub fn as_slice(&self) -> Option<&[E]> {
        match self.expanded {
            None => self.stored.as_slice(),
            Some(_) => None,
        }
    }

    /// `t.item()`: the value of a one-element tensor.
    ///
    /// # Shapes
    /// `self` must hold exactly one element (any rank).
    pub fn f_item(&self) -> Result<E> {
        if self.numel() != 1 {
            return Err(Error::Shape {
                op: "item",
                detail: format!(
                    "a tensor with {} elements (shape {:?}) cannot be converted to a scalar",
                    self.numel(),
                    self.sizes()
                ),
            });
        }
        Ok(*self.array().iter().next().expect("one element"))
    }

    /// Plain form of [`Tensor::f_item`].
    #[track_caller]
    pub fn item(&self) -> E {
        crate::error::or_panic(self.f_item())
    }

    /// Normalises a dim that may be negative (`-1` is the last dim), as PyTorch does.
    pub(crate) fn f_dim_index(&self, op: &'static str, dim: i64) -> Result<usize> {
        normalize_dim(op, dim, self.dim())
    }

    /// Like [`Tensor::f_dim_index`], but a 0-d tensor accepts `0` and `-1` and gets `None`:
    /// PyTorch lets ops such as `transpose`, `squeeze` or `sum` treat a scalar as if it had
    /// one dim, and they then return the scalar unchanged.
    pub(crate) fn f_dim_index_or_scalar(
        &self,
        op: &'static str,
        dim: i64,
    ) -> Result<Option<usize>> {
        if self.dim() == 0 {
            normalize_dim(op, dim, 1).map_err(|_| Error::DimOutOfRange {
                op,
                dim,
                ndim: 0,
            })?;
            return Ok(None);
        }
        normalize_dim(op, dim, self.dim()).map(Some)
    }

    /// `t[index] = value` for a full index (one entry per dim).
    ///
    /// # Shapes
    /// `index.len() == dim()`, each entry below its dim's size.
    pub fn f_set(&mut self, index: &[usize], value: E) -> Result<()> {
        if index.len() != self.dim()
            || index.iter().zip(self.sizes()).any(|(i, n)| i >= n)
        {
            return Err(Error::Shape {
                op: "set",
                detail: format!(
                    "index {index:?} does not address an element of a tensor of shape {:?}",
                    self.sizes()
                ),
            });
        }
        self.make_writable();
        self.stored[IxDyn(index)] = value;
        Ok(())
    }

    /// Plain form of [`Tensor::f_set`].
    #[track_caller]
    pub fn set(&mut self, index: &[usize], value: E) {
        crate::error::or_panic(self.f_set(index, value))
    }

    /// Applies `f` to every element, keeping the shape (the engine of the unary ops).
    pub(crate) fn map<O: Element>(&self, f: impl Fn(E) -> O) -> Tensor<O> {
        if self.is_expanded() {
            // Every repeat becomes an element of the result: the size is checked first.
            let mut values = crate::error::or_panic(crate::alloc::f_alloc::<O>(
                "elementwise",
                self.sizes(),
            ));
            values.extend(self.array().iter().map(|&x| f(x)));
            return Tensor::from_vec(values, self.sizes());
        }
        Tensor::from_array(self.stored.map(|&x| f(x)).into_shared())
    }

    /// The printer's view of this tensor: values in row-major order and the shape.
    fn print_text(&self) -> String {
        let values = self.to_vec();
        crate::fmt::format_tensor(
            E::values(&values),
            self.sizes(),
            &Suffixes::default(),
        )
    }
}

/// Maps a possibly negative `dim` into `0..ndim`.
pub(crate) fn normalize_dim(
    op: &'static str,
    dim: i64,
    ndim: usize,
) -> Result<usize> {
    let n = ndim as i64;
    let d = if dim < 0 { dim + n } else { dim };
    if d < 0 || d >= n {
        return Err(Error::DimOutOfRange { op, dim, ndim });
    }
    Ok(d as usize)
}

/// `print(t)`: PyTorch's exact text, e.g. `tensor([0.4419, 0.6515, 0.5683])`.
impl<E: Element> std::fmt::Display for Tensor<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.print_text())
    }
}

/// `Debug` prints the same text as `Display`, so `{:?}` in a test failure is readable.
impl<E: Element> std::fmt::Debug for Tensor<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.print_text())
    }
}

/// Positions as a 1-d index tensor, like `torch.tensor([2, 0, 1])`: the `usize` positions a
/// loop, `enumerate` or `len()` gives become the `int64` ids PyTorch indexes with.
///
/// ```
/// use shared::Tensor;
/// let ids = Tensor::from(vec![2usize, 0, 1]);
/// assert_eq!(ids.to_vec(), [2i64, 0, 1]);
/// ```
///
/// # Shapes
/// Returns `[positions.len()]`.
impl From<Vec<usize>> for Tensor<i64> {
    fn from(positions: Vec<usize>) -> Self {
        let n = positions.len();
        // A position beyond i64::MAX saturates, as `Position` does: no tensor is that long.
        let ids = positions
            .into_iter()
            .map(|p| i64::try_from(p).unwrap_or(i64::MAX))
            .collect();
        Tensor::from_vec(ids, &[n])
    }
}
