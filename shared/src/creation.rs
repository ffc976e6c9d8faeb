//! Making tensors: from literals (`tensor!`), from a `Vec` and a shape, filled with a
//! constant, counting up (`arange`), or drawn from PyTorch's generator (`rand`, `randn`).

use ndarray::{ArcArray, IxDyn};

use crate::error::{Error, Result, or_panic};
use crate::rng::with_default_generator;
use crate::tensor::{Element, Tensor};

/// Nested Rust arrays that can become a tensor: `[E; N]`, `[[E; N]; M]`, up to 4 levels,
/// so `tensor!([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]])` reads like `torch.tensor([...])`.
/// The element type follows from the literals: `0.43` makes `f32`, `2` makes `i64`,
/// `true` makes `bool`.
pub trait NestedArray<E: Element> {
    /// The shape and the row-major values.
    fn into_parts(self) -> (Vec<usize>, Vec<E>);
}

impl<E: Element> NestedArray<E> for E {
    fn into_parts(self) -> (Vec<usize>, Vec<E>) {
        (vec![], vec![self])
    }
}

impl<E: Element, const N: usize> NestedArray<E> for [E; N] {
    fn into_parts(self) -> (Vec<usize>, Vec<E>) {
        (vec![N], self.to_vec())
    }
}

impl<E: Element, const N: usize, const M: usize> NestedArray<E> for [[E; N]; M] {
    fn into_parts(self) -> (Vec<usize>, Vec<E>) {
        (vec![M, N], self.iter().flatten().copied().collect())
    }
}

impl<E: Element, const N: usize, const M: usize, const K: usize> NestedArray<E>
    for [[[E; N]; M]; K]
{
    fn into_parts(self) -> (Vec<usize>, Vec<E>) {
        let values = self.iter().flatten().flatten().copied().collect();
        (vec![K, M, N], values)
    }
}

impl<E: Element, const N: usize, const M: usize, const K: usize, const L: usize> NestedArray<E>
    for [[[[E; N]; M]; K]; L]
{
    fn into_parts(self) -> (Vec<usize>, Vec<E>) {
        let values = self.iter().flatten().flatten().flatten().copied().collect();
        (vec![L, K, M, N], values)
    }
}

/// `torch.tensor([...])` for nested array literals (up to 4-D) or a single value (0-d).
///
/// ```
/// use shared::tensor;
/// let inputs = tensor!([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]]);
/// assert_eq!(inputs.shape(), [2, 3]);
/// let ids = tensor!([2, 6, 8, 3, 1]);
/// assert_eq!(ids.to_string(), "tensor([2, 6, 8, 3, 1])");
/// ```
#[macro_export]
macro_rules! tensor {
    ($literal:expr) => {
        $crate::Tensor::from_nested($literal)
    };
}

impl<E: Element> Tensor<E> {
    /// The function behind [`tensor!`]: a tensor from nested arrays.
    ///
    /// # Shapes
    /// `[E; N]` gives `[N]`, `[[E; N]; M]` gives `[M, N]`, and so on; a bare value gives `[]`.
    pub fn from_nested(literal: impl NestedArray<E>) -> Self {
        let (shape, values) = literal.into_parts();
        Tensor::from_vec(values, &shape)
    }

    /// `torch.full(shape, value)`.
    ///
    /// # Shapes
    /// Returns `shape`.
    pub fn full(shape: &[usize], value: E) -> Self {
        Tensor::from_array(ArcArray::from_elem(IxDyn(shape), value))
    }

    /// `torch.full_like(t, value)`: the shape of `self`, every element `value`.
    ///
    /// # Shapes
    /// Returns `self.shape()`.
    pub fn full_like(&self, value: E) -> Self {
        Tensor::full(self.dims(), value)
    }
}

/// `torch.zeros(shape)`.
///
/// # Shapes
/// Returns `shape`.
pub fn zeros(shape: &[usize]) -> Tensor {
    Tensor::full(shape, 0.0)
}

/// `torch.ones(shape)`.
///
/// # Shapes
/// Returns `shape`.
pub fn ones(shape: &[usize]) -> Tensor {
    Tensor::full(shape, 1.0)
}

/// `torch.empty(shape)`. PyTorch leaves the memory uninitialised; we fill it with zeros,
/// since Rust does not let safe code read uninitialised memory and nothing may depend on it.
///
/// # Shapes
/// Returns `shape`.
pub fn empty(shape: &[usize]) -> Tensor {
    zeros(shape)
}

