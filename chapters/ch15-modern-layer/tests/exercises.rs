//! One test per exercise, named after it, so `cargo test -p ch15-modern-layer --features
//! exercise NAME` checks just that function. Each checks what PyTorch printed (through the
//! reference output) or the formula, and properties a hard-coded answer cannot satisfy;
//! none calls another exercise.

use ch07_multihead_split::heads::split_heads;
use ch14_generation::Products;
use course::narrative::step_text;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::{assert_same_bits, bits_difference, ulps};
use shared::{Tensor, manual_seed, randn};

use ch15_modern_layer::cache_size::recipe_cache_bytes;
use ch15_modern_layer::model::{generate_cached, generate_recomputing};
use ch15_modern_layer::recipe::CacheCard;
use ch15_modern_layer::setup::{CONFIG, PROMPT};
use ch15_modern_layer::sinks::softmax_with_sink;
use ch15_modern_layer::top_p::top_p;
use ch15_modern_layer::{ModelConfig, Recipe, TinyModel};

const PYTORCH: &str = include_str!("../../../reference/expected/ch15-modern-layer.txt");

/// A recipe without sinks (so that the `qkv` tests do not need `softmax_with_sink`).
fn no_sinks(window: usize, local_per_global: Option<usize>, qk_norm: bool) -> Recipe {
    Recipe {
        sinks: false,
        window,
        local_per_global,
        qk_norm,
        ..Recipe::default()
    }
}

#[test]
fn exercise_qkv_prints_pytorchs_rotated_queries() {
    manual_seed(2026);
    let model = TinyModel::new(CONFIG);
    let prompt = Tensor::from_vec(PROMPT.to_vec(), &[1, PROMPT.len()]);
    let layer = &model.layers[0];
    let x = layer.attn_norm.forward(&model.tok_emb.forward(&prompt));
    let positions: Vec<usize> = (0..PROMPT.len()).collect();
    let (q, _, v) = layer
        .attn
        .qkv(&x, &positions, &Recipe::default(), Products::Batched);
    let rotated = q.select(0, 0).select(0, 0).slice(0, ..3).to_string();
    let printed = step_text(PYTORCH, "RoPE on q and k, after the head split").expect("the step");
    assert!(
        printed.contains(&rotated),
        "PyTorch printed\n{printed}\nyour rotated q[0, 0, :3] is\n{rotated}"
    );
    // The values carry what a token says, not where it is: never turned.
    let plain_v = split_heads(&layer.attn.w_value.forward(&x), layer.attn.n_kv_heads);
    assert_same_bits(&v, &plain_v, "the values should not be rotated");
}

proptest! {
    #![proptest_config(quiet(16))]

    /// A key is turned by its absolute position: the cached generation (one new token at
    /// a time, at its position) gives the recomputed logits bit for bit, with windows and
    /// with or without QK-norm.
    #[test]
    fn exercise_qkv_cached_equals_recomputed(
        window in 1usize..5,
        local in prop::option::of(0usize..3),
        qk_norm in prop::bool::ANY,
        prompt in prop::collection::vec(0i64..12, 1..6),
        n_new in 2usize..6,
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let config = ModelConfig { vocab_size: 12, d_model: 16, n_layers: 2, n_heads: 4, n_kv_heads: 2, d_ff: 32 };
        let model = TinyModel::new(config);
        let recipe = no_sinks(window, local, qk_norm);
        let prompt = Tensor::from_vec(prompt.clone(), &[1, prompt.len()]);
        let plain = generate_recomputing(&model, &prompt, n_new, &recipe, Products::RowByRow);
        let cached = generate_cached(&model, &prompt, n_new, &recipe, Products::RowByRow);
        prop_assert_eq!(bits_difference(&plain.logits, &cached.logits), None);
    }

    /// gpt-oss's order agrees with the formula `e^{s_j} / (e^S + Σ_k e^{s_k})` within 8
    /// float32 steps, for any scores and sinks (each float32 `exp`, the sum of up to 6
    /// terms and the division may each round).
    #[test]
    fn exercise_softmax_with_sink_is_the_formula(
        seed in 0u64..1000,
        (b, h, q, k) in (1usize..3, 1usize..4, 1usize..4, 1usize..6),
    ) {
        manual_seed(seed);
        let scores = randn(&[b, h, q, k]);
        let sinks = randn(&[h]);
        let ours = softmax_with_sink(&scores, &sinks);
        prop_assert_eq!(ours.sizes(), &[b, h, q, k][..]);
        let (s, values, got) = (sinks.to_vec(), scores.to_vec(), ours.to_vec());
        for (row, chunk) in values.chunks(k).enumerate() {
            let sink = s[(row / q) % h] as f64;
            let denom: f64 = chunk.iter().map(|&x| (x as f64).exp()).sum::<f64>() + sink.exp();
            for (j, &x) in chunk.iter().enumerate() {
                let formula = ((x as f64).exp() / denom) as f32;
                let w = got[row * k + j];
                prop_assert!(ulps(formula, w) <= 8, "row {row}: {formula} vs {w}");
            }
        }
    }
}

