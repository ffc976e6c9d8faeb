//! One test per exercise, named after it, so `cargo test -p ch15-modern-layer --features
//! exercise NAME` checks just that function. Each checks what PyTorch printed (through the
//! reference output) or the formula, within a tolerance derived from the inputs, so that
//! every correct way of writing the formula passes; and properties a hard-coded answer
//! cannot satisfy. None calls another exercise.
//!
//! Each exercise's checks are functions that take the answer as a parameter, so that the
//! tests `wrong_answers_fail_*` can show them a plausible mistake and see it rejected.

use ch07_multihead_split::heads::split_heads;
use course::narrative::{lines_after, step_text};
use course::printed;
use course::quiet_proptest::{holds, quiet};
use proptest::prelude::*;
use shared::nn::RMSNorm;
use shared::testing::{bits_difference, max_abs_diff, ulps};
use shared::{Tensor, cat, manual_seed, rand, randn};

use ch15_modern_layer::attention::Attention;
use ch15_modern_layer::cache_size::recipe_cache_bytes;
use ch15_modern_layer::model::{generate_cached, generate_recomputing};
use ch15_modern_layer::moe::{Moe, Route, route_softmax_top_k};
use ch15_modern_layer::recipe::CacheCard;
use ch15_modern_layer::rope::{apply_rope, rope_tables};
use ch15_modern_layer::rope_order::norm_and_rope_commute;
use ch15_modern_layer::setup::{CONFIG, MOE, MOE_TOKENS, PROMPT};
use ch15_modern_layer::sinks::softmax_with_sink;
use ch15_modern_layer::top_p::top_p;
use ch15_modern_layer::{ModelConfig, Recipe, TinyModel};

const PYTORCH: &str =
    include_str!("../../../reference/expected/ch15-modern-layer.txt");

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

// ---------------------------------------------------------------------------------------
// qkv

/// An answer to `qkv`: queries, keys and values of `x` at `positions`.
type Qkv = dyn Fn(&Attention, &Tensor, &[usize], &Recipe) -> (Tensor, Tensor, Tensor);

/// Where `qkv` breaks the layer's definition on a layer drawn from `seed` whose QK-norm
/// gains differ from feature to feature (as trained gains do), for `tokens` tokens at the
/// absolute positions `start..start + tokens`: the queries and keys split into heads,
/// QK-normed, then turned by RoPE; the values split and never turned. `None` when every
/// number is within float32 rounding of the definition's.
fn qkv_broken(
    qkv: &Qkv,
    seed: u64,
    tokens: usize,
    start: usize,
    qk_norm: bool,
) -> Option<String> {
    manual_seed(seed);
    let mut attn = Attention::new(16, 4, 2);
    let (q_norm, k_norm) = attn.qk_norm.as_mut().expect("a layer with QK-norm");
    q_norm.weight = Some(rand(&[attn.head_dim]) + 0.5);
    k_norm.weight = Some(rand(&[attn.head_dim]) + 0.5);
    let x = randn(&[1, tokens, 16]);
    let positions: Vec<usize> = (start..start + tokens).collect();
    let recipe = Recipe {
        qk_norm,
        ..Recipe::default()
    };
    let (cos, sin) = rope_tables(&positions, attn.head_dim, recipe.theta, false);
    let heads = |w: &shared::nn::Linear, n| split_heads(&w.forward(&x), n);
    let (mut q, mut k) = (heads(&attn.w_query, 4), heads(&attn.w_key, 2));
    if qk_norm {
        let (q_norm, k_norm) = attn.qk_norm.as_ref().expect("a layer with QK-norm");
        (q, k) = (q_norm.forward(&q), k_norm.forward(&k));
    }
    let want = [
        apply_rope(&q, &cos, &sin),
        apply_rope(&k, &cos, &sin),
        heads(&attn.w_value, 2),
    ];
    let (q, k, v) = qkv(&attn, &x, &positions, &recipe);
    for ((name, got), want) in ["queries", "keys", "values"]
        .iter()
        .zip([q, k, v])
        .zip(&want)
    {
        let input = format!(
            "{tokens} tokens at positions {start}.., QK-norm {}",
            if qk_norm { "on" } else { "off" }
        );
        if got.sizes() != want.sizes() {
            return Some(format!(
                "{input}: your {name} have shape {:?}, the layer's {:?}",
                got.sizes(),
                want.sizes()
            ));
        }
        // Normalised heads are of order 1; a projection, a norm and a rotation each round.
        if let Some(gap) = first_gap(&got, want, 1e-5) {
            return Some(format!("{input}: your {name} {gap}"));
        }
    }
    None
}

