//! The backward pass in tiles against attention's gradients computed in double precision
//! from the whole weight matrix, on random inputs of odd sizes, with and without the causal
//! mask, on every instruction set this CPU has, on one thread and on two (chapter 10's tests
//! compare it with that chapter's backward). Also: the log-sum-exp the forward returns, the causal mask's
//! effect on the gradients, and the same bits on any number of threads.

use ch09_flash_attention::backward::{
    BLOCK, FlashGrads, flash_attention_backward, flash_attention_backward_with,
};
use ch09_flash_attention::kernel::{
    Isa, flash_attention_lse_with, flash_attention_with,
};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed, rand, randn, zeros};

mod common;
use common::ODD_SIZES;

/// Attention and its gradients for one upstream gradient, in `f64`, from the whole
/// `n × m` weight matrix per head: `(out, lse, [dq, dk, dv])`.
struct Reference {
    out: Vec<f64>,
    lse: Vec<f64>,
    grads: [Vec<f64>; 3],
}

/// The reference for `q` `[.., n, d]`, `k` `[.., m, d]`, `v` `[.., m, d_v]` and the output's
/// gradient `grad_out` `[.., n, d_v]`, in double precision, as written in the textbook:
/// `P = softmax(QKᵀ/√d)`, `dV = Pᵀ dO`, `dP = dO Vᵀ`, `dS = P ∘ (dP - rowsum(dP ∘ P))`,
/// `dQ = dS K/√d`, `dK = dSᵀ Q/√d`.
fn reference(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    grad_out: &Tensor,
    causal: bool,
) -> Reference {
    let (n, d, m, d_v) = (q.size(-2), q.size(-1), k.size(-2), v.size(-1));
    let heads = q.numel() / (n * d);
    let f = |t: &Tensor| t.to_vec().into_iter().map(f64::from).collect::<Vec<f64>>();
    let (q, k, v, g) = (f(q), f(k), f(v), f(grad_out));
    let scale = 1.0 / (d as f64).sqrt();
    let mut out = vec![0.0; heads * n * d_v];
    let mut lse = vec![0.0; heads * n];
    let (mut dq, mut dk, mut dv) = (
        vec![0.0; heads * n * d],
        vec![0.0; heads * m * d],
        vec![0.0; heads * m * d_v],
    );
    for h in 0..heads {
        let (q, k, v, g) = (
            &q[h * n * d..][..n * d],
            &k[h * m * d..][..m * d],
            &v[h * m * d_v..][..m * d_v],
            &g[h * n * d_v..][..n * d_v],
        );
        for i in 0..n {
            let visible = if causal { (i + 1).min(m) } else { m };
            let s: Vec<f64> = (0..visible)
                .map(|j| {
                    (0..d).map(|c| q[i * d + c] * k[j * d + c]).sum::<f64>() * scale
                })
                .collect();
            let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = s.iter().map(|x| (x - max).exp()).sum();
            lse[h * n + i] = max + sum.ln();
            let p: Vec<f64> = s.iter().map(|x| (x - lse[h * n + i]).exp()).collect();
            let dp: Vec<f64> = (0..visible)
                .map(|j| (0..d_v).map(|c| g[i * d_v + c] * v[j * d_v + c]).sum())
                .collect();
            let dot: f64 = p.iter().zip(&dp).map(|(p, dp)| p * dp).sum();
            for j in 0..visible {
                let ds = p[j] * (dp[j] - dot);
                for c in 0..d_v {
                    out[(h * n + i) * d_v + c] += p[j] * v[j * d_v + c];
                    dv[(h * m + j) * d_v + c] += p[j] * g[i * d_v + c];
                }
                for c in 0..d {
                    dq[(h * n + i) * d + c] += ds * k[j * d + c] * scale;
                    dk[(h * m + j) * d + c] += ds * q[i * d + c] * scale;
                }
            }
        }
    }
    Reference {
        out,
        lse,
        grads: [dq, dk, dv],
    }
}

/// The largest `|got - want|` relative to the largest `|want|`, or to `terms` where that is
/// larger.
fn relative_error(got: &Tensor, want: &[f64], terms: f64) -> f64 {
    let got = got.to_vec();
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(terms, |m, x| m.max(x.abs()));
    let diff = got
        .iter()
        .zip(want)
        .fold(0.0f64, |m, (&x, y)| m.max((f64::from(x) - y).abs()));
    if scale == 0.0 { diff } else { diff / scale }
}

/// The forward with its log-sum-exp and the backward on `isa`, on a pool of `threads`.
fn forward_backward(
    isa: Isa,
    threads: usize,
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    grad_out: &Tensor,
    causal: bool,
) -> (Tensor, Tensor, FlashGrads) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    pool.install(|| {
        let (out, lse) = flash_attention_lse_with(isa, q, k, v, causal);
        let grads = flash_attention_backward_with(
            isa,
            (q, k, v),
            (&out, &lse),
            grad_out,
            causal,
        );
        (out, lse, grads)
    })
}

