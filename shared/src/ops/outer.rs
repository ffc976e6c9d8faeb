//! `torch.outer` and `torch.polar`: the two small ops that build rotary position
//! embeddings' tables of angles and of their cosines and sines.

use crate::error::{Error, Result, or_panic};
use crate::ops::elementwise::f_zip_with;
use crate::tensor::Tensor;

impl Tensor {
    /// `torch.outer(a, b)`: every product `a[i] · b[j]`, one `f32` multiply each (no
    /// summing, so PyTorch's bits exactly).
    ///
    /// # Shapes
    /// `self`: `[n]`, `other`: `[m]`. Returns `[n, m]`. Other ranks are an error that names
    /// the op and the shapes.
    pub fn f_outer(&self, other: &Tensor) -> Result<Tensor> {
        if self.dim() != 1 || other.dim() != 1 {
            return Err(Error::Shape {
                op: "outer",
                detail: format!(
                    "expected two 1-D tensors, got shapes {:?} and {:?}",
                    self.sizes(),
                    other.sizes()
                ),
            });
        }
        let column = self.f_reshape(&[-1, 1])?;
        f_zip_with("outer", &column, other, |a, b| a * b)
    }

    /// Plain form of [`Tensor::f_outer`].
    ///
    /// # Shapes
    /// `self`: `[n]`, `other`: `[m]`. Returns `[n, m]`.
    #[track_caller]
    pub fn outer(&self, other: &Tensor) -> Tensor {
        or_panic(self.f_outer(other))
    }
}

/// `torch.polar(abs, angle)`, the complex numbers `abs · (cos(angle) + i·sin(angle))`,
/// returned as their real and imaginary parts (this crate has no complex dtype).
///
/// PyTorch computes `polar` one element at a time with the C library's scalar `cosf` and
/// `sinf`; Rust's `f32::cos` and `f32::sin` call the same functions of the platform's C
/// library (glibc on Linux), so on the same platform the bits are PyTorch's. (That differs
/// from `torch.cos` on a tensor, which is Intel MKL's vector code: see [`Tensor::cos`].)
///
/// # Shapes
/// `abs`, `angle`: shapes that broadcast together. Returns two tensors of the broadcast
/// shape: `(real, imag)`.
pub fn f_polar(abs: &Tensor, angle: &Tensor) -> Result<(Tensor, Tensor)> {
    let real = f_zip_with("polar", abs, angle, |r, theta| r * theta.cos())?;
    let imag = f_zip_with("polar", abs, angle, |r, theta| r * theta.sin())?;
    Ok((real, imag))
}

/// Plain form of [`f_polar`].
///
/// # Shapes
/// `abs`, `angle`: broadcastable. Returns `(real, imag)`, each of the broadcast shape.
#[track_caller]
pub fn polar(abs: &Tensor, angle: &Tensor) -> (Tensor, Tensor) {
    or_panic(f_polar(abs, angle))
}

#[cfg(test)]
mod tests {
    use super::polar;
    use crate::tensor;

    #[test]
    fn outer_multiplies_every_pair() {
        let t = tensor!([0.0, 1.0, 2.0]);
        let f = tensor!([1.0, 0.1]);
        let o = t.outer(&f);
        assert_eq!(o.sizes(), [3, 2]);
        assert_eq!(o.to_vec(), vec![0.0, 0.0, 1.0, 0.1, 2.0, 2.0 * 0.1f32]);
    }

    #[test]
    fn outer_names_the_shapes_of_a_wrong_rank() {
        let err = tensor!([[1.0]]).f_outer(&tensor!([1.0])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "outer: expected two 1-D tensors, got shapes [1, 1] and [1]"
        );
    }

    #[test]
    fn polar_uses_the_c_librarys_cosf_and_sinf() {
        let angle = tensor!([[0.0, 1.0], [2.0, -3.0]]);
        let (re, im) = polar(&tensor!([1.0, 2.0]), &angle);
        let a = angle.to_vec();
        let r = [1.0f32, 2.0, 1.0, 2.0];
        for i in 0..4 {
            assert_eq!(re.to_vec()[i].to_bits(), (r[i] * a[i].cos()).to_bits());
            assert_eq!(im.to_vec()[i].to_bits(), (r[i] * a[i].sin()).to_bits());
        }
        assert_eq!((re.to_vec()[0], im.to_vec()[0]), (1.0, 0.0));
    }
}