/// The first number where `got` and `want` differ by more than `tolerance · (1 + |want|)`,
/// said with both values and how many float32 steps apart they are.
fn first_gap(got: &Tensor, want: &Tensor, tolerance: f32) -> Option<String> {
    let (got, want) = (got.to_vec(), want.to_vec());
    let (i, (g, w)) = got.iter().zip(&want).enumerate().find(|(_, (g, w))| {
        (*g - *w).abs() > tolerance * (1.0 + w.abs()) || g.is_nan()
    })?;
    Some(format!(
        "differ from the definition at flat index {i}: {g} where it gives {w} ({} float32 \
         steps apart)",
        ulps(*g, *w)
    ))
}

/// The answer under test.
fn learners_qkv(
    attn: &Attention,
    x: &Tensor,
    positions: &[usize],
    recipe: &Recipe,
) -> QkvOut {
    attn.qkv(x, positions, recipe)
}
type QkvOut = (Tensor, Tensor, Tensor);

#[test]
fn exercise_qkv_prints_pytorchs_rotated_queries() {
    manual_seed(2026);
    let model = TinyModel::new(CONFIG);
    let prompt = Tensor::from_vec(PROMPT.to_vec(), &[1, PROMPT.len()]);
    let layer = &model.layers[0];
    let x = layer.attn_norm.forward(&model.tok_emb.forward(&prompt));
    let positions: Vec<usize> = (0..PROMPT.len()).collect();
    let (q, _, _) = layer.attn.qkv(&x, &positions, &Recipe::default());
    let rotated = q.select(0, 0).select(0, 0).slice(0, ..3).to_string();
    let step = step_text(PYTORCH, "RoPE on q and k, after the head split")
        .expect("the step");
    let printed =
        lines_after(step, "rotated q[0, 0, :3]:", 3).expect("the rotated queries");
    if let Err(e) = printed::compare(&rotated, printed) {
        panic!("your rotated q[0, 0, :3] is not what PyTorch printed:\n{e}");
    }
}

proptest! {
    #![proptest_config(quiet(16))]

    /// Any layer, any positions: the queries and keys are normalised, then turned by their
    /// absolute positions; the values are never turned.
    #[test]
    fn exercise_qkv_is_the_definition(
        seed in 0u64..1000,
        tokens in 1usize..6,
        start in 0usize..20,
        qk_norm in prop::bool::ANY,
    ) {
        holds(qkv_broken(&learners_qkv, seed, tokens, start, qk_norm))?;
    }

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
        let plain = generate_recomputing(&model, &prompt, n_new, &recipe, TinyModel::forward_row_by_row);
        let cached = generate_cached(&model, &prompt, n_new, &recipe, TinyModel::forward_row_by_row);
        if let Some(gap) = bits_difference(&cached.logits, &plain.logits) {
            prop_assert!(false, "the cached logits are not the recomputed ones (a key turned by \
                its place in the chunk, not in the text?): {}", gap);
        }
    }
}

