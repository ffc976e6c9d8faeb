//! The chapter's printed steps, in the order of the reference script
//! `reference/ch15_modern_layer.py`.

use ch07_multihead_split::heads::split_heads;
use ch14_generation::Products;
use ch14_generation::gqa::repeat_kv;
use ch14_generation::window::sliding_window_mask;
use course::narrative::python_bool;
use course::{Narrative, Seed};
use shared::{Result, Tensor, manual_seed};

use crate::attention::streaming_mask;
use crate::cache_size::recipe_cache_bytes;
use crate::model::{
    ModelConfig, TinyModel, generate_cached, generate_recomputing, generate_sampled,
};
use crate::recipe::{CacheCard, Recipe, schedule};
use crate::rope::{apply_rope, inv_freq, rope_tables};
use crate::sampling::{kept, min_p, repetition_penalty, samplers, top_k, with_temperature};
use crate::sinks::softmax_with_sink;
use crate::softcap::softcap;
use crate::top_p::top_p;

/// The chapter's model: 32 tokens, 32 features, 4 layers of 4 query heads sharing 2
/// key/value heads, a feed-forward width of 64.
pub const CONFIG: ModelConfig = ModelConfig {
    vocab_size: 32,
    d_model: 32,
    n_layers: 4,
    n_heads: 4,
    n_kv_heads: 2,
    d_ff: 64,
};

/// The prompt's token ids.
pub const PROMPT: [i64; 6] = [0, 7, 14, 21, 28, 3];

/// How many tokens each generation appends.
pub const N_NEW: usize = 6;

/// The recipes whose next token the chapter compares: every piece on, then one changed.
pub fn variants() -> Vec<(&'static str, Recipe)> {
    let all = Recipe::default();
    vec![
        ("all on", all),
        (
            "theta 500000",
            Recipe {
                theta: 500_000.0,
                ..all
            },
        ),
        (
            "Llama 3.1 scaling",
            Recipe {
                theta: 500_000.0,
                llama31_scaling: true,
                ..all
            },
        ),
        (
            "no QK-norm",
            Recipe {
                qk_norm: false,
                ..all
            },
        ),
        (
            "no softcap",
            Recipe {
                softcap: None,
                ..all
            },
        ),
        (
            "no sinks",
            Recipe {
                sinks: false,
                ..all
            },
        ),
        (
            "StreamingLLM, 2 sink tokens",
            Recipe {
                sink_tokens: 2,
                ..all
            },
        ),
        (
            "output gate",
            Recipe {
                output_gate: true,
                ..all
            },
        ),
        (
            "all global",
            Recipe {
                local_per_global: None,
                ..all
            },
        ),
    ]
}

/// `x[0, :rows, :cols]` of a `[1, tokens, features]` tensor.
fn corner(x: &Tensor, rows: usize, cols: usize) -> Tensor {
    x.select(0, 0).slice(0, ..rows).slice(1, ..cols)
}

