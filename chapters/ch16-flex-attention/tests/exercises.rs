//! One test per exercise, named after it, so `cargo test -p ch16-flex-attention --features
//! exercise --test exercises exercise_NAME` checks just that function. Each checks what
//! PyTorch printed (through the reference output, up to the last printed digit, since a
//! correct formula may round differently in its last bits) or the definition within a
//! tolerance derived from the inputs, and properties a hard-coded answer cannot satisfy;
//! none calls another exercise.

use course::narrative::step_text;
use course::printed;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed, randn};

use ch16_flex_attention::alibi::{alibi, alibi_slopes};
use ch16_flex_attention::block_mask::{BlockMask, TileKind};
use ch16_flex_attention::chunked::chunked_causal;
use ch16_flex_attention::empty_tiles::predict_empty_tiles;
use ch16_flex_attention::formula::flex_attention;
use ch16_flex_attention::pytorch_order::flex_attention_backward_in_pytorch_order;
use ch16_flex_attention::recipes::{causal, softcap};
use ch16_flex_attention::softcap_grad::softcap_grad;

const PYTORCH: &str = include_str!("../../../reference/expected/ch16-flex-attention.txt");

/// The chapter's inputs, as the narrative draws them: `q`, `k`, `v` and the gradient of the
/// output.
fn chapter_inputs() -> [Tensor; 4] {
    manual_seed(16);
    let q = randn(&[1, 4, 16, 8]);
    let k = randn(&[1, 2, 16, 8]);
    let v = randn(&[1, 2, 16, 8]);
    [q, k, v, randn(&[1, 4, 16, 8])]
}

/// The part of PyTorch's step `title` from the line starting with `from` to its end.
fn pytorch_from(title: &str, from: &str) -> &'static str {
    let step = step_text(PYTORCH, title).unwrap_or_else(|| panic!("the step {title:?}"));
    &step[step
        .find(from)
        .unwrap_or_else(|| panic!("{from:?} in {step}"))..]
}

#[test]
fn exercise_alibi_prints_what_pytorch_printed() {
    let [q, k, v, _] = chapter_inputs();
    let out = flex_attention(&q, &k, &v, alibi(alibi_slopes(4)), causal).unwrap();
    let rows = Tensor::from_vec(vec![4i64, 7], &[2]);
    let ours = format!(
        "out[0, 0, [4, 7]] (head 0, queries 4 and 7):\n{}\nmean |out| over its {} numbers: {}",
        out.select(0, 0).select(0, 0).index_select(0, &rows),
        out.numel(),
        out.abs().mean()
    );
    let pytorch = pytorch_from("ALiBi, causal", "out[0, 0, [4, 7]]");
    if let Err(e) = printed::compare(&ours, pytorch.trim_end()) {
        panic!("causal attention with your ALiBi is not PyTorch's:\n{e}");
    }
}

