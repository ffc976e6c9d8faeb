//! One test per exercise, named after it, so `cargo test -p ch14-generation --features
//! exercise NAME` checks just that function. Each checks what PyTorch printed (through the
//! reference output) and properties a hard-coded answer cannot satisfy.

use ch07_multihead_split::heads::split_heads;
use ch14_generation::cache_size::cache_bytes;
use ch14_generation::context_fit::context_that_fits;
use ch14_generation::generate::{generate_cached, generate_recomputing};
use ch14_generation::left_padding::generate_left_padded;
use ch14_generation::{DecoderConfig, KvCache, TinyDecoder};
use course::narrative::step_text;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::bits_difference;
use shared::{Tensor, manual_seed, rand};

const PYTORCH: &str = include_str!("../../../reference/expected/ch14-generation.txt");

/// A small random model: `(n_kv_heads, groups, head_dim, window)` with
/// `n_heads = n_kv_heads · groups`.
fn configs() -> impl Strategy<Value = DecoderConfig> {
    (1usize..4, 1usize..4, 1usize..4, prop::option::of(1usize..5)).prop_map(
        |(n_kv, groups, head_dim, window)| DecoderConfig {
            vocab_size: 12,
            context_length: 12,
            d_model: n_kv * groups * head_dim,
            n_heads: n_kv * groups,
            n_kv_heads: n_kv,
            window,
        },
    )
}

/// A prompt of 1 to 4 ids below 12, and how many tokens to generate (1 to 6).
fn prompts() -> impl Strategy<Value = (Vec<i64>, usize)> {
    (prop::collection::vec(0i64..12, 1..5), 1usize..7)
}

proptest! {
    #![proptest_config(quiet(16))]

    /// Decoding with the cache gives the logits of recomputing every step, bit for bit,
    /// when every product is taken one row at a time: for random models (any grouping of
    /// heads, with and without a window), prompts and lengths.
    #[test]
    fn exercise_decode_step_cached_equals_recomputed_bits(
        config in configs(),
        (prompt, n_new) in prompts(),
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let model = TinyDecoder::new(config);
        let prompt = Tensor::from_vec(prompt.clone(), &[1, prompt.len()]);
        let recomputed = generate_recomputing(&model, &prompt, n_new, TinyDecoder::forward_row_by_row);
        let cached = generate_cached(&model, &prompt, n_new, TinyDecoder::forward_row_by_row);
        prop_assert!(cached.ids == recomputed.ids);
        prop_assert_eq!(bits_difference(&cached.logits, &recomputed.logits), None);
        // Each step's weights cover the cache: one row per head, summing to 1.
        for w in &cached.weights {
            let cached_len = w.size(3);
            prop_assert!(cached_len <= config.window.unwrap_or(usize::MAX));
            for s in w.sum_dim(-1, false).to_vec() {
                prop_assert!((s - 1.0).abs() < 1e-5);
            }
        }
    }
}

#[test]
fn exercise_decode_step_prints_pytorchs_logits() {
    manual_seed(123);
    let model = TinyDecoder::new(ch14_generation::setup::CONFIG);
    let prompt = Tensor::from_vec(ch14_generation::setup::PROMPT.to_vec(), &[1, 3]);
    let cached = generate_cached(&model, &prompt, 6, TinyDecoder::forward);
    let printed =
        step_text(PYTORCH, "Greedy decoding with a KV cache").expect("the step");
    assert!(
        printed.contains(&cached.logits.to_string()),
        "PyTorch printed\n{printed}\nyour cached decoding gives\n{}",
        cached.logits
    );
}

#[test]
fn exercise_cache_bytes_of_real_models() {
    // The reference prints the per-token sizes of Llama 2 7B (multi-head) and Llama 3 8B
    // (8 of 32 heads): one layer's worth times 32 layers, 4 and 2 bytes per value.
    assert_eq!(cache_bytes(32, 32, 128, 1, 4), 1_048_576);
    assert_eq!(cache_bytes(32, 8, 128, 1, 2), 131_072);
    assert!(PYTORCH.contains("1048576"));
    assert!(PYTORCH.contains("131072"));
}

