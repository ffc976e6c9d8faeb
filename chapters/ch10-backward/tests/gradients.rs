//! The hand-written backward passes against central differences, over random shapes, head
//! counts, masks and dropout, and the causal property of the gradients.

mod common;

use ch07_multihead_split::multihead::MultiHeadAttention;
use ch10_backward::causal::{causal_backward, causal_forward};
use ch10_backward::multihead::{multihead_backward, multihead_forward};
use common::{check_attention_core, check_gradient, weighted_sum};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::nn::{Dropout, Linear};
use shared::{Tensor, manual_seed, rand, randn};

/// A random hiding mask that leaves every query its own key (so no row is fully masked).
fn random_hidden(n: usize) -> Tensor<bool> {
    let coins = rand(&[n, n]).to_vec();
    let hidden = (0..n * n)
        .map(|i| i / n != i % n && coins[i] < 0.5)
        .collect();
    Tensor::from_vec(hidden, &[n, n])
}

proptest! {
    #![proptest_config(quiet(24))]

    /// The attention core with any mask and dropout: gradients of queries, keys, values.
    #[test]
    fn attention_core_matches_central_differences(
        (b, n, d_k, d_v) in (1usize..3, 1usize..6, 1usize..5, 1usize..4),
        p in prop::sample::select(vec![0.0, 0.3]),
        seed in 0u64..10_000,
    ) {
        manual_seed(seed);
        let (q, k, v) = (randn(&[b, n, d_k]), randn(&[b, n, d_k]), randn(&[b, n, d_v]));
        let hidden = random_hidden(n);
        let r = randn(&[b, n, d_v]);
        check_attention_core((&q, &k, &v), &hidden, &r, &Dropout::new(p), seed + 1)
            .map_err(TestCaseError::fail)?;
    }

    /// The whole `MultiHeadAttention`: every projection's weight (and `out_proj`'s bias)
    /// and the input.
    #[test]
    fn multihead_matches_central_differences(
        (b, n, d_in, heads, head_dim) in (1usize..3, 1usize..6, 1usize..4, 1usize..4, 1usize..3),
        qkv_bias in any::<bool>(),
        seed in 0u64..10_000,
    ) {
        manual_seed(seed);
        let mut mha = MultiHeadAttention::new(d_in, heads * head_dim, n, 0.0, heads, qkv_bias);
        let x = randn(&[b, n, d_in]);
        let r = randn(&[b, n, heads * head_dim]);
        let (_, tape) = multihead_forward(&mha, &x);
        let grads = multihead_backward(&mha, &tape, &r);
        check_gradient("input", &x, &grads.input, |x| {
            weighted_sum(&multihead_forward(&mha, x).0, &r)
        })
        .map_err(TestCaseError::fail)?;
        let layers: [(&str, LayerOf, _); 4] = [
            ("W_query", |m| &mut m.w_query, &grads.w_query),
            ("W_key", |m| &mut m.w_key, &grads.w_key),
            ("W_value", |m| &mut m.w_value, &grads.w_value),
            ("out_proj", |m| &mut m.out_proj, &grads.out_proj),
        ];
        for (name, layer, grad) in layers {
            let weight = layer(&mut mha).weight.clone();
            let loss = |w: &Tensor| {
                let mut m = MultiHeadAttention::new(d_in, heads * head_dim, n, 0.0, heads, qkv_bias);
                copy_parameters(&mha, &mut m);
                layer(&mut m).weight = w.clone();
                weighted_sum(&multihead_forward(&m, &x).0, &r)
            };
            check_gradient(name, &weight, &grad.weight, loss).map_err(TestCaseError::fail)?;
            if let (Some(bias), Some(grad_bias)) = (layer(&mut mha).bias.clone(), &grad.bias) {
                let loss = |bias: &Tensor| {
                    let mut m =
                        MultiHeadAttention::new(d_in, heads * head_dim, n, 0.0, heads, qkv_bias);
                    copy_parameters(&mha, &mut m);
                    layer(&mut m).bias = Some(bias.clone());
                    weighted_sum(&multihead_forward(&m, &x).0, &r)
                };
                check_gradient(name, &bias, grad_bias, loss).map_err(TestCaseError::fail)?;
            }
        }
    }

    /// A loss on the outputs of tokens before `t` sends no gradient to tokens `t, t+1, ..`:
    /// exactly zero, in both modules, with or without dropout.
    #[test]
    fn later_tokens_get_no_gradient_from_earlier_outputs(
        (b, n, d_in, heads) in (1usize..3, 2usize..7, 1usize..4, 1usize..3),
        p in prop::sample::select(vec![0.0, 0.5]),
        seed in 0u64..10_000,
    ) {
        manual_seed(seed);
        let t = 1 + seed as usize % (n - 1); // 1 ..= n-1
        let x = randn(&[b, n, d_in]);
        let keep: Vec<f32> = (0..b * n * 2 * heads)
            .map(|i| if (i / (2 * heads)) % n < t { 1.0 } else { 0.0 })
            .collect();
        let r = randn(&[b, n, 2 * heads]) * &Tensor::from_vec(keep, &[b, n, 2 * heads]);

        let mha = MultiHeadAttention::new(d_in, 2 * heads, n, p, heads, false);
        let (_, tape) = multihead_forward(&mha, &x);
        let from_mha = multihead_backward(&mha, &tape, &r).input;
        let ca = ch05_causal::CausalAttention::new(d_in, 2 * heads, n, p, false);
        let (_, tape) = causal_forward(&ca, &x);
        let from_causal = causal_backward(&ca, &tape, &r).input;
        for grad in [from_mha, from_causal] {
            let values = grad.to_vec();
            for (i, g) in values.iter().enumerate() {
                if (i / d_in) % n >= t {
                    prop_assert_eq!(*g, 0.0, "token {} of {}, loss on tokens < {}", (i / d_in) % n, n, t);
                }
            }
        }
    }
}

/// Picks one of the module's layers.
type LayerOf = fn(&mut MultiHeadAttention) -> &mut Linear;

/// Copies every parameter of `from` into `to` (same sizes).
fn copy_parameters(from: &MultiHeadAttention, to: &mut MultiHeadAttention) {
    to.w_query = from.w_query.clone();
    to.w_key = from.w_key.clone();
    to.w_value = from.w_value.clone();
    to.out_proj = from.out_proj.clone();
}
