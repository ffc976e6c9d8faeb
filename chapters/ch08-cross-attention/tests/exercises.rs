//! One test per exercise, named after it, so `cargo test -p ch08-cross-attention --features
//! exercise NAME` checks just that function. Each compares with PyTorch's numbers (through
//! the reference output) and checks properties a hard-coded answer cannot satisfy.

use ch01_embeddings::inputs::LIFE_IS_SHORT;
use ch01_embeddings::lookup::lookup;
use ch01_embeddings::vocabulary::{token_ids, vocabulary};
use ch07_multihead_split::heads::split_heads;
use ch07_multihead_split::qkv::MultiHeadAttentionQkv;
use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use ch08_cross_attention::answers::Change;
use ch08_cross_attention::cross::cross_attention;
use ch08_cross_attention::padding::{key_padding, padding_mask};
use ch08_cross_attention::shuffle::{predict_shuffled_other, shuffle_tokens};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::nn::Embedding;
use shared::testing::close;
use shared::{Tensor, manual_seed, rand, stack};

/// Equal up to float32 rounding (the two sides add in different orders):
/// `|got - want| <= ATOL + RTOL·|want|` everywhere.
const RTOL: f64 = 1e-4;
const ATOL: f64 = 1e-5;

#[test]
fn exercise_cross_attention() {
    // Raschka's article's numbers, as PyTorch printed them (reference/expected/ch08-cross-attention.txt).
    let vocab = vocabulary(LIFE_IS_SHORT);
    manual_seed(123);
    let embed = Embedding::new(6, 16);
    let embedded_sentence = lookup(&embed.weight, &token_ids(LIFE_IS_SHORT, &vocab));
    manual_seed(123);
    let w_query = rand(&[24, 16]);
    let w_key = rand(&[24, 16]);
    let w_value = rand(&[28, 16]);
    let query_2 = w_query.matmul(&embedded_sentence.get(1));
    let embedded_sentence_2 = rand(&[8, 16]);
    let (weights, context) =
        cross_attention(&query_2, &embedded_sentence_2, &w_key, &w_value);
    assert_eq!(
        weights.to_string(),
        "tensor([0.1027, 0.1024, 0.0986, 0.1038, 0.1400, 0.0904, 0.1580, 0.2041])"
    );
    assert_eq!(context.shape(), [28]);
    assert!(context.to_string().ends_with("3.8260,\n        3.3416])"));
}

/// A permutation of `0..m` for a random `m` in `1..8`.
fn permutation() -> impl Strategy<Value = Vec<usize>> {
    (1usize..8).prop_flat_map(|m| Just((0..m).collect::<Vec<usize>>()).prop_shuffle())
}

/// The rows of `x` in the order `order`.
fn rows(x: &Tensor, order: &[usize]) -> Tensor {
    let picked: Vec<Tensor> = order.iter().map(|&i| x.get(i)).collect();
    stack(&picked, 0)
}

proptest! {
    #![proptest_config(quiet(32))]

    /// The weights are a distribution over the other sequence, whatever its length, and
    /// the other sequence is a set: shuffling its tokens shuffles the weights the same way
    /// and leaves the context vector unchanged.
    #[test]
    fn exercise_cross_attention_over_any_other_sequence(order in permutation(), seed in 0u64..1000) {
        manual_seed(seed);
        let m = order.len();
        let (w_key, w_value) = (rand(&[4, 5]), rand(&[3, 5]));
        let query = rand(&[4]);
        let other = rand(&[m, 5]);
        let (weights, context) = cross_attention(&query, &other, &w_key, &w_value);
        prop_assert_eq!(weights.shape(), [m]);
        prop_assert_eq!(context.shape(), [3]);
        prop_assert!((weights.sum().item() - 1.0).abs() < 1e-5);
        let (shuffled_weights, shuffled_context) =
            cross_attention(&query, &rows(&other, &order), &w_key, &w_value);
        prop_assert!(close(&shuffled_weights, &rows(&weights, &order), RTOL, ATOL));
        prop_assert!(close(&shuffled_context, &context, RTOL, ATOL));
    }
}

#[test]
fn exercise_key_padding() {
    assert_eq!(
        key_padding(&[5, 3], 5).to_string(),
        "tensor([[1, 1, 1, 1, 1],\n        [1, 1, 1, 0, 0]])"
    );
    assert_eq!(key_padding(&[0, 2, 1], 2).to_vec(), vec![0, 0, 1, 1, 1, 0]);
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Every row starts with `length` ones and ends with zeros.
    #[test]
    fn exercise_key_padding_marks_the_real_tokens(lengths in proptest::collection::vec(0usize..=6, 1..5)) {
        let padding = key_padding(&lengths, 6);
        prop_assert_eq!(padding.shape(), [lengths.len(), 6]);
        for (row, &len) in lengths.iter().enumerate() {
            let expected: Vec<i64> = (0..6).map(|pos| i64::from(pos < len)).collect();
            prop_assert_eq!(padding.get(row).to_vec(), expected);
        }
    }
}

#[test]
fn exercise_padding_mask() {
    let padding = Tensor::from_vec(vec![1, 1, 1, 1, 1, 1, 1, 1, 0, 0], &[2, 5]);
    let mask = padding_mask(&padding);
    assert_eq!(mask.shape(), [2, 1, 1, 5]);
    assert_eq!(
        mask.to_vec(),
        vec![true, true, true, true, true, true, true, true, false, false]
    );
}

