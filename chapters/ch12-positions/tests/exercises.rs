//! One test per exercise, named after it, so `cargo test -p ch12-positions --features
//! exercise NAME` checks just that exercise. Each compares with the text PyTorch printed
//! (`reference/expected/ch12-positions.txt`) where the chapter prints the function's result,
//! and checks properties on random inputs that a hard-coded answer cannot satisfy: every
//! (sin, cos) pair lies on the unit circle, rotating twice by 90 degrees negates, RoPE keeps
//! lengths and makes scores depend only on the distance, and the two conventions agree
//! after the reordering of features the last exercise asks for.

use ch07_multihead_split::heads::split_heads;
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch12_positions::{
    half_split_features, interpolated_offset, inv_freq, inverse_permutation,
    rope_angles, rope_at, rope_attention_scores, rope_half_split, rope_interleaved,
    rotate_half, sinusoidal_encoding,
};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, arange, manual_seed, randn, tensor};

const PYTORCH: &str = include_str!("../../../reference/expected/ch12-positions.txt");

/// The text PyTorch printed under `## title` in this chapter's reference output.
fn pytorch_step(title: &str) -> &'static str {
    course::narrative::step_text(PYTORCH, title)
        .expect("the step is in the reference")
}

/// The dot product of row `m` of `a` with row `n` of `b`, summed in `f64`.
fn dot(a: &Tensor, m: usize, b: &Tensor, n: usize) -> f64 {
    let (a, b) = (a.get(m).to_vec(), b.get(n).to_vec());
    a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum()
}

#[test]
fn exercise_sinusoidal_encoding() {
    let printed = format!(
        "inv_freq: {}\n{}",
        inv_freq(6, 10000.0),
        sinusoidal_encoding(6, 6)
    );
    assert_eq!(
        printed,
        pytorch_step("Sinusoidal position encodings (6 positions, d = 6)")
    );
}

proptest! {
    #![proptest_config(quiet(24))]

    /// For any size: the even features are the sines and the odd ones the cosines of
    /// `pos·θ_i` (bit for bit), and moving `k` positions on turns every pair by `k·θ_i`.
    #[test]
    fn exercise_sinusoidal_encoding_pairs_turn_with_the_position(
        positions in 2usize..20, half in 1usize..8, k in 1usize..5,
    ) {
        let d = 2 * half;
        let pe = sinusoidal_encoding(positions, d);
        prop_assert_eq!(pe.shape(), [positions, d]);
        let angles = rope_angles(positions, d, 10000.0);
        let (sin, cos) = (angles.sin().to_vec(), angles.cos().to_vec());
        let theta = inv_freq(d, 10000.0).to_vec();
        let pe = pe.to_vec();
        for pos in 0..positions {
            for i in 0..half {
                prop_assert_eq!(pe[pos * d + 2 * i], sin[pos * half + i]);
                prop_assert_eq!(pe[pos * d + 2 * i + 1], cos[pos * half + i]);
                if pos + k < positions {
                    // (sin, cos) at pos + k = the pair at pos turned by k·θ_i.
                    let (s, c) = (pe[pos * d + 2 * i] as f64, pe[pos * d + 2 * i + 1] as f64);
                    let phi = k as f64 * theta[i] as f64;
                    let (s_k, c_k) = (pe[(pos + k) * d + 2 * i], pe[(pos + k) * d + 2 * i + 1]);
                    prop_assert!((s * phi.cos() + c * phi.sin() - s_k as f64).abs() < 1e-5);
                    prop_assert!((c * phi.cos() - s * phi.sin() - c_k as f64).abs() < 1e-5);
                }
            }
        }
    }
}

#[test]
fn exercise_rotate_half() {
    let x = tensor!([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]);
    assert_eq!(
        rotate_half(&x),
        tensor!([[-3.0, -4.0, 1.0, 2.0], [-7.0, -8.0, 5.0, 6.0]])
    );
}

