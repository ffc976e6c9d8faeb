//! The tiled kernel against the formula, and the tiles it visits against the block mask.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::max_abs_diff;
use shared::{Tensor, manual_seed, randn};

use ch16_flex_attention::block_mask::{BlockMask, TileKind};
use ch16_flex_attention::formula::flex_attention;
use ch16_flex_attention::kernel::{flex_kernel, flex_kernel_over};
use ch16_flex_attention::kv_rows::InTensors;
use ch16_flex_attention::recipes::{
    causal, causal_window, document_mask, no_mask, prefix_lm, sliding_window,
    softcap, unchanged,
};

/// The kernel adds in another order and takes `exp` from chapter 9: its outputs (of size
/// about 1) stay within this of the formula's.
const TOLERANCE: f32 = 2e-6;

fn inputs(seed: u64, heads: usize, kv_heads: usize, tokens: usize) -> [Tensor; 3] {
    manual_seed(seed);
    [
        randn(&[2, heads, tokens, 8]),
        randn(&[2, kv_heads, tokens, 8]),
        randn(&[2, kv_heads, tokens, 8]),
    ]
}

macro_rules! agrees {
    ($q:expr, $k:expr, $v:expr, $tile:expr, $score:expr, $mask:expr) => {{
        let (q, k, v) = ($q, $k, $v);
        let block_mask =
            BlockMask::new($mask, 1, 1, q.size(2), k.size(2), $tile).unwrap();
        let (tiled, _) = flex_kernel(q, k, v, &block_mask, $score, $mask).unwrap();
        let formula = flex_attention(q, k, v, $score, $mask).unwrap();
        max_abs_diff(&tiled, &formula)
    }};
}

#[test]
fn kernel_agrees_with_the_formula_for_every_recipe() {
    let [q, k, v] = inputs(1, 4, 2, 19);
    let slopes = [0.25, 0.0625, 0.015625, 0.00390625];
    // ALiBi written here, so that this test does not depend on the exercise.
    let alibi = move |s: f32, _b: usize, h: usize, q_idx: usize, kv_idx: usize| {
        s + slopes[h] * (kv_idx as i64 - q_idx as i64) as f32
    };
    for tile in [1, 3, 4, 8, 32] {
        let diffs = [
            agrees!(&q, &k, &v, tile, unchanged, no_mask),
            agrees!(&q, &k, &v, tile, unchanged, causal),
            agrees!(&q, &k, &v, tile, unchanged, sliding_window(4)),
            agrees!(&q, &k, &v, tile, unchanged, causal_window(3)),
            agrees!(&q, &k, &v, tile, unchanged, document_mask(&[5, 7, 4])),
            agrees!(&q, &k, &v, tile, unchanged, prefix_lm(6)),
            agrees!(&q, &k, &v, tile, alibi, causal),
            agrees!(&q, &k, &v, tile, softcap(2.0), causal),
        ];
        for (recipe, diff) in diffs.iter().enumerate() {
            assert!(
                *diff <= TOLERANCE,
                "recipe {recipe}, tile {tile}: kernel and formula differ by {diff}"
            );
        }
    }
}

#[test]
fn kernel_reads_grouped_heads_without_copies() {
    // Multi-head (kv_heads = heads), grouped and multi-query attention all agree.
    for kv_heads in [4, 2, 1] {
        let [q, k, v] = inputs(2, 4, kv_heads, 12);
        let diff = agrees!(&q, &k, &v, 4, unchanged, causal);
        assert!(diff <= TOLERANCE, "kv_heads {kv_heads}: differ by {diff}");
    }
}

#[test]
fn kernel_visits_exactly_the_tiles_that_are_not_empty() {
    let [q, k, v] = inputs(3, 4, 2, 16);
    let mask = causal_window(4);
    let tile = 4;
    let block_mask = BlockMask::new(mask, 1, 1, 16, 16, tile).unwrap();
    // Every tile a score was computed in, and how often the mask was asked.
    let seen_tiles = RefCell::new(HashSet::new());
    let mask_calls = Cell::new(0usize);
    let score_mod = |s: f32, _b: usize, h: usize, q_idx: usize, kv_idx: usize| {
        seen_tiles
            .borrow_mut()
            .insert((h, q_idx / tile, kv_idx / tile));
        s
    };
    let mask_mod = |b: usize, h: usize, q_idx: usize, kv_idx: usize| {
        mask_calls.set(mask_calls.get() + 1);
        mask(b, h, q_idx, kv_idx)
    };
    let (_, visits) =
        flex_kernel(&q, &k, &v, &block_mask, score_mod, mask_mod).unwrap();
    let runs = 2 * 4; // batches × heads
    assert_eq!(visits.full, block_mask.count(TileKind::Full) * runs);
    assert_eq!(visits.partial, block_mask.count(TileKind::Partial) * runs);
    assert_eq!(block_mask.count(TileKind::Empty), 9);
    for &(_, qt, kt) in seen_tiles.borrow().iter() {
        assert_ne!(
            block_mask.kind(0, 0, qt, kt),
            TileKind::Empty,
            "tile ({qt}, {kt})"
        );
    }
    // The mask is evaluated on partial tiles only: tile² entries each.
    assert_eq!(mask_calls.get(), visits.partial * tile * tile);
}

