//! Properties of the chapter's layer beyond its printed output: decoding with the cache
//! equals recomputing bit for bit when every product takes one query row at a time, every
//! switch of the recipe changes the logits, and the formulas agree with the orders in which
//! PyTorch computes them.

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::{assert_same_bits, bits_difference, same_bits, ulps};
use shared::{Tensor, manual_seed, ones, rand, randn};

use ch14_generation::window::sliding_window_mask;
use ch15_modern_layer::attention::streaming_mask;
use ch15_modern_layer::gate::sigmoid;
use ch15_modern_layer::model::{
    generate_cached, generate_recomputing, generate_sampled,
};
use ch15_modern_layer::rope::{apply_rope, inv_freq, rope_tables};
use ch15_modern_layer::sampling::{
    Sampler, min_p, next_token_probs, repetition_penalty, top_k,
};
use ch15_modern_layer::setup::{CONFIG, PROMPT};
use ch15_modern_layer::sinks::softmax_with_sink;
use ch15_modern_layer::softcap::softcap;
use ch15_modern_layer::swiglu::silu;
use ch15_modern_layer::{ModelConfig, Recipe, TinyModel};

/// A small model: `(n_kv_heads, groups, head_dim / 2, layers, d_ff)`.
fn configs() -> impl Strategy<Value = ModelConfig> {
    (1usize..3, 1usize..3, 1usize..4, 1usize..4, 1usize..3).prop_map(
        |(n_kv, groups, half, n_layers, ff)| ModelConfig {
            vocab_size: 12,
            d_model: n_kv * groups * 2 * half,
            n_layers,
            n_heads: n_kv * groups,
            n_kv_heads: n_kv,
            d_ff: 32 * ff,
        },
    )
}

/// Any recipe: every switch on or off, windows of 1 to 4, 0 to 2 StreamingLLM sink tokens,
/// 0 to 2 local layers per global, with or without the output gate.
fn recipes() -> impl Strategy<Value = Recipe> {
    (
        prop::bool::ANY,
        prop::bool::ANY,
        prop::bool::ANY,
        prop::option::of(1.0f32..8.0),
        prop::bool::ANY,
        1usize..5,
        0usize..3,
        prop::option::of(0usize..3),
        prop::bool::ANY,
    )
        .prop_map(
            |(
                big_theta,
                llama31_scaling,
                qk_norm,
                softcap,
                sinks,
                window,
                sink_tokens,
                local,
                output_gate,
            )| {
                Recipe {
                    theta: if big_theta { 500_000.0 } else { 10_000.0 },
                    llama31_scaling,
                    qk_norm,
                    softcap,
                    sinks,
                    window,
                    sink_tokens,
                    local_per_global: local,
                    output_gate,
                }
            },
        )
}

