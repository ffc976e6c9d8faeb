//! PyTorch's CPU kernels work on vectors of W floats at once (W = 8 with AVX2, 16 with
//! AVX-512). The mathematics does not change with W, but the order of the additions does:
//! a row is summed as W partial sums, one per lane, which are added together at the end. To
//! get PyTorch's last bit we keep the same W partial sums and combine them in the same order.
//!
//! Measured with the rest of `kernels::softmax` (see there).

use crate::cpu::{Capability, capability};
use crate::kernels::exp_rows::{glibc_exp_shifted, sleef_exp_shifted};
use crate::kernels::vec_math::{expf_u10, glibc_expf, logf_u10};

/// The vector unit of the PyTorch build we imitate: its width and its `exp` and `log`.
#[derive(Clone, Copy)]
pub(crate) struct Vector {
    /// Floats per vector (W).
    pub lanes: usize,
    /// The `exp` every vector lane computes.
    pub exp: fn(f32) -> f32,
    /// `exp` over a row less a shift, `out[i] = exp(x[i] − shift)`, with the bits of `exp`.
    pub exp_shifted: fn(&[f32], f32, &mut [f32]),
    /// The `log` every vector lane computes.
    pub log: fn(f32) -> f32,
    /// How the W lanes are combined at the end: pairwise in halves (the SIMD builds) or
    /// one after the other (the portable build).
    halving: bool,
}

impl Vector {
    /// The vector unit of the capability this thread computes as.
    pub fn current() -> Vector {
        match capability() {
            Capability::Avx512 => Vector {
                lanes: 16,
                exp: expf_u10,
                exp_shifted: sleef_exp_shifted,
                log: logf_u10,
                halving: true,
            },
            Capability::Avx2 => Vector {
                lanes: 8,
                exp: expf_u10,
                exp_shifted: sleef_exp_shifted,
                log: logf_u10,
                halving: true,
            },
            // The portable build calls the C library lane by lane. `f32::ln` is the C
            // library's `logf` where Rust links against glibc (Linux), the case we check.
            Capability::Default => Vector {
                lanes: 8,
                exp: glibc_expf,
                exp_shifted: glibc_exp_shifted,
                log: f32::ln,
                halving: false,
            },
        }
    }

    /// PyTorch's `vec::reduce_all`: folds a row with `op` in W lanes.
    ///
    /// A row shorter than W is folded left to right. Otherwise lane `l` starts with
    /// `row[l]` and takes `row[l + W]`, `row[l + 2W]`, ...; a last partial vector feeds only
    /// the first lanes. Then the lanes are combined (see `combine`).
    // `op` is generic (not a `fn` pointer), and the width a constant of each build, so that
    // each use compiles to straight-line code with its operation inlined.
    #[inline]
    pub fn reduce_all(
        &self,
        row: &[f32],
        op: impl Fn(f32, f32) -> f32 + Copy,
    ) -> f32 {
        match self.lanes {
            16 => self.reduce_lanes::<16>(row, op),
            8 => self.reduce_lanes::<8>(row, op),
            w => unreachable!("no build has {w} lanes"),
        }
    }

    /// [`Vector::reduce_all`] for `W` lanes.
    #[inline(always)]
    fn reduce_lanes<const W: usize>(
        &self,
        row: &[f32],
        op: impl Fn(f32, f32) -> f32 + Copy,
    ) -> f32 {
        if row.len() < W {
            return row[1..].iter().fold(row[0], |acc, &x| op(acc, x));
        }
        let mut acc: [f32; W] = row[..W].try_into().expect("W numbers");
        let mut blocks = row[W..].chunks_exact(W);
        for block in &mut blocks {
            for (a, &x) in acc.iter_mut().zip(block) {
                *a = op(*a, x);
            }
        }
        for (a, &x) in acc.iter_mut().zip(blocks.remainder()) {
            *a = op(*a, x);
        }
        self.combine(&mut acc, op)
    }

    #[inline(always)]
    fn combine<const W: usize>(
        &self,
        acc: &mut [f32; W],
        op: impl Fn(f32, f32) -> f32,
    ) -> f32 {
        if !self.halving {
            return acc[1..].iter().fold(acc[0], |a, &x| op(a, x));
        }
        // A butterfly: every lane takes its partner `dist` lanes away, for dist = W/2, W/4,
        // ..., 1; lane 0 ends with the result. For W = 8 that is
        // ((a0+a4) + (a2+a6)) + ((a1+a5) + (a3+a7)).
        let mut dist = acc.len() / 2;
        while dist > 0 {
            let before = *acc;
            for (l, a) in acc.iter_mut().enumerate() {
                *a = op(before[l], before[l ^ dist]);
            }
            dist /= 2;
        }
        acc[0]
    }
}

/// The vector `maximum`: NaN if either is NaN, else the larger, the second on a tie (so
/// `max(-0., 0.)` is `0.`), as the processor's `max` instruction answers.
pub(crate) fn maximum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a > b {
        a
    } else {
        b
    }
}

pub(crate) fn add(a: f32, b: f32) -> f32 {
    a + b
}