/// Three mistakes `qkv` could make, each caught: RoPE before QK-norm (the same only while
/// the two features of every rotated pair share a gain), the values turned too, and the
/// positions counted from the chunk's start.
#[test]
fn wrong_answers_fail_the_qkv_tests() {
    let project = |attn: &Attention, x: &Tensor| {
        (
            split_heads(&attn.w_query.forward(x), attn.n_heads),
            split_heads(&attn.w_key.forward(x), attn.n_kv_heads),
            split_heads(&attn.w_value.forward(x), attn.n_kv_heads),
        )
    };
    let rope_first =
        move |attn: &Attention, x: &Tensor, positions: &[usize], recipe: &Recipe| {
            let (q, k, v) = project(attn, x);
            let (cos, sin) =
                rope_tables(positions, attn.head_dim, recipe.theta, false);
            let (q, k) = (apply_rope(&q, &cos, &sin), apply_rope(&k, &cos, &sin));
            if let Some((q_norm, k_norm)) = &attn.qk_norm
                && recipe.qk_norm
            {
                (q_norm.forward(&q), k_norm.forward(&k), v)
            } else {
                (q, k, v)
            }
        };
    let values_turned =
        move |attn: &Attention, x: &Tensor, positions: &[usize], recipe: &Recipe| {
            let (q, k, v) = learners_qkv(attn, x, positions, recipe);
            let (cos, sin) =
                rope_tables(positions, attn.head_dim, recipe.theta, false);
            (q, k, apply_rope(&v, &cos, &sin))
        };
    let from_zero =
        move |attn: &Attention, x: &Tensor, positions: &[usize], recipe: &Recipe| {
            let from_zero: Vec<usize> = (0..positions.len()).collect();
            learners_qkv(attn, x, &from_zero, recipe)
        };
    let wrong: [(&str, &Qkv); 3] = [
        ("RoPE before QK-norm", &rope_first),
        ("the values turned", &values_turned),
        ("positions from the chunk's start", &from_zero),
    ];
    for (name, answer) in wrong {
        let caught =
            (0..4).any(|seed| qkv_broken(answer, seed, 4, 3, true).is_some());
        assert!(caught, "the qkv tests accept a wrong answer: {name}");
    }
}

// ---------------------------------------------------------------------------------------
// softmax_with_sink

/// An answer to `softmax_with_sink`.
type SinkSoftmax = dyn Fn(&Tensor, &Tensor) -> Tensor;

/// Where `f` breaks gpt-oss's formula `w_j = e^{s_j} / (e^S + Σ_k e^{s_k})`, with `S` the
/// sink of the row's head, on `scores` and `sinks`: `None` when every weight is within
/// the rounding a float32 softmax allows. The formula is computed in float64; a float32
/// computation rounds each exponential (one step), each of the `keys + 1` terms of the sum
/// and the division, so a weight may be `keys + 4` float32 steps from it, relative to its
/// size, and no more.
fn sink_formula_broken(
    f: &SinkSoftmax,
    scores: &Tensor,
    sinks: &Tensor,
) -> Option<String> {
    let [_, h, q, k] = scores.dims();
    let got = f(scores, sinks);
    let input = format!("scores of shape {:?}, sinks {}", scores.sizes(), sinks);
    if got.sizes() != scores.sizes() {
        return Some(format!(
            "{input}: your weights have shape {:?}",
            got.sizes()
        ));
    }
    let (s, values, got) = (sinks.to_vec(), scores.to_vec(), got.to_vec());
    let tolerance = (k + 4) as f64 * f32::EPSILON as f64;
    for (row, chunk) in values.chunks(k).enumerate() {
        let head = (row / q) % h;
        let sink = s[head] as f64;
        let largest = chunk.iter().map(|&x| x as f64).fold(sink, f64::max);
        let denom: f64 = chunk
            .iter()
            .map(|&x| (x as f64 - largest).exp())
            .sum::<f64>()
            + (sink - largest).exp();
        for (j, &x) in chunk.iter().enumerate() {
            let want = (x as f64 - largest).exp() / denom;
            let w = got[row * k + j];
            let close = (w as f64 - want).abs()
                <= tolerance * want + f64::from(f32::MIN_POSITIVE);
            if !close {
                return Some(format!(
                    "{input}: row {row} (head {head}), key {j}: your weight is {w:e}, the \
                     formula's {want:e}, {} float32 steps apart (rounding allows {})",
                    ulps(w, want as f32),
                    k + 4
                ));
            }
        }
    }
    None
}

/// Scores `[b, h, q, k]` and `h` sinks drawn from `seed`; sinks of `-∞` if `silent`.
fn sink_inputs(
    seed: u64,
    [b, h, q, k]: [usize; 4],
    silent: bool,
) -> (Tensor, Tensor) {
    manual_seed(seed);
    let scores = randn(&[b, h, q, k]);
    let sinks = if silent {
        Tensor::from_vec(vec![f32::NEG_INFINITY; h], &[h])
    } else {
        randn(&[h])
    };
    (scores, sinks)
}

