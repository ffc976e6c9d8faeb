//! Activation functions: `relu`, `gelu` and `silu`, the non-linearities between the two
//! linear layers of a transformer's feed-forward block.
//!
//! `relu(x) = max(x, 0)` cuts negative values to zero. `gelu(x) = x·Φ(x)` weighs `x` by the
//! probability that a standard normal variable is below it, `Φ(x) = (1 + erf(x/√2)) / 2`: a
//! smooth relu that GPT-2 and BERT use. Its `"tanh"` approximation replaces `erf` by a `tanh`
//! (`0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`), as the original GPT-2 code did.
//!
//! PyTorch's GELU gives different last bits on different CPUs, and so does this one, on
//! purpose: its `"none"` form runs oneDNN's kernel, whose formula depends on whether the CPU
//! has AVX-512, and ATen's own kernels (the `"tanh"` form, and `"none"` on one element or on
//! a non-contiguous view) treat whole vector blocks and the leftover tail with different
//! maths, so the block width matters. The formulas are in `kernels::gelu`.
//!
//! `silu(x) = x·sigmoid(x) = x / (1 + e^(-x))` is the gate of SwiGLU (Llama, Qwen). PyTorch
//! takes its `exp` from SLEEF on whole vector blocks and from the C library on the tail,
//! and so does this one (`kernels::silu`).

use crate::backend::on_libtorch;
#[cfg(feature = "tch")]
use crate::backend::torch;
#[cfg(feature = "tch")]
use crate::error::or_panic;
use crate::error::{Error, Result};
use crate::kernels::gelu::{self, Width};
use crate::kernels::silu;
use crate::tensor::Tensor;

/// Which GELU to compute, PyTorch's `approximate` argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeluApproximate {
    /// `approximate="none"`: the exact `x·Φ(x)` with `erf`.
    None,
    /// `approximate="tanh"`: the tanh approximation.
    Tanh,
}

impl std::str::FromStr for GeluApproximate {
    type Err = Error;

    /// `"none"` or `"tanh"`, as `F.gelu` spells them.
    fn from_str(s: &str) -> Result<GeluApproximate> {
        match s {
            "none" => Ok(GeluApproximate::None),
            "tanh" => Ok(GeluApproximate::Tanh),
            _ => Err(Error::InvalidArgument {
                op: "gelu",
                detail: format!(
                    "approximate argument must be either none or tanh. (got {s:?})"
                ),
            }),
        }
    }
}

impl Tensor {
    /// `torch.relu(t)`: negative values become 0 (NaN stays NaN, `-0.0` stays `-0.0`).
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn relu(&self) -> Tensor {
        self.clamp_min(0.0)
    }

    /// `F.silu(t)`: `x·sigmoid(x) = x / (1 + e^(-x))`, elementwise.
    ///
    /// ```
    /// use shared::tensor;
    /// let y = tensor!([-2.0, 0.0, 3.0]).silu().to_vec();
    /// assert_eq!(y[1], 0.0);
    /// assert!((y[0] + 0.23840584).abs() < 1e-7 && (y[2] - 2.8577223).abs() < 1e-6);
    /// ```
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn silu(&self) -> Tensor {
        on_libtorch!(|device| or_panic(torch::f_unary(
            "silu",
            self,
            self.sizes(),
            device,
            |t| t.f_silu()
        )));
        if !self.is_contiguous() {
            return self.map(silu::silu_scalar);
        }
        let mut values = self.to_vec();
        silu::silu_contiguous(
            &mut values,
            Width::current(),
            crate::cpu::get_num_threads(),
        );
        Tensor::from_vec(values, self.sizes())
    }

    /// `F.gelu(t, approximate)`: `x·Φ(x)`, or its tanh approximation.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn gelu(&self, approximate: GeluApproximate) -> Tensor {
        self.gelu_with(approximate, Width::current(), crate::cpu::get_num_threads())
    }

    /// [`Tensor::gelu`] as PyTorch computes it on a CPU with instruction set `isa` and
    /// `threads` threads.
    pub(crate) fn gelu_with(
        &self,
        approximate: GeluApproximate,
        isa: Width,
        threads: usize,
    ) -> Tensor {
        if approximate == GeluApproximate::None
            && self.is_contiguous()
            && self.numel() > 1
        {
            // oneDNN: every element on its own, the formula chosen by the CPU.
            let f = match isa {
                Width::Avx2 => gelu::gelu_erf_onednn_avx2,
                Width::Avx512 => gelu::gelu_erf_onednn_avx512,
            };
            return self.map(f);
        }
        // ATen's kernel walks memory in order: put the dims in memory order (largest
        // stride first), compute, and put them back.
        let mut order: Vec<usize> = (0..self.dim()).collect();
        let strides = self.array().strides().to_vec();
        order.sort_by_key(|&d| std::cmp::Reverse(strides[d].unsigned_abs()));
        let in_memory = self.array().permuted_axes(order.clone());
        let dense = in_memory.is_standard_layout();
        let mut values: Vec<f32> = in_memory.iter().copied().collect();
        // A dense buffer is one run; a view with gaps is one run per innermost row.
        let runs = match (dense, in_memory.shape().last()) {
            (false, Some(&inner)) if inner > 0 => values.len() / inner,
            _ => 1,
        };
        match approximate {
            GeluApproximate::Tanh => gelu::aten_gelu(
                &mut values,
                runs,
                isa,
                threads,
                #[inline(always)]
                |x| gelu::gelu_tanh_with(x, gelu::sleef_tanhf_branch_free),
                // Rust's `f32::tanh` calls the C library's `tanhf` on Linux, the very call
                // ATen makes on its tail.
                |x| gelu::gelu_tanh_with(x, f32::tanh),
            ),
            GeluApproximate::None => gelu::aten_gelu(
                &mut values,
                runs,
                isa,
                threads,
                gelu::gelu_erf_aten_vector,
                gelu::gelu_erf_aten_scalar,
            ),
        }
        let computed = ndarray::ArrayD::from_shape_vec(in_memory.raw_dim(), values)
            .expect("as many values as elements");
        let mut inverse = vec![0; order.len()];
        for (i, &d) in order.iter().enumerate() {
            inverse[d] = i;
        }
        Tensor::from_array(computed.permuted_axes(inverse).into_shared())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor;

    #[test]
    fn relu_cuts_negatives() {
        let y = tensor!([-1.5, -0.0, 0.0, 2.0, f32::NAN]).relu().to_vec();
        assert_eq!(y[..4], [0.0, -0.0, 0.0, 2.0]);
        assert!(y[0].is_sign_positive() && y[1].is_sign_negative() && y[4].is_nan());
    }

    #[test]
    fn gelu_is_close_to_x_times_phi_on_every_path() {
        // x·Φ(x) for x = -1, 0.5, 3, from the exact erf.
        let want = [-0.15865525, 0.34573123, 2.9959502];
        let x = tensor!([-1.0, 0.5, 3.0]);
        for isa in [Width::Avx2, Width::Avx512] {
            for approximate in [GeluApproximate::None, GeluApproximate::Tanh] {
                let y = x.gelu_with(approximate, isa, 1).to_vec();
                for (g, w) in y.iter().zip(want) {
                    assert!(
                        (g - w).abs() < 2e-3,
                        "{approximate:?} {isa:?}: {g} vs {w}"
                    );
                }
            }
        }
        assert!("erf".parse::<GeluApproximate>().is_err());
    }
}
