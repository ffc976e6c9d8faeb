//! Comparing tensors as PyTorch's `torch.equal` and `torch.allclose` do.

use shared::Tensor;

/// `torch.allclose(a, b)` with its defaults (`rtol = 1e-5`, `atol = 1e-8`): same shape and
/// `|a - b| <= atol + rtol·|b|` everywhere (equal infinities count as close, NaN never). Two computations of the same numbers in a
/// different order agree to a few float32 roundings, so this, not `==`, is the test that
/// two formulations compute the same thing.
///
/// # Shapes
/// `a`, `b`: any shapes; different shapes are never close.
pub fn allclose(a: &Tensor, b: &Tensor) -> bool {
    a.dims() == b.dims()
        && a.to_vec()
            .iter()
            .zip(b.to_vec())
            .all(|(&x, y)| x == y || (x - y).abs() <= 1e-8 + 1e-5 * y.abs())
}

/// Python's `True`/`False`, for printing a comparison as the reference script does.
pub fn python_bool(value: bool) -> &'static str {
    if value { "True" } else { "False" }
}
