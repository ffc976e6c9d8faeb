//! Everything a tensor can do, one concept per module.

pub mod activation;
pub mod broadcast;
pub(crate) mod cascade_sum;
pub mod compare;
pub mod einsum;
pub mod elementwise;
pub mod extrema;
pub mod index;
pub mod join;
pub mod logical;
pub mod mask;
pub mod matmul;
pub mod norm;
pub mod outer;
pub mod reduce;
pub mod shape;
pub mod softmax;
pub mod split;
pub mod stats;
pub mod topk;
pub mod unary;
pub mod vec_math;
pub mod views;