proptest! {
    #![proptest_config(quiet(24))]

    /// One query row at a time, the cached generation (rotated keys stored, a rolling
    /// buffer on local layers, positions absolute) gives the recomputed logits bit for bit,
    /// whatever the recipe.
    #[test]
    fn cached_equals_recomputed_row_by_row(
        config in configs(),
        recipe in recipes(),
        prompt in prop::collection::vec(0i64..12, 1..6),
        n_new in 1usize..6,
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let model = TinyModel::new(config);
        let prompt = Tensor::from_vec(prompt.clone(), &[1, prompt.len()]);
        let plain = generate_recomputing(&model, &prompt, n_new, &recipe, TinyModel::forward_row_by_row);
        let cached = generate_cached(&model, &prompt, n_new, &recipe, TinyModel::forward_row_by_row);
        prop_assert_eq!(plain.ids.to_vec(), cached.ids.to_vec(), "the cached generation wrote other tokens than the recomputed one");
        prop_assert_eq!(bits_difference(&cached.logits, &plain.logits), None, "the cached logits are not the recomputed ones bit for bit");
        // Local layers keep the last `window` keys and the first `sink_tokens` before
        // them, global ones all of them.
        let fed = prompt.size(1) + n_new - 1;
        for (i, cache) in cached.caches.iter().enumerate() {
            let expected = recipe.window_of(i).map_or(fed, |w| {
                w.min(fed) + recipe.sink_tokens.min(fed.saturating_sub(w))
            });
            prop_assert_eq!(cache.len(), expected, "layer {} caches the wrong number of keys after {} tokens", i, fed);
        }
    }

    /// The batch-invariant twin agrees with the formula: within rounding on any prompt, bit
    /// for bit on one token (one row is one row either way).
    #[test]
    fn forward_row_by_row_agrees_with_forward(
        config in configs(),
        recipe in recipes(),
        prompt in prop::collection::vec(0i64..12, 1..7),
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let model = TinyModel::new(config);
        let prompt = Tensor::from_vec(prompt.clone(), &[1, prompt.len()]);
        let (formula, _) = model.forward(&prompt, &recipe);
        let (rows, _) = model.forward_row_by_row(&prompt, &recipe);
        let diff = (&formula - &rows).abs().max().item();
        prop_assert!(diff < 1e-4, "row by row the logits are {diff} from the formula's, more than 1e-4");
        if prompt.size(1) == 1 {
            prop_assert_eq!(bits_difference(&rows, &formula), None, "on one token the twin's logits are not the formula's bit for bit");
        }
    }

    /// With PyTorch's batched products the cached logits are close to the recomputed ones.
    #[test]
    fn cached_is_close_to_recomputed_batched(
        config in configs(),
        recipe in recipes(),
        prompt in prop::collection::vec(0i64..12, 1..6),
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let model = TinyModel::new(config);
        let prompt = Tensor::from_vec(prompt.clone(), &[1, prompt.len()]);
        let plain = generate_recomputing(&model, &prompt, 4, &recipe, TinyModel::forward);
        let cached = generate_cached(&model, &prompt, 4, &recipe, TinyModel::forward);
        let diff = (&plain.logits - &cached.logits).abs().max().item();
        prop_assert!(diff < 1e-4, "with batched products the cached logits are {diff} from the recomputed ones, more than 1e-4");
    }

    /// Drawing from top-k 1 is greedy decoding, whatever the model, recipe and seed: one
    /// token keeps all the probability.
    #[test]
    fn sampling_top_k_1_is_greedy(
        config in configs(),
        recipe in recipes(),
        prompt in prop::collection::vec(0i64..12, 1..6),
        n_new in 1usize..5,
        seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let model = TinyModel::new(config);
        let prompt = Tensor::from_vec(prompt.clone(), &[1, prompt.len()]);
        let greedy = generate_cached(&model, &prompt, n_new, &recipe, TinyModel::forward);
        let one = Sampler { top_k: Some(1), ..Sampler::PLAIN };
        let sampled = generate_sampled(&model, &prompt, n_new, &recipe, &one);
        prop_assert_eq!(sampled.ids.to_vec(), greedy.ids.to_vec(), "drawing from top-k 1 is not greedy decoding");
    }

    /// min-p keeps exactly the tokens at least `p_base` times as likely as the likeliest,
    /// and renormalises them.
    #[test]
    fn min_p_keeps_the_tokens_near_the_likeliest(
        logits in prop::collection::vec(-4.0f32..4.0, 2..12),
        p_base in 0.0f32..1.0,
    ) {
        let n = logits.len();
        let logits = Tensor::from_vec(logits, &[n]);
        let probs = logits.softmax(-1).to_vec();
        let largest = probs.iter().cloned().fold(0.0, f32::max);
        let kept = min_p(&logits, p_base).to_vec();
        let mass: f32 = probs.iter().zip(&kept).filter(|(_, k)| **k > 0.0).map(|(p, _)| p).sum();
        for (p, k) in probs.iter().zip(&kept) {
            prop_assert_eq!(*k > 0.0, *p >= p_base * largest, "min-p kept or dropped a token of probability {} wrongly (the largest is {})", p, largest);
            if *k > 0.0 {
                prop_assert!((k - p / mass).abs() < 1e-5, "min-p gives a kept token {}, not its renormalised probability {}", k, p / mass);
            }
        }
    }

    /// The penalty lowers exactly the seen tokens' logits: a positive one divided, a
    /// negative one multiplied; the others are untouched.
    #[test]
    fn repetition_penalty_lowers_the_seen_tokens(
        logits in prop::collection::vec(-4.0f32..4.0, 2..12),
        seen in prop::collection::vec(0usize..12, 0..6),
        penalty in 1.0f32..3.0,
    ) {
        let n = logits.len();
        let seen: Vec<i64> = seen.into_iter().filter(|&i| i < n).map(|i| i as i64).collect();
        let after = repetition_penalty(&Tensor::from_vec(logits.clone(), &[n]), &seen, penalty)
            .to_vec();
        for (i, (&x, &y)) in logits.iter().zip(&after).enumerate() {
            if seen.contains(&(i as i64)) {
                let expected = if x < 0.0 { x * penalty } else { x / penalty };
                prop_assert_eq!(y, expected, "the penalty turned the seen token {}'s logit {} into {}, not {}", i, x, y, expected);
                prop_assert!(y <= x, "the penalty raised the seen token {}'s logit from {} to {}", i, x, y);
            } else {
                prop_assert_eq!(y, x, "the penalty changed the unseen token {}'s logit", i);
            }
        }
    }

    /// The chained filters keep what each keeps: top-k then min-p leaves at most `k`
    /// tokens, all among the `k` likeliest, summing to 1.
    #[test]
    fn chained_filters_keep_what_each_keeps(
        logits in prop::collection::vec(-4.0f32..4.0, 2..12),
        k in 1usize..12,
        p_base in 0.0f32..1.0,
        temperature in 0.25f32..4.0,
    ) {
        let n = logits.len();
        let k = k.min(n);
        let logits = Tensor::from_vec(logits, &[n]);
        let sampler = Sampler { temperature, top_k: Some(k), min_p: Some(p_base), ..Sampler::PLAIN };
        let probs = next_token_probs(&logits, &[], &sampler).to_vec();
        let by_k = top_k(&logits, k).to_vec();
        let kept = probs.iter().filter(|&&p| p > 0.0).count();
        prop_assert!((1..=k).contains(&kept), "top-k {} then min-p kept {} tokens", k, kept);
        for (p, q) in probs.iter().zip(&by_k) {
            prop_assert!(*p == 0.0 || *q > 0.0, "the chain kept a token top-k {} drops", k);
        }
        prop_assert!((probs.iter().sum::<f32>() - 1.0).abs() < 1e-5, "the chained probabilities sum to {}, not 1", probs.iter().sum::<f32>());
    }

    /// StreamingLLM's mask is the sliding window's with the first `sink_tokens` columns
    /// shown again below the diagonal; with none it is the sliding window's.
    #[test]
    fn streaming_mask_is_the_window_with_the_first_columns_shown(
        tokens in 1usize..10,
        window in 1usize..6,
        sink_tokens in 0usize..4,
    ) {
        let sliding = sliding_window_mask(tokens, Some(window));
        let streaming = streaming_mask(tokens, Some(window), sink_tokens);
        let past = ones(&[tokens, tokens]).tril(0).bool();
        let first = (0..tokens * tokens).map(|n| n % tokens < sink_tokens).collect();
        let first = Tensor::from_vec(first, &[tokens, tokens]);
        let shown = past.logical_and(&first);
        prop_assert_eq!(streaming.to_vec(), sliding.logical_and(&shown.logical_not()).to_vec(), "StreamingLLM's mask is not the window with the first columns shown");
        prop_assert_eq!(streaming_mask(tokens, Some(window), 0).to_vec(), sliding.to_vec(), "with no sink tokens StreamingLLM's mask is not the sliding window's");
        prop_assert_eq!(
            streaming_mask(tokens, None, sink_tokens).to_vec(),
            sliding_window_mask(tokens, None).to_vec(),
            "without a window StreamingLLM's mask is not the causal mask"
        );
    }

    /// The gate's sigmoid is `1 / (1 + e^(-z))` correctly rounded: within half a float32
    /// step of the float64 value, between 0 and 1, and 1/2 at 0.
    #[test]
    fn sigmoid_is_the_rounded_formula(z in prop::collection::vec(-30.0f32..30.0, 1..16)) {
        let n = z.len();
        let got = sigmoid(&Tensor::from_vec(z.clone(), &[n])).to_vec();
        for (x, s) in z.iter().zip(&got) {
            let exact = 1.0 / (1.0 + (-(*x as f64)).exp());
            let step = (f32::from_bits(s.to_bits() + 1) - s) as f64;
            prop_assert!((*s as f64 - exact).abs() <= step / 2.0, "sigmoid({x}) is {s}, not 1 / (1 + e^-x) = {exact} correctly rounded");
            prop_assert!((0.0..=1.0).contains(s), "sigmoid({x}) is {s}, outside [0, 1]");
        }
        prop_assert_eq!(sigmoid(&Tensor::from_vec(vec![0.0], &[1])).to_vec(), vec![0.5], "sigmoid(0) is not 1/2");
    }

    /// The sink column in gpt-oss's order agrees with the closed form
    /// `e^{s_j} / (e^S + Σ e^{s_k})` within 8 float32 steps (the exponentials, the sum
    /// and the division each round), and leaves every row summing to less than 1.
    #[test]
    fn sink_order_agrees_with_the_formula(seed in 0u64..1000, keys in 1usize..6) {
        manual_seed(seed);
        let scores = randn(&[1, 2, 3, keys]);
        let sinks = randn(&[2]);
        let ours = softmax_with_sink(&scores, &sinks);
        let s = sinks.to_vec();
        let values = scores.to_vec();
        for (row, chunk) in values.chunks(keys).enumerate() {
            let head = row / 3;
            let denom: f64 = chunk.iter().map(|&x| (x as f64).exp()).sum::<f64>()
                + (s[head] as f64).exp();
            let got = ours.to_vec()[row * keys..(row + 1) * keys].to_vec();
            for (x, w) in chunk.iter().zip(&got) {
                let formula = ((*x as f64).exp() / denom) as f32;
                prop_assert!(ulps(formula, *w) <= 8, "gpt-oss's order gives {w}, the formula {formula}: {} float32 steps apart, more than 8", ulps(formula, *w));
            }
            prop_assert!(got.iter().sum::<f32>() < 1.0, "a row with a sink sums to {}, not less than 1", got.iter().sum::<f32>());
        }
    }

    /// The formula `x / (1 + e^(-x))` and PyTorch's `F.silu`, which the network calls, are
    /// within two float32 steps of each other (their `exp`s may differ by one step, which
    /// can become two after the division).
    #[test]
    fn silu_formula_agrees_with_f_silu(seed in 0u64..1000, n in 1usize..100) {
        manual_seed(seed);
        let x = &randn(&[n]) * 6.0;
        for (i, (a, b)) in silu(&x).to_vec().into_iter().zip(x.silu().to_vec()).enumerate() {
            prop_assert!(ulps(a, b) <= 2, "silu of element {i}: the formula gives {a}, F.silu {b}: {} float32 steps apart, more than 2", ulps(a, b));
        }
    }
}