proptest! {
    #![proptest_config(quiet(24))]

    /// For any shape: two quarter turns negate every feature (exactly), and a quarter turn
    /// is at right angles to `x` in every pair.
    #[test]
    fn exercise_rotate_half_is_a_quarter_turn(
        seed in 0u64..10_000, lead in 1usize..4, half in 1usize..6,
    ) {
        manual_seed(seed);
        let x = randn(&[lead, 3, 2 * half]);
        let r = rotate_half(&x);
        prop_assert_eq!(r.shape(), x.shape());
        prop_assert_eq!(rotate_half(&r), -&x);
        let (xv, rv) = (x.to_vec(), r.to_vec());
        for row in 0..lead * 3 {
            for i in 0..half {
                let at = |v: &[f32], j: usize| v[row * 2 * half + j] as f64;
                let across = at(&xv, i) * at(&rv, i) + at(&xv, i + half) * at(&rv, i + half);
                prop_assert!(across.abs() < 1e-12, "pair {} of row {}: {}", i, row, across);
            }
        }
    }
}

#[test]
fn exercise_rope_half_split() {
    manual_seed(123);
    let x = randn(&[1, 2, 6, 8]);
    assert_eq!(
        rope_half_split(&x, 10000.0).to_string(),
        pytorch_step("RoPE, half-split pairs (Hugging Face's Llama, GPT-NeoX)")
    );
}

proptest! {
    #![proptest_config(quiet(24))]

    /// For random queries and keys: position 0 is left alone, every pair keeps its length,
    /// and the score of a query at `m` with a key at `n` equals the score at `m + s`, `n + s`.
    #[test]
    fn exercise_rope_half_split_scores_depend_on_the_distance(
        seed in 0u64..10_000, half in 1usize..9, m in 0usize..6, n in 0usize..6, s in 1usize..6,
        base in prop_oneof![Just(10000.0f32), Just(500000.0f32), Just(10.0f32)],
    ) {
        let (d, tokens) = (2 * half, 12);
        manual_seed(seed);
        let q = randn(&[d]);
        let k = randn(&[d]);
        let q_at = rope_half_split(&q.expand(&[tokens as i64, d as i64]), base);
        let k_at = rope_half_split(&k.expand(&[tokens as i64, d as i64]), base);
        prop_assert_eq!(q_at.shape(), [tokens, d]);
        prop_assert_eq!(q_at.get(0), q.clone());
        let (qv, rv) = (q.to_vec(), q_at.get(5).to_vec());
        for i in 0..half {
            let before = (qv[i] as f64).hypot(qv[i + half] as f64);
            let after = (rv[i] as f64).hypot(rv[i + half] as f64);
            prop_assert!((before - after).abs() <= 1e-6 * before.max(1.0), "pair {}", i);
        }
        let scale = dot(&q_at, 0, &q_at, 0).sqrt() * dot(&k_at, 0, &k_at, 0).sqrt();
        let here = dot(&q_at, m, &k_at, n);
        let shifted = dot(&q_at, m + s, &k_at, n + s);
        prop_assert!((here - shifted).abs() <= 1e-5 * scale, "{} vs {}", here, shifted);
    }
}

#[test]
fn exercise_half_split_features() {
    assert_eq!(half_split_features(8), tensor!([0i64, 2, 4, 6, 1, 3, 5, 7]));
}

