//! Version 2 of chapter 18's chunked Gated DeltaNet: its products through the packed
//! GEMM, within a bound derived from the sizes of the listing.
//!
//! [`gated_delta_chunked`](ch18_linear_attention::chunked_delta::gated_delta_chunked),
//! fast: the same steps for each chunk, its products through the packed GEMM into buffers
//! allocated once.
//!
//! The listing makes a new tensor at every step of a chunk, and its UT transform sets the
//! entries of the triangular inverse one at a time through the tensor's indexing. Here the
//! chunk's eight matrix products (`K Kᵀ`, `T K̃`, `T Ṽ`, `W S`, `Q Kᵀ`, `Q̃ S`,
//! `inner · V_new`, and the state's update `K̂ᵀ V_new`) go to the packed GEMM, the forward
//! substitution runs on a plain `C × C` buffer, and every buffer is made once for the whole
//! sequence. The gates (`cumsum`, `exp`) are taken in float64 and rounded once, as the
//! listing takes them.
//!
//! Its factors are grouped differently (`β` applied to `K Kᵀ` rather than to `K` before the
//! product, the decays of the state's update multiplied in separately), so the outputs
//! agree with the listing's within a tolerance the tests derive, not bit for bit.

use shared::simd::Isa;
use shared::{Error, Result, Tensor};

use super::gemm_rows::Gemm;

/// The buffers of one chunk, `C` tokens of `d_k` key and `d_v` value features.
struct ChunkBuffers {
    /// `e^{G_i}` and `e^{G_last − G_i}` for the chunk's tokens.
    decay_in: Vec<f32>,
    decay_out: Vec<f32>,
    /// `exp(G_i − G_j)` for `j ≤ i`, 0 above the diagonal: `[C, C]`.
    decay: Vec<f32>,
    /// `K Kᵀ`, then the UT transform `T`: `[C, C]`.
    t: Vec<f32>,
    /// `Q Kᵀ ⊙ decay`: `[C, C]`.
    inner: Vec<f32>,
    /// `diag(β e^G) K`, then `diag(e^{G_last − G}) K`: `[C, d_k]`.
    k_scaled: Vec<f32>,
    /// `W = T diag(β e^G) K`: `[C, d_k]`.
    w: Vec<f32>,
    /// `diag(β) V`, then `U = T diag(β) V`, then `V_new = U − W S`: `[C, d_v]`.
    v_beta: Vec<f32>,
    u: Vec<f32>,
    /// `W S`, then `inner · V_new`: `[C, d_v]`.
    product: Vec<f32>,
    /// `diag(e^G) Q`: `[C, d_k]`.
    q_scaled: Vec<f32>,
    /// The state's increment `K̂ᵀ V_new`: `[d_k, d_v]`.
    increment: Vec<f32>,
    /// A row of `T` before its update: `[C]`.
    row: Vec<f32>,
}

impl ChunkBuffers {
    fn new(c: usize, d_k: usize, d_v: usize) -> ChunkBuffers {
        ChunkBuffers {
            decay_in: vec![0.0; c],
            decay_out: vec![0.0; c],
            decay: vec![0.0; c * c],
            t: vec![0.0; c * c],
            inner: vec![0.0; c * c],
            k_scaled: vec![0.0; c * d_k],
            w: vec![0.0; c * d_k],
            v_beta: vec![0.0; c * d_v],
            u: vec![0.0; c * d_v],
            product: vec![0.0; c * d_v],
            q_scaled: vec![0.0; c * d_k],
            increment: vec![0.0; d_k * d_v],
            row: vec![0.0; c],
        }
    }
}

