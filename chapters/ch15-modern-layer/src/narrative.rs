//! The chapter's printed steps, in the order of the reference script
//! `reference/ch15_modern_layer.py`.

use ch07_multihead_split::heads::split_heads;
use ch14_generation::gqa::repeat_kv;
use ch14_generation::window::sliding_window_mask;
use course::narrative::python_bool;
use course::{Narrative, Seed, Step};
use shared::{Result, Tensor, manual_seed, randn};

use crate::attention::Attention;
use crate::attention::streaming_mask;
use crate::cache_size::recipe_cache_bytes;
use crate::layer::Layer;
use crate::model::{
    Generation, TinyModel, generate_cached, generate_recomputing, generate_sampled,
};
use crate::moe::{Moe, Route, load, route_sigmoid_biased, route_softmax_top_k};
use crate::recipe::{CacheCard, Recipe, schedule};
use crate::rope::{apply_rope, inv_freq, rope_tables};
use crate::sampling::{kept, min_p, repetition_penalty, top_k, with_temperature};
use crate::setup::{
    CONFIG, MOE, MOE_TOKENS, N_NEW, PROMPT, ROUTED_SCALING, samplers, variants,
};
use crate::sinks::softmax_with_sink;
use crate::softcap::softcap;
use crate::top_p::top_p;

/// `x[0, :rows, :cols]` of a `[1, tokens, features]` tensor.
fn corner(x: &Tensor, rows: usize, cols: usize) -> Tensor {
    x.select(0, 0).slice(0, ..rows).slice(1, ..cols)
}

/// Runs the chapter and returns what it prints; `seed` replaces the chapter's seed 2026.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story =
        Narrative::new("Chapter 15: The decoder layer of a 2026 open model");
    let prompt = Tensor::from_vec(PROMPT.to_vec(), &[1, PROMPT.len()]);
    // ANCHOR: model
    manual_seed(seed.or(2026));
    let model = TinyModel::new(CONFIG);
    let recipe = Recipe::default();
    // ANCHOR_END: model
    the_model(&mut story, seed, &model, &recipe, &prompt);
    let layer0 = &model.layers[0];
    let x = model.tok_emb.forward(&prompt);
    let heads = norm_and_heads(&mut story, layer0, &x);
    let (q, k) = qk_norm_and_rope(&mut story, &layer0.attn, &recipe, &heads)?;
    let hidden = scores_softcap_and_sinks(&mut story, &layer0.attn, &recipe, &q, &k)?;
    local_and_global(&mut story, &recipe, &hidden);
    one_layer(&mut story, layer0, &recipe, &x, &heads.x_norm);
    let plain = decoding(&mut story, &model, &recipe, &prompt);
    streaming_llm(&mut story, &model, &recipe, &prompt);
    switches(&mut story, &model, &prompt);
    logit_transforms(&mut story, &plain);
    sampling(&mut story, seed, &model, &recipe, &prompt, &plain);
    mixture_of_experts(&mut story, seed);
    Ok(story)
}

/// The first layer's normalised input and its query and key heads.
struct Heads {
    x_norm: Tensor,
    q: Tensor,
    k: Tensor,
}

fn the_model(
    story: &mut Narrative,
    seed: Seed,
    model: &TinyModel,
    recipe: &Recipe,
    prompt: &Tensor<i64>,
) {
    let step = story.step(format!("A tiny model (manual_seed({}))", seed.or(2026)));
    step.print(format!(
        "vocab {}, d_model {}, {} layers, {} query heads, {} key/value heads, head_dim {}, d_ff {}",
        CONFIG.vocab_size,
        CONFIG.d_model,
        CONFIG.n_layers,
        CONFIG.n_heads,
        CONFIG.n_kv_heads,
        model.layers[0].attn.head_dim,
        CONFIG.d_ff
    ));
    step.print(format!(
        "layers: {} (L = local, window {}; G = global)",
        schedule(CONFIG.n_layers, recipe.local_per_global),
        recipe.window
    ));
    step.print(format!(
        "switches: RoPE theta {}, QK-norm, softcap {}, sinks",
        recipe.theta,
        recipe.softcap.unwrap_or(0.0)
    ));
    step.print(format!("prompt: {prompt}"));
}

