//! `nn.Dropout`: during training, zero each element with probability `p` and scale the
//! survivors by `1/(1-p)`, so the expected value of every element stays the same.

use crate::error::{Error, Result};
use crate::rng::{dropout_in_place, with_default_generator};
use crate::tensor::Tensor;

/// `torch.nn.Dropout(p)`. Starts in training mode, like a fresh PyTorch module.
#[derive(Clone, Debug, PartialEq)]
pub struct Dropout {
    /// The probability of zeroing an element.
    pub p: f64,
    /// Training mode drops; evaluation mode (`eval()`) passes the input through.
    pub training: bool,
}

impl Dropout {
    /// `nn.Dropout(p)` in training mode.
    pub fn f_new(p: f64) -> Result<Dropout> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::InvalidArgument {
                op: "dropout",
                detail: format!("dropout probability has to be between 0 and 1, but got {p}"),
            });
        }
        Ok(Dropout { p, training: true })
    }

    /// Plain form of [`Dropout::f_new`].
    #[track_caller]
    pub fn new(p: f64) -> Dropout {
        crate::error::or_panic(Dropout::f_new(p))
    }

    /// `module.eval()`: stop dropping.
    pub fn eval(&mut self) -> &mut Self {
        self.training = false;
        self
    }

    /// `module.train()`: drop again.
    pub fn train(&mut self) -> &mut Self {
        self.training = true;
        self
    }

    /// `dropout(x)`. In training mode the keep/drop mask is drawn from this thread's default
    /// generator in the order of `x`'s memory, as PyTorch does (a transposed input gets its
    /// mask in storage order), so after the same `manual_seed` the same elements drop.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        if !self.training || self.p == 0.0 {
            return x.clone();
        }
        let mut out = x.clone();
        out.fill_in_memory_order(|values, _| {
            with_default_generator(|g| dropout_in_place(g, values, self.p))
        });
        out
    }
}