/// A batch of 2 sequences of 5 keys, the second with only `real` real tokens; returns the
/// 0/1 key padding tensor (written out, so this test needs no other exercise).
fn two_sequences(real: usize) -> Tensor<i64> {
    let flags = (0..10).map(|i| i64::from(i < 5 || i - 5 < real)).collect();
    Tensor::from_vec(flags, &[2, 5])
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Padded keys get exactly zero weight in every head and for every query, each row of
    /// weights still sums to 1, and whatever the padded rows hold cannot change the output.
    #[test]
    fn exercise_padding_mask_hides_the_padding(real in 1usize..=5, junk in -5.0f32..5.0, seed in 0u64..1000) {
        manual_seed(seed);
        let cross_attn = MultiHeadAttentionQkv::new(4, 2);
        let x_dec = rand(&[2, 3, 4]);
        let x_enc = rand(&[2, 5, 4]);
        let padding = two_sequences(real);
        let mask = padding_mask(&padding);

        let q = split_heads(&cross_attn.w_q.forward(&x_dec), 2);
        let k = split_heads(&cross_attn.w_k.forward(&x_enc), 2);
        let v = split_heads(&cross_attn.w_v.forward(&x_enc), 2);
        let (_, weights) = scaled_dot_product_attention(&q, &k, &v, Some(&mask));
        for row in weights.sum_dim(-1, false).to_vec() {
            prop_assert!((row - 1.0).abs() < 1e-5);
        }
        for pad in real..5 {
            let padded_key = weights.get(1).select(-1, pad as i64);
            prop_assert!(padded_key.to_vec().iter().all(|&w| w == 0.0));
        }

        let padded_rows = padding.eq_scalar(0).unsqueeze(-1);
        let x_enc_junk = x_enc.masked_fill(&padded_rows, junk);
        let out = cross_attn.forward(&x_dec, &x_enc, &x_enc, Some(&mask));
        let out_junk = cross_attn.forward(&x_dec, &x_enc_junk, &x_enc_junk, Some(&mask));
        prop_assert!(close(&out, &out_junk, RTOL, ATOL));
    }
}

/// The chapter's one-query cross-attention, written out (so that this test does not need
/// the `cross_attention` exercise): `(weights [m], context [d_v])`.
fn attend(
    query: &Tensor,
    other: &Tensor,
    w_key: &Tensor,
    w_value: &Tensor,
) -> (Tensor, Tensor) {
    let keys = other.matmul(&w_key.t());
    let values = other.matmul(&w_value.t());
    let d_k = keys.size(-1) as f32;
    let weights = (query.matmul(&keys.t()) / d_k.sqrt()).softmax(0);
    let context = weights.matmul(&values);
    (weights, context)
}

/// Which `Change` turns `before` into `after`, for a shuffle by `order`.
fn change(before: &Tensor, after: &Tensor, order: &[usize]) -> Change {
    if close(after, before, RTOL, ATOL) {
        Change::Unchanged
    } else if before.size(0) == order.len()
        && close(after, &shuffle_by_hand(before, order), RTOL, ATOL)
    {
        Change::ShuffledLikeTheTokens
    } else {
        Change::Different
    }
}

/// `x[order[i]]` for every `i`, along dim 0, by indexing the numbers.
fn shuffle_by_hand(x: &Tensor, order: &[usize]) -> Tensor {
    let row = x.numel() / x.size(0);
    let values = x.to_vec();
    let picked = order
        .iter()
        .flat_map(|&i| values[i * row..(i + 1) * row].to_vec())
        .collect();
    Tensor::from_vec(picked, x.sizes())
}

#[test]
fn exercise_shuffle_tokens() {
    // Raschka's article's query and second sentence, the sentence reversed.
    manual_seed(123);
    let w_query = rand(&[24, 16]);
    let w_key = rand(&[24, 16]);
    let w_value = rand(&[28, 16]);
    let query = w_query.matmul(&rand(&[16]));
    let other = rand(&[8, 16]);
    let order: Vec<usize> = (0..8).rev().collect();
    let shuffled = shuffle_tokens(&other, &order);
    assert_eq!(shuffled, shuffle_by_hand(&other, &order));
    let (weights, context) = attend(&query, &other, &w_key, &w_value);
    let (weights_after, context_after) = attend(&query, &shuffled, &w_key, &w_value);
    assert_eq!(
        predict_shuffled_other(),
        (
            change(&weights, &weights_after, &order),
            change(&context, &context_after, &order)
        )
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// For random sequences, weights and shuffles (not the identity): the shuffled rows are
    /// the right ones, and the weights and the context change as predicted.
    #[test]
    fn exercise_shuffle_tokens_any_order(
        seed in 0u64..10_000,
        order in (2usize..8).prop_flat_map(|m| Just((0..m).collect::<Vec<usize>>()).prop_shuffle()),
        d in 1usize..5, d_k in 1usize..5, d_v in 2usize..5,
    ) {
        prop_assume!(order.iter().enumerate().any(|(i, &j)| i != j));
        manual_seed(seed);
        let m = order.len();
        let other = &rand(&[m, d]) * 4.0;
        let (w_key, w_value) = (&rand(&[d_k, d]) - 0.5, &rand(&[d_v, d]) - 0.5);
        let query = &rand(&[d_k]) * 4.0;
        let shuffled = shuffle_tokens(&other, &order);
        prop_assert_eq!(&shuffled, &shuffle_by_hand(&other, &order));
        let (weights, context) = attend(&query, &other, &w_key, &w_value);
        let (weights_after, context_after) = attend(&query, &shuffled, &w_key, &w_value);
        let (on_weights, on_context) = predict_shuffled_other();
        // Weights that happen to be equal would look unchanged as well as shuffled.
        if change(&weights, &weights_after, &order) != Change::Unchanged {
            prop_assert_eq!(on_weights, change(&weights, &weights_after, &order));
        }
        prop_assert_eq!(on_context, change(&context, &context_after, &order));
    }
}