fn norm_and_heads(story: &mut Narrative, layer0: &Layer, x: &Tensor) -> Heads {
    let attn = &layer0.attn;
    let x_norm = layer0.attn_norm.forward(x);
    let step = story.step("RMSNorm before attention");
    step.print("x[0, :3, :6]:").print(corner(x, 3, 6));
    step.print("RMSNorm(x)[0, :3, :6]:")
        .print(corner(&x_norm, 3, 6));

    let q = split_heads(&attn.w_query.forward(&x_norm), attn.n_heads);
    let k = split_heads(&attn.w_key.forward(&x_norm), attn.n_kv_heads);
    let v = split_heads(&attn.w_value.forward(&x_norm), attn.n_kv_heads);
    let step = story.step("Queries, keys and values, grouped");
    step.print_shape("q.shape", &q);
    step.print_shape("k.shape", &k);
    step.print_shape("v.shape", &v);
    step.print("query heads 0-1 read key/value head 0, heads 2-3 read head 1");
    Heads { x_norm, q, k }
}

/// QK-norm, the RoPE frequencies, and the rotated queries and keys.
fn qk_norm_and_rope(
    story: &mut Narrative,
    attn: &Attention,
    recipe: &Recipe,
    Heads { q, k, .. }: &Heads,
) -> Result<(Tensor, Tensor)> {
    let Some((q_norm, k_norm)) = &attn.qk_norm else {
        return Err(missing("QK-norm"));
    };
    // ANCHOR: qk_norm
    let (q_n, k_n) = (q_norm.forward(q), k_norm.forward(k));
    // ANCHOR_END: qk_norm
    let step = story.step("QK-norm: every head's q and k scaled to unit RMS");
    step.print("q[0, 0, :3]:")
        .print(corner(&q.select(0, 0), 3, 8));
    step.print("q_norm(q)[0, 0, :3]:")
        .print(corner(&q_n.select(0, 0), 3, 8));

    let step = story.step("RoPE frequencies");
    for (theta, scaled, name) in [
        (10_000.0, false, "theta 10000"),
        (500_000.0, false, "theta 500000"),
        (500_000.0, true, "theta 500000, Llama 3.1 scaling"),
    ] {
        let freqs: Vec<f32> = inv_freq(attn.head_dim, theta, scaled)
            .into_iter()
            .map(|f| f as f32)
            .collect();
        let n = freqs.len();
        step.print(format!("{name}:"))
            .print(Tensor::from_vec(freqs, &[n]));
    }
    let positions: Vec<usize> = (0..PROMPT.len()).collect();
    let (cos, sin) = rope_tables(&positions, attn.head_dim, recipe.theta, false);
    step.print("cos[:, :4]:").print(cos.slice(1, ..4));

    // ANCHOR: rope_qk
    let (q_r, k_r) = (apply_rope(&q_n, &cos, &sin), apply_rope(&k_n, &cos, &sin));
    // ANCHOR_END: rope_qk
    let step = story.step("RoPE on q and k, after the head split");
    step.print("rotated q[0, 0, :3]:")
        .print(corner(&q_r.select(0, 0), 3, 8));
    step.print(format!(
        "the first position turns by 0: {}",
        python_bool(q_r.select(2, 0) == q_n.select(2, 0))
    ));
    Ok((q_r, k_r))
}

/// The error of a step that shows a part the layer was built without.
fn missing(part: &str) -> shared::Error {
    shared::Error::InvalidArgument {
        op: "narrative",
        detail: format!("the layer has no {part}"),
    }
}

/// The capped scores and the weights with and without sinks; returns the local mask.
fn scores_softcap_and_sinks(
    story: &mut Narrative,
    attn: &Attention,
    recipe: &Recipe,
    q: &Tensor,
    k: &Tensor,
) -> Result<Tensor<bool>> {
    let Some(sinks) = &attn.sinks else {
        return Err(missing("sinks"));
    };
    let cap = recipe.softcap.unwrap_or(f32::INFINITY);
    let scale = (1.0 / (attn.head_dim as f64).sqrt()) as f32;
    let scores = q.matmul(&repeat_kv(k, attn.n_rep()).transpose(2, 3)) * scale;
    let capped = softcap(&scores, cap);
    let step = story.step(format!("Softcapping the scores: {cap} * tanh(s / {cap})"));
    step.print("scores[0, 0]:")
        .print(scores.select(0, 0).select(0, 0));
    step.print("capped[0, 0]:")
        .print(capped.select(0, 0).select(0, 0));

    let hidden = sliding_window_mask(PROMPT.len(), Some(recipe.window));
    let masked = capped.masked_fill(&hidden, f32::NEG_INFINITY);
    let plain = masked.softmax(-1);
    let sunk = softmax_with_sink(&masked, sinks);
    let head0 = |w: &Tensor| w.select(0, 0).select(0, 0);
    let step =
        story.step("Attention sinks: one more column, dropped after the softmax");
    step.print(format!("sinks: {sinks}"));
    step.print("without sinks, weights[0, 0]:")
        .print(head0(&plain));
    step.print("with sinks, weights[0, 0]:").print(head0(&sunk));
    step.print(format!(
        "row sums with sinks, head 0: {}",
        head0(&sunk).sum_dim(-1, false)
    ));
    Ok(hidden)
}

