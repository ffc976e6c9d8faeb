//! The identity matrix, `torch.eye`: ones on the diagonal, zeros elsewhere. Multiplying by
//! it changes nothing, which makes it the first input to try when checking that a
//! projection is wired the right way round.

use crate::error::{Result, or_panic};
use crate::tensor::Tensor;

/// `torch.eye(n)`: the `n × n` identity matrix.
///
/// # Shapes
/// Returns `[n, n]`.
#[track_caller]
pub fn eye(n: usize) -> Tensor {
    eye_m(n, n)
}

/// `torch.eye(n, m)`: `n` rows and `m` columns, ones where the row index equals the column
/// index.
///
/// # Shapes
/// Returns `[n, m]`; `n · m` floats must fit in memory.
pub fn f_eye_m(n: usize, m: usize) -> Result<Tensor> {
    let mut values = crate::alloc::f_alloc("eye", &[n, m])?;
    // `m == 0` leaves no elements, so the division below never sees it.
    values.extend((0..n * m).map(|i| if i / m == i % m { 1.0 } else { 0.0 }));
    Ok(crate::storage::from_checked_vec(values, &[n, m]))
}

/// Plain form of [`f_eye_m`].
#[track_caller]
pub fn eye_m(n: usize, m: usize) -> Tensor {
    or_panic(f_eye_m(n, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ones_on_the_diagonal() {
        assert_eq!(eye(2).to_vec(), vec![1.0, 0.0, 0.0, 1.0]);
        assert_eq!(eye_m(2, 3).to_vec(), vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        assert_eq!(eye_m(0, 3).sizes(), [0, 3]);
    }
}
