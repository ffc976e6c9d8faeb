//! Attention without a mask ignores the order of its tokens.
//!
//! Every score is a dot product of one query with one key, and the softmax and the weighted
//! sum of the values treat the keys as a set. Put the tokens in another order, with a
//! permutation matrix `P`, and the outputs come out in that same order:
//! `attention(P·X) = P·attention(X)` (the function is *permutation equivariant*). Nothing
//! tells the model that "step" came last. A causal mask breaks the symmetry, but only by
//! hiding keys: it still says nothing about how far apart two tokens are.

use shared::Tensor;

/// Puts the tokens (rows) of `x` in the order `order`: row `i` of the result is row
/// `order[i]` of `x`, as `x[order]` does in PyTorch. This is `P·x` for the permutation
/// matrix `P` with a 1 at `(i, order[i])`.
///
/// # Shapes
/// `x`: `[.., tokens, d]`, `order`: `[tokens]` (a permutation of `0..tokens`). Returns the
/// shape of `x`.
// ANCHOR: permute_tokens
pub fn permute_tokens(x: &Tensor, order: &Tensor<i64>) -> Tensor {
    x.index_select(-2, order)
}
// ANCHOR_END: permute_tokens

/// The permutation that undoes `order` (PyTorch's `torch.argsort(order)`): position
/// `order[i]` of the result holds `i`.
///
/// # Shapes
/// `order`: `[n]`, a permutation of `0..n`. Returns `[n]`. Panics, naming the op, if
/// `order` is not a permutation.
pub fn inverse_permutation(order: &Tensor<i64>) -> Tensor<i64> {
    let order = order.to_vec();
    let n = order.len();
    let mut back = vec![None; n];
    for (i, &o) in order.iter().enumerate() {
        let slot = usize::try_from(o)
            .ok()
            .filter(|&o| o < n && back[o].is_none());
        let slot = slot.unwrap_or_else(|| {
            panic!("inverse_permutation: {order:?} is not a permutation of 0..{n}")
        });
        back[slot] = Some(i);
    }
    // Every slot was filled once: n distinct slots among n.
    Tensor::from(back.into_iter().flatten().collect::<Vec<usize>>())
}
