//! One test per exercise, named after it, so that `cargo test -p ch20-real-model --features
//! exercise --test exercises exercise_NAME` checks just that function. Each checks committed
//! data (the tiny GGUF and the values transformers read from it, a few KB of the real model's
//! attention) or arithmetic, and properties a hard-coded answer cannot satisfy; none calls
//! another exercise, and none needs the 98 MB model file.

mod common;

use ch15_modern_layer::attention::streaming_mask;
use ch20_real_model::config::{Architecture, Config};
use ch20_real_model::eviction::evicted_share;
use ch20_real_model::gguf::GgufFile;
use ch20_real_model::induction_key::induction_key;
use ch20_real_model::interleave::interleave_rows;
use ch20_real_model::resample::resample_ablate;
use ch20_real_model::speed::decode_speed_bound;
use ch20_real_model::unpermute::unpermute_rows;
use common::{Expected, fixture};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::Tensor;

/// The first row of `ours` that differs from `want`, said as which row of `input` each
/// holds: `None` when all agree.
fn wrong_row(
    ours: &[f32],
    want: &[f32],
    input: &[f32],
    d_in: usize,
) -> Option<String> {
    let row = |rows: &[f32], r: usize| rows[r * d_in..(r + 1) * d_in].to_vec();
    let source = |values: Vec<f32>| {
        (0..input.len() / d_in)
            .find(|&r| row(input, r) == values)
            .map_or("no row of the input".to_string(), |r| {
                format!("input row {r}")
            })
    };
    let rows = want.len() / d_in;
    if ours.len() != want.len() {
        return Some(format!("{} values, expected {}", ours.len(), want.len()));
    }
    (0..rows).find(|&r| row(ours, r) != row(want, r)).map(|r| {
        format!(
            "row {r} holds {}, expected {}",
            source(row(ours, r)),
            source(row(want, r))
        )
    })
}