impl Tensor {
    /// `torch.zeros_like(t)`.
    ///
    /// # Shapes
    /// Returns `self.shape()`.
    pub fn zeros_like(&self) -> Tensor {
        zeros(self.dims())
    }

    /// `torch.ones_like(t)`.
    ///
    /// # Shapes
    /// Returns `self.shape()`.
    pub fn ones_like(&self) -> Tensor {
        ones(self.dims())
    }

    /// `torch.empty_like(t)` (zero-filled, see [`empty`]).
    ///
    /// # Shapes
    /// Returns `self.shape()`.
    pub fn empty_like(&self) -> Tensor {
        empty(self.dims())
    }

    /// `t.uniform_(from, to)` with the default generator: every element drawn uniformly from
    /// `[from, to)`, in the order of the tensor's memory (as PyTorch fills a transposed view).
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn uniform_(&mut self, from: f64, to: f64) -> &mut Self {
        self.fill_in_memory_order(|values, _| {
            with_default_generator(|g| g.fill_uniform(values, from, to))
        });
        self
    }

    /// `t.normal_(mean, std)` with the default generator, in memory order. Like PyTorch, a
    /// contiguous tensor of 16 or more elements takes the vectorised block path and anything
    /// else the scalar path (which uses the generator's cached spare normal).
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn normal_(&mut self, mean: f64, std: f64) -> &mut Self {
        self.fill_in_memory_order(|values, contiguous| {
            with_default_generator(|g| g.fill_normal(values, mean, std, contiguous))
        });
        self
    }

    /// Runs `fill` over the elements in the order they lie in memory. `fill` also learns
    /// whether the tensor is contiguous in PyTorch's sense (row-major with no gaps).
    pub(crate) fn fill_in_memory_order(&mut self, fill: impl FnOnce(&mut [f32], bool)) {
        let contiguous = self.is_contiguous();
        match self.data.as_slice_memory_order_mut() {
            Some(values) => fill(values, contiguous),
            None => {
                // A view with gaps (a slice of a slice): fill a fresh buffer in row-major order.
                let mut values = vec![0.0; self.numel()];
                fill(&mut values, false);
                let shape = self.dims().to_vec();
                self.data =
                    ArcArray::from_shape_vec(IxDyn(&shape), values).expect("same element count");
            }
        }
    }
}

/// `torch.rand(shape)`: uniform in `[0, 1)` from the default generator.
///
/// # Shapes
/// Returns `shape`.
pub fn rand(shape: &[usize]) -> Tensor {
    let mut t = zeros(shape);
    t.uniform_(0.0, 1.0);
    t
}

/// `torch.randn(shape)`: standard normal from the default generator.
///
/// # Shapes
/// Returns `shape`.
pub fn randn(shape: &[usize]) -> Tensor {
    let mut t = zeros(shape);
    t.normal_(0.0, 1.0);
    t
}

/// Element types `arange` can count in: `i64` (what `torch.arange(5)` makes) and `f32`.
pub trait Arange: Element {
    /// The value widened to `f64`, where PyTorch does the counting for floats.
    fn to_f64(self) -> f64;
    /// `start + step * i`, computed as PyTorch computes it (in `f64` for floats).
    fn nth(start: Self, step: Self, i: usize) -> Self;
}

impl Arange for i64 {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn nth(start: Self, step: Self, i: usize) -> Self {
        start + step * i as i64
    }
}

impl Arange for f32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn nth(start: Self, step: Self, i: usize) -> Self {
        (start as f64 + step as f64 * i as f64) as f32
    }
}

/// `torch.arange(start, end, step)`: `start, start + step, ...` while short of `end`.
///
/// # Shapes
/// Returns `[ceil((end - start) / step)]` (`[0]` when `step` points away from `end`).
pub fn f_arange<E: Arange>(start: E, end: E, step: E) -> Result<Tensor<E>> {
    let (a, b, s) = (start.to_f64(), end.to_f64(), step.to_f64());
    if s == 0.0 || !s.is_finite() || !a.is_finite() || !b.is_finite() {
        return Err(Error::InvalidArgument {
            op: "arange",
            detail: format!("step must be nonzero and the bounds finite (got {a}, {b}, {s})"),
        });
    }
    let n = ((b - a) / s).ceil().max(0.0) as usize;
    let values = (0..n).map(|i| E::nth(start, step, i)).collect();
    Ok(Tensor::from_vec(values, &[n]))
}

/// Plain form of [`f_arange`].
#[track_caller]
pub fn arange<E: Arange>(start: E, end: E, step: E) -> Tensor<E> {
    or_panic(f_arange(start, end, step))
}
