//! The causal mask: which keys each query must not see.
//!
//! Row `i` is query `i`, column `j` is key `j`. Token `i` may attend to itself and to the
//! tokens before it (`j <= i`), never to the ones after it (`j > i`). The forbidden places
//! are the strict upper triangle: `torch.triu(ones, diagonal=1)`. Its complement,
//! `torch.tril(ones)`, marks the places that are kept.

use shared::{Tensor, ones};

/// `true` where query `row` would see a future key (`col > row`), `false` elsewhere:
/// `torch.triu(torch.ones(n, n), diagonal=1).bool()`.
///
/// # Shapes
/// Returns `[context_length, context_length]`.
// ANCHOR: causal_mask
pub fn causal_mask(context_length: usize) -> Tensor<bool> {
    ones(&[context_length, context_length]).triu(1).bool()
}
// ANCHOR_END: causal_mask
