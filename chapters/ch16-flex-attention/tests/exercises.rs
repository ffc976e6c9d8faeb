//! One test per exercise, named after it, so `cargo test -p ch16-flex-attention --features
//! exercise --test exercises exercise_NAME` checks just that function. Each checks what
//! PyTorch printed (through the reference output) or the definition, and properties a
//! hard-coded answer cannot satisfy; none calls another exercise.

use course::narrative::step_text;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{manual_seed, randn};

use ch16_flex_attention::alibi::{alibi, alibi_slopes};
use ch16_flex_attention::block_mask::{BlockMask, TileKind};
use ch16_flex_attention::chunked::chunked_causal;
use ch16_flex_attention::empty_tiles::predict_empty_tiles;
use ch16_flex_attention::formula::flex_attention;
use ch16_flex_attention::narrative::bit_sum;
use ch16_flex_attention::pytorch_order::flex_attention_backward_in_pytorch_order;
use ch16_flex_attention::recipes::{causal, softcap};
use ch16_flex_attention::softcap_grad::softcap_grad;

const PYTORCH: &str = include_str!("../../../reference/expected/ch16-flex-attention.txt");

#[test]
fn exercise_alibi_prints_what_pytorch_printed() {
    // The chapter's inputs, as the narrative draws them.
    manual_seed(16);
    let q = randn(&[1, 4, 16, 8]);
    let k = randn(&[1, 2, 16, 8]);
    let v = randn(&[1, 2, 16, 8]);
    let out = flex_attention(&q, &k, &v, alibi(alibi_slopes(4)), causal).unwrap();
    let expected = step_text(PYTORCH, "ALiBi, causal").expect("the ALiBi step");
    let line = format!("sum of the output's bit patterns: {}", bit_sum(&out));
    assert!(expected.contains(&line), "{line} is not in\n{expected}");
}

#[test]
fn exercise_alibi_slopes_are_the_papers() {
    assert_eq!(alibi_slopes(4), [0.25, 0.0625, 0.015625, 0.00390625]);
    let eight = alibi_slopes(8);
    assert_eq!(eight.len(), 8);
    assert_eq!(eight[0], 0.5);
    assert_eq!(eight[7], 0.00390625);
}

proptest! {
    #![proptest_config(quiet(64))]

    /// Any score, head and positions: the score plus the slope times the signed distance.
    #[test]
    fn exercise_alibi_adds_the_distance_penalty(
        score in -10.0f32..10.0,
        h in 0usize..4,
        q_idx in 0usize..100,
        kv_idx in 0usize..100,
    ) {
        let slopes = vec![0.5, 0.25, 0.125, 0.0625];
        let modded = alibi(slopes.clone())(score, 0, h, q_idx, kv_idx);
        let expected = score + slopes[h] * (kv_idx as f32 - q_idx as f32);
        prop_assert_eq!(modded.to_bits(), expected.to_bits());
    }

    /// The chunked mask: causal inside a chunk, nothing across chunks.
    #[test]
    fn exercise_chunked_sees_its_chunk_causally(
        chunk in 1usize..9,
        q_idx in 0usize..40,
        kv_idx in 0usize..40,
    ) {
        let mask = chunked_causal(chunk);
        let same_chunk = (q_idx / chunk) == (kv_idx / chunk);
        prop_assert_eq!(mask(0, 0, q_idx, kv_idx), same_chunk && kv_idx <= q_idx);
    }

    /// The prediction equals the block mask's count of empty tiles.
    #[test]
    fn exercise_empty_tiles_match_the_block_mask(
        tokens in 1usize..40,
        tile in 1usize..6,
        chunks in 1usize..5,
    ) {
        let chunk = tile * chunks;
        let mask = move |_b: usize, _h: usize, q: usize, kv: usize| q / chunk == kv / chunk && kv <= q;
        let block_mask = BlockMask::new(mask, 1, 1, tokens, tokens, tile).unwrap();
        prop_assert_eq!(
            predict_empty_tiles(tokens, tile, chunk),
            block_mask.count(TileKind::Empty)
        );
    }
}

#[test]
fn exercise_chunked_first_query_of_a_chunk_sees_only_itself() {
    let mask = chunked_causal(4);
    let visible: Vec<usize> = (0..16).filter(|&kv| mask(0, 0, 8, kv)).collect();
    assert_eq!(visible, [8]);
    let visible: Vec<usize> = (0..16).filter(|&kv| mask(0, 0, 11, kv)).collect();
    assert_eq!(visible, [8, 9, 10, 11]);
}

#[test]
fn exercise_empty_tiles_of_sixteen_tokens() {
    // Tiles of 4, chunks of 8: two chunks of 2 tiles, 3 tiles each kept, 10 of 16 empty.
    assert_eq!(predict_empty_tiles(16, 4, 8), 10);
    // One chunk over everything: the causal mask's 6 empty tiles.
    assert_eq!(predict_empty_tiles(16, 4, 16), 6);
}

#[test]
fn exercise_softcap_grad_prints_what_pytorch_printed() {
    // The chapter's inputs and gradient of the output, as the narrative draws them.
    manual_seed(16);
    let q = randn(&[1, 4, 16, 8]);
    let k = randn(&[1, 2, 16, 8]);
    let v = randn(&[1, 2, 16, 8]);
    let grad_out = randn(&[1, 4, 16, 8]);
    let (score_mod, grad) = (softcap(2.0), softcap_grad(2.0));
    let grads =
        flex_attention_backward_in_pytorch_order(&q, &k, &v, &grad_out, score_mod, grad, causal)
            .unwrap();
    let expected = step_text(PYTORCH, "Backward, softcap 2, causal").expect("the step");
    for (label, grad) in [("q", &grads.q), ("k", &grads.k)] {
        let line = format!("sum of grad_{label}'s bit patterns: {}", bit_sum(grad));
        assert!(expected.contains(&line), "{line} is not in\n{expected}");
    }
}

#[test]
fn exercise_softcap_grad_passes_small_scores_and_stops_large_ones() {
    let grad = softcap_grad(2.0);
    assert_eq!(grad(1.0, 0.0, 0, 0, 0, 0), 1.0);
    assert_eq!(grad(-3.0, 0.0, 0, 0, 0, 0), -3.0);
    assert!(grad(1.0, 30.0, 0, 0, 0, 0).abs() < 1e-9);
    assert!(grad(1.0, -30.0, 0, 0, 0, 0).abs() < 1e-9);
}

proptest! {
    #![proptest_config(quiet(64))]

    /// Any cap, score and gradient: the gradient times the slope of `cap · tanh(s / cap)`,
    /// measured by a central difference in f64.
    #[test]
    fn exercise_softcap_grad_is_the_slope_of_the_softcap(
        cap in 0.5f32..50.0,
        score in -20.0f32..20.0,
        grad in -4.0f32..4.0,
    ) {
        let softcap = |s: f64| cap as f64 * (s / cap as f64).tanh();
        let h = 1e-4;
        let slope = (softcap(score as f64 + h) - softcap(score as f64 - h)) / (2.0 * h);
        let ours = softcap_grad(cap)(grad, score, 0, 0, 0, 0) as f64;
        let expected = grad as f64 * slope;
        prop_assert!(
            (ours - expected).abs() <= 1e-5 * (1.0 + expected.abs()),
            "{} vs {}", ours, expected
        );
    }
}
