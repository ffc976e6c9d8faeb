//! Ablation and the streaming window on the tiny GGUF model (2 layers of 4 heads of 16):
//! each intervention changes what it should and nothing else. The real model's numbers
//! against transformers' are in `tests/output.rs`.

mod common;

use ch15_modern_layer::{Recipe, TinyModel};
use ch20_real_model::ablation::{
    Ablation, Replacement, forward_with_ablation, random_head,
};
use ch20_real_model::generate::as_batch;
use ch20_real_model::heads::attention_maps;
use ch20_real_model::loader::{Loaded, load};
use ch20_real_model::streaming::{mean_loss, perplexity, streaming_recipe};
use common::{assert_bits, fixture};
use proptest::prelude::*;
use shared::{Tensor, manual_seed, randn};

fn tiny() -> Loaded {
    load(&fixture("tiny-llama.gguf"), |_, _| {}).expect("the tiny GGUF model loads")
}

/// Twelve token ids of the tiny vocabulary (320 entries).
fn ids() -> Tensor<i64> {
    as_batch(&[5, 17, 42, 99, 3, 250, 7, 61, 128, 33, 200, 11])
}

/// Every head of the given layers.
fn all_heads(model: &TinyModel, layers: &[usize]) -> Vec<(usize, usize)> {
    layers
        .iter()
        .flat_map(|&l| (0..model.layers[l].attn.n_heads).map(move |h| (l, h)))
        .collect()
}

#[test]
fn no_ablation_is_the_model_bit_for_bit() {
    let m = tiny();
    let (logits, maps) =
        forward_with_ablation(&m.model, &ids(), &m.recipe, &Ablation::none());
    let (want, _) = m.model.forward(&ids(), &m.recipe);
    assert_bits(&logits, &want, "logits without ablation");
    let (_, want_maps) = attention_maps(&m.model, &ids(), &m.recipe);
    for (layer, (ours, theirs)) in maps.iter().zip(&want_maps).enumerate() {
        assert_bits(ours, theirs, &format!("layer {layer}'s attention weights"));
    }
}

/// Layer `skipped`'s attention adds nothing to the residual stream; every other part runs.
fn forward_skipping_attention(
    model: &TinyModel,
    ids: &Tensor<i64>,
    recipe: &Recipe,
    skipped: usize,
) -> Tensor {
    let mut x = model.tok_emb.forward(ids);
    for (i, layer) in model.layers.iter().enumerate() {
        if i == skipped {
            x = &x + layer.ffn.forward(&layer.ffn_norm.forward(&x));
        } else {
            x = layer.forward(&x, recipe, recipe.window_of(i)).0;
        }
    }
    model.lm_head.forward(&model.final_norm.forward(&x))
}

#[test]
fn zero_ablating_every_head_of_a_layer_skips_its_attention() {
    let m = tiny();
    for layer in 0..m.model.layers.len() {
        let ablation = Ablation {
            heads: all_heads(&m.model, &[layer]),
            replacement: Replacement::Zero,
        };
        let (logits, _) =
            forward_with_ablation(&m.model, &ids(), &m.recipe, &ablation);
        let want = forward_skipping_attention(&m.model, &ids(), &m.recipe, layer);
        assert_bits(&logits, &want, &format!("layer {layer}'s heads zeroed"));
    }
}

#[test]
fn mean_ablation_over_one_position_changes_nothing() {
    // A batch of one token: every head's output is its own mean over the batch.
    let m = tiny();
    let one = as_batch(&[42]);
    let every = all_heads(&m.model, &[0, 1]);
    let mean = Ablation {
        heads: every.clone(),
        replacement: Replacement::Mean,
    };
    let (logits, _) = forward_with_ablation(&m.model, &one, &m.recipe, &mean);
    let (want, _) = m.model.forward(&one, &m.recipe);
    assert_bits(&logits, &want, "every head mean-ablated over one token");
    // Over twelve tokens the heads' outputs differ, and their means change the logits.
    let (logits, _) = forward_with_ablation(&m.model, &ids(), &m.recipe, &mean);
    let (want, _) = m.model.forward(&ids(), &m.recipe);
    assert!(
        (&logits - &want).abs().max().item() > 1e-3,
        "mean ablation of every head over twelve tokens changed nothing"
    );
}

#[test]
fn ablation_leaves_the_earlier_layers_weights_alone() {
    // Ablating a head of layer 1 cannot change layer 0's attention, only what follows it.
    let m = tiny();
    let ablation = Ablation {
        heads: vec![(1, 2)],
        replacement: Replacement::Zero,
    };
    let (logits, maps) =
        forward_with_ablation(&m.model, &ids(), &m.recipe, &ablation);
    let (_, want_maps) = attention_maps(&m.model, &ids(), &m.recipe);
    assert_bits(&maps[0], &want_maps[0], "layer 0's weights");
    assert_bits(
        &maps[1],
        &want_maps[1],
        "layer 1's own weights (only its output goes)",
    );
    let (want, _) = m.model.forward(&ids(), &m.recipe);
    assert!(
        (&logits - &want).abs().max().item() > 1e-4,
        "head 1.2 ablated changed nothing"
    );
}

