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

impl<E: Element, const N: usize, const M: usize, const K: usize, const L: usize>
    NestedArray<E> for [[[[E; N]; M]; K]; L]
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
    /// Returns `shape`; its product must fit in memory (else an error, never a wrap-around).
    pub fn f_full(shape: &[usize], value: E) -> Result<Self> {
        f_filled("full", shape, value)
    }

    /// Plain form of [`Tensor::f_full`].
    ///
    /// # Shapes
    /// Returns `shape`.
    #[track_caller]
    pub fn full(shape: &[usize], value: E) -> Self {
        or_panic(Tensor::f_full(shape, value))
    }

    /// `torch.full_like(t, value)`: the shape of `self`, every element `value`.
    ///
    /// # Shapes
    /// Returns `self.shape()`.
    pub fn full_like(&self, value: E) -> Self {
        Tensor::full(self.sizes(), value)
    }
}

/// A tensor of `shape` with every element `value`; `op` names the caller in errors.
fn f_filled<E: Element>(
    op: &'static str,
    shape: &[usize],
    value: E,
) -> Result<Tensor<E>> {
    let mut values = crate::alloc::f_alloc(op, shape)?;
    values.resize(shape.iter().product(), value);
    Ok(crate::storage::from_checked_vec(values, shape))
}

/// `torch.zeros(shape)`.
///
/// # Shapes
/// Returns `shape`; its product must fit in memory.
pub fn f_zeros(shape: &[usize]) -> Result<Tensor> {
    f_filled("zeros", shape, 0.0)
}

/// Plain form of [`f_zeros`].
///
/// # Shapes
/// Returns `shape`.
#[track_caller]
pub fn zeros(shape: &[usize]) -> Tensor {
    or_panic(f_zeros(shape))
}

/// `len` zeros in a fresh buffer, written by the current rayon pool's threads when there
/// are many: for the outputs of parallel kernels. A fresh buffer's pages come from the
/// operating system on first write, each a fault and a cleared page of 4 KiB; for an output
/// of megabytes that is milliseconds, and done by the calling thread alone it would be a
/// part of the call that other cores cannot share.
///
/// # Shapes
/// `len` values.
pub fn zeros_in_parallel(len: usize) -> Vec<f32> {
    let mut zeros = Vec::new();
    crate::alloc::push_zeros_in_parallel(&mut zeros, len);
    zeros
}

/// `torch.ones(shape)`.
///
/// # Shapes
/// Returns `shape`; its product must fit in memory.
pub fn f_ones(shape: &[usize]) -> Result<Tensor> {
    f_filled("ones", shape, 1.0)
}

/// Plain form of [`f_ones`].
///
/// # Shapes
/// Returns `shape`.
#[track_caller]
pub fn ones(shape: &[usize]) -> Tensor {
    or_panic(f_ones(shape))
}

/// `torch.empty(shape)`. PyTorch leaves the memory uninitialised; we fill it with zeros,
/// since Rust does not let safe code read uninitialised memory and nothing may depend on it.
///
/// # Shapes
/// Returns `shape`; its product must fit in memory.
pub fn f_empty(shape: &[usize]) -> Result<Tensor> {
    f_filled("empty", shape, 0.0)
}

/// Plain form of [`f_empty`].
///
/// # Shapes
/// Returns `shape`.
#[track_caller]
pub fn empty(shape: &[usize]) -> Tensor {
    or_panic(f_empty(shape))
}

impl Tensor {
    /// `torch.zeros_like(t)`.
    ///
    /// # Shapes
    /// Returns `self.shape()`.
    pub fn zeros_like(&self) -> Tensor {
        zeros(self.sizes())
    }

    /// `torch.ones_like(t)`.
    ///
    /// # Shapes
    /// Returns `self.shape()`.
    pub fn ones_like(&self) -> Tensor {
        ones(self.sizes())
    }

