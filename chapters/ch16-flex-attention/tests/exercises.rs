//! One test per exercise, named after it, so `cargo test -p ch16-flex-attention --features
//! exercise --test exercises exercise_NAME` checks just that function. Each checks what
//! PyTorch printed (through the reference output, up to the last printed digit, since a
//! correct formula may round differently in its last bits) or the definition within a
//! tolerance derived from the inputs, and properties a hard-coded answer cannot satisfy;
//! none calls another exercise.

use course::narrative::step_text;
use course::printed;
use course::quiet_proptest::{holds, quiet};
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

const PYTORCH: &str =
    include_str!("../../../reference/expected/ch16-flex-attention.txt");

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
    let step =
        step_text(PYTORCH, title).unwrap_or_else(|| panic!("the step {title:?}"));
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
fn alibi_attention_f64(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    slopes: &[f64],
) -> Vec<f64> {
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
                    let dot: f64 =
                        qi.iter().zip(row(&k, kv, j)).map(|(a, b)| a * b).sum();
                    dot / (d as f64).sqrt() + slopes[h] * (j as f64 - i as f64)
                })
                .collect();
            let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let total: f64 = scores.iter().map(|s| (s - max).exp()).sum();
            for (j, s) in scores.iter().enumerate() {
                let w = (s - max).exp() / total;
                for (o, x) in
                    out[(h * n + i) * d..][..d].iter_mut().zip(row(&v, kv, j))
                {
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
    if let Some(broken) = slopes_broken(&alibi_slopes) {
        panic!("{broken}");
    }
}

/// Where `slopes` breaks the paper's geometric sequence `2^(-8h/heads)`, `h = 1..=heads`,
/// for 4 or 8 heads.
fn slopes_broken(slopes: &dyn Fn(usize) -> Vec<f32>) -> Option<String> {
    [4usize, 8].into_iter().find_map(|heads| {
        let want: Vec<f32> = (1..=heads)
            .map(|h| (-8.0 * h as f32 / heads as f32).exp2())
            .collect();
        let got = slopes(heads);
        (got != want).then(|| {
            format!("{heads} heads: your slopes are {got:?}, the paper's {want:?}")
        })
    })
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
        holds(penalty_broken(&alibi(slopes.clone()), &slopes, score, h, q_idx, kv_idx))?;
    }

    /// The chunked mask: causal inside a chunk, nothing across chunks.
    #[test]
    fn exercise_chunked_sees_its_chunk_causally(chunk in 1usize..9) {
        holds(chunked_broken(&chunked_causal(chunk), chunk))?;
    }

    /// The prediction equals the block mask's count of empty tiles.
    #[test]
    fn exercise_empty_tiles_match_the_block_mask(
        tokens in 1usize..40,
        tile in 1usize..6,
        chunks in 1usize..5,
    ) {
        holds(empty_tiles_broken(&predict_empty_tiles, tokens, tile, tile * chunks))?;
    }
}

#[test]
fn exercise_chunked_first_query_of_a_chunk_sees_only_itself() {
    let mask = chunked_causal(4);
    let visible: Vec<usize> = (0..16).filter(|&kv| mask(0, 0, 8, kv)).collect();
    assert_eq!(
        visible,
        [8],
        "chunks of 4: query 8 opens a chunk and sees only itself"
    );
    let visible: Vec<usize> = (0..16).filter(|&kv| mask(0, 0, 11, kv)).collect();
    assert_eq!(
        visible,
        [8, 9, 10, 11],
        "chunks of 4: query 11 sees its chunk, 8 to 11"
    );
}

#[test]
fn exercise_empty_tiles_of_sixteen_tokens() {
    // Tiles of 4, chunks of 8: two chunks of 2 tiles, 3 tiles each kept, 10 of 16 empty;
    // one chunk over everything: the causal mask's 6 empty tiles.
    for (chunk, empty) in [(8, 10), (16, 6)] {
        let predicted = predict_empty_tiles(16, 4, chunk);
        assert_eq!(
            predicted, empty,
            "16 tokens, tiles of 4, chunks of {chunk}: {empty} empty tiles, you predict {predicted}"
        );
    }
}

#[test]
fn exercise_softcap_grad_prints_what_pytorch_printed() {
    let [q, k, v, grad_out] = chapter_inputs();
    let (score_mod, grad) = (softcap(2.0), softcap_grad(2.0));
    let grads = flex_attention_backward_in_pytorch_order(
        &q, &k, &v, &grad_out, score_mod, grad, causal,
    )
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
    for (g, score, want) in [(1.0, 0.0, 1.0), (-3.0, 0.0, -3.0)] {
        let got = grad(g, score, 0, 0, 0, 0);
        assert!(
            (got - want).abs() <= f32::EPSILON,
            "cap 2, score {score}: the slope is 1, so a gradient of {g} passes as {want}; you give {got}"
        );
    }
    for score in [30.0, -30.0] {
        let got = grad(1.0, score, 0, 0, 0, 0);
        assert!(
            got.abs() < 1e-9,
            "cap 2, score {score}: the softcap is flat there, the gradient should vanish; you give {got}"
        );
    }
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
        holds(slope_broken(&softcap_grad(cap), cap, score, grad))?;
    }
}

