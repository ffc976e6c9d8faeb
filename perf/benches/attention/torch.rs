//! PyTorch's side of the benchmarks (feature `tch`): libtorch 2.13.0's own CPU kernels,
//! called through tch in the same process, the same criterion groups and the same inputs
//! as the chapters' variants, so each table row is measured beside the others.
//!
//! - `torch_sdpa`: `F.scaled_dot_product_attention(q, k, v, is_causal=..)`, which on the
//!   CPU runs PyTorch's fused flash kernel;
//! - `torch_matmul_softmax`: the plain path of chapters 4, 5 and 7 written in PyTorch:
//!   `q @ kᵀ / √d`, `masked_fill` with the causal mask, `softmax`, `@ v`.
//!
//! The inputs are copied into libtorch tensors once, outside the timing; each iteration
//! then makes its output the way a PyTorch program would.

use std::hint::black_box;

use ch07_multihead_split::multihead::MultiHeadAttention;
use criterion::{BenchmarkGroup, BenchmarkId, measurement::WallTime};
use shared::Tensor;
use shared::backend::torch::to_tch;
use shared::tch::{self, Device, Kind};

use super::{D_MODEL, HEAD_DIM, HEADS};

/// Ours in a libtorch tensor on the CPU, same shape and values.
fn host(t: &Tensor) -> tch::Tensor {
    to_tch(t, Device::Cpu)
}

/// `F.scaled_dot_product_attention(q, k, v, is_causal=causal)`.
///
/// # Shapes
/// `q`, `k`, `v`: `[.., n, d]`. Returns `[.., n, d]`.
fn sdpa(
    q: &tch::Tensor,
    k: &tch::Tensor,
    v: &tch::Tensor,
    causal: bool,
) -> tch::Tensor {
    tch::Tensor::scaled_dot_product_attention(
        q,
        k,
        v,
        None::<tch::Tensor>,
        0.0,
        causal,
        None,
        false,
    )
}

/// `softmax(q @ kᵀ / √d, masked where `future`) @ v`, one PyTorch operation at a time.
///
/// # Shapes
/// `q`, `k`, `v`: `[.., n, d]`, `future`: `[n, n]` bool, true above the diagonal. Returns
/// `[.., n, d]`.
fn matmul_softmax(
    q: &tch::Tensor,
    k: &tch::Tensor,
    v: &tch::Tensor,
    future: Option<&tch::Tensor>,
) -> tch::Tensor {
    let d = *q.size().last().expect("q has a last dim") as f64;
    let scores = q.matmul(&k.transpose(-2, -1)) / d.sqrt();
    let scores = match future {
        Some(future) => scores.masked_fill(future, f64::NEG_INFINITY),
        None => scores,
    };
    scores.softmax(-1, None::<Kind>).matmul(v)
}

/// The causal mask as PyTorch code writes it: `torch.ones(n, n, dtype=torch.bool).triu(1)`.
///
/// # Shapes
/// Returns `[n, n]`.
fn future_mask(n: usize) -> tch::Tensor {
    tch::Tensor::ones([n as i64, n as i64], (Kind::Bool, Device::Cpu)).triu(1)
}

/// Adds `torch_sdpa` and `torch_matmul_softmax` at length `n` to a core group, on one of
/// libtorch's threads.
///
/// # Shapes
/// `q`, `k`, `v`: `[1, 12, n, 64]`.
pub fn cores(
    group: &mut BenchmarkGroup<'_, WallTime>,
    n: usize,
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    causal: bool,
) {
    tch::set_num_threads(1);
    let (q, k, v) = (host(q), host(k), host(v));
    let future = causal.then(|| future_mask(n));
    group.bench_function(BenchmarkId::new("torch_sdpa", n), |b| {
        b.iter(|| black_box(sdpa(&q, &k, &v, causal)))
    });
    group.bench_function(BenchmarkId::new("torch_matmul_softmax", n), |b| {
        b.iter(|| black_box(matmul_softmax(&q, &k, &v, future.as_ref())))
    });
}

/// Chapter 7's `MultiHeadAttention` with its weights in libtorch, as a PyTorch module
/// would run it: `F.linear` projections around either core.
struct TorchModule {
    w_query: tch::Tensor,
    w_key: tch::Tensor,
    w_value: tch::Tensor,
    w_out: tch::Tensor,
    b_out: Option<tch::Tensor>,
}

