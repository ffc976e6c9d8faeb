//! Chapter 13: the attention inside the transformer block.
//!
//! The chapter's block is GPT-2's, on the chapter's own input: after `manual_seed`, a batch
//! of two sequences of 6 random token vectors (`randn`), then the block. Its attention reads
//! `ln_1(x)`, every token normalised first (pre-norm); the post-norm block of the original
//! Transformer feeds it the residual stream `x` itself. The block's attention is chapter 7's
//! `MultiHeadAttention`, whose forward pass does not hand out its weights; chapter 10's
//! forward pass with a tape runs the same operations on the same module (the same bits)
//! and keeps them.

use ch10_backward::multihead::multihead_forward;
use ch13_block::block::TransformerBlock;
use shared::{manual_seed, randn};

use super::{ANY_HEADS, Heatmap, Settings, check_heads};
use crate::controls::Control;

/// The chapter's block: `d_model = 8`, two heads, a batch of two sequences of 6 tokens.
const D_MODEL: usize = 8;
const HEADS: usize = 2;
const BATCH: usize = 2;
const TOKENS: usize = 6;

/// Layer norm before attention or not, the block's width and heads, and the seed. The
/// block's attention is causal, divides by `√d_k` and has no dropout (GPT-2 turns it off
/// to generate): no mask to switch off, no temperature, no dropout.
pub(super) fn controls() -> Vec<Control> {
    vec![
        Control::checkbox("pre_norm", "layer norm first (pre-norm)", true),
        Control::width("d_model", D_MODEL),
        Control::heads("heads", "heads", &ANY_HEADS, HEADS),
        Control::seed(),
    ]
}

/// The block's attention weights over the first sequence, one matrix per head, rows and
/// columns labelled by the tokens' positions.
pub(super) fn weights(settings: &Settings, seed: u64) -> Result<Heatmap, String> {
    let heads = settings.heads.unwrap_or(HEADS);
    let d_model = settings.d_out.unwrap_or(D_MODEL);
    check_heads("d_model", heads, d_model)?;
    let pre_norm = settings.pre_norm.unwrap_or(true);

    // The input first, then the block, as the chapter draws them.
    manual_seed(seed);
    let x = randn(&[BATCH, TOKENS, d_model]);
    let block = TransformerBlock::new(d_model, heads, TOKENS);
    let attention_input = if pre_norm { block.ln_1.forward(&x) } else { x };
    let (_, tape) = multihead_forward(&block.attn, &attention_input);
    let weights = tape.attention.dropped.get(0); // [heads, tokens, tokens]

    let positions: Vec<String> = (0..TOKENS).map(|t| t.to_string()).collect();
    let caption = if pre_norm {
        "The block's attention over ln_1(x): the tokens of the first sequence, each \
         normalised before attention reads it"
    } else {
        "The post-norm block's attention over x itself: the first sequence's tokens, not \
         normalised"
    };
    Ok(Heatmap::of_heads(&weights, positions.clone(), positions).caption(caption))
}

#[cfg(test)]
mod tests {
    use super::super::tests::settings;
    use super::super::{Settings, heatmap};
    use super::*;

    #[test]
    fn the_weights_are_those_of_the_chapters_block() {
        let map = heatmap(&settings(13)).unwrap();
        assert_eq!(map.heads.len(), HEADS);
        assert_eq!(map.queries, ["0", "1", "2", "3", "4", "5"]);
        // The chapter's run: the tape's forward is the block's attention, bit for bit, so
        // these are the weights of its first residual x + attn(ln_1(x)).
        manual_seed(123);
        let x = randn(&[BATCH, TOKENS, D_MODEL]);
        let block = TransformerBlock::new(D_MODEL, HEADS, TOKENS);
        let h = block.ln_1.forward(&x);
        let (out, tape) = multihead_forward(&block.attn, &h);
        assert!(out == block.attn.forward(&h));
        let weights = tape.attention.weights.get(0);
        assert_eq!(map.heads, Heatmap::of_heads(&weights, vec![], vec![]).heads);
    }

    #[test]
    fn layer_norm_first_changes_what_attention_sees() {
        let pre = heatmap(&settings(13)).unwrap();
        let post = heatmap(&Settings {
            pre_norm: Some(false),
            ..settings(13)
        })
        .unwrap();
        assert_ne!(pre.heads, post.heads);
        // Causal either way, and every row a distribution.
        for head in pre.heads.iter().chain(&post.heads) {
            for (i, row) in head.iter().enumerate() {
                assert!(row[i + 1..].iter().all(|&w| w == 0.0));
                assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            }
        }
        let error = heatmap(&Settings {
            heads: Some(3),
            ..settings(13)
        })
        .unwrap_err();
        assert!(error.contains("d_model must be a multiple of the 3 heads"));
    }
}
