//! Sparse attention by chapter 16's tiled kernel: for any selection (keys picked one by one
//! or a tile at a time) the kernel's output stays within chapter 16's kernel-against-formula
//! tolerance of softmax over the kept keys, and it reads exactly the tiles that hold a kept
//! key. Block selection keeps whole tiles, at most `top_tiles` per tile of queries.

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed, randn};

use ch16_flex_attention::block_mask::TileKind;
use ch18_linear_attention::sparse::{
    Kept, index_scores, sparse_attention, sparse_attention_tiled, top_k_kept,
    top_k_tiles_kept,
};

/// Chapter 16's tolerance between its tiled kernel and the formula.
const TOLERANCE: f32 = 2e-6;

/// Which tiles hold a kept key, row by row of tiles.
fn tiles_with_a_kept_key(kept: &Kept, tile: usize) -> Vec<bool> {
    let t = kept.size(0);
    let n = t.div_ceil(tile);
    let mut has = vec![false; n * n];
    for (e, &k) in kept.to_vec().iter().enumerate() {
        if k {
            has[(e / t / tile) * n + (e % t) / tile] = true;
        }
    }
    has
}

fn inputs(t: usize) -> ([Tensor; 3], Tensor) {
    let (q, k, v) = (randn(&[t, 8]), randn(&[t, 8]), randn(&[t, 8]));
    let scores = index_scores(&randn(&[t, 2, 4]), &randn(&[t, 4]), &randn(&[t, 2]));
    ([q, k, v], scores)
}

fn check(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    kept: &Kept,
    tile: usize,
) -> Result<(), TestCaseError> {
    let (tiled, block_mask, visits) =
        sparse_attention_tiled(q, k, v, kept, tile).unwrap();
    let gap = (&tiled - &sparse_attention(q, k, v, kept))
        .abs()
        .max()
        .item();
    prop_assert!(
        gap <= TOLERANCE,
        "the tiled kernel is {} from sparse attention, more than {}",
        gap,
        TOLERANCE
    );
    let has = tiles_with_a_kept_key(kept, tile);
    let n = block_mask.q_tiles();
    for (e, &h) in has.iter().enumerate() {
        let kind = block_mask.kind(0, 0, e / n, e % n);
        prop_assert_eq!(
            kind != TileKind::Empty,
            h,
            "tile {:?} is {:?}, but it {} a kept key",
            (e / n, e % n),
            kind,
            if h { "holds" } else { "holds no" }
        );
    }
    prop_assert_eq!(
        visits.full + visits.partial,
        has.iter().filter(|&&h| h).count(),
        "the kernel did not read exactly the tiles that hold a kept key"
    );
    Ok(())
}

proptest! {
    #![proptest_config(quiet(32))]

    #[test]
    fn the_kernel_reads_exactly_the_kept_keys_tiles(
        seed in any::<u64>(), t in 1usize..33, top_k in 1usize..8, tile in 1usize..9,
    ) {
        manual_seed(seed);
        let ([q, k, v], scores) = inputs(t);
        check(&q, &k, &v, &top_k_kept(&scores, top_k), tile)?;
    }

    #[test]
    fn block_selection_keeps_whole_tiles(
        seed in any::<u64>(), t in 1usize..33, top_tiles in 1usize..4, tile in 1usize..9,
    ) {
        manual_seed(seed);
        let ([q, k, v], scores) = inputs(t);
        let kept = top_k_tiles_kept(&scores, tile, top_tiles);
        check(&q, &k, &v, &kept, tile)?;
        // At most top_tiles tiles per tile of queries, and each query keeps a key.
        let has = tiles_with_a_kept_key(&kept, tile);
        let n = t.div_ceil(tile);
        for row in has.chunks(n) {
            prop_assert!(row.iter().filter(|&&h| h).count() <= top_tiles, "a tile of queries keeps more than {} tiles of keys", top_tiles);
        }
        for (i, row) in kept.to_vec().chunks(t).enumerate() {
            prop_assert!(row.iter().any(|&x| x), "query {} keeps no key", i);
        }
    }
}

#[test]
fn a_block_mask_of_another_size_is_an_error() {
    manual_seed(18);
    let ([q, k, v], scores) = inputs(8);
    let kept = top_k_kept(&scores, 3);
    let short = |x: &Tensor| x.slice(0, ..6);
    assert!(
        sparse_attention_tiled(&short(&q), &short(&k), &short(&v), &kept, 4).is_err()
    );
}
