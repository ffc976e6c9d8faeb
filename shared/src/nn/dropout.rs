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
                detail: format!(
                    "dropout probability has to be between 0 and 1, but got {p}"
                ),
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
    /// ```
    /// use shared::nn::Dropout;
    /// use shared::{manual_seed, ones};
    /// manual_seed(123);
    /// let dropout = Dropout::new(0.5);
    /// // Kept elements are scaled by 1 / (1 - p).
    /// assert_eq!(dropout.forward(&ones(&[6])).to_string(), "tensor([2., 2., 0., 2., 2., 0.])");
    /// ```
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

    /// `dropout(x)` that also returns the noise it multiplied `x` by, for a backward pass:
    /// `Some(noise)` with `0.0` where an element was dropped and `1 ⊘ f32(1 - p)` where it
    /// was kept, or `None` when nothing is dropped (evaluation mode, `p = 0`). PyTorch's CPU
    /// dropout computes exactly this, `noise = bernoulli(1 - p) / (1 - p)`, `y = x * noise`,
    /// and its backward is `grad_x = grad_y * noise`.
    ///
    /// Draws the same numbers from the default generator as [`Dropout::forward`] and
    /// returns the same `y`, bit for bit.
    ///
    /// # Shapes
    /// Any shape; `y` and `noise` have the shape of `x`.
    pub fn forward_with_noise(&self, x: &Tensor) -> (Tensor, Option<Tensor>) {
        if !self.training || self.p == 0.0 {
            return (x.clone(), None);
        }
        // Dropout applied to ones leaves the noise itself (1 · s = s, 1 · 0 = 0), drawn in
        // the memory order of `x`, as `forward` draws it.
        let mut noise = x.clone();
        noise.fill_in_memory_order(|values, _| {
            values.fill(1.0);
            with_default_generator(|g| dropout_in_place(g, values, self.p))
        });
        (x * &noise, Some(noise))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{manual_seed, randn};

    #[test]
    fn forward_with_noise_equals_forward() {
        for p in [0.0, 0.1, 0.5, 1.0] {
            manual_seed(7);
            let x = randn(&[3, 5, 6]);
            let dropout = Dropout::new(p);
            manual_seed(11);
            let y = dropout.forward(&x);
            manual_seed(11);
            let (y_noise, noise) = dropout.forward_with_noise(&x);
            let bits = |t: &Tensor| {
                t.to_vec().iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            };
            assert_eq!(bits(&y), bits(&y_noise), "p = {p}");
            match noise {
                None => assert_eq!(p, 0.0),
                Some(noise) => {
                    let kept = 1.0 / (1.0 - p) as f32;
                    assert!(noise.to_vec().iter().all(|&n| n == 0.0 || n == kept));
                }
            }
        }
        // A transposed input draws its noise in memory order, as `forward` does.
        manual_seed(3);
        let x = randn(&[4, 6]).t();
        let dropout = Dropout::new(0.5);
        manual_seed(5);
        let y = dropout.forward(&x);
        manual_seed(5);
        let (y_noise, _) = dropout.forward_with_noise(&x);
        assert_eq!(y.to_vec(), y_noise.to_vec());
    }
}
