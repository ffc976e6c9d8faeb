//! Clipping the gradients to a global norm: all of them taken as one long vector, scaled
//! down together when that vector is longer than a limit, so one unlucky batch cannot throw
//! the weights far (Pascanu, Mikolov and Bengio, 2013, "On the difficulty of training
//! recurrent neural networks").

use shared::Tensor;

/// Scales every gradient by `max_norm / ‖g‖` when their global norm `‖g‖` (all of them as
/// one vector) is above `max_norm`; returns `‖g‖`. One bad batch then moves the weights
/// no further than a step of norm `max_norm` would.
///
/// # Shapes
/// `grads`: any shapes.
// ANCHOR: clip_grad_norm
pub fn clip_grad_norm(grads: &mut [Tensor], max_norm: f32) -> f32 {
    let squares: f32 = grads.iter().map(|g| (g * g).sum().item()).sum();
    let norm = squares.sqrt();
    let coef = max_norm / (norm + 1e-6);
    if coef < 1.0 {
        for g in grads.iter_mut() {
            *g = &*g * coef;
        }
    }
    norm
}
// ANCHOR_END: clip_grad_norm

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_leaves_small_gradients_alone_and_shrinks_large_ones() {
        let mut small = vec![Tensor::from_vec(vec![0.3, 0.4], &[2])];
        assert_eq!(clip_grad_norm(&mut small, 1.0), 0.5);
        assert_eq!(small[0].to_vec(), vec![0.3, 0.4]);
        let mut large = vec![Tensor::from_vec(vec![3.0, 4.0], &[2])];
        assert_eq!(clip_grad_norm(&mut large, 1.0), 5.0);
        let shrunk = large[0].to_vec();
        assert!((shrunk[0] - 0.6).abs() < 1e-6 && (shrunk[1] - 0.8).abs() < 1e-6);
    }
}
