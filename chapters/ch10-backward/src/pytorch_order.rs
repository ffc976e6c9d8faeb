//! Softmax's backward in the order PyTorch's vectorised CPU kernel adds a row, for rows
//! long enough that the order shows in the last bit.
//!
//! The chapter's [`softmax_backward`](crate::softmax::softmax_backward) adds each row's dot
//! product left to right. PyTorch's CPU kernel handles W floats at once (W = 16 with
//! AVX-512, 8 with AVX2): lane `l` accumulates the products of elements `l`, `l + W`,
//! `l + 2W`, ..., each product rounded before it is added; the lanes are then added in
//! pairs (a butterfly). A row shorter than W is added left to right, so for the chapter's
//! rows (6 and 8 keys) the two functions agree bit for bit; for longer rows they agree to a
//! few units in the last place, and this one has PyTorch's bits. The book's appendix
//! "Matching PyTorch to the last bit" explains why. `shared::exact::capability()` says which
//! build we follow.

use shared::Tensor;
use shared::exact::{Capability, capability};

use crate::attention::{AttentionGrads, AttentionTape};
use crate::matmul::matmul_backward;
use crate::pointwise::{dropout_backward, masked_fill_backward, scale_backward};

/// [`attention_backward`](crate::attention::attention_backward) with the softmax
/// step in PyTorch's order ([`softmax_backward_in_pytorch_order`]): autograd's gradients bit
/// for bit for rows of any length, which a training run of thousands of steps needs (the
/// formula's rows of more than 16 keys differ in the last bits). The same steps as the
/// chapter's, kept here because the chapter's function is an exercise.
///
/// # Shapes
/// `grad_out`: `[.., tokens, d_v]`. Returns the shapes of the tape's queries, keys and
/// values.
pub fn attention_backward_in_pytorch_order(
    tape: &AttentionTape,
    grad_out: &Tensor,
) -> AttentionGrads {
    let (grad_dropped, grad_values) =
        matmul_backward(&tape.dropped, &tape.values, grad_out);
    let grad_weights = dropout_backward(&grad_dropped, tape.noise.as_ref());
    let grad_scaled = softmax_backward_in_pytorch_order(&tape.weights, &grad_weights);
    let grad_masked = scale_backward(&grad_scaled, tape.scale);
    let grad_scores = masked_fill_backward(&grad_masked, &tape.hidden);
    let keys_t = tape.keys.transpose(-2, -1);
    let (grad_queries, grad_keys_t) =
        matmul_backward(&tape.queries, &keys_t, &grad_scores);
    AttentionGrads {
        queries: grad_queries,
        keys: grad_keys_t.transpose(-2, -1),
        values: grad_values,
    }
}

/// [`softmax_backward`](crate::softmax::softmax_backward) with each row's dot product added
/// in PyTorch's lane order ([`row_dot`]), then `(grad_y ⊖ dot) ⊗ y`, the subtraction
/// rounded first: PyTorch's gradient bit for bit, for rows of any length.
///
/// # Shapes
/// `y`, `grad_y`: `[.., n]`, the same shape. Returns it.
///
/// # Panics
/// If the shapes differ or `y` is 0-d.
pub fn softmax_backward_in_pytorch_order(y: &Tensor, grad_y: &Tensor) -> Tensor {
    assert!(
        y.sizes() == grad_y.sizes() && y.dim() > 0,
        "softmax_backward_in_pytorch_order: output {:?} and its gradient {:?} must have \
         one shape, of at least one dim",
        y.sizes(),
        grad_y.sizes()
    );
    let n = y.size(-1).max(1);
    let (y_rows, g_rows) = (y.to_vec(), grad_y.to_vec());
    let mut grad_x = Vec::with_capacity(y_rows.len());
    for (y_row, g_row) in y_rows.chunks(n).zip(g_rows.chunks(n)) {
        let dot = row_dot(g_row, y_row);
        grad_x.extend(g_row.iter().zip(y_row).map(|(&g, &y)| (g - dot) * y));
    }
    Tensor::from_vec(grad_x, y.sizes())
}

/// `Σ a[i]·b[i]` in the order of PyTorch's softmax backward on this capability.
///
/// # Shapes
/// `a`, `b`: the same length (an empty row gives 0).
pub fn row_dot(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(
        a.len(),
        b.len(),
        "row_dot: rows of lengths {} and {}",
        a.len(),
        b.len()
    );
    let mut products = a.iter().zip(b).map(|(x, y)| x * y);
    let w = capability().softmax_lanes();
    if a.len() < w {
        let first = products.next().unwrap_or(0.0);
        return products.fold(first, |acc, p| acc + p);
    }
    let mut lanes = [0.0f32; 16];
    for (lane, p) in lanes.iter_mut().zip(products.by_ref().take(w)) {
        *lane = p;
    }
    // A last partial block feeds only the first lanes.
    for (t, p) in products.enumerate() {
        lanes[t % w] += p;
    }
    combine(&mut lanes[..w])
}

/// Adds the lanes: pairwise (lane `l` takes lane `l xor dist` for dist = W/2, ..., 1) in
/// the vector builds, one after the other in the portable build.
fn combine(lanes: &mut [f32]) -> f32 {
    if capability() == Capability::Default {
        return lanes[1..].iter().fold(lanes[0], |acc, &x| acc + x);
    }
    let mut dist = lanes.len() / 2;
    while dist > 0 {
        let before = lanes.to_vec();
        for (l, lane) in lanes.iter_mut().enumerate() {
            *lane = before[l] + before[l ^ dist];
        }
        dist /= 2;
    }
    lanes[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::softmax::softmax_backward;
    use shared::{manual_seed, randn};

    /// Rows shorter than the lanes are added left to right by both: the same bits. Longer
    /// rows: the two dot products are sums of the same `n` rounded products in two orders,
    /// each within `(n − 1)·ε·Σ|g_j p_j|` of the exact sum, so the gradients differ by at
    /// most `p_i · 2(n − 1)·ε·Σ|g_j p_j|` plus one rounding of the result.
    #[test]
    fn agrees_with_the_formula() {
        manual_seed(0);
        for n in [1, 6, 8, 15, 16, 17, 40, 100] {
            let y = (randn(&[3, n]) * 2.0).softmax(-1);
            let g = randn(&[3, n]);
            let (ours, formula) = (
                softmax_backward_in_pytorch_order(&y, &g).to_vec(),
                softmax_backward(&y, &g).to_vec(),
            );
            let (p, gv) = (y.to_vec(), g.to_vec());
            for (i, (a, b)) in ours.iter().zip(&formula).enumerate() {
                if n < capability().softmax_lanes() {
                    assert_eq!(a.to_bits(), b.to_bits(), "n {n}, element {i}");
                    continue;
                }
                let row = i / n * n..i / n * n + n;
                let scale: f32 = row.clone().map(|j| (gv[j] * p[j]).abs()).sum();
                let bound = p[i] * 2.0 * (n - 1) as f32 * f32::EPSILON * scale
                    + f32::EPSILON * a.abs();
                assert!((a - b).abs() <= bound, "n {n}, element {i}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn short_rows_add_left_to_right() {
        assert_eq!(row_dot(&[], &[]), 0.0);
        assert_eq!(row_dot(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
    }

    #[test]
    fn long_rows_equal_the_exact_sum_of_small_integers() {
        let a: Vec<f32> = (0..37).map(|i| i as f32).collect();
        let b = vec![2.0; 37];
        assert_eq!(row_dot(&a, &b), (0..37).sum::<i32>() as f32 * 2.0);
    }
}
