//! One test per exercise, named after it, so `cargo test -p ch14-generation --features
//! exercise NAME` checks just that function. Each checks what PyTorch printed (through the
//! reference output) and properties a hard-coded answer cannot satisfy.

use ch05_causal::causal_mask;
use ch07_multihead_split::heads::split_heads;
use ch14_generation::cache_size::cache_bytes;
use ch14_generation::generate::{generate_cached, generate_recomputing};
use ch14_generation::gqa::repeat_kv;
use ch14_generation::window::sliding_window_mask;
use ch14_generation::{DecoderConfig, KvCache, Products, TinyDecoder};
use course::narrative::step_text;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, arange, manual_seed, rand};

const PYTORCH: &str = include_str!("../../../reference/expected/ch14-generation.txt");

/// The bits of every element: equal bits, equal floats (and -0.0 differs from 0.0).
fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec().iter().map(|x| x.to_bits()).collect()
}

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

#[test]
fn exercise_repeat_kv_lines_up_the_groups() {
    // Two kv heads, each one token of one feature (its own index), repeated twice.
    let heads = arange(0.0f32, 2.0, 1.0).view(&[1, 2, 1, 1]);
    let repeated = repeat_kv(&heads, 2);
    assert_eq!(repeated.shape(), [1, 4, 1, 1]);
    assert_eq!(repeated.to_vec(), vec![0., 0., 1., 1.]);
    let line = "grouped-query (2 kv heads): query head -> kv head [0, 0, 1, 1]";
    assert!(PYTORCH.contains(line), "the reference prints {line:?}");
}

proptest! {
    #![proptest_config(quiet(24))]

    /// Head `h` of the result is kv head `h / n_rep`, token for token, for any sizes.
    #[test]
    fn exercise_repeat_kv_copies_head_h_over_n_rep(
        (b, n_kv, n_rep, t, hd) in (1usize..3, 1usize..4, 1usize..4, 1usize..4, 1usize..4),
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let x = rand(&[b, n_kv, t, hd]);
        let repeated = repeat_kv(&x, n_rep);
        prop_assert_eq!(repeated.shape(), [b, n_kv * n_rep, t, hd]);
        for h in 0..n_kv * n_rep {
            let got = repeated.select(1, h as i64);
            let want = x.select(1, (h / n_rep) as i64);
            prop_assert_eq!(bits(&got), bits(&want), "query head {}", h);
        }
    }
}

#[test]
fn exercise_sliding_window_mask_as_pytorch_prints_it() {
    let printed = step_text(
        PYTORCH,
        "A sliding window of 4: the hidden keys of 8 tokens",
    )
    .expect("the step is in the reference output");
    let mask = sliding_window_mask(8, Some(4)).float().to_string();
    assert!(
        printed.starts_with(&mask),
        "PyTorch printed\n{printed}\nyour mask prints\n{mask}"
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Query `i` sees key `j` exactly when `i - w < j <= i`.
    #[test]
    fn exercise_sliding_window_mask_hides_outside_the_window(t in 1usize..10, w in 1usize..10) {
        let mask = sliding_window_mask(t, Some(w)).to_vec();
        for i in 0..t {
            for j in 0..t {
                let visible = j <= i && j + w > i;
                prop_assert_eq!(mask[i * t + j], !visible, "query {}, key {}", i, j);
            }
        }
    }

    /// A window at least as long as the sequence hides what the causal mask hides, and no
    /// window at all is the causal mask.
    #[test]
    fn exercise_sliding_window_mask_long_window_is_causal(t in 1usize..10, extra in 0usize..4) {
        prop_assert!(sliding_window_mask(t, Some(t + extra)) == causal_mask(t));
        prop_assert!(sliding_window_mask(t, None) == causal_mask(t));
    }
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
        let recomputed = generate_recomputing(&model, &prompt, n_new, Products::RowByRow);
        let cached = generate_cached(&model, &prompt, n_new, Products::RowByRow);
        prop_assert!(cached.ids == recomputed.ids);
        prop_assert_eq!(bits(&cached.logits), bits(&recomputed.logits));
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
    let model = TinyDecoder::new(ch14_generation::narrative::CONFIG);
    let prompt = Tensor::from_vec(ch14_generation::narrative::PROMPT.to_vec(), &[1, 3]);
    let cached = generate_cached(&model, &prompt, 6, Products::Batched);
    let printed = step_text(PYTORCH, "Greedy decoding with a KV cache").expect("the step");
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
