//! One test per exercise, named after it, so `cargo test -p ch05-causal --features exercise
//! NAME` checks just that exercise. Each compares with the text PyTorch printed
//! (`reference/expected/ch05-causal.txt`) and checks properties on random inputs that a
//! hard-coded answer cannot satisfy: rows sum to 1, the upper triangle is exactly zero after
//! the causal softmax, and changing a later token leaves the earlier outputs unchanged.

use ch01_embeddings::inputs::your_journey;
use ch04_trainable::SelfAttentionV2;
use ch04_trainable::scaled::scaled_attention_weights;
use ch05_causal::CausalAttention;
use ch05_causal::mask::causal_mask;
use ch05_causal::masked_softmax::masked_softmax;
use ch05_causal::renormalize::renormalize_rows;
use ch05_causal::sliding_window::{predict_reach, sliding_window_mask};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed, ones, randn, stack};

const PYTORCH: &str = include_str!("../../../reference/expected/ch05-causal.txt");

/// The text PyTorch printed under `## title` in this chapter's reference output.
fn pytorch_step(title: &str) -> &'static str {
    course::narrative::step_text(PYTORCH, title)
        .expect("the step is in the reference")
}

/// The blog post's unscaled scores `[6, 6]` from `SelfAttention_v2` after `manual_seed(789)`.
fn seed_000_scores() -> Tensor {
    let inputs = your_journey();
    manual_seed(789);
    let sa_v2 = SelfAttentionV2::new(3, 2, false);
    let queries = sa_v2.w_query.forward(&inputs);
    let keys = sa_v2.w_key.forward(&inputs);
    queries.matmul(&keys.t())
}

