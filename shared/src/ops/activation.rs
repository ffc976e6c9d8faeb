//! Activation functions: `relu` and `gelu`, the non-linearities between the two linear
//! layers of a transformer's feed-forward block.
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

use crate::error::{Error, Result};
use crate::kernels::gelu;
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
                detail: format!("approximate argument must be either none or tanh. (got {s:?})"),
            }),
        }
    }
}

/// The vector width GELU's kernels run at, from the CPU build this crate follows
/// ([`crate::cpu::capability`]): AVX-512 (16 floats, and oneDNN's piecewise kernel for the
/// `"none"` form) or AVX2 (8 floats, oneDNN's Abramowitz–Stegun kernel). PyTorch lets oneDNN
/// choose on its own (`ONEDNN_MAX_CPU_ISA`); here one setting decides both, so a machine
/// follows one build throughout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Width {
    /// 256-bit vectors, 8 floats (the AVX2 build, and the portable one).
    Avx2,
    /// 512-bit vectors, 16 floats.
    Avx512,
}

impl Width {
    /// The width of the CPU build in use.
    pub(crate) fn current() -> Width {
        match crate::cpu::capability() {
            crate::cpu::Capability::Avx512 => Width::Avx512,
            crate::cpu::Capability::Avx2 | crate::cpu::Capability::Default => Width::Avx2,
        }
    }

    /// Floats per vector register.
    fn lanes(self) -> usize {
        match self {
            Width::Avx2 => 8,
            Width::Avx512 => 16,
        }
    }
}

/// GELU's own threading rule: above 16384 elements every thread gets a range (smaller
/// tensors stay in one range unless they exceed ATen's usual grain of 32768).
fn gelu_ranges(n: usize, threads: usize) -> Vec<std::ops::Range<usize>> {
    const GELU_MIN_ELEMENTS_FOR_THREADS: usize = 16384;
    const GRAIN: usize = 32768;
    let grain = if n > GELU_MIN_ELEMENTS_FOR_THREADS {
        (n / threads.max(1)).max(1)
    } else {
        GRAIN
    };
    let tasks = threads.max(1).min(n.div_ceil(grain)).max(1);
    let chunk = n.div_ceil(tasks).max(1);
    (0..n)
        .step_by(chunk)
        .map(|start| start..(start + chunk).min(n))
        .collect()
}

/// ATen's vectorised loop over one range: whole blocks of two vectors take `vector`, the
/// leftover tail takes `scalar`.
fn blocks_and_tail(
    xs: &mut [f32],
    block: usize,
    vector: impl Fn(f32) -> f32,
    scalar: impl Fn(f32) -> f32,
) {
    let whole = xs.len() / block * block;
    let (body, tail) = xs.split_at_mut(whole);
    body.iter_mut().for_each(|x| *x = vector(*x));
    tail.iter_mut().for_each(|x| *x = scalar(*x));
}

/// ATen's native GELU kernel on values laid out as it walks them (`runs`: the contiguous
/// runs of memory it hands to its inner loop).
fn aten_gelu(
    values: &mut [f32],
    runs: usize,
    approximate: GeluApproximate,
    isa: Width,
    threads: usize,
) {
    let block = 2 * isa.lanes();
    let run_len = values.len() / runs.max(1);
    let ranges = if runs == 1 {
        gelu_ranges(values.len(), threads)
    } else {
        (0..runs).map(|r| r * run_len..(r + 1) * run_len).collect()
    };
    for range in ranges {
        let xs = &mut values[range];
        match approximate {
            GeluApproximate::Tanh => blocks_and_tail(
                xs,
                block,
                |x| gelu::gelu_tanh_with(x, gelu::sleef_tanhf),
                // Rust's `f32::tanh` calls the C library's `tanhf` on Linux, the very call
                // ATen makes on its tail.
                |x| gelu::gelu_tanh_with(x, f32::tanh),
            ),
            GeluApproximate::None => blocks_and_tail(
                xs,
                block,
                gelu::gelu_erf_aten_vector,
                gelu::gelu_erf_aten_scalar,
            ),
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
        if approximate == GeluApproximate::None && self.is_contiguous() && self.numel() > 1 {
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
        aten_gelu(&mut values, runs, approximate, isa, threads);
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
                    assert!((g - w).abs() < 2e-3, "{approximate:?} {isa:?}: {g} vs {w}");
                }
            }
        }
        assert!("erf".parse::<GeluApproximate>().is_err());
    }

    #[test]
    fn ranges_follow_the_thread_split() {
        assert_eq!(gelu_ranges(16384, 2), vec![0..16384]);
        assert_eq!(gelu_ranges(16385, 2), vec![0..8193, 8193..16385]);
        assert_eq!(gelu_ranges(20001, 1), vec![0..20001]);
        assert_eq!(gelu_ranges(0, 2), Vec::<std::ops::Range<usize>>::new());
    }
}
