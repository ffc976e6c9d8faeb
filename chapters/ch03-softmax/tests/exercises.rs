//! One test per exercise, named after it, so `cargo test -p ch03-softmax --features
//! exercise NAME` checks just that exercise. Each compares with PyTorch's numbers (the text
//! the reference script printed) and checks properties on random inputs that a hard-coded
//! answer cannot satisfy: weights sum to 1, adding a constant to a lane changes nothing,
//! and the results agree with the library's `Tensor::softmax`.

use ch01_embeddings::inputs::your_journey;
use ch03_softmax::answers::Effect;
use ch03_softmax::naive::softmax_naive;
use ch03_softmax::shift_scale::{
    predict_scale, predict_shift, scale_scores, shift_scores,
};
use ch03_softmax::stable::softmax_stable;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::assert_close;
use shared::{Tensor, tensor};

/// The scores of x(2) ("journey" against every word), as chapter 2 computes them.
fn scores_of_x2() -> Tensor {
    let inputs = your_journey();
    inputs.matmul(&inputs.get(1))
}

/// A random 1-D tensor of 1 to 9 scores in `-range..range`.
fn vector(range: f32) -> impl Strategy<Value = Tensor> {
    proptest::collection::vec(-range..range, 1..10).prop_map(|v| {
        let n = v.len();
        Tensor::from_vec(v, &[n])
    })
}

/// A random 3-D tensor (each dim 1 to 4) with values in `-range..range`, and a dim of it
/// (negative ones included).
fn tensor_and_dim(range: f32) -> impl Strategy<Value = (Tensor, i64)> {
    (1usize..5, 1usize..5, 1usize..5, -3i64..3).prop_flat_map(
        move |(a, b, c, dim)| {
            proptest::collection::vec(-range..range, a * b * c)
                .prop_map(move |v| (Tensor::from_vec(v, &[a, b, c]), dim))
        },
    )
}

#[test]
fn exercise_softmax_naive() {
    assert_eq!(
        softmax_naive(&scores_of_x2()).to_string(),
        "tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])"
    );
    // The overflow the chapter shows: exp(100) and exp(1000) are inf in float32.
    assert_eq!(
        softmax_naive(&tensor!([10.0, 100.0, 1000.0])).to_string(),
        "tensor([0., nan, nan])"
    );
}

