//! `nn.Embedding`: a lookup table with one learned vector per token id.

use ndarray::Axis;

use crate::error::{Error, Result, or_panic};
use crate::rng::with_default_generator;
use crate::tensor::Tensor;

/// A table of `num_embeddings` vectors of size `embedding_dim`, `torch.nn.Embedding`.
#[derive(Clone, Debug)]
pub struct Embedding {
    /// `[num_embeddings, embedding_dim]`: row `i` is the vector of token id `i`.
    pub weight: Tensor,
}

impl Embedding {
    /// `nn.Embedding(num_embeddings, embedding_dim)`: the table drawn from N(0, 1) with this
    /// thread's default generator, exactly as PyTorch's `normal_` fills it.
    ///
    /// # Shapes
    /// `weight`: `[num_embeddings, embedding_dim]`. Panics with a message if that does not
    /// fit in memory.
    #[track_caller]
    pub fn new(num_embeddings: usize, embedding_dim: usize) -> Embedding {
        or_panic(Embedding::f_new(num_embeddings, embedding_dim))
    }

    /// The `f_` form of [`Embedding::new`]: an error for sizes that do not fit in memory.
    ///
    /// # Shapes
    /// `weight`: `[num_embeddings, embedding_dim]`.
    pub fn f_new(num_embeddings: usize, embedding_dim: usize) -> Result<Embedding> {
        let mut weight = Tensor::f_full(&[num_embeddings, embedding_dim], 0.0)?;
        // Always the contiguous path of `normal_`, as PyTorch fills a fresh table.
        weight.fill_in_memory_order(|values, _| {
            with_default_generator(|g| g.fill_normal(values, 0.0, 1.0, true))
        });
        Ok(Embedding { weight })
    }

    /// `embed(ids)`: the row of the table for every id.
    ///
    /// # Shapes
    /// `ids`: any shape `[..]` of ids in `0..num_embeddings`. Returns `[.., embedding_dim]`.
    pub fn f_forward(&self, ids: &Tensor<i64>) -> Result<Tensor> {
        if self.weight.dim() != 2 {
            return Err(Error::Shape {
                op: "embedding",
                detail: format!(
                    "the weight must be a table [num_embeddings, embedding_dim] (2 \
                     dimensions), got shape {:?}",
                    self.weight.sizes()
                ),
            });
        }
        let rows = self.weight.sizes()[0];
        let mut index = Vec::with_capacity(ids.numel());
        for id in ids.to_vec() {
            if id < 0 || id as usize >= rows {
                return Err(Error::IndexOutOfRange {
                    op: "embedding",
                    index: id,
                    dim: 0,
                    size: rows,
                });
            }
            index.push(id as usize);
        }
        let picked = self.weight.array().select(Axis(0), &index);
        let mut shape = ids.sizes().to_vec();
        shape.push(self.weight.sizes()[1]);
        let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        Tensor::from_array(picked.into_shared()).f_view(&shape)
    }

    /// Plain form of [`Embedding::f_forward`].
    #[track_caller]
    pub fn forward(&self, ids: &Tensor<i64>) -> Tensor {
        or_panic(self.f_forward(ids))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{arange, tensor};

    #[test]
    fn looks_up_rows() {
        let table = Embedding {
            weight: arange(0.0f32, 6.0, 1.0).view(&[3, 2]),
        };
        let out = table.forward(&tensor!([[2, 0], [1, 1]]));
        assert_eq!(out.shape(), [2, 2, 2]);
        assert_eq!(out.to_vec(), vec![4.0, 5.0, 0.0, 1.0, 2.0, 3.0, 2.0, 3.0]);
        assert_eq!(
            table.f_forward(&tensor!([3])).unwrap_err().to_string(),
            "embedding: index 3 is out of bounds for dimension 0 with size 3"
        );
    }
}
