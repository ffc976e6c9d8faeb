//! One test per exercise, named after it, so that `cargo test -p ch20-real-model --features
//! exercise --test exercises exercise_NAME` checks just that function. Each checks committed
//! data (the tiny GGUF and the values transformers read from it, a few KB of the real model's
//! attention) or arithmetic, and properties a hard-coded answer cannot satisfy; none calls
//! another exercise, and none needs the 98 MB model file.

mod common;

use ch20_real_model::config::{Architecture, Config};
use ch20_real_model::gguf::GgufFile;
use ch20_real_model::induction_key::induction_key;
use ch20_real_model::sink::sink_share;
use ch20_real_model::speed::decode_speed_bound;
use ch20_real_model::unpermute::unpermute_rows;
use common::{Expected, fixture};
use course::quiet_proptest::quiet;
use proptest::prelude::*;

/// llama.cpp's permutation (its converter's `permute`), the inverse of the exercise.
fn permute(weight: &[f32], heads: usize, head_dim: usize, d_in: usize) -> Vec<f32> {
    let half = head_dim / 2;
    let mut out = vec![0.0; weight.len()];
    for h in 0..heads {
        for p in 0..2 {
            for i in 0..half {
                let (from, to) =
                    (h * head_dim + p * half + i, h * head_dim + 2 * i + p);
                out[to * d_in..(to + 1) * d_in]
                    .copy_from_slice(&weight[from * d_in..(from + 1) * d_in]);
            }
        }
    }
    out
}

#[test]
fn exercise_unpermute_rows_gives_transformers_weights() {
    let file = GgufFile::open(&fixture("tiny-llama.gguf")).unwrap();
    let expected = Expected::open("tiny-llama.gguf.expected.safetensors");
    for layer in 0..2 {
        for (gguf, hf, heads) in [("attn_q", "q_proj", 4), ("attn_k", "k_proj", 2)] {
            let (rows, shape) =
                file.tensor(&format!("blk.{layer}.{gguf}.weight")).unwrap();
            let ours = unpermute_rows(&rows, heads, 16, shape[1]);
            let theirs = expected
                .f32(&format!("model.layers.{layer}.self_attn.{hf}.weight"))
                .to_vec();
            let first_wrong = ours
                .iter()
                .zip(&theirs)
                .position(|(a, b)| a.to_bits() != b.to_bits());
            assert_eq!(
                first_wrong,
                None,
                "layer {layer} {hf}: value {first_wrong:?} (row {:?}) differs",
                first_wrong.map(|i| i / shape[1])
            );
        }
    }
}

proptest! {
    #![proptest_config(quiet(64))]
    #[test]
    fn exercise_unpermute_rows_undoes_llama_cpp(heads in 1usize..4, pairs in 1usize..5, d_in in 1usize..4) {
        let head_dim = 2 * pairs;
        let weight: Vec<f32> = (0..heads * head_dim * d_in).map(|i| i as f32).collect();
        prop_assert_eq!(unpermute_rows(&permute(&weight, heads, head_dim, d_in), heads, head_dim, d_in), weight);
    }
}

/// The real model's layer-5 attention on a sentence, and its strongest induction head on a
/// short repeat, as the reference script saved them.
fn real_attention() -> Expected {
    Expected::open("real/attention.safetensors")
}

#[test]
fn exercise_sink_share_finds_the_real_models_sink() {
    let attention = real_attention();
    let layer = attention.f32("sentence_layer"); // [heads, tokens, tokens]
    let [heads, tokens, _] = layer.sizes()[..] else {
        panic!("3 dims")
    };
    let shares = sink_share(&layer.unsqueeze(0));
    assert_eq!(shares.len(), heads);
    // The same mean taken another way: column 0, rows 1.., averaged.
    let column = layer.to_vec();
    for (h, share) in shares.iter().enumerate() {
        let want: f64 = (1..tokens)
            .map(|i| f64::from(column[(h * tokens + i) * tokens]))
            .sum::<f64>()
            / (tokens - 1) as f64;
        assert!(
            (share - want).abs() < 1e-9,
            "head {h}: {share}, expected {want}"
        );
    }
    // Spread evenly, query i would give key 0 a share of 1/(i+1): every head of this trained
    // layer gives it more than twice that.
    let even =
        (1..tokens).map(|i| 1.0 / (i + 1) as f64).sum::<f64>() / (tokens - 1) as f64;
    for (h, share) in shares.iter().enumerate() {
        assert!(
            *share > 2.0 * even,
            "head {h} gives the first token {share:.3}, an even spread {even:.3}"
        );
    }
}

#[test]
fn exercise_sink_share_averages_over_the_batch() {
    let layer = real_attention().f32("sentence_layer").unsqueeze(0);
    let uniform = layer.ones_like() / layer.size(-1) as f32;
    let both = shared::cat(&[&layer, &uniform], 0);
    let (one, two) = (sink_share(&layer), sink_share(&both));
    let flat = 1.0 / layer.size(-1) as f64;
    for (a, b) in one.iter().zip(&two) {
        assert!(
            (b - (a + flat) / 2.0).abs() < 1e-6,
            "{b} is not the mean of {a} and {flat}"
        );
    }
}

#[test]
fn exercise_induction_key_predicts_the_real_induction_head() {
    let attention = real_attention();
    let ids = attention.i64("repeat_ids");
    let head = attention.f32("induction_head"); // [tokens, tokens]
    let tokens = ids.len();
    let (mut predicted, mut copying, mut agree) = (0, 0, 0);
    for query in 0..tokens {
        let Some(key) = induction_key(&ids, query) else {
            continue;
        };
        predicted += 1;
        let row = head.get(query as i64);
        // Where the head is not resting on the sink (key 0), it must look at the key predicted.
        if row.get(0).item() < 0.5 {
            copying += 1;
            if row.argmax().item() as usize == key {
                agree += 1;
            }
        }
    }
    assert_eq!(
        predicted,
        tokens / 2,
        "every token of the repeat has a key, no other"
    );
    assert!(
        copying >= predicted / 2,
        "the head copies at {copying} of {predicted} queries"
    );
    assert_eq!(
        agree, copying,
        "where it copies, the head looks where predicted"
    );
}

proptest! {
    #![proptest_config(quiet(128))]
    #[test]
    fn exercise_induction_key_follows_the_latest_occurrence(ids in prop::collection::vec(0i64..4, 1..20), pick in any::<prop::sample::Index>()) {
        let query = pick.index(ids.len());
        match induction_key(&ids, query) {
            None => prop_assert!(!ids[..query].contains(&ids[query])),
            Some(key) => {
                prop_assert!(key >= 1 && key <= query);
                prop_assert_eq!(ids[key - 1], ids[query]);
                prop_assert!(!ids[key..query].contains(&ids[query]), "a later occurrence before the query");
            }
        }
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
