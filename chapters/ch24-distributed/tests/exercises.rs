//! The exercises' tests: `exercise_NAME*` for the exercise `NAME` of `exercises/hints.md`.
//! Each checks the article's numbers, and a property test checks every size against a
//! count that walks the causal mask itself, which a hard-coded answer cannot pass.

use ch24_distributed::block_kind::{BlockKind, classify_block};
use ch24_distributed::counts::products_of_rank;
use ch24_distributed::ring_bytes::ring_bytes;
use ch24_distributed::setup::{ARTICLE, Sizes};
use ch24_distributed::shards::Layout;
use ch24_distributed::zigzag::zigzag_chunks;
use proptest::prelude::*;

/// Query-key pairs that rank `rank` computes, walking every query and key: the count
/// the exercise's formula must give.
fn walked(sizes: Sizes, world: usize, layout: Layout, rank: usize) -> u64 {
    let len = sizes.tokens / layout.chunks(world);
    let mut pairs = 0u64;
    for chunk in layout.chunks_of(rank, world) {
        for query in chunk * len..(chunk + 1) * len {
            pairs += query as u64 + 1; // keys 0..=query
        }
    }
    pairs * sizes.heads as u64
}

#[test]
fn exercise_classify_block_of_every_pair_of_chunks() {
    for q_chunk in 0..6 {
        for kv_chunk in 0..6 {
            let expected = match kv_chunk {
                k if k > q_chunk => BlockKind::Skip,
                k if k == q_chunk => BlockKind::Diagonal,
                _ => BlockKind::Full,
            };
            let got = classify_block(q_chunk, kv_chunk);
            assert_eq!(
                got, expected,
                "queries of chunk {q_chunk}, keys of chunk {kv_chunk}: got {got:?}, \
                 expected {expected:?}"
            );
        }
    }
}

proptest! {
    #[test]
    fn exercise_classify_block_matches_the_causal_mask(q_chunk in 0usize..64, kv_chunk in 0usize..64, len in 2usize..5) {
        // Walk the block's entries: how many of its len × len pairs does the mask show? (With
        // two tokens or more a chunk, the diagonal block shows some and hides some.)
        let seen = (0..len).flat_map(|i| (0..len).map(move |j| (i, j)))
            .filter(|&(i, j)| kv_chunk * len + j <= q_chunk * len + i)
            .count();
        let expected = match seen {
            0 => BlockKind::Skip,
            s if s == len * len => BlockKind::Full,
            _ => BlockKind::Diagonal,
        };
        let got = classify_block(q_chunk, kv_chunk);
        prop_assert!(got == expected, "chunks {q_chunk} and {kv_chunk} of {len} tokens: got {got:?}, the mask shows {seen} of {} pairs", len * len);
    }

    #[test]
    fn exercise_zigzag_chunks_give_every_chunk_once_and_even_work(world in 1usize..17) {
        let mut owner = vec![None; 2 * world];
        for rank in 0..world {
            let [early, late] = zigzag_chunks(rank, world);
            prop_assert!(early < late && late < 2 * world,
                "rank {rank} of {world}: chunks {early} and {late}, expected the earlier first, both below {}", 2 * world);
            prop_assert_eq!(early + late, 2 * world - 1,
                "rank {} of {}: chunks {} and {} do not mirror each other", rank, world, early, late);
            for c in [early, late] {
                prop_assert!(owner[c].is_none(), "chunk {c} held by ranks {:?} and {rank}", owner[c]);
                owner[c] = Some(rank);
            }
        }
    }
}

#[test]
fn exercise_products_of_rank_at_the_articles_sizes() {
    let contiguous: Vec<u64> = (0..4)
        .map(|r| products_of_rank(ARTICLE, 4, Layout::Contiguous, r))
        .collect();
    assert_eq!(
        contiguous,
        [263_168, 787_456, 1_311_744, 1_836_032],
        "contiguous shards, 1024 tokens, 8 heads, 4 ranks"
    );
    let zigzag: Vec<u64> = (0..4)
        .map(|r| products_of_rank(ARTICLE, 4, Layout::Zigzag, r))
        .collect();
    assert_eq!(
        zigzag, [1_049_600; 4],
        "zigzag shards, 1024 tokens, 8 heads, 4 ranks"
    );
}

proptest! {
    #[test]
    fn exercise_products_of_rank_count_the_causal_mask(world in 1usize..9, len in 1usize..9, heads in 1usize..5, zigzag: bool) {
        let layout = if zigzag { Layout::Zigzag } else { Layout::Contiguous };
        let sizes = Sizes { tokens: len * layout.chunks(world), heads, head_dim: 4 };
        for rank in 0..world {
            let got = products_of_rank(sizes, world, layout, rank);
            let expected = walked(sizes, world, layout, rank);
            prop_assert_eq!(got, expected, "{:?} on rank {} of {}, {:?}", sizes, rank, world, layout);
        }
    }

    #[test]
    fn exercise_ring_bytes_count_every_send(world in 1usize..9, len in 1usize..9, kv_heads in 1usize..9, head_dim in 1usize..65) {
        let tokens = world * len;
        // Walk the ring: every step but the last, keys then values of one block move on.
        let mut sent = 0u64;
        for _step in 0..world - 1 {
            for _tensor in ["keys", "values"] {
                sent += (len * kv_heads * head_dim * 4) as u64;
            }
        }
        let got = ring_bytes(tokens, kv_heads, head_dim, world);
        prop_assert_eq!(got, sent, "{} tokens, {} key/value heads of {}, {} ranks", tokens, kv_heads, head_dim, world);
    }
}

#[test]
fn exercise_ring_bytes_at_the_articles_sizes() {
    assert_eq!(ring_bytes(1024, 8, 64, 4), 3_145_728, "8 key/value heads");
    assert_eq!(ring_bytes(1024, 2, 64, 4), 786_432, "2 key/value heads");
}