impl TorchModule {
    fn new(mha: &MultiHeadAttention) -> TorchModule {
        TorchModule {
            w_query: host(&mha.w_query.weight),
            w_key: host(&mha.w_key.weight),
            w_value: host(&mha.w_value.weight),
            w_out: host(&mha.out_proj.weight),
            b_out: mha.out_proj.bias.as_ref().map(host),
        }
    }

    /// The causal forward pass, with `F.scaled_dot_product_attention` as the core if
    /// `fused`, else the plain matmul and softmax.
    ///
    /// # Shapes
    /// `x`: `[b, n, 768]`, `future`: `[n, n]`. Returns `[b, n, 768]`.
    fn forward(
        &self,
        x: &tch::Tensor,
        future: &tch::Tensor,
        fused: bool,
    ) -> tch::Tensor {
        let (b, n) = (x.size()[0], x.size()[1]);
        let split = |w: &tch::Tensor| {
            x.linear(w, None::<tch::Tensor>)
                .view([b, n, HEADS as i64, HEAD_DIM as i64])
                .transpose(1, 2)
        };
        let (q, k, v) = (
            split(&self.w_query),
            split(&self.w_key),
            split(&self.w_value),
        );
        let context = if fused {
            sdpa(&q, &k, &v, true)
        } else {
            matmul_softmax(&q, &k, &v, Some(future))
        };
        context
            .transpose(1, 2)
            .contiguous()
            .view([b, n, D_MODEL as i64])
            .linear(&self.w_out, self.b_out.as_ref())
    }
}

/// Adds the module with either core, same weights as `mha`, to the `module` group, on one
/// of libtorch's threads, and the module with SDPA on two (`torch_sdpa_2t`).
///
/// # Shapes
/// `x`: `[1, n, 768]`.
pub fn module(
    group: &mut BenchmarkGroup<'_, WallTime>,
    n: usize,
    mha: &MultiHeadAttention,
    x: &Tensor,
) {
    tch::set_num_threads(1);
    let module = TorchModule::new(mha);
    let (x, future) = (host(x), future_mask(n));
    for (name, fused) in [("torch_sdpa", true), ("torch_matmul_softmax", false)] {
        group.bench_function(BenchmarkId::new(name, n), |b| {
            b.iter(|| black_box(module.forward(&x, &future, fused)))
        });
    }
    tch::set_num_threads(2);
    group.bench_function(BenchmarkId::new("torch_sdpa_2t", n), |b| {
        b.iter(|| black_box(module.forward(&x, &future, true)))
    });
    tch::set_num_threads(1);
}

/// Adds `torch_sdpa_1t` and `torch_sdpa_2t` (causal) to the `threads` group.
///
/// # Shapes
/// `q`, `k`, `v`: `[1, 12, n, 64]`.
pub fn threads(
    group: &mut BenchmarkGroup<'_, WallTime>,
    n: usize,
    (q, k, v): (&Tensor, &Tensor, &Tensor),
) {
    let (q, k, v) = (host(q), host(k), host(v));
    for threads in [1, 2] {
        tch::set_num_threads(threads);
        group.bench_function(
            BenchmarkId::new(format!("torch_sdpa_{threads}t"), n),
            |b| b.iter(|| black_box(sdpa(&q, &k, &v, true))),
        );
    }
    tch::set_num_threads(1);
}

/// Adds `torch_sdpa_1t` and `torch_sdpa_2t` to the `backward` group: SDPA's causal
/// forward and backward through autograd, as `out.backward(grad_out)` runs them, from leaf
/// tensors that require their gradients.
///
/// # Shapes
/// `q`, `k`, `v`, `grad_out`: `[1, 12, n, 64]`.
pub fn backward(
    group: &mut BenchmarkGroup<'_, WallTime>,
    n: usize,
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    grad_out: &Tensor,
) {
    let leaves = [q, k, v].map(|t| host(t).set_requires_grad(true));
    let grad_out = host(grad_out);
    for threads in [1, 2] {
        tch::set_num_threads(threads);
        group.bench_function(
            BenchmarkId::new(format!("torch_sdpa_{threads}t"), n),
            |b| {
                b.iter(|| {
                    let out = sdpa(&leaves[0], &leaves[1], &leaves[2], true);
                    let loss = (out * &grad_out).sum(Kind::Float);
                    black_box(tch::Tensor::run_backward(
                        &[loss],
                        &leaves,
                        false,
                        false,
                    ))
                })
            },
        );
    }
    tch::set_num_threads(1);
}
