//! The model: embeddings, two attention blocks on a residual stream, an unembedding.
//!
//! `x = tok[ids] + pos[positions]`, then twice `x = x + attention(x)`, then the logits
//! `unembed(x)`. Nothing else: no LayerNorm, no MLP. The stream `x` is a sum that every
//! head reads from and writes into, so a head of the second layer can read what a head of
//! the first layer wrote; that is how two heads can work together as one circuit.

use ch05_causal::causal_mask;
use ch07_multihead_split::heads::{merge_heads, split_heads};
use ch10_backward::attention::{AttentionTape, attention_forward};
use shared::nn::{Dropout, Embedding, Linear};
use shared::{Tensor, arange};

use crate::data::{TOKENS, VOCAB};

/// The size of every position's vector in the residual stream.
pub const D_MODEL: usize = 32;
/// Heads per block.
pub const HEADS: usize = 2;
/// Features per head.
pub const HEAD_DIM: usize = D_MODEL / HEADS;
/// Attention blocks.
pub const LAYERS: usize = 2;

/// One head of the model: `(layer, head)`.
pub type Head = (usize, usize);

/// Causal multi-head attention with one projection for queries, keys and values.
// ANCHOR: block
pub struct Block {
    /// `[3·D_MODEL, D_MODEL]` with bias: queries, keys and values of every head at once.
    pub qkv: Linear,
    /// `[D_MODEL, D_MODEL]` with bias: the heads' outputs back into the stream.
    pub proj: Linear,
}
// ANCHOR_END: block

/// What a block's backward needs from its forward pass.
#[derive(Clone, Debug)]
pub struct BlockTape {
    /// The block's input, `[batch, tokens, D_MODEL]`.
    pub x: Tensor,
    /// The attention core's record (chapter 10), `weights`: `[batch, HEADS, tokens, tokens]`.
    pub attention: AttentionTape,
    /// The merged heads, `proj`'s input: `[batch, tokens, D_MODEL]`.
    pub context: Tensor,
}

impl Block {
    /// `Linear(D_MODEL, 3·D_MODEL)` then `Linear(D_MODEL, D_MODEL)`, from the default
    /// generator.
    pub fn new() -> Block {
        Block {
            qkv: Linear::new(D_MODEL, 3 * D_MODEL, true),
            proj: Linear::new(D_MODEL, D_MODEL, true),
        }
    }

    /// The block's output (what it adds to the stream) and its tape. `keep[h] = false`
    /// zeroes head `h`'s output before `proj` (an ablation); all `true` in training.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, D_MODEL]`. Returns `[batch, tokens, D_MODEL]`.
    // ANCHOR: block_forward
    pub fn forward_taped(
        &self,
        x: &Tensor,
        keep: [bool; HEADS],
    ) -> (Tensor, BlockTape) {
        let tokens = x.size(1);
        let qkv = self.qkv.forward(x);
        // The three slices of the fused projection, each cut into heads.
        let part = |i: usize| {
            let features = qkv.slice(2, i * D_MODEL..(i + 1) * D_MODEL);
            split_heads(&features.contiguous(), HEADS)
        };
        let (queries, keys, values) = (part(0), part(1), part(2));
        let hidden = causal_mask(TOKENS).slice(0, ..tokens).slice(1, ..tokens);
        let (heads, attention) =
            attention_forward(&queries, &keys, &values, &hidden, &Dropout::new(0.0));
        let heads = if keep.iter().all(|&k| k) {
            heads
        } else {
            // 1 for a kept head, 0 for a zeroed one.
            let gate: Vec<f32> =
                keep.iter().map(|&k| f32::from(u8::from(k))).collect();
            &heads * &Tensor::from_vec(gate, &[1, HEADS, 1, 1])
        };
        let context = merge_heads(&heads);
        let out = self.proj.forward(&context);
        let tape = BlockTape {
            x: x.clone(),
            attention,
            context,
        };
        (out, tape)
    }
    // ANCHOR_END: block_forward
}

impl Default for Block {
    fn default() -> Block {
        Block::new()
    }
}

