//! Layers with PyTorch's parameter initialisation, so `manual_seed(123)` followed by
//! `Linear::new(3, 2, false)` gives the very weights `torch.nn.Linear(3, 2, bias=False)` gets.

mod dropout;
mod embedding;
mod linear;
mod norm;

pub use dropout::Dropout;
pub use embedding::Embedding;
pub use linear::{Linear, PackedWeight};
pub use norm::{LayerNorm, RMSNorm};