#[test]
fn exercise_causal_mask() {
    assert_eq!(
        causal_mask(3).to_string(),
        "tensor([[False,  True,  True],\n        [False, False,  True],\n        [False, False, False]])"
    );
    // Hiding the future of the blog post's scores prints what PyTorch printed.
    let masked = seed_000_scores().masked_fill(&causal_mask(6), f32::NEG_INFINITY);
    assert_eq!(
        masked.to_string(),
        pytorch_step("Masking the scores with -inf above the diagonal")
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// For any length, the mask is true exactly where the key comes after the query.
    #[test]
    fn exercise_causal_mask_marks_the_future(n in 1usize..20) {
        let mask = causal_mask(n);
        prop_assert_eq!(mask.shape(), [n, n]);
        let values = mask.to_vec();
        for row in 0..n {
            for col in 0..n {
                prop_assert_eq!(values[row * n + col], col > row, "row {} col {}", row, col);
            }
        }
    }
}

#[test]
fn exercise_masked_softmax() {
    let weights = masked_softmax(&seed_000_scores(), &causal_mask(6), 2);
    assert_eq!(
        weights.to_string(),
        pytorch_step("Softmax of the masked scores")
    );
    // A mask that hides nothing gives chapter 4's weights.
    let nothing = causal_mask(6).triu(6);
    assert_eq!(
        masked_softmax(&seed_000_scores(), &nothing, 2),
        scaled_attention_weights(&seed_000_scores(), 2)
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// For random scores under the causal mask: every row sums to 1, every weight above the
    /// diagonal is exactly 0, and the result agrees with the two-step way (softmax over all
    /// keys, zero the future, renormalise the rows).
    #[test]
    fn exercise_masked_softmax_hides_the_future(
        seed in 0u64..10_000, batch in 1usize..3, n in 1usize..8, d_k in 1usize..32,
    ) {
        manual_seed(seed);
        let scores = &randn(&[batch, n, n]) * 3.0;
        let weights = masked_softmax(&scores, &causal_mask(n), d_k);
        prop_assert_eq!(weights.shape(), [batch, n, n]);
        let two_step = renormalize_rows(
            &(&scaled_attention_weights(&scores, d_k) * &ones(&[n, n]).tril(0)),
        );
        for (w_seq, t_seq) in weights.iter().zip(two_step.iter()) {
            for (row, (w, t)) in w_seq.iter().zip(t_seq.iter()).enumerate() {
                let (w, t) = (w.to_vec(), t.to_vec());
                prop_assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5);
                for col in 0..n {
                    if col > row {
                        prop_assert_eq!(w[col], 0.0);
                    }
                    prop_assert!((w[col] - t[col]).abs() <= 1e-5);
                }
            }
        }
    }

    /// Any mask, not just the causal one: masked keys get weight 0 and the others share 1.
    #[test]
    fn exercise_masked_softmax_any_mask(
        seed in 0u64..10_000, n in 2usize..8, bits in proptest::collection::vec(any::<bool>(), 64),
    ) {
        manual_seed(seed);
        let scores = randn(&[n, n]);
        // A random mask that leaves the diagonal visible, so no row is fully masked.
        let hidden: Vec<bool> = (0..n * n).map(|i| bits[i] && i % (n + 1) != 0).collect();
        let mask = Tensor::from_vec(hidden.clone(), &[n, n]);
        let weights = masked_softmax(&scores, &mask, 4);
        for (w, m) in weights.to_vec().chunks(n).zip(hidden.chunks(n)) {
            prop_assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            for (&wi, &mi) in w.iter().zip(m) {
                prop_assert_eq!(wi == 0.0, mi, "weight {} where masked is {}", wi, mi);
            }
        }
    }
}

#[test]
fn exercise_causal_attention_forward() {
    let inputs = your_journey();
    let batch = stack(&[&inputs, &inputs], 0);
    manual_seed(123);
    let ca = CausalAttention::new(3, 2, 6, 0.0, false);
    let context_vecs = ca.forward(&batch);
    let printed = format!(
        "{context_vecs}\ncontext_vecs shape:  {}",
        context_vecs.shape()
    );
    assert_eq!(
        printed,
        pytorch_step("CausalAttention on the batch (manual_seed(123), dropout 0.0)")
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Changing the tokens after position `t` leaves the outputs of tokens `0..=t` exactly
    /// as they were, also with dropout (the same seed drops the same weights), and a
    /// sequence shorter than the context gives the first rows of the full output (to rounding).
    #[test]
    fn exercise_causal_attention_forward_ignores_later_tokens(
        seed in 0u64..10_000, batch in 1usize..3, n in 1usize..7, t in 0usize..7,
        d_in in 1usize..5, d_out in 1usize..5, dropout in prop_oneof![Just(0.0), Just(0.5)],
    ) {
        let t = t % n;
        manual_seed(seed);
        let ca = CausalAttention::new(d_in, d_out, n, dropout, true);
        let x = randn(&[batch, n, d_in]);
        let changed_tail = &randn(&[batch, n - t - 1, d_in]) * 10.0;
        let y = shared::cat(&[x.slice(1, ..=t), changed_tail], 1);

        manual_seed(seed + 1);
        let out_x = ca.forward(&x);
        manual_seed(seed + 1);
        let out_y = ca.forward(&y);
        prop_assert_eq!(out_x.shape(), [batch, n, d_out]);
        prop_assert_eq!(out_x.slice(1, ..=t), out_y.slice(1, ..=t));

        if dropout == 0.0 {
            // A shorter sequence may take another matrix kernel (one row goes to a
            // matrix-vector kernel, as in PyTorch), which adds in another order: equal up
            // to rounding, not bit for bit.
            let prefix = ca.forward(&x.slice(1, ..=t));
            let full = out_x.slice(1, ..=t);
            prop_assert_eq!(prefix.shape(), full.shape());
            for (p, f) in prefix.to_vec().iter().zip(full.to_vec()) {
                prop_assert!((p - f).abs() <= 1e-6 * f.abs().max(1.0), "{} vs {}", p, f);
            }
        }
    }
}

/// `layers` attention layers without trained weights (chapter 2's `softmax(x·xᵀ)·x`), each
/// under `mask`, the output of one the input of the next.
fn stacked_attention(x: &Tensor, mask: &Tensor<bool>, layers: usize) -> Tensor {
    (0..layers).fold(x.clone(), |x, _| {
        let scores = x.matmul(&x.t()).masked_fill(mask, f32::NEG_INFINITY);
        scores.softmax(-1).matmul(&x)
    })
}

/// How many places back the last token's output depends on the inputs: the largest
/// distance `d` such that changing input `n - 1 - d` (by 1 in every feature) changes the
/// last output row at all.
fn measured_reach(x: &Tensor, mask: &Tensor<bool>, layers: usize) -> usize {
    let n = x.size(0);
    let last = |x: &Tensor| stacked_attention(x, mask, layers).get(n as i64 - 1);
    let before = last(x);
    (0..n)
        .filter(|&j| {
            let d = x.size(1);
            let mut values = x.to_vec();
            values[j * d..(j + 1) * d]
                .iter_mut()
                .for_each(|v| *v += 0.5);
            last(&Tensor::from_vec(values, &[n, d])) != before
        })
        .map(|j| n - 1 - j)
        .max()
        .unwrap_or(0)
}

#[test]
fn exercise_sliding_window() {
    assert_eq!(
        sliding_window_mask(4, 2).to_string(),
        "tensor([[False,  True,  True,  True],\n        [False, False,  True,  True],\n        \
         [ True, False, False,  True],\n        [ True,  True, False, False]])"
    );
    // A window as long as the text is the causal mask.
    assert_eq!(sliding_window_mask(6, 6), ones(&[6, 6]).triu(1).bool());
    // The sentence of the chapter through two layers with a window of 2.
    let x = your_journey();
    let reach = measured_reach(&x, &sliding_window_mask(6, 2), 2);
    assert_eq!(
        predict_reach(2, 2),
        reach,
        "measured on 'Your journey starts with one step'"
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// For any length and window: the mask is true exactly outside the window, and the
    /// predicted reach of a stack of layers is what changing the inputs one at a time finds.
    #[test]
    fn exercise_sliding_window_reach(
        seed in 0u64..10_000, window in 1usize..5, layers in 1usize..4, extra in 1usize..4,
    ) {
        let n = layers * (window - 1) + 1 + extra;
        let mask = sliding_window_mask(n, window);
        prop_assert_eq!(mask.shape(), [n, n]);
        let values = mask.to_vec();
        for row in 0..n {
            for col in 0..n {
                let hidden = col > row || row - col >= window;
                prop_assert_eq!(values[row * n + col], hidden, "row {} col {}", row, col);
            }
        }
        // Small inputs give small scores and so weights far from 0: a change travels
        // through every layer without being lost to rounding.
        manual_seed(seed);
        let x = &randn(&[n, 4]) * 0.3;
        prop_assert_eq!(predict_reach(layers, window), measured_reach(&x, &mask, layers));
    }
}
