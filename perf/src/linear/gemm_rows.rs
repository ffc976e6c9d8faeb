//! Matrix products of row-major buffers by the packed GEMM (`shared::exact::gemm_with`): a
//! fused chain in order of the inner dimension for every output, as the tensors' matrix
//! products of these sizes, written into a buffer the caller keeps.

use ndarray::{ArrayView2, ArrayViewMut2};
use shared::exact::gemm_with;
use shared::simd::Isa;

/// A row-major matrix: its numbers, its rows and its columns.
pub type Rows<'a> = (&'a [f32], usize, usize);

/// The right-hand matrix, its rows known from the left one: its numbers and its columns
/// (or, transposed, its rows).
pub type Right<'a> = (&'a [f32], usize);

/// `c = a · b` for row-major buffers: `a` `[m, k]` (or `a_t` `[k, m]`), `b` `[k, n]` (or
/// `b_t` `[n, k]`), `c` `[m, n]`, its first `m · n` numbers overwritten.
pub struct Gemm {
    isa: Isa,
}

impl Gemm {
    /// Products on the instruction set `isa` (one this processor has).
    ///
    /// # Shapes
    /// None: a product's shapes come with its operands.
    pub fn new(isa: Isa) -> Gemm {
        Gemm { isa }
    }

    /// `c = a · b`.
    ///
    /// # Shapes
    /// `a`: `[m, k]`, `b`: `[k, n]`, `c`: `[m, n]` (at least).
    pub fn ab(&self, a: Rows, b: Right, c: &mut [f32]) {
        let (a, m, k) = a;
        let (b, n) = b;
        let a = ArrayView2::from_shape((m, k), &a[..m * k]).expect("a fits [m, k]");
        let b = ArrayView2::from_shape((k, n), &b[..k * n]).expect("b fits [k, n]");
        let c = ArrayViewMut2::from_shape((m, n), &mut c[..m * n])
            .expect("c fits [m, n]");
        gemm_with(self.isa, a, b, c);
    }

    /// `c = a · b_tᵀ`.
    ///
    /// # Shapes
    /// `a`: `[m, k]`, `b_t`: `[n, k]`, `c`: `[m, n]` (at least).
    pub fn abt(&self, a: Rows, b_t: Right, c: &mut [f32]) {
        let (a, m, k) = a;
        let (b_t, n) = b_t;
        let a = ArrayView2::from_shape((m, k), &a[..m * k]).expect("a fits [m, k]");
        let b_t =
            ArrayView2::from_shape((n, k), &b_t[..n * k]).expect("b_t fits [n, k]");
        let c = ArrayViewMut2::from_shape((m, n), &mut c[..m * n])
            .expect("c fits [m, n]");
        gemm_with(self.isa, a, b_t.t(), c);
    }

    /// `c = a_tᵀ · b`.
    ///
    /// # Shapes
    /// `a_t`: `[k, m]` (given as `(numbers, k, m)`), `b`: `[k, n]`, `c`: `[m, n]` (at least).
    pub fn atb(&self, a_t: Rows, b: Right, c: &mut [f32]) {
        let (a_t, k, m) = a_t;
        let (b, n) = b;
        let a_t =
            ArrayView2::from_shape((k, m), &a_t[..k * m]).expect("a_t fits [k, m]");
        let b = ArrayView2::from_shape((k, n), &b[..k * n]).expect("b fits [k, n]");
        let c = ArrayViewMut2::from_shape((m, n), &mut c[..m * n])
            .expect("c fits [m, n]");
        gemm_with(self.isa, a_t.t(), b, c);
    }
}