fn local_and_global(story: &mut Narrative, recipe: &Recipe, hidden: &Tensor<bool>) {
    let step = story.step("Local and global layers");
    step.print(format!(
        "a local layer's mask (window {}), 1 = hidden:",
        recipe.window
    ));
    step.print(hidden.float());
    step.print(format!("gpt-oss, alternating: {}", schedule(12, Some(1))));
    step.print(format!(
        "Gemma 3, 5 local to 1 global: {}",
        schedule(12, Some(5))
    ));
}

fn one_layer(
    story: &mut Narrative,
    layer0: &Layer,
    recipe: &Recipe,
    x: &Tensor,
    x_norm: &Tensor,
) {
    let (out, _) = layer0.attn.forward(x_norm, recipe, Some(recipe.window));
    let h = x + out;
    let y = &h + layer0.ffn.forward(&layer0.ffn_norm.forward(&h));
    let step = story.step("One layer: attention and SwiGLU with residuals");
    step.print("h = x + attention(RMSNorm(x)), h[0, :3, :6]:")
        .print(corner(&h, 3, 6));
    step.print("y = h + SwiGLU(RMSNorm(h)), y[0, :3, :6]:")
        .print(corner(&y, 3, 6));
}

/// Greedy decoding recomputing and cached, batched and row by row, and the cache's size;
/// returns the recomputed generation, which the later steps sample from.
fn decoding(
    story: &mut Narrative,
    model: &TinyModel,
    recipe: &Recipe,
    prompt: &Tensor<i64>,
) -> Generation {
    // ANCHOR: decode
    let plain =
        generate_recomputing(model, prompt, N_NEW, recipe, TinyModel::forward);
    let cached = generate_cached(model, prompt, N_NEW, recipe, TinyModel::forward);
    // ANCHOR_END: decode
    let step = story.step("The model: greedy decoding, recomputing");
    step.print(format!("ids: {}", plain.ids));
    step.print("logits of the first step:")
        .print(plain.logits.get(0));

    let step = story.step("Greedy decoding with a KV cache of rotated keys");
    step.print(format!("ids: {}", cached.ids));
    print_caches(step, &cached, recipe);
    step.print(format!(
        "same ids: {}",
        python_bool(plain.ids == cached.ids)
    ));
    let max_diff = (&cached.logits - &plain.logits).abs().max().item();
    step.print(format!(
        "max |cached - recomputed| < 1e-5: {}",
        python_bool(max_diff < 1e-5)
    ));

    // ANCHOR: decode_rows
    let rows = generate_recomputing(
        model,
        prompt,
        N_NEW,
        recipe,
        TinyModel::forward_row_by_row,
    );
    let rows_cached =
        generate_cached(model, prompt, N_NEW, recipe, TinyModel::forward_row_by_row);
    // ANCHOR_END: decode_rows
    let step = story.step("Cached and recomputed, one query row at a time");
    step.print(format!("ids: {}", rows.ids));
    step.print(format!(
        "torch.equal: {}",
        python_bool(rows_cached.logits == rows.logits)
    ));
    cache_size(story, model, recipe, &rows_cached);
    plain
}

/// Each layer's cached keys' shape, with its kind.
fn print_caches(step: &mut Step, generation: &Generation, recipe: &Recipe) {
    for (i, cache) in generation.caches.iter().enumerate() {
        let kind = if recipe.is_local(i) {
            "local"
        } else {
            "global"
        };
        step.print(format!(
            "layer {i} ({kind}) cache k.shape: {}",
            cache.keys.shape()
        ));
    }
}

