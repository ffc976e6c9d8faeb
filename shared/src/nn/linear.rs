//! `nn.Linear`: `y = x·Wᵀ + b`.

use crate::backend::on_libtorch;
use crate::error::{Error, Result, or_panic, shape_list};
use crate::rng::{linear_bias_bound, linear_weight_bound, with_default_generator};
use crate::tensor::Tensor;

/// A fully connected layer, `torch.nn.Linear`.
#[derive(Clone, Debug)]
pub struct Linear {
    /// `[out_features, in_features]`: one row per output feature, as PyTorch stores it.
    pub weight: Tensor,
    /// `[out_features]`, or `None` for `bias=False`.
    pub bias: Option<Tensor>,
}

/// A [`Linear`]'s weight packed once for its products of many rows (see
/// [`Linear::pack_weight`]); dropped, the packing is freed.
pub struct PackedWeight {
    /// The weight's numbers, held so that they stay where the packing was made from: a
    /// layer changed in place afterwards (a training step) writes to a copy of them, so
    /// the packing never stands for numbers that are gone.
    _weight: Tensor,
    /// The packing (none where the processor's product packs nothing).
    _kept: Option<crate::kernels::packed_once::Kept>,
}

impl Linear {
    /// `nn.Linear(in_features, out_features, bias)` initialised as PyTorch does, from this
    /// thread's default generator: first the weight, uniform in `±bound` with
    /// `bound = gain·√(3/in)` for `kaiming_uniform_(a = √5)` (which works out to `1/√in`),
    /// row by row; then, only with `bias`, the bias, uniform in `±1/√in`.
    ///
    /// With `in_features = 0` the weight has no elements and PyTorch skips its
    /// initialisation (no draws); the bias bound is then `0`, so the bias is `out_features`
    /// draws that all come out `+0.0` (the draws still advance the generator).
    ///
    /// # Shapes
    /// `weight`: `[out_features, in_features]`, `bias`: `[out_features]`. Panics with a
    /// message if their sizes do not fit in memory.
    #[track_caller]
    pub fn new(in_features: usize, out_features: usize, bias: bool) -> Linear {
        or_panic(Linear::f_new(in_features, out_features, bias))
    }

    /// The `f_` form of [`Linear::new`]: an error instead of a panic for sizes that do not fit
    /// in memory.
    ///
    /// # Shapes
    /// `weight`: `[out_features, in_features]`, `bias`: `[out_features]`.
    pub fn f_new(
        in_features: usize,
        out_features: usize,
        bias: bool,
    ) -> Result<Linear> {
        let mut weight = Tensor::f_full(&[out_features, in_features], 0.0)?;
        if weight.numel() > 0 {
            let bound = linear_weight_bound(in_features);
            weight.fill_in_memory_order(|values, _| {
                with_default_generator(|g| g.fill_uniform(values, -bound, bound))
            });
        }
        let bias = if bias {
            let mut b = Tensor::f_full(&[out_features], 0.0)?;
            let bound = linear_bias_bound(in_features);
            // PyTorch's lower bound is `-bound`, the Python integer `-0 = 0` when `in` is 0:
            // `+0.0`, or every draw `-0.0 + 0·u` would come out as `-0.0`.
            let low = if bound == 0.0 { 0.0 } else { -bound };
            b.fill_in_memory_order(|values, _| {
                with_default_generator(|g| g.fill_uniform(values, low, bound))
            });
            Some(b)
        } else {
            None
        };
        Ok(Linear { weight, bias })
    }

    /// A layer with given parameters (to load weights, or to share them between modules).
    ///
    /// # Shapes
    /// `weight`: `[out, in]`, `bias`: `[out]`.
    pub fn f_from_parameters(weight: Tensor, bias: Option<Tensor>) -> Result<Linear> {
        if weight.dim() != 2 {
            return Err(Error::Shape {
                op: "linear",
                detail: format!(
                    "weight must be [out, in] (2 dimensions), got {} ({})",
                    shape_list(weight.sizes()),
                    crate::error::rank(weight.dim())
                ),
            });
        }
        if let Some(b) = &bias
            && b.sizes() != [weight.sizes()[0]]
        {
            return Err(Error::Shape {
                op: "linear",
                detail: format!(
                    "bias of shape {} does not fit weight of shape {}",
                    shape_list(b.sizes()),
                    shape_list(weight.sizes())
                ),
            });
        }
        Ok(Linear { weight, bias })
    }

