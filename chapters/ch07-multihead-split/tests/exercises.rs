//! One test per exercise, named after it, so `cargo test -p ch07-multihead-split --features
//! exercise NAME` checks just that function. Each compares with PyTorch's numbers (through
//! the reference output) and checks properties a hard-coded answer cannot satisfy.

use ch01_embeddings::inputs::your_journey;
use ch07_multihead_split::heads::{merge_heads, split_heads};
use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use proptest::prelude::*;
use shared::{Tensor, arange, manual_seed, ones, rand};

/// Equal up to float32 rounding: `|a - b| <= 1e-5 + 1e-4·|b|` everywhere.
fn close(a: &Tensor, b: &Tensor) -> bool {
    a.dims() == b.dims()
        && a.to_vec()
            .iter()
            .zip(b.to_vec())
            .all(|(&x, y)| (x - y).abs() <= 1e-5 + 1e-4 * y.abs())
}

/// The element of `t` at a full index.
fn at(t: &Tensor, index: &[usize]) -> f32 {
    index.iter().fold(t.clone(), |t, &i| t.get(i as i64)).item()
}

#[test]
fn exercise_split_heads() {
    // Two tokens of 4 features, two heads: head 0 gets features 0-1, head 1 features 2-3.
    let x = arange(0.0f32, 8.0, 1.0).view(&[1, 2, 4]);
    let heads = split_heads(&x, 2);
    assert_eq!(heads.shape(), [1, 2, 2, 2]);
    assert_eq!(heads.to_vec(), vec![0., 1., 4., 5., 2., 3., 6., 7.]);
}

/// Sizes `(batch, tokens, heads, head_dim)` small enough to check every element.
fn sizes() -> impl Strategy<Value = (usize, usize, usize, usize)> {
    (1usize..3, 1usize..5, 1usize..4, 1usize..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Head `h` of token `t` holds features `h·head_dim ..` of that token, for any sizes.
    #[test]
    fn exercise_split_heads_slices_the_features((b, n, h, hd) in sizes(), seed in 0u64..1000) {
        manual_seed(seed);
        let x = rand(&[b, n, h * hd]);
        let heads = split_heads(&x, h);
        prop_assert_eq!(heads.shape(), [b, h, n, hd]);
        for (bi, head, t, j) in indices(b, h, n, hd) {
            prop_assert_eq!(at(&heads, &[bi, head, t, j]), at(&x, &[bi, t, head * hd + j]));
        }
    }
}

/// Every index of a `[b, h, n, hd]` tensor.
fn indices(b: usize, h: usize, n: usize, hd: usize) -> Vec<(usize, usize, usize, usize)> {
    let mut all = Vec::new();
    for bi in 0..b {
        for head in 0..h {
            for t in 0..n {
                for j in 0..hd {
                    all.push((bi, head, t, j));
                }
            }
        }
    }
    all
}

#[test]
fn exercise_merge_heads() {
    // Two heads of two tokens of 2 features: token 0 gets head 0's row, then head 1's.
    let heads = Tensor::from_vec(vec![0., 1., 4., 5., 2., 3., 6., 7.], &[1, 2, 2, 2]);
    let merged = merge_heads(&heads);
    assert_eq!(merged.shape(), [1, 2, 4]);
    assert_eq!(merged.to_vec(), arange(0.0f32, 8.0, 1.0).to_vec());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Token `t` gets every head's row `t`, head 0 first, for any sizes.
    #[test]
    fn exercise_merge_heads_puts_heads_side_by_side((b, n, h, hd) in sizes(), seed in 0u64..1000) {
        manual_seed(seed);
        let heads = rand(&[b, h, n, hd]);
        let merged = merge_heads(&heads);
        prop_assert_eq!(merged.shape(), [b, n, h * hd]);
        for (bi, head, t, j) in indices(b, h, n, hd) {
            prop_assert_eq!(at(&merged, &[bi, t, head * hd + j]), at(&heads, &[bi, head, t, j]));
        }
    }
}

#[test]
fn exercise_scaled_dot_product_attention() {
    // The reference's example: seed 000's six tokens as q = k = v.
    let x = your_journey().view(&[1, 1, 6, 3]);
    let (output, weights) = scaled_dot_product_attention(&x, &x, &x, None);
    assert_eq!(output.shape(), [1, 1, 6, 3]);
    assert_eq!(weights.shape(), [1, 1, 6, 6]);
    assert!(
        weights
            .to_string()
            .starts_with("tensor([[[[0.1916, 0.1866, 0.1853, 0.1415, 0.1401, 0.1548],")
    );
    let causal = ones(&[6, 6]).tril(0).bool();
    let (output, weights) = scaled_dot_product_attention(&x, &x, &x, Some(&causal));
    assert_eq!(
        weights.get(0).get(0).get(1).to_string(),
        "tensor([0.4226, 0.5774, 0.0000, 0.0000, 0.0000, 0.0000])"
    );
    assert_eq!(
        output.get(0).get(0).get(1).to_string(),
        "tensor([0.4993, 0.5657, 0.7572])"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// With a causal mask: every row of weights sums to 1, the upper triangle is exactly
    /// zero, and changing a later token leaves the outputs of earlier tokens unchanged.
    #[test]
    fn exercise_scaled_dot_product_attention_causal(n in 2usize..7, later in 0usize..6, seed in 0u64..1000) {
        let later = 1 + later % (n - 1); // a token with at least one token before it
        manual_seed(seed);
        let (q, k, v) = (rand(&[2, 3, n, 4]), rand(&[2, 3, n, 4]), rand(&[2, 3, n, 5]));
        let causal = ones(&[n, n]).tril(0).bool();
        let (output, weights) = scaled_dot_product_attention(&q, &k, &v, Some(&causal));
        prop_assert_eq!(output.shape(), [2, 3, n, 5]);
        for row in weights.sum_dim(-1, false).to_vec() {
            prop_assert!((row - 1.0).abs() < 1e-5);
        }
        let upper = weights.masked_fill(&causal, 0.0);
        prop_assert!(upper.to_vec().iter().all(|&w| w == 0.0));

        // New query, key and value for token `later` (and after): earlier outputs stay.
        let from_later = (0..n).map(|t| t >= later).collect();
        let from_later = Tensor::from_vec(from_later, &[n, 1]);
        let changed = |t: &Tensor| t.masked_fill(&from_later, 9.0);
        let (output2, _) =
            scaled_dot_product_attention(&changed(&q), &changed(&k), &changed(&v), Some(&causal));
        prop_assert!(close(&output2.narrow(2, 0, later), &output.narrow(2, 0, later)));
        prop_assert!(!close(&output2, &output));
    }
}
