//! Ablation: switch a head off and see what the model loses.
//!
//! Watching a head (its attention weights, chapter 19's scores) says what it looks at, not
//! whether the model needs it. Ablation asks that second question: run the model with the
//! head's output replaced, and measure what gets worse. A head's output is its 64 columns
//! of the merged heads, just before the output projection mixes them, so replacing those
//! columns removes exactly that head's contribution to the residual stream and nothing
//! else (its attention weights are still computed, and still drawn by `--heatmaps`).
//!
//! - **Zero ablation** writes zeros: as if the head had never been trained.
//! - **Mean ablation** writes the head's mean output over every position of the batch:
//!   the head still adds its average, so only what it says about *this* token is lost
//!   (zeros can push later layers to places they never saw in training).

use ch07_multihead_split::heads::merge_heads;
use ch14_generation::gqa::repeat_kv;
use ch15_modern_layer::attention::streaming_mask;
use ch15_modern_layer::{Recipe, TinyModel};
use shared::{Tensor, where_};

/// What an ablated head's output is replaced by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replacement {
    /// Zeros.
    Zero,
    /// The head's mean output over every position of the batch.
    Mean,
}

/// The heads switched off, and how.
#[derive(Clone, Debug, PartialEq)]
// ANCHOR: ablation
pub struct Ablation {
    /// `(layer, head)`, both from 0.
    pub heads: Vec<(usize, usize)>,
    /// What replaces their output.
    pub replacement: Replacement,
}
// ANCHOR_END: ablation

impl Ablation {
    /// No head ablated: the model as it is.
    pub fn none() -> Ablation {
        Ablation {
            heads: Vec::new(),
            replacement: Replacement::Zero,
        }
    }

    /// The merged heads of layer `layer`, the columns of this ablation's heads in that layer
    /// replaced (head `h` owns columns `h·head_dim .. (h+1)·head_dim`).
    ///
    /// # Shapes
    /// `merged_heads`: `[batch, tokens, n_heads · head_dim]`. Returns the same shape.
    // ANCHOR: apply
    pub fn apply(
        &self,
        layer: usize,
        merged_heads: &Tensor,
        head_dim: usize,
    ) -> Tensor {
        let width = merged_heads.size(-1);
        let ablated: Vec<bool> = (0..width)
            .map(|column| self.heads.contains(&(layer, column / head_dim)))
            .collect();
        if !ablated.contains(&true) {
            return merged_heads.clone();
        }
        let replacement = match self.replacement {
            Replacement::Zero => merged_heads.zeros_like(),
            // [1, 1, width]: each column's mean over every sequence and position.
            Replacement::Mean => merged_heads.mean_dim(0, true).mean_dim(1, true),
        };
        where_(
            &Tensor::from_vec(ablated, &[width]),
            &replacement,
            merged_heads,
        )
    }
    // ANCHOR_END: apply
}

/// Chapter 15's forward pass, with `ablation` consulted between each layer's merged heads
/// and its output projection; the logits and every layer's attention weights. With
/// [`Ablation::none`] it computes what `TinyModel::forward` computes, bit for bit.
///
/// # Shapes
/// `ids`: `[batch, tokens]`. Returns `[batch, tokens, vocab]` logits and one
/// `[batch, n_heads, tokens, tokens]` tensor per layer.
// ANCHOR: forward_with_ablation
pub fn forward_with_ablation(
    model: &TinyModel,
    ids: &Tensor<i64>,
    recipe: &Recipe,
    ablation: &Ablation,
) -> (Tensor, Vec<Tensor>) {
    let t = ids.size(1);
    let positions: Vec<usize> = (0..t).collect();
    let mut x = model.tok_emb.forward(ids);
    let mut maps = Vec::with_capacity(model.layers.len());
    for (i, layer) in model.layers.iter().enumerate() {
        let attn = &layer.attn;
        let normed = layer.attn_norm.forward(&x);
        let (q, k, v) = attn.qkv(&normed, &positions, recipe);
        let hidden = streaming_mask(t, recipe.window_of(i), recipe.sink_tokens);
        let weights = attn.weights(&q, &k, recipe, Some(&hidden));
        let context = weights.matmul(&repeat_kv(&v, attn.n_rep()));
        let heads = attn.gated(&merge_heads(&context), &normed, recipe);
        let heads = ablation.apply(i, &heads, attn.head_dim); // the one new line
        let h = &x + attn.out_proj.forward(&heads);
        x = &h + layer.ffn.forward(&layer.ffn_norm.forward(&h));
        maps.push(weights);
    }
    let logits = model.lm_head.forward(&model.final_norm.forward(&x));
    (logits, maps)
}
// ANCHOR_END: forward_with_ablation

/// A head drawn at random from the default generator, none of `avoid`: the control, a head
/// nobody chose for what it does.
pub fn random_head(
    n_layers: usize,
    n_heads: usize,
    avoid: &[(usize, usize)],
) -> (usize, usize) {
    loop {
        let drawn = shared::randint(0, n_layers * n_heads, &[1]).item() as usize;
        let head = (drawn / n_heads, drawn % n_heads);
        if !avoid.contains(&head) {
            return head;
        }
    }
}
