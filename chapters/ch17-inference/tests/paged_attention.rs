//! Paged attention: chapter 16's kernel reading the cache through the block table gives
//! the bits the same kernel gives on the gathered cache, whatever blocks the pool handed
//! out and in whatever order, and lies within the kernel's derived bound of the exact
//! `softmax(q·kᵀ/√d)·v`; bad input is an error that names the operation.

mod common;

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::bits_difference;
use shared::{Tensor, manual_seed, randn};

use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::kernel::flex_kernel;
use ch16_flex_attention::recipes::{
    MaskMod, ScoreMod, causal_window, no_mask, softcap, unchanged,
};
use ch17_inference::paged::{BlockPool, Sequence};
use ch17_inference::paged_attention::{PagedKv, paged_attention};

use common::{LAYERS, exact_and_bounds, scattered_pool, worst};

/// Paged attention and chapter 16's kernel on the gathered cache, for one recipe:
/// `None` if they agree bit for bit (outputs and tiles visited), else what differs.
fn differs(
    q: &Tensor,
    pool: &BlockPool,
    seq: &Sequence,
    layer: usize,
    tile: usize,
    score_mod: impl ScoreMod + Copy,
    mask_mod: impl MaskMod + Copy,
) -> Option<String> {
    let [_, _, queries, _] = q.dims();
    let block_mask =
        BlockMask::new(mask_mod, 1, 1, queries, seq.len(), tile).unwrap();
    let cache = PagedKv::new(pool, seq, layer).unwrap();
    let paged = paged_attention(q, &cache, &block_mask, score_mod, mask_mod).unwrap();
    let gathered = pool.gather(seq, layer).unwrap();
    let (out, visits) = flex_kernel(
        q,
        &gathered.keys,
        &gathered.values,
        &block_mask,
        score_mod,
        mask_mod,
    )
    .unwrap();
    if paged.visits != visits {
        return Some(format!(
            "tiles visited: paged {:?}, gathered {visits:?}",
            paged.visits
        ));
    }
    bits_difference(&paged.out, &out)
}

/// The last `queries` tokens of a sequence of `tokens` attend causally within a window
/// (a prefill of several tokens, or speculative decoding's check).
fn last_tokens_window(
    queries: usize,
    tokens: usize,
    window: usize,
) -> impl MaskMod + Copy {
    let offset = tokens - queries;
    let window = causal_window(window);
    move |b, h, q_idx, kv_idx| window(b, h, q_idx + offset, kv_idx)
}

proptest! {
    #![proptest_config(quiet(32))]

    /// A sequence scattered over a pool in shuffled blocks, its last block partly full,
    /// several batches and grouped heads, any tile: the paged kernel's bits are the
    /// gathered cache's, for plain attention, a causal window and a softcap.
    #[test]
    fn paged_attention_equals_the_kernel_on_the_gathered_cache(
        block_size in 1usize..7,
        tokens in 1usize..40,
        queries in 1usize..4,
        tile in 1usize..9,
        window in 1usize..12,
        [batch, kv_heads, groups] in [1usize..3, 1usize..3, 1usize..3],
        physical in Just((0..48).collect::<Vec<usize>>()).prop_shuffle(),
        seed in any::<u64>(),
    ) {
        let queries = queries.min(tokens);
        manual_seed(seed);
        let (pool, seq) = scattered_pool([batch, kv_heads, tokens, 4, 3], block_size, 48, &physical);
        let q = randn(&[batch, kv_heads * groups, queries, 4]);
        for layer in 0..LAYERS {
            let plain = differs(&q, &pool, &seq, layer, tile, unchanged, no_mask);
            prop_assert!(plain.is_none(), "layer {}, plain attention: {:?}", layer, plain);
            let windowed = differs(&q, &pool, &seq, layer, tile, unchanged, last_tokens_window(queries, tokens, window));
            prop_assert!(windowed.is_none(), "layer {}, causal window {}: {:?}", layer, window, windowed);
            let capped = differs(&q, &pool, &seq, layer, tile, softcap(2.0), no_mask);
            prop_assert!(capped.is_none(), "layer {}, softcap: {:?}", layer, capped);
        }
    }

    /// Three sequences appending in a random interleaving, one of them forked (its
    /// copy-on-write block included): each reads its own blocks, bit for bit as gathered.
    #[test]
    fn sequences_sharing_a_pool_each_read_their_own_blocks(
        block_size in 1usize..6,
        order in prop::collection::vec(0usize..3, 3..40),
        fork_after in 0usize..40,
        tile in 1usize..6,
        seed in any::<u64>(),
    ) {
        manual_seed(seed);
        let mut pool = BlockPool::new(64, block_size, LAYERS).unwrap();
        let mut seqs = vec![Sequence::default(); 3];
        let kv = || -> Vec<(Tensor, Tensor)> {
            (0..LAYERS).map(|_| (randn(&[1, 2, 1, 4]), randn(&[1, 2, 1, 4]))).collect()
        };
        for (step, &s) in order.iter().enumerate() {
            if step == fork_after && !seqs[0].is_empty() {
                let fork = pool.fork(&seqs[0]);
                seqs.push(fork);
            }
            pool.append(&mut seqs[s], step as i64, kv()).unwrap();
        }
        if let Some(fork) = seqs.get_mut(3) {
            pool.append(fork, -1, kv()).unwrap(); // copies a shared, partly full block
        }
        let q = randn(&[1, 4, 1, 4]);
        for (s, seq) in seqs.iter().enumerate().filter(|(_, seq)| !seq.is_empty()) {
            let difference = differs(&q, &pool, seq, 1, tile, unchanged, no_mask);
            prop_assert!(difference.is_none(), "sequence {} with table {:?}: {:?}", s, seq.table, difference);
        }
    }

    /// The paged kernel against the exact attention in `f64`: every output and
    /// log-sum-exp within the bound derived from the inputs (tests/common).
    #[test]
    fn paged_attention_is_within_the_derived_bound_of_the_formula(
        block_size in 1usize..9,
        tokens in 1usize..200,
        tile in 1usize..33,
        d in 1usize..33,
        spread in 0.1f32..6.0,
        physical in Just((0..200).collect::<Vec<usize>>()).prop_shuffle(),
        seed in any::<u64>(),
    ) {
        manual_seed(seed);
        let (pool, seq) = scattered_pool([1, 2, tokens, d, 5], block_size, 200, &physical);
        let q = randn(&[1, 4, 1, d]) * spread;
        let cache = PagedKv::new(&pool, &seq, 0).unwrap();
        let block_mask = BlockMask::new(no_mask, 1, 1, 1, tokens, tile).unwrap();
        let paged = paged_attention(&q, &cache, &block_mask, unchanged, no_mask).unwrap();
        let gathered = pool.gather(&seq, 0).unwrap();
        let (out, lse, out_bound, lse_bound) =
            exact_and_bounds(&q, &gathered.keys, &gathered.values, 0..tokens, tile);
        let (ratio, at) = worst(&paged.out, &out, &out_bound);
        prop_assert!(ratio <= 1.0, "output {:.3} times its bound, {}", ratio, at);
        let (ratio, at) = worst(&paged.lse, &lse, &lse_bound);
        prop_assert!(ratio <= 1.0, "log-sum-exp {:.3} times its bound, {}", ratio, at);
    }
}

