//! The tiled kernel's backward against the formula's backward, and the tiles it visits.

use std::cell::RefCell;
use std::collections::HashSet;

use course::quiet_proptest::quiet;
use proptest::prelude::*;

use ch16_flex_attention::backward::{
    FlexGrads, flex_attention_backward, unchanged_grad,
};
use ch16_flex_attention::block_mask::{BlockMask, TileKind};
use ch16_flex_attention::kernel_backward::flex_kernel_backward;
use ch16_flex_attention::recipes::{
    causal, causal_window, sliding_window, softcap, unchanged,
};

mod common;
use common::{capped_grad, distance_bias, inputs};

/// The kernel rebuilds every weight from the log-sum-exp and adds the gradients tile by
/// tile, in another order than the formula: its gradients (of size about 1) stay within
/// this of the formula's.
const TOLERANCE: f32 = 1e-5;

fn max_abs_diff(a: &FlexGrads, b: &FlexGrads) -> f32 {
    [(&a.q, &b.q), (&a.k, &b.k), (&a.v, &b.v)]
        .iter()
        .flat_map(|(x, y)| {
            assert_eq!(x.sizes(), y.sizes());
            x.to_vec().into_iter().zip(y.to_vec())
        })
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

macro_rules! agrees {
    ($inputs:expr, $tile:expr, $score:expr, $grad:expr, $mask:expr) => {{
        let [q, k, v, g] = $inputs;
        let block_mask =
            BlockMask::new($mask, 1, 1, q.size(2), k.size(2), $tile).unwrap();
        let (tiled, _) =
            flex_kernel_backward(q, k, v, g, &block_mask, $score, $grad, $mask)
                .unwrap();
        let formula =
            flex_attention_backward(q, k, v, g, $score, $grad, $mask).unwrap();
        max_abs_diff(&tiled, &formula)
    }};
}

#[test]
fn kernel_backward_agrees_with_the_formula_for_every_recipe() {
    for kv_heads in [4, 2, 1] {
        let inputs = inputs(kv_heads as u64, 4, kv_heads, 16);
        let diffs = [
            agrees!(&inputs, 4, unchanged, unchanged_grad, causal),
            agrees!(&inputs, 4, unchanged, unchanged_grad, sliding_window(4)),
            agrees!(&inputs, 4, distance_bias, unchanged_grad, causal),
            agrees!(&inputs, 4, softcap(2.0), capped_grad(2.0), causal),
        ];
        for (recipe, diff) in diffs.iter().enumerate() {
            assert!(
                *diff <= TOLERANCE,
                "kv_heads {kv_heads}, recipe {recipe}: {diff}"
            );
        }
    }
}

#[test]
fn kernel_backward_skips_the_empty_tiles() {
    let [q, k, v, g] = inputs(3, 4, 2, 16);
    let (mask, tile) = (causal_window(4), 4);
    let block_mask = BlockMask::new(mask, 1, 1, 16, 16, tile).unwrap();
    let seen_tiles = RefCell::new(HashSet::new());
    let recording_grad =
        |grad: f32, _s: f32, _b: usize, h: usize, q_idx: usize, kv: usize| {
            seen_tiles.borrow_mut().insert((h, q_idx / tile, kv / tile));
            grad
        };
    let (_, visits) = flex_kernel_backward(
        &q,
        &k,
        &v,
        &g,
        &block_mask,
        unchanged,
        recording_grad,
        mask,
    )
    .unwrap();
    let runs = 2 * 4; // batches × heads
    assert_eq!(visits.full, block_mask.count(TileKind::Full) * runs);
    assert_eq!(visits.partial, block_mask.count(TileKind::Partial) * runs);
    assert!(!seen_tiles.borrow().is_empty());
    for &(_, qt, kt) in seen_tiles.borrow().iter() {
        assert_ne!(
            block_mask.kind(0, 0, qt, kt),
            TileKind::Empty,
            "tile ({qt}, {kt})"
        );
    }
}

#[test]
fn a_block_mask_of_other_sizes_is_an_error() {
    let [q, k, v, g] = inputs(5, 4, 2, 8);
    let block_mask = BlockMask::new(causal, 1, 1, 12, 12, 4).unwrap();
    let message = flex_kernel_backward(
        &q,
        &k,
        &v,
        &g,
        &block_mask,
        unchanged,
        unchanged_grad,
        causal,
    )
    .unwrap_err()
    .to_string();
    assert!(message.starts_with("flex_kernel_backward:"), "{message}");
}

proptest! {
    #![proptest_config(quiet(24))]

    /// Any window, tile, length and number of key/value heads, plain and softcapped: the
    /// kernel's gradients stay within the tolerance of the formula's.
    #[test]
    fn kernel_backward_agrees_on_random_windows(
        seed in 0u64..1000,
        tokens in 1usize..20,
        tile in 1usize..9,
        window in 1usize..10,
        kv_heads in 1usize..3,
        capped in any::<bool>(),
    ) {
        let inputs = inputs(seed, 2 * kv_heads, kv_heads, tokens);
        let diff = if capped {
            agrees!(&inputs, tile, softcap(1.5), capped_grad(1.5), causal_window(window))
        } else {
            agrees!(&inputs, tile, unchanged, unchanged_grad, causal_window(window))
        };
        prop_assert!(diff <= TOLERANCE, "the kernel's gradients are {diff} from the formula's, more than {TOLERANCE}");
    }
}
