//! Normalisation over the last dims: `layer_norm` and `rms_norm`.
//!
//! A transformer normalises every token's vector before (or after) attention and the
//! feed-forward block, so that no layer sees inputs whose scale drifts during training.
//! `layer_norm` subtracts the vector's mean and divides by its standard deviation,
//! `y = (x − mean) / √(var + eps) · weight + bias`; `rms_norm` only divides by the root of the
//! mean square, `y = x / √(mean(x²) + eps) · weight`, which is cheaper and works as well.
//!
//! Both reproduce PyTorch's CPU kernels bit for bit. The order of the additions matters
//! for the last bit, so the sums follow PyTorch's: `layer_norm` takes the mean and variance
//! from `kernels::welford` (one pass of Welford's update on 8 lanes at a time, merged
//! pairwise); `rms_norm` takes the mean of `x²` with PyTorch's "cascade" sum, which keeps
//! partial sums of similar size apart so that rounding errors grow slowly.

use crate::error::{Error, Result, or_panic, shape_list};
use crate::kernels::lanes::compiled_for_this_processor;
use crate::kernels::parallel::by_rows;
use crate::kernels::welford::row_moments;
use crate::tensor::Tensor;

/// Checks `normalized_shape` against the input's trailing dims and the parameters' shapes,
/// with PyTorch's messages; returns the number of values normalised together.
fn f_check_normalized(
    op: &'static str,
    input: &[usize],
    normalized_shape: &[usize],
    params: [(&str, Option<&Tensor>); 2],
) -> Result<usize> {
    let fail = |detail: String| Err(Error::Shape { op, detail });
    if normalized_shape.is_empty() {
        return fail(format!(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least \
             one element, but got normalized_shape = {}",
            shape_list(normalized_shape)
        ));
    }
    for (name, param) in params {
        if let Some(p) = param
            && p.sizes() != normalized_shape
        {
            return fail(format!(
                "Expected {name} to be of same shape as normalized_shape, but got {name} of shape \
                 {} and normalized_shape = {}",
                shape_list(p.sizes()),
                shape_list(normalized_shape)
            ));
        }
    }
    if !input.ends_with(normalized_shape) {
        let trailing = shape_list(normalized_shape);
        return fail(format!(
            "Given normalized_shape={trailing}, expected input with shape [*, {}], but got input \
             of size{}",
            &trailing[1..trailing.len() - 1],
            shape_list(input)
        ));
    }
    Ok(normalized_shape.iter().product())
}

/// The values of an optional parameter in row-major order.
fn values_of(param: Option<&Tensor>) -> Option<Vec<f32>> {
    param.map(Tensor::to_vec)
}

/// One row of `layer_norm`: `y = (x − mean) · rstd · weight + bias`.
///
/// # Shapes
/// `x`, `y`, `w`, `b`: the row's length.
#[inline(always)]
fn normalize_row(
    x: &[f32],
    y: &mut [f32],
    eps: f32,
    w: Option<&[f32]>,
    b: Option<&[f32]>,
) {
    let (mean, var) = row_moments(x);
    let rstd = 1.0 / (var + eps).sqrt();
    for (j, (&x, y)) in x.iter().zip(y).enumerate() {
        let d = x - mean;
        // PyTorch's kernel computes `d · rstd · weight + bias` with a missing weight
        // taken as 1 and a missing bias as 0, and the compiler fused the last product
        // with the addition; with no weight the `· 1` is gone, so `d · rstd` is not even
        // rounded. Adding the 0 turns a `-0.0` into `0.0`.
        *y = match (w, b) {
            (Some(w), Some(b)) => (d * rstd).mul_add(w[j], b[j]),
            (Some(w), None) => (d * rstd).mul_add(w[j], 0.0),
            (None, Some(b)) => d.mul_add(rstd, b[j]),
            (None, None) => d.mul_add(rstd, 0.0),
        };
    }
}

