//! GPT-2 as nanoGPT writes it, from chapter 13's block: token and position tables, blocks
//! of `x + attn(ln_1(x))` and `x + mlp(ln_2(x))`, a last LayerNorm, and the token table
//! again as the output head. No biases anywhere (nanoGPT's `bias=False`: "a bit better and
//! faster").

use ch10_backward::multihead::{MultiHeadTape, multihead_forward};
use ch13_block::block::{TransformerBlock, layer_norm_parameters_mut};
use ch13_block::parameters::block_parameters;
use shared::nn::{Embedding, LayerNorm};
use shared::{GeluApproximate, Tensor, arange};

use crate::config::Config;
use crate::model::init::init_weights;
use crate::model::tied_head;

/// The GPT-2 model.
// ANCHOR: gpt2
pub struct Gpt2 {
    /// `[vocab_size, d_model]`: every token's vector, and the output head.
    pub wte: Embedding,
    /// `[context, d_model]`: every position's vector (learned).
    pub wpe: Embedding,
    /// Chapter 13's blocks, without biases.
    pub blocks: Vec<TransformerBlock>,
    /// The LayerNorm before the head.
    pub ln_f: LayerNorm,
}
// ANCHOR_END: gpt2

/// What a block's backward needs from its forward pass.
#[derive(Clone, Debug)]
pub struct BlockTape {
    /// The block's input, `ln_1`'s input: `[batch, tokens, d_model]`.
    pub x: Tensor,
    /// The attention's record (chapter 10's), its input `ln_1(x)`.
    pub attn: MultiHeadTape,
    /// The stream after attention, `ln_2`'s input.
    pub x1: Tensor,
    /// `ln_2(x1)`, the MLP's input.
    pub h2: Tensor,
    /// `c_fc`'s output, GELU's input: `[batch, tokens, 4·d_model]`.
    pub up: Tensor,
    /// GELU's output, `c_proj`'s input.
    pub act: Tensor,
}

/// What the model's backward needs from its forward pass.
#[derive(Clone, Debug)]
pub struct Tape {
    /// The token ids, `[batch, tokens]`.
    pub ids: Tensor<i64>,
    /// Each block's tape, the first block first.
    pub blocks: Vec<BlockTape>,
    /// The stream after the last block, `ln_f`'s input.
    pub stream: Tensor,
    /// `ln_f(stream)`, the head's input.
    pub normed: Tensor,
}

impl Gpt2 {
    /// The model of size `config`, initialised as nanoGPT's: the layers are built in
    /// order (the tables, then block by block), then every matrix is drawn again.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens]` ids with `tokens <= config.context`.
    pub fn new(config: &Config) -> Gpt2 {
        let d = config.d_model;
        let mut model = Gpt2 {
            wte: Embedding::new(config.vocab_size, d),
            wpe: Embedding::new(config.context, d),
            blocks: (0..config.n_layers)
                .map(|_| {
                    TransformerBlock::with_bias(
                        d,
                        config.n_heads,
                        config.context,
                        false,
                    )
                })
                .collect(),
            ln_f: LayerNorm::with_options(&[d], 1e-5, true, false),
        };
        let names: Vec<String> = model
            .named_parameters()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        init_weights(
            config,
            names.into_iter().zip(model.parameters_mut()).collect(),
        );
        model
    }

    /// The logits of every position, and the tape.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`, `tokens <= context`. Returns `[batch, tokens,
    /// vocab_size]`.
    // ANCHOR: forward
    pub fn forward_with_tape(&self, ids: &Tensor<i64>) -> (Tensor, Tape) {
        let positions = arange(0, ids.size(1), 1);
        let mut x = &self.wte.forward(ids) + &self.wpe.forward(&positions);
        let mut tapes = Vec::with_capacity(self.blocks.len());
        for block in &self.blocks {
            let (out, tape) = block_forward(block, &x);
            tapes.push(tape);
            x = out;
        }
        let normed = self.ln_f.forward(&x);
        let logits = tied_head(&normed, &self.wte.weight);
        let tape = Tape {
            ids: ids.clone(),
            blocks: tapes,
            stream: x,
            normed,
        };
        (logits, tape)
    }
    // ANCHOR_END: forward

    /// Every parameter with PyTorch's name, in `named_parameters()` order.
    pub fn named_parameters(&self) -> Vec<(String, &Tensor)> {
        let mut all = vec![
            ("wte.weight".to_string(), &self.wte.weight),
            ("wpe.weight".to_string(), &self.wpe.weight),
        ];
        for (i, block) in self.blocks.iter().enumerate() {
            all.extend(
                block_parameters(block)
                    .into_iter()
                    .map(|(name, p)| (format!("blocks.{i}.{name}"), p)),
            );
        }
        let ln_f = self.ln_f.weight.as_ref().expect("ln_f has a weight");
        all.push(("ln_f.weight".to_string(), ln_f));
        all
    }

    /// Every parameter, mutable, in `named_parameters()` order.
    pub fn parameters_mut(&mut self) -> Vec<&mut Tensor> {
        let Gpt2 {
            wte,
            wpe,
            blocks,
            ln_f,
        } = self;
        let mut all = vec![&mut wte.weight, &mut wpe.weight];
        for block in blocks {
            all.extend(block.parameters_mut());
        }
        all.extend(layer_norm_parameters_mut(ln_f));
        all
    }
}

/// One block, `x + attn(ln_1(x))` then `+ mlp(ln_2(..))`, as chapter 13's
/// `TransformerBlock::forward` computes it, keeping what the backward needs.
///
/// # Shapes
/// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
// ANCHOR: block_forward
pub fn block_forward(block: &TransformerBlock, x: &Tensor) -> (Tensor, BlockTape) {
    let (a, attn) = multihead_forward(&block.attn, &block.ln_1.forward(x));
    let x1 = x + &a;
    let h2 = block.ln_2.forward(&x1);
    let up = block.mlp.c_fc.forward(&h2);
    let act = up.gelu(GeluApproximate::Tanh);
    let out = &x1 + &block.mlp.c_proj.forward(&act);
    let tape = BlockTape {
        x: x.clone(),
        attn,
        x1,
        h2,
        up,
        act,
    };
    (out, tape)
}
// ANCHOR_END: block_forward