proptest! {
    #![proptest_config(quiet(24))]

    /// The prediction equals the bytes of the caches the model really builds: any number
    /// of key/value heads, head size, window and length (one layer, float32).
    #[test]
    fn exercise_cache_bytes_equals_the_real_cache(
        config in configs(),
        (prompt, n_new) in prompts(),
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let model = TinyDecoder::new(config);
        let attn = &model.attn;
        let x = rand(&[1, prompt.len(), config.d_model]);
        let keys = split_heads(&attn.w_key.forward(&x), attn.n_kv_heads);
        let values = split_heads(&attn.w_value.forward(&x), attn.n_kv_heads);
        let mut cache = KvCache::new(keys, values, config.window);
        for _ in 0..n_new {
            let x_new = rand(&[1, 1, config.d_model]);
            let k = split_heads(&attn.w_key.forward(&x_new), attn.n_kv_heads);
            let v = split_heads(&attn.w_value.forward(&x_new), attn.n_kv_heads);
            cache.append(&k, &v);
        }
        let tokens = (prompt.len() + n_new).min(config.window.unwrap_or(usize::MAX));
        prop_assert_eq!(cache.len(), tokens);
        prop_assert_eq!(
            cache_bytes(1, config.n_kv_heads, attn.head_dim, tokens, 4),
            cache.bytes() as u64
        );
    }
}

proptest! {
    #![proptest_config(quiet(16))]

    /// Two or three prompts of different lengths decoded in one batch: every row writes the
    /// tokens that prompt writes alone, and its logits are those of that prompt decoded
    /// alone by recomputing (to rounding: the products now have more rows), for random
    /// models with and without a window.
    #[test]
    fn exercise_generate_left_padded_rows_decode_as_alone(
        config in configs(),
        prompts in prop::collection::vec(prop::collection::vec(0i64..12, 1..6), 2..4),
        n_new in 1usize..6,
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let model = TinyDecoder::new(config);
        let batched = generate_left_padded(&model, &prompts, n_new);
        let longest = prompts.iter().map(Vec::len).max().unwrap();
        let batch = prompts.len();
        prop_assert_eq!(batched.ids.shape(), [batch, longest + n_new]);
        prop_assert_eq!(batched.logits.shape(), [n_new * batch, config.vocab_size]);
        for (r, prompt) in prompts.iter().enumerate() {
            let alone = Tensor::from_vec(prompt.clone(), &[1, prompt.len()]);
            let alone = generate_recomputing(&model, &alone, n_new, TinyDecoder::forward);
            let row = batched.ids.get(r).slice(0, longest - prompt.len()..);
            prop_assert!(row == alone.ids.get(0), "row {}: {} alone, {} batched", r, alone.ids, row);
            for step in 0..n_new {
                let got = batched.logits.get(step * batch + r);
                let want = alone.logits.get(step);
                prop_assert!(
                    got.allclose(&want, 1e-5, 1e-5, false),
                    "row {}, step {}: {} batched, {} alone", r, step, got, want
                );
            }
        }
    }
}

#[test]
fn exercise_context_that_fits_llama_3_8b_in_16_gib() {
    // Llama 3 8B: 32 layers, 8 key/value heads of 128 features, float16; and the same
    // model with a key/value head per query head (32), as Llama 2 7B has.
    let memory = 16u64 << 30;
    assert_eq!(context_that_fits(32, 8, 128, 2, memory), 131_072);
    assert_eq!(context_that_fits(32, 32, 128, 2, memory), 32_768);
}

proptest! {
    #![proptest_config(quiet(24))]

    /// For any model and budget: a cache of that many tokens fits, one more token does not,
    /// measured on the caches the chapter's model really builds (one layer, float32).
    #[test]
    fn exercise_context_that_fits_the_real_cache(
        config in configs(),
        memory in 0u64..4000,
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let model = TinyDecoder::new(config);
        let attn = &model.attn;
        let tokens = context_that_fits(1, config.n_kv_heads, attn.head_dim, 4, memory);
        let cache_of = |t: usize| {
            let x = rand(&[1, t, config.d_model]);
            let keys = split_heads(&attn.w_key.forward(&x), attn.n_kv_heads);
            let values = split_heads(&attn.w_value.forward(&x), attn.n_kv_heads);
            KvCache::new(keys, values, None).bytes() as u64
        };
        prop_assert!(cache_of(tokens as usize) <= memory, "{} tokens do not fit", tokens);
        prop_assert!(cache_of(tokens as usize + 1) > memory, "{} tokens fit too", tokens + 1);
    }
}
