//! How many numbers an adapter trains.

/// The numbers trained by adapters of rank `rank` beside each of `projections` (each
/// `(d_out, d_in)`) in each of `n_layers` layers.
///
/// # Shapes
/// `projections`: one `(d_out, d_in)` per adapted projection of a layer.
pub fn trainable_numbers(
    rank: usize,
    n_layers: usize,
    projections: &[(usize, usize)],
) -> usize {
    // TODO: count the entries of A and of B of every adapter, in every layer.
    let _ = (rank, n_layers, projections);
    todo!("the trainable numbers")
}