    /// Plain form of [`Linear::f_from_parameters`].
    #[track_caller]
    pub fn from_parameters(weight: Tensor, bias: Option<Tensor>) -> Linear {
        or_panic(Linear::f_from_parameters(weight, bias))
    }

    /// The weight packed once for the products of many rows (a prompt through the layer),
    /// kept while the returned [`PackedWeight`] lives.
    ///
    /// `layer.forward(x)` for an `x` of many rows multiplies by `Wᵀ` with a packed matrix
    /// product, which first copies `Wᵀ` into the order its innermost loop reads ("packing"):
    /// for a few rows, that copy costs as much as the product. While the `PackedWeight`
    /// lives, the products by this weight read the copy made here instead, with the same
    /// bits. It takes as much memory as the weight. Products of one row (a decoding step)
    /// never pack, and are unchanged.
    ///
    /// # Shapes
    /// `weight`: `[out, in]`.
    pub fn pack_weight(&self) -> PackedWeight {
        let kept = match self.weight.array().into_dimensionality::<ndarray::Ix2>() {
            Ok(w) if !self.weight.is_expanded() => {
                Some(crate::kernels::gemm::keep(w.t()))
            }
            _ => None,
        };
        PackedWeight {
            _weight: self.weight.clone(),
            _kept: kept,
        }
    }

    /// `in_features`.
    pub fn in_features(&self) -> usize {
        self.weight.sizes()[1]
    }

    /// `out_features`.
    pub fn out_features(&self) -> usize {
        self.weight.sizes()[0]
    }

    /// `layer(x)`: `x·Wᵀ + b` over the last dim of `x`.
    ///
    /// ```
    /// use shared::nn::Linear;
    /// use shared::{manual_seed, tensor};
    /// manual_seed(123);
    /// let layer = Linear::new(3, 2, true);
    /// let y = layer.forward(&tensor!([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]]));
    /// // Rounded to 4 decimals, as PyTorch prints them.
    /// let rounded: Vec<f32> = y.to_vec().iter().map(|v| (v * 1e4).round() / 1e4).collect();
    /// assert_eq!(rounded, [-0.7732, -0.0625, -0.7217, -0.4879]);
    /// ```
    ///
    /// # Shapes
    /// `x`: `[.., in_features]`. Returns `[.., out_features]`.
    pub fn f_forward(&self, x: &Tensor) -> Result<Tensor> {
        if x.sizes().last() == Some(&self.in_features()) {
            on_libtorch!(|device| crate::backend::torch::f_linear(
                x,
                &self.weight,
                self.bias.as_ref(),
                device
            ));
        }
        let y = x.f_matmul(&self.weight.t()).map_err(|e| match e {
            Error::Shape { detail, .. } => Error::Shape {
                op: "linear",
                detail,
            },
            other => other,
        })?;
        // PyTorch adds a 2-D or 3-D input's bias inside the product (`addmm`), as the
        // starting value of the matrix that MKL adds each block of `in_features` into. While
        // the input features are one block (up to 384, all our exact products) that is the
        // product first, then the bias: these bits (`tests/fixtures/room_fixtures.json`).
        match &self.bias {
            Some(b) => y.f_add(b),
            None => Ok(y),
        }
    }

    /// Plain form of [`Linear::f_forward`].
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Tensor {
        or_panic(self.f_forward(x))
    }