/// The two-layer attention-only transformer.
// ANCHOR: model
pub struct AttentionOnly {
    /// `[VOCAB, D_MODEL]`: what each token id is.
    pub tok: Embedding,
    /// `[TOKENS, D_MODEL]`: where each position is (learned).
    pub pos: Embedding,
    /// The attention blocks, layer 0 first.
    pub blocks: [Block; LAYERS],
    /// `[VOCAB, D_MODEL]` with bias: the stream's vector to one logit per token id.
    pub unembed: Linear,
}
// ANCHOR_END: model

/// What the model's backward needs from its forward pass.
#[derive(Clone, Debug)]
pub struct Tape {
    /// The token ids, `[batch, tokens]`.
    pub ids: Tensor<i64>,
    /// Each block's tape, layer 0 first.
    pub blocks: Vec<BlockTape>,
    /// The stream after the last block, the unembedding's input: `[batch, tokens, D_MODEL]`.
    pub stream: Tensor,
}

impl AttentionOnly {
    /// Draws the parameters from the default generator in PyTorch's order: token table,
    /// position table, block 0's `qkv` and `proj`, block 1's, the unembedding.
    pub fn new() -> AttentionOnly {
        AttentionOnly {
            tok: Embedding::new(VOCAB, D_MODEL),
            pos: Embedding::new(TOKENS, D_MODEL),
            blocks: [Block::new(), Block::new()],
            unembed: Linear::new(D_MODEL, VOCAB, true),
        }
    }

    /// The forward pass with the tape; `ablate = Some((layer, head))` zeroes one head.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`, `tokens <= TOKENS`. Returns the logits
    /// `[batch, tokens, VOCAB]` and the tape.
    // ANCHOR: forward
    pub fn forward_with_tape(
        &self,
        ids: &Tensor<i64>,
        ablate: Option<Head>,
    ) -> (Tensor, Tape) {
        let positions = arange(0, ids.size(1), 1);
        let mut x = &self.tok.forward(ids) + &self.pos.forward(&positions);
        let mut tapes = Vec::with_capacity(LAYERS);
        for (layer, block) in self.blocks.iter().enumerate() {
            let mut keep = [true; HEADS];
            if let Some((l, h)) = ablate
                && l == layer
            {
                keep[h] = false;
            }
            let (out, tape) = block.forward_taped(&x, keep);
            x = &x + &out; // the residual stream: each block adds to it
            tapes.push(tape);
        }
        let logits = self.unembed.forward(&x);
        let tape = Tape {
            ids: ids.clone(),
            blocks: tapes,
            stream: x,
        };
        (logits, tape)
    }
    // ANCHOR_END: forward

    /// Every parameter with PyTorch's name, in `model.named_parameters()` order.
    pub fn named_parameters(&self) -> Vec<(String, &Tensor)> {
        let mut out = vec![
            ("tok.weight".to_string(), &self.tok.weight),
            ("pos.weight".to_string(), &self.pos.weight),
        ];
        for (i, block) in self.blocks.iter().enumerate() {
            for (name, layer) in [("qkv", &block.qkv), ("proj", &block.proj)] {
                out.push((format!("blocks.{i}.{name}.weight"), &layer.weight));
                out.push((format!("blocks.{i}.{name}.bias"), bias_of(layer)));
            }
        }
        out.push(("unembed.weight".to_string(), &self.unembed.weight));
        out.push(("unembed.bias".to_string(), bias_of(&self.unembed)));
        out
    }

    /// Every parameter, mutable, in `named_parameters` order.
    pub fn parameters_mut(&mut self) -> Vec<&mut Tensor> {
        let AttentionOnly {
            tok,
            pos,
            blocks,
            unembed,
        } = self;
        let mut out = vec![&mut tok.weight, &mut pos.weight];
        for block in blocks.iter_mut() {
            let Block { qkv, proj } = block;
            out.extend(weight_and_bias(qkv));
            out.extend(weight_and_bias(proj));
        }
        out.extend(weight_and_bias(unembed));
        out
    }
}

impl Default for AttentionOnly {
    fn default() -> AttentionOnly {
        AttentionOnly::new()
    }
}

/// The bias of a layer made with one.
fn bias_of(layer: &Linear) -> &Tensor {
    layer.bias.as_ref().expect("made with a bias")
}

/// The weight and the bias of a layer made with one.
fn weight_and_bias(layer: &mut Linear) -> [&mut Tensor; 2] {
    let Linear { weight, bias } = layer;
    [weight, bias.as_mut().expect("made with a bias")]
}
