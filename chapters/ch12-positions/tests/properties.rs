//! Properties of the chapter's claims on random inputs (not exercises):
//! - self-attention without a mask is permutation equivariant: permuting the tokens
//!   permutes the outputs the same way (to rounding: the softmax adds a row in another
//!   order), for random permutations, sizes and weights;
//! - with a causal mask it is not: the first output of the permuted sequence is the first
//!   token's value alone, not the attention of that token over the whole sequence;
//! - interleaved RoPE keeps every pair's length and leaves position 0 unchanged, and its
//!   scores depend only on the distance between query and key.

use ch04_trainable::SelfAttentionV2;
use ch05_causal::CausalAttention;
use ch12_positions::{inverse_permutation, permute_tokens, rope_interleaved};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed, randn};

/// A permutation of `0..n`, shuffled by proptest.
fn permutation(n: usize) -> impl Strategy<Value = Vec<i64>> {
    Just((0..n as i64).collect::<Vec<_>>()).prop_shuffle()
}

proptest! {
    #![proptest_config(quiet(32))]

    #[test]
    fn self_attention_permutes_its_outputs_with_its_inputs(
        (n, order) in (1usize..9).prop_flat_map(|n| (Just(n), permutation(n))),
        seed in 0u64..10_000, d_in in 1usize..6, d_out in 1usize..6,
    ) {
        manual_seed(seed);
        let sa = SelfAttentionV2::new(d_in, d_out, false);
        let x = randn(&[n, d_in]);
        let order = Tensor::from_vec(order, &[n]);
        let out = sa.forward(&x);
        let out_permuted = sa.forward(&permute_tokens(&x, &order));
        prop_assert!(out_permuted.allclose(&permute_tokens(&out, &order), 1e-5, 1e-6, false));
        // And back again: the inverse permutation restores the original order.
        let back = inverse_permutation(&order);
        prop_assert_eq!(permute_tokens(&permute_tokens(&x, &order), &back), x);
    }

    #[test]
    fn a_causal_mask_breaks_the_symmetry(seed in 0u64..10_000, n in 2usize..8) {
        manual_seed(seed);
        let ca = CausalAttention::new(3, 4, n, 0.0, false);
        let x = randn(&[1, n, 3]);
        // Reverse the tokens: the last token now comes first and sees only itself.
        let order = Tensor::from_vec((0..n as i64).rev().collect(), &[n]);
        let out = ca.forward(&x).select(0, 0);
        let out_permuted = ca.forward(&permute_tokens(&x, &order)).select(0, 0);
        let alone = ca.w_value.forward(&x.select(0, 0).get(n as i64 - 1));
        prop_assert!(out_permuted.get(0).allclose(&alone, 1e-5, 1e-6, false));
        prop_assert!(!out_permuted.allclose(&permute_tokens(&out, &order), 1e-5, 1e-6, false));
    }

    #[test]
    fn interleaved_rope_is_a_rotation_by_position(
        seed in 0u64..10_000, half in 1usize..9, m in 0usize..6, n in 0usize..6, s in 1usize..6,
    ) {
        let (d, tokens) = (2 * half, 12i64);
        manual_seed(seed);
        let q = randn(&[d]);
        let k = randn(&[d]);
        let q_at = rope_interleaved(&q.expand(&[tokens, d as i64]), 10000.0);
        let k_at = rope_interleaved(&k.expand(&[tokens, d as i64]), 10000.0);
        prop_assert_eq!(q_at.get(0), q.clone());
        let (before, after) = (q.to_vec(), q_at.get(7).to_vec());
        for i in 0..half {
            let len = |v: &[f32]| (v[2 * i] as f64).hypot(v[2 * i + 1] as f64);
            prop_assert!((len(&before) - len(&after)).abs() <= 1e-6 * len(&before).max(1.0));
        }
        let score = |a: &Tensor, b: &Tensor| -> f64 {
            a.to_vec().iter().zip(b.to_vec()).map(|(x, y)| *x as f64 * y as f64).sum()
        };
        let scale = score(&q, &q).sqrt() * score(&k, &k).sqrt();
        let here = score(&q_at.get(m), &k_at.get(n));
        let shifted = score(&q_at.get(m + s), &k_at.get(n + s));
        prop_assert!((here - shifted).abs() <= 1e-5 * scale, "{} vs {}", here, shifted);
    }
}

proptest! {
    #![proptest_config(quiet(24))]

    /// RoPE at the positions `0, 1, 2, ..` is the chapter's half-split RoPE: the same
    /// angles turned by the same formula (to rounding, should the two take their sines
    /// and cosines in different ways).
    #[test]
    fn rope_at_counted_positions_is_rope_half_split(
        seed in 0u64..10_000, half in 1usize..9, tokens in 1usize..10,
    ) {
        manual_seed(seed);
        let x = randn(&[2, tokens, 2 * half]);
        let positions = shared::arange(0, tokens as i64, 1).float();
        let at = ch12_positions::rope_at(&x, &positions, 10000.0);
        let counted = ch12_positions::rope_half_split(&x, 10000.0);
        prop_assert!(at.allclose(&counted, 1e-5, 1e-6, false), "{} vs {}", at, counted);
    }
}