proptest! {
    #![proptest_config(quiet(16))]

    /// Any scores and sinks: the formula, within the rounding of a float32 softmax.
    #[test]
    fn exercise_softmax_with_sink_is_the_formula(
        seed in 0u64..1000,
        dims in (1usize..3, 1usize..4, 1usize..4, 1usize..6),
        silent in prop::bool::weighted(0.2),
    ) {
        let (scores, sinks) = sink_inputs(seed, [dims.0, dims.1, dims.2, dims.3], silent);
        holds(sink_formula_broken(&softmax_with_sink, &scores, &sinks))?;
    }
}

#[test]
fn exercise_softmax_with_sink_of_minus_infinity_is_the_softmax() {
    // A sink of -∞ adds e^-∞ = 0 to every denominator: the plain softmax, within its
    // rounding.
    let (scores, silent) = sink_inputs(5, [1, 2, 3, 4], true);
    if let Some(broken) = sink_formula_broken(&softmax_with_sink, &scores, &silent) {
        panic!("a sink of -inf should give the plain softmax: {broken}");
    }
    // A loud sink takes weight from every key: each row sums to less than 1.
    let loud = Tensor::from_vec(vec![3.0, 0.0], &[2]);
    let sums = softmax_with_sink(&scores, &loud)
        .sum_dim(-1, false)
        .to_vec();
    assert!(
        sums.iter().all(|&s| s < 1.0),
        "with sinks 3 and 0 every row should sum to less than 1; the row sums are {sums:?}"
    );
}

/// Three mistakes, each caught: the sink left out of the denominator, the sink's column
/// put first and the last key's column dropped instead (off by one), and the weights not
/// normalised.
#[test]
fn wrong_answers_fail_the_sink_tests() {
    let no_sink = |scores: &Tensor, _: &Tensor| scores.softmax(-1);
    let off_by_one = |scores: &Tensor, sinks: &Tensor| {
        let [b, h, q, k] = scores.dims();
        let column = sinks.view([1, h, 1, 1]).expand([b, h, q, 1]);
        cat(&[&column, scores], -1).softmax(-1).slice(-1, ..k)
    };
    let unnormalised = |scores: &Tensor, _: &Tensor| scores.exp();
    let wrong: [(&str, &SinkSoftmax); 3] = [
        ("the sink left out", &no_sink),
        ("the sink column first, a key dropped", &off_by_one),
        ("not normalised", &unnormalised),
    ];
    for (name, answer) in wrong {
        let caught = (0..4).any(|seed| {
            let (scores, sinks) = sink_inputs(seed, [1, 2, 3, 4], false);
            sink_formula_broken(answer, &scores, &sinks).is_some()
        });
        assert!(caught, "the sink tests accept a wrong answer: {name}");
    }
}

// ---------------------------------------------------------------------------------------
// top_p

/// An answer to `top_p`.
type TopP = dyn Fn(&Tensor, f32) -> Tensor;

/// Where `f` breaks nucleus sampling on `logits` and `p`: the kept tokens must be the
/// likeliest ones, the fewest whose probability reaches `p` (the likeliest always kept),
/// renormalised; the rest get 0. Probabilities are compared within 1e-5, the rounding of a
/// float32 softmax and a running sum over a dozen tokens.
fn nucleus_broken(f: &TopP, logits: &[f32], p: f32) -> Option<String> {
    let n = logits.len();
    let input = format!("logits {logits:?}, p = {p}");
    let logits = Tensor::from_vec(logits.to_vec(), &[n]);
    let probs = logits.softmax(-1).to_vec();
    let kept = f(&logits, p).to_vec();
    if kept.len() != n {
        return Some(format!(
            "{input}: {} probabilities for {n} tokens",
            kept.len()
        ));
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]));
    let n_kept = kept.iter().filter(|&&x| x > 0.0).count();
    if n_kept == 0 || kept[order[0]] == 0.0 {
        return Some(format!(
            "{input}: the likeliest token was dropped: {kept:?}"
        ));
    }
    let mass: f32 = order[..n_kept].iter().map(|&i| probs[i]).sum();
    let mass_before: f32 = order[..n_kept - 1].iter().map(|&i| probs[i]).sum();
    if mass < p - 1e-5 {
        return Some(format!(
            "{input}: the {n_kept} tokens kept hold {mass}, less than p: {kept:?}"
        ));
    }
    if mass_before >= p + 1e-5 {
        return Some(format!(
            "{input}: {n_kept} tokens kept, but the likeliest {} already hold {mass_before}: \
             {kept:?}",
            n_kept - 1
        ));
    }
    for &i in &order[..n_kept] {
        if (kept[i] - probs[i] / mass).abs() >= 1e-5 {
            return Some(format!(
                "{input}: token {i} (probability {}) gets {}, not {} (renormalised over the \
                 nucleus)",
                probs[i],
                kept[i],
                probs[i] / mass
            ));
        }
    }
    None
}