/// Checks every instruction set on one and two threads against the reference. Gradients
/// are sums of up to `n` products of rounded weights, so they are held to `2e-5` of
/// their largest entry (or of their terms, see [`term_scale`]), the output to `1e-5`.
fn check_all(
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    grad_out: &Tensor,
    causal: bool,
) -> Result<(), String> {
    let want = reference(q, k, v, grad_out, causal);
    for isa in Isa::available() {
        for threads in [1, 2] {
            let (out, lse, grads) =
                forward_backward(isa, threads, (q, k, v), grad_out, causal);
            let at = format!("{isa:?}, {threads} thread(s), causal = {causal}");
            let error = relative_error(&out, &want.out, 0.0);
            if error > 1e-5 {
                return Err(format!("{at}: output off by {error}"));
            }
            for (got, &want) in lse.to_vec().iter().zip(&want.lse) {
                if (f64::from(*got) - want).abs() > 1e-5 * want.abs().max(1.0) {
                    return Err(format!("{at}: log-sum-exp {got}, expected {want}"));
                }
            }
            for (name, got, want, terms) in [
                ("dq", &grads.q, &want.grads[0], term_scale(grad_out, v, k)),
                ("dk", &grads.k, &want.grads[1], term_scale(grad_out, v, q)),
                ("dv", &grads.v, &want.grads[2], 0.0),
            ] {
                let error = relative_error(got, want, terms);
                if error > 2e-5 {
                    return Err(format!("{at}: {name} off by {error}"));
                }
            }
        }
    }
    Ok(())
}

/// How large the terms of `dq` (with `other = k`) or `dk` (with `other = q`) can be:
/// `|dO_i|·|v_j|·max|other|/√d`. Each gradient is `Σ_j P_ij (dO_i·v_j − D_i) other_j/√d`;
/// when a row's weights are nearly one-hot, `dO_i·v_j` and `D_i` nearly cancel and the
/// gradient is far smaller than its terms, whose rounding is then what float32 can promise.
fn term_scale(grad_out: &Tensor, v: &Tensor, other: &Tensor) -> f64 {
    let row_norm = |t: &Tensor| {
        let values = t.to_vec();
        let width = t.size(-1).max(1);
        values
            .chunks(width)
            .map(|row| {
                row.iter()
                    .map(|&x| f64::from(x).powi(2))
                    .sum::<f64>()
                    .sqrt()
            })
            .fold(0.0f64, f64::max)
    };
    let largest = other
        .to_vec()
        .iter()
        .fold(0.0f64, |m, &x| m.max(f64::from(x).abs()));
    row_norm(grad_out) * row_norm(v) * largest / (other.size(-1).max(1) as f64).sqrt()
}

/// A causal row over two keys with nearly one-hot weights: `dq` is far smaller than its
/// terms (found by the property test below, which compared it with `|dq|` alone).
#[test]
fn nearly_one_hot_rows_are_held_to_their_terms() {
    manual_seed(688);
    let q = randn(&[1, 1, 2, 39]);
    let k = randn(&[1, 1, 2, 39]);
    let v = randn(&[1, 1, 2, 34]);
    let grad_out = randn(&[1, 1, 2, 34]);
    check_all((&q, &k, &v), &grad_out, true).unwrap();
}

/// Lengths that cross the tiles' edges more often than uniform ones would.
fn length() -> impl Strategy<Value = usize> {
    prop_oneof![
        1usize..5,
        Just(BLOCK - 1),
        Just(BLOCK),
        Just(BLOCK + 1),
        Just(2 * BLOCK + 3),
        1usize..160,
    ]
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Within `2e-5` (relative) of the double-precision gradients, on every instruction
    /// set, on one thread and on two.
    #[test]
    fn backward_equals_the_reference(
        batch in 1usize..3, heads in 1usize..3, queries in length(), same_length: bool,
        keys in length(), d in 1usize..70, d_v in 1usize..70, causal: bool, seed in 0u64..1000,
    ) {
        let keys = if same_length { queries } else { keys };
        manual_seed(seed);
        let q = randn(&[batch, heads, queries, d]);
        let k = randn(&[batch, heads, keys, d]);
        let v = randn(&[batch, heads, keys, d_v]);
        let grad_out = randn(&[batch, heads, queries, d_v]);
        check_all((&q, &k, &v), &grad_out, causal).map_err(TestCaseError::fail)?;
    }

    /// Under the causal mask a query's gradient does not depend on later tokens, and the
    /// later tokens' keys and values get no gradient from earlier queries: change every
    /// token from `later` on, and the gradients of the queries before it stay the same
    /// to the bit; keep only the earlier queries' output gradients, and the keys and
    /// values from `later` on get exactly zero.
    #[test]
    fn backward_is_causal(n in 2usize..150, later in 1usize..149, seed in 0u64..1000) {
        let later = 1 + later % (n - 1);
        manual_seed(seed);
        let (q, k, v) = (rand(&[1, 2, n, 8]), rand(&[1, 2, n, 8]), rand(&[1, 2, n, 8]));
        let grad_out = randn(&[1, 2, n, 8]);
        let from_later = Tensor::from_vec((0..n).map(|t| t >= later).collect(), &[n, 1]);
        let changed = |t: &Tensor| t.masked_fill(&from_later, 9.0);
        let earlier_only = grad_out.masked_fill(&from_later, 0.0);
        for isa in Isa::available() {
            let (_, _, grads) = forward_backward(isa, 2, (&q, &k, &v), &grad_out, true);
            let inputs = (&changed(&q), &changed(&k), &changed(&v));
            let (_, _, grads2) = forward_backward(isa, 2, inputs, &changed(&grad_out), true);
            prop_assert_eq!(grads2.q.narrow(2, 0, later), grads.q.narrow(2, 0, later));
            let (_, _, grads3) = forward_backward(isa, 2, (&q, &k, &v), &earlier_only, true);
            let zero = zeros(&[1, 2, n - later, 8]);
            prop_assert_eq!(grads3.k.narrow(2, later, n - later), zero.clone());
            prop_assert_eq!(grads3.v.narrow(2, later, n - later), zero);
        }
    }
}

