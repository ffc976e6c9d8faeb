//! The chapter's cross-entropy (its sum and its backward) and AdamW update in PyTorch's
//! order of roundings, beside the formulas the chapter shows.
//!
//! The formulas ([`cross_entropy_backward`](crate::cross_entropy::cross_entropy_backward),
//! [`adamw_update`](crate::adamw::adamw_update)) compute the same numbers up to the last
//! bit or two; these follow PyTorch's CPU kernels operation by operation, so their bits
//! are PyTorch's. The printed losses (4 decimals) do not see the difference, and the tests
//! below state how far apart the two can be. The book's appendix "Matching PyTorch to the
//! last bit" explains why the orders differ.

use shared::Tensor;
use shared::exact::expf_u10;

use crate::adamw::StepConstants;

/// `−Σ log p` in the order of PyTorch's `nll_loss`: eight partial sums, the first taking
/// every term; whenever the count of terms seen so far (before this one) is a multiple of
/// 16, 256, ..., the lower sums are carried into the next one up. The partial sums are added
/// last, lowest first. (So for 16 rows or fewer the first row's term is added last.)
/// This is the same idea as a pairwise sum: the error grows with the log of the count.
///
/// # Shapes
/// Any number of log-probabilities in, one float out.
pub fn nll_sum(log_probs: impl IntoIterator<Item = f32>) -> f32 {
    let mut partial = [0.0f32; 8];
    for (i, log_p) in log_probs.into_iter().enumerate() {
        partial[0] -= log_p;
        for level in 0..7 {
            if i & (15 << (4 * level)) != 0 {
                break;
            }
            partial[level + 1] += partial[level];
            partial[level] = 0.0;
        }
    }
    partial.iter().fold(0.0, |sum, &p| sum + p)
}

/// [`cross_entropy`](crate::cross_entropy::cross_entropy) with its loss summed in
/// `nll_loss`'s order ([`nll_sum`]), so the loss has PyTorch's bits.
///
/// # Shapes
/// `logits`: `[rows, classes]`, `targets`: `[rows]` ids in `0..classes`.
pub fn cross_entropy_in_pytorch_order(
    logits: &Tensor,
    targets: &Tensor<i64>,
) -> crate::cross_entropy::CrossEntropy {
    let formula = crate::cross_entropy::cross_entropy(logits, targets);
    let classes = formula.log_probs.size(-1);
    let values = formula.log_probs.to_vec();
    let picked = targets
        .to_vec()
        .into_iter()
        .enumerate()
        .map(|(row, t)| values[row * classes + t as usize]);
    crate::cross_entropy::CrossEntropy {
        loss: nll_sum(picked) / targets.numel() as f32,
        log_probs: formula.log_probs,
    }
}

/// `(softmax(z) − onehot(t)) / rows` as PyTorch's `log_softmax` backward computes it: the
/// loss sends `c = −1/rows` to the target's log-probability, and every entry becomes
/// `fma(−exp(log p), c, onehot · c)` with one rounding (`exp` is the SLEEF `expf_u10`
/// PyTorch's kernel uses).
///
/// # Shapes
/// `log_probs`: `[rows, classes]`, `targets`: `[rows]`. Returns `[rows, classes]`.
pub fn cross_entropy_backward_in_pytorch_order(
    log_probs: &Tensor,
    targets: &Tensor<i64>,
) -> Tensor {
    let (rows, classes) = (log_probs.size(0), log_probs.size(1));
    let c = -(1.0 / rows as f32);
    let mut grad = log_probs.to_vec();
    for (row, target) in targets.to_vec().into_iter().enumerate() {
        for class in 0..classes {
            let onehot = if class == target as usize { c } else { 0.0 };
            let entry = &mut grad[row * classes + class];
            *entry = (-expf_u10(*entry)).mul_add(c, onehot);
        }
    }
    Tensor::from_vec(grad, &[rows, classes])
}

