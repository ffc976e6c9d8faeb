//! One test per exercise, named after it, so `cargo test -p ch10-backward --features
//! exercise NAME` checks just that function. Each checks properties a hard-coded answer
//! cannot satisfy: against sums written out in f64 or against central differences.

mod common;

use ch05_causal::causal_mask;
use ch10_backward::linear::linear_backward;
use ch10_backward::recompute::{attention_forward_lse, backward_from_lse};
use ch10_backward::saturation::score_grad_bound;
use ch10_backward::softmax::softmax_backward;
use ch10_backward::zero_grads::zero_score_grads;
use common::{check_attention_core, check_gradient, weighted_sum};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::nn::{Dropout, Linear};
use shared::{Tensor, manual_seed, randn, tensor};

/// Equal up to float32 rounding: `|got - want| <= 1e-5 + 1e-4·|want|`.
fn close(got: f32, want: f64) -> bool {
    (got as f64 - want).abs() <= 1e-5 + 1e-4 * want.abs()
}

#[test]
fn exercise_softmax_backward_one_row() {
    // A single weight of 1 cannot change: its score gets no gradient.
    let y = tensor!([[1.0]]);
    assert_eq!(softmax_backward(&y, &tensor!([[3.0]])).to_vec(), vec![0.0]);
    // Two equal weights, dP = [1, 0]: dS = 0.5·(1 − 0.5) and 0.5·(0 − 0.5).
    let y = tensor!([[0.5, 0.5]]);
    let g = softmax_backward(&y, &tensor!([[1.0, 0.0]]));
    assert_eq!(g.to_vec(), vec![0.25, -0.25]);
}

