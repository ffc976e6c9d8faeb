//! The weights kept quantised against the float32 path: the same prefill logits, the same
//! logits at every decoding step and the same tokens, bit for bit, on the tiny GGUF model
//! (whose layers mix Q4_1, Q8_0 and float32 matrices) in every run, and on SmolLM2 when
//! its file is there.

mod common;

use ch20_real_model::generate::{Choice, Decoder, Limits, as_batch, generate};
use ch20_real_model::growing_cache::growing;
use ch20_real_model::loader::{Loaded, load, load_quantised, model_for_tests};
use ch20_real_model::quantised::QuantModel;
use common::fixture;
use shared::Tensor;

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec().iter().map(|v| v.to_bits()).collect()
}

/// Fails with both logits and their largest difference when their bits differ.
fn assert_same(float: &Tensor, quantised: &Tensor, what: &str) {
    if bits(float) != bits(quantised) {
        let diff = (float - quantised).abs().max().item();
        panic!(
            "{what}: largest difference {diff:e}\n  float32   {float}\n  quantised {quantised}"
        );
    }
}

/// The prefill of `prompt` and `steps` greedy steps after it on both models: the logits of
/// each, compared bit for bit.
fn same_logits(
    float: &Loaded,
    quantised: &Loaded<QuantModel>,
    prompt: &[u32],
    steps: usize,
) {
    let ids = as_batch(prompt);
    let (a, caches_a) = Decoder::prefill(&float.model, &ids, &float.recipe);
    let (b, caches_b) = quantised.model.prefill(&ids, &quantised.recipe);
    assert_same(&a, &b, &format!("prefill of {} tokens", prompt.len()));
    for (l, (x, y)) in caches_a.iter().zip(&caches_b).enumerate() {
        assert_eq!(bits(&x.keys), bits(&y.keys), "layer {l}'s cached keys");
        assert_eq!(
            bits(&x.values),
            bits(&y.values),
            "layer {l}'s cached values"
        );
    }
    let capacity = prompt.len() + steps;
    let mut caches_a = growing(&caches_a, &float.recipe, capacity);
    let mut caches_b = growing(&caches_b, &quantised.recipe, capacity);
    let mut token = a.select(0, 0).argmax().item() as u32;
    for s in 0..steps {
        let position = prompt.len() + s;
        let t = as_batch(&[token]);
        let a =
            Decoder::step(&float.model, &t, position, &mut caches_a, &float.recipe);
        let b = quantised
            .model
            .step(&t, position, &mut caches_b, &quantised.recipe);
        assert_same(&a, &b, &format!("step {s} after {} tokens", prompt.len()));
        token = a.select(0, 0).argmax().item() as u32;
    }
}

#[test]
fn the_tiny_model_quantised_has_the_float32_bits() {
    let path = fixture("tiny-llama.gguf");
    let float = load(&path, |_, _| {}).expect("the tiny GGUF loads");
    let quantised = load_quantised(&path).expect("the tiny GGUF loads quantised");
    // One token (the head's one-row product), two, and more than a pass of rows.
    for prompt in [
        &[5u32][..],
        &[5, 17],
        &[5, 17, 42, 99, 3, 250, 7, 61, 128, 33],
    ] {
        same_logits(&float, &quantised, prompt, 6);
    }
    let limits = Limits {
        max_new_tokens: 12,
        eos: None,
        context_length: float.config.context_length,
    };
    let prompt = [5, 17, 42, 99];
    let a = generate(
        &float.model,
        &float.recipe,
        &prompt,
        Choice::Greedy,
        &limits,
        |_| {},
    );
    let b = generate(
        &quantised.model,
        &quantised.recipe,
        &prompt,
        Choice::Greedy,
        &limits,
        |_| {},
    );
    assert_eq!(
        a.expect("generates"),
        b.expect("generates"),
        "the greedy tokens"
    );
}

#[test]
fn the_quantised_model_keeps_the_files_bytes() {
    let path = fixture("tiny-llama.gguf");
    let quantised = load_quantised(&path).expect("the tiny GGUF loads quantised");
    let float = load(&path, |_, _| {}).expect("the tiny GGUF loads");
    // Each matrix's rows, dequantised, are the float32 loader's (W_q, W_k un-permuted too).
    let layer = &quantised.model.layers[0];
    let float_layer = &float.model.layers[0];
    for (q, f, name) in [
        (&layer.w_query, &float_layer.attn.w_query.weight, "W_q"),
        (&layer.w_key, &float_layer.attn.w_key.weight, "W_k"),
        (&layer.w_down, &float_layer.ffn.w_down.weight, "W_down"),
    ] {
        assert_eq!(bits(&q.dequantised()), bits(f), "layer 0's {name}");
    }
    assert!(quantised.model.size_in_bytes() > 0);
}

#[test]
fn a_folder_cannot_be_kept_quantised() {
    let error = load_quantised(&fixture("tiny-llama"))
        .err()
        .expect("refused")
        .to_string();
    assert!(error.contains("GGUF"), "{error}");
}

#[test]
fn smollm2_quantised_has_the_float32_bits() {
    let Some(path) = model_for_tests() else {
        return;
    };
    let float = load(&path, |_, _| {}).expect("the model loads");
    let quantised = load_quantised(&path).expect("the model loads quantised");
    let prompt: Vec<u32> = (0..40).map(|i| 1000 + 37 * i).collect();
    same_logits(&float, &quantised, &prompt, 3);
}
