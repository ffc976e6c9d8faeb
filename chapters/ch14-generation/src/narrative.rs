//! The chapter's printed steps, in the order of the reference script
//! `reference/ch14_generation.py`.

use course::narrative::python_bool;
use course::{Narrative, Seed, Step};
use shared::{Result, Tensor, arange, manual_seed};

use crate::cache_size::cache_bytes;
use crate::digits::{float32_steps, full_precision};
use crate::generate::{Generation, generate_cached, generate_recomputing};
use crate::gqa::repeat_kv;
use crate::model::{DecoderConfig, TinyDecoder};
use crate::setup::{CONFIG, MODELS, N_NEW, PROMPT, WINDOW};
use crate::window::sliding_window_mask;

/// Runs the chapter and returns what it prints; `seed` replaces the chapter's seed 123.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new(
        "Chapter 14: Generation with a KV cache, GQA and sliding windows",
    );
    let prompt = Tensor::from_vec(PROMPT.to_vec(), &[1, PROMPT.len()]);

    // ANCHOR: model
    manual_seed(seed.or(123));
    let model = TinyDecoder::new(CONFIG);
    // ANCHOR_END: model
    let step = story.step(format!("A tiny decoder (manual_seed({}))", seed.or(123)));
    step.print(format!(
        "vocab {}, d_model {}, {} query heads, {} key/value heads, head_dim {}",
        CONFIG.vocab_size,
        CONFIG.d_model,
        CONFIG.n_heads,
        CONFIG.n_kv_heads,
        model.attn.head_dim
    ));
    step.print_shape("W_query.weight.shape", &model.attn.w_query.weight);
    step.print_shape("W_key.weight.shape", &model.attn.w_key.weight);
    step.print_shape("W_value.weight.shape", &model.attn.w_value.weight);
    step.print(format!("prompt: {prompt}"));

    // ANCHOR: decode_batched
    let plain = generate_recomputing(&model, &prompt, N_NEW, TinyDecoder::forward);
    let cached = generate_cached(&model, &prompt, N_NEW, TinyDecoder::forward);
    // ANCHOR_END: decode_batched
    let step = story.step("Greedy decoding, recomputing the whole sequence");
    step.print(format!("ids: {}", plain.ids));
    step.print("logits of each step:");
    step.print(&plain.logits);

    let cache = cached
        .cache
        .as_ref()
        .expect("a cached generation keeps its cache");
    let step = story.step("Greedy decoding with a KV cache");
    step.print(format!("ids: {}", cached.ids));
    step.print("logits of each step:");
    step.print(&cached.logits);
    step.print_shape("cache k.shape", &cache.keys);
    step.print_shape("cache v.shape", &cache.values);
    generation_heatmaps(step, &cached, model.attn.n_heads)?;

    // ANCHOR: compare_batched
    let step = story.step("Cached and recomputed logits, batched products");
    step.print(format!(
        "torch.equal: {}",
        python_bool(cached.logits == plain.logits)
    ));
    step.print(format!(
        "first step equal (the prompt, computed the same way): {}",
        python_bool(cached.logits.get(0) == plain.logits.get(0))
    ));
    let max_diff = (&cached.logits - &plain.logits).abs().max().item();
    step.print(format!(
        "max |cached - recomputed| < 1e-5: {}",
        python_bool(max_diff < 1e-5)
    ));
    step.print(format!(
        "same ids: {}",
        python_bool(cached.ids == plain.ids)
    ));
    // ANCHOR_END: compare_batched

    // Which digits differ depends on the order in which the processor's matrix library
    // adds; the same effect with elementwise operations, rounded the same everywhere.
    let x0 = model.embed(&prompt.narrow(1, 0, 1), 0).view(&[-1]);
    let orders = two_orders(&x0, &model.lm_head.weight);
    let step = story.step("One dot product, added in two orders");
    step.print(format!(
        "x · lm_head.weight[{}], x = the embedding of token {} at position 0",
        orders.row, PROMPT[0]
    ));
    step.print(format!(
        "  one term after another: {}",
        full_precision(orders.in_order)
    ));
    step.print(format!(
        "  16 lanes, then halves:  {}",
        full_precision(orders.by_halves)
    ));
    step.print(format!(
        "  {} float32 step(s) apart",
        float32_steps(orders.in_order, orders.by_halves)
    ));

    // ANCHOR: decode_rows
    let rows =
        generate_recomputing(&model, &prompt, N_NEW, TinyDecoder::forward_row_by_row);
    let rows_cached =
        generate_cached(&model, &prompt, N_NEW, TinyDecoder::forward_row_by_row);
    // ANCHOR_END: decode_rows
    let step = story.step("Cached and recomputed logits, one query row at a time");
    step.print(format!("ids: {}", rows.ids));
    step.print(format!(
        "torch.equal: {}",
        python_bool(rows_cached.logits == rows.logits)
    ));
    step.print(format!(
        "max |cached - recomputed|: {}",
        full_precision((&rows_cached.logits - &rows.logits).abs().max().item())
    ));
    step.print(format!(
        "equal to the cached batched logits: {}",
        python_bool(rows_cached.logits == cached.logits)
    ));

    let step = story.step("Which key/value head each query head reads");
    for (n_kv, name) in [
        (4usize, "multi-head"),
        (2, "grouped-query"),
        (1, "multi-query"),
    ] {
        let heads = arange(0, n_kv, 1).float().view([1, n_kv, 1, 1]);
        let kv_of: Vec<usize> = repeat_kv(&heads, CONFIG.n_heads / n_kv)
            .to_vec()
            .iter()
            .map(|&h| h as usize)
            .collect();
        step.print(format!(
            "{name} ({n_kv} kv heads): query head -> kv head {kv_of:?}"
        ));
    }

    let step = story.step(format!(
        "A sliding window of {WINDOW}: the hidden keys of 8 tokens"
    ));
    let hidden = sliding_window_mask(8, Some(WINDOW)).float();
    step.print(&hidden);
    step.heatmap_indexed("hidden keys (1 = hidden)", &hidden)?;
    step.print(format!(
        "a window of 8 hides what the causal mask hides: {}",
        python_bool(sliding_window_mask(8, Some(8)) == sliding_window_mask(8, None))
    ));

    // ANCHOR: decode_window
    manual_seed(seed.or(123));
    let windowed = TinyDecoder::new(DecoderConfig {
        window: Some(WINDOW),
        ..CONFIG
    });
    let recomputed = generate_recomputing(
        &windowed,
        &prompt,
        N_NEW,
        TinyDecoder::forward_row_by_row,
    );
    let rolling =
        generate_cached(&windowed, &prompt, N_NEW, TinyDecoder::forward_row_by_row);
    // ANCHOR_END: decode_window
    let rolling_cache = rolling
        .cache
        .as_ref()
        .expect("a cached generation keeps its cache");
    let step = story.step(format!(
        "Decoding with a window of {WINDOW} and a rolling cache"
    ));
    step.print(format!("ids: {}", rolling.ids));
    step.print("logits of each step:");
    step.print(&rolling.logits);
    step.print_shape("cache k.shape", &rolling_cache.keys);
    generation_heatmaps(step, &rolling, windowed.attn.n_heads)?;
    step.print(format!(
        "equal to recomputing with the window, row by row: {}",
        python_bool(rolling.logits == recomputed.logits)
    ));
    step.print(format!(
        "same ids as without a window: {}",
        python_bool(rolling.ids == cached.ids)
    ));

    let step = story.step("KV cache size (keys and values, all layers)");
    step.print(format!(
        "{:<11} {:>6} {:>6} {:>3} {:>4} {:>6} {:>6} {:>9} {:>9} {:>8} {:>8}",
        "model",
        "layers",
        "heads",
        "kv",
        "hd",
        "tokens",
        "cached",
        "f32/token",
        "f16/token",
        "f32 MiB",
        "f16 MiB"
    ));
    for m in &MODELS {
        let bytes = |tokens, per_value| {
            cache_bytes(m.layers, m.kv_heads, m.head_dim, tokens, per_value)
        };
        let mib = |b: u64| b as f64 / f64::from(1 << 20);
        step.print(format!(
            "{:<11} {:>6} {:>6} {:>3} {:>4} {:>6} {:>6} {:>9} {:>9} {:>8.1} {:>8.1}",
            m.name,
            m.layers,
            m.heads,
            m.kv_heads,
            m.head_dim,
            m.tokens,
            m.cached,
            bytes(1, 4),
            bytes(1, 2),
            mib(bytes(m.cached, 4)),
            mib(bytes(m.cached, 2))
        ));
    }
    let tiny = cache_bytes(1, CONFIG.n_kv_heads, model.attn.head_dim, cache.len(), 4);
    step.print(format!(
        "this chapter's model: {tiny} bytes for {} tokens, k and v hold {}",
        cache.len(),
        cache.bytes()
    ));
    Ok(story)
}

