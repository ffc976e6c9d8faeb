//! Picking values by index tensors: `index_select` takes whole slices along a dim (rows of
//! an embedding table, say), `gather` takes one value per position (the probability of
//! each sequence's next token, say); `index_copy_` writes whole slices in place (a new key
//! into a cache, say).
//!
//! Indices are `i64`, like PyTorch's `torch.long`, and must lie in `[0, size)`: unlike
//! `select`, these do not count negative indices from the end, they refuse them.

use ndarray::{Axis, Dimension, IxDyn};

use crate::error::{Error, Result, or_panic, shape_list};
use crate::tensor::{Element, Tensor};

/// Checks one index against the size of the dim it indexes.
fn f_check_index(
    op: &'static str,
    index: i64,
    dim: usize,
    size: usize,
) -> Result<usize> {
    if index < 0 || index >= size as i64 {
        return Err(Error::IndexOutOfRange {
            op,
            index,
            dim,
            size,
        });
    }
    Ok(index as usize)
}

impl<E: Element> Tensor<E> {
    /// `t.index_select(dim, index)`: the slices of `t` along `dim` at the positions in
    /// `index`, in that order (repeats allowed).
    ///
    /// # Shapes
    /// `self`: `[.., n, ..]`; `index`: `[k]` (or 0-d, as `[1]`), values in `[0, n)`.
    /// Returns `[.., k, ..]`.
    pub fn f_index_select(&self, dim: i64, index: &Tensor<i64>) -> Result<Tensor<E>> {
        if index.dim() > 1 {
            return Err(Error::Shape {
                op: "index_select",
                detail: format!(
                    "Index is supposed to be a vector, got an index of shape {}",
                    shape_list(index.sizes())
                ),
            });
        }
        if self.dim() == 0 {
            // A 0-d tensor is one value along dim 0 (or -1).
            crate::tensor::normalize_dim("index_select", dim, 1)?;
            let picked: Result<Vec<E>> = index
                .to_vec()
                .into_iter()
                .map(|i| f_check_index("index_select", i, 0, 1).map(|_| self.item()))
                .collect();
            let picked = picked?;
            return if picked.len() == 1 {
                Ok(Tensor::scalar(picked[0]))
            } else {
                Tensor::f_from_vec(picked, &[index.numel()])
            };
        }
        let d = self.f_dim_index("index_select", dim)?;
        let size = self.sizes()[d];
        let positions = index
            .to_vec()
            .into_iter()
            .map(|i| f_check_index("index_select", i, d, size))
            .collect::<Result<Vec<usize>>>()?;
        Ok(Tensor::from_array(
            self.array().select(Axis(d), &positions).into_shared(),
        ))
    }

    /// Plain form of [`Tensor::f_index_select`].
    #[track_caller]
    pub fn index_select(&self, dim: i64, index: &Tensor<i64>) -> Tensor<E> {
        or_panic(self.f_index_select(dim, index))
    }

    /// `t.index_copy_(dim, index, source)`: in place, slice `i` of `source` along `dim`
    /// becomes slice `index[i]` of `t`. The rest of `t` is untouched, and nothing is
    /// copied but those slices when `t` owns its buffer alone (a buffer that a view still
    /// shares is copied first, so that the view keeps its values). A cache of keys that
    /// grows in place writes each new key so (transformers' static cache does too).
    ///
    /// # Shapes
    /// `self`: `[.., n, ..]`; `index`: `[k]` (or 0-d, as `[1]`), values in `[0, n)`;
    /// `source`: `self`'s shape with `k` along `dim`.
    pub fn f_index_copy_(
        &mut self,
        dim: i64,
        index: &Tensor<i64>,
        source: &Tensor<E>,
    ) -> Result<&mut Self> {
        let op = "index_copy_";
        if index.dim() > 1 {
            return Err(Error::Shape {
                op,
                detail: format!(
                    "Index should have dimension 1 or 0, got an index of shape {}",
                    shape_list(index.sizes())
                ),
            });
        }
        let d = self.f_dim_index(op, dim)?;
        let mut expected = self.sizes().to_vec();
        expected[d] = index.numel();
        if source.sizes() != expected {
            return Err(Error::Shape {
                op,
                detail: format!(
                    "source of shape {} does not fit {} indices along dim {d} of a tensor of \
                     shape {} (expected {})",
                    shape_list(source.sizes()),
                    index.numel(),
                    shape_list(self.sizes()),
                    shape_list(&expected)
                ),
            });
        }
        let size = self.sizes()[d];
        let positions = index
            .to_vec()
            .into_iter()
            .map(|i| f_check_index(op, i, d, size))
            .collect::<Result<Vec<usize>>>()?;
        self.make_writable();
        let from = source.array();
        for (i, &to) in positions.iter().enumerate() {
            self.stored
                .index_axis_mut(Axis(d), to)
                .assign(&from.index_axis(Axis(d), i));
        }
        Ok(self)
    }

    /// Plain form of [`Tensor::f_index_copy_`].
    #[track_caller]
    pub fn index_copy_(
        &mut self,
        dim: i64,
        index: &Tensor<i64>,
        source: &Tensor<E>,
    ) -> &mut Self {
        or_panic(self.f_index_copy_(dim, index, source))
    }