impl Tensor {
    /// `F.layer_norm(t, normalized_shape, weight, bias, eps)`: every vector over the last
    /// dims (`normalized_shape`) gets mean 0 and variance 1, then is scaled by `weight` and
    /// shifted by `bias`: `y = (x − mean) / √(var + eps) · weight + bias`, with the biased
    /// variance (divided by the count, not the count − 1).
    ///
    /// # Shapes
    /// `self`: `[*, normalized_shape]`; `weight`, `bias`: `normalized_shape`. Returns the
    /// shape of `self`.
    pub fn f_layer_norm(
        &self,
        normalized_shape: &[usize],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        let n = f_check_normalized(
            "layer_norm",
            self.sizes(),
            normalized_shape,
            [("weight", weight), ("bias", bias)],
        )?;
        let eps = eps as f32;
        let (w, b) = (values_of(weight), values_of(bias));
        let x = self.to_vec();
        let mut values = vec![0.0f32; x.len()];
        if n == 0 {
            return Tensor::f_from_vec(values, self.sizes());
        }
        // Each row on its own, as PyTorch's kernel shares the rows between its threads:
        // blocks of rows on the pool's threads, each compiled with fused multiply-adds.
        let normalize = |xs: &[f32], out: &mut [f32]| {
            compiled_for_this_processor(
                #[inline(always)]
                || {
                    for (x, y) in xs.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
                        normalize_row(x, y, eps, w.as_deref(), b.as_deref());
                    }
                },
            )
        };
        by_rows(&x, &mut values, n, normalize);
        Tensor::f_from_vec(values, self.sizes())
    }

    /// Plain form of [`Tensor::f_layer_norm`].
    #[track_caller]
    pub fn layer_norm(
        &self,
        normalized_shape: &[usize],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Tensor {
        or_panic(self.f_layer_norm(normalized_shape, weight, bias, eps))
    }

    /// `F.rms_norm(t, normalized_shape, weight, eps)`: every vector over the last dims is
    /// divided by its root mean square, `y = x / √(mean(x²) + eps) · weight`. With
    /// `eps = None` the epsilon is `f32::EPSILON`, as in PyTorch.
    ///
    /// # Shapes
    /// `self`: `[*, normalized_shape]`; `weight`: `normalized_shape`. Returns the shape of
    /// `self`.
    pub fn f_rms_norm(
        &self,
        normalized_shape: &[usize],
        weight: Option<&Tensor>,
        eps: Option<f64>,
    ) -> Result<Tensor> {
        let n = f_check_normalized(
            "rms_norm",
            self.sizes(),
            normalized_shape,
            [("weight", weight), ("bias", None)],
        )?;
        let eps = eps.map_or(f32::EPSILON, |e| e as f32);
        let w = values_of(weight);
        let mut values = self.to_vec();
        if n == 0 {
            return Tensor::f_from_vec(values, self.sizes());
        }
        // `mean(x²)` over each row, summed as `t.pow(2).mean(-1)` sums: rows in parallel, and
        // a single row split between threads like a whole-tensor sum.
        let rows = values.len() / n;
        let squares: Vec<f32> = values.iter().map(|x| x * x).collect();
        let sums = crate::kernels::cascade_sum::sum(
            &Tensor::f_from_vec(squares, &[rows, n])?,
            &[false, true],
        );
        for (row, sum) in values.chunks_exact_mut(n).zip(sums) {
            let r = 1.0 / (sum / n as f32 + eps).sqrt();
            for (j, x) in row.iter_mut().enumerate() {
                *x *= r;
                if let Some(w) = &w {
                    *x *= w[j];
                }
            }
        }
        Tensor::f_from_vec(values, self.sizes())
    }

    /// Plain form of [`Tensor::f_rms_norm`].
    #[track_caller]
    pub fn rms_norm(
        &self,
        normalized_shape: &[usize],
        weight: Option<&Tensor>,
        eps: Option<f64>,
    ) -> Tensor {
        or_panic(self.f_rms_norm(normalized_shape, weight, eps))
    }
}

#[cfg(test)]
mod tests {
    use crate::tensor;

    #[test]
    fn layer_norm_gives_zero_mean_and_unit_variance() {
        let x = tensor!([[1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 5.0, 5.0]]);
        let y = x.layer_norm(&[4], None, None, 0.0).to_vec();
        let want = [-1.3416408, -0.4472136, 0.4472136, 1.3416408];
        for (g, w) in y[..4].iter().zip(want) {
            assert!((g - w).abs() < 1e-6);
        }
        assert!(
            y[4..].iter().all(|v| v.is_nan()),
            "0 / 0 for a constant row and eps = 0"
        );
        assert_eq!(
            x.f_layer_norm(&[3], None, None, 1e-5)
                .unwrap_err()
                .to_string(),
            "layer_norm: Given normalized_shape=[3], expected input with shape [*, 3], but got \
             input of size[2, 4]"
        );
    }

    #[test]
    fn rms_norm_divides_by_the_root_mean_square() {
        let x = tensor!([[3.0, 4.0]]);
        let y = x.rms_norm(&[2], None, Some(0.0)).to_vec();
        let rms = 12.5f32.sqrt();
        assert_eq!(y, vec![3.0 * (1.0 / rms), 4.0 * (1.0 / rms)]);
        let w = tensor!([1.0]);
        assert!(x.f_rms_norm(&[2], Some(&w), None).is_err());
    }
}
