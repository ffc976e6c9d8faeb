//! The backward of grouped-query attention's `repeat_kv`: one key/value head read by a
//! group of query heads, so its gradient is the sum of what each of them sends back.
//!
//! The forward copies key/value head `g` to query heads `g·n_rep .. (g+1)·n_rep`; a value
//! used `n_rep` times gets the sum of its `n_rep` gradients, added in the order of the
//! copies (autograd sums the expanded dim from its first copy to its last).

use shared::Tensor;

/// The gradient of `repeat_kv(x, groups)` given the gradient of its output.
///
/// # Shapes
/// `grad`: `[batch, kv_heads · groups, tokens, head_dim]`. Returns
/// `[batch, kv_heads, tokens, head_dim]`.
// ANCHOR: repeat_kv_backward
pub fn repeat_kv_backward(grad: &Tensor, groups: usize) -> Tensor {
    let [b, heads, tokens, head_dim] = grad.dims();
    let kv_heads = heads / groups;
    // [b, kv_heads, groups, tokens, head_dim]: each key/value head's copies side by side.
    let copies = grad.reshape([b, kv_heads, groups, tokens, head_dim]);
    let mut sum = copies.select(2, 0);
    for copy in 1..groups {
        sum = &sum + &copies.select(2, copy);
    }
    sum
}
// ANCHOR_END: repeat_kv_backward

#[cfg(test)]
mod tests {
    use ch07_multihead_split::grouped::repeat_kv;
    use shared::{manual_seed, randn};

    use super::*;

    #[test]
    fn each_kv_head_gets_the_sum_of_its_groups_gradients() {
        manual_seed(0);
        let grad = randn(&[2, 6, 3, 4]);
        let back = repeat_kv_backward(&grad, 3);
        assert_eq!(back.sizes(), &[2, 2, 3, 4]);
        // Head 1 of 2 is read by query heads 3, 4, 5.
        let want = &(&grad.select(1, 3) + &grad.select(1, 4)) + &grad.select(1, 5);
        assert_eq!(back.select(1, 1).to_vec(), want.to_vec());
        // The transpose of a copy: <repeat_kv(x), g> = <x, repeat_kv_backward(g)>.
        let x = randn(&[2, 2, 3, 4]);
        let lhs = (repeat_kv(&x, 3) * &grad).sum().item();
        let rhs = (&x * &back).sum().item();
        assert!((lhs - rhs).abs() < 1e-4, "{lhs} vs {rhs}");
    }
}