/// One dot product added in two orders.
pub struct TwoOrders {
    /// The row of the weight whose two sums differ (the last row if none does).
    pub row: usize,
    /// `((t0 + t1) + t2) + ...`: one term after another, as a many-row product adds.
    pub in_order: f32,
    /// Pairwise: term `i` plus term `i + half`, again and again on the sums while more
    /// than one is left.
    pub by_halves: f32,
}

/// The first row `j` of `weight` for which `x · weight[j]` comes out differently when
/// its 16 terms are added one after another and when they are added pairwise, by halves.
///
/// # Shapes
/// `x`: `[16]`, `weight`: `[rows, 16]`.
// ANCHOR: two_orders
pub fn two_orders(x: &Tensor, weight: &Tensor) -> TwoOrders {
    let mut orders = TwoOrders {
        row: 0,
        in_order: 0.0,
        by_halves: 0.0,
    };
    for row in 0..weight.size(0) {
        let terms = (x * &weight.get(row)).to_vec();
        let in_order = terms[1..].iter().fold(terms[0], |sum, &t| sum + t);
        let mut sums = terms;
        while sums.len() > 1 {
            let half = sums.len() / 2;
            sums = (0..half).map(|i| sums[i] + sums[i + half]).collect();
        }
        orders = TwoOrders {
            row,
            in_order,
            by_halves: sums[0],
        };
        if in_order != sums[0] {
            break;
        }
    }
    orders
}
// ANCHOR_END: two_orders

/// Records, per head, what each new token attended to over the cache: one row per new
/// token, one column per position, labelled `position: token id`.
fn generation_heatmaps(
    step: &mut Step,
    generation: &Generation,
    heads: usize,
) -> Result<()> {
    let ids = generation.ids.to_vec();
    let label = |p: usize| format!("{p}: {}", ids[p]);
    for h in 0..heads {
        let grid = generation.weight_rows(h); // [fed tokens, positions]
        let (fed, positions) = (grid.size(0), grid.size(1));
        let rows: Vec<String> = (positions - fed..positions).map(label).collect();
        let cols: Vec<String> = (0..positions).map(label).collect();
        let title = format!("head {h}: each new token over the cache");
        step.heatmap(&title, &grid, &rows, &cols)?;
    }
    Ok(())
}
