//! Everything a tensor can do, one concept per module.

pub mod broadcast;
mod cascade_sum;
pub mod einsum;
pub mod elementwise;
pub mod join;
pub mod mask;
pub mod matmul;
pub mod reduce;
pub mod softmax;
pub mod vec_math;
pub mod views;