    /// `torch.empty_like(t)` (zero-filled, see [`empty`]).
    ///
    /// # Shapes
    /// Returns `self.shape()`.
    pub fn empty_like(&self) -> Tensor {
        empty(self.sizes())
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
    pub(crate) fn fill_in_memory_order(
        &mut self,
        fill: impl FnOnce(&mut [f32], bool),
    ) {
        self.make_writable();
        let contiguous = self.is_contiguous();
        match self.stored.as_slice_memory_order_mut() {
            Some(values) => fill(values, contiguous),
            None => {
                // A view with gaps (a slice of a slice): fill a fresh buffer in row-major order.
                let mut values = vec![0.0; self.numel()];
                fill(&mut values, false);
                let shape = self.sizes().to_vec();
                self.stored = ArcArray::from_shape_vec(IxDyn(&shape), values)
                    .expect("same element count");
            }
        }
    }
}

/// `torch.rand(shape)`: uniform in `[0, 1)` from the default generator.
///
/// # Shapes
/// Returns `shape`; its product must fit in memory.
pub fn f_rand(shape: &[usize]) -> Result<Tensor> {
    let mut t = f_filled("rand", shape, 0.0)?;
    t.uniform_(0.0, 1.0);
    Ok(t)
}

/// Plain form of [`f_rand`].
///
/// # Shapes
/// Returns `shape`.
#[track_caller]
pub fn rand(shape: &[usize]) -> Tensor {
    or_panic(f_rand(shape))
}

/// `torch.randn(shape)`: standard normal from the default generator.
///
/// ```
/// use shared::{manual_seed, randn};
/// manual_seed(123);
/// assert_eq!(
///     randn(&[2, 3]).to_string(),
///     "tensor([[-0.1115,  0.1204, -0.3696],\n        [-0.2404, -1.1969,  0.2093]])"
/// );
/// ```
///
/// # Shapes
/// Returns `shape`; its product must fit in memory.
pub fn f_randn(shape: &[usize]) -> Result<Tensor> {
    let mut t = f_filled("randn", shape, 0.0)?;
    t.normal_(0.0, 1.0);
    Ok(t)
}

/// Plain form of [`f_randn`].
///
/// # Shapes
/// Returns `shape`.
#[track_caller]
pub fn randn(shape: &[usize]) -> Tensor {
    or_panic(f_randn(shape))
}

/// What `arange` can count with, as in Python: integers (`arange(0, 5, 1)` or
/// `arange(0, n, 1)` with a `usize` length make `i64` values, like `torch.arange(5)`) or floats (`f64` like Python's floats, or `f32`; both make
/// `f32` values, PyTorch's default float dtype).
pub trait Arange: Copy + std::fmt::Display {
    /// The element type of the result.
    type Output: Element;

    /// The value in `f64`, where PyTorch checks the bounds.
    fn to_f64(self) -> f64;

    /// How many values `start, start + step, ...` stay short of `end`, computed as PyTorch
    /// does: `ceil((end - start) / step)` in `f64` (the difference taken in the argument type).
    fn count(start: Self, end: Self, step: Self) -> f64;

