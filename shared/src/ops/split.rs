//! Cutting a tensor into pieces along one dim: `split` into pieces of a given size,
//! `split_sizes` into pieces of given sizes, `chunk` into a given number of pieces,
//! `unbind` into every slice. Each piece is a view of the same numbers.
//!
//! `qkv.chunk(3, -1)` cuts a fused `[t, 3·d]` projection into queries, keys and values.

use ndarray::{Axis, Slice};

use crate::error::{Error, Result, or_panic, shape_list};
use crate::tensor::{Element, Tensor};

impl<E: Element> Tensor<E> {
    /// The dim a split works on; a 0-d tensor has none to split.
    fn f_split_dim(&self, op: &'static str, dim: i64) -> Result<usize> {
        if self.dim() == 0 {
            return Err(Error::Shape {
                op,
                detail: format!(
                    "{op} expects at least a 1-dimensional tensor (shape [])"
                ),
            });
        }
        self.f_dim_index(op, dim)
    }

    /// Views of consecutive runs along dim `d`, one per length in `sizes`.
    fn pieces(
        &self,
        d: usize,
        sizes: impl IntoIterator<Item = usize>,
    ) -> Vec<Tensor<E>> {
        let mut start = 0;
        sizes
            .into_iter()
            .map(|len| {
                let range = Slice::from(start..start + len);
                start += len;
                if self.is_expanded() {
                    return Tensor::from_expanded_view(
                        self.array().slice_axis_move(Axis(d), range),
                    );
                }
                Tensor::from_array(
                    self.stored.clone().slice_axis_move(Axis(d), range),
                )
            })
            .collect()
    }

    /// `t.split(size, dim)`: pieces of `size` along `dim`, the last one shorter if `size`
    /// does not divide the dim.
    ///
    /// # Shapes
    /// `[.., n, ..]` gives `ceil(n / size)` pieces `[.., size, ..]` (the last
    /// `[.., n - (pieces - 1)·size, ..]`). `size` may be 0 only when `n` is 0.
    pub fn f_split(&self, size: usize, dim: i64) -> Result<Vec<Tensor<E>>> {
        let d = self.f_split_dim("split", dim)?;
        let n = self.sizes()[d];
        if size == 0 {
            if n != 0 {
                return Err(Error::InvalidArgument {
                    op: "split",
                    detail: format!(
                        "split_size can only be 0 if dimension size is 0, but got dimension \
                         size of {n} (shape {})",
                        shape_list(self.sizes())
                    ),
                });
            }
            return Ok(vec![self.clone()]);
        }
        // An empty dim still gives one (empty) piece, as in PyTorch.
        let count = n.div_ceil(size).max(1);
        Ok(self.pieces(d, (0..count).map(|i| size.min(n - i * size))))
    }

    /// Plain form of [`Tensor::f_split`].
    #[track_caller]
    pub fn split(&self, size: usize, dim: i64) -> Vec<Tensor<E>> {
        or_panic(self.f_split(size, dim))
    }

    /// `t.split([s0, s1, ..], dim)` (PyTorch's `split_with_sizes`): one piece per size.
    ///
    /// # Shapes
    /// `[.., n, ..]` gives pieces `[.., s_i, ..]`; the sizes must add up to `n`.
    pub fn f_split_sizes(&self, sizes: &[usize], dim: i64) -> Result<Vec<Tensor<E>>> {
        let d = self.f_split_dim("split_with_sizes", dim)?;
        let n = self.sizes()[d];
        // Checked: sizes whose sum wraps around must not pass for the right total.
        let total = sizes.iter().try_fold(0usize, |sum, &s| sum.checked_add(s));
        if total != Some(n) {
            return Err(Error::InvalidArgument {
                op: "split_with_sizes",
                detail: format!(
                    "split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's \
                     size at dimension {d}), but got split_sizes={sizes:?}"
                ),
            });
        }
        Ok(self.pieces(d, sizes.iter().copied()))
    }

    /// Plain form of [`Tensor::f_split_sizes`].
    #[track_caller]
    pub fn split_sizes(&self, sizes: &[usize], dim: i64) -> Vec<Tensor<E>> {
        or_panic(self.f_split_sizes(sizes, dim))
    }

    /// `t.chunk(chunks, dim)`: at most `chunks` pieces of `ceil(n / chunks)` along `dim`
    /// (PyTorch's rule: `chunk(4)` of 6 gives 3 pieces of 2, not 4 pieces). An empty dim
    /// gives `chunks` empty pieces.
    ///
    /// # Shapes
    /// `[.., n, ..]` gives pieces `[.., ceil(n / chunks), ..]`, the last one maybe shorter.
    pub fn f_chunk(&self, chunks: usize, dim: i64) -> Result<Vec<Tensor<E>>> {
        let d = self.f_split_dim("chunk", dim)?;
        if chunks == 0 {
            return Err(Error::InvalidArgument {
                op: "chunk",
                detail: "chunk expects `chunks` to be greater than 0, got: 0"
                    .to_string(),
            });
        }
        let n = self.sizes()[d];
        if n == 0 {
            return Ok(self.pieces(d, vec![0; chunks]));
        }
        self.f_split(n.div_ceil(chunks), dim)
    }

    /// Plain form of [`Tensor::f_chunk`].
    #[track_caller]
    pub fn chunk(&self, chunks: usize, dim: i64) -> Vec<Tensor<E>> {
        or_panic(self.f_chunk(chunks, dim))
    }

    /// `t.unbind(dim)`: every slice along `dim`, which disappears from each (views).
    ///
    /// # Shapes
    /// `[.., n, ..]` gives `n` tensors `[.., ..]`.
    pub fn f_unbind(&self, dim: i64) -> Result<Vec<Tensor<E>>> {
        if self.dim() == 0 {
            return Err(Error::Shape {
                op: "unbind",
                detail: format!(
                    "Dimension specified as {dim} but tensor has no dimensions"
                ),
            });
        }
        let d = self.f_dim_index("unbind", dim)?;
        Ok((0..self.sizes()[d])
            .map(|i| match self.is_expanded() {
                true => Tensor::from_expanded_view(
                    self.array().index_axis_move(Axis(d), i),
                ),
                false => Tensor::from_array(
                    self.stored.clone().index_axis_move(Axis(d), i),
                ),
            })
            .collect())
    }

    /// Plain form of [`Tensor::f_unbind`].
    #[track_caller]
    pub fn unbind(&self, dim: i64) -> Vec<Tensor<E>> {
        or_panic(self.f_unbind(dim))
    }
}

#[cfg(test)]
mod tests {
    use crate::arange;

    #[test]
    fn pieces_follow_pytorchs_sizes() {
        let x = arange(0.0f32, 6.0, 1.0);
        let sizes = |pieces: Vec<crate::Tensor>| -> Vec<usize> {
            pieces.iter().map(|p| p.sizes()[0]).collect()
        };
        assert_eq!(sizes(x.split(4, 0)), vec![4, 2]);
        assert_eq!(sizes(x.chunk(4, -1)), vec![2, 2, 2]);
        assert_eq!(sizes(x.narrow(0, 0, 5).chunk(4, 0)), vec![2, 2, 1]);
        assert_eq!(sizes(x.split_sizes(&[1, 5], 0)), vec![1, 5]);
        assert_eq!(x.split(4, 0)[1].to_vec(), vec![4.0, 5.0]);
        assert_eq!(x.view(&[2, 3]).unbind(1)[2].to_vec(), vec![2.0, 5.0]);
        assert!(x.f_split_sizes(&[2, 2], 0).is_err());
        assert!(x.f_chunk(0, 0).is_err());
    }
}
