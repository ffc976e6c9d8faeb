//! The chapter's printed steps, in the order of the reference script
//! `reference/ch10_backward.py`.

use ch01_embeddings::inputs::your_journey;
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
    story
        .steps
        .last_mut()
        .expect("the step just printed")
        .heatmap_indexed("softmax of [1.0, 2.0, 0.5]", &weights)?;

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
    print_causal(&mut story, &title, &loss, &grads);

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
    print_causal(&mut story, &title, &loss, &grads);

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
    story.step(format!("{title}: loss")).print(&loss);
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

/// The loss and the gradients of one `CausalAttention` run, a step each.
fn print_causal(story: &mut Narrative, title: &str, loss: &Tensor, grads: &CausalGrads) {
    story.step(format!("{title}: loss")).print(loss);
    for (name, grad) in [
        ("W_query.weight", &grads.w_query.weight),
        ("W_key.weight", &grads.w_key.weight),
        ("W_value.weight", &grads.w_value.weight),
        ("batch", &grads.input),
    ] {
        story.step(format!("{title}: {name}.grad")).print(grad);
    }
}
