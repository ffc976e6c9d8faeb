//! Properties of the chapter's attention and decoding beyond the exercises: grouped-query
//! attention with one key/value head per query head is chapter 7's multi-head attention, a
//! window as long as the sequence is the causal mask, and the batched (PyTorch's) products
//! give cached and recomputed logits that are close but not always equal.

use ch07_multihead_split::multihead::MultiHeadAttention;
use ch14_generation::generate::{generate_cached, generate_recomputing};
use ch14_generation::{DecoderConfig, GroupedQueryAttention, KvCache, TinyDecoder};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::bits_difference;
use shared::testing::close;
use shared::{Tensor, manual_seed, rand};

/// A decoder of 12 tokens with `n_kv` key/value heads shared by `groups` query heads each,
/// 4 features per head.
fn small_config(n_kv: usize, groups: usize, window: Option<usize>) -> DecoderConfig {
    DecoderConfig {
        vocab_size: 12,
        context_length: 12,
        d_model: n_kv * groups * 4,
        n_heads: n_kv * groups,
        n_kv_heads: n_kv,
        window,
    }
}

/// Grouped-query attention's forward pass over a sequence: the formula or its twin.
type AttentionForward = fn(&GroupedQueryAttention, &Tensor) -> (Tensor, KvCache);

proptest! {
    #![proptest_config(quiet(16))]

    /// With as many key/value heads as query heads and no window, the attention is
    /// chapter 7's `MultiHeadAttention` given the same weights, bit for bit.
    #[test]
    fn gqa_with_one_group_per_head_is_chapter_7(
        (b, t, heads, head_dim) in (1usize..3, 1usize..7, 1usize..4, 1usize..4),
        seed in 0u64..1000,
    ) {
        let d = heads * head_dim;
        manual_seed(seed);
        let gqa = GroupedQueryAttention::new(d, heads, heads, None);
        let mut mha = MultiHeadAttention::new(d, d, t, 0.0, heads, false);
        mha.w_query = gqa.w_query.clone();
        mha.w_key = gqa.w_key.clone();
        mha.w_value = gqa.w_value.clone();
        mha.out_proj = gqa.out_proj.clone();
        let x = rand(&[b, t, d]);
        let (ours, _) = gqa.forward(&x);
        prop_assert_eq!(bits_difference(&ours, &mha.forward(&x)), None);
    }

    /// A window at least as long as the sequence changes nothing, in both ways of
    /// computing the products.
    #[test]
    fn a_window_as_long_as_the_sequence_is_causal(
        (t, extra, n_kv, groups) in (1usize..7, 0usize..3, 1usize..3, 1usize..3),
        seed in 0u64..1000,
    ) {
        let d = n_kv * groups * 2;
        manual_seed(seed);
        let mut attn = GroupedQueryAttention::new(d, n_kv * groups, n_kv, None);
        let x = rand(&[1, t, d]);
        let forwards: [AttentionForward; 2] =
            [GroupedQueryAttention::forward, GroupedQueryAttention::forward_row_by_row];
        for forward in forwards {
            attn.window = None;
            let (causal, _) = forward(&attn, &x);
            attn.window = Some(t + extra);
            let (windowed, _) = forward(&attn, &x);
            prop_assert_eq!(bits_difference(&causal, &windowed), None);
        }
    }

    /// The batch-invariant twin computes the formula's forward pass: the same logits up to
    /// rounding, bit for bit on a single token (a one-row product is one row either way),
    /// and the same cache.
    #[test]
    fn the_row_by_row_twin_agrees_with_the_formula(
        (n_kv, groups, window) in (1usize..3, 1usize..3, prop::option::of(1usize..5)),
        tokens in 1usize..8,
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let model = TinyDecoder::new(small_config(n_kv, groups, window));
        let ids = Tensor::from_vec((0..tokens as i64).map(|i| (i * 5) % 12).collect(), &[1, tokens]);
        let (formula, formula_cache) = model.forward(&ids);
        let (twin, twin_cache) = model.forward_row_by_row(&ids);
        prop_assert!(close(&twin, &formula, 1e-4, 1e-5), "twin {} formula {}", twin, formula);
        prop_assert!(close(&twin_cache.keys, &formula_cache.keys, 1e-4, 1e-5));
        if tokens == 1 {
            prop_assert_eq!(bits_difference(&twin, &formula), None);
        }
    }

    /// With PyTorch's batched products the cached logits are those of recomputing up to
    /// rounding (the one-row and many-row products add in different orders), and the
    /// first step, computed by the same prefill, is equal.
    #[test]
    fn batched_cached_is_close_to_recomputed(
        (n_kv, groups, window) in (1usize..3, 1usize..3, prop::option::of(1usize..5)),
        prompt_len in 1usize..5,
        n_new in 1usize..6,
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let model = TinyDecoder::new(small_config(n_kv, groups, window));
        let prompt = Tensor::from_vec((0..prompt_len as i64).collect(), &[1, prompt_len]);
        let recomputed = generate_recomputing(&model, &prompt, n_new, TinyDecoder::forward);
        let cached = generate_cached(&model, &prompt, n_new, TinyDecoder::forward);
        // Compare only as far as both chose the same tokens (a near tie could go either way).
        let same = (0..n_new)
            .take_while(|&s| cached.ids.to_vec()[prompt_len + s] == recomputed.ids.to_vec()[prompt_len + s])
            .count()
            .max(1)
            .min(n_new);
        let c = cached.logits.narrow(0, 0, same);
        let r = recomputed.logits.narrow(0, 0, same);
        prop_assert!(close(&c, &r, 1e-4, 1e-5), "cached {} recomputed {}", c, r);
        prop_assert_eq!(bits_difference(&cached.logits.get(0), &recomputed.logits.get(0)), None);
    }
}

