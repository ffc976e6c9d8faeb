//! How far the training step across ranks may be from chapter 22's one-process step.
//!
//! The two differ in one place only: the attention core. The ring merges the partial
//! softmaxes of its blocks by their log-sum-exps; chapter 10's core takes one softmax
//! over every key. Each of the ring's outputs is then off by at most `(T + 2W)·4` float32
//! steps of the values' size (the sums over at most `T` keys rounded in another order,
//! at most `2W` merges, each rounding an exponential and a sum; the same bound as the
//! reference's check of PyTorch's own ring). Everything else is computed from those
//! outputs the same way on both sides, and each gradient is a sum of products of them,
//! or of their gradients, with numbers the two sides share: its gap stays within the
//! same number of float32 steps of its largest element.
//!
//! AdamW's first step moves each weight by `lr · g / (|g| + ε)` (its moments are then
//! the gradient and its square), plus the decay: the weights' gap is that function's
//! gap at the two gradients, which is tiny where `|g|` is far above `ε` and up to
//! `2·lr` where a gradient near zero changes sign, and the roundings of AdamW's seven
//! operations on each side.

use shared::Tensor;

/// Float32's unit roundoff, 2⁻²⁴.
pub const U: f64 = 5.960_464_477_539_063e-8;

/// The bound on the ring's attention, in float32 steps: `(T + 2W)·4`.
///
/// # Shapes
/// Counts only.
pub fn attention_steps(tokens: usize, world: usize) -> f64 {
    ((tokens + 2 * world) * 4) as f64
}

/// Whether every gradient of `ours` is within [`attention_steps`] float32 steps of its
/// largest element of the same gradient in `theirs`.
///
/// # Shapes
/// Both in `named_parameters()` order, each the shape of its parameter.
pub fn gradients_agree(ours: &[Tensor], theirs: &[Tensor], steps: f64) -> bool {
    ours.len() == theirs.len()
        && ours.iter().zip(theirs).all(|(a, b)| {
            let gap = f64::from((a - b).abs().max().item());
            let largest = f64::from(b.abs().max().item());
            gap <= steps * U * largest
        })
}

/// The global norm of the gradients in float64, and the clip's factor for `max_norm`.
fn clip_factor(grads: &[Tensor], max_norm: f64) -> f64 {
    let squares: f64 = grads
        .iter()
        .flat_map(|g| g.to_vec())
        .map(|v| f64::from(v) * f64::from(v))
        .sum();
    (max_norm / (squares.sqrt() + 1e-6)).min(1.0)
}

/// Whether the weights after one AdamW step from the same weights `before` differ by no
/// more than the step's function of the two gradients allows: `lr·|f(c₁g₁) − f(c₂g₂)|`
/// with `f(g) = g / (|g| + ε)` and `c` each side's clip factor, plus 16 float32 steps of
/// the weight (or of the step, if larger): AdamW rounds seven times on each side, each
/// time by at most half a step of a number no larger than those.
///
/// # Shapes
/// All in `named_parameters()` order, each the shape of its parameter.
pub fn weights_agree(
    [ours, theirs]: [&[Tensor]; 2],
    [grads_ours, grads_theirs]: [&[Tensor]; 2],
    lr: f64,
    max_norm: f64,
) -> bool {
    let eps = 1e-8;
    let (c1, c2) = (
        clip_factor(grads_ours, max_norm),
        clip_factor(grads_theirs, max_norm),
    );
    let f = |g: f64| g / (g.abs() + eps);
    let tensors = ours
        .iter()
        .zip(theirs)
        .zip(grads_ours.iter().zip(grads_theirs));
    tensors.into_iter().all(|((p1, p2), (g1, g2))| {
        let values = p1.to_vec().into_iter().zip(p2.to_vec());
        let grads = g1.to_vec().into_iter().zip(g2.to_vec());
        values.zip(grads).all(|((p1, p2), (g1, g2))| {
            let step_gap = lr * (f(c1 * f64::from(g1)) - f(c2 * f64::from(g2))).abs();
            let size = f64::from(p1.abs().max(p2.abs())).max(lr);
            let rounding = 16.0 * U * size;
            f64::from((p1 - p2).abs()) <= step_gap * (1.0 + 1e-3) + rounding
        })
    })
}
