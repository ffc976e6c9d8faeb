//! The identity matrix, `torch.eye`: ones on the diagonal, zeros elsewhere. Multiplying by
//! it changes nothing, which makes it the first input to try when checking that a
//! projection is wired the right way round.

use crate::tensor::Tensor;

/// `torch.eye(n)`: the `n × n` identity matrix.
///
/// # Shapes
/// Returns `[n, n]`.
pub fn eye(n: usize) -> Tensor {
    eye_m(n, n)
}

/// `torch.eye(n, m)`: `n` rows and `m` columns, ones where the row index equals the column
/// index.
///
/// # Shapes
/// Returns `[n, m]`.
pub fn eye_m(n: usize, m: usize) -> Tensor {
    let values = (0..n * m)
        .map(|i| {
            if i / m.max(1) == i % m.max(1) {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    Tensor::from_vec(values, &[n, m])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ones_on_the_diagonal() {
        assert_eq!(eye(2).to_vec(), vec![1.0, 0.0, 0.0, 1.0]);
        assert_eq!(eye_m(2, 3).to_vec(), vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        assert_eq!(eye_m(0, 3).dims(), [0, 3]);
    }
}
