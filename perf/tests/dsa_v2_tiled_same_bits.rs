//! Version 2 of chapter 18's block-sparse attention equals the listing
//! (`sparse_attention_tiled`, version 1): the same block mask, visits and output bits, for
//! keys kept one by one and a tile at a time.

use shared::testing::bits_difference;
use shared::{manual_seed, randn};

use attention_perf::dsa::v2_tiled_same_bits::sparse_attention_tiled_fast;
use ch18_linear_attention::sparse::{
    index_scores, sparse_attention_tiled, top_k_kept, top_k_tiles_kept,
};

#[test]
fn the_listings_bits_for_keys_kept_one_by_one_and_by_tiles() {
    for (seed, t, tile) in [(1, 40, 8), (2, 37, 5), (3, 64, 16)] {
        manual_seed(seed);
        let (q, k, v) = (randn(&[t, 16]), randn(&[t, 16]), randn(&[t, 12]));
        let (q_index, k_index, w_index) =
            (randn(&[t, 2, 4]), randn(&[t, 4]), randn(&[t, 2]));
        let scores = index_scores(&q_index, &k_index, &w_index);
        for kept in [top_k_kept(&scores, 9), top_k_tiles_kept(&scores, tile, 2)] {
            let (out, block_mask, visits) =
                sparse_attention_tiled(&q, &k, &v, &kept, tile).unwrap();
            let (fast, fast_mask, fast_visits) =
                sparse_attention_tiled_fast(&q, &k, &v, &kept, tile).unwrap();
            assert_eq!(bits_difference(&fast, &out), None, "T = {t}, tile {tile}");
            assert_eq!(fast_mask, block_mask, "T = {t}, tile {tile}");
            assert_eq!(fast_visits, visits, "T = {t}, tile {tile}");
        }
    }
}
