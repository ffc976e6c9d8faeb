//! One test per exercise, named after it, so `cargo test -p ch09-flash-attention --features
//! exercise NAME` checks just that function. Each compares with PyTorch's numbers (through
//! the reference output) or with the materialised attention of chapter 7, and checks
//! properties a hard-coded answer cannot satisfy.

use ch01_embeddings::inputs::your_journey;
use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use ch09_flash_attention::exp::exp;
use ch09_flash_attention::merge::{merge_partials, predict_order_matters};
use ch09_flash_attention::online::OnlineSoftmax;
use ch09_flash_attention::partial::partial_attention;
use ch09_flash_attention::tiled::tiled_attention;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::close;
use shared::{Tensor, manual_seed, ones, rand, randn};

/// Equal up to float32 rounding (the two sides add in different orders):
/// `|got - want| <= ATOL + RTOL·|want|` everywhere.
const RTOL: f64 = 1e-5;
const ATOL: f64 = 1e-6;

/// How far `got` is from the true `eˣ`, in units of the `f32` spacing at `eˣ` (for results
/// below the smallest normal float, the spacing there).
fn exp_error_ulps(x: f32, got: f32) -> f64 {
    let exact = f64::from(x).exp();
    let at = (exact as f32).max(f32::MIN_POSITIVE);
    let ulp = f64::from(f32::from_bits(at.to_bits() + 1)) - f64::from(at);
    (f64::from(got) - exact).abs() / ulp
}

#[test]
fn exercise_exp() {
    assert_eq!(exp(0.0), 1.0);
    assert_eq!(exp(f32::NEG_INFINITY), 0.0);
    assert_eq!(exp(-200.0), 0.0);
    assert_eq!(exp(f32::INFINITY), f32::INFINITY);
    assert_eq!(exp(89.0), f32::INFINITY);
    assert!(exp(f32::NAN).is_nan());
    assert!(exp_error_ulps(1.0, exp(1.0)) <= 1.0, "e = {}", exp(1.0));
    assert!(
        exp_error_ulps(88.7, exp(88.7)) <= 2.0,
        "exp(88.7) = {}",
        exp(88.7)
    );
    assert!(
        exp(-100.0) > 0.0 && exp(-100.0) < f32::MIN_POSITIVE,
        "subnormal results"
    );
}

#[test]
fn exercise_exp_within_2_ulp_everywhere() {
    // Every 97th float from -104 to 88.7 (about 20 million values), by bit pattern.
    let mut worst = (0.0f64, 0.0f32);
    let magnitudes = (0..104.0f32.to_bits()).step_by(97).map(f32::from_bits);
    for x in magnitudes
        .clone()
        .map(|m| -m)
        .chain(magnitudes.take_while(|&m| m < 88.7))
    {
        let err = exp_error_ulps(x, exp(x));
        if err > worst.0 {
            worst = (err, x);
        }
    }
    eprintln!("worst: {} ulp at x = {}", worst.0, worst.1);
    assert!(worst.0 <= 2.0, "{} ulp at x = {}", worst.0, worst.1);
}

proptest! {
    #![proptest_config(quiet(256))]
    /// `exp(a + b) = exp(a)·exp(b)` up to rounding, and exp grows with x.
    #[test]
    fn exercise_exp_is_an_exponential(a in -40.0f32..40.0, b in -40.0f32..40.0) {
        let product = exp(a) * exp(b);
        prop_assert!((exp(a + b) - product).abs() <= 1e-5 * product + 2.0 * f32::MIN_POSITIVE);
        if a < b {
            prop_assert!(exp(a) <= exp(b));
        }
    }
}

/// The row of chapter 2's scores of x(2), fed in blocks of 2 as the chapter prints it.
#[test]
fn exercise_online_softmax() {
    let inputs = your_journey();
    let scores = inputs.matmul(&inputs.get(1)).to_vec();
    let mut state = OnlineSoftmax::new();
    let mut block = scores[..2].to_vec();
    assert_eq!(
        state.update(&mut block),
        0.0,
        "nothing to rescale before the first block"
    );
    assert_eq!(state.max, scores[1]);
    assert_eq!(Tensor::scalar(state.sum).to_string(), "tensor(1.5824)");
    assert!(
        (block[1] - 1.0).abs() < 1e-6,
        "the largest score gets exp(0)"
    );
    for start in [2, 4] {
        let rescale = state.update(&mut scores[start..start + 2].to_vec());
        assert_eq!(rescale, 1.0, "1.4950 stays the largest score");
    }
    assert_eq!(Tensor::scalar(state.sum).to_string(), "tensor(4.2036)");
}

