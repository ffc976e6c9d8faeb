//! How many numbers an adapter trains.

/// The numbers trained by adapters of rank `rank` beside each of `projections` (each
/// `(d_out, d_in)`) in each of `n_layers` layers.
///
/// # Shapes
/// `projections`: one `(d_out, d_in)` per adapted projection of a layer.
// ANCHOR: trainable_numbers
pub fn trainable_numbers(
    rank: usize,
    n_layers: usize,
    projections: &[(usize, usize)],
) -> usize {
    let per_layer: usize = projections
        .iter()
        .map(|&(d_out, d_in)| rank * d_in + d_out * rank) // A is r × d_in, B is d_out × r
        .sum();
    n_layers * per_layer
}
// ANCHOR_END: trainable_numbers