    /// Appends the `n` values to `out` (whose memory is already reserved).
    fn push_values(start: Self, step: Self, n: usize, out: &mut Vec<Self::Output>);
}

impl Arange for i64 {
    type Output = i64;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn count(start: Self, end: Self, step: Self) -> f64 {
        // PyTorch subtracts in i64; a difference beyond i64 wraps around to a negative count,
        // which the caller then refuses ("invalid size"), as PyTorch does.
        (end.wrapping_sub(start) as f64 / step as f64).ceil()
    }
    fn push_values(start: Self, step: Self, n: usize, out: &mut Vec<i64>) {
        // Every value lies between `start` and `end`; wrapping only guards against a count
        // that `f64` rounded up at the very ends of the i64 range (PyTorch wraps there too).
        out.extend((0..n as i64).map(|i| start.wrapping_add(step.wrapping_mul(i))));
    }
}

/// Integer literals (`arange(0, 5, 1)`, whose type Rust picks as `i32`) count as `i64`.
impl Arange for i32 {
    type Output = i64;
    fn to_f64(self) -> f64 {
        self.into()
    }
    fn count(start: Self, end: Self, step: Self) -> f64 {
        i64::count(start.into(), end.into(), step.into())
    }
    fn push_values(start: Self, step: Self, n: usize, out: &mut Vec<i64>) {
        i64::push_values(start.into(), step.into(), n, out);
    }
}

/// Counting with `usize` (`arange(0, n, 1)` with a length `n`) makes `i64` values, as
/// counting with `i64` does.
impl Arange for usize {
    type Output = i64;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn count(start: Self, end: Self, step: Self) -> f64 {
        // Called once the bounds are checked: `end >= start` and `step > 0`.
        ((end - start) as f64 / step as f64).ceil()
    }
    fn push_values(start: Self, step: Self, n: usize, out: &mut Vec<i64>) {
        // The values stay below `end`, a usize: beyond i64::MAX they saturate, as a
        // `Position` does (no tensor is that long).
        out.extend(
            (0..n).map(|i| i64::try_from(start + step * i).unwrap_or(i64::MAX)),
        );
    }
}

impl Arange for f64 {
    type Output = f32;
    fn to_f64(self) -> f64 {
        self
    }
    fn count(start: Self, end: Self, step: Self) -> f64 {
        ((end - start) / step).ceil()
    }
    fn push_values(start: Self, step: Self, n: usize, out: &mut Vec<f32>) {
        crate::kernels::arange::float_range(start, step, n, out);
    }
}

impl Arange for f32 {
    type Output = f32;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn count(start: Self, end: Self, step: Self) -> f64 {
        f64::count(start as f64, end as f64, step as f64)
    }
    fn push_values(start: Self, step: Self, n: usize, out: &mut Vec<f32>) {
        crate::kernels::arange::float_range(start as f64, step as f64, n, out);
    }
}

/// `torch.arange(start, end, step)`: `start, start + step, ...` while short of `end`.
/// With PyTorch's checks and messages: a zero step, infinite bounds, or a step that points
/// away from `end` are errors.
///
/// # Shapes
/// Returns `[ceil((end - start) / step)]`.
pub fn f_arange<A: Arange>(start: A, end: A, step: A) -> Result<Tensor<A::Output>> {
    let (a, b, s) = (start.to_f64(), end.to_f64(), step.to_f64());
    let invalid = |detail: String| Error::InvalidArgument {
        op: "arange",
        detail,
    };
    if s == 0.0 || s.is_nan() {
        return Err(invalid(format!("step must be nonzero (got {step})")));
    }
    if !a.is_finite() || !b.is_finite() {
        return Err(invalid(format!("unsupported range: {start} -> {end}")));
    }
    if !((s > 0.0 && b >= a) || (s < 0.0 && b <= a)) {
        return Err(invalid(format!(
            "upper bound and lower bound inconsistent with step sign (start {start}, end \
             {end}, step {step})"
        )));
    }
    let count = A::count(start, end, step);
    if !(count >= 0.0 && count <= i64::MAX as f64) {
        return Err(invalid(format!(
            "invalid size, possible overflow? ({start} to {end} by {step})"
        )));
    }
    let n = count as usize;
    let mut values = crate::alloc::f_alloc("arange", &[n])?;
    A::push_values(start, step, n, &mut values);
    Ok(Tensor::from_vec(values, &[n]))
}

/// Plain form of [`f_arange`].
///
/// # Shapes
/// Returns `[ceil((end - start) / step)]`.
#[track_caller]
pub fn arange<A: Arange>(start: A, end: A, step: A) -> Tensor<A::Output> {
    or_panic(f_arange(start, end, step))
}
