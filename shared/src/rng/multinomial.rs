//! Sampling ids from a distribution: `torch.multinomial(probs, num_samples, replacement)`.
//!
//! Each row of `probs` holds non-negative weights (they need not sum to 1); each sample is
//! an index `i` drawn with probability `probs[i] / sum(probs)`. PyTorch's CPU kernel draws in
//! one of two ways, and reproducing its ids means drawing the same way:
//!
//! * **without replacement, or one sample** (the usual `multinomial(probs, 1)` of text
//!   generation): the "exponential race". Fill `q` with exponential noise over the whole
//!   tensor (two draws per entry, in memory order), then pick the largest `probs / q` of each
//!   row, or the `num_samples` largest in order. Entry `i` wins with probability
//!   `probs[i] / sum(probs)`, and the winners of a top-`n` are a draw without replacement;
//! * **with replacement, several samples**: the inverse of the cumulative distribution.
//!   Each row's running sum is taken in float32, divided by the total, its last entry set to
//!   1; each sample is one double uniform `u` (two draws) and the first index whose cumulative
//!   value is not below `u`.
//!
//! Which path runs depends only on `replacement` and `num_samples`, never on the values.

use super::{Generator, with_default_generator};
use crate::error::{Error, Result, f_checked_numel, or_panic};
use crate::tensor::Tensor;

/// PyTorch stores sampled indices through a float in places, so a row may hold at most 2^24
/// categories.
const MAX_CATEGORIES: usize = 1 << 24;

fn invalid(detail: impl Into<String>) -> Error {
    Error::InvalidArgument {
        op: "multinomial",
        detail: detail.into(),
    }
}

impl Tensor {
    /// `torch.multinomial(probs, num_samples, replacement)`: `num_samples` ids per row of
    /// `probs`, drawn from the default generator with probability proportional to the row's
    /// weights, as `torch.int64`.
    ///
    /// The ids are PyTorch's own for the same `manual_seed`: without replacement, or with one
    /// sample, each entry gets exponential noise `q` and the largest `probs / q` win; with
    /// replacement and several samples, each sample is a uniform number looked up in the
    /// row's cumulative distribution (see the module notes).
    ///
    /// ```
    /// use shared::{manual_seed, tensor};
    /// // What PyTorch 2.13 prints for the same three calls after `torch.manual_seed(123)`.
    /// manual_seed(123);
    /// let probs = tensor!([0.1, 0.2, 0.3, 0.4]);
    /// assert_eq!(probs.multinomial(1, false).to_vec(), [1]);
    /// assert_eq!(probs.multinomial(4, false).to_vec(), [3, 2, 1, 0]);
    /// assert_eq!(probs.multinomial(6, true).to_vec(), [3, 0, 3, 0, 1, 1]);
    /// ```
    ///
    /// # Shapes
    /// `probs`: `[n]` or `[rows, n]`, weights finite and non-negative, no row all zero.
    /// Returns `[num_samples]` or `[rows, num_samples]`; `num_samples >= 1`, and without
    /// replacement `num_samples <= n`.
    pub fn f_multinomial(
        &self,
        num_samples: usize,
        replacement: bool,
    ) -> Result<Tensor<i64>> {
        with_default_generator(|g| {
            self.f_multinomial_with(num_samples, replacement, g)
        })
    }

    /// Plain form of [`Tensor::f_multinomial`].
    #[track_caller]
    pub fn multinomial(&self, num_samples: usize, replacement: bool) -> Tensor<i64> {
        or_panic(self.f_multinomial(num_samples, replacement))
    }

    /// [`Tensor::f_multinomial`] drawing from `generator` instead of the default one, like
    /// `torch.multinomial(probs, n, replacement, generator=g)`.
    ///
    /// # Shapes
    /// As [`Tensor::f_multinomial`].
    pub fn f_multinomial_with(
        &self,
        num_samples: usize,
        replacement: bool,
        generator: &mut Generator,
    ) -> Result<Tensor<i64>> {
        if !matches!(self.dim(), 1 | 2) {
            return Err(Error::Shape {
                op: "multinomial",
                detail: format!(
                    "prob_dist must be 1 or 2 dim (got shape {:?})",
                    self.sizes()
                ),
            });
        }
        if num_samples == 0 {
            return Err(invalid("cannot sample n_sample <= 0 samples"));
        }
        let categories = self.sizes()[self.dim() - 1];
        if !replacement && num_samples > categories {
            return Err(invalid(format!(
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement \
                 ({num_samples} > {categories})"
            )));
        }
        if categories > MAX_CATEGORIES {
            return Err(invalid(format!(
                "number of categories cannot exceed 2^24 (got {categories})"
            )));
        }
        let mut out_shape = self.sizes().to_vec();
        *out_shape.last_mut().expect("1 or 2 dims") = num_samples;
        if f_checked_numel("multinomial", &out_shape, std::mem::size_of::<i64>())?
            == 0
        {
            return Tensor::f_from_vec(Vec::new(), &out_shape);
        }
        if !replacement || num_samples == 1 {
            self.f_exponential_race(num_samples, generator)
        } else {
            let ids = self.f_inverse_cdf(num_samples, generator)?;
            Tensor::f_from_vec(ids, &out_shape)
        }
    }

