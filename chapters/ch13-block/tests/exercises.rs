//! One test per exercise, named after it, so `cargo test -p ch13-block --features exercise
//! NAME` checks just that function. Each checks properties a hard-coded answer cannot
//! satisfy, on random sizes and inputs; the chapter's output tests compare the same
//! functions with PyTorch's numbers.

use ch07_multihead_split::multihead::MultiHeadAttention;
use ch13_block::block::TransformerBlock;
use ch13_block::masked_attention::{attention_weights, safe_attention_weights};
use ch13_block::masks::{decoder_mask, padding_mask};
use ch13_block::parameters::{attention_parameter_count, attention_parameters, count};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::nn::Linear;
use shared::{Tensor, manual_seed, rand, randn, zeros};

/// The element of `t` at a full index.
fn at<E: shared::Element>(t: &Tensor<E>, index: &[usize]) -> E {
    index.iter().fold(t.clone(), |t, &i| t.get(i as i64)).item()
}

/// `Linear` with every weight and bias 0: a sub-layer that adds nothing to the stream.
fn silent(layer: &Linear) -> Linear {
    let weight = zeros(layer.weight.sizes());
    Linear::from_parameters(weight, Some(zeros(&[layer.out_features()])))
}

#[test]
fn exercise_block_forward_adds_both_sub_layers_to_the_stream() {
    manual_seed(7);
    let x = randn(&[2, 5, 8]);
    let block = TransformerBlock::new(8, 2, 5);
    let out = block.forward(&x);
    assert_eq!(out.shape(), [2, 5, 8]);
    let x1 = &x + &block.attn.forward(&block.ln_1.forward(&x));
    let want = &x1 + &block.mlp.forward(&block.ln_2.forward(&x1));
    assert!(
        out == want,
        "forward must be x + attn(ln_1(x)), then + mlp(ln_2(..))"
    );
}

proptest! {
    #![proptest_config(quiet(16))]

    /// With both sub-layers silenced (their last Linear all zeros), the block is the
    /// identity: everything else travels along the residual stream untouched.
    #[test]
    fn exercise_block_forward_keeps_the_stream(
        (b, n, heads, hd) in (1usize..3, 1usize..6, 1usize..3, 1usize..4),
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let d = heads * hd;
        let x = randn(&[b, n, d]);
        let mut block = TransformerBlock::new(d, heads, n);
        block.attn.out_proj = silent(&block.attn.out_proj);
        block.mlp.c_proj = silent(&block.mlp.c_proj);
        prop_assert!(block.forward(&x) == x);
    }

    /// The block stays causal: changing the last token changes no earlier output.
    #[test]
    fn exercise_block_forward_never_looks_ahead(n in 2usize..6, seed in 0u64..1000) {
        manual_seed(seed);
        let x = randn(&[1, n, 4]);
        let block = TransformerBlock::new(4, 2, n);
        let mut changed = x.clone();
        changed.set(&[0, n - 1, 0], 5.0);
        let (a, b) = (block.forward(&x), block.forward(&changed));
        prop_assert!(a.slice(1, ..n - 1) == b.slice(1, ..n - 1));
        prop_assert!(a != b);
    }
}

#[test]
fn exercise_decoder_mask_hides_the_future_and_the_padding() {
    let pad = padding_mask(&Tensor::from_vec(vec![3i64, 2], &[2]), 3);
    let hidden = decoder_mask(&pad);
    assert_eq!(hidden.shape(), [2, 1, 3, 3]);
    let (t, f) = (true, false);
    #[rustfmt::skip]
    let want = vec![
        f, t, t,  f, f, t,  f, f, f,
        f, t, t,  f, f, t,  f, f, t,
    ];
    assert_eq!(hidden.to_vec(), want);
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Key `j` is hidden from query `i` of sequence `s` exactly when `j > i` or `j` is at
    /// or past that sequence's length.
    #[test]
    fn exercise_decoder_mask_for_any_lengths(
        lengths in prop::collection::vec(0i64..6, 1..4),
        extra in 0usize..2,
    ) {
        let tokens = *lengths.iter().max().expect("one length") as usize + extra;
        let b = lengths.len();
        let pad = padding_mask(&Tensor::from_vec(lengths.clone(), &[b]), tokens);
        let hidden = decoder_mask(&pad);
        prop_assert_eq!(hidden.shape(), [b, 1, tokens, tokens]);
        for (s, &len) in lengths.iter().enumerate() {
            for i in 0..tokens {
                for j in 0..tokens {
                    let want = j > i || j as i64 >= len;
                    prop_assert_eq!(at(&hidden, &[s, 0, i, j]), want, "seq {} ({}, {})", s, i, j);
                }
            }
        }
    }

    /// No NaN anywhere; a query that sees no key gets zeros; every other row is exactly the
    /// plain masked softmax, sums to 1 and puts 0 on the hidden keys.
    #[test]
    fn exercise_safe_attention_weights_never_gives_nan(
        (q_len, k_len, d) in (1usize..5, 1usize..6, 1usize..5),
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let q = randn(&[2, q_len, d]);
        let k = randn(&[2, k_len, d]);
        // About one key in two hidden, so whole rows are often hidden.
        let hidden = rand(&[2, q_len, k_len]).lt_scalar(0.5);
        let safe = safe_attention_weights(&q, &k, &hidden);
        let plain = attention_weights(&q, &k, &hidden, f32::NEG_INFINITY);
        prop_assert_eq!(safe.shape(), [2, q_len, k_len]);
        for s in 0..2 {
            for i in 0..q_len {
                let row: Vec<f32> = safe.get(s as i64).get(i as i64).to_vec();
                let hides: Vec<bool> = hidden.get(s as i64).get(i as i64).to_vec();
                prop_assert!(row.iter().all(|w| w.is_finite()), "NaN in row {:?}", row);
                if hides.iter().all(|&h| h) {
                    prop_assert!(row.iter().all(|&w| w == 0.0), "fully hidden: {:?}", row);
                } else {
                    let plain_row: Vec<f32> = plain.get(s as i64).get(i as i64).to_vec();
                    prop_assert_eq!(&row, &plain_row);
                    let sum: f32 = row.iter().sum();
                    prop_assert!((sum - 1.0).abs() < 1e-5);
                }
            }
        }
    }
}

#[test]
fn exercise_attention_parameter_count_of_gpt2_small() {
    assert_eq!(attention_parameter_count(768, true), 2_362_368);
    assert_eq!(attention_parameter_count(768, false), 2_362_368 - 3 * 768);
}

proptest! {
    #![proptest_config(quiet(24))]

    /// The formula counts what the module holds, for any width, heads and biases.
    #[test]
    fn exercise_attention_parameter_count_matches_the_module(
        heads in 1usize..5,
        head_dim in 1usize..9,
        qkv_bias: bool,
    ) {
        let d = heads * head_dim;
        let attn = MultiHeadAttention::new(d, d, 4, 0.0, heads, qkv_bias);
        prop_assert_eq!(attention_parameter_count(d, qkv_bias), count(&attention_parameters(&attn)));
    }
}