/// A row of scores (some `-∞`, but not the first) and the sizes of its blocks.
fn row_and_blocks() -> impl Strategy<Value = (Vec<f32>, Vec<usize>)> {
    let score = prop_oneof![9 => -30.0f32..30.0, 1 => Just(f32::NEG_INFINITY)];
    (-30.0f32..30.0, proptest::collection::vec(score, 0..40)).prop_flat_map(
        |(first, rest)| {
            let row: Vec<f32> = std::iter::once(first).chain(rest).collect();
            let n = row.len();
            (Just(row), proptest::collection::vec(1usize..9, n))
        },
    )
}

/// Splits `row` into consecutive blocks of the given sizes (the last one cut short).
fn split(row: &[f32], sizes: &[usize]) -> Vec<Vec<f32>> {
    let mut blocks = Vec::new();
    let mut start = 0;
    for &size in sizes {
        if start >= row.len() {
            break;
        }
        let end = (start + size).min(row.len());
        blocks.push(row[start..end].to_vec());
        start = end;
    }
    blocks
}

proptest! {
    #![proptest_config(quiet(256))]
    /// However the row is cut into blocks, the final maximum is the row's maximum, the sum
    /// is `Σ exp(s - max)`, and the weights, rescaled by the factors returned after them,
    /// are the softmax of the row.
    #[test]
    fn exercise_online_softmax_any_blocks((row, sizes) in row_and_blocks()) {
        let mut state = OnlineSoftmax::new();
        let mut weights: Vec<f32> = Vec::new();
        for mut block in split(&row, &sizes) {
            let rescale = state.update(&mut block);
            prop_assert!((0.0..=1.0).contains(&rescale));
            for w in &mut weights {
                *w *= rescale;
            }
            weights.extend(block);
        }
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        prop_assert_eq!(state.max, max);
        let softmax = Tensor::from_vec(row.clone(), &[row.len()]).softmax(0).to_vec();
        let sum: f32 = row.iter().map(|&s| (s - max).exp()).sum();
        prop_assert!((state.sum - sum).abs() <= 1e-5 * sum);
        for ((&w, &p), &s) in weights.iter().zip(&softmax).zip(&row) {
            prop_assert!((w / state.sum - p).abs() <= 1e-5 * p + 1e-7);
            if s == f32::NEG_INFINITY {
                prop_assert_eq!(w, 0.0);
            }
        }
    }
}

/// Chapter 7's attention, with the causal mask of PyTorch's `is_causal` if `causal`.
fn materialised(q: &Tensor, k: &Tensor, v: &Tensor, causal: bool) -> Tensor {
    let visible = ones(&[q.size(-2), k.size(-2)]).tril(0).bool();
    scaled_dot_product_attention(q, k, v, causal.then_some(&visible)).0
}

#[test]
fn exercise_tiled_attention() {
    // The chapter's example: manual_seed(123), shape (1, 2, 10, 5), blocks of 4, causal.
    manual_seed(123);
    let (q, k, v) = (
        rand(&[1, 2, 10, 5]),
        rand(&[1, 2, 10, 5]),
        rand(&[1, 2, 10, 5]),
    );
    let tiled = tiled_attention(&q, &k, &v, 4, true);
    assert_eq!(tiled.shape(), [1, 2, 10, 5]);
    let text = tiled.get(0).get(0).to_string();
    assert!(
        text.starts_with("tensor([[0.3608, 0.5325, 0.6559, 0.3232, 0.1126],"),
        "{text}"
    );
    assert!(
        text.ends_with("[0.3796, 0.4289, 0.3898, 0.4495, 0.6433]])"),
        "{text}"
    );
    assert!(close(&tiled, &materialised(&q, &k, &v, true), RTOL, ATOL));
}

