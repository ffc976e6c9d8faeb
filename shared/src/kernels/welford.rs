//! The mean and variance of one row in the order of PyTorch's `layer_norm` CPU kernel: one
//! pass of Welford's update on 8 lanes at a time, chunks merged pairwise with Chan's
//! formula, the tail one element at a time.
//!
//! Every function here is always inlined, so that a caller that runs inside
//! [`super::lanes::compiled_for_this_processor`] has its fused multiply-adds as
//! instructions, not calls to `fmaf` (the same bits).

/// Floats in one AVX2 vector: PyTorch runs its sum and layer_norm kernels at this width
/// even on AVX-512 CPUs.
const LANES: usize = 8;

/// Welford's running mean and sum of squared deviations, on 8 lanes that each saw `count`
/// elements.
#[derive(Clone, Copy)]
struct LaneMoments {
    count: usize,
    mean: [f32; LANES],
    m2: [f32; LANES],
}

impl LaneMoments {
    const ZERO: LaneMoments = LaneMoments {
        count: 0,
        mean: [0.0; LANES],
        m2: [0.0; LANES],
    };

    /// Folds `other` into `self` (Chan's parallel formula): the means move towards each
    /// other by the share of `other`'s elements, and `m2` gains the spread between them.
    #[inline(always)]
    fn merge(&mut self, other: &LaneMoments) {
        let total = self.count + other.count;
        let share = if total == 0 {
            0.0
        } else {
            other.count as f32 / total as f32
        };
        for l in 0..LANES {
            let delta = other.mean[l] - self.mean[l];
            let moved = share * delta;
            self.m2[l] =
                (delta * self.count as f32).mul_add(moved, self.m2[l] + other.m2[l]);
            self.mean[l] += moved;
        }
        self.count = total;
    }

    /// Welford's update over up to 16 vectors, one after another.
    #[inline(always)]
    fn of_chunk(vectors: &[f32]) -> LaneMoments {
        let mut m = LaneMoments::ZERO;
        for (j, v) in vectors.chunks_exact(LANES).enumerate() {
            let r = 1.0 / (j + 1) as f32;
            for ((&x, mean), m2) in v.iter().zip(&mut m.mean).zip(&mut m.m2) {
                let d = x - *mean;
                *mean = r.mul_add(d, *mean);
                *m2 = d.mul_add(x - *mean, *m2);
            }
        }
        m.count = vectors.len() / LANES;
        m
    }
}

/// The mean and biased variance of one row as PyTorch's layer_norm computes them: whole
/// vectors in chunks of 16, chunks merged pairwise through a stack (like a binary counter),
/// the tail elements one by one, then the 8 lanes folded into the tail's moments.
#[inline(always)]
pub fn row_moments(row: &[f32]) -> (f32, f32) {
    const CHUNK: usize = 16 * LANES;
    let whole = row.len() / LANES * LANES;
    let vectors = whole / LANES;
    let chunks = vectors.div_ceil(16);
    let depth = super::cascade_sum::ceil_log2(chunks);
    let mut stack = vec![LaneMoments::ZERO; depth];
    for (i, chunk) in row[..whole].chunks(CHUNK).enumerate() {
        stack[0].merge(&LaneMoments::of_chunk(chunk));
        let (mut t, mut level) = (i + 1, 1);
        while level < depth && t % 2 == 0 {
            let lower = std::mem::replace(&mut stack[level - 1], LaneMoments::ZERO);
            stack[level].merge(&lower);
            t /= 2;
            level += 1;
        }
    }
    for level in 1..depth {
        let upper = stack[level];
        stack[0].merge(&upper);
    }
    let lanes = stack[0];
    // The tail, one element at a time (not fused).
    let (mut count, mut mean, mut m2) = (0usize, 0.0f32, 0.0f32);
    for &x in &row[whole..] {
        let d = x - mean;
        count += 1;
        mean += d / count as f32;
        m2 += d * (x - mean);
    }
    // Each lane stands for `vectors` elements.
    for l in 0..LANES {
        let total = count + vectors;
        let share = if total == 0 {
            0.0
        } else {
            vectors as f32 / total as f32
        };
        let delta = lanes.mean[l] - mean;
        mean = share.mul_add(delta, mean);
        m2 += ((delta * delta) * share).mul_add(count as f32, lanes.m2[l]);
        count = total;
    }
    (mean, m2 / row.len() as f32)
}