#[test]
fn exercise_top_p_keeps_the_nucleus() {
    // Probabilities 0.5, 0.3, 0.2: with p = 0.6 the first two hold 0.8 >= 0.6; with
    // p = 0.5 the first token alone reaches it.
    let logits = [0.5f32.ln(), 0.3f32.ln(), 0.2f32.ln()];
    for p in [0.6, 0.5] {
        if let Some(broken) = nucleus_broken(&top_p, &logits, p) {
            panic!("{broken}");
        }
    }
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
        holds(nucleus_broken(&top_p, &logits, p))?;
    }
}

/// Two mistakes, each caught: the token that crosses `p` dropped (keeping tokens while the
/// mass *including* them stays below `p`), and the kept probabilities not renormalised.
#[test]
fn wrong_answers_fail_the_top_p_tests() {
    let crossing_dropped = |logits: &Tensor, p: f32| {
        let probs = logits.softmax(-1).to_vec();
        let mut order: Vec<usize> = (0..probs.len()).collect();
        order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]));
        let mut dropped = vec![true; probs.len()];
        let mut mass = 0.0;
        for &token in &order {
            mass += probs[token];
            if mass < p || token == order[0] {
                dropped[token] = false;
            }
        }
        let dropped = Tensor::from_vec(dropped, logits.sizes());
        logits.masked_fill(&dropped, f32::NEG_INFINITY).softmax(-1)
    };
    let not_renormalised = |logits: &Tensor, p: f32| {
        let kept = top_p(logits, p);
        logits.softmax(-1).masked_fill(&kept.eq_scalar(0.0), 0.0)
    };
    let logits = [0.5f32.ln(), 0.3f32.ln(), 0.2f32.ln()];
    let wrong: [(&str, &TopP); 2] = [
        ("the crossing token dropped", &crossing_dropped),
        ("not renormalised", &not_renormalised),
    ];
    for (name, answer) in wrong {
        assert!(
            nucleus_broken(answer, &logits, 0.6).is_some(),
            "the top_p tests accept a wrong answer: {name}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// recipe_cache_bytes

/// An answer to `recipe_cache_bytes`.
type CacheBytes = dyn Fn(&CacheCard, usize) -> u64;

/// Where `f` breaks the cache's arithmetic for a card of `layers` layers and a text of
/// `tokens` tokens: all layers global is the plain formula
/// `2 · layers · kv_heads · head_dim · tokens · bytes`; a window no shorter than the text
/// changes nothing; every local layer saves `tokens − window` tokens' worth when the text
/// is longer than its window.
fn cache_bytes_broken(
    f: &CacheBytes,
    (layers, kv_heads, head_dim, window, tokens, local): (
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
    ),
) -> Option<String> {
    let global = CacheCard {
        layers,
        kv_heads,
        head_dim,
        bytes_per_value: 2,
        window,
        local_per_global: None,
    };
    let all = (2 * layers * kv_heads * head_dim * tokens * 2) as u64;
    let card = |c: &CacheCard| {
        format!(
            "{} layers ({} local per global), {} kv heads of {}, window {}, {tokens} tokens",
            c.layers,
            c.local_per_global.map_or("none".into(), |n| n.to_string()),
            c.kv_heads,
            c.head_dim,
            c.window
        )
    };
    let got = f(&global, tokens);
    if got != all {
        return Some(format!(
            "{}: every layer global should be 2·layers·kv_heads·head_dim·tokens·bytes = \
             {all} bytes; you give {got}",
            card(&global)
        ));
    }
    let mixed = CacheCard {
        local_per_global: Some(local),
        ..global
    };
    let wide = CacheCard {
        window: tokens,
        ..mixed
    };
    let got = f(&wide, tokens);
    if got != all {
        return Some(format!(
            "{}: a window as long as the text keeps everything, {all} bytes; you give {got}",
            card(&wide)
        ));
    }
    let locals = (0..layers)
        .filter(|&l| mixed.window_of(l).is_some())
        .count();
    let saved =
        (locals * 2 * kv_heads * head_dim * tokens.saturating_sub(window) * 2) as u64;
    let got = f(&mixed, tokens);
    if got != all - saved {
        return Some(format!(
            "{}: the {locals} local layers keep min(tokens, window) tokens each, {} bytes in \
             all; you give {got}",
            card(&mixed),
            all - saved
        ));
    }
    None
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
        let card = (layers, kv_heads, head_dim, window, tokens, local);
        holds(cache_bytes_broken(&recipe_cache_bytes, card))?;
    }
}

/// Two mistakes, each caught: a local layer caching its whole window even while the text
/// is shorter, and the schedule shifted by one layer.
#[test]
fn wrong_answers_fail_the_cache_tests() {
    let per_layer = |card: &CacheCard, cached: usize| {
        (2 * card.kv_heads * card.head_dim * cached * card.bytes_per_value) as u64
    };
    let whole_window = move |card: &CacheCard, tokens: usize| {
        (0..card.layers)
            .map(|l| per_layer(card, card.window_of(l).unwrap_or(tokens)))
            .sum()
    };
    let shifted = move |card: &CacheCard, tokens: usize| {
        (0..card.layers)
            .map(|l| {
                per_layer(
                    card,
                    card.window_of(l + 1).map_or(tokens, |w| w.min(tokens)),
                )
            })
            .sum()
    };
    let wrong: [(&str, &CacheBytes); 2] = [
        ("the whole window on a short text", &whole_window),
        ("the schedule shifted by one", &shifted),
    ];
    for (name, answer) in wrong {
        let caught = [(4, 2, 8, 4, 3, 1), (3, 2, 8, 16, 100, 1)]
            .into_iter()
            .any(|card| cache_bytes_broken(answer, card).is_some());
        assert!(caught, "the cache tests accept a wrong answer: {name}");
    }
}

// ---------------------------------------------------------------------------------------
// norm_and_rope_commute

/// An answer to `norm_and_rope_commute`.
type Commute = dyn Fn(&[f32]) -> bool;

/// Where `f`'s verdict on `gain` differs from what turning both ways shows: six head
/// vectors drawn from `seed`, at positions 1 to 6, normalised with the gains then turned by
/// RoPE (θ = 10 000), against turned then normalised. The orders agree when the two results
/// are within float32 rounding (1e-5); the gains the tests draw differ by at least 0.25
/// where they differ, far more than rounding.
fn commute_broken(f: &Commute, gain: &[f32], seed: u64) -> Option<String> {
    let d = gain.len();
    manual_seed(seed);
    let x = randn(&[1, 1, 6, d]);
    let positions: Vec<usize> = (1..=6).collect();
    let (cos, sin) = rope_tables(&positions, d, 10_000.0, false);
    let mut norm = RMSNorm::with_options(&[d], Some(1e-6), true);
    norm.weight = Some(Tensor::from_vec(gain.to_vec(), &[d]));
    let norm_first = apply_rope(&norm.forward(&x), &cos, &sin);
    let rope_first = norm.forward(&apply_rope(&x, &cos, &sin));
    let gap = max_abs_diff(&norm_first, &rope_first);
    let agree = gap <= 1e-5;
    let said = f(gain);
    (said != agree).then(|| {
        format!(
            "gains {gain:?}: you say the orders {} agree; turned both ways, six vectors \
             {} (largest difference {gap:e})",
            if said { "do" } else { "do not" },
            if agree { "agree" } else { "differ" }
        )
    })
}

/// Gains for `pairs` rotated pairs: each pair's two gains equal (`true`) or at least 0.25
/// apart, from `base` and `apart`; the first halves, then the second halves.
fn pair_gains(equal: &[bool], base: &[f32], apart: &[f32]) -> Vec<f32> {
    let first: Vec<f32> = base.to_vec();
    let second: Vec<f32> = equal
        .iter()
        .zip(base.iter().zip(apart))
        .map(|(&same, (&b, &a))| if same { b } else { b + a })
        .collect();
    [first, second].concat()
}

#[test]
fn exercise_norm_and_rope_commute_for_the_gains_of_a_new_model() {
    // A new model's gains are all 1: the orders agree. One gain moved: they do not.
    let ones = [1.0f32; 8];
    let mut moved = ones;
    moved[2] = 1.5;
    for gain in [&ones[..], &moved[..]] {
        if let Some(broken) = commute_broken(&norm_and_rope_commute, gain, 1) {
            panic!("{broken}");
        }
    }
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Any head width and gains, some pairs sharing a gain and some not: the verdict is
    /// what turning both ways shows.
    #[test]
    fn exercise_norm_and_rope_commute_when_every_pair_shares_a_gain(
        (equal, base, apart) in (1usize..5).prop_flat_map(|pairs| (
            prop::collection::vec(prop::bool::weighted(0.7), pairs),
            prop::collection::vec(0.5f32..1.5, pairs),
            prop::collection::vec(0.25f32..1.0, pairs),
        )),
        seed in 0u64..1000,
    ) {
        let gain = pair_gains(&equal, &base, &apart);
        holds(commute_broken(&norm_and_rope_commute, &gain, seed))?;
    }
}

/// Two mistakes, each caught: "a rotation keeps the length, so always", and pairs of
/// neighbouring features (the interleaved convention, not the halves this RoPE turns).
#[test]
fn wrong_answers_fail_the_commute_tests() {
    let always = |_: &[f32]| true;
    let neighbours = |gain: &[f32]| gain.chunks(2).all(|pair| pair[0] == pair[1]);
    let halves_equal = pair_gains(&[true, true], &[0.5, 1.5], &[0.25, 0.25]);
    let one_pair_apart = pair_gains(&[true, false], &[1.0, 1.0], &[0.5, 0.5]);
    let wrong: [(&str, &Commute); 2] =
        [("always", &always), ("neighbouring features", &neighbours)];
    for (name, answer) in wrong {
        let caught = [&halves_equal, &one_pair_apart]
            .iter()
            .any(|gain| commute_broken(answer, gain, 2).is_some());
        assert!(caught, "the commute tests accept a wrong answer: {name}");
    }
}

// ---------------------------------------------------------------------------------------
// route_softmax_top_k

/// An answer to `route_softmax_top_k`.
type Router = dyn Fn(&Tensor, usize) -> Route;

/// Where `f` breaks Qwen3's route on `logits`: each token's `k` likeliest experts, the
/// likeliest first, weighted by their softmax probabilities divided by the sum of the
/// kept ones (computed in f64). Weights are compared within the rounding of a float32
/// softmax and one more sum and division: `n_experts + 8` float32 steps of their size.
/// Logits whose `k`-th and next probabilities are within 1e-4 of each other are a near
/// tie, where a rounding may pick either expert; the tests draw none.
fn route_broken(f: &Router, logits: &Tensor, k: usize) -> Option<String> {
    let [tokens, n] = logits.dims();
    let route = f(logits, k);
    if route.experts.sizes() != [tokens, k] || route.weights.sizes() != [tokens, k] {
        return Some(format!(
            "{tokens} tokens, {n} experts, k = {k}: your route has experts {:?} and weights {:?}, not [{tokens}, {k}]",
            route.experts.sizes(),
            route.weights.sizes()
        ));
    }
    let (values, experts, weights) = (
        logits.to_vec(),
        route.experts.to_vec(),
        route.weights.to_vec(),
    );
    for t in 0..tokens {
        let row = &values[t * n..(t + 1) * n];
        let largest = row.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x)) as f64;
        let probs: Vec<f64> =
            row.iter().map(|&x| (x as f64 - largest).exp()).collect();
        let total: f64 = probs.iter().sum();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]));
        let kept: f64 = order[..k].iter().map(|&e| probs[e] / total).sum();
        let ids: Vec<usize> = experts[t * k..(t + 1) * k]
            .iter()
            .map(|&e| e as usize)
            .collect();
        if ids != order[..k] {
            return Some(format!(
                "token {t} (logits {row:?}): you route it to experts {ids:?}, its {k} likeliest are {:?}",
                &order[..k]
            ));
        }
        for (slot, &e) in order[..k].iter().enumerate() {
            let want = probs[e] / total / kept;
            let got = weights[t * k + slot] as f64;
            if (got - want).abs() > (n + 8) as f64 * f32::EPSILON as f64 * want {
                return Some(format!(
                    "token {t}, expert {e}: your weight is {got}, its probability over the {k} kept is {want} ({} float32 steps apart)",
                    ulps(got as f32, want as f32)
                ));
            }
        }
    }
    None
}