#[test]
fn the_bound_is_tight_enough_to_fail() {
    // Attention over all but the last key is outside the bound of attention over all.
    manual_seed(7);
    let physical: Vec<usize> = (0..16).rev().collect();
    let (pool, seq) = scattered_pool([1, 1, 40, 8, 4], 4, 16, &physical);
    let q = randn(&[1, 1, 1, 8]);
    let gathered = pool.gather(&seq, 0).unwrap();
    let (out, _, out_bound, _) =
        exact_and_bounds(&q, &gathered.keys, &gathered.values, 0..40, 4);
    let shorter = Sequence {
        tokens: seq.tokens[..39].to_vec(),
        table: seq.table.clone(),
    };
    let cache = PagedKv::new(&pool, &shorter, 0).unwrap();
    let block_mask = BlockMask::new(no_mask, 1, 1, 1, 39, 4).unwrap();
    let one_key_less =
        paged_attention(&q, &cache, &block_mask, unchanged, no_mask).unwrap();
    let (ratio, at) = worst(&one_key_less.out, &out, &out_bound);
    assert!(ratio > 1.0, "a key left out stays within the bound: {at}");
}

/// The message of an error, which must start with `op`.
fn message_of<T: std::fmt::Debug>(result: shared::Result<T>, op: &str) -> String {
    let message = result.unwrap_err().to_string();
    assert!(message.starts_with(&format!("{op}:")), "{message}");
    message
}

#[test]
fn bad_tables_and_shapes_are_errors_naming_the_op() {
    manual_seed(3);
    let physical: Vec<usize> = (0..8).collect();
    let (pool, seq) = scattered_pool([1, 2, 10, 4, 4], 4, 8, &physical);
    // A table shorter than the sequence.
    let short = Sequence {
        tokens: seq.tokens.clone(),
        table: seq.table[..2].to_vec(),
    };
    let message = message_of(PagedKv::new(&pool, &short, 0), "PagedKv::new");
    assert!(message.contains("2 blocks for 10 tokens"), "{message}");
    // A block outside the pool.
    let outside = Sequence {
        tokens: seq.tokens.clone(),
        table: vec![0, 1, 8],
    };
    let message = message_of(PagedKv::new(&pool, &outside, 0), "PagedKv::new");
    assert!(
        message.contains("block 8, the pool has 8 blocks"),
        "{message}"
    );
    // A block that does not hold the token (block 5 was never written).
    let unwritten = Sequence {
        tokens: seq.tokens.clone(),
        table: vec![0, 1, 5],
    };
    message_of(PagedKv::new(&pool, &unwritten, 0), "PagedKv::new");
    // A layer the pool does not have, an empty sequence.
    message_of(PagedKv::new(&pool, &seq, LAYERS), "PagedKv::new");
    message_of(PagedKv::new(&pool, &Sequence::default(), 0), "PagedKv::new");
    // Queries of another head dimension, or heads not a multiple of the cache's.
    let cache = PagedKv::new(&pool, &seq, 0).unwrap();
    let block_mask = BlockMask::new(no_mask, 1, 1, 1, 10, 4).unwrap();
    for q in [
        randn(&[1, 4, 1, 8]),
        randn(&[1, 3, 1, 4]),
        randn(&[4, 1, 4]),
    ] {
        let result = paged_attention(&q, &cache, &block_mask, unchanged, no_mask);
        let message = message_of(result, "paged_attention");
        assert!(message.contains(&format!("{:?}", q.sizes())), "{message}");
    }
    // A block mask for another number of keys.
    let q = randn(&[1, 4, 1, 4]);
    let wrong_mask = BlockMask::new(no_mask, 1, 1, 1, 12, 4).unwrap();
    let result = paged_attention(&q, &cache, &wrong_mask, unchanged, no_mask);
    message_of(result, "paged_attention");
}
