//! The formula's backward: against its PyTorch-order twin, against finite differences,
//! and the gradients a mask or a group of query heads imply.

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::{assert_same_bits, max_abs_diff};
use shared::{Error, Tensor, randn};

use ch16_flex_attention::backward::{
    FlexGrads, flex_attention_backward, unchanged_grad,
};
use ch16_flex_attention::formula::flex_attention;
use ch16_flex_attention::pytorch_order::flex_attention_backward_in_pytorch_order;
use ch16_flex_attention::recipes::{
    causal, no_mask, sliding_window, softcap, unchanged,
};

mod common;
use common::{capped_grad, distance_bias, inputs};

/// Rows shorter than PyTorch's 16 lanes are added left to right by both softmax
/// backwards: the same bits. Longer rows differ by a few units in the last place of
/// gradients of size about 1.
#[test]
fn pytorch_order_agrees_with_the_formula() {
    for tokens in [6, 12, 16, 40] {
        let [q, k, v, g] = inputs(tokens as u64, 4, 2, tokens);
        let formula = flex_attention_backward(
            &q,
            &k,
            &v,
            &g,
            softcap(2.0),
            capped_grad(2.0),
            causal,
        )
        .unwrap();
        let ordered = flex_attention_backward_in_pytorch_order(
            &q,
            &k,
            &v,
            &g,
            softcap(2.0),
            capped_grad(2.0),
            causal,
        )
        .unwrap();
        if tokens < 16 {
            for (name, a, b) in [
                ("q", &formula.q, &ordered.q),
                ("k", &formula.k, &ordered.k),
                ("v", &formula.v, &ordered.v),
            ] {
                assert_same_bits(a, b, format!("grad_{name}, {tokens} tokens"));
            }
        }
        for (a, b) in [
            (&formula.q, &ordered.q),
            (&formula.k, &ordered.k),
            (&formula.v, &ordered.v),
        ] {
            assert!(max_abs_diff(a, b) <= 1e-5, "{tokens} tokens");
        }
    }
}

/// The loss `Σ out ∘ grad_out` as a function of one entry of `which` (0: q, 1: k, 2: v),
/// in `f64` from the `f32` forward: a central difference of it is the gradient.
fn finite_difference(
    [q, k, v, g]: &[Tensor; 4],
    which: usize,
    index: usize,
    loss: impl Fn(&Tensor, &Tensor, &Tensor) -> Tensor,
) -> f64 {
    let h = 1e-2f32;
    let at = |delta: f32| {
        let mut inputs = [q.clone(), k.clone(), v.clone()];
        let mut values = inputs[which].to_vec();
        values[index] += delta;
        inputs[which] = Tensor::from_vec(values, inputs[which].sizes());
        let out = loss(&inputs[0], &inputs[1], &inputs[2]).to_vec();
        out.iter()
            .zip(g.to_vec())
            .map(|(o, g)| *o as f64 * g as f64)
            .sum::<f64>()
    };
    (at(h) - at(-h)) / (2.0 * h as f64)
}

