//! Two parts of the keys, one result: the step that lets FlashAttention split the keys
//! of a long sequence across several cores and combine what each found (the idea of
//! "Flash-Decoding", Dao et al., 2023). Each part's sums are relative to its own maximum;
//! rescale both to the larger of the two, then add.

use crate::partial::Partial;

/// The partial attention over the keys of `a` and of `b` together.
///
/// # Shapes
/// `a` and `b` of the same queries: `max`, `sum` `[.., queries, 1]`, `out`
/// `[.., queries, d_v]`. Returns the same shapes.
// ANCHOR: merge_partials
pub fn merge_partials(a: &Partial, b: &Partial) -> Partial {
    let max = a.max.maximum(&b.max);
    // Each part's terms were exp(s - its max); times exp(its max - max) they are
    // exp(s - max).
    let rescale_a = (&a.max - &max).exp();
    let rescale_b = (&b.max - &max).exp();
    Partial {
        sum: &(&rescale_a * &a.sum) + &(&rescale_b * &b.sum),
        out: &(&rescale_a * &a.out) + &(&rescale_b * &b.out),
        max,
    }
}
// ANCHOR_END: merge_partials

/// The question: do the order of the parts and the grouping of the merges change the
/// result (beyond rounding)? If not, workers may finish in any order and be merged as
/// they come, or in a tree.
// ANCHOR: predict_order_matters
pub fn predict_order_matters() -> bool {
    // Rescaled to a common maximum, the parts are plain sums, and sums of the same terms
    // agree in any order and grouping.
    false
}
// ANCHOR_END: predict_order_matters