fn cache_size(
    story: &mut Narrative,
    model: &TinyModel,
    recipe: &Recipe,
    cached: &Generation,
) {
    let fed = PROMPT.len() + N_NEW - 1;
    let real: usize = cached.caches.iter().map(|c| c.bytes()).sum();
    let card = CacheCard {
        layers: CONFIG.n_layers,
        kv_heads: CONFIG.n_kv_heads,
        head_dim: model.layers[0].attn.head_dim,
        bytes_per_value: 4,
        window: recipe.window,
        local_per_global: recipe.local_per_global,
    };
    let all_global = CacheCard {
        local_per_global: None,
        ..card
    };
    let step = story.step("The size of the KV cache");
    step.print(format!("the tiny model after {fed} tokens: {real} bytes"));
    step.print(format!(
        "predicted from its recipe card: {} bytes",
        recipe_cache_bytes(&card, fed)
    ));
    step.print(format!(
        "with every layer global: {} bytes",
        recipe_cache_bytes(&all_global, fed)
    ));
}

fn streaming_llm(
    story: &mut Narrative,
    model: &TinyModel,
    recipe: &Recipe,
    prompt: &Tensor<i64>,
) {
    // ANCHOR: streaming
    let streaming = Recipe {
        sink_tokens: 2,
        ..*recipe
    };
    let by_row = TinyModel::forward_row_by_row;
    let kept_rows = generate_recomputing(model, prompt, N_NEW, &streaming, by_row);
    let kept_cached = generate_cached(model, prompt, N_NEW, &streaming, by_row);
    // ANCHOR_END: streaming
    let step = story.step(format!(
        "StreamingLLM: the first {} tokens kept beside the window",
        streaming.sink_tokens
    ));
    step.print(format!(
        "a local layer's mask (window {}, {} sink tokens), 1 = hidden:",
        streaming.window, streaming.sink_tokens
    ));
    step.print(
        streaming_mask(8, Some(streaming.window), streaming.sink_tokens).float(),
    );
    step.print(format!("ids: {}", kept_rows.ids));
    print_caches(step, &kept_cached, &streaming);
    step.print(format!(
        "cached equals recomputed, torch.equal: {}",
        python_bool(kept_cached.logits == kept_rows.logits)
    ));
}

fn switches(story: &mut Narrative, model: &TinyModel, prompt: &Tensor<i64>) {
    let step = story.step("What each switch changes");
    for (name, variant) in variants() {
        let (logits, _) = model.forward(prompt, &variant);
        let last = logits.select(0, 0).select(0, -1);
        step.print(format!("{name}: next token {}", last.argmax().item()));
        step.print(format!("  logits[:4]: {}", last.slice(0, ..4)));
    }
}

/// Temperature, top-k, top-p, min-p and a repetition penalty on the last logits of the
/// greedy generation `plain`.
fn logit_transforms(story: &mut Narrative, plain: &Generation) {
    let last = plain.logits.get(-1);
    let step = story.step("Logit transforms before sampling");
    step.print(format!(
        "softmax, the largest probability: {}",
        last.softmax(-1).max()
    ));
    for tau in [0.5, 2.0] {
        step.print(format!(
            "temperature {tau}, the largest probability: {}",
            with_temperature(&last, tau).max()
        ));
    }
    for (name, probs) in [
        ("top-k 3", top_k(&last, 3)),
        ("top-p 0.5", top_p(&last, 0.5)),
        ("min-p 0.5", min_p(&last, 0.5)),
    ] {
        let (ids, kept_probs) = kept(&probs);
        step.print(format!("{name} keeps {ids:?}:"))
            .print(kept_probs);
    }
    let mut seen = plain.ids.select(0, 0).to_vec();
    seen.pop(); // the last token has not been fed to the model yet
    seen.sort_unstable();
    seen.dedup();
    let penalized = repetition_penalty(&last, &seen, 1.5);
    let index = Tensor::from_vec(seen.clone(), &[seen.len()]);
    step.print(format!("the logits of the tokens already seen {seen:?}"));
    step.print("before:").print(last.index_select(0, &index));
    step.print("after a repetition penalty of 1.5:")
        .print(penalized.index_select(0, &index));
}

fn sampling(
    story: &mut Narrative,
    seed: Seed,
    model: &TinyModel,
    recipe: &Recipe,
    prompt: &Tensor<i64>,
    plain: &Generation,
) {
    let step = story.step(format!(
        "Sampling with multinomial (manual_seed({}) before each)",
        seed.or(2026)
    ));
    let mut sampled_ids = Vec::new();
    for (name, sampler) in samplers() {
        // ANCHOR: sample
        manual_seed(seed.or(2026));
        let sampled = generate_sampled(model, prompt, N_NEW, recipe, &sampler);
        // ANCHOR_END: sample
        step.print(format!("{name}: {}", sampled.ids));
        sampled_ids.push(sampled.ids);
    }
    step.print(format!(
        "top-k 1 is greedy decoding: {}",
        python_bool(sampled_ids.last() == Some(&plain.ids))
    ));
}

