//! One test per exercise, named after it, so `cargo test -p ch13-block --features exercise
//! NAME` checks just that function. Each checks properties a hard-coded answer cannot
//! satisfy, on random sizes and inputs; the chapter's output tests compare the same
//! functions with PyTorch's numbers.

use ch07_multihead_split::multihead::MultiHeadAttention;
use ch13_block::block::TransformerBlock;
use ch13_block::depth::{NormPlacement, input_gradient, stack_forward};
use ch13_block::masked_attention::{attention_weights, safe_attention_weights};
use ch13_block::masks::{decoder_mask, padding_mask};
use ch13_block::parameters::{
    GPT2_SMALL, ModelShape, attention_parameter_count, attention_parameters, count,
    model_parameter_count,
};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::nn::{Embedding, LayerNorm, Linear};
use shared::{Tensor, manual_seed, rand, randn, zeros};

/// The element of `t` at a full index.
fn at<E: shared::Element>(t: &Tensor<E>, index: &[usize]) -> E {
    index.iter().fold(t.clone(), |t, &i| t.get(i)).item()
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
                let row: Vec<f32> = safe.get(s).get(i).to_vec();
                let hides: Vec<bool> = hidden.get(s).get(i).to_vec();
                prop_assert!(row.iter().all(|w| w.is_finite()), "NaN in row {:?}", row);
                if hides.iter().all(|&h| h) {
                    prop_assert!(row.iter().all(|&w| w == 0.0), "fully hidden: {:?}", row);
                } else {
                    let plain_row: Vec<f32> = plain.get(s).get(i).to_vec();
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

#[test]
fn exercise_model_parameter_count_of_gpt2_small_and_medium() {
    // The counts of Hugging Face's `gpt2` and `gpt2-medium`, from their checkpoints.
    assert_eq!(model_parameter_count(&GPT2_SMALL), 124_439_808);
    let medium = ModelShape {
        d_model: 1024,
        n_layers: 24,
        ..GPT2_SMALL
    };
    assert_eq!(model_parameter_count(&medium), 354_823_168);
}

/// Every parameter of a model of shape `m`, built from the modules themselves.
fn built_parameters(m: &ModelShape) -> usize {
    let d = m.d_model;
    let layer_norm = || LayerNorm::with_options(&[d], 1e-5, true, m.bias);
    let mut tensors = vec![
        Embedding::new(m.vocab_size, d).weight,
        Embedding::new(m.context_length, d).weight,
    ];
    let mut linears = Vec::new();
    let mut norms = vec![layer_norm()]; // the final one
    for _ in 0..m.n_layers {
        norms.extend([layer_norm(), layer_norm()]);
        for (d_in, d_out) in [(d, d), (d, d), (d, d), (d, d), (d, 4 * d), (4 * d, d)]
        {
            linears.push(Linear::new(d_in, d_out, m.bias));
        }
    }
    if !m.tied_output {
        linears.push(Linear::new(d, m.vocab_size, false));
    }
    for layer in linears {
        tensors.extend(std::iter::once(layer.weight).chain(layer.bias));
    }
    for norm in norms {
        tensors.extend(norm.weight.into_iter().chain(norm.bias));
    }
    tensors.iter().map(Tensor::numel).sum()
}

proptest! {
    #![proptest_config(quiet(24))]

    /// The count equals the parameters of the modules themselves, for any sizes, with and
    /// without biases, tied or untied.
    #[test]
    fn exercise_model_parameter_count_matches_the_modules(
        vocab_size in 1usize..40, context_length in 1usize..20, d_model in 1usize..12,
        n_layers in 0usize..4, bias: bool, tied_output: bool,
    ) {
        let m = ModelShape { vocab_size, context_length, d_model, n_layers, bias, tied_output };
        prop_assert_eq!(model_parameter_count(&m), built_parameters(&m) as u64);
    }
}

/// `√(Σ x²)`.
fn norm(t: &Tensor) -> f64 {
    t.to_vec()
        .iter()
        .map(|v| f64::from(*v).powi(2))
        .sum::<f64>()
        .sqrt()
}

proptest! {
    #![proptest_config(quiet(8))]

    /// The gradient of a random stack: a step along any direction `v` changes the loss by
    /// the gradient times `v` (to first order); with no block it is the probe itself.
    #[test]
    fn exercise_input_gradient_predicts_the_change_of_the_loss(
        seed in 0u64..1000, layers in 0usize..3,
        placement in prop_oneof![Just(NormPlacement::PreNorm), Just(NormPlacement::PostNorm)],
    ) {
        manual_seed(seed);
        let blocks: Vec<_> = (0..layers).map(|_| TransformerBlock::new(4, 2, 3)).collect();
        let (x, probe, v) = (randn(&[1, 3, 4]), randn(&[1, 3, 4]), randn(&[1, 3, 4]));
        let gradient = input_gradient(&blocks, &x, &probe, placement);
        prop_assert_eq!(gradient.shape(), x.shape());
        if layers == 0 {
            prop_assert!(gradient.allclose(&probe, 1e-3, 1e-3, false), "{} vs {}", gradient, probe);
        }
        let loss = |x: &Tensor| -> f64 {
            let out = stack_forward(&blocks, x, placement).to_vec();
            out.iter().zip(probe.to_vec()).map(|(o, p)| f64::from(*o) * f64::from(p)).sum()
        };
        let h = 1e-2f32;
        let along = (loss(&(&x + &(&v * h))) - loss(&(&x - &(&v * h)))) / (2.0 * f64::from(h));
        let predicted: f64 = gradient.to_vec().iter().zip(v.to_vec())
            .map(|(g, v)| f64::from(*g) * f64::from(v)).sum();
        let size = norm(&gradient) * norm(&v);
        prop_assert!((along - predicted).abs() <= 2e-2 * size.max(1.0), "{} vs {}", along, predicted);
    }
}

/// The experiment: 12 random blocks of 16 features, one loss, the gradient at the input
/// with the layer norms before (GPT-2) or after (the original Transformer) each sub-layer.
/// Run it with `-- --nocapture` to see the norms.
#[test]
fn exercise_input_gradient_pre_and_post_norm_at_depth_12() {
    for seed in 0..2 {
        manual_seed(seed);
        let blocks: Vec<_> =
            (0..12).map(|_| TransformerBlock::new(16, 2, 4)).collect();
        let (x, probe) = (randn(&[1, 4, 16]), randn(&[1, 4, 16]));
        let pre = norm(&input_gradient(&blocks, &x, &probe, NormPlacement::PreNorm));
        let post = norm(&input_gradient(
            &blocks,
            &x,
            &probe,
            NormPlacement::PostNorm,
        ));
        println!(
            "seed {seed}: |probe| {:.2}, pre-norm {pre:.2}, post-norm {post:.2}",
            norm(&probe)
        );
        assert!(
            pre > post,
            "seed {seed}: pre-norm {pre} <= post-norm {post}"
        );
    }
}
