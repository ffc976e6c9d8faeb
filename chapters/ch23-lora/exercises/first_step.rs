//! A prediction about the first training step.

use crate::answers::GradOfA;

/// At the first step every `B` is zero. What is the gradient of `A`?
pub fn grad_of_a_at_start() -> GradOfA {
    // TODO: choose one of GradOfA's answers.
    todo!("your prediction")
}
