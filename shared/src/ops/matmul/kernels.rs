//! The loops that multiply matrices, each adding up its products in the order PyTorch's CPU
//! back-end does for that kind of product.
//!
//! Floating-point addition is not associative: `(a + b) + c` and `a + (b + c)` can differ
//! in the last bit, and a last bit can change the 4th printed decimal when a value sits
//! near a rounding boundary. So, to print the articles' digits, the order of the additions
//! must follow PyTorch's, which depends on what kind of product it is:
//!
//! - A batched product of small matrices (`k·m·n < 400`, e.g. `Q·Kᵀ` per head in the
//!   tutorials) runs PyTorch's own loop: for each output, `acc += a·b` over `k` in order,
//!   each product rounded, then added (no fused multiply-add). See [`plain_sum`].
//! - A 2-D product (and a batched one of larger matrices, one matrix at a time) goes to
//!   MKL's `sgemm`, which (measured on PyTorch 2.13.0 for `k ≤ 256`) accumulates each output
//!   over `k` in order with a fused multiply-add, `acc = fma(a, b, acc)`. See [`fused_sum`].
//! - Two exceptions measured in MKL:
//!   - when the right matrix is a transposed view (as in `x·Wᵀ` of `nn.Linear`) and has at
//!     most 3 columns, each output is a dot product whose (at most 16) products are added
//!     pairwise, as 16 vector lanes are: `p0+p8`, `p1+p9`, ..., then halves again until one
//!     value is left. See [`lane_sum`];
//!   - a matrix times a vector (`W·x`, MKL's `sgemv`), and one row times a transposed
//!     matrix (`q·Kᵀ`), start from the first product and fuse the others into 16 lanes, then
//!     add the lanes by halves. See [`row_dot_sum`].
//!
//! Larger products (`k > 256` or more than [`EXACT_LIMIT`] multiply-adds) use the
//! `matrixmultiply` crate's fast blocked kernels instead; there the order differs from MKL's
//! anyway, and only the speed matters.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2};

/// Products up to this many multiply-adds (`m·n·k`) use the order-exact loops.
pub const EXACT_LIMIT: usize = 1 << 18;

/// Batched products of matrices with `k·m·n` below this use PyTorch's own loop.
pub const SMALL_BMM_LIMIT: usize = 400;

/// How the additions of one output element are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// `acc += a·b` in order of `k`, product rounded first (PyTorch's small `bmm` loop).
    Plain,
    /// `acc = fma(a, b, acc)` in order of `k` (MKL's `sgemm`).
    Fused,
    /// Products added pairwise as vector lanes are (MKL, narrow transposed right matrix).
    Lanes,
    /// The first product, then the others fused into 16 lanes (MKL's `sgemv`).
    RowDots,
}

/// `c = a · b` for one pair of matrices, with the additions in `order`.
///
/// # Shapes
/// `a`: `[m, k]`, `b`: `[k, n]`, `c`: `[m, n]` (overwritten).
pub fn matmul_into(
    order: Order,
    a: ArrayView2<f32>,
    b: ArrayView2<f32>,
    mut c: ArrayViewMut2<f32>,
) {
    let (m, k) = a.dim();
    let n = b.dim().1;
    if k > 256 || m.saturating_mul(n).saturating_mul(k) > EXACT_LIMIT {
        general_mat_mul(1.0, &a, &b, 0.0, &mut c);
        return;
    }
    let mut column = vec![0.0f32; k];
    for j in 0..n {
        for (slot, &x) in column.iter_mut().zip(b.column(j)) {
            *slot = x;
        }
        for i in 0..m {
            let row = a.row(i);
            c[[i, j]] = match order {
                Order::Plain => plain_sum(row.iter().copied().zip(column.iter().copied())),
                Order::Fused => fused_sum(row.iter().copied().zip(column.iter().copied())),
                Order::Lanes => lane_sum(row.iter().copied().zip(column.iter().copied())),
                Order::RowDots => row_dot_sum(row.iter().copied().zip(column.iter().copied())),
            };
        }
    }
}

/// Which order PyTorch uses for a 2-D product `a · b` with `m` rows (see the module docs);
/// `vector` says that `b` is a vector (`torch.mv`).
///
/// # Shapes
/// `a`: `[m, k]`, `b`: `[k, n]`.
pub fn mkl_order(m: usize, b: ArrayView2<f32>, vector: bool) -> Order {
    let (k, n) = b.dim();
    // A transposed view `Wᵀ` of a row-major `W` steps 1 along `k` (down a column).
    let transposed = k > 1 && b.strides()[0] == 1;
    if vector || (m == 1 && transposed) {
        Order::RowDots
    } else if transposed && n <= 3 && k <= 16 {
        Order::Lanes
    } else {
        Order::Fused
    }
}

/// `Σ x·y` in order, each product rounded before it is added.
pub fn plain_sum(pairs: impl Iterator<Item = (f32, f32)>) -> f32 {
    pairs.fold(0.0, |acc, (x, y)| acc + x * y)
}

/// `Σ x·y` in order, each product fused into the running sum (one rounding per step).
pub fn fused_sum(pairs: impl Iterator<Item = (f32, f32)>) -> f32 {
    pairs.fold(0.0, |acc, (x, y)| x.mul_add(y, acc))
}

/// `Σ x·y` of at most 16 products, added as 16 vector lanes are reduced: lane `i` holds
/// product `i` (or 0), then lane `i` and lane `i + half` are added while more than one is
/// left (`half` = 8, 4, 2, 1).
pub fn lane_sum(pairs: impl Iterator<Item = (f32, f32)>) -> f32 {
    let mut lanes = [0.0f32; 16];
    for (lane, (x, y)) in lanes.iter_mut().zip(pairs) {
        *lane = x * y;
    }
    add_by_halves(lanes)
}

/// `Σ x·y` as MKL's `sgemv` adds a row times a vector: lane 0 starts with the first
/// product, the next products are fused into lanes 0, 1, ..., 15, 0, 1, ... in turn, and the
/// 16 lanes are then added by halves (lane `i` plus lane `i + 8`, and so on).
/// Measured on PyTorch 2.13.0 for rows of up to 17 and of 33 elements.
pub fn row_dot_sum(mut pairs: impl Iterator<Item = (f32, f32)>) -> f32 {
    let mut lanes = [0.0f32; 16];
    if let Some((x, y)) = pairs.next() {
        lanes[0] = x * y;
    }
    for (t, (x, y)) in pairs.enumerate() {
        let lane = &mut lanes[t % 16];
        *lane = x.mul_add(y, *lane);
    }
    add_by_halves(lanes)
}

/// Adds 16 lanes as a vector unit reduces them: lane `i` plus lane `i + 8`, then `i + 4`,
/// `i + 2`, `i + 1`.
fn add_by_halves(mut lanes: [f32; 16]) -> f32 {
    let mut half = 8;
    while half > 0 {
        for i in 0..half {
            lanes[i] += lanes[i + half];
        }
        half /= 2;
    }
    lanes[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_orders_differ_only_in_rounding() {
        let pairs = [(1.0f32, 1e8f32), (1.0, 1.0), (1.0, -1e8)];
        // Plain: (1e8 + 1) rounds to 1e8, minus 1e8 gives 0.
        assert_eq!(plain_sum(pairs.into_iter()), 0.0);
        // Lanes: (p0 + p2) + p1 = 0 + 1.
        assert_eq!(lane_sum(pairs.into_iter()), 1.0);
        assert_eq!(fused_sum([(2.0f32, 3.0f32), (4.0, 5.0)].into_iter()), 26.0);
    }
}