    /// Plain form of [`Tensor::f_multinomial_with`].
    #[track_caller]
    pub fn multinomial_with(
        &self,
        num_samples: usize,
        replacement: bool,
        generator: &mut Generator,
    ) -> Tensor<i64> {
        or_panic(self.f_multinomial_with(num_samples, replacement, generator))
    }

    /// Without replacement (or one sample): `argmax` / `topk` of `probs / q`, `q ~ Exp(1)`.
    ///
    /// Taking logarithms, `ln p - ln q` is `ln p` plus Gumbel noise, and the Gumbel-max trick
    /// says its argmax is a sample of `p`; the exponential needs no logarithm of its own.
    fn f_exponential_race(
        &self,
        num_samples: usize,
        generator: &mut Generator,
    ) -> Result<Tensor<i64>> {
        if self.numel() == 0 {
            // PyTorch checks the values with `aminmax`, which has nothing to look at.
            return Err(invalid(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation \
                 has no identity.",
            ));
        }
        // Checked before any draw: a bad tensor leaves the generator untouched.
        if self
            .array()
            .iter()
            .any(|&p| !(0.0..f32::INFINITY).contains(&p))
        {
            return Err(invalid(
                "probability tensor contains either `inf`, `nan` or element < 0",
            ));
        }
        // PyTorch tests `sum == 0`; with finite non-negative weights that means all zero.
        let categories = self.sizes()[self.dim() - 1];
        let rows = self.to_vec();
        if rows
            .chunks(categories)
            .any(|row| row.iter().all(|&p| p == 0.0))
        {
            return Err(invalid(
                "invalid multinomial distribution (sum of probabilities <= 0)",
            ));
        }
        // `q = empty_like(probs).exponential_(1)`: `empty_like` keeps the layout of `probs`,
        // so a transposed `probs` gets its noise in the order of its memory.
        let mut q = self.clone();
        q.fill_in_memory_order(|values, _| generator.fill_exponential(values, 1.0));
        let ratio = self.f_div(&q)?;
        if num_samples == 1 {
            ratio.f_argmax_dim(-1, true)
        } else {
            Ok(ratio.f_topk(num_samples, -1, true, true)?.1)
        }
    }

    /// With replacement (several samples): one uniform per sample, found in the row's
    /// cumulative distribution by bisection. Rows are checked and sampled one after another,
    /// as in PyTorch (a bad row fails after the rows before it have drawn).
    fn f_inverse_cdf(
        &self,
        num_samples: usize,
        generator: &mut Generator,
    ) -> Result<Vec<i64>> {
        let categories = self.sizes()[self.dim() - 1];
        let values = self.to_vec();
        let rows = if self.dim() == 2 { self.sizes()[0] } else { 1 };
        let mut ids = Vec::with_capacity(rows * num_samples);
        let mut cumulative = Vec::with_capacity(categories);
        for row in 0..rows {
            let row = &values[row * categories..(row + 1) * categories];
            cumulative.clear();
            // The running sum in float32, one addition after another, as the kernel does.
            let mut sum = 0.0f32;
            for &p in row {
                // The kernel tests `p >= 0`, which NaN fails too.
                if p.is_nan() || p < 0.0 {
                    return Err(invalid(
                        "invalid multinomial distribution (encountering probability entry < 0)",
                    ));
                }
                if !p.is_finite() {
                    return Err(invalid(
                        "invalid multinomial distribution (encountering probability entry = \
                         infinity or NaN)",
                    ));
                }
                sum += p;
                cumulative.push(sum);
            }
            // Finite non-negative entries: the sum is zero, positive or +inf, never NaN.
            if sum <= 0.0 {
                return Err(invalid(
                    "invalid multinomial distribution (sum of probabilities <= 0)",
                ));
            }
            for c in &mut cumulative {
                *c /= sum;
            }
            // Rounding can leave the total a hair away from 1; the last bucket takes the rest.
            cumulative[categories - 1] = 1.0;
            for _ in 0..num_samples {
                let u = generator.next_unit_f64();
                // The first index whose cumulative value is not below `u`, compared in double.
                let (mut left, mut right) = (0, categories);
                while left < right {
                    let mid = left + (right - left) / 2;
                    if f64::from(cumulative[mid]) < u {
                        left = mid + 1;
                    } else {
                        right = mid;
                    }
                }
                ids.push(left as i64);
            }
        }
        Ok(ids)
    }
}
