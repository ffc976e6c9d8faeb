//! Combining masks: `logical_or` (also `a | b`) and `logical_and` (also `a & b`) on `bool`
//! tensors, with broadcasting.
//!
//! Attention masks are built from pieces with different shapes: a causal mask
//! `[1, 1, queries, keys]` and a padding mask `[batch, 1, 1, keys]` combine into one
//! `[batch, 1, queries, keys]` mask by broadcasting, as in PyTorch:
//! `causal | padding` hides a key when either piece hides it.

use std::ops::{BitAnd, BitOr};

use crate::error::{Result, or_panic};
use crate::ops::elementwise::f_zip_with;
use crate::tensor::Tensor;

impl Tensor<bool> {
    /// `torch.logical_or(a, b)`, also `&a | &b`: `true` where either is `true`.
    ///
    /// # Shapes
    /// `self`, `other`: broadcastable. Returns the broadcast shape.
    pub fn f_logical_or(&self, other: &Tensor<bool>) -> Result<Tensor<bool>> {
        f_zip_with("logical_or", self, other, |x, y| x || y)
    }

    /// Plain form of [`Tensor::f_logical_or`].
    #[track_caller]
    pub fn logical_or(&self, other: &Tensor<bool>) -> Tensor<bool> {
        or_panic(self.f_logical_or(other))
    }

    /// `torch.logical_and(a, b)`, also `&a & &b`: `true` where both are `true`.
    ///
    /// # Shapes
    /// `self`, `other`: broadcastable. Returns the broadcast shape.
    pub fn f_logical_and(&self, other: &Tensor<bool>) -> Result<Tensor<bool>> {
        f_zip_with("logical_and", self, other, |x, y| x && y)
    }

    /// Plain form of [`Tensor::f_logical_and`].
    #[track_caller]
    pub fn logical_and(&self, other: &Tensor<bool>) -> Tensor<bool> {
        or_panic(self.f_logical_and(other))
    }
}

impl BitOr for &Tensor<bool> {
    type Output = Tensor<bool>;

    /// `a | b`, [`Tensor::logical_or`]; panics on shapes that do not broadcast.
    #[track_caller]
    fn bitor(self, other: &Tensor<bool>) -> Tensor<bool> {
        self.logical_or(other)
    }
}

impl BitAnd for &Tensor<bool> {
    type Output = Tensor<bool>;

    /// `a & b`, [`Tensor::logical_and`]; panics on shapes that do not broadcast.
    #[track_caller]
    fn bitand(self, other: &Tensor<bool>) -> Tensor<bool> {
        self.logical_and(other)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Error, ones};

    #[test]
    fn masks_combine_by_broadcasting() {
        // A causal [1, 1, 3, 3] mask and a padding [2, 1, 1, 3] mask (the second sequence
        // has 2 tokens): the second sequence also hides its last key in every row.
        let causal = ones(&[3, 3]).triu(1).bool().view(&[1, 1, 3, 3]);
        let padding = crate::tensor!([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
            .bool()
            .view(&[2, 1, 1, 3]);
        let hidden = &causal | &padding;
        assert_eq!(hidden.shape(), [2, 1, 3, 3]);
        let t = true;
        let f = false;
        assert_eq!(
            hidden.to_vec(),
            vec![f, t, t, f, f, t, f, f, f, f, t, t, f, f, t, f, f, t]
        );
        let both = &causal & &padding;
        assert_eq!(both.to_vec().iter().filter(|&&x| x).count(), 2);
    }

    #[test]
    fn shapes_that_do_not_broadcast_are_an_error_naming_the_op() {
        let a = ones(&[2, 3]).bool();
        let b = ones(&[4]).bool();
        let err = a.f_logical_or(&b).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Shape {
                    op: "logical_or",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("[2, 3]"), "{err}");
    }
}