proptest! {
    #![proptest_config(quiet(48))]

    /// Any block size, any lengths (queries and keys may differ), with or without the mask:
    /// the tiles give chapter 7's attention.
    #[test]
    fn exercise_tiled_attention_equals_materialised(
        queries in 1usize..12, keys in 1usize..12, d in 1usize..6, d_v in 1usize..6,
        block in 1usize..7, causal: bool, seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let q = randn(&[2, queries, d]);
        let k = randn(&[2, keys, d]);
        let v = rand(&[2, keys, d_v]);
        let tiled = tiled_attention(&q, &k, &v, block, causal);
        prop_assert!(close(&tiled, &materialised(&q, &k, &v, causal), RTOL, ATOL));
    }

    /// Under the causal mask, changing a later token leaves the earlier outputs exactly as
    /// they were: their tiles never read it.
    #[test]
    fn exercise_tiled_attention_is_causal(n in 2usize..12, later in 1usize..11, block in 1usize..6, seed in 0u64..1000) {
        let later = 1 + later % (n - 1);
        manual_seed(seed);
        let (q, k, v) = (rand(&[1, n, 4]), rand(&[1, n, 4]), rand(&[1, n, 3]));
        let out = tiled_attention(&q, &k, &v, block, true);
        let from_later = Tensor::from_vec((0..n).map(|t| t >= later).collect(), &[n, 1]);
        let changed = |t: &Tensor| t.masked_fill(&from_later, 9.0);
        let out2 = tiled_attention(&changed(&q), &changed(&k), &changed(&v), block, true);
        prop_assert_eq!(out2.narrow(1, 0, later), out.narrow(1, 0, later));
    }
}

#[test]
fn exercise_merge_partials() {
    // The sentence of chapter 2 as queries, keys and values, the keys split 2 + 4.
    let x = your_journey();
    let (a, b) = (
        partial_attention(&x, &x.narrow(0, 0, 2), &x.narrow(0, 0, 2)),
        partial_attention(&x, &x.narrow(0, 2, 4), &x.narrow(0, 2, 4)),
    );
    let merged = merge_partials(&a, &b);
    let (whole, _) = scaled_dot_product_attention(&x, &x, &x, None);
    assert!(close(&merged.finish(), &whole, RTOL, ATOL));
    let swapped = merge_partials(&b, &a).finish();
    assert_eq!(
        predict_order_matters(),
        !close(&swapped, &merged.finish(), RTOL, ATOL)
    );
    // The merged maximum and sum are those of all six keys (to rounding: a product with
    // fewer keys may add in another order).
    let all = partial_attention(&x, &x, &x);
    assert!(close(&merged.max, &all.max, RTOL, ATOL));
    assert!(close(&merged.sum, &all.sum, RTOL, ATOL));
}

proptest! {
    #![proptest_config(quiet(32))]

    /// For random queries, keys and values, split at a random place into two parts in
    /// either order, or into three parts merged two ways: the same attention as all the keys
    /// at once, also when one part's scores are far larger than the other's.
    #[test]
    fn exercise_merge_partials_any_split(
        seed in 0u64..10_000, queries in 1usize..5, keys in 2usize..9, d in 1usize..5,
        split in 1usize..8, spread in prop_oneof![Just(1.0f32), Just(30.0f32)],
    ) {
        let split = 1 + split % (keys - 1);
        manual_seed(seed);
        let q = &randn(&[2, queries, d]) * spread;
        let (k, v) = (randn(&[2, keys, d]), randn(&[2, keys, 3]));
        let (whole, _) = scaled_dot_product_attention(&q, &k, &v, None);
        let part = |start: usize, len: usize| {
            partial_attention(&q, &k.narrow(-2, start, len), &v.narrow(-2, start, len))
        };
        let (a, b) = (part(0, split), part(split, keys - split));
        let (ab, ba) = (merge_partials(&a, &b).finish(), merge_partials(&b, &a).finish());
        prop_assert!(close(&ab, &whole, RTOL, ATOL));
        let mut order_matters = !close(&ab, &ba, RTOL, ATOL);
        if split >= 2 {
            let (a1, a2) = (part(0, 1), part(1, split - 1));
            let left = merge_partials(&merge_partials(&a1, &a2), &b).finish();
            let right = merge_partials(&a1, &merge_partials(&a2, &b)).finish();
            prop_assert!(close(&left, &whole, RTOL, ATOL));
            order_matters |= !close(&left, &right, RTOL, ATOL);
        }
        prop_assert_eq!(predict_order_matters(), order_matters);
    }
}