/// Where an ALiBi score_mod breaks `score + slopes[h] · (kv_idx − q_idx)` at one score,
/// head and pair of positions, beyond the rounding of one product and one sum in float32.
fn penalty_broken(
    score_mod: &dyn Fn(f32, usize, usize, usize, usize) -> f32,
    slopes: &[f32],
    score: f32,
    h: usize,
    q_idx: usize,
    kv_idx: usize,
) -> Option<String> {
    let modded = score_mod(score, 0, h, q_idx, kv_idx);
    let penalty = slopes[h] as f64 * (kv_idx as f64 - q_idx as f64);
    let expected = score as f64 + penalty;
    let tolerance = 2.0 * f32::EPSILON as f64 * (score.abs() as f64 + penalty.abs());
    ((modded as f64 - expected).abs() > tolerance).then(|| {
        format!(
            "head {h} (slope {}), query {q_idx}, key {kv_idx}, score {score}: your score_mod \
             gives {modded}, score + slope·(key − query) is {expected}",
            slopes[h]
        )
    })
}

/// Where a mask_mod breaks the chunked causal mask with chunks of `chunk`: query `q_idx`
/// sees key `kv_idx` exactly when `kv_idx ≤ q_idx`, both in the same chunk.
fn chunked_broken(
    mask: &dyn Fn(usize, usize, usize, usize) -> bool,
    chunk: usize,
) -> Option<String> {
    for q_idx in 0..4 * chunk + 3 {
        for kv_idx in 0..4 * chunk + 3 {
            let want = q_idx / chunk == kv_idx / chunk && kv_idx <= q_idx;
            if mask(0, 0, q_idx, kv_idx) != want {
                return Some(format!(
                    "chunks of {chunk}: query {q_idx} {} key {kv_idx}, your mask says the \
                     opposite",
                    if want { "sees" } else { "does not see" }
                ));
            }
        }
    }
    None
}

/// Where a prediction of the chunked causal mask's empty tiles differs from the block
/// mask's count over `tokens` tokens, tiles of `tile` and chunks of `chunk`.
fn empty_tiles_broken(
    predict: &dyn Fn(usize, usize, usize) -> usize,
    tokens: usize,
    tile: usize,
    chunk: usize,
) -> Option<String> {
    let mask = move |_b: usize, _h: usize, q: usize, kv: usize| {
        q / chunk == kv / chunk && kv <= q
    };
    let counted = BlockMask::new(mask, 1, 1, tokens, tokens, tile)
        .unwrap()
        .count(TileKind::Empty);
    let predicted = predict(tokens, tile, chunk);
    (predicted != counted).then(|| {
        format!(
            "{tokens} tokens, tiles of {tile}, chunks of {chunk}: you predict {predicted} \
             empty tiles, the block mask counts {counted}"
        )
    })
}

/// Where a softcap backward breaks the chain rule at one score: the gradient times the
/// slope of `cap · tanh(s / cap)`, measured by a central difference in f64.
fn slope_broken(
    backward: &dyn Fn(f32, f32, usize, usize, usize, usize) -> f32,
    cap: f32,
    score: f32,
    grad: f32,
) -> Option<String> {
    let softcap = |s: f64| cap as f64 * (s / cap as f64).tanh();
    let h = 1e-4;
    let slope = (softcap(score as f64 + h) - softcap(score as f64 - h)) / (2.0 * h);
    let ours = backward(grad, score, 0, 0, 0, 0) as f64;
    let expected = grad as f64 * slope;
    ((ours - expected).abs() > 1e-5 * (1.0 + expected.abs())).then(|| {
        format!(
            "cap {cap}, score {score}, gradient {grad}: you give {ours}, the gradient times \
             the softcap's slope is {expected}"
        )
    })
}

/// A plausible mistake for each exercise, each caught by its tests: the slopes counted from
/// head 0, the distance's sign flipped, the chunks without the causal condition, the empty
/// tiles counted as the causal mask's, and the softcap's slope without the `1 / cap` inside
/// the `tanh`.
#[test]
fn wrong_answers_fail_the_exercise_tests() {
    let from_zero = |heads: usize| -> Vec<f32> {
        (0..heads)
            .map(|h| (-8.0 * h as f32 / heads as f32).exp2())
            .collect()
    };
    assert!(
        slopes_broken(&from_zero).is_some(),
        "the slope tests accept slopes counted from head 0"
    );
    let slopes = [0.5, 0.25, 0.125, 0.0625];
    let flipped = move |score: f32, _b: usize, h: usize, q: usize, kv: usize| {
        score + slopes[h] * (q as f32 - kv as f32)
    };
    assert!(
        penalty_broken(&flipped, &slopes, 1.0, 0, 5, 2).is_some(),
        "the ALiBi tests accept the distance's sign flipped"
    );
    let no_causal = |_b: usize, _h: usize, q: usize, kv: usize| q / 4 == kv / 4;
    assert!(
        chunked_broken(&no_causal, 4).is_some(),
        "the chunked tests accept a mask without the causal condition"
    );
    let causal_count = |tokens: usize, tile: usize, _chunk: usize| {
        let tiles = tokens.div_ceil(tile);
        tiles * (tiles - 1) / 2
    };
    assert!(
        empty_tiles_broken(&causal_count, 16, 4, 8).is_some(),
        "the empty-tile tests accept the causal mask's count"
    );
    let no_inner_cap =
        |grad: f32, score: f32, _b: usize, _h: usize, _q: usize, _kv: usize| {
            let t = score.tanh();
            grad * (1.0 - t * t)
        };
    assert!(
        slope_broken(&no_inner_cap, 2.0, 1.5, 1.0).is_some(),
        "the softcap_grad tests accept tanh's slope at the score instead of at score / cap"
    );
}
