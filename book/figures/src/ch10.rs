//! Chapter 10's figure: where the gradient of the attention scores is zero.

use ch01_embeddings::inputs::{YOUR_JOURNEY_WORDS, your_journey};
use ch05_causal::CausalAttention;
use ch10_backward::causal::causal_forward;
use ch10_backward::pointwise::masked_fill_backward;
use ch10_backward::softmax::softmax_backward;
use shared::{manual_seed, stack};

use crate::{Figure, Panel};

/// The first sentence's attention weights in chapter 10's `CausalAttention` (dropout 0.0,
/// `manual_seed(123)`, loss `Σ out²`) and the size of the gradient of its scores, `|dS|`,
/// relative to the largest: exactly 0 above the diagonal and for the first query's only
/// key.
pub(crate) fn ch10_score_gradients() -> Figure {
    let inputs = your_journey();
    let batch = stack(&[&inputs, &inputs], 0);
    manual_seed(123);
    let ca = CausalAttention::new(3, 2, 6, 0.0, false);
    let (out, tape) = causal_forward(&ca, &batch);
    let tape = tape.attention;
    // The gradient of the weights, dP = dL/d out · Vᵀ with dL/d out = 2·out; then dS.
    let grad_weights = (&out * 2.0).matmul(&tape.values.transpose(-2, -1));
    let grad_scores = masked_fill_backward(
        &softmax_backward(&tape.weights, &grad_weights),
        &tape.hidden,
    );
    let size = grad_scores.get(0).abs();
    let largest = size.to_vec().iter().fold(0.0f32, |m, &v| m.max(v));
    Figure {
        name: "ch10-score-gradients",
        title: "Weights and score gradients of CausalAttention (manual_seed(123), loss = sum of out²)",
        panels: vec![
            Panel::new(
                "weights P",
                &YOUR_JOURNEY_WORDS,
                &YOUR_JOURNEY_WORDS,
                &tape.weights.get(0),
            ),
            Panel::new(
                "|dS| / largest |dS|",
                &YOUR_JOURNEY_WORDS,
                &YOUR_JOURNEY_WORDS,
                &(size / largest),
            ),
        ],
        panels_per_row: 2,
    }
}