#[test]
fn exercise_softmax_stable() {
    assert_eq!(
        softmax_stable(&scores_of_x2(), 0).to_string(),
        "tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])"
    );
    assert_eq!(
        softmax_stable(&tensor!([10.0, 100.0, 1000.0]), 0).to_string(),
        "tensor([0., 0., 1.])"
    );
    let scores = tensor!([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]);
    assert_eq!(
        softmax_stable(&scores, 0).to_string(),
        "tensor([[0.5000, 0.7311, 0.8808],\n        [0.5000, 0.2689, 0.1192]])"
    );
    let rows =
        "tensor([[0.0900, 0.2447, 0.6652],\n        [0.3333, 0.3333, 0.3333]])";
    assert_eq!(softmax_stable(&scores, 1).to_string(), rows);
    assert_eq!(softmax_stable(&scores, -1).to_string(), rows);
    // Each row subtracts its own max: one max for the whole tensor would leave the second
    // row with exp(-2000) = 0 everywhere, and 0 / 0 = NaN.
    assert_eq!(
        softmax_stable(&tensor!([[1000.0, 999.0], [-1000.0, -999.0]]), -1)
            .to_string(),
        "tensor([[0.7311, 0.2689],\n        [0.2689, 0.7311]])"
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// On small scores (no overflow) the formula is exactly what `torch.softmax` computes.
    #[test]
    fn exercise_softmax_naive_equals_softmax_on_small_scores(x in vector(5.0)) {
        assert_close(&softmax_naive(&x), &x.softmax(0), 0.0, 1e-6);
    }

    /// The naive weights are positive and add up to 1.
    #[test]
    fn exercise_softmax_naive_sums_to_one(x in vector(5.0)) {
        let w = softmax_naive(&x);
        prop_assert!(w.to_vec().iter().all(|&v| v > 0.0));
        prop_assert!((w.sum().item() - 1.0).abs() <= 1e-5);
    }

    /// The hand-written stable softmax equals the library's, along any dim, even for
    /// scores far beyond exp's range.
    #[test]
    fn exercise_softmax_stable_equals_softmax((x, dim) in tensor_and_dim(1000.0)) {
        assert_close(&softmax_stable(&x, dim), &x.softmax(dim), 0.0, 1e-6);
    }

    /// Every lane along `dim` sums to 1 (for a matrix and dim -1: every row).
    #[test]
    fn exercise_softmax_stable_lanes_sum_to_one((x, dim) in tensor_and_dim(50.0)) {
        let sums = softmax_stable(&x, dim).sum_dim(dim, false);
        for s in sums.to_vec() {
            prop_assert!((s - 1.0).abs() <= 1e-5, "a lane sums to {}", s);
        }
    }

    /// Adding a constant to a row leaves that row's weights unchanged (up to the rounding
    /// of the addition).
    #[test]
    fn exercise_softmax_stable_ignores_a_constant_per_row(
        (x, _) in tensor_and_dim(5.0),
        shifts in proptest::collection::vec(-10.0f32..10.0, 16),
    ) {
        let x = x.reshape(&[-1, x.size(-1) as i64]);
        let rows = x.size(0);
        let shift = Tensor::from_vec(shifts[..rows].to_vec(), &[rows, 1]);
        assert_close(&softmax_stable(&(&x + &shift), -1), &softmax_stable(&x, -1), 0.0, 1e-5);
    }
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Subtracting the max changes nothing where the naive softmax does not overflow. (Not
    /// an exercise's test: it needs both exercises solved.)
    #[test]
    fn naive_equals_stable_on_small_scores(x in vector(5.0)) {
        assert_close(&softmax_naive(&x), &softmax_stable(&x, 0), 0.0, 1e-6);
    }
}

/// What happened to the softmax weights of a row: the same up to rounding, or a larger or
/// a smaller largest weight.
fn effect(before: &Tensor, after: &Tensor) -> Effect {
    let (b, a) = (before.softmax(-1).to_vec(), after.softmax(-1).to_vec());
    let largest = |w: &[f32]| w.iter().copied().fold(0.0f32, f32::max);
    if b.iter().zip(&a).all(|(x, y)| (x - y).abs() <= 1e-5) {
        Effect::Unchanged
    } else if largest(&a) > largest(&b) {
        Effect::Sharper
    } else {
        Effect::Flatter
    }
}

#[test]
fn exercise_shift_and_scale() {
    // The scores of x(2): shifted by its own largest score (what the stable softmax
    // does), and scaled as chapter 4 will scale them.
    let scores = scores_of_x2();
    let max = scores.max().item();
    assert_eq!(shift_scores(&scores, -max), &scores - max);
    assert_eq!(scale_scores(&scores, 0.5), &scores * 0.5);
    assert_eq!(
        predict_shift(-max),
        effect(&scores, &shift_scores(&scores, -max))
    );
    for factor in [0.5, 1.0, 3.0] {
        assert_eq!(
            predict_scale(factor),
            effect(&scores, &scale_scores(&scores, factor)),
            "scaling the scores of x(2) by {factor}"
        );
    }
}

proptest! {
    #![proptest_config(quiet(64))]

    /// On random rows of scores (not all equal), random shifts and random factors below
    /// and above 1: the predictions match what the softmax does.
    #[test]
    fn exercise_shift_and_scale_on_random_rows(
        row in proptest::collection::vec(-3.0f32..3.0, 2..9)
            .prop_filter("scores not all equal", |v| {
                v.iter().copied().fold(f32::MIN, f32::max) - v.iter().copied().fold(f32::MAX, f32::min) > 0.5
            }),
        c in -20.0f32..20.0,
        factor in prop_oneof![0.2f32..0.8, Just(1.0f32), 1.25f32..4.0],
    ) {
        let n = row.len();
        let scores = Tensor::from_vec(row.clone(), &[n]);
        let shifted = shift_scores(&scores, c);
        let scaled = scale_scores(&scores, factor);
        for (i, &s) in row.iter().enumerate() {
            prop_assert_eq!(shifted.to_vec()[i], s + c);
            prop_assert_eq!(scaled.to_vec()[i], s * factor);
        }
        prop_assert_eq!(predict_shift(c), effect(&scores, &shifted), "shift by {}", c);
        prop_assert_eq!(predict_scale(factor), effect(&scores, &scaled), "factor {}", factor);
    }
}