/// One parameter's AdamW update in the seven float32 operations of PyTorch's
/// single-tensor AdamW, each rounded once:
///
/// 1. decay: `p ← p · (1 − lr·wd)`;
/// 2. `m ← m + (1 − β₁)(g − m)`, the difference rounded, then one fused multiply-add
///    (`lerp`: the same number as `β₁ m + (1 − β₁) g` up to rounding);
/// 3. `v ← v · β₂`;
/// 4. `v ← v + ((1 − β₂) · g) · g`, the first product rounded, the rest fused
///    (`addcmul`);
/// 5. `den ← √v / √(1 − β₂ᵗ)`;
/// 6. `den ← den + eps`;
/// 7. `p ← p + (−step_size · m) / den` (`addcdiv`: product, quotient, sum).
///
/// The square root is the IEEE one; PyTorch's is MKL's, which is 1 ulp off on a few
/// values in a thousand.
///
/// # Shapes
/// Scalars: one element of a parameter and of its two moments.
pub fn adamw_update_in_pytorch_order(
    p: &mut f32,
    g: f32,
    m: &mut f32,
    v: &mut f32,
    k: &StepConstants,
) {
    *p *= k.decay;
    *m = k.one_minus_beta1.mul_add(g - *m, *m);
    *v *= k.beta2;
    *v = (k.one_minus_beta2 * g).mul_add(g, *v);
    let den = v.sqrt() / k.bias_correction2_sqrt + k.eps;
    *p += (k.neg_step_size * *m) / den;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adamw::{AdamW, adamw_update};
    use crate::cross_entropy::{cross_entropy, cross_entropy_backward};

    /// The loss's sum in `nll_loss`'s order and left to right: the same `n` terms, each
    /// sum within `(n − 1)·ε·Σ|terms|` of the exact one (the terms are all ≥ 0).
    #[test]
    fn nll_sum_agrees_with_the_plain_sum() {
        manual_seed(13);
        for n in [1, 5, 16, 17, 96, 300] {
            let log_p = (randn(&[n]).abs() * -2.0).to_vec();
            let plain = -log_p.iter().sum::<f32>();
            let total: f32 = log_p.iter().map(|x| x.abs()).sum();
            let bound = 2.0 * (n.max(2) - 1) as f32 * f32::EPSILON * total;
            assert!(
                (nll_sum(log_p.iter().copied()) - plain).abs() <= bound,
                "n {n}"
            );
        }
    }
    use shared::{manual_seed, randint, randn};

    /// `f32::EPSILON` times `x`: about two units in the last place of `x`.
    fn eps(x: f32) -> f32 {
        f32::EPSILON * x.abs()
    }

    /// Both compute `(p − onehot)/rows` from the same `p` (the two `exp`s are within 1 ulp
    /// of each other) with at most three roundings each, so they agree to 4 ulps of the
    /// largest term, `(p + onehot)/rows`.
    #[test]
    fn cross_entropy_backward_agrees_with_the_formula() {
        manual_seed(11);
        for rows in [1, 3, 16, 96, 100] {
            let logits = randn(&[rows, 8]) * 3.0;
            let targets = randint(0, 8, &[rows]);
            let ce = cross_entropy(&logits, &targets);
            let exact =
                cross_entropy_backward_in_pytorch_order(&ce.log_probs, &targets);
            let formula = cross_entropy_backward(&ce.log_probs, &targets);
            let probs = ce.log_probs.exp().to_vec();
            let t = targets.to_vec();
            for (i, (a, b)) in exact.to_vec().iter().zip(formula.to_vec()).enumerate()
            {
                let onehot = if usize::try_from(t[i / 8]) == Ok(i % 8) {
                    1.0
                } else {
                    0.0
                };
                let scale = (probs[i] + onehot) / rows as f32;
                assert!(
                    (a - b).abs() <= 2.0 * eps(scale),
                    "rows {rows}, {i}: {a} vs {b}"
                );
            }
        }
    }

    /// Ten steps of both from the same start with random gradients: the moments agree to
    /// 2 ulps of their terms' sizes at every step, the parameters to 2 ulps of the
    /// parameter plus 2 ulps of the step (the divisions see slightly different moments).
    #[test]
    fn adamw_update_agrees_with_the_formula() {
        manual_seed(12);
        let optimizer = AdamW::new(1e-2);
        let (starts, grads) = (randn(&[50]).to_vec(), randn(&[10, 50]).to_vec());
        for (i, &start) in starts.iter().enumerate() {
            let (mut a, mut b) = ((start, 0.0f32, 0.0f32), (start, 0.0f32, 0.0f32));
            for t in 1..=10u32 {
                let k = optimizer.constants(t);
                let g = grads[(t as usize - 1) * 50 + i];
                let (m0, v0) = (a.1, a.2);
                adamw_update_in_pytorch_order(&mut a.0, g, &mut a.1, &mut a.2, &k);
                adamw_update(&mut b.0, g, &mut b.1, &mut b.2, &k);
                let m_terms = eps(k.beta1 * m0) + eps(k.one_minus_beta1 * g);
                let v_terms = eps(k.beta2 * v0) + eps(k.one_minus_beta2 * g * g);
                assert!((a.1 - b.1).abs() <= 2.0 * m_terms, "m, step {t}");
                assert!((a.2 - b.2).abs() <= 2.0 * v_terms, "v, step {t}");
                let step = k.neg_step_size.abs() * 2.0;
                assert!(
                    (a.0 - b.0).abs() <= 2.0 * (eps(a.0) + eps(step)),
                    "p, step {t}"
                );
                b = a; // the next step starts both from the same state again
            }
        }
    }
}