#[test]
fn odd_sizes() {
    for (queries, keys, d, d_v) in ODD_SIZES {
        for causal in [false, true] {
            manual_seed(7);
            let q = randn(&[1, 3, queries, d]);
            let k = randn(&[1, 3, keys, d]);
            let v = randn(&[1, 3, keys, d_v]);
            let grad_out = randn(&[1, 3, queries, d_v]);
            if let Err(e) = check_all((&q, &k, &v), &grad_out, causal) {
                panic!("{queries}x{keys}, d = {d}, d_v = {d_v}: {e}");
            }
        }
    }
}

#[test]
fn large_scores() {
    // Scores spread over a wide range (most weights underflow to 0), many tiles.
    manual_seed(1);
    let q = &randn(&[1, 2, 300, 64]) * 3.0;
    let k = &randn(&[1, 2, 300, 64]) * 3.0;
    let v = randn(&[1, 2, 300, 64]);
    let grad_out = randn(&[1, 2, 300, 64]);
    for causal in [false, true] {
        check_all((&q, &k, &v), &grad_out, causal).unwrap();
    }
}

#[test]
fn threads_do_not_change_a_bit() {
    manual_seed(5);
    let shape = [2, 3, 300, 32];
    let (q, k, v, grad_out) =
        (randn(&shape), randn(&shape), randn(&shape), randn(&shape));
    let on = |threads: usize| {
        let grads =
            forward_backward(Isa::detect(), threads, (&q, &k, &v), &grad_out, true).2;
        [grads.q, grads.k, grads.v]
    };
    let one = on(1);
    assert_eq!(on(2), one);
    assert_eq!(on(3), one);
}

#[test]
fn the_forward_is_unchanged() {
    // The entry point with the log-sum-exp computes the same output, bit for bit.
    manual_seed(2);
    let (q, k, v) = (
        randn(&[2, 70, 20]),
        randn(&[2, 90, 20]),
        randn(&[2, 90, 24]),
    );
    for causal in [false, true] {
        for isa in Isa::available() {
            let (out, lse) = flash_attention_lse_with(isa, &q, &k, &v, causal);
            assert_eq!(out, flash_attention_with(isa, &q, &k, &v, causal));
            assert_eq!(lse.sizes(), [2, 70]);
        }
    }
}

#[test]
fn no_value_features_give_zero_gradients() {
    let (q, k, v) = (rand(&[2, 5, 3]), rand(&[2, 4, 3]), rand(&[2, 4, 0]));
    let (out, lse) = flash_attention_lse_with(Isa::detect(), &q, &k, &v, false);
    let grads = flash_attention_backward(
        (&q, &k, &v),
        (&out, &lse),
        &zeros(&[2, 5, 0]),
        false,
    );
    assert_eq!(grads.q, zeros(&[2, 5, 3]));
    assert_eq!(grads.k, zeros(&[2, 4, 3]));
    assert_eq!(grads.v.sizes(), [2, 4, 0]);
}

#[test]
#[should_panic(expected = "do not fit")]
fn mismatched_shapes_are_refused() {
    let (q, k, v) = (rand(&[1, 4, 8]), rand(&[1, 4, 8]), rand(&[1, 4, 8]));
    let (out, lse) = flash_attention_lse_with(Isa::detect(), &q, &k, &v, false);
    // The output's gradient has one row too many.
    flash_attention_backward((&q, &k, &v), (&out, &lse), &rand(&[1, 5, 8]), false);
}
