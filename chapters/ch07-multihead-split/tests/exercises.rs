//! One test per exercise, named after it, so `cargo test -p ch07-multihead-split --features
//! exercise NAME` checks just that function. Each compares with PyTorch's numbers (through
//! the reference output) and checks properties a hard-coded answer cannot satisfy.

use ch01_embeddings::inputs::your_journey;
use ch06_multihead_wrapper::wrapper::MultiHeadAttentionWrapper;
use ch07_multihead_split::grouped::{kv_head_of, repeat_kv};
use ch07_multihead_split::heads::{merge_heads, split_heads};
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::eye;
use shared::nn::Linear;
use shared::testing::close;
use shared::{Tensor, arange, cat, manual_seed, ones, rand, stack, zeros};

/// Equal up to float32 rounding (the two sides add in different orders):
/// `|got - want| <= ATOL + RTOL·|want|` everywhere.
const RTOL: f64 = 1e-4;
const ATOL: f64 = 1e-5;

/// The element of `t` at a full index.
fn at(t: &Tensor, index: &[usize]) -> f32 {
    index.iter().fold(t.clone(), |t, &i| t.get(i)).item()
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
    #![proptest_config(quiet(32))]

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
fn indices(
    b: usize,
    h: usize,
    n: usize,
    hd: usize,
) -> Vec<(usize, usize, usize, usize)> {
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
    #![proptest_config(quiet(32))]

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
    // The reference's example: the blog post's six tokens as q = k = v.
    let x = your_journey().view(&[1, 1, 6, 3]);
    let (output, weights) = scaled_dot_product_attention(&x, &x, &x, None);
    assert_eq!(output.shape(), [1, 1, 6, 3]);
    assert_eq!(weights.shape(), [1, 1, 6, 6]);
    assert!(
        weights.to_string().starts_with(
            "tensor([[[[0.1916, 0.1866, 0.1853, 0.1415, 0.1401, 0.1548],"
        )
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
    #![proptest_config(quiet(32))]

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
        prop_assert!(close(&output2.narrow(2, 0, later), &output.narrow(2, 0, later), RTOL, ATOL));
        prop_assert!(!close(&output2, &output, RTOL, ATOL));
    }
}

#[test]
fn exercise_multihead_forward() {
    // Raschka's book: manual_seed(123), d_in = 3, d_out = 2, two heads, the batch of two.
    let inputs = your_journey();
    let batch = stack(&[&inputs, &inputs], 0);
    manual_seed(123);
    let mha = MultiHeadAttention::new(3, 2, 6, 0.0, 2, false);
    let context_vecs = mha.forward(&batch);
    assert_eq!(context_vecs.shape(), [2, 6, 2]);
    assert_eq!(
        context_vecs.get(0).get(0).to_string(),
        "tensor([0.3190, 0.4858])"
    );
    assert_eq!(
        context_vecs.get(1).get(5).to_string(),
        "tensor([0.2575, 0.4028])"
    );
}

/// The rows of a `[heads · head_dim, ..]` weight (or bias) in blocks of `head_dim`, the
/// blocks in the order `order`.
fn reorder_blocks(w: &Tensor, order: &[usize], head_dim: usize) -> Tensor {
    let blocks: Vec<Tensor> = order
        .iter()
        .map(|&i| w.narrow(0, i * head_dim, head_dim))
        .collect();
    cat(&blocks, 0)
}

/// A layer whose weight (and bias) rows are put in the order `rows` gives them.
fn linear_with(layer: &Linear, rows: impl Fn(&Tensor) -> Tensor) -> Linear {
    Linear::from_parameters(rows(&layer.weight), layer.bias.as_ref().map(&rows))
}

/// A permutation of `0..n` for a random `n` in `1..4`.
fn permutation() -> impl Strategy<Value = Vec<usize>> {
    (1usize..4).prop_flat_map(|n| Just((0..n).collect::<Vec<usize>>()).prop_shuffle())
}

proptest! {
    #![proptest_config(quiet(32))]

    /// The split version computes exactly chapter 6's wrapper when its projections are the
    /// heads' weights stacked row-wise and out_proj is the identity.
    #[test]
    fn exercise_multihead_forward_equals_the_wrapper(heads in 1usize..4, head_dim in 1usize..4, bias: bool, seed in 0u64..1000) {
        manual_seed(seed);
        let (d_in, n) = (3, 5);
        let wrapper = MultiHeadAttentionWrapper::new(d_in, head_dim, n, 0.0, heads, bias);
        let mut mha = MultiHeadAttention::new(d_in, heads * head_dim, n, 0.0, heads, bias);
        let stacked = |layer: fn(&ch05_causal::CausalAttention) -> &Linear| {
            let weights: Vec<&Tensor> = wrapper.heads.iter().map(|h| &layer(h).weight).collect();
            let biases: Option<Vec<&Tensor>> =
                wrapper.heads.iter().map(|h| layer(h).bias.as_ref()).collect();
            Linear::from_parameters(cat(&weights, 0), biases.map(|b| cat(&b, 0)))
        };
        mha.w_query = stacked(|h| &h.w_query);
        mha.w_key = stacked(|h| &h.w_key);
        mha.w_value = stacked(|h| &h.w_value);
        mha.out_proj = Linear::from_parameters(eye(heads * head_dim), Some(zeros(&[heads * head_dim])));
        let x = rand(&[2, n, d_in]);
        prop_assert!(close(&mha.forward(&x), &wrapper.forward(&x), RTOL, ATOL));
    }

    /// With out_proj the identity, reordering the heads (their blocks of rows in the three
    /// projections) reorders the output's head blocks the same way.
    #[test]
    fn exercise_multihead_forward_permuting_heads_permutes_output(order in permutation(), seed in 0u64..1000) {
        manual_seed(seed);
        let (d_in, n, head_dim) = (3, 4, 2);
        let d_out = order.len() * head_dim;
        let mut mha = MultiHeadAttention::new(d_in, d_out, n, 0.0, order.len(), true);
        mha.out_proj = Linear::from_parameters(eye(d_out), Some(zeros(&[d_out])));
        let x = rand(&[2, n, d_in]);
        let out = mha.forward(&x);
        let blocks = |t: &Tensor| reorder_blocks(t, &order, head_dim);
        mha.w_query = linear_with(&mha.w_query, blocks);
        mha.w_key = linear_with(&mha.w_key, blocks);
        mha.w_value = linear_with(&mha.w_value, blocks);
        let permuted = mha.forward(&x);
        for (i, &from) in order.iter().enumerate() {
            prop_assert!(close(&permuted.narrow(-1, i * head_dim, head_dim), &out.narrow(-1, from * head_dim, head_dim), RTOL, ATOL));
        }
    }

    /// Changing a later token leaves the outputs of earlier tokens unchanged.
    #[test]
    fn exercise_multihead_forward_is_causal(later in 1usize..6, seed in 0u64..1000) {
        manual_seed(seed);
        let mha = MultiHeadAttention::new(3, 4, 6, 0.0, 2, false);
        let x = rand(&[2, 6, 3]);
        let mut changed = x.clone();
        changed.set(&[1, later, 2], 5.0);
        let (out, out_changed) = (mha.forward(&x), mha.forward(&changed));
        prop_assert_eq!(out_changed.narrow(1, 0, later), out.narrow(1, 0, later));
        prop_assert_ne!(out_changed.get(1).get(later), out.get(1).get(later));
    }
}

/// `softmax(q·kᵀ/√d)·v` over the last two dims, written out (so that this test does not
/// need the `scaled_dot_product_attention` exercise).
fn attention(q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor {
    let d = q.size(-1) as f32;
    (q.matmul(&k.transpose(-2, -1)) / d.sqrt())
        .softmax(-1)
        .matmul(v)
}

#[test]
fn exercise_repeat_kv() {
    // Two key/value heads of one token with one feature: 10 and 20. Three copies each.
    let kv = Tensor::from_vec(vec![10.0, 20.0], &[1, 2, 1, 1]);
    assert_eq!(
        repeat_kv(&kv, 3).to_vec(),
        [10.0, 10.0, 10.0, 20.0, 20.0, 20.0]
    );
    assert_eq!(repeat_kv(&kv, 1), kv);
    // Eight query heads, two key/value heads: heads 0-3 share the first.
    let served: Vec<usize> = (0..8).map(|h| kv_head_of(h, 8, 2)).collect();
    assert_eq!(served, [0, 0, 0, 0, 1, 1, 1, 1]);
}

proptest! {
    #![proptest_config(quiet(32))]

    /// For random queries, keys and values: attention with the repeated keys and values
    /// gives, in every query head, that head's attention over the key/value head
    /// `kv_head_of` names, and the repeated heads are copies, in order.
    #[test]
    fn exercise_repeat_kv_shares_heads(
        seed in 0u64..10_000, batch in 1usize..3, kv_heads in 1usize..4, groups in 1usize..4,
        tokens in 1usize..6, head_dim in 1usize..5,
    ) {
        let num_heads = kv_heads * groups;
        manual_seed(seed);
        let q = rand(&[batch, num_heads, tokens, head_dim]);
        let k = rand(&[batch, kv_heads, tokens, head_dim]);
        let v = rand(&[batch, kv_heads, tokens, head_dim]);
        let (k_all, v_all) = (repeat_kv(&k, groups), repeat_kv(&v, groups));
        prop_assert_eq!(k_all.shape(), [batch, num_heads, tokens, head_dim]);
        let out = attention(&q, &k_all, &v_all);
        for h in 0..num_heads {
            let served = kv_head_of(h, num_heads, kv_heads);
            prop_assert_eq!(served, h / groups, "query head {} of {}", h, num_heads);
            let (h, served) = (h as i64, served as i64);
            prop_assert_eq!(k_all.select(1, h), k.select(1, served));
            prop_assert_eq!(v_all.select(1, h), v.select(1, served));
            let one_head = attention(&q.select(1, h), &k.select(1, served), &v.select(1, served));
            prop_assert!(close(&out.select(1, h), &one_head, RTOL, ATOL));
        }
    }
}