/// The chapter's model and prompt, with every piece on.
fn chapter_logits(recipe: &Recipe) -> Tensor {
    manual_seed(2026);
    let model = TinyModel::new(CONFIG);
    let prompt = Tensor::from_vec(PROMPT.to_vec(), &[1, PROMPT.len()]);
    model.forward(&prompt, recipe).0
}

#[test]
fn every_switch_changes_the_logits() {
    let all = Recipe::default();
    let base = chapter_logits(&all);
    let switched = [
        (
            "theta",
            Recipe {
                theta: 500_000.0,
                ..all
            },
        ),
        (
            "qk_norm",
            Recipe {
                qk_norm: false,
                ..all
            },
        ),
        (
            "softcap",
            Recipe {
                softcap: None,
                ..all
            },
        ),
        (
            "sinks",
            Recipe {
                sinks: false,
                ..all
            },
        ),
        ("window", Recipe { window: 2, ..all }),
        (
            "sink_tokens",
            Recipe {
                sink_tokens: 2,
                ..all
            },
        ),
        (
            "output_gate",
            Recipe {
                output_gate: true,
                ..all
            },
        ),
        (
            "local_per_global",
            Recipe {
                local_per_global: None,
                ..all
            },
        ),
    ];
    for (name, recipe) in switched {
        assert!(
            !same_bits(&chapter_logits(&recipe), &base),
            "switching {name} changed nothing"
        );
    }
    let big = Recipe {
        theta: 500_000.0,
        ..all
    };
    let scaled = Recipe {
        llama31_scaling: true,
        ..big
    };
    assert!(
        !same_bits(&chapter_logits(&scaled), &chapter_logits(&big)),
        "scaling changed nothing"
    );
}