#[test]
fn exercise_interleave_rows_writes_the_files_rows() {
    let file = GgufFile::open(&fixture("tiny-llama.gguf")).unwrap();
    let expected = Expected::open("tiny-llama.gguf.expected.safetensors");
    for layer in 0..2 {
        for (gguf, hf, heads) in [("attn_q", "q_proj", 4), ("attn_k", "k_proj", 2)] {
            // What the file stores, and transformers' half-split rows read from it.
            let (stored, shape) =
                file.tensor(&format!("blk.{layer}.{gguf}.weight")).unwrap();
            let d_in = shape[1];
            let half_split = expected
                .f32(&format!("model.layers.{layer}.self_attn.{hf}.weight"))
                .to_vec();
            let ours = interleave_rows(&half_split, heads, 16, d_in);
            if let Some(wrong) = wrong_row(&ours, &stored, &half_split, d_in) {
                panic!(
                    "layer {layer} {hf} ({heads} heads of 16 rows, {d_in} values a row): {wrong}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(quiet(64))]
    #[test]
    fn exercise_interleave_rows_undoes_unpermute_rows(heads in 1usize..4, pairs in 1usize..6, d_in in 1usize..4) {
        let head_dim = 2 * pairs;
        // Every value of row r is r, so each row says where it came from.
        let rows: Vec<f32> = (0..heads * head_dim)
            .flat_map(|r| std::iter::repeat_n(r as f32, d_in))
            .collect();
        let case = format!("{heads} heads of {head_dim} rows, {d_in} values a row");
        let there_and_back = interleave_rows(&unpermute_rows(&rows, heads, head_dim, d_in), heads, head_dim, d_in);
        let wrong = wrong_row(&there_and_back, &rows, &rows, d_in);
        prop_assert!(wrong.is_none(), "{case}, interleave_rows after unpermute_rows: {}", wrong.unwrap_or_default());
        let back_and_there = unpermute_rows(&interleave_rows(&rows, heads, head_dim, d_in), heads, head_dim, d_in);
        let wrong = wrong_row(&back_and_there, &rows, &rows, d_in);
        prop_assert!(wrong.is_none(), "{case}, unpermute_rows after interleave_rows: {}", wrong.unwrap_or_default());
    }
}

/// The real model's layer-5 attention on a sentence, and its strongest induction head on a
/// short repeat, as the reference script saved them.
fn real_attention() -> Expected {
    Expected::open("real/attention.safetensors")
}

/// The weight a window of `window` keys with `sinks` sink tokens evicts, from chapter 15's
/// mask: per head, the mean over queries of the weights on hidden keys.
fn evicted_by_mask(layer: &Tensor, window: usize, sinks: usize) -> Vec<f64> {
    let [heads, tokens, _] = layer.sizes()[..] else {
        panic!("3 dims")
    };
    let (w, hidden) = (
        layer.to_vec(),
        streaming_mask(tokens, Some(window), sinks).to_vec(),
    );
    (0..heads)
        .map(|h| {
            (0..tokens * tokens)
                .filter(|&at| hidden[at])
                .map(|at| f64::from(w[h * tokens * tokens + at]))
                .sum::<f64>()
                / tokens as f64
        })
        .collect()
}

#[test]
fn exercise_evicted_share_measures_what_the_window_drops() {
    let layer = real_attention().f32("sentence_layer"); // [heads, tokens, tokens]
    let tokens = layer.size(-1);
    for (window, sinks) in [(4, 0), (4, 1), (4, 4), (8, 1), (1, 0), (tokens, 0)] {
        let shares = evicted_share(&layer.unsqueeze(0), window, sinks);
        let want = evicted_by_mask(&layer, window, sinks);
        assert_eq!(shares.len(), want.len(), "one share per head");
        for (h, (got, want)) in shares.iter().zip(&want).enumerate() {
            assert!(
                (got - want).abs() < 1e-9,
                "layer 5 on {tokens} tokens, window {window}, {sinks} sinks, head {h}: {got:.6}, expected {want:.6}"
            );
        }
    }
    // StreamingLLM's point, on a real model: a window of 4 keys takes much of each head's
    // attention away, and keeping the first token as a sink saves more than a third of it.
    let weights = layer.unsqueeze(0);
    let (without, with) =
        (evicted_share(&weights, 4, 0), evicted_share(&weights, 4, 1));
    for (h, (a, b)) in without.iter().zip(&with).enumerate() {
        assert!(
            *b < a * 2.0 / 3.0,
            "head {h}: a window of 4 keys takes {a:.3} without a sink, {b:.3} with the first token kept"
        );
    }
}

#[test]
fn exercise_evicted_share_averages_over_the_batch() {
    let layer = real_attention().f32("sentence_layer").unsqueeze(0);
    let uniform = causal_uniform(1, layer.size(1), layer.size(-1));
    let both = shared::cat(&[&layer, &uniform], 0);
    let (one, flat, two) = (
        evicted_share(&layer, 4, 1),
        evicted_share(&uniform, 4, 1),
        evicted_share(&both, 4, 1),
    );
    for (h, ((a, b), mean)) in one.iter().zip(&flat).zip(&two).enumerate() {
        assert!(
            (mean - (a + b) / 2.0).abs() < 1e-6,
            "head {h}, window 4, 1 sink: a batch of two sequences gives {mean}, not the mean of {a} and {b}"
        );
    }
}

/// Causal attention spread evenly: query `i` gives each of its `i + 1` keys `1/(i + 1)`.
fn causal_uniform(batch: usize, heads: usize, tokens: usize) -> Tensor {
    let row = |i: usize| {
        (0..tokens).map(move |j| if j <= i { 1.0 / (i + 1) as f32 } else { 0.0 })
    };
    let one: Vec<f32> = (0..tokens).flat_map(row).collect();
    Tensor::from_vec(one.repeat(batch * heads), &[batch, heads, tokens, tokens])
}

proptest! {
    #![proptest_config(quiet(64))]
    #[test]
    fn exercise_evicted_share_counts_the_keys_dropped(batch in 1usize..3, heads in 1usize..3, tokens in 1usize..14, window in 1usize..14, sinks in 0usize..5) {
        let shares = evicted_share(&causal_uniform(batch, heads, tokens), window, sinks);
        // Query i keeps the min(window, i + 1) keys of its window and, before them, up to
        // `sinks` first keys; it drops the rest, each 1/(i + 1) of its attention.
        let want = (0..tokens)
            .map(|i| {
                let kept = window.min(i + 1) + sinks.min((i + 1).saturating_sub(window));
                (i + 1 - kept) as f64 / (i + 1) as f64
            })
            .sum::<f64>()
            / tokens as f64;
        prop_assert_eq!(shares.len(), heads);
        for (h, got) in shares.iter().enumerate() {
            prop_assert!((got - want).abs() < 1e-6, "even causal attention on {tokens} tokens, window {window}, {sinks} sinks, head {h}: {got:.6}, expected {want:.6}");
        }
    }
}

/// The key an induction head would look at, found another way: the latest earlier
/// position of the query's token, plus one.
fn expected_key(ids: &[i64], query: usize) -> Option<usize> {
    ids[..query]
        .iter()
        .rposition(|&t| t == ids[query])
        .map(|j| j + 1)
}

#[test]
fn exercise_induction_key_predicts_the_real_induction_head() {
    let attention = real_attention();
    let ids = attention.i64("repeat_ids");
    let head = attention.f32("induction_head"); // [tokens, tokens]
    let tokens = ids.len();
    let mut copying = 0;
    for query in 0..tokens {
        let (got, want) = (induction_key(&ids, query), expected_key(&ids, query));
        assert_eq!(
            got, want,
            "query {query} (token {}) of {ids:?}: returned key {got:?}, expected key {want:?}",
            ids[query]
        );
        let Some(key) = got else { continue };
        let row = head.get(query as i64);
        // Where the head is not resting on the sink (key 0), it must look at the key predicted.
        if row.get(0).item() < 0.5 {
            copying += 1;
            let looks_at = row.argmax().item() as usize;
            assert_eq!(
                looks_at, key,
                "query {query} (token {}): the head looks at key {looks_at}, you predicted key {key}",
                ids[query]
            );
        }
    }
    assert!(
        copying >= tokens / 4,
        "the head copies at only {copying} of the {} queries of the repeat",
        tokens / 2
    );
}

proptest! {
    #![proptest_config(quiet(128))]
    #[test]
    fn exercise_induction_key_follows_the_latest_occurrence((ids, query) in (1usize..20).prop_flat_map(|n| (prop::collection::vec(0i64..4, n), 0..n))) {
        let (got, want) = (induction_key(&ids, query), expected_key(&ids, query));
        prop_assert_eq!(got, want, "ids {:?}, query {} (token {}): returned key {:?}, expected key {:?}", ids, query, ids[query], got, want);
    }
}

fn smollm2() -> Config {
    Config {
        architecture: Architecture::Llama,
        vocab_size: 49_152,
        d_model: 576,
        n_layers: 30,
        n_heads: 9,
        n_kv_heads: 3,
        head_dim: 64,
        d_ff: 1536,
        rms_norm_eps: 1e-5,
        rope_theta: 1e5,
        context_length: 8192,
        tied_embeddings: true,
    }
}

#[test]
fn exercise_decode_speed_bound_counts_weights_and_cache() {
    let c = smollm2();
    // 134,515,008 parameters, all read (the table as the head), plus one row; 46,080 bytes of
    // cache per token.
    let weights = 4.0 * (134_515_008.0 + 576.0);
    let close = |got: f64, want: f64| {
        assert!(
            (got / want - 1.0).abs() < 1e-3,
            "{got} tokens/s, expected {want}"
        )
    };
    close(decode_speed_bound(&c, 20e9, 0), 20e9 / weights);
    close(
        decode_speed_bound(&c, 20e9, 8192),
        20e9 / (weights + 8192.0 * 46_080.0),
    );
    // Untied, the table is only looked up: one row; the head is read whole.
    let untied = Config {
        tied_embeddings: false,
        ..c.clone()
    };
    let untied_weights = 4.0 * (134_515_008.0 + 576.0);
    close(decode_speed_bound(&untied, 20e9, 0), 20e9 / untied_weights);
}

proptest! {
    #![proptest_config(quiet(64))]
    #[test]
    fn exercise_decode_speed_bound_scales(bandwidth in 1e9f64..1e11, cached in 0usize..100_000, layers in 1usize..40) {
        let c = Config { n_layers: layers, ..smollm2() };
        let base = decode_speed_bound(&c, bandwidth, cached);
        prop_assert!(base > 0.0);
        prop_assert!((decode_speed_bound(&c, 2.0 * bandwidth, cached) / base - 2.0).abs() < 1e-9);
        prop_assert!(decode_speed_bound(&c, bandwidth, cached + 1000) < base);
    }
}

/// Where `resample_ablate` went wrong, said as a place and a source: `None` when every
/// value of head `head`'s columns is the donor's and every other value the input's.
fn wrong_resample(
    ours: &Tensor,
    merged: &Tensor,
    donor: &Tensor,
    head: usize,
    head_dim: usize,
) -> Option<String> {
    if ours.sizes() != merged.sizes() {
        return Some(format!(
            "shape {:?}, expected {:?}",
            ours.sizes(),
            merged.sizes()
        ));
    }
    let width = merged.size(-1);
    let (ours, merged, donor) = (ours.to_vec(), merged.to_vec(), donor.to_vec());
    (0..ours.len()).find_map(|i| {
        let (row, column) = (i / width, i % width);
        let (want, from) = if column / head_dim == head {
            (donor[i], "the donor")
        } else {
            (merged[i], "the input")
        };
        (ours[i].to_bits() != want.to_bits()).then(|| {
            format!(
                "row {row}, column {column} (head {}): {}, expected {want} from {from}",
                column / head_dim,
                ours[i]
            )
        })
    })
}

#[test]
fn exercise_resample_ablate_takes_only_the_heads_columns() {
    // 2 sequences of 3 tokens, 3 heads of 2: the input counts up, the donor down.
    let merged = Tensor::from_vec((0..36).map(|v| v as f32).collect(), &[2, 3, 6]);
    let donor =
        Tensor::from_vec((0..36).map(|v| -1.0 - v as f32).collect(), &[2, 3, 6]);
    for head in 0..3 {
        let ours = resample_ablate(&merged, &donor, head, 2);
        if let Some(wrong) = wrong_resample(&ours, &merged, &donor, head, 2) {
            panic!("head {head} of 3 heads of 2 columns: {wrong}");
        }
    }
    // Its own output as the donor: nothing changes.
    let same = resample_ablate(&merged, &merged, 1, 2);
    assert_eq!(same.to_vec(), merged.to_vec(), "the input as its own donor");
}

proptest! {
    #![proptest_config(quiet(64))]
    #[test]
    fn exercise_resample_ablate_on_random_sizes(batch in 1usize..3, tokens in 1usize..5, heads in 1usize..5, head_dim in 1usize..5, pick in 0usize..5, seed in 0u64..1000) {
        let head = pick % heads;
        shared::manual_seed(seed);
        let shape = [batch, tokens, heads * head_dim];
        let (merged, donor) = (shared::randn(&shape), shared::randn(&shape));
        let ours = resample_ablate(&merged, &donor, head, head_dim);
        let wrong = wrong_resample(&ours, &merged, &donor, head, head_dim);
        prop_assert!(wrong.is_none(), "batch {batch}, {tokens} tokens, head {head} of {heads} heads of {head_dim}: {}", wrong.unwrap_or_default());
    }
}
