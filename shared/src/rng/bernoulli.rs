//! `t.bernoulli_(p)`: every element becomes `1.0` with probability `p`, else `0.0`, drawn
//! as dropout draws its mask (two 32-bit draws per element, compared in double).

use super::with_default_generator;
use crate::error::{Error, Result, or_panic};
use crate::tensor::Tensor;

impl Tensor {
    /// `t.bernoulli_(p)` with the default generator, in place and in the order the values
    /// lie in memory (as PyTorch fills a transposed view).
    ///
    /// # Shapes
    /// Any shape; unchanged. `p` in `[0, 1]`.
    pub fn f_bernoulli_(&mut self, p: f64) -> Result<&mut Self> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::InvalidArgument {
                op: "bernoulli_",
                detail: format!(
                    "bernoulli_ expects p to be in [0, 1], but got p={p}"
                ),
            });
        }
        self.fill_in_memory_order(|values, _| {
            with_default_generator(|g| g.fill_bernoulli(values, p))
        });
        Ok(self)
    }

    /// Plain form of [`Tensor::f_bernoulli_`].
    #[track_caller]
    pub fn bernoulli_(&mut self, p: f64) -> &mut Self {
        or_panic(self.f_bernoulli_(p))
    }
}
