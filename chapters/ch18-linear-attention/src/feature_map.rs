//! The feature map of linear attention.
//!
//! Softmax weighs key `j` by `exp(q·k_j)`, a number that does not split into a part of the
//! query times a part of the key. Linear attention weighs it by `φ(q)·φ(k_j)` instead, with
//! a map `φ` whose values are positive (so that the weights are too, and their sum can
//! normalise them). Katharopoulos et al. ("Transformers are RNNs") chose `elu(x) + 1`: `x + 1`
//! above 0, `exp(x)` below, never 0.

use shared::Tensor;

/// `φ(x) = elu(x) + 1`, elementwise, computed in float64 and rounded once to float32 (as
/// chapter 15's sigmoid), so that its digits are the same on every processor.
///
/// # Shapes
/// Any shape; unchanged.
// ANCHOR: elu_plus_one
pub fn elu_plus_one(x: &Tensor) -> Tensor {
    let values = x
        .to_vec()
        .into_iter()
        .map(|x| {
            let x = x as f64;
            let elu = if x > 0.0 { x } else { x.exp_m1() };
            (elu + 1.0) as f32
        })
        .collect();
    Tensor::from_vec(values, x.sizes())
}
// ANCHOR_END: elu_plus_one
