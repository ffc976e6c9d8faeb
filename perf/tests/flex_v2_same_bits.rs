//! Version 2 of chapter 16's kernel equals the listing (version 1, `flex_kernel_over`): the
//! same additions in the same order, so the same bits, for every recipe, tile and
//! instruction set this processor has.

use std::cell::Cell;

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::simd::Isa;
use shared::testing::bits_difference;
use shared::{Tensor, manual_seed, randn};

use attention_perf::flex::v2_same_bits::flex_kernel_fast_with;
use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::kernel::{KernelOutput, flex_kernel_over};
use ch16_flex_attention::kv_rows::InTensors;
use ch16_flex_attention::recipes::{
    MaskMod, ScoreMod, causal, causal_window, document_mask, no_mask, prefix_lm,
    sliding_window, softcap, unchanged,
};

fn inputs(seed: u64, [heads, kv_heads, tokens, d, d_v]: [usize; 5]) -> [Tensor; 3] {
    manual_seed(seed);
    [
        randn(&[2, heads, tokens, d]),
        randn(&[2, kv_heads, tokens, d]),
        randn(&[2, kv_heads, tokens, d_v]),
    ]
}

/// Whether the fast kernel on `isa` gives the listing's outputs, log-sum-exps and visits
/// bit for bit; the first difference otherwise.
fn same_bits(
    isa: Isa,
    [q, k, v]: &[Tensor; 3],
    tile: usize,
    score_mod: impl ScoreMod + Copy,
    mask_mod: impl MaskMod + Clone,
) -> std::result::Result<(), String> {
    let block_mask =
        BlockMask::new(mask_mod.clone(), 1, 1, q.size(2), k.size(2), tile).unwrap();
    let kv = InTensors::new(k, v).unwrap();
    let listing =
        flex_kernel_over(q, &kv, &block_mask, score_mod, mask_mod.clone()).unwrap();
    let fast =
        flex_kernel_fast_with(isa, q, &kv, &block_mask, score_mod, mask_mod).unwrap();
    let KernelOutput { out, lse, visits } = fast;
    if let Some(diff) = bits_difference(&listing.out, &out) {
        return Err(format!("{isa:?}, tile {tile}: outputs differ: {diff}"));
    }
    if let Some(diff) = bits_difference(&listing.lse, &lse) {
        return Err(format!("{isa:?}, tile {tile}: log-sum-exps differ: {diff}"));
    }
    if listing.visits != visits {
        return Err(format!("{isa:?}, tile {tile}: visits differ"));
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
fn fast_kernel_is_the_listing_bit_for_bit_for_every_recipe() {
    let qkv = inputs(1, [4, 2, 37, 16, 8]);
    for isa in isas() {
        for tile in [1, 3, 8, 16, 64] {
            let checks = [
                same_bits(isa, &qkv, tile, unchanged, no_mask),
                same_bits(isa, &qkv, tile, unchanged, causal),
                same_bits(isa, &qkv, tile, unchanged, sliding_window(5)),
                same_bits(isa, &qkv, tile, unchanged, causal_window(7)),
                same_bits(isa, &qkv, tile, unchanged, document_mask(&[9, 20, 4])),
                same_bits(isa, &qkv, tile, unchanged, prefix_lm(6)),
                same_bits(isa, &qkv, tile, softcap(2.0), causal),
            ];
            for check in checks {
                check.unwrap();
            }
        }
    }
}

#[test]
fn fast_kernel_calls_the_mask_mod_on_partial_tiles_only() {
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
            flex_kernel_fast_with(isa, &q, &kv, &block_mask, unchanged, counting)
                .unwrap();
        assert_eq!(calls.get(), result.visits.partial * 4 * 4, "{isa:?}");
    }
}

#[test]
fn fast_kernel_names_itself_in_shape_errors() {
    let [q, k, v] = inputs(3, [4, 2, 8, 8, 8]);
    let block_mask = BlockMask::new(causal, 1, 1, 12, 12, 4).unwrap();
    let kv = InTensors::new(&k, &v).unwrap();
    let message =
        flex_kernel_fast_with(Isa::detect(), &q, &kv, &block_mask, unchanged, causal)
            .unwrap_err()
            .to_string();
    assert!(message.starts_with("flex_kernel_fast:"), "{message}");
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Any sizes, grouping, window and tile: the same bits as the listing.
    #[test]
    fn fast_kernel_matches_the_listing_bit_for_bit(
        seed in 0u64..1000,
        kv_heads in 1usize..3,
        groups in 1usize..3,
        tokens in 1usize..70,
        d in 1usize..40,
        d_v in 1usize..40,
        tile in 1usize..40,
        window in 1usize..80,
    ) {
        let qkv = inputs(seed, [kv_heads * groups, kv_heads, tokens, d, d_v]);
        for isa in isas() {
            let result = same_bits(isa, &qkv, tile, unchanged, causal_window(window))
                .and_then(|()| same_bits(isa, &qkv, tile, softcap(3.0), sliding_window(window)));
            prop_assert!(result.is_ok(), "{}", result.unwrap_err());
        }
    }
}