proptest! {
    #![proptest_config(quiet(24))]

    /// For any even size and random input: the order is a permutation of `0..d`, and
    /// interleaved RoPE equals half-split RoPE on the reordered features, moved back.
    #[test]
    fn exercise_half_split_features_make_the_conventions_agree(
        seed in 0u64..10_000, half in 1usize..17, tokens in 1usize..10,
    ) {
        let d = 2 * half;
        let features = half_split_features(d);
        prop_assert_eq!(features.shape(), [d]);
        let back = inverse_permutation(&features); // panics if not a permutation
        manual_seed(seed);
        let x = randn(&[2, tokens, d]);
        let interleaved = rope_interleaved(&x, 10000.0);
        // Half-split RoPE at 0, 1, 2, ..: `rope_at`, so that this test needs only your
        // order of the features.
        let positions = arange(0, tokens as i64, 1).float();
        let through = rope_at(&x.index_select(-1, &features), &positions, 10000.0)
            .index_select(-1, &back);
        prop_assert!(
            through.allclose(&interleaved, 1e-5, 1e-5, false),
            "d = {}: {} vs {}", d, through, interleaved
        );
    }
}

proptest! {
    #![proptest_config(quiet(24))]

    /// For random weights, tokens and heads: the scores are chapter 7's, with the queries
    /// and keys of every head turned at their positions, and moving every token by the
    /// same `shift` leaves every score as it was (to rounding).
    #[test]
    fn exercise_rope_attention_scores_depend_on_the_offset_only(
        seed in 0u64..10_000, heads in 1usize..4, half in 1usize..4, tokens in 1usize..7,
        d_in in 1usize..5, shift in 1u32..50,
        base in prop_oneof![Just(10000.0f32), Just(100.0f32)],
    ) {
        manual_seed(seed);
        let head_dim = 2 * half;
        let attn = MultiHeadAttention::new(d_in, heads * head_dim, tokens, 0.0, heads, false);
        let x = randn(&[2, tokens, d_in]);
        let positions = arange(0, tokens as i64, 1).float();
        let scores = rope_attention_scores(&attn, &x, &positions, base);
        prop_assert_eq!(scores.shape(), [2, heads, tokens, tokens]);

        let q = rope_at(&split_heads(&attn.w_query.forward(&x), heads), &positions, base);
        let k = rope_at(&split_heads(&attn.w_key.forward(&x), heads), &positions, base);
        let want = q.matmul(&k.transpose(-2, -1)) / (head_dim as f32).sqrt();
        prop_assert!(scores.allclose(&want, 1e-5, 1e-5, false), "{} vs {}", scores, want);

        let moved = &positions + shift as f32;
        let shifted = rope_attention_scores(&attn, &x, &moved, base);
        let scale = scores.abs().max().item().max(1.0);
        let apart = (&shifted - &scores).abs().max().item();
        prop_assert!(apart <= 2e-4 * scale, "moved by {}: {} apart", shift, apart);
    }
}

proptest! {
    #![proptest_config(quiet(24))]

    /// For random queries, keys, positions and scales: the score with both positions
    /// divided by `scale` equals the plain RoPE score of a query at 0 and a key at the
    /// offset you derived.
    #[test]
    fn exercise_interpolated_offset_gives_the_same_score(
        seed in 0u64..10_000, half in 1usize..9, m in 0u32..64, n in 0u32..64,
        scale in prop_oneof![Just(2.0f32), Just(4.0f32), Just(8.0f32), Just(3.0f32)],
    ) {
        manual_seed(seed);
        let (q, k) = (randn(&[1, 2 * half]), randn(&[1, 2 * half]));
        let at = |x: &Tensor, p: f32| rope_at(x, &Tensor::from_vec(vec![p], &[1]), 10000.0);
        let (m, n) = (m as f32, n as f32);
        let interpolated = dot(&at(&q, m / scale), 0, &at(&k, n / scale), 0);
        let offset = interpolated_offset(m, n, scale);
        let plain = dot(&at(&q, 0.0), 0, &at(&k, offset), 0);
        let size = dot(&q, 0, &q, 0).sqrt() * dot(&k, 0, &k, 0).sqrt();
        prop_assert!(
            (interpolated - plain).abs() <= 1e-4 * size,
            "m = {}, n = {}, scale = {}: {} interpolated, {} at offset {}",
            m, n, scale, interpolated, plain, offset
        );
    }
}