/// Every recipe's gradient is the slope of the loss: checked entry by entry on a few
/// entries of q, k, v, the softcap's derivative included (a wrong `1 − tanh²` moves the
/// gradient of q and k by far more than the difference's error, about 1e-3).
#[test]
fn gradients_are_the_slopes_of_the_loss() {
    let inputs = inputs(7, 4, 2, 10);
    let [q, k, v, g] = &inputs;
    type Case = (
        &'static str,
        FlexGrads,
        Box<dyn Fn(&Tensor, &Tensor, &Tensor) -> Tensor>,
    );
    let cases: Vec<Case> = vec![
        (
            "causal",
            flex_attention_backward(q, k, v, g, unchanged, unchanged_grad, causal)
                .unwrap(),
            Box::new(|q, k, v| flex_attention(q, k, v, unchanged, causal).unwrap()),
        ),
        (
            "window",
            flex_attention_backward(
                q,
                k,
                v,
                g,
                unchanged,
                unchanged_grad,
                sliding_window(3),
            )
            .unwrap(),
            Box::new(|q, k, v| {
                flex_attention(q, k, v, unchanged, sliding_window(3)).unwrap()
            }),
        ),
        (
            "alibi",
            flex_attention_backward(
                q,
                k,
                v,
                g,
                distance_bias,
                unchanged_grad,
                causal,
            )
            .unwrap(),
            Box::new(move |q, k, v| {
                flex_attention(q, k, v, distance_bias, causal).unwrap()
            }),
        ),
        (
            "softcap",
            flex_attention_backward(
                q,
                k,
                v,
                g,
                softcap(1.0),
                capped_grad(1.0),
                no_mask,
            )
            .unwrap(),
            Box::new(|q, k, v| {
                flex_attention(q, k, v, softcap(1.0), no_mask).unwrap()
            }),
        ),
    ];
    for (name, grads, loss) in &cases {
        for (which, grad) in [&grads.q, &grads.k, &grads.v].into_iter().enumerate() {
            let grad = grad.to_vec();
            for index in [0, 17, 45, 99, grad.len() - 1] {
                let slope = finite_difference(&inputs, which, index, loss);
                let ours = grad[index] as f64;
                assert!(
                    (ours - slope).abs() <= 5e-3 * (1.0 + slope.abs()),
                    "{name}, input {which}, entry {index}: {ours} vs {slope}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(quiet(24))]

    /// A key no query sees gets no gradient; a key/value head's gradient is the sum of
    /// the gradients of the query heads that read it (the same inputs with each key/value
    /// head written out once per query head give the same sums).
    #[test]
    fn hidden_keys_get_nothing_and_groups_add(
        seed in 0u64..1000,
        window in 1usize..5,
        kv_heads in 1usize..3,
        groups in 1usize..4,
    ) {
        let tokens = 9;
        let [q, k, v, g] = inputs(seed, kv_heads * groups, kv_heads, tokens);
        // Keys 0..3 are hidden from every query by a mask that also windows.
        let mask = move |_b: usize, _h: usize, q_idx: usize, kv_idx: usize| {
            kv_idx >= 3 && q_idx.abs_diff(kv_idx) < window + 3
        };
        let grads = flex_attention_backward(&q, &k, &v, &g, unchanged, unchanged_grad, mask)
            .unwrap();
        for (name, grad) in [("k", &grads.k), ("v", &grads.v)] {
            let values = grad.to_vec();
            for (i, x) in values.iter().enumerate() {
                let key = i / 8 % tokens;
                if key < 3 {
                    prop_assert_eq!(*x, 0.0, "a key no query sees got a gradient: grad_{} of key {} is {}", name, key, x);
                }
            }
        }
        let (k_full, v_full) = (
            ch07_multihead_split::grouped::repeat_kv(&k, groups),
            ch07_multihead_split::grouped::repeat_kv(&v, groups),
        );
        let full = flex_attention_backward(&q, &k_full, &v_full, &g, unchanged, unchanged_grad, mask)
            .unwrap();
        prop_assert_eq!(full.q.to_vec(), grads.q.to_vec(), "grad_q with grouped heads is not grad_q with the heads repeated");
        let summed = full.k.reshape([2, kv_heads, groups, tokens, 8]).sum_dim(2, false);
        let gap = max_abs_diff(&summed, &grads.k);
        prop_assert!(gap <= 1e-6, "a grouped key's gradient is {} from the sum of its repeated copies' gradients", gap);
    }
}

#[test]
fn a_gradient_of_the_wrong_shape_is_an_error() {
    let [q, k, v, _] = inputs(0, 4, 2, 6);
    let g = randn(&[2, 4, 5, 8]);
    let err =
        flex_attention_backward(&q, &k, &v, &g, unchanged, unchanged_grad, causal)
            .unwrap_err();
    assert!(matches!(
        err,
        Error::Shape {
            op: "flex_attention_backward",
            ..
        }
    ));
    assert!(err.to_string().contains("[2, 4, 5, 8]"), "{err}");
}
