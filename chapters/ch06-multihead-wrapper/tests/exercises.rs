//! One test per exercise, named after it, so `cargo test -p ch06-multihead-wrapper
//! --features exercise NAME` checks just that function. Each compares with PyTorch's
//! numbers (through the reference output) and checks properties a hard-coded answer cannot
//! satisfy.

use ch01_embeddings::inputs::{LIFE_IS_SHORT, your_journey};
use ch01_embeddings::lookup::lookup;
use ch01_embeddings::vocabulary::{token_ids, vocabulary};
use ch05_causal::CausalAttention;
use ch06_multihead_wrapper::answers::Outcome;
use ch06_multihead_wrapper::one_big_head::{one_big_head, predict_one_big_head};
use ch06_multihead_wrapper::stacked::{head_contexts, project_heads};
use ch06_multihead_wrapper::wrapper::MultiHeadAttentionWrapper;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::nn::Embedding;
use shared::testing::close;
use shared::{Tensor, manual_seed, rand, randn, stack};

/// Equal up to float32 rounding (the two sides add in different orders):
/// `|got - want| <= ATOL + RTOL·|want|` everywhere.
const RTOL: f64 = 1e-4;
const ATOL: f64 = 1e-5;

/// A permutation of `0..n` for a random `n` in `1..5`.
fn permutation() -> impl Strategy<Value = Vec<usize>> {
    (1usize..5).prop_flat_map(|n| Just((0..n).collect::<Vec<usize>>()).prop_shuffle())
}

/// The entries of `x` along dim 0 in the order `order`.
fn reorder(x: &Tensor, order: &[usize]) -> Tensor {
    let picked: Vec<Tensor> = order.iter().map(|&i| x.get(i)).collect();
    stack(&picked, 0)
}