/// Whether every token's `k`-th and next probabilities stand clearly apart.
fn no_near_tie(logits: &Tensor, k: usize) -> bool {
    let n = logits.size(1);
    logits.softmax(-1).to_vec().chunks(n).all(|row| {
        let mut sorted = row.to_vec();
        sorted.sort_by(|a, b| b.total_cmp(a));
        k >= n || sorted[k - 1] - sorted[k] > 1e-4
    })
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Any logits without a near tie, any number of experts and k: Qwen3's route.
    #[test]
    fn exercise_route_softmax_top_k_is_qwen3s(
        seed in 0u64..1000,
        tokens in 1usize..6,
        n in 2usize..12,
        k in 1usize..4,
    ) {
        let k = k.min(n);
        manual_seed(seed);
        let logits = randn(&[tokens, n]) * 2.0;
        prop_assume!(no_near_tie(&logits, k));
        holds(route_broken(&route_softmax_top_k, &logits, k))?;
    }
}

/// The chapter's router on the chapter's tokens: the experts and weights PyTorch printed.
#[test]
fn exercise_route_softmax_top_k_prints_pytorchs_route() {
    manual_seed(2026);
    let x = randn(&[MOE_TOKENS, MOE.d_model]);
    let moe = Moe::new(MOE);
    let route = route_softmax_top_k(&moe.router.forward(&x), MOE.top_k);
    let step = step_text(PYTORCH, "A mixture of experts (manual_seed(2026))")
        .expect("the step");
    let qwen3 = &step[step.find("Qwen3").expect("Qwen3's route")..];
    let k = MOE.top_k;
    let lists: Vec<Vec<i64>> = route
        .experts
        .to_vec()
        .chunks(k)
        .map(<[i64]>::to_vec)
        .collect();
    let experts = format!("experts per token: {lists:?}");
    assert!(
        qwen3.lines().nth(1) == Some(experts.as_str()),
        "PyTorch printed\n{qwen3}\nyour route sends the tokens to\n{experts}"
    );
    let printed = lines_after(qwen3, "weights:", MOE_TOKENS).expect("the weights");
    if let Err(e) = printed::compare(&route.weights.to_string(), printed) {
        panic!("your weights are not what PyTorch printed:\n{e}");
    }
}