#[test]
fn exercise_softmax_with_sink_of_minus_infinity_is_the_softmax() {
    manual_seed(5);
    let scores = randn(&[1, 2, 3, 4]);
    let silent = Tensor::from_vec(vec![f32::NEG_INFINITY; 2], &[2]);
    assert_same_bits(
        &softmax_with_sink(&scores, &silent),
        &scores.softmax(-1),
        "",
    );
    // A loud sink takes weight from every key: each row sums to less than 1.
    let loud = Tensor::from_vec(vec![3.0, 0.0], &[2]);
    let sums = softmax_with_sink(&scores, &loud)
        .sum_dim(-1, false)
        .to_vec();
    assert!(sums.iter().all(|&s| s < 1.0), "row sums {sums:?}");
}

#[test]
fn exercise_top_p_keeps_the_nucleus() {
    // Probabilities 0.5, 0.3, 0.2: with p = 0.6 the first two hold 0.8 >= 0.6.
    let logits = Tensor::from_vec(vec![0.5f32.ln(), 0.3f32.ln(), 0.2f32.ln()], &[3]);
    let kept = top_p(&logits, 0.6).to_vec();
    assert!((kept[0] - 0.625).abs() < 1e-6 && (kept[1] - 0.375).abs() < 1e-6);
    assert_eq!(kept[2], 0.0);
    // p = 0.5: the first token alone reaches it.
    assert_eq!(top_p(&logits, 0.5).to_vec(), vec![1.0, 0.0, 0.0]);
}

proptest! {
    #![proptest_config(quiet(32))]

    /// The kept tokens are the likeliest ones, the fewest whose probability reaches p,
    /// renormalised; the likeliest is always kept.
    #[test]
    fn exercise_top_p_is_the_smallest_set_reaching_p(
        logits in prop::collection::vec(-4.0f32..4.0, 2..12),
        p in 0.05f32..1.0,
    ) {
        let n = logits.len();
        let logits = Tensor::from_vec(logits, &[n]);
        let probs = logits.softmax(-1).to_vec();
        let kept = top_p(&logits, p).to_vec();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]));
        let n_kept = kept.iter().filter(|&&x| x > 0.0).count();
        prop_assert!(kept[order[0]] > 0.0);
        let mass: f32 = order[..n_kept].iter().map(|&i| probs[i]).sum();
        let mass_before: f32 = order[..n_kept - 1].iter().map(|&i| probs[i]).sum();
        prop_assert!(mass >= p - 1e-5, "kept {mass} < {p}");
        prop_assert!(mass_before < p + 1e-5, "one fewer already holds {mass_before}");
        for &i in &order[..n_kept] {
            prop_assert!((kept[i] - probs[i] / mass).abs() < 1e-5);
        }
    }
}

#[test]
fn exercise_recipe_cache_bytes_prints_pytorchs() {
    let card = CacheCard {
        layers: CONFIG.n_layers,
        kv_heads: CONFIG.n_kv_heads,
        head_dim: CONFIG.d_model / CONFIG.n_heads,
        bytes_per_value: 4,
        window: 4,
        local_per_global: Some(1),
    };
    let printed = step_text(PYTORCH, "The size of the KV cache").expect("the step");
    let predicted = format!(
        "predicted from its recipe card: {} bytes",
        recipe_cache_bytes(&card, 11)
    );
    assert!(
        printed.contains(&predicted),
        "PyTorch printed\n{printed}\nyou predict\n{predicted}"
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// All layers global is the plain formula; a window no shorter than the text changes
    /// nothing; more local layers never make the cache bigger.
    #[test]
    fn exercise_recipe_cache_bytes_counts_every_layer(
        layers in 1usize..40,
        kv_heads in 1usize..9,
        head_dim in 1usize..129,
        window in 1usize..2000,
        tokens in 1usize..5000,
        local in 0usize..6,
    ) {
        let global = CacheCard { layers, kv_heads, head_dim, bytes_per_value: 2, window, local_per_global: None };
        let all = 2 * layers * kv_heads * head_dim * tokens * 2;
        prop_assert_eq!(recipe_cache_bytes(&global, tokens), all as u64);
        let mixed = CacheCard { local_per_global: Some(local), ..global };
        let wide = CacheCard { window: tokens, ..mixed };
        prop_assert_eq!(recipe_cache_bytes(&wide, tokens), all as u64);
        let locals = (0..layers).filter(|&l| mixed.window_of(l).is_some()).count();
        let saved = locals * 2 * kv_heads * head_dim * tokens.saturating_sub(window) * 2;
        prop_assert_eq!(recipe_cache_bytes(&mixed, tokens), (all - saved) as u64);
    }
}