    /// `t.gather(dim, index)`: `out[i][j][k] = t[index[i][j][k]][j][k]` for `dim = 0`, and
    /// so on: each position of `index` says which entry along `dim` to take.
    ///
    /// # Shapes
    /// `index` has as many dims as `self`, and no dim larger than `self`'s except `dim`;
    /// its values lie in `[0, self.size(dim))`. Returns `index`'s shape.
    pub fn f_gather(&self, dim: i64, index: &Tensor<i64>) -> Result<Tensor<E>> {
        // 0-d and 1-D count as one dim here, as in PyTorch.
        let (ndim, index_ndim) = (self.dim().max(1), index.dim().max(1));
        let d = crate::tensor::normalize_dim("gather", dim, ndim)?;
        if index_ndim != ndim {
            return Err(Error::Shape {
                op: "gather",
                detail: format!(
                    "Index tensor must have the same number of dimensions as input tensor \
                     (index shape {}, input shape {})",
                    shape_list(index.sizes()),
                    shape_list(self.sizes())
                ),
            });
        }
        let one = [1];
        let self_dims = if self.dim() == 0 {
            &one[..]
        } else {
            self.sizes()
        };
        let index_dims = if index.dim() == 0 {
            &one[..]
        } else {
            index.sizes()
        };
        let too_large = (0..ndim).find(|&i| i != d && index_dims[i] > self_dims[i]);
        if let Some(i) = too_large {
            return Err(Error::Shape {
                op: "gather",
                detail: format!(
                    "Size does not match at dimension {i} expected index {} to be no larger \
                     than self {} apart from dimension {d}",
                    shape_list(index.sizes()),
                    shape_list(self.sizes())
                ),
            });
        }
        let array = self.array();
        let source = array.into_shape_with_order(IxDyn(self_dims));
        let source = source.expect("only a 0-d tensor is reshaped, to [1]");
        let mut position = vec![0; ndim];
        let values = index
            .array()
            .indexed_iter()
            .map(|(at, &i)| {
                // A 0-d index has an empty position: it reads the one entry at [i].
                position
                    .iter_mut()
                    .zip(at.slice())
                    .for_each(|(p, &a)| *p = a);
                position[d] = f_check_index("gather", i, d, self_dims[d])?;
                Ok(source[IxDyn(&position)])
            })
            .collect::<Result<Vec<E>>>()?;
        Tensor::f_from_vec(values, index.sizes())
    }

    /// Plain form of [`Tensor::f_gather`].
    #[track_caller]
    pub fn gather(&self, dim: i64, index: &Tensor<i64>) -> Tensor<E> {
        or_panic(self.f_gather(dim, index))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Tensor, tensor};

    #[test]
    fn gather_takes_one_value_per_position() {
        let probs = tensor!([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]]);
        let next = Tensor::from_vec(vec![1i64, 0], &[2, 1]);
        assert_eq!(probs.gather(1, &next).to_vec(), vec![0.7, 0.5]);
        let err = probs.f_gather(1, &Tensor::from_vec(vec![-1i64], &[1, 1]));
        assert_eq!(
            err.unwrap_err().to_string(),
            "gather: index -1 is out of bounds for dimension 1 with size 3"
        );
    }

    #[test]
    fn index_select_takes_whole_slices() {
        let table = tensor!([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
        let rows = table.index_select(0, &Tensor::from_vec(vec![2i64, 0, 2], &[3]));
        assert_eq!(rows.to_vec(), vec![5.0, 6.0, 1.0, 2.0, 5.0, 6.0]);
        assert!(
            table
                .f_index_select(1, &Tensor::from_vec(vec![2i64], &[1]))
                .is_err()
        );
    }

    #[test]
    fn index_copy_writes_whole_slices_in_place_and_keeps_views() {
        let mut cache = crate::zeros(&[2, 4, 3]);
        let before = cache.narrow(1, 0, 2); // a view that must keep its zeros
        let key = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 1, 3]);
        cache.index_copy_(1, &Tensor::from_vec(vec![1i64], &[1]), &key);
        assert_eq!(cache.narrow(1, 1, 1).to_vec(), key.to_vec());
        assert_eq!(cache.narrow(1, 2, 2).to_vec(), vec![0.0; 12]);
        assert_eq!(before.to_vec(), vec![0.0; 12]);
        let err = cache.f_index_copy_(1, &Tensor::from_vec(vec![4i64], &[1]), &key);
        assert_eq!(
            err.unwrap_err().to_string(),
            "index_copy_: index 4 is out of bounds for dimension 1 with size 4"
        );
        let err =
            cache.f_index_copy_(1, &Tensor::from_vec(vec![0i64, 1], &[2]), &key);
        assert_eq!(
            err.unwrap_err().to_string(),
            "index_copy_: source of shape [2, 1, 3] does not fit 2 indices along dim 1 of a \
             tensor of shape [2, 4, 3] (expected [2, 2, 3])"
        );
    }
}