/// Gated DeltaNet's outputs a chunk of `chunk` tokens at a time, as
/// [`gated_delta_chunked`](ch18_linear_attention::chunked_delta::gated_delta_chunked)
/// computes them.
///
/// # Shapes
/// `q`, `k`: `[T, d_k]` (unit-length rows), `v`: `[T, d_v]`, `log_alpha`, `beta`: `[T]`,
/// `chunk` ≥ 1. Returns `[T, d_v]`, or an error naming the shapes when they do not fit.
pub fn gated_delta_chunked_fast(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    log_alpha: &Tensor,
    beta: &Tensor,
    chunk: usize,
) -> Result<Tensor> {
    let fits = q.dim() == 2
        && k.sizes() == q.sizes()
        && v.dim() == 2
        && v.size(0) == q.size(0)
        && log_alpha.sizes() == [q.size(0)]
        && beta.sizes() == [q.size(0)]
        && chunk >= 1;
    if !fits {
        return Err(Error::InvalidArgument {
            op: "gated_delta_chunked_fast",
            detail: format!(
                "expected q and k of [T, d_k], v of [T, d_v], log_alpha and beta of [T] and \
                 chunk >= 1, got q {:?}, k {:?}, v {:?}, log_alpha {:?}, beta {:?} and \
                 chunk = {chunk}",
                q.sizes(),
                k.sizes(),
                v.sizes(),
                log_alpha.sizes(),
                beta.sizes()
            ),
        });
    }
    let [t, d_k] = q.dims();
    let d_v = v.size(1);
    let (q, k, v) = (q.to_vec(), k.to_vec(), v.to_vec());
    let (log_alpha, beta) = (log_alpha.to_vec(), beta.to_vec());
    let gemm = Gemm::new(Isa::detect());
    // The state, kept as Sᵀ, `[d_k, d_v]`, as the listing keeps it.
    let mut s = vec![0.0f32; d_k * d_v];
    let mut out = vec![0.0f32; t * d_v];
    let mut b = ChunkBuffers::new(chunk.min(t), d_k, d_v);
    for start in (0..t).step_by(chunk) {
        let c = chunk.min(t - start);
        let (qc, kc) = (&q[start * d_k..][..c * d_k], &k[start * d_k..][..c * d_k]);
        let (vc, bc) = (&v[start * d_v..][..c * d_v], &beta[start..][..c]);
        // G_i, the log of the decay from the chunk's start to token i, in float64.
        let mut total = 0.0f64;
        let g: Vec<f64> = log_alpha[start..][..c]
            .iter()
            .map(|&x| {
                total += f64::from(x);
                f64::from(total as f32)
            })
            .collect();
        let g_last = g[c - 1];
        for i in 0..c {
            b.decay_in[i] = g[i].exp() as f32;
            b.decay_out[i] = f64::from(g_last as f32 - g[i] as f32).exp() as f32;
            for j in 0..c {
                let d = f64::from(g[i] as f32 - g[j] as f32);
                b.decay[i * c + j] = if j <= i { d.exp() as f32 } else { 0.0 };
            }
        }
        let decay = &b.decay[..c * c];
        // T = (I + A)⁻¹ with A the strictly lower part of diag(β) K Kᵀ ⊙ decay.
        let t_inv = &mut b.t[..c * c];
        gemm.abt((kc, c, d_k), (kc, c), t_inv);
        for i in 0..c {
            for j in 0..c {
                let a = &mut t_inv[i * c + j];
                *a = if j < i {
                    -(bc[i] * *a * decay[i * c + j])
                } else {
                    0.0
                };
            }
        }
        for i in 1..c {
            // Row i gains its own entries times the rows above, already final.
            let (above, row) = t_inv.split_at_mut(i * c);
            let row = &mut row[..i];
            let old = &mut b.row[..i];
            old.copy_from_slice(row);
            for (m, &x) in old.iter().enumerate() {
                for (r, &y) in row.iter_mut().zip(&above[m * c..][..i]) {
                    *r += x * y;
                }
            }
        }
        for i in 0..c {
            t_inv[i * c + i] = 1.0;
        }
        // W = T diag(β e^G) K and U = T diag(β) V.
        scale_rows(&mut b.k_scaled, kc, d_k, c, |i| bc[i] * b.decay_in[i]);
        scale_rows(&mut b.v_beta, vc, d_v, c, |i| bc[i]);
        gemm.ab((t_inv, c, c), (&b.k_scaled, d_k), &mut b.w);
        gemm.ab((t_inv, c, c), (&b.v_beta, d_v), &mut b.u);
        // What each token writes once the state of the chunks before is read.
        gemm.ab((&b.w, c, d_k), (&s, d_v), &mut b.product);
        for (u, &ws) in b.u[..c * d_v].iter_mut().zip(&b.product) {
            *u -= ws;
        }
        let v_new = &b.u[..c * d_v];
        // The outputs: the state read with the decayed queries, and the chunk's own writes.
        let inner = &mut b.inner[..c * c];
        gemm.abt((qc, c, d_k), (kc, c), inner);
        for (x, &dec) in inner.iter_mut().zip(decay) {
            *x *= dec;
        }
        scale_rows(&mut b.q_scaled, qc, d_k, c, |i| b.decay_in[i]);
        let out_c = &mut out[start * d_v..][..c * d_v];
        gemm.ab((&b.q_scaled, c, d_k), (&s, d_v), out_c);
        gemm.ab((inner, c, c), (v_new, d_v), &mut b.product);
        for (o, &x) in out_c.iter_mut().zip(&b.product) {
            *o += x;
        }
        // The next state: S decayed to the chunk's end plus every write, decayed from its
        // token to the end.
        scale_rows(&mut b.k_scaled, kc, d_k, c, |i| b.decay_out[i]);
        gemm.atb((&b.k_scaled, c, d_k), (v_new, d_v), &mut b.increment);
        let state_decay = g_last.exp() as f32;
        for (x, &inc) in s.iter_mut().zip(&b.increment) {
            *x = state_decay * *x + inc;
        }
    }
    Ok(Tensor::from_vec(out, &[t, d_v]))
}

/// Row `i` of `rows` times `scale(i)`, into row `i` of `out`, for the first `count` rows of
/// `width` numbers.
fn scale_rows(
    out: &mut [f32],
    rows: &[f32],
    width: usize,
    count: usize,
    scale: impl Fn(usize) -> f32,
) {
    for (i, (row, from)) in out
        .chunks_exact_mut(width)
        .zip(rows.chunks_exact(width))
        .enumerate()
        .take(count)
    {
        let factor = scale(i);
        for (x, &y) in row.iter_mut().zip(from) {
            *x = y * factor;
        }
    }
}