#[test]
fn full_tiles_are_not_masked() {
    let [q, k, v] = inputs(4, 2, 2, 8);
    let block_mask = BlockMask::new(no_mask, 1, 1, 8, 8, 4).unwrap();
    let calls = Cell::new(0usize);
    let counting = |_b: usize, _h: usize, _q: usize, _kv: usize| {
        calls.set(calls.get() + 1);
        true
    };
    let (_, visits) =
        flex_kernel(&q, &k, &v, &block_mask, unchanged, counting).unwrap();
    assert_eq!(visits.partial, 0);
    assert_eq!(visits.full, 2 * 2 * 4);
    assert_eq!(calls.get(), 0);
}

#[test]
fn block_mask_of_the_causal_mask() {
    let block_mask = BlockMask::new(causal, 1, 1, 10, 10, 4).unwrap();
    assert_eq!(block_mask.grid(0, 0), ["P . .", "F P .", "F F P"]);
    assert_eq!(
        [TileKind::Full, TileKind::Partial, TileKind::Empty]
            .map(|k| block_mask.count(k)),
        [3, 3, 3]
    );
}

#[test]
fn bad_shapes_are_errors_naming_the_op() {
    let [q, k, v] = inputs(5, 3, 2, 8);
    let message = flex_attention(&q, &k, &v, unchanged, causal)
        .unwrap_err()
        .to_string();
    assert!(message.starts_with("flex_attention:"), "{message}");
    assert!(message.contains("[2, 3, 8, 8]"), "{message}");
    let [q, k, v] = inputs(5, 4, 2, 8);
    let block_mask = BlockMask::new(causal, 1, 1, 12, 12, 4).unwrap();
    let message = flex_kernel(&q, &k, &v, &block_mask, unchanged, causal)
        .unwrap_err()
        .to_string();
    assert!(message.starts_with("flex_kernel:"), "{message}");
    assert!(BlockMask::new(causal, 1, 1, 8, 8, 0).is_err());
    let message = InTensors::new(&k, &q).unwrap_err().to_string();
    assert!(message.starts_with("InTensors::new:"), "{message}");
}

#[test]
fn kernel_keeps_every_rows_log_sum_exp() {
    // Query 0 sees no key; the others the keys before them.
    let strictly_before =
        |_b: usize, _h: usize, q_idx: usize, kv_idx: usize| kv_idx < q_idx;
    let [q, k, v] = inputs(6, 4, 2, 10);
    let block_mask = BlockMask::new(strictly_before, 1, 1, 10, 10, 4).unwrap();
    let kv = InTensors::new(&k, &v).unwrap();
    let result =
        flex_kernel_over(&q, &kv, &block_mask, unchanged, strictly_before).unwrap();
    let (on_tensors, _) =
        flex_kernel(&q, &k, &v, &block_mask, unchanged, strictly_before).unwrap();
    assert_eq!(
        shared::testing::bits_difference(&result.out, &on_tensors),
        None
    );
    let (q, k, lse) = (q.to_vec(), k.to_vec(), result.lse.to_vec());
    for (row, &got) in lse.iter().enumerate() {
        let (b, h, i) = (row / 40, row / 10 % 4, row % 10);
        let kv_head = b * 2 + h / 2;
        let scores: Vec<f64> = (0..i)
            .map(|j| {
                let dot: f64 = (0..8)
                    .map(|c| {
                        f64::from(q[row * 8 + c])
                            * f64::from(k[(kv_head * 10 + j) * 8 + c])
                    })
                    .sum();
                dot / 8f64.sqrt()
            })
            .collect();
        if i == 0 {
            assert_eq!(got, f32::NEG_INFINITY, "row {row} sees no key");
            continue;
        }
        let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let want = max + scores.iter().map(|s| (s - max).exp()).sum::<f64>().ln();
        assert!(
            (f64::from(got) - want).abs() <= 1e-5,
            "row {row}: log-sum-exp {got}, exact {want}"
        );
    }
    assert!(result.out.to_vec()[..8].iter().all(|&x| x == 0.0));
}

proptest! {
    #![proptest_config(quiet(24))]

    /// Any window, tile and length: the kernel stays within the tolerance of the formula,
    /// and the three kinds of tiles add up to all tiles.
    #[test]
    fn kernel_agrees_on_random_windows(
        seed in 0u64..1000,
        tokens in 1usize..24,
        tile in 1usize..9,
        window in 1usize..10,
    ) {
        let [q, k, v] = inputs(seed, 2, 1, tokens);
        let diff = agrees!(&q, &k, &v, tile, unchanged, causal_window(window));
        prop_assert!(diff <= TOLERANCE, "the kernel's output is {diff} from the formula's, more than {TOLERANCE}");
        let block_mask = BlockMask::new(causal_window(window), 1, 1, tokens, tokens, tile).unwrap();
        let tiles = tokens.div_ceil(tile);
        let total: usize = [TileKind::Full, TileKind::Partial, TileKind::Empty]
            .iter()
            .map(|&kind| block_mask.count(kind))
            .sum();
        prop_assert_eq!(total, tiles * tiles, "the full, partial and empty tiles do not add up to all {} tiles", tiles * tiles);
    }
}