/// Causal attention with ALiBi's bias, computed in f64 from its definition: every score
/// `q·k/√d + m_h·(j - i)` for the keys `j ≤ i`, a softmax, the weighted sum of the values.
fn alibi_attention_f64(q: &Tensor, k: &Tensor, v: &Tensor, slopes: &[f64]) -> Vec<f64> {
    let [_, heads, n, d] = q.dims();
    let group = heads / k.dims::<4>()[1];
    let (q, k, v) = (q.to_vec(), k.to_vec(), v.to_vec());
    let mut out = vec![0.0; heads * n * d];
    for h in 0..heads {
        let kv = h / group;
        for i in 0..n {
            let row = |t: &[f32], head: usize, j: usize| {
                t[(head * n + j) * d..][..d]
                    .iter()
                    .map(|&x| x as f64)
                    .collect::<Vec<_>>()
            };
            let qi = row(&q, h, i);
            let scores: Vec<f64> = (0..=i)
                .map(|j| {
                    let dot: f64 = qi.iter().zip(row(&k, kv, j)).map(|(a, b)| a * b).sum();
                    dot / (d as f64).sqrt() + slopes[h] * (j as f64 - i as f64)
                })
                .collect();
            let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let total: f64 = scores.iter().map(|s| (s - max).exp()).sum();
            for (j, s) in scores.iter().enumerate() {
                let w = (s - max).exp() / total;
                for (o, x) in out[(h * n + i) * d..][..d].iter_mut().zip(row(&v, kv, j)) {
                    *o += w * x;
                }
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(quiet(16))]

    /// Random inputs: causal attention with your ALiBi equals the definition computed in f64,
    /// within float32's rounding of the scores, the softmax and the weighted sum: a few
    /// units of 2^-24 times (features + keys), relative to the largest score and value.
    #[test]
    fn exercise_alibi_is_the_definition(
        seed in 0u64..1000,
        n in 1usize..12,
        d in 1usize..9,
    ) {
        manual_seed(seed);
        let (q, k, v) = (randn(&[1, 4, n, d]), randn(&[1, 2, n, d]), randn(&[1, 2, n, d]));
        let slopes = [0.5f32, 0.25, 0.125, 0.0625];
        let out = flex_attention(&q, &k, &v, alibi(slopes.to_vec()), causal).unwrap();
        let want = alibi_attention_f64(&q, &k, &v, &slopes.map(f64::from));
        let largest = |t: &Tensor| t.abs().max().item() as f64;
        let score_bound = largest(&q) * largest(&k) * (d as f64).sqrt() + 0.5 * n as f64;
        let tolerance = 8.0 * (d + n) as f64 * f32::EPSILON as f64
            * (1.0 + score_bound) * largest(&v);
        for (i, (got, want)) in out.to_vec().iter().zip(&want).enumerate() {
            prop_assert!(
                (*got as f64 - want).abs() <= tolerance,
                "seed {}, {} tokens of {} features, value {}: {} where the definition gives {} \
                 (tolerance {:e})", seed, n, d, i, got, want, tolerance
            );
        }
    }
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

    /// Any score, head and positions: the score plus the slope times the signed distance,
    /// up to the rounding of one product and one sum in float32.
    #[test]
    fn exercise_alibi_adds_the_distance_penalty(
        score in -10.0f32..10.0,
        h in 0usize..4,
        q_idx in 0usize..100,
        kv_idx in 0usize..100,
    ) {
        let slopes = vec![0.5, 0.25, 0.125, 0.0625];
        let modded = alibi(slopes.clone())(score, 0, h, q_idx, kv_idx);
        let penalty = slopes[h] as f64 * (kv_idx as f64 - q_idx as f64);
        let expected = score as f64 + penalty;
        let tolerance = 2.0 * f32::EPSILON as f64 * (score.abs() as f64 + penalty.abs());
        prop_assert!(
            (modded as f64 - expected).abs() <= tolerance,
            "head {}, query {}, key {}, score {}: {} where score + slope·(key - query) is {}",
            h, q_idx, kv_idx, score, modded, expected
        );
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
    let [q, k, v, grad_out] = chapter_inputs();
    let (score_mod, grad) = (softcap(2.0), softcap_grad(2.0));
    let grads =
        flex_attention_backward_in_pytorch_order(&q, &k, &v, &grad_out, score_mod, grad, causal)
            .unwrap();
    let rows = Tensor::from_vec(vec![4i64, 7], &[2]);
    let ours = format!(
        "grad_k[0, 0, [4, 7]] (key/value head 0, keys 4 and 7):\n{}\n\
         mean |grad_q|: {}\nmean |grad_k|: {}\nmean |grad_v|: {}",
        grads.k.select(0, 0).select(0, 0).index_select(0, &rows),
        grads.q.abs().mean(),
        grads.k.abs().mean(),
        grads.v.abs().mean()
    );
    let pytorch = pytorch_from("Backward, softcap 2, causal", "grad_k[0, 0, [4, 7]]");
    if let Err(e) = printed::compare(&ours, pytorch.trim_end()) {
        panic!("the gradients through your softcap_grad are not autograd's:\n{e}");
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