#[test]
fn the_batched_products_differ_in_the_last_bits() {
    // The chapter's model: recomputing and caching pick the same tokens, but some logits
    // differ in their last bits.
    manual_seed(123);
    let model = TinyDecoder::new(ch14_generation::setup::CONFIG);
    let prompt = Tensor::from_vec(ch14_generation::setup::PROMPT.to_vec(), &[1, 3]);
    let recomputed = generate_recomputing(&model, &prompt, 6, TinyDecoder::forward);
    let cached = generate_cached(&model, &prompt, 6, TinyDecoder::forward);
    assert!(cached.ids == recomputed.ids);
    let max_diff = (&cached.logits - &recomputed.logits).abs().max().item();
    assert!(
        max_diff > 0.0 && max_diff < 1e-6,
        "max |difference| {max_diff}"
    );
}

#[test]
#[should_panic(expected = "n_heads (4) must be a multiple of n_kv_heads (3)")]
fn heads_must_group_evenly() {
    let _ = GroupedQueryAttention::new(8, 4, 3, None);
}

/// The rows drawn by `--heatmaps`: one per token fed after the prompt, each a row of
/// weights summing to 1 over the positions up to its own, at most a window of them.
#[test]
fn weight_rows_hold_each_fed_token_over_the_cache() {
    use ch14_generation::setup::{CONFIG, N_NEW, PROMPT, WINDOW};
    let prompt = Tensor::from_vec(PROMPT.to_vec(), &[1, PROMPT.len()]);
    for window in [None, Some(WINDOW)] {
        manual_seed(123);
        let model = TinyDecoder::new(DecoderConfig { window, ..CONFIG });
        let generation =
            generate_cached(&model, &prompt, N_NEW, TinyDecoder::forward);
        let grid = generation.weight_rows(1);
        assert_eq!(grid.sizes(), [N_NEW - 1, PROMPT.len() + N_NEW - 1]);
        for s in 0..N_NEW - 1 {
            let row = grid.get(s).to_vec();
            let position = PROMPT.len() + s;
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{row:?}");
            assert!(row[position + 1..].iter().all(|&w| w == 0.0), "{row:?}");
            let seen = row.iter().filter(|&&w| w > 0.0).count();
            assert!(seen <= window.unwrap_or(usize::MAX), "{row:?}");
        }
        let recomputed =
            generate_recomputing(&model, &prompt, N_NEW, TinyDecoder::forward);
        assert_eq!(recomputed.weight_rows(0).size(0), 0);
    }
}