/// Runs the chapter and returns what it prints; `seed` replaces the chapter's seed 2026.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 15: The decoder layer of a 2026 open model");
    let prompt = Tensor::from_vec(PROMPT.to_vec(), &[1, PROMPT.len()]);
    let t = PROMPT.len();

    // ANCHOR: model
    manual_seed(seed.or(2026));
    let model = TinyModel::new(CONFIG);
    let recipe = Recipe::default();
    // ANCHOR_END: model
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

    let layer0 = &model.layers[0];
    let attn = &layer0.attn;
    let x = model.tok_emb.forward(&prompt);
    let x_norm = layer0.attn_norm.forward(&x);
    let step = story.step("RMSNorm before attention");
    step.print("x[0, :3, :6]:").print(corner(&x, 3, 6));
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

    // ANCHOR: qk_norm
    let (q_n, k_n) = (attn.q_norm.forward(&q), attn.k_norm.forward(&k));
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
    let positions: Vec<usize> = (0..t).collect();
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

    let cap = recipe.softcap.unwrap_or(f32::INFINITY);
    let scale = (1.0 / (attn.head_dim as f64).sqrt()) as f32;
    let scores = q_r.matmul(&repeat_kv(&k_r, attn.n_rep()).transpose(2, 3)) * scale;
    let capped = softcap(&scores, cap);
    let step = story.step(format!("Softcapping the scores: {cap} * tanh(s / {cap})"));
    step.print("scores[0, 0]:")
        .print(scores.select(0, 0).select(0, 0));
    step.print("capped[0, 0]:")
        .print(capped.select(0, 0).select(0, 0));

    let hidden = sliding_window_mask(t, Some(recipe.window));
    let masked = capped.masked_fill(&hidden, f32::NEG_INFINITY);
    let plain = masked.softmax(-1);
    let sunk = softmax_with_sink(&masked, &attn.sinks);
    let head0 = |w: &Tensor| w.select(0, 0).select(0, 0);
    let step = story.step("Attention sinks: one more column, dropped after the softmax");
    step.print(format!("sinks: {}", attn.sinks));
    step.print("without sinks, weights[0, 0]:")
        .print(head0(&plain));
    step.print("with sinks, weights[0, 0]:").print(head0(&sunk));
    step.print(format!(
        "row sums with sinks, head 0: {}",
        head0(&sunk).sum_dim(-1, false)
    ));

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

    let (out, _) = attn.forward(&x_norm, &recipe, Some(recipe.window), Products::Batched);
    let h = &x + out;
    let y = &h
        + layer0
            .ffn
            .forward(&layer0.ffn_norm.forward(&h), Products::Batched);
    let step = story.step("One layer: attention and SwiGLU with residuals");
    step.print("h = x + attention(RMSNorm(x)), h[0, :3, :6]:")
        .print(corner(&h, 3, 6));
    step.print("y = h + SwiGLU(RMSNorm(h)), y[0, :3, :6]:")
        .print(corner(&y, 3, 6));

    // ANCHOR: decode
    let plain = generate_recomputing(&model, &prompt, N_NEW, &recipe, Products::Batched);
    let cached = generate_cached(&model, &prompt, N_NEW, &recipe, Products::Batched);
    // ANCHOR_END: decode
    let step = story.step("The model: greedy decoding, recomputing");
    step.print(format!("ids: {}", plain.ids));
    step.print("logits of the first step:")
        .print(plain.logits.get(0));

    let step = story.step("Greedy decoding with a KV cache of rotated keys");
    step.print(format!("ids: {}", cached.ids));
    for (i, cache) in cached.caches.iter().enumerate() {
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
    let rows = generate_recomputing(&model, &prompt, N_NEW, &recipe, Products::RowByRow);
    let rows_cached = generate_cached(&model, &prompt, N_NEW, &recipe, Products::RowByRow);
    // ANCHOR_END: decode_rows
    let step = story.step("Cached and recomputed, one query row at a time");
    step.print(format!("ids: {}", rows.ids));
    step.print(format!(
        "torch.equal: {}",
        python_bool(rows_cached.logits == rows.logits)
    ));

    let fed = PROMPT.len() + N_NEW - 1;
    let real: usize = rows_cached.caches.iter().map(|c| c.bytes()).sum();
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

    // ANCHOR: streaming
    let streaming = Recipe {
        sink_tokens: 2,
        ..recipe
    };
    let by_row = Products::RowByRow;
    let kept_rows = generate_recomputing(&model, &prompt, N_NEW, &streaming, by_row);
    let kept_cached = generate_cached(&model, &prompt, N_NEW, &streaming, by_row);
    // ANCHOR_END: streaming
    let step = story.step(format!(
        "StreamingLLM: the first {} tokens kept beside the window",
        streaming.sink_tokens
    ));
    step.print(format!(
        "a local layer's mask (window {}, {} sink tokens), 1 = hidden:",
        streaming.window, streaming.sink_tokens
    ));
    step.print(streaming_mask(8, Some(streaming.window), streaming.sink_tokens).float());
    step.print(format!("ids: {}", kept_rows.ids));
    for (i, cache) in kept_cached.caches.iter().enumerate() {
        let kind = if streaming.is_local(i) {
            "local"
        } else {
            "global"
        };
        step.print(format!(
            "layer {i} ({kind}) cache k.shape: {}",
            cache.keys.shape()
        ));
    }
    step.print(format!(
        "cached equals recomputed, torch.equal: {}",
        python_bool(kept_cached.logits == kept_rows.logits)
    ));

    let step = story.step("What each switch changes");
    for (name, variant) in variants() {
        let (logits, _) = model.forward(&prompt, &variant, Products::Batched);
        let last = logits.select(0, 0).select(0, -1);
        step.print(format!("{name}: next token {}", last.argmax().item()));
        step.print(format!("  logits[:4]: {}", last.slice(0, ..4)));
    }

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

    let step = story.step(format!(
        "Sampling with multinomial (manual_seed({}) before each)",
        seed.or(2026)
    ));
    let mut sampled_ids = Vec::new();
    for (name, sampler) in samplers() {
        // ANCHOR: sample
        manual_seed(seed.or(2026));
        let sampled = generate_sampled(&model, &prompt, N_NEW, &recipe, &sampler);
        // ANCHOR_END: sample
        step.print(format!("{name}: {}", sampled.ids));
        sampled_ids.push(sampled.ids);
    }
    step.print(format!(
        "top-k 1 is greedy decoding: {}",
        python_bool(sampled_ids.last() == Some(&plain.ids))
    ));

    Ok(story)
}
