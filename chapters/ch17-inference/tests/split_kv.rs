//! Split-KV decoding: one query per head over a long paged cache, cut into parts at any
//! points, each part attended by chapter 16's kernel, merged by the log-sum-exps; the
//! merge lies within the bound derived from the parts' bounds of the exact attention, one
//! part gives the kernel's own bits, and bad input is an error.

mod common;

use std::ops::Range;

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::bits_difference;
use shared::{Tensor, manual_seed, randn};

use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::recipes::{no_mask, unchanged};
use ch17_inference::paged::BlockPool;
use ch17_inference::paged_attention::{PagedKv, paged_attention};
use ch17_inference::split_kv::{
    Part, attend_part, even_parts, merge_parts, split_kv_decode,
};

use common::{exact_and_bounds, merge_bounds, scattered_pool, worst};

/// `tokens` positions cut at the sorted, distinct `cuts` (each in `1..tokens`).
fn parts_at(tokens: usize, cuts: &[usize]) -> Vec<Range<usize>> {
    let mut points: Vec<usize> =
        cuts.iter().map(|c| 1 + c % (tokens - 1).max(1)).collect();
    points.retain(|&c| c < tokens);
    points.sort_unstable();
    points.dedup();
    let starts = std::iter::once(0).chain(points.iter().copied());
    let ends = points.iter().copied().chain(std::iter::once(tokens));
    starts.zip(ends).map(|(s, e)| s..e).collect()
}

/// Checks the merge of `q`'s attention over `parts` of the pool's sequence against the
/// exact attention, within the derived bounds.
fn check_merge(
    q: &Tensor,
    pool: &BlockPool,
    seq: &ch17_inference::paged::Sequence,
    parts: &[Range<usize>],
    tile: usize,
) -> Result<(), TestCaseError> {
    let cache = PagedKv::new(pool, seq, 0).unwrap();
    let gathered = pool.gather(seq, 0).unwrap();
    let (keys, values) = (&gathered.keys, &gathered.values);
    let attended: Vec<Part> = parts
        .iter()
        .map(|keys| attend_part(q, &cache, keys.clone(), tile).unwrap())
        .collect();
    let (mut out_bounds, mut lse_bounds) = (vec![], vec![]);
    for (part, range) in attended.iter().zip(parts) {
        let (out, lse, out_bound, lse_bound) =
            exact_and_bounds(q, keys, values, range.clone(), tile);
        let (ratio, at) = worst(&part.out, &out, &out_bound);
        prop_assert!(
            ratio <= 1.0,
            "part {:?}: output {:.3} times its bound, {}",
            range,
            ratio,
            at
        );
        let (ratio, at) = worst(&part.lse, &lse, &lse_bound);
        prop_assert!(
            ratio <= 1.0,
            "part {:?}: log-sum-exp {:.3} times its bound, {}",
            range,
            ratio,
            at
        );
        out_bounds.push(out_bound);
        lse_bounds.push(lse_bound);
    }
    let merged = merge_parts(&attended).unwrap();
    let (out_bound, lse_bound) = merge_bounds(&attended, &out_bounds, &lse_bounds);
    let (out, lse, _, _) = exact_and_bounds(q, keys, values, 0..seq.len(), tile);
    let (ratio, at) = worst(&merged.out, &out, &out_bound);
    prop_assert!(
        ratio <= 1.0,
        "parts {:?}: merged output {:.3} times its bound, {}",
        parts,
        ratio,
        at
    );
    let (ratio, at) = worst(&merged.lse, &lse, &lse_bound);
    prop_assert!(
        ratio <= 1.0,
        "parts {:?}: merged log-sum-exp {:.3} times its bound, {}",
        parts,
        ratio,
        at
    );
    Ok(())
}

proptest! {
    #![proptest_config(quiet(32))]

    /// A cache of up to 300 tokens in shuffled blocks, cut at random points into parts
    /// of any lengths (one part included): the merge is within its bound of the exact
    /// attention.
    #[test]
    fn merged_parts_are_within_the_derived_bound_of_the_formula(
        tokens in 1usize..300,
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        block_size in 1usize..17,
        tile in 1usize..33,
        spread in 0.1f32..6.0,
        physical in Just((0..300).collect::<Vec<usize>>()).prop_shuffle(),
        seed in any::<u64>(),
    ) {
        manual_seed(seed);
        let (pool, seq) = scattered_pool([2, 2, tokens, 16, 8], block_size, 300, &physical);
        let q = randn(&[2, 4, 1, 16]) * spread;
        check_merge(&q, &pool, &seq, &parts_at(tokens, &cuts), tile)?;
    }

    /// `even_parts` covers the cache once, in order, with lengths that differ by at most
    /// one; `split_kv_decode` is the merge of exactly those parts.
    #[test]
    fn split_kv_decode_merges_even_parts(
        tokens in 1usize..120,
        splits in 1usize..20,
        tile in 1usize..17,
        physical in Just((0..120).collect::<Vec<usize>>()).prop_shuffle(),
        seed in any::<u64>(),
    ) {
        let splits = splits.min(tokens);
        let parts = even_parts(tokens, splits).unwrap();
        prop_assert_eq!(parts.len(), splits);
        let lengths: Vec<usize> = parts.iter().map(|p| p.len()).collect();
        let (shortest, longest) = (lengths.iter().min().unwrap(), lengths.iter().max().unwrap());
        prop_assert!(longest - shortest <= 1, "uneven parts {:?}", parts);
        prop_assert!(parts.windows(2).all(|w| w[0].end == w[1].start) && parts[0].start == 0 && parts[splits - 1].end == tokens, "parts {:?} do not cover 0..{}", parts, tokens);
        manual_seed(seed);
        let (pool, seq) = scattered_pool([1, 1, tokens, 8, 8], 4, 120, &physical);
        let q = randn(&[1, 2, 1, 8]);
        let cache = PagedKv::new(&pool, &seq, 0).unwrap();
        let decoded = split_kv_decode(&q, &cache, splits, tile).unwrap();
        let attended: Vec<Part> = parts.iter().map(|p| attend_part(&q, &cache, p.clone(), tile).unwrap()).collect();
        let merged = merge_parts(&attended).unwrap();
        prop_assert!(bits_difference(&decoded.out, &merged.out).is_none());
        prop_assert!(bits_difference(&decoded.lse, &merged.lse).is_none());
        check_merge(&q, &pool, &seq, &parts, tile)?;
    }
}