/// The experts' ids of every token, as a list of lists.
fn expert_lists(route: &Route) -> Vec<Vec<i64>> {
    let k = route.experts.size(1);
    route
        .experts
        .to_vec()
        .chunks(k)
        .map(<[i64]>::to_vec)
        .collect()
}

/// Qwen3's and DeepSeek-V3's routes through one mixture of experts, and a near tie.
fn mixture_of_experts(story: &mut Narrative, seed: Seed) {
    // ANCHOR: moe
    manual_seed(seed.or(2026));
    let x = randn(&[MOE_TOKENS, MOE.d_model]);
    let mut moe = Moe::new(MOE);
    let logits = moe.router.forward(&x);
    let qwen3 = route_softmax_top_k(&logits, MOE.top_k);
    let qwen3_out = moe.routed(&x, &qwen3);
    let deepseek =
        route_sigmoid_biased(&logits, &moe.selection_bias, MOE.top_k, ROUTED_SCALING);
    let deepseek_out = &moe.routed(&x, &deepseek) + &moe.shared(&x);
    // ANCHOR_END: moe
    let step = story.step(format!(
        "A mixture of experts (manual_seed({}))",
        seed.or(2026)
    ));
    step.print(format!(
        "{} experts of width {} and a shared expert, {} per token; {} tokens of {} features",
        MOE.n_experts, MOE.d_expert, MOE.top_k, MOE_TOKENS, MOE.d_model
    ));
    step.print("router probabilities, token 0:")
        .print(logits.softmax(-1).get(0));
    step.print("Qwen3: softmax, top-2, renormalised");
    print_route(step, &qwen3);
    step.print("output[:3, :6]:")
        .print(qwen3_out.slice(0, ..3).slice(1, ..6));
    step.print(format!(
        "DeepSeek-V3: sigmoid scores, top-2 of score + bias, renormalised, times {ROUTED_SCALING}"
    ));
    step.print("selection bias:").print(&moe.selection_bias);
    print_route(step, &deepseek);
    step.print("output with the shared expert[:3, :6]:")
        .print(deepseek_out.slice(0, ..3).slice(1, ..6));
    near_tie(story, &mut moe, &x, &qwen3);
}

/// A route's experts, weights and load.
fn print_route(step: &mut Step, route: &Route) {
    step.print(format!("experts per token: {:?}", expert_lists(route)));
    step.print("weights:").print(&route.weights);
    step.print(format!("load per expert: {:?}", load(route, MOE.n_experts)));
}

/// Token 0's second and third experts made to tie, then the tie broken by a hair, one
/// way and the other.
fn near_tie(story: &mut Narrative, moe: &mut Moe, x: &Tensor, qwen3: &Route) {
    let [_, second, third] = moe.likeliest(x, 0);
    // ANCHOR: near_tie
    let row = moe.router.weight.get(second);
    moe.set_router_row(third, &row);
    let tied_logits = moe.router.forward(x);
    let tied = route_softmax_top_k(&tied_logits, MOE.top_k);
    let hair = x.get(0) * 1e-6;
    moe.set_router_row(third, &(&row + &hair));
    let raised = route_softmax_top_k(&moe.router.forward(x), MOE.top_k);
    moe.set_router_row(third, &(&row - &hair));
    let lowered = route_softmax_top_k(&moe.router.forward(x), MOE.top_k);
    let moved = (&moe.routed(x, &raised) - &moe.routed(x, &lowered))
        .get(0)
        .abs()
        .max();
    // ANCHOR_END: near_tie
    let token0 = |route: &Route| expert_lists(route)[0].clone();
    let step = story.step("A near tie: two experts' scores within a rounding error");
    step.print(format!(
        "token 0's experts: {:?}; its second and third: {second}, {third}",
        token0(qwen3)
    ));
    step.print(format!(
        "expert {third} given expert {second}'s router row: token 0's logits of the two"
    ));
    let pair = Tensor::from(vec![second, third]);
    step.print(tied_logits.get(0).index_select(0, &pair));
    step.print(format!("token 0's experts: {:?}", token0(&tied)));
    step.print(format!(
        "expert {third}'s row raised by 1e-6 x[0]: {:?}; lowered: {:?}",
        token0(&raised),
        token0(&lowered)
    ));
    step.print(format!(
        "token 0's output, raised against lowered, moves by {:.4}",
        moved.item()
    ));
}