proptest! {
    #![proptest_config(quiet(32))]

    /// dS equals the Jacobian `diag(p) − p pᵀ` times dP, written out in f64, for any rows.
    #[test]
    fn exercise_softmax_backward_is_the_jacobian_product(
        (rows, n) in (1usize..4, 1usize..40), seed in 0u64..10_000,
    ) {
        manual_seed(seed);
        let y = (randn(&[rows, n]) * 2.0).softmax(-1);
        let dy = randn(&[rows, n]);
        let got = softmax_backward(&y, &dy);
        prop_assert_eq!(got.sizes(), y.sizes());
        let (p, g, got) = (y.to_vec(), dy.to_vec(), got.to_vec());
        for r in 0..rows {
            for i in 0..n {
                let want: f64 = (0..n)
                    .map(|j| {
                        let (pi, pj) = (p[r * n + i] as f64, p[r * n + j] as f64);
                        let jacobian = if i == j { pi * (1.0 - pi) } else { -pi * pj };
                        jacobian * g[r * n + j] as f64
                    })
                    .sum();
                prop_assert!(close(got[r * n + i], want), "row {} [{}]: {} vs {}", r, i, got[r * n + i], want);
            }
        }
    }

    /// The weight, bias and input gradients of `Linear` equal their sums written out, for
    /// any leading dims, with or without bias.
    #[test]
    fn exercise_linear_backward_sums_over_every_token(
        (b, t, d_in, d_out) in (1usize..3, 1usize..5, 1usize..5, 1usize..5),
        bias in any::<bool>(), seed in 0u64..10_000,
    ) {
        manual_seed(seed);
        let layer = Linear::new(d_in, d_out, bias);
        let x = randn(&[b, t, d_in]);
        let g = randn(&[b, t, d_out]);
        let grads = linear_backward(&layer, &x, &g);
        prop_assert_eq!(grads.weight.sizes(), &[d_out, d_in]);
        prop_assert_eq!(grads.input.sizes(), x.sizes());
        prop_assert_eq!(grads.bias.is_some(), bias);
        let (xv, gv, w) = (x.to_vec(), g.to_vec(), layer.weight.to_vec());
        let rows = b * t;
        let weight = grads.weight.to_vec();
        for o in 0..d_out {
            for i in 0..d_in {
                let want: f64 = (0..rows).map(|r| gv[r * d_out + o] as f64 * xv[r * d_in + i] as f64).sum();
                prop_assert!(close(weight[o * d_in + i], want), "weight [{}, {}]", o, i);
            }
        }
        if let Some(grad_bias) = &grads.bias {
            for (o, &got) in grad_bias.to_vec().iter().enumerate() {
                let want: f64 = (0..rows).map(|r| gv[r * d_out + o] as f64).sum();
                prop_assert!(close(got, want), "bias [{}]", o);
            }
        }
        let input = grads.input.to_vec();
        for r in 0..rows {
            for i in 0..d_in {
                let want: f64 = (0..d_out).map(|o| gv[r * d_out + o] as f64 * w[o * d_in + i] as f64).sum();
                prop_assert!(close(input[r * d_in + i], want), "input [{}, {}]", r, i);
            }
        }
    }

    /// The attention core's gradients against central differences, with the causal mask
    /// and with dropout.
    #[test]
    fn exercise_attention_backward_matches_central_differences(
        (b, n, d) in (1usize..3, 1usize..6, 1usize..4),
        p in prop::sample::select(vec![0.0, 0.5]), seed in 0u64..10_000,
    ) {
        manual_seed(seed);
        let (q, k, v) = (randn(&[b, n, d]), randn(&[b, n, d]), randn(&[b, n, d]));
        let r = randn(&[b, n, d]);
        let (hidden, dropout) = (causal_mask(n), Dropout::new(p));
        check_attention_core((&q, &k, &v), &hidden, &r, &dropout, seed + 1)
            .map_err(TestCaseError::fail)?;
    }

    /// The prediction holds: exactly where `zero_score_grads` says `true`, the gradient of
    /// the scores is 0 (for random inputs and losses), and nowhere else.
    #[test]
    fn exercise_zero_score_grads_predicts_the_zeros(
        (n, d) in (1usize..8, 1usize..4), seed in 0u64..10_000,
    ) {
        manual_seed(seed);
        let scores = randn(&[n, d]).matmul(&randn(&[d, n]));
        let weights = scores.masked_fill(&causal_mask(n), f32::NEG_INFINITY).softmax(-1);
        // dS = P ∘ (dP − rowsum(dP ∘ P)) for a random dP, then the mask's backward.
        let grad_weights = randn(&[n, n]);
        let rowsum = (&grad_weights * &weights).sum_dim(-1, true);
        let grad_scores = (&weights * &(&grad_weights - &rowsum)).masked_fill(&causal_mask(n), 0.0);
        let predicted = zero_score_grads(n);
        prop_assert_eq!(predicted.sizes(), &[n, n]);
        for (i, (&zero, &g)) in predicted.to_vec().iter().zip(&grad_scores.to_vec()).enumerate() {
            let (query, key) = (i / n, i % n);
            prop_assert!(
                !zero || g == 0.0,
                "you said the gradient of score ({}, {}) is always exactly 0, but with n = {} \
                 it is {}", query, key, n, g
            );
            prop_assert!(
                zero || g != 0.0,
                "you said the gradient of score ({}, {}) is not always 0, but with n = {} it is \
                 exactly 0 (for this input; is it for every input?)", query, key, n
            );
        }
    }

    /// The backward from the log-sum-exp against central differences of the forward, with
    /// and without the causal mask (it depends on `attention_forward_lse` alone, not on the
    /// tape of `attention_backward`).
    #[test]
    fn exercise_backward_from_lse_matches_central_differences(
        (b, n, d, d_v) in (1usize..3, 1usize..6, 1usize..4, 1usize..4),
        causal in any::<bool>(), seed in 0u64..10_000,
    ) {
        manual_seed(seed);
        let (q, k, v) = (randn(&[b, n, d]), randn(&[b, n, d]), randn(&[b, n, d_v]));
        let r = randn(&[b, n, d_v]);
        let loss = |q: &Tensor, k: &Tensor, v: &Tensor| {
            weighted_sum(&attention_forward_lse(q, k, v, causal).0, &r)
        };
        let (out, lse) = attention_forward_lse(&q, &k, &v, causal);
        let grads = backward_from_lse((&q, &k, &v), (&out, &lse), &r, causal);
        check_gradient("queries", &q, &grads.queries, |x| loss(x, &k, &v)).map_err(TestCaseError::fail)?;
        check_gradient("keys", &k, &grads.keys, |x| loss(&q, x, &v)).map_err(TestCaseError::fail)?;
        check_gradient("values", &v, &grads.values, |x| loss(&q, &k, x)).map_err(TestCaseError::fail)?;
    }

    /// The bound holds for rows of any sharpness (scores scaled by 1, 10 or 100) and for
    /// gradients of the weights that push hardest (±M by sign), is not looser than
    /// `4M (1 − max p)`, and is 0 for a one-hot row.
    #[test]
    fn exercise_score_grad_bound_holds_and_vanishes_when_saturated(
        n in 1usize..20, scale in prop::sample::select(vec![1.0f32, 10.0, 100.0]),
        max_abs_grad in 0.1f32..10.0, seed in 0u64..10_000,
    ) {
        manual_seed(seed);
        let p = (randn(&[n]) * scale).softmax(-1).to_vec();
        let bound = score_grad_bound(&p, max_abs_grad) as f64;
        let m = max_abs_grad as f64;
        let random: Vec<f32> = (randn(&[n]).tanh() * max_abs_grad).to_vec();
        let top = (0..n).max_by(|&a, &c| p[a].total_cmp(&p[c])).expect("n >= 1");
        let pushing: Vec<f32> = (0..n).map(|j| if j == top { max_abs_grad } else { -max_abs_grad }).collect();
        let halves: Vec<f32> = (0..n).map(|j| if j % 2 == 0 { max_abs_grad } else { -max_abs_grad }).collect();
        for grad in [random, pushing, halves] {
            let dot: f64 = p.iter().zip(&grad).map(|(&p, &g)| p as f64 * g as f64).sum();
            let measured: f64 = p.iter().zip(&grad).map(|(&p, &g)| (p as f64 * (g as f64 - dot)).abs()).sum();
            prop_assert!(measured <= bound * 1.05 + 1e-6 * m,
                "weights {:?}, dP {:?}: Σ|dS| = {} but the bound says {}", p, grad, measured, bound);
        }
        let p_max = p[top] as f64;
        prop_assert!(bound <= 4.0 * m * (1.0 - p_max) * 1.05 + 1e-6 * m,
            "weights {:?}: the bound {} is looser than 4M(1 − max p) = {}", p, bound, 4.0 * m * (1.0 - p_max));
        let mut one_hot = vec![0.0; n];
        one_hot[seed as usize % n] = 1.0;
        prop_assert_eq!(score_grad_bound(&one_hot, max_abs_grad), 0.0, "a one-hot row");
    }
}