#[test]
fn a_window_as_long_as_the_prompt_is_global() {
    let all = Recipe::default();
    let long = Recipe {
        window: PROMPT.len(),
        ..all
    };
    let global = Recipe {
        local_per_global: None,
        ..all
    };
    assert_same_bits(
        &chapter_logits(&long),
        &chapter_logits(&global),
        "a window longer than the prompt",
    );
}

#[test]
fn rope_turns_nothing_at_position_zero_and_keeps_the_norm() {
    let (cos, sin) = rope_tables(&[0, 5], 8, 10_000.0, false);
    assert_eq!(cos.select(0, 0).to_vec(), vec![1.0; 8]);
    assert_eq!(sin.select(0, 0).to_vec(), vec![0.0; 8]);
    manual_seed(3);
    let x = rand(&[1, 1, 2, 8]);
    let turned = apply_rope(&x, &cos, &sin);
    let norm =
        |t: &Tensor| t.select(2, 1).to_vec().iter().map(|v| v * v).sum::<f32>();
    assert!((norm(&turned) - norm(&x)).abs() < 1e-5);
    assert!(!same_bits(&turned.select(2, 1), &x.select(2, 1)));
}

#[test]
fn llama31_keeps_fast_pairs_and_slows_slow_ones() {
    let plain = inv_freq(8, 500_000.0, false);
    let scaled = inv_freq(8, 500_000.0, true);
    assert_eq!(scaled[..2], plain[..2]); // a turn within 2048 tokens: kept
    assert_eq!(scaled[3], plain[3] / 8.0); // more than 8192 tokens: 8 times slower
    assert!(plain[2] / 8.0 < scaled[2] && scaled[2] < plain[2]); // between: a blend
}