#[test]
fn one_part_is_the_kernel_itself() {
    manual_seed(11);
    let physical: Vec<usize> = (0..64).rev().collect();
    let (pool, seq) = scattered_pool([1, 2, 250, 16, 16], 4, 64, &physical);
    let q = randn(&[1, 4, 1, 16]);
    let cache = PagedKv::new(&pool, &seq, 1).unwrap();
    let block_mask = BlockMask::new(no_mask, 1, 1, 1, 250, 16).unwrap();
    let whole = paged_attention(&q, &cache, &block_mask, unchanged, no_mask).unwrap();
    let one = split_kv_decode(&q, &cache, 1, 16).unwrap();
    assert_eq!(bits_difference(&one.out, &whole.out), None);
    assert_eq!(bits_difference(&one.lse, &whole.lse), None);
}

#[test]
fn merging_without_the_log_sum_exps_is_outside_the_bound() {
    // Uneven parts averaged with equal shares, as if each had the same mass: the
    // comparison catches it.
    manual_seed(5);
    let physical: Vec<usize> = (0..32).collect();
    let (pool, seq) = scattered_pool([1, 1, 100, 8, 8], 4, 32, &physical);
    let q = randn(&[1, 1, 1, 8]) * 3.0;
    let cache = PagedKv::new(&pool, &seq, 0).unwrap();
    let gathered = pool.gather(&seq, 0).unwrap();
    let parts = [0..10, 10..100];
    let attended: Vec<Part> = parts
        .iter()
        .map(|p| attend_part(&q, &cache, p.clone(), 8).unwrap())
        .collect();
    let (mut out_bounds, mut lse_bounds) = (vec![], vec![]);
    for range in &parts {
        let (_, _, out_bound, lse_bound) =
            exact_and_bounds(&q, &gathered.keys, &gathered.values, range.clone(), 8);
        out_bounds.push(out_bound);
        lse_bounds.push(lse_bound);
    }
    let (out_bound, _) = merge_bounds(&attended, &out_bounds, &lse_bounds);
    let (out, _, _, _) =
        exact_and_bounds(&q, &gathered.keys, &gathered.values, 0..100, 8);
    let averaged = (&attended[0].out + &attended[1].out) * 0.5;
    let (ratio, at) = worst(&averaged, &out, &out_bound);
    assert!(ratio > 1.0, "equal shares stay within the bound: {at}");
    let (ratio, at) = worst(&merge_parts(&attended).unwrap().out, &out, &out_bound);
    assert!(ratio <= 1.0, "{at}");
}

/// The message of an error, which must start with `op`.
fn message_of<T: std::fmt::Debug>(result: shared::Result<T>, op: &str) -> String {
    let message = result.unwrap_err().to_string();
    assert!(message.starts_with(&format!("{op}:")), "{message}");
    message
}

#[test]
fn bad_splits_and_parts_are_errors_naming_the_op() {
    manual_seed(2);
    let physical: Vec<usize> = (0..4).collect();
    let (pool, seq) = scattered_pool([1, 2, 7, 4, 4], 2, 4, &physical);
    let cache = PagedKv::new(&pool, &seq, 0).unwrap();
    let q = randn(&[1, 2, 1, 4]);
    let message = message_of(split_kv_decode(&q, &cache, 0, 4), "split_kv_decode");
    assert!(
        message.contains("0 parts of a cache of 7 tokens"),
        "{message}"
    );
    message_of(split_kv_decode(&q, &cache, 8, 4), "split_kv_decode");
    let wrong_d = randn(&[1, 2, 1, 5]);
    let message =
        message_of(split_kv_decode(&wrong_d, &cache, 2, 4), "split_kv_decode");
    assert!(message.contains("[1, 2, 1, 5]"), "{message}");
    message_of(attend_part(&q, &cache, 5..9, 4), "attend_part");
    message_of(attend_part(&q, &cache, 3..3, 4), "attend_part");
    message_of(merge_parts(&[]), "merge_parts");
    let a = attend_part(&q, &cache, 0..3, 4).unwrap();
    let b = attend_part(&randn(&[1, 2, 2, 4]), &cache, 3..7, 4).unwrap();
    let message = message_of(merge_parts(&[a, b]), "merge_parts");
    assert!(message.contains("[1, 2, 2, 4]"), "{message}");
}