/// Three mistakes, each caught: the kept probabilities not renormalised, the `k` least
/// likely experts, and the weights renormalised over every expert instead of the kept.
#[test]
fn wrong_answers_fail_the_router_tests() {
    let not_renormalised = |logits: &Tensor, k: usize| {
        let (weights, experts) = logits.softmax(-1).topk(k, -1, true, true);
        Route { experts, weights }
    };
    let least_likely = |logits: &Tensor, k: usize| {
        let (kept, experts) = logits.softmax(-1).topk(k, -1, false, true);
        let weights = &kept / kept.sum_dim(-1, true);
        Route { experts, weights }
    };
    let uniform = |logits: &Tensor, k: usize| {
        let (_, experts) = logits.topk(k, -1, true, true);
        let weights = Tensor::from_vec(
            vec![1.0 / k as f32; logits.size(0) * k],
            &[logits.size(0), k],
        );
        Route { experts, weights }
    };
    let wrong: [(&str, &Router); 3] = [
        ("not renormalised", &not_renormalised),
        ("the least likely experts", &least_likely),
        ("equal weights", &uniform),
    ];
    manual_seed(4);
    let logits = randn(&[4, 8]) * 2.0;
    assert!(
        no_near_tie(&logits, 2),
        "the wrong answers' logits have a near tie"
    );
    for (name, answer) in wrong {
        assert!(
            route_broken(answer, &logits, 2).is_some(),
            "the router tests accept a wrong answer: {name}"
        );
    }
}