#[test]
fn softcap_bends_large_scores_and_keeps_small_ones() {
    let scores = Tensor::from_vec(vec![-100.0, -0.001, 0.0, 0.001, 100.0], &[5]);
    let capped = softcap(&scores, 5.0).to_vec();
    assert!(capped[0] >= -5.0 && capped[4] <= 5.0 && capped[4] > 4.99);
    assert!((capped[3] - 0.001).abs() < 1e-8);
}

/// As the temperature goes to 0 the draw becomes greedy: at 1e-6 every probability but the
/// likeliest token's is 0 on the chapter's model.
#[test]
fn sampling_at_a_vanishing_temperature_is_greedy() {
    let prompt = Tensor::from_vec(PROMPT.to_vec(), &[1, PROMPT.len()]);
    let recipe = Recipe::default();
    let cold = Sampler {
        temperature: 1e-6,
        ..Sampler::PLAIN
    };
    for seed in [1, 2026, 31337] {
        manual_seed(seed);
        let model = TinyModel::new(CONFIG);
        let greedy = generate_cached(&model, &prompt, 6, &recipe, TinyModel::forward);
        let sampled = generate_sampled(&model, &prompt, 6, &recipe, &cold);
        assert_eq!(sampled.ids.to_vec(), greedy.ids.to_vec(), "seed {seed}");
        let warm = generate_sampled(&model, &prompt, 6, &recipe, &Sampler::PLAIN);
        assert_ne!(
            warm.ids.to_vec(),
            greedy.ids.to_vec(),
            "seed {seed}: τ = 1 drew greedily"
        );
    }
}
