//! Broadcasting: how PyTorch lines up two shapes for an elementwise operation.
//!
//! Shapes are aligned at their last dim. Walking back from there, two sizes fit when they
//! are equal or when one of them is 1 (that one is repeated, without copying, to match the
//! other). A missing leading dim counts as 1. So `[6, 3]` and `[3]` give `[6, 3]`, and
//! `[2, 1, 4]` and `[5, 1]` give `[2, 5, 4]`.

use crate::error::{Error, Result, shape_list};

/// The shape two operands broadcast to, or an error naming both shapes.
///
/// # Shapes
/// `a`, `b`: any shapes. Returns a shape with `max(a.len(), b.len())` dims.
pub fn f_broadcast_shapes(
    op: &'static str,
    a: &[usize],
    b: &[usize],
) -> Result<Vec<usize>> {
    let ndim = a.len().max(b.len());
    let mut out = vec![0; ndim];
    for i in 0..ndim {
        // Index from the end: i = 0 is the last dim of both.
        let da = dim_from_end(a, i);
        let db = dim_from_end(b, i);
        out[ndim - 1 - i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            (x, y) => {
                return Err(Error::Shape {
                    op,
                    detail: format!(
                        "the size of tensor a ({x}) must match the size of tensor b ({y}) at \
                         non-singleton dimension {} (shapes {} and {})",
                        ndim - 1 - i,
                        shape_list(a),
                        shape_list(b)
                    ),
                });
            }
        };
    }
    Ok(out)
}

/// The size of the `i`-th dim counted from the end, 1 if the shape is shorter.
fn dim_from_end(shape: &[usize], i: usize) -> usize {
    if i < shape.len() {
        shape[shape.len() - 1 - i]
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_from_the_last_dim() {
        assert_eq!(f_broadcast_shapes("add", &[6, 3], &[3]), Ok(vec![6, 3]));
        assert_eq!(
            f_broadcast_shapes("add", &[2, 1, 4], &[5, 1]),
            Ok(vec![2, 5, 4])
        );
        assert_eq!(f_broadcast_shapes("add", &[], &[2, 2]), Ok(vec![2, 2]));
    }

    #[test]
    fn names_both_shapes_when_they_do_not_fit() {
        let err = f_broadcast_shapes("add", &[6, 3], &[2]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "add: the size of tensor a (3) must match the size of tensor b (2) at \
             non-singleton dimension 1 (shapes [6, 3] and [2])"
        );
    }
}
