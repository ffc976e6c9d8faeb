//! The chapter's printed steps, in the order of the reference script
//! `reference/ch03_softmax.py`.

use ch01_embeddings::inputs::{YOUR_JOURNEY_WORDS as WORDS, your_journey};
use ch02_dot_product::scores::attention_scores;
use course::narrative::python_bool;
use course::narrative::two_decimals;
use course::{Narrative, Seed};
use shared::{Result, tensor};

use crate::naive::softmax_naive;
use crate::stable::softmax_stable;

/// Runs the chapter and returns what it prints. It draws no random numbers, so `seed`
/// changes nothing; every chapter takes one.
pub fn narrative(_seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 3: Softmax");

    let inputs = your_journey();
    let attn_scores_2 = attention_scores(&inputs.get(1), &inputs);
    story
        .step("The scores of x(2) from chapter 2")
        .print(&attn_scores_2);

    // ANCHOR: three_softmaxes
    let attn_weights_2 = softmax_naive(&attn_scores_2);
    story
        .step("Naive softmax")
        .print(format!("Attention Weights: {attn_weights_2}"))
        .print(format!("Sum: {:.2}", attn_weights_2.sum().item()));

    let attn_weights_2 = softmax_stable(&attn_scores_2, 0);
    story
        .step("Stable softmax (subtract the max first)")
        .print(format!("Attention Weights: {attn_weights_2}"))
        .print(format!("Sum: {:.2}", attn_weights_2.sum().item()));

    let attn_weights_2 = attn_scores_2.softmax(0);
    story
        .step("torch.softmax")
        .print(format!("Attention Weights: {attn_weights_2}"))
        .print(format!("Sum: {:.2}", attn_weights_2.sum().item()))
        .heatmap("x(2) attends", &attn_weights_2, &[WORDS[1]], &WORDS)?;
    // ANCHOR_END: three_softmaxes

    // Our example: a float32 `exp` overflows to inf above about 88.7, so scores of 10, 100
    // and 1000 are enough. inf / inf is NaN; exp(10) / inf is 0.
    // ANCHOR: overflow
    let big_scores = tensor!([10.0, 100.0, 1000.0]);
    story
        .step("Large scores: the naive softmax overflows")
        .print(format!("scores: {big_scores}"))
        .print(format!("exp(scores) is inf: {}", big_scores.exp().isinf()))
        .print(format!("naive softmax: {}", softmax_naive(&big_scores)));

    story
        .step("Large scores: the stable softmax does not")
        .print(format!("scores - max: {}", &big_scores - &big_scores.max()))
        .print(format!(
            "stable softmax: {}",
            softmax_stable(&big_scores, 0)
        ))
        .print(format!("torch.softmax: {}", big_scores.softmax(0)));
    // ANCHOR_END: overflow

    // Our example: small enough to check by hand; the second row is constant, so its
    // softmax is exactly 1/3 each.
    // ANCHOR: dims
    let scores = tensor!([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]);
    story
        .step("What dim means on a 2-D tensor")
        .print(&scores)
        .print(scores.shape());

    let weights = scores.softmax(0);
    story
        .step("dim=0 normalises each column (down the rows)")
        .print(&weights)
        .print(format!(
            "Column sums: {}",
            two_decimals(&weights.sum_dim(0, false))
        ))
        .heatmap_indexed("softmax(dim=0): columns sum to 1", &weights)?;

    let weights = scores.softmax(1);
    story
        .step("dim=1 (the same as dim=-1 here) normalises each row (across the columns)")
        .print(&weights)
        .print(format!(
            "Row sums: {}",
            two_decimals(&weights.sum_dim(1, false))
        ))
        .print(format!(
            "dim=-1 gives the same: {}",
            python_bool(weights == scores.softmax(-1))
        ))
        .heatmap_indexed("softmax(dim=1): rows sum to 1", &weights)?;
    // ANCHOR_END: dims

    Ok(story)
}
