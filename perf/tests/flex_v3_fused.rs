//! Version 3 of chapter 16's kernel is within a derived bound of the listing (version 1,
//! `flex_kernel_over`): not the same bits (fused multiply-adds, the scale
//! applied to the queries, weights in base 2, the sums in another order), so within a
//! bound derived from the sizes and the inputs' magnitudes, for every recipe, tile and
//! instruction set this processor has.

use std::cell::Cell;

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::simd::Isa;
use shared::{Tensor, manual_seed, randn};

use attention_perf::flex::v3_fused::flex_kernel_fused_with;
use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::kernel::{KernelOutput, flex_kernel_over};
use ch16_flex_attention::kv_rows::InTensors;
use ch16_flex_attention::recipes::{
    MaskMod, ScoreMod, causal, causal_window, document_mask, no_mask, prefix_lm,
    sliding_window, softcap, unchanged,
};

/// The unit roundoff of `f32`: a rounding moves a number by at most this much of itself.
const U: f64 = f32::EPSILON as f64 / 2.0;

/// `γₙ = n·u / (1 - n·u)`: a sum or product of `n` terms, each step rounded, is within
/// `γₙ` times the sum of the terms' magnitudes of the exact one (Higham, *Accuracy and
/// Stability of Numerical Algorithms*, §3.1).
fn gamma(n: usize) -> f64 {
    n as f64 * U / (1.0 - n as f64 * U)
}

fn inputs(seed: u64, [heads, kv_heads, tokens, d, d_v]: [usize; 5]) -> [Tensor; 3] {
    manual_seed(seed);
    [
        randn(&[2, heads, tokens, d]),
        randn(&[2, kv_heads, tokens, d]),
        randn(&[2, kv_heads, tokens, d_v]),
    ]
}

/// A bias of ALiBi's form, `score + m_h · (kv_idx - q_idx)` with `m_h = 1/4, 1/8, …`,
/// written here so this test does not depend on the exercise `alibi`.
fn distance_bias(
    score: f32,
    _b: usize,
    h: usize,
    q_idx: usize,
    kv_idx: usize,
) -> f32 {
    score + 0.25 / (h + 1) as f32 * (kv_idx as f32 - q_idx as f32)
}

/// How far the fused kernel's output and log-sum-exp of one query may lie from the
/// listing's, for a query whose dot products `q·k/√d` have magnitudes (`Σₚ |qₚ kₚ| / √d`)
/// at most `dots`, whose score_mod moves a score by at most `bias`, over `keys` keys in
/// `tiles` tiles of `d` features. Returns the bound on the output, in units of the
/// largest `|v|` of the feature, and the bound on the log-sum-exp.
///
/// - A score: the listing rounds `d` products, `d - 1` sums and the scale, the fused
///   kernel the scale on `q` and `d` fused steps: each within `γ_{d+2}·dots` of the exact
///   score. The score_mods are at most as steep as the identity (softcap's `tanh`, a
///   bias) and round their result a few times: within `4u·m` more, with `m = dots + bias`
///   the largest modified score. So the two kernels' scores differ by at most
///   `δ = 2γ_{d+2}·dots + 4u·m`.
/// - A weight: scores that move by at most `δ` move every normalised weight
///   `e^(sⱼ)/Σ e^(sₖ)` by a factor within `e^(±2δ)`. Each `exp` is within 2 ulp (`4u` of
///   itself); its argument `s - max` is rounded once by the listing, while the fused
///   kernel rounds `max·log₂ e` and the fused `s·log₂ e - max·log₂ e`, errors of
///   `u·m` and `2u·m·log₂ e` that become `ln 2` times as much in the weight: in all,
///   `8u + 5u·m` for the two kernels, and as much again for each tile's rescale factor.
///   Normalised by a sum that moves as much: twice that.
/// - The sums: `Σ wⱼ` and `Σ wⱼ vⱼ` over at most `keys` positive weights, with a
///   rescale multiplication per tile, in any order, within `γ_{keys+2·tiles+2}` of the
///   sum of magnitudes, for each kernel; the division rounds once more. Since the
///   weights sum to 1, `Σ wⱼ|vⱼ| ≤ max |v|`.
/// - The flushed weights, below `2⁻¹²⁶` of the largest, move the sum by at most
///   `keys · 2⁻¹²⁶` of it.
fn bounds(dots: f64, bias: f64, [d, keys, tiles]: [usize; 3]) -> (f64, f64) {
    let m = dots + bias;
    let delta = 2.0 * gamma(d + 2) * dots + 4.0 * U * m;
    let exps = (8.0 * U + 5.0 * U * m) * (1 + tiles) as f64;
    let sums = gamma(keys + 2 * tiles + 2);
    let flush = keys as f64 * 2f64.powi(-126);
    let out = 2.0 * delta + 2.0 * exps + 4.0 * sums + 2.0 * U + flush;
    let lse = delta + exps + 2.0 * sums + flush;
    (out, lse)
}

