//! Masks: `triu`/`tril` keep one triangle of a matrix, `masked_fill` overwrites the
//! places a boolean mask marks. Together they hide future tokens from causal attention.

use ndarray::{IxDyn, Zip};

use crate::error::{Error, Result, or_panic, shape_list};
use crate::ops::broadcast::f_broadcast_shapes;
use crate::tensor::{Element, Tensor};

impl<E: Element> Tensor<E> {
    /// Zeroes the elements where `keep(row, col)` fails, in every matrix of the last two dims.
    fn f_triangle(
        &self,
        op: &'static str,
        keep: impl Fn(i64, i64) -> bool,
    ) -> Result<Tensor<E>> {
        let ndim = self.dim();
        if ndim < 2 {
            return Err(Error::Shape {
                op,
                detail: format!(
                    "input tensor must have at least 2 dimensions (shape {})",
                    shape_list(self.sizes())
                ),
            });
        }
        let mut data = self.array().to_owned();
        for (index, value) in data.indexed_iter_mut() {
            if !keep(index[ndim - 2] as i64, index[ndim - 1] as i64) {
                *value = E::default();
            }
        }
        Ok(Tensor::from_array(data.into_shared()))
    }

    /// `torch.triu(t, diagonal)`: keeps the upper triangle, where `col - row >= diagonal`.
    /// `triu(ones, 1)` marks the future tokens a causal mask hides.
    ///
    /// ```
    /// use shared::ones;
    /// assert_eq!(
    ///     ones(&[3, 3]).triu(1).to_string(),
    ///     "tensor([[0., 1., 1.],\n        [0., 0., 1.],\n        [0., 0., 0.]])"
    /// );
    /// ```
    ///
    /// # Shapes
    /// `[.., rows, cols]`, unchanged; at least 2 dims.
    pub fn f_triu(&self, diagonal: i64) -> Result<Tensor<E>> {
        self.f_triangle("triu", |row, col| col - row >= diagonal)
    }

    /// Plain form of [`Tensor::f_triu`].
    #[track_caller]
    pub fn triu(&self, diagonal: i64) -> Tensor<E> {
        or_panic(self.f_triu(diagonal))
    }

    /// `torch.tril(t, diagonal)`: keeps the lower triangle, where `col - row <= diagonal`.
    ///
    /// # Shapes
    /// `[.., rows, cols]`, unchanged; at least 2 dims.
    pub fn f_tril(&self, diagonal: i64) -> Result<Tensor<E>> {
        self.f_triangle("tril", |row, col| col - row <= diagonal)
    }

    /// Plain form of [`Tensor::f_tril`].
    #[track_caller]
    pub fn tril(&self, diagonal: i64) -> Tensor<E> {
        or_panic(self.f_tril(diagonal))
    }

    /// `t.masked_fill_(mask, value)`: in place, writes `value` wherever `mask` is `true`.
    ///
    /// # Shapes
    /// `mask` must broadcast to `self`'s shape, which is unchanged (an in-place op cannot
    /// grow `self`: a `[2, 3]` mask on a `[3]` tensor is an error here, see `masked_fill`).
    pub fn f_masked_fill_(
        &mut self,
        mask: &Tensor<bool>,
        value: E,
    ) -> Result<&mut Self> {
        // The mask comes first, as in PyTorch's message ("tensor a" is the mask).
        let shape = f_broadcast_shapes("masked_fill_", mask.sizes(), self.sizes())?;
        if shape != self.sizes() {
            return Err(Error::Shape {
                op: "masked_fill_",
                detail: format!(
                    "output with shape {} doesn't match the broadcast shape {} (mask of shape {})",
                    shape_list(self.sizes()),
                    shape_list(&shape),
                    shape_list(mask.sizes())
                ),
            });
        }
        let mask = mask
            .stored
            .broadcast(IxDyn(&shape))
            .expect("shape checked above");
        self.make_writable();
        let zip = Zip::from(&mut self.stored).and(&mask);
        crate::kernels::parallel::for_each2(zip, |x: &mut E, &m: &bool| {
            if m {
                *x = value;
            }
        });
        Ok(self)
    }

    /// Plain form of [`Tensor::f_masked_fill_`].
    #[track_caller]
    pub fn masked_fill_(&mut self, mask: &Tensor<bool>, value: E) -> &mut Self {
        or_panic(self.f_masked_fill_(mask, value))
    }

    /// `t.masked_fill(mask, value)`: a copy with `value` wherever `mask` is `true`. Unlike
    /// the in-place form, `self` and `mask` broadcast both ways, as in PyTorch: a `[3]` row
    /// with a `[2, 3]` mask gives a `[2, 3]` result.
    ///
    /// ```
    /// use shared::{ones, tensor};
    /// let scores = tensor!([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]);
    /// let future = ones(&[3, 3]).triu(1).bool();
    /// let weights = scores.masked_fill(&future, f32::NEG_INFINITY).softmax(-1);
    /// assert_eq!(
    ///     weights.to_string(),
    ///     "tensor([[1.0000, 0.0000, 0.0000],\n        [0.2689, 0.7311, 0.0000],\n        \
    ///      [0.0900, 0.2447, 0.6652]])"
    /// );
    /// ```
    ///
    /// # Shapes
    /// `self` and `mask` must broadcast together; returns the broadcast shape.
    pub fn f_masked_fill(&self, mask: &Tensor<bool>, value: E) -> Result<Tensor<E>> {
        let shape = f_broadcast_shapes("masked_fill", mask.sizes(), self.sizes())?;
        let source = self
            .stored
            .broadcast(IxDyn(&shape))
            .expect("shape checked above");
        let mut out = crate::storage::f_new("masked_fill", &shape, |mut out| {
            out.assign(&source)
        })?;
        out.f_masked_fill_(mask, value)?;
        Ok(out)
    }

    /// Plain form of [`Tensor::f_masked_fill`].
    #[track_caller]
    pub fn masked_fill(&self, mask: &Tensor<bool>, value: E) -> Tensor<E> {
        or_panic(self.f_masked_fill(mask, value))
    }
}

#[cfg(test)]
mod tests {
    use crate::{ones, tensor};

    #[test]
    fn triangles() {
        let m = ones(&[3, 3]);
        assert_eq!(m.triu(1).to_vec(), vec![0., 1., 1., 0., 0., 1., 0., 0., 0.]);
        assert_eq!(m.tril(0).to_vec(), vec![1., 0., 0., 1., 1., 0., 1., 1., 1.]);
        assert_eq!(
            tensor!([1.0, 2.0]).f_triu(0).unwrap_err().to_string(),
            "triu: input tensor must have at least 2 dimensions (shape [2])"
        );
    }

    #[test]
    fn masked_fill_broadcasts_the_mask() {
        let scores = ones(&[2, 3, 3]);
        let mask = ones(&[3, 3]).triu(1).bool();
        let masked = scores.masked_fill(&mask, f32::NEG_INFINITY);
        assert_eq!(
            masked.get(1).get(0).to_vec(),
            vec![1.0, f32::NEG_INFINITY, f32::NEG_INFINITY]
        );
        // Out of place, the tensor broadcasts to the mask's shape; in place it cannot grow.
        assert_eq!(ones(&[3]).masked_fill(&mask, 0.0).shape(), [3, 3]);
        let err = ones(&[3])
            .f_masked_fill_(&mask, 0.0)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "masked_fill_: output with shape [3] doesn't match the broadcast shape [3, 3] \
             (mask of shape [3, 3])"
        );
    }
}
