//! The chapter's printed steps, in the order of the reference script
//! `reference/ch10_backward.py`.

use ch01_embeddings::inputs::{YOUR_JOURNEY_WORDS as WORDS, your_journey};
use ch05_causal::CausalAttention;
use ch07_multihead_split::multihead::MultiHeadAttention;
use course::{Narrative, Seed};
use shared::{Result, Tensor, manual_seed, stack, tensor};

use crate::causal::{CausalGrads, causal_backward, causal_forward};
use crate::multihead::{multihead_backward, multihead_forward};
use crate::softmax::softmax_backward;

/// Runs the chapter and returns what it prints; `seed` replaces the articles' seed.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 10: The backward pass by hand");

    // ANCHOR: softmax_row
    let scores = tensor!([1.0, 2.0, 0.5]);
    let weights = scores.softmax(-1);
    // A loss that only looks at the first weight: dL/dP = [1, 0, 0].
    let grad_weights = tensor!([1.0, 0.0, 0.0]);
    story
        .step("Softmax of [1.0, 2.0, 0.5] and the gradient of its scores for dP = [1, 0, 0]")
        .print(&weights)
        .print(softmax_backward(&weights, &grad_weights));
    // ANCHOR_END: softmax_row

    let inputs = your_journey();
    let batch = stack(&[&inputs, &inputs], 0); // [2, 6, 3]
    let (d_in, context_length) = (batch.size(2), batch.size(1));

    // ANCHOR: causal
    manual_seed(seed.or(123));
    let ca = CausalAttention::new(d_in, 2, context_length, 0.0, false);
    let (out, tape) = causal_forward(&ca, &batch);
    // loss = Σ out², so dL/d out = 2·out.
    let loss = (&out * &out).sum();
    let grads = causal_backward(&ca, &tape, &(&out * 2.0));
    // ANCHOR_END: causal
    let title = format!(
        "CausalAttention, dropout 0.0 (manual_seed({}))",
        seed.or(123)
    );
    // The weights the gradients flow through, first sequence of the batch.
    let weights = ("weights", &tape.attention.dropped.get(0));
    print_causal(&mut story, &title, &loss, &grads, weights)?;

    // ANCHOR: causal_dropout
    manual_seed(seed.or(123));
    let ca = CausalAttention::new(d_in, 2, context_length, 0.5, false);
    // Training mode: the forward draws the dropout noise, and the tape keeps it.
    let (out, tape) = causal_forward(&ca, &batch);
    let loss = (&out * &out).sum();
    let grads = causal_backward(&ca, &tape, &(&out * 2.0));
    // ANCHOR_END: causal_dropout
    let title = format!(
        "CausalAttention, dropout 0.5 (manual_seed({}))",
        seed.or(123)
    );
    let weights = ("weights after dropout", &tape.attention.dropped.get(0));
    print_causal(&mut story, &title, &loss, &grads, weights)?;

    // ANCHOR: multihead
    manual_seed(seed.or(123));
    let mha = MultiHeadAttention::new(d_in, 4, context_length, 0.0, 2, false);
    let (out, tape) = multihead_forward(&mha, &batch);
    let loss = (&out * &out).sum();
    let grads = multihead_backward(&mha, &tape, &(&out * 2.0));
    // ANCHOR_END: multihead
    let title = format!(
        "MultiHeadAttention, 2 heads (manual_seed({}))",
        seed.or(123)
    );
    story.step(format!("{title}: loss")).print(&loss).heatmap(
        "weights, head",
        &tape.attention.dropped.get(0),
        &WORDS,
        &WORDS,
    )?;
    let mut show = |name: &str, grad: &Tensor| {
        story.step(format!("{title}: {name}.grad")).print(grad);
    };
    show("W_query.weight", &grads.w_query.weight);
    show("W_key.weight", &grads.w_key.weight);
    show("W_value.weight", &grads.w_value.weight);
    show("out_proj.weight", &grads.out_proj.weight);
    let bias = grads.out_proj.bias.as_ref().expect("out_proj has a bias");
    show("out_proj.bias", bias);
    show("batch", &grads.input);
    Ok(story)
}

/// The loss and the gradients of one `CausalAttention` run, a step each; the loss step
/// records the run's `(title, weights)` as a heatmap.
///
/// # Shapes
/// `weights.1`: `[tokens, tokens]`.
fn print_causal(
    story: &mut Narrative,
    title: &str,
    loss: &Tensor,
    grads: &CausalGrads,
    (name, weights): (&str, &Tensor),
) -> Result<()> {
    story
        .step(format!("{title}: loss"))
        .print(loss)
        .heatmap(name, weights, &WORDS, &WORDS)?;
    for (name, grad) in [
        ("W_query.weight", &grads.w_query.weight),
        ("W_key.weight", &grads.w_key.weight),
        ("W_value.weight", &grads.w_value.weight),
        ("batch", &grads.input),
    ] {
        story.step(format!("{title}: {name}.grad")).print(grad);
    }
    Ok(())
}