#[test]
fn exercise_wrapper_forward() {
    // The blog post's printed result: two heads of d_out = 2 after manual_seed(123).
    let inputs = your_journey();
    let batch = stack(&[&inputs, &inputs], 0);
    manual_seed(123);
    let mha = MultiHeadAttentionWrapper::new(3, 2, 6, 0.0, 2, false);
    let context_vecs = mha.forward(&batch);
    assert_eq!(context_vecs.shape(), [2, 6, 4]);
    assert_eq!(
        context_vecs.get(1).get(5).to_string(),
        "tensor([-0.6447,  0.1017, -0.1410,  0.1740])"
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// The wrapper with its heads reordered gives the same head blocks, reordered:
    /// block `i` of the new output is block `order[i]` of the old one.
    #[test]
    fn exercise_wrapper_forward_permuting_heads_permutes_blocks(order in permutation(), seed in 0u64..1000) {
        manual_seed(seed);
        let (d_in, d_out, n) = (3, 2, 5);
        let mha = MultiHeadAttentionWrapper::new(d_in, d_out, n, 0.0, order.len(), true);
        let x = rand(&[2, n, d_in]);
        let out = mha.forward(&x);
        prop_assert_eq!(out.shape(), [2, n, order.len() * d_out]);
        let heads: Vec<CausalAttention> = order.iter().map(|&i| mha.heads[i].clone()).collect();
        let permuted = MultiHeadAttentionWrapper { heads }.forward(&x);
        for (i, &from) in order.iter().enumerate() {
            prop_assert_eq!(
                permuted.narrow(-1, i * d_out, d_out),
                out.narrow(-1, from * d_out, d_out)
            );
        }
    }

    /// Every head is causal, so the wrapper is: changing token `later` leaves the outputs
    /// of the tokens before it unchanged.
    #[test]
    fn exercise_wrapper_forward_is_causal(later in 1usize..6, seed in 0u64..1000) {
        manual_seed(seed);
        let mha = MultiHeadAttentionWrapper::new(3, 2, 6, 0.0, 3, false);
        let x = rand(&[1, 6, 3]);
        let mut changed = x.clone();
        changed.set(&[0, later, 0], 5.0);
        let (out, out_changed) = (mha.forward(&x), mha.forward(&changed));
        prop_assert_eq!(out_changed.narrow(1, 0, later), out.narrow(1, 0, later));
        prop_assert_ne!(out_changed.narrow(1, later, 1), out.narrow(1, later, 1));
    }
}

/// Raschka's article's embedded sentence, `[6, 16]`.
fn embedded_sentence() -> Tensor {
    let vocab = vocabulary(LIFE_IS_SHORT);
    manual_seed(123);
    let embed = Embedding::new(6, 16);
    lookup(&embed.weight, &token_ids(LIFE_IS_SHORT, &vocab))
}

#[test]
fn exercise_project_heads() {
    manual_seed(0);
    let w = rand(&[3, 4, 16]);
    let x = embedded_sentence();
    let keys = project_heads(&w, &x);
    assert_eq!(keys.shape(), [3, 6, 4]);
    // Head i's keys are x·w[i]ᵀ: one row per token.
    for i in 0..3 {
        assert!(close(&keys.get(i), &x.matmul(&w.get(i).t()), RTOL, ATOL));
    }
}

proptest! {
    #![proptest_config(quiet(32))]

    /// For any sizes, head `i` of the result is `x·w[i]ᵀ`.
    #[test]
    fn exercise_project_heads_one_product_per_head(heads in 1usize..4, tokens in 1usize..6, seed in 0u64..1000) {
        manual_seed(seed);
        let (w, x) = (rand(&[heads, 3, 5]), rand(&[tokens, 5]));
        let projected = project_heads(&w, &x);
        prop_assert_eq!(projected.shape(), [heads, tokens, 3]);
        for i in 0..heads as i64 {
            prop_assert!(close(&projected.get(i), &x.matmul(&w.get(i).t()), RTOL, ATOL));
        }
    }
}

#[test]
fn exercise_head_contexts() {
    // The chapter's numbers: after the single-head weights, three heads' weights by rand.
    let x = embedded_sentence();
    manual_seed(123);
    for rows in [24, 24, 28] {
        rand(&[rows, 16]);
    }
    let (w_query, w_key, w_value) =
        (rand(&[3, 24, 16]), rand(&[3, 24, 16]), rand(&[3, 28, 16]));
    let queries = w_query.matmul(&x.get(1));
    let keys = x.matmul(&w_key.transpose(1, 2));
    let values = x.matmul(&w_value.transpose(1, 2));
    let contexts = head_contexts(&queries, &keys, &values);
    assert_eq!(contexts.shape(), [3, 28]);
    assert!(
        contexts
            .get(2)
            .to_string()
            .starts_with("tensor([-1.2281,  0.3275,  0.5133, -1.0508, -0.0388,")
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Heads are independent (reordering them reorders the rows), the weights sum to 1 (a
    /// head whose value rows are all the same vector returns that vector), and the tokens
    /// are a set (shuffling keys and values together changes nothing).
    #[test]
    fn exercise_head_contexts_per_head(order in permutation(), seed in 0u64..1000) {
        manual_seed(seed);
        let (h, tokens) = (order.len(), 4);
        let queries = rand(&[h, 3]);
        let keys = rand(&[h, tokens, 3]);
        let values = rand(&[h, tokens, 2]);
        let contexts = head_contexts(&queries, &keys, &values);
        prop_assert_eq!(contexts.shape(), [h, 2]);

        let reordered = head_contexts(
            &reorder(&queries, &order),
            &reorder(&keys, &order),
            &reorder(&values, &order),
        );
        prop_assert!(close(&reordered, &reorder(&contexts, &order), RTOL, ATOL));

        let same_values = values.narrow(1, 0, 1).repeat(&[1, tokens, 1]);
        let constant = head_contexts(&queries, &keys, &same_values);
        prop_assert!(close(&constant, &values.narrow(1, 0, 1).squeeze_dim(1), RTOL, ATOL));

        let shuffle = [2usize, 0, 3, 1];
        let by_token = |t: &Tensor| reorder(&t.transpose(0, 1), &shuffle).transpose(0, 1);
        let shuffled = head_contexts(&queries, &by_token(&keys), &by_token(&values));
        prop_assert!(close(&shuffled, &contexts, RTOL, ATOL));
    }
}

/// Whether two outputs are the same up to rounding, clearly different, or neither (too
/// close to call: the weights of the heads happen to nearly agree).
fn outcome(a: &Tensor, b: &Tensor) -> Option<Outcome> {
    let largest_gap = a
        .to_vec()
        .iter()
        .zip(b.to_vec())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max);
    if close(a, b, RTOL, ATOL) {
        Some(Outcome::Same)
    } else if largest_gap > 1e-3 {
        Some(Outcome::Different)
    } else {
        None
    }
}

/// One head's context vectors for every token (no mask): keys `x·w_keyᵀ` and so on,
/// `softmax(q·kᵀ/√d_k)·v`.
///
/// `x`: `[tokens, d]`, each `w`: `[d_out, d]`. Returns `[tokens, d_out]`.
fn one_head(
    x: &Tensor,
    w_query: &Tensor,
    w_key: &Tensor,
    w_value: &Tensor,
) -> Tensor {
    let (q, k, v) = (
        x.matmul(&w_query.t()),
        x.matmul(&w_key.t()),
        x.matmul(&w_value.t()),
    );
    let d_k = k.size(-1) as f32;
    (q.matmul(&k.t()) / d_k.sqrt()).softmax(-1).matmul(&v)
}

/// The outputs of `heads` random heads side by side, and of one big head made of their
/// weights, for random inputs: both `[tokens, heads · d_out]`.
fn heads_and_big_head(heads: usize, d_out: usize, tokens: usize) -> (Tensor, Tensor) {
    let x = randn(&[tokens, 3]);
    // Scores of about unit size: weights neither uniform nor one-hot, where every way of
    // attending looks alike.
    let [w_query, w_key, w_value] = [(); 3].map(|_| &randn(&[heads, d_out, 3]) * 0.5);
    let side_by_side: Vec<Tensor> = (0..heads as i64)
        .map(|h| one_head(&x, &w_query.get(h), &w_key.get(h), &w_value.get(h)))
        .collect();
    let big = one_head(
        &x,
        &one_big_head(&w_query),
        &one_big_head(&w_key),
        &one_big_head(&w_value),
    );
    (shared::cat(&side_by_side, -1), big)
}

#[test]
fn exercise_one_big_head() {
    manual_seed(123);
    let w = rand(&[2, 2, 3]);
    let big = one_big_head(&w);
    assert_eq!(big.shape(), [4, 3]);
    assert_eq!(big.slice(0, ..2), w.get(0));
    assert_eq!(big.slice(0, 2..), w.get(1));
    for heads in [1, 2] {
        let (side_by_side, big) = heads_and_big_head(heads, 2, 6);
        let outcome =
            outcome(&big, &side_by_side).expect("a clear outcome for this seed");
        assert_eq!(predict_one_big_head(heads), outcome, "{heads} heads");
    }
}

proptest! {
    #![proptest_config(quiet(32))]

    /// For random weights, head counts, sizes and inputs: the big head's weights are the
    /// heads' rows in order, and it matches the heads side by side as predicted.
    #[test]
    fn exercise_one_big_head_on_random_heads(
        seed in 0u64..10_000, heads in 1usize..5, d_out in 1usize..4, tokens in 2usize..7,
    ) {
        manual_seed(seed);
        let w = rand(&[heads, d_out, 3]);
        let big = one_big_head(&w);
        prop_assert_eq!(big.shape(), [heads * d_out, 3]);
        for h in 0..heads {
            prop_assert_eq!(big.slice(0, h * d_out..(h + 1) * d_out), w.get(h));
        }
        let (side_by_side, big) = heads_and_big_head(heads, d_out, tokens);
        if let Some(outcome) = outcome(&big, &side_by_side) {
            prop_assert_eq!(predict_one_big_head(heads), outcome);
        }
    }
}
