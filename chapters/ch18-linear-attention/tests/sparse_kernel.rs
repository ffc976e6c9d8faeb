//! The long-length DSA kernel: its selection is a top k (every kept key scores at least as
//! well as every dropped one, ties to the earlier key), it keeps what the chapter's
//! `top_k_kept` keeps, its output is the chapter's sparse attention head by head within
//! chapter 16's kernel-against-formula tolerance, and bad shapes are errors that name it.

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed, randn};

use ch18_linear_attention::sparse::{index_scores, sparse_attention, top_k_kept};
use ch18_linear_attention::sparse_kernel::{
    Indexer, dsa_kernel, index_scores_of_tile, keep_top_k,
};

/// Chapter 16's tolerance between a tiled kernel and the formula, for inputs of size 1.
const TOLERANCE: f32 = 2e-6;

/// Index inputs whose scores are all positive, so no two are equal: the indexer's ReLU
/// gives many exact ties at 0 otherwise, and which of tied keys a selection keeps is a
/// convention.
fn positive_indexer(t: usize) -> [Tensor; 3] {
    [
        randn(&[t, 2, 4]).abs(),
        randn(&[t, 4]).abs(),
        randn(&[t, 2]).abs(),
    ]
}

proptest! {
    #![proptest_config(quiet(64))]

    /// Scores drawn from a few values, so ties are everywhere: `keep_top_k` keeps
    /// `min(k, n)` keys in increasing order, none scores below a dropped key, and of keys
    /// scoring as the last kept one, the earliest are kept.
    #[test]
    fn keep_top_k_is_a_top_k_with_ties_to_the_earlier_key(
        scores in prop::collection::vec(0u8..4, 0..40), top_k in 1usize..50,
    ) {
        let scores: Vec<f32> = scores.iter().map(|&s| s as f32).collect();
        let kept = keep_top_k(&scores, top_k);
        prop_assert_eq!(kept.len(), top_k.min(scores.len()), "keep_top_k kept the wrong number of keys: {:?}", kept);
        prop_assert!(kept.windows(2).all(|w| w[0] < w[1]), "the kept keys are not in increasing order: {:?}", kept);
        for dropped in (0..scores.len()).filter(|j| !kept.contains(j)) {
            for &k in &kept {
                prop_assert!(scores[k] >= scores[dropped], "key {} (score {}) kept over key {} (score {})", k, scores[k], dropped, scores[dropped]);
                if scores[k] == scores[dropped] {
                    prop_assert!(k < dropped, "kept {} over the earlier {}", k, dropped);
                }
            }
        }
    }

    /// For any length, heads, top k and tile, the kernel keeps the keys `top_k_kept` keeps and
    /// equals the chapter's sparse attention for every head.
    #[test]
    fn the_kernel_is_sparse_attention_head_by_head(
        seed in 0u64..10_000, t in 1usize..40, heads in 1usize..4, top_k in 1usize..12,
        tile in 1usize..20,
    ) {
        manual_seed(seed);
        let (q, k, v) = (randn(&[t, heads, 8]), randn(&[t, 8]), randn(&[t, 8]));
        let [q_index, k_index, w] = positive_indexer(t);
        let indexer = Indexer { q: &q_index, k: &k_index, w: &w };
        let out = dsa_kernel(&q, &k, &v, &indexer, top_k, tile).unwrap();
        let kept = top_k_kept(&index_scores(&q_index, &k_index, &w), top_k);
        for h in 0..heads as i64 {
            let expected = sparse_attention(&q.select(1, h), &k, &v, &kept);
            let gap = (&out.select(1, h) - &expected).abs().max().item();
            prop_assert!(gap <= TOLERANCE, "head {}: the kernel is {} from sparse attention, more than {}", h, gap, TOLERANCE);
        }
    }
}

#[test]
fn the_selection_is_top_k_kept_row_by_row() {
    manual_seed(18);
    let (t, top_k) = (50, 7);
    let [q_index, k_index, w] = positive_indexer(t);
    let kept = top_k_kept(&index_scores(&q_index, &k_index, &w), top_k).to_vec();
    let tile = index_scores_of_tile(&q_index, &k_index, &w, 20..30).to_vec();
    for (row, i) in tile.chunks(30).zip(20..30) {
        let expected: Vec<usize> = (0..t).filter(|&j| kept[i * t + j]).collect();
        assert_eq!(keep_top_k(&row[..=i], top_k), expected, "query {i}");
    }
}

#[test]
fn queries_that_see_no_more_than_k_keys_are_dense_attention() {
    manual_seed(7);
    let t = 6;
    let (q, k, v) = (randn(&[t, 2, 4]), randn(&[t, 4]), randn(&[t, 4]));
    let [q_index, k_index, w] = positive_indexer(t);
    let indexer = Indexer {
        q: &q_index,
        k: &k_index,
        w: &w,
    };
    let sparse = dsa_kernel(&q, &k, &v, &indexer, t, 4).unwrap();
    let all = top_k_kept(&index_scores(&q_index, &k_index, &w), t);
    assert!(
        all.to_vec()
            .iter()
            .enumerate()
            .all(|(e, &kept)| kept == (e % t <= e / t))
    );
    for h in 0..2 {
        let dense = sparse_attention(&q.select(1, h), &k, &v, &all);
        let gap = (&sparse.select(1, h) - &dense).abs().max().item();
        assert!(gap <= TOLERANCE, "head {h}: differ by {gap}");
    }
}

#[test]
fn bad_shapes_and_sizes_are_errors_that_name_the_kernel() {
    let (t, d) = (5, 4);
    let (q, k, v) = (randn(&[t, 2, d]), randn(&[t, d]), randn(&[t, d]));
    let [q_index, k_index, w] = positive_indexer(t);
    let indexer = Indexer {
        q: &q_index,
        k: &k_index,
        w: &w,
    };
    let short_keys = randn(&[t - 1, d]);
    let message = dsa_kernel(&q, &short_keys, &v, &indexer, 2, 2)
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("dsa_kernel: shapes q [5, 2, 4], k [4, 4]"),
        "{message}"
    );
    let wide_keys = randn(&[t, d + 1]);
    assert!(dsa_kernel(&q, &wide_keys, &v, &indexer, 2, 2).is_err());
    let message = dsa_kernel(&q, &k, &v, &indexer, 0, 2)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("top_k and tile must be at least 1"),
        "{message}"
    );
    assert!(dsa_kernel(&q, &k, &v, &indexer, 2, 0).is_err());
    let bad_weights = randn(&[t, 3]);
    let indexer = Indexer {
        q: &q_index,
        k: &k_index,
        w: &bad_weights,
    };
    assert!(dsa_kernel(&q, &k, &v, &indexer, 2, 2).is_err());
}

#[test]
fn no_tokens_give_no_outputs() {
    let empty = |shape: &[usize]| Tensor::from_vec(vec![], shape);
    let (q, k, v) = (empty(&[0, 3, 4]), empty(&[0, 4]), empty(&[0, 5]));
    let (qi, ki, w) = (empty(&[0, 2, 4]), empty(&[0, 4]), empty(&[0, 2]));
    let indexer = Indexer {
        q: &qi,
        k: &ki,
        w: &w,
    };
    let out = dsa_kernel(&q, &k, &v, &indexer, 4, 4).unwrap();
    assert_eq!(out.shape(), [0, 3, 5]);
}