    /// [`Linear::forward`] of each token alone, concatenated along the tokens: the bits of
    /// `forward(x.narrow(1, i, 1))` for every token `i` (a one-row product when the batch
    /// is one sequence, as in a decoding step). For one sequence the weight is read once
    /// for all the tokens, each token's outputs added in the one-row order, rather than
    /// once per token.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, in_features]`. Returns `[batch, tokens, out_features]`.
    pub fn f_forward_row_by_row(&self, x: &Tensor) -> Result<Tensor> {
        let shape = x.sizes().to_vec();
        if shape.len() != 3 || shape[2] != self.in_features() {
            return Err(Error::Shape {
                op: "linear row by row",
                detail: format!(
                    "input {} is not [batch, tokens, {}]",
                    shape_list(&shape),
                    self.in_features()
                ),
            });
        }
        let weight = self.weight.as_slice().filter(|_| self.weight.dim() == 2);
        #[cfg(feature = "tch")]
        let weight = weight.filter(|_| crate::backend::torch::current().is_none());
        let (Some(weight), 1) = (weight, shape[0]) else {
            let rows = (0..shape[1])
                .map(|i| self.f_forward(&x.narrow(1, i, 1)))
                .collect::<Result<Vec<Tensor>>>()?;
            return crate::f_cat(&rows, 1);
        };
        let out_features = self.out_features();
        let mut y = vec![0.0f32; shape[1] * out_features];
        if shape[1] > 0 {
            crate::kernels::row_dots::row_dots_many_into(
                weight,
                &x.to_vec(),
                shape[1],
                &mut y,
            );
        }
        let y = Tensor::from_vec(y, &[1, shape[1], out_features]);
        match &self.bias {
            Some(b) => y.f_add(b),
            None => Ok(y),
        }
    }

    /// Plain form of [`Linear::f_forward_row_by_row`].
    #[track_caller]
    pub fn forward_row_by_row(&self, x: &Tensor) -> Tensor {
        or_panic(self.f_forward_row_by_row(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ones;

    #[test]
    fn no_inputs_gives_the_bias() {
        crate::manual_seed(0);
        let layer = Linear::new(0, 3, true);
        assert_eq!(layer.weight.shape(), [3, 0]);
        let bias = layer.bias.as_ref().expect("a bias");
        assert!(
            bias.to_vec().iter().all(|b| b.to_bits() == 0),
            "+0.0, not -0.0"
        );
        assert_eq!(layer.forward(&ones(&[4, 0])).to_vec(), vec![0.0; 12]);
    }

    #[test]
    fn forward_over_leading_dims() {
        let layer = Linear::from_parameters(ones(&[2, 3]), Some(ones(&[2])));
        assert_eq!(layer.forward(&ones(&[4, 5, 3])).shape(), [4, 5, 2]);
        assert_eq!(layer.forward(&ones(&[3])).to_vec(), vec![4.0, 4.0]);
        assert_eq!(
            layer.f_forward(&ones(&[6, 2])).unwrap_err().to_string(),
            "linear: mat1 and mat2 shapes cannot be multiplied (6x2 and 3x2)"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// Row by row, every token's outputs are the bits of `forward` on that token alone
        /// (one sequence: one weight read for all tokens; several: the loop itself).
        #[test]
        fn row_by_row_is_each_token_alone(
            in_features in 0usize..=150,
            out_features in 1usize..=300,
            batch in 1usize..=2,
            tokens in 1usize..=6,
            bias: bool,
            seed in 0u64..1000,
        ) {
            crate::manual_seed(seed);
            let layer = Linear::new(in_features, out_features, bias);
            let x = crate::randn(&[batch, tokens, in_features]);
            let alone: Vec<Tensor> =
                (0..tokens).map(|i| layer.forward(&x.narrow(1, i, 1))).collect();
            let expected = crate::cat(&alone, 1);
            let rows = layer.forward_row_by_row(&x);
            proptest::prop_assert_eq!(rows.shape(), expected.shape());
            let bits = |t: &Tensor| t.to_vec().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            proptest::prop_assert_eq!(bits(&rows), bits(&expected));
        }
    }

    #[test]
    fn row_by_row_names_a_wrong_input() {
        let layer = Linear::from_parameters(ones(&[2, 3]), None);
        assert_eq!(
            layer
                .f_forward_row_by_row(&ones(&[4, 2]))
                .unwrap_err()
                .to_string(),
            "linear row by row: input [4, 2] is not [batch, tokens, 3]"
        );
    }
}