/// Merged heads whose head `constant` gives the same output at every position: values of
/// few binary digits, whose mean is exact.
fn merged_with_a_constant_head(constant: usize, head_dim: usize) -> Tensor {
    let (batch, tokens, heads) = (2, 5, 4);
    let width = heads * head_dim;
    let values = (0..batch * tokens * width)
        .map(|i| {
            let column = i % width;
            if column / head_dim == constant {
                (column % 8) as f32 * 0.25
            } else {
                ((i * 7) % 13) as f32 - 6.0
            }
        })
        .collect();
    Tensor::from_vec(values, &[batch, tokens, width])
}

#[test]
fn mean_ablation_of_a_constant_head_changes_nothing() {
    let merged = merged_with_a_constant_head(2, 16);
    let ablation = Ablation {
        heads: vec![(0, 2)],
        replacement: Replacement::Mean,
    };
    assert_eq!(ablation.apply(0, &merged, 16).to_vec(), merged.to_vec());
}

#[test]
fn random_head_avoids_the_named_heads() {
    manual_seed(0);
    let named: Vec<(usize, usize)> =
        (0..2).flat_map(|l| (0..3).map(move |h| (l, h))).collect();
    // Of 2 layers of 3 heads, five are named: the draw can only land on the sixth.
    for _ in 0..20 {
        assert_eq!(random_head(2, 3, &named[..5]), (1, 2));
    }
}

#[test]
fn a_window_as_long_as_the_text_is_full_attention() {
    let m = tiny();
    let n = ids().size(1);
    let layers = m.model.layers.len();
    let recipe = streaming_recipe(&m.recipe, layers, n, 0);
    assert!(
        (0..layers).all(|l| recipe.window_of(l) == Some(n)),
        "every layer local"
    );
    let (logits, _) = m.model.forward(&ids(), &recipe);
    let (want, _) = m.model.forward(&ids(), &m.recipe);
    assert_bits(&logits, &want, "a window of the whole text");
    // A window of 3 changes the predictions from position 3 on, and not before.
    let narrow = streaming_recipe(&m.recipe, layers, 3, 0);
    let (logits, _) = m.model.forward(&ids(), &narrow);
    assert_bits(
        &logits.narrow(1, 0, 3),
        &want.narrow(1, 0, 3),
        "inside the window",
    );
    assert!(
        (perplexity(&m.model, &ids(), &narrow, 3..n - 1)
            - perplexity(&m.model, &ids(), &m.recipe, 3..n - 1))
        .abs()
            > 1e-6,
        "a window of 3 changed no prediction past it"
    );
}

#[test]
fn mean_loss_is_minus_the_log_probability_of_the_next_token() {
    // Uniform logits over 4 tokens: every prediction costs ln 4.
    let logits = Tensor::from_vec(vec![0.0f32; 3 * 4], &[1, 3, 4]);
    let ids = Tensor::from_vec(vec![0i64, 3, 1], &[1, 3]);
    assert!((mean_loss(&logits, &ids, 0..2) - 4f64.ln()).abs() < 1e-6);
    // A confident right answer costs almost nothing, a confident wrong one much.
    let logits = Tensor::from_vec(
        vec![0.0, 0.0, 0.0, 20.0, 20.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        &[1, 3, 4],
    );
    assert!(
        mean_loss(&logits, &ids, 0..1) < 1e-6,
        "token 3 expected at 0"
    );
    assert!(
        mean_loss(&logits, &ids, 1..2) > 19.0,
        "token 0 expected at 1, 1 came"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn ablation_replaces_only_its_heads_columns(
        seed in 0u64..1000,
        layer in 0usize..3,
        head in 0usize..4,
        mean in any::<bool>(),
    ) {
        manual_seed(seed);
        let head_dim = 8;
        let merged = randn(&[2, 3, 4 * head_dim]);
        let replacement = if mean { Replacement::Mean } else { Replacement::Zero };
        let ablation = Ablation { heads: vec![(1, head)], replacement };
        let out = ablation.apply(layer, &merged, head_dim);
        let (before, after) = (merged.to_vec(), out.to_vec());
        for (i, (&b, &a)) in before.iter().zip(&after).enumerate() {
            let column = i % (4 * head_dim);
            if layer != 1 || column / head_dim != head {
                prop_assert_eq!(a.to_bits(), b.to_bits(), "column {} of layer {}", column, layer);
            } else if mean {
                // The column's mean over the 2 × 3 positions.
                let m: f32 = (0..6).map(|p| before[p * 4 * head_dim + column]).sum::<f32>() / 6.0;
                prop_assert!((a - m).abs() < 1e-5, "column {}: {} against the mean {}", column, a, m);
            } else {
                prop_assert_eq!(a, 0.0, "column {}", column);
            }
        }
    }
}
