//! Version 2 of chapter 18's chunked linear attention: its products through the packed
//! GEMM, within a bound derived from the sizes of the listing.
//!
//! [`linear_chunked`](ch18_linear_attention::chunked::linear_chunked), fast: the same
//! products of each chunk, through the packed GEMM into buffers allocated once.
//!
//! A profile of the listing at `T = 2048` finds its time outside the arithmetic: every
//! product of a chunk is a small matrix product computed one output at a time, and every
//! step makes a new tensor (the split chunks, the mask, the weights, the state's
//! increments), which the memory allocator hands out and the operating system zeroes. Here
//! the feature map takes a float32 exponential, and each chunk's four products,
//! `φ(Q_c) φ(K_c)ᵀ`, `φ(Q_c) S`, `W V_c` and `φ(K_c)ᵀ V_c`, go to the packed GEMM (the same fused
//! chain in order of the inner dimension as the listing's matrix products) and land in
//! buffers made once for the whole sequence; the normaliser's sums are plain loops.
//!
//! The listing's matrix products and this GEMM add in the same order, but its sums
//! (`weights.sum_dim`, `kc.sum_dim`) and its matrix-vector product (`qc.matmul(&z)`) follow
//! PyTorch's orders and these do not, so the outputs agree within a tolerance the tests
//! derive, not bit for bit.

use shared::simd::Isa;
use shared::{Error, Result, Tensor};

use super::gemm_rows::Gemm;

/// Linear attention a chunk of `chunk` tokens at a time, as
/// [`linear_chunked`](ch18_linear_attention::chunked::linear_chunked) computes it.
///
/// # Shapes
/// `q`, `k`: `[T, d]`, `v`: `[T, d_v]`, `chunk` ≥ 1 (the last chunk may be shorter).
/// Returns `[T, d_v]`, or an error naming the shapes when they do not fit.
pub fn linear_chunked_fast(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    chunk: usize,
) -> Result<Tensor> {
    let fits = q.dim() == 2
        && k.sizes() == q.sizes()
        && v.dim() == 2
        && v.size(0) == q.size(0)
        && chunk >= 1;
    if !fits {
        return Err(Error::InvalidArgument {
            op: "linear_chunked_fast",
            detail: format!(
                "expected q and k of [T, d], v of [T, d_v] and chunk >= 1, got q {:?}, k {:?}, \
                 v {:?} and chunk = {chunk}",
                q.sizes(),
                k.sizes(),
                v.sizes()
            ),
        });
    }
    let [t, d] = q.dims();
    let d_v = v.size(1);
    let (fq, fk, v) = (
        feature_map(&q.to_vec()),
        feature_map(&k.to_vec()),
        v.to_vec(),
    );
    let gemm = Gemm::new(Isa::detect());
    // The state and normaliser, and one chunk's weights, products and increments.
    let (mut s, mut z) = (vec![0.0f32; d * d_v], vec![0.0f32; d]);
    let mut weights = vec![0.0f32; chunk * chunk];
    let mut inner = vec![0.0f32; chunk * d_v];
    let mut increment = vec![0.0f32; d * d_v];
    let mut out = vec![0.0f32; t * d_v];
    for start in (0..t).step_by(chunk) {
        let m = chunk.min(t - start);
        let qc = &fq[start * d..][..m * d];
        let kc = &fk[start * d..][..m * d];
        let vc = &v[start * d_v..][..m * d_v];
        let out_c = &mut out[start * d_v..][..m * d_v];
        // W = φ(Q_c) φ(K_c)ᵀ, the keys after each query zeroed (the causal mask).
        let w = &mut weights[..m * m];
        gemm.abt((qc, m, d), (kc, m), w);
        for (i, row) in w.chunks_exact_mut(m).enumerate() {
            row[i + 1..].fill(0.0);
        }
        // The numerator, the earlier chunks through the state plus this chunk's own keys.
        gemm.ab((qc, m, d), (&s, d_v), out_c);
        gemm.ab((w, m, m), (vc, d_v), &mut inner[..m * d_v]);
        for (o, x) in out_c.iter_mut().zip(&inner[..m * d_v]) {
            *o += x;
        }
        // The denominator: φ(q_i)·z plus the row's weights; each output row divided by it.
        for ((o_row, q_row), w_row) in out_c
            .chunks_exact_mut(d_v)
            .zip(qc.chunks_exact(d))
            .zip(w.chunks_exact(m))
        {
            let through_state: f32 = q_row.iter().zip(&z).map(|(a, b)| a * b).sum();
            let own: f32 = w_row.iter().sum();
            let denominator = through_state + own;
            for o in o_row.iter_mut() {
                *o /= denominator;
            }
        }
        // The chunk's keys and values join the state: S += φ(K_c)ᵀ V_c, z += Σ φ(k).
        gemm.atb((kc, m, d), (vc, d_v), &mut increment);
        for (s, x) in s.iter_mut().zip(&increment) {
            *s += x;
        }
        for row in kc.chunks_exact(d) {
            for (z, x) in z.iter_mut().zip(row) {
                *z += x;
            }
        }
    }
    Ok(Tensor::from_vec(out, &[t, d_v]))
}

/// [`elu_plus_one`](ch18_linear_attention::feature_map::elu_plus_one) without a float64
/// exponential per feature, which took most of the time once the products went to the GEMM:
/// `x + 1` above 0 (the listing's bits: the float64 sum of two float32 numbers is exact and
/// rounds to float32 as their float32 sum does), and `e^x = elu(x) + 1` at and below 0 by
/// the C library's float32 `exp`, within 1 ulp of the listing's.
///
/// # Shapes
/// Any length; unchanged.
fn feature_map(x: &[f32]) -> Vec<f32> {
    x.iter()
        .map(|&x| if x > 0.0 { x + 1.0 } else { x.exp() })
        .collect()
}
