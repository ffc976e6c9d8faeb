//! A prediction about the first training step.

use crate::answers::GradOfA;

/// At the first step every `B` is zero. What is the gradient of `A`?
// ANCHOR: grad_of_a_at_start
pub fn grad_of_a_at_start() -> GradOfA {
    // A's gradient is (scale · grad_y · B)ᵀ x: it goes through B, which is zero. The
    // first step moves B alone; A starts to learn at the second.
    GradOfA::Zero
}
// ANCHOR_END: grad_of_a_at_start
