//! Unary maths on every element: `abs`, `clamp`, `tanh`, `log`, `sin`, `cos`.
//!
//! `abs` and `clamp` only compare and copy, so they give PyTorch's bits exactly. `tanh`,
//! `log`, `sin` and `cos` are transcendental: PyTorch's CPU build takes them from Intel MKL's vector library,
//! whose algorithm is closed and not correctly rounded (it is off by one unit in the last
//! place for a fraction of a percent of the inputs). We compute them in `f64` and round once
//! to `f32`, the correctly rounded answer, which is within one unit in the last place of
//! PyTorch's.

use crate::error::{Error, Result, or_panic};
use crate::tensor::Tensor;

/// The lower bound of `clamp`: `min` where `x` is below it. NaN in `x` stays NaN (the
/// comparison is false), and `-0.0` stays `-0.0` when `min` is `+0.0`: PyTorch keeps `x` when
/// the two compare equal.
fn at_least(x: f32, min: f32) -> f32 {
    if min > x { min } else { x }
}

/// The upper bound of `clamp`, the mirror of [`at_least`].
fn at_most(x: f32, max: f32) -> f32 {
    if max < x { max } else { x }
}

impl Tensor {
    /// `torch.abs(t)`: the magnitude of every element (`-0.0` becomes `0.0`).
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn abs(&self) -> Tensor {
        self.map(f32::abs)
    }

    /// `torch.clamp(t, min, max)`: every element pulled into `[min, max]`; either bound may
    /// be `None`. As in PyTorch, a NaN element stays NaN, a NaN bound makes every element NaN,
    /// and when `min > max` every element becomes `max`.
    ///
    /// # Shapes
    /// Any shape; unchanged. At least one of `min`, `max` must be given.
    pub fn f_clamp(&self, min: Option<f32>, max: Option<f32>) -> Result<Tensor> {
        if min.is_none() && max.is_none() {
            return Err(Error::InvalidArgument {
                op: "clamp",
                detail: "At least one of 'min' or 'max' must not be None".into(),
            });
        }
        if min.is_some_and(f32::is_nan) || max.is_some_and(f32::is_nan) {
            return Ok(self.map(|_| f32::NAN));
        }
        Ok(self.map(|x| {
            let x = min.map_or(x, |lo| at_least(x, lo));
            max.map_or(x, |hi| at_most(x, hi))
        }))
    }

    /// Plain form of [`Tensor::f_clamp`].
    #[track_caller]
    pub fn clamp(&self, min: Option<f32>, max: Option<f32>) -> Tensor {
        or_panic(self.f_clamp(min, max))
    }

    /// `torch.clamp_min(t, min)` (`t.clamp(min=min)`): raises every element below `min` to it.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn clamp_min(&self, min: f32) -> Tensor {
        self.clamp(Some(min), None)
    }

    /// `torch.clamp_max(t, max)` (`t.clamp(max=max)`): lowers every element above `max` to it.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn clamp_max(&self, max: f32) -> Tensor {
        self.clamp(None, Some(max))
    }

    /// `torch.tanh(t)`, correctly rounded (within one unit in the last place of PyTorch's).
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn tanh(&self) -> Tensor {
        self.map(|x| (x as f64).tanh() as f32)
    }

    /// `torch.log(t)`: the natural logarithm, correctly rounded (within one unit in the last
    /// place of PyTorch's). `log(0) = -inf`, and a negative element gives NaN.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn log(&self) -> Tensor {
        self.map(|x| (x as f64).ln() as f32)
    }

    /// `torch.sin(t)` (angles in radians), correctly rounded (within one unit in the last
    /// place of PyTorch's, which takes it from Intel MKL's vector library).
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn sin(&self) -> Tensor {
        self.map(|x| (x as f64).sin() as f32)
    }

    /// `torch.cos(t)` (angles in radians), correctly rounded (within one unit in the last
    /// place of PyTorch's, which takes it from Intel MKL's vector library).
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn cos(&self) -> Tensor {
        self.map(|x| (x as f64).cos() as f32)
    }
}

#[cfg(test)]
mod tests {
    use crate::tensor;

    #[test]
    fn clamp_keeps_nan_and_prefers_max() {
        let x = tensor!([-2.0, -0.0, 0.5, 3.0, f32::NAN]);
        let bits = |t: crate::Tensor| {
            t.to_vec().iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        };
        let y = x.clamp(Some(0.0), Some(1.0));
        assert_eq!(bits(y), bits(tensor!([0.0, -0.0, 0.5, 1.0, f32::NAN])));
        assert_eq!(x.clamp(Some(2.0), Some(1.0)).to_vec()[..4], [1.0; 4]);
        assert!(x.clamp_max(f32::NAN).to_vec().iter().all(|v| v.is_nan()));
        assert_eq!(
            x.f_clamp(None, None).unwrap_err().to_string(),
            "clamp: At least one of 'min' or 'max' must not be None"
        );
    }

    #[test]
    fn log_and_tanh_at_their_special_points() {
        let y = tensor!([0.0, 1.0, -1.0, f32::INFINITY]).log().to_vec();
        assert_eq!(y[..2], [f32::NEG_INFINITY, 0.0]);
        assert!(y[2].is_nan());
        assert_eq!(y[3], f32::INFINITY);
        let t = tensor!([-0.0, 20.0, f32::NEG_INFINITY]).tanh().to_vec();
        assert_eq!(t[0].to_bits(), (-0.0f32).to_bits());
        assert_eq!(t[1..], [1.0, -1.0]);
    }

    #[test]
    fn sin_and_cos_are_odd_and_even_and_exact_at_zero() {
        let x = tensor!([0.0, 0.5, -0.5, 3.0, 1e-4]);
        let (s, c) = (x.sin().to_vec(), x.cos().to_vec());
        assert_eq!((s[0], c[0]), (0.0, 1.0));
        assert_eq!((s[1], c[1]), (-s[2], c[2]));
        // sin(x) rounds to x itself for a small x: x³/6 is below half an ulp of x.
        assert_eq!(s[4], 1e-4);
        for (v, (s, c)) in x.to_vec().iter().zip(s.iter().zip(&c)) {
            assert_eq!(*s, (*v as f64).sin() as f32);
            assert!((s * s + c * c - 1.0).abs() < 1e-6);
        }
        assert!(tensor!([f32::INFINITY]).sin().to_vec()[0].is_nan());
    }
}