/// The fused kernel on `isa` against the listing: the same visits, zeros and `-∞` where
/// a query sees no key, and every output and log-sum-exp within [`bounds`] (with a
/// margin of 5 % for the second-order terms the bound leaves out).
fn within_bounds(
    isa: Isa,
    [q, k, v]: &[Tensor; 3],
    tile: usize,
    (score_mod, bias): (impl ScoreMod + Copy, f64),
    mask_mod: impl MaskMod + Clone,
) -> std::result::Result<(), String> {
    let [batch, heads, queries, d] = q.dims();
    let [_, kv_heads, keys, d_v] = v.dims();
    let block_mask =
        BlockMask::new(mask_mod.clone(), 1, 1, queries, keys, tile).unwrap();
    let kv = InTensors::new(k, v).unwrap();
    let listing =
        flex_kernel_over(q, &kv, &block_mask, score_mod, mask_mod.clone()).unwrap();
    let fused = flex_kernel_fused_with(isa, q, &kv, &block_mask, score_mod, mask_mod)
        .unwrap();
    let KernelOutput { out, lse, visits } = fused;
    if listing.visits != visits {
        return Err(format!("{isa:?}, tile {tile}: visits differ"));
    }
    let (q, k, v) = (q.to_vec(), k.to_vec(), v.to_vec());
    let (want, got) = (listing.out.to_vec(), out.to_vec());
    let (want_lse, got_lse) = (listing.lse.to_vec(), lse.to_vec());
    let scale = 1.0 / (d as f64).sqrt();
    let tiles = keys.div_ceil(tile);
    for b in 0..batch {
        for h in 0..heads {
            let kv_head = h / (heads / kv_heads);
            let key = |j: usize| &k[((b * kv_heads + kv_head) * keys + j) * d..][..d];
            let value =
                |j: usize| &v[((b * kv_heads + kv_head) * keys + j) * d_v..][..d_v];
            for i in 0..queries {
                let row = (b * heads + h) * queries + i;
                let q_i = &q[row * d..][..d];
                let dots = (0..keys)
                    .map(|j| {
                        let dot: f64 = q_i
                            .iter()
                            .zip(key(j))
                            .map(|(&x, &y)| (x as f64 * y as f64).abs())
                            .sum();
                        dot * scale
                    })
                    .fold(0.0, f64::max);
                let (out_bound, lse_bound) = bounds(dots, bias, [d, keys, tiles]);
                let (want_l, got_l) = (want_lse[row] as f64, got_lse[row] as f64);
                let where_ = || {
                    format!("{isa:?}, tile {tile}, batch {b}, head {h}, query {i}")
                };
                if want_l == f64::NEG_INFINITY || got_l == f64::NEG_INFINITY {
                    // A query that sees no key: zeros and -∞ in both.
                    let zeros = got[row * d_v..][..d_v].iter().all(|&x| x == 0.0);
                    if want_l != got_l || !zeros {
                        return Err(format!(
                            "{}: sees no key in one kernel only",
                            where_()
                        ));
                    }
                    continue;
                }
                let lse_tol = 1.05 * (lse_bound + 4.0 * U * want_l.abs());
                if (want_l - got_l).abs() > lse_tol {
                    return Err(format!(
                        "{}: log-sum-exp {got_l} against {want_l}, more than {lse_tol:e} apart",
                        where_()
                    ));
                }
                for f in 0..d_v {
                    let v_max = (0..keys)
                        .map(|j| value(j)[f].abs() as f64)
                        .fold(0.0, f64::max);
                    let tol = 1.05 * out_bound * v_max;
                    let (w, g) =
                        (want[row * d_v + f] as f64, got[row * d_v + f] as f64);
                    if (w - g).abs() > tol {
                        return Err(format!(
                            "{}, feature {f}: {g} against {w}, more than {tol:e} apart",
                            where_()
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

fn isas() -> Vec<Isa> {
    [Isa::Avx512, Isa::Avx2, Isa::Portable]
        .into_iter()
        .filter(|isa| isa.is_available())
        .collect()
}

#[test]
fn fused_kernel_is_the_listing_within_roundings_for_every_recipe() {
    let qkv = inputs(1, [4, 2, 37, 16, 8]);
    let alibi = (distance_bias, 0.25 * 37.0);
    for isa in isas() {
        for tile in [1, 3, 8, 16, 64, 128] {
            let checks = [
                within_bounds(isa, &qkv, tile, (unchanged, 0.0), no_mask),
                within_bounds(isa, &qkv, tile, (unchanged, 0.0), causal),
                within_bounds(isa, &qkv, tile, (unchanged, 0.0), sliding_window(5)),
                within_bounds(isa, &qkv, tile, (unchanged, 0.0), causal_window(7)),
                within_bounds(
                    isa,
                    &qkv,
                    tile,
                    (unchanged, 0.0),
                    document_mask(&[9, 20, 4]),
                ),
                within_bounds(isa, &qkv, tile, (unchanged, 0.0), prefix_lm(6)),
                within_bounds(isa, &qkv, tile, (softcap(2.0), 0.0), causal),
                within_bounds(isa, &qkv, tile, alibi, causal),
            ];
            for check in checks {
                check.unwrap();
            }
        }
    }
}

#[test]
fn fused_kernel_is_close_at_the_benchmarks_sizes() {
    // Two heads of 64 features, 300 tokens: tiles of 128 hold two chunks of 64 keys, the
    // last one partial.
    let qkv = inputs(4, [2, 2, 300, 64, 64]);
    for isa in isas() {
        within_bounds(isa, &qkv, 128, (unchanged, 0.0), causal).unwrap();
        within_bounds(isa, &qkv, 128, (unchanged, 0.0), causal_window(100)).unwrap();
        within_bounds(isa, &qkv, 128, (softcap(5.0), 0.0), causal).unwrap();
    }
}

#[test]
fn fused_kernel_calls_the_mask_mod_on_partial_tiles_only() {
    let [q, k, v] = inputs(2, [2, 2, 16, 8, 8]);
    let block_mask = BlockMask::new(causal, 1, 1, 16, 16, 4).unwrap();
    let kv = InTensors::new(&k, &v).unwrap();
    for isa in isas() {
        let calls = Cell::new(0usize);
        let counting = |b: usize, h: usize, q_idx: usize, kv_idx: usize| {
            calls.set(calls.get() + 1);
            causal(b, h, q_idx, kv_idx)
        };
        let result =
            flex_kernel_fused_with(isa, &q, &kv, &block_mask, unchanged, counting)
                .unwrap();
        assert_eq!(calls.get(), result.visits.partial * 4 * 4, "{isa:?}");
    }
}

#[test]
fn fused_kernel_calls_the_score_mod_on_visible_scores_only() {
    let [q, k, v] = inputs(5, [1, 1, 20, 8, 8]);
    let block_mask = BlockMask::new(causal, 1, 1, 20, 20, 8).unwrap();
    let kv = InTensors::new(&k, &v).unwrap();
    for isa in isas() {
        let calls = Cell::new(0usize);
        let counting =
            |score: f32, b: usize, h: usize, q_idx: usize, kv_idx: usize| {
                assert!(kv_idx <= q_idx, "score_mod called on a hidden score");
                calls.set(calls.get() + 1);
                unchanged(score, b, h, q_idx, kv_idx)
            };
        flex_kernel_fused_with(isa, &q, &kv, &block_mask, counting, causal).unwrap();
        // Batch 2, one head: every visible pair of the 20 × 20 causal mask once.
        assert_eq!(calls.get(), 2 * 20 * 21 / 2, "{isa:?}");
    }
}

#[test]
fn fused_kernel_names_itself_in_shape_errors() {
    let [q, k, v] = inputs(3, [4, 2, 8, 8, 8]);
    let block_mask = BlockMask::new(causal, 1, 1, 12, 12, 4).unwrap();
    let kv = InTensors::new(&k, &v).unwrap();
    let message = flex_kernel_fused_with(
        Isa::detect(),
        &q,
        &kv,
        &block_mask,
        unchanged,
        causal,
    )
    .unwrap_err()
    .to_string();
    assert!(message.starts_with("flex_kernel_fused:"), "{message}");
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Any sizes, grouping, window, tile and score_mod: within the bound of the listing.
    #[test]
    fn fused_kernel_matches_the_listing_within_the_bound(
        seed in 0u64..1000,
        kv_heads in 1usize..3,
        groups in 1usize..3,
        tokens in 1usize..150,
        d in 1usize..70,
        d_v in 1usize..70,
        tile in 1usize..140,
        window in 1usize..80,
        cap in 0.5f32..20.0,
    ) {
        let qkv = inputs(seed, [kv_heads * groups, kv_heads, tokens, d, d_v]);
        let alibi = (distance_bias, 0.25 * tokens as f64);
        for isa in isas() {
            let result = within_bounds(isa, &qkv, tile, (unchanged, 0.0), causal_window(window))
                .and_then(|()| {
                    within_bounds(isa, &qkv, tile, (softcap(cap), 0.0), sliding_window(window))
                })
                .and_then(|()| within_bounds(isa, &qkv, tile, alibi, causal))
                .and_then(|()| within_bounds(isa, &qkv, tile, (unchanged, 0.0), no_mask));
            prop_assert!(result.is_ok(), "{}", result.unwrap_err());
        }
    }
}
