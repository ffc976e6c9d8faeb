//! PyTorch's side of the window (feature `tch`): libtorch 2.13.0's CPU kernels through tch,
//! in the same process and the same criterion groups, on the same inputs:
//!
//! - `torch_sdpa_mask`: `F.scaled_dot_product_attention(q, k, v, attn_mask=visible)` with
//!   the causal window as an `[n, n]` boolean mask, true where a key is seen: what PyTorch
//!   code without FlexAttention's compiler writes;
//! - `torch_formula`: the chapter's formula in PyTorch operations, `q @ kᵀ · scale`,
//!   `masked_fill` of the hidden keys with `-inf`, `softmax`, `@ v`.
//!
//! The inputs and the mask are copied into libtorch tensors once, outside the timing.

use std::hint::black_box;

use criterion::{BenchmarkGroup, BenchmarkId, measurement::WallTime};
use shared::Tensor;
use shared::backend::torch::to_tch;
use shared::tch::{self, Device, Kind};

/// The causal window as PyTorch code writes it, true where query `i` sees key `j`
/// (`0 ≤ i - j < window`): `i[:, None] - j[None, :]` compared twice.
///
/// # Shapes
/// Returns `[n, n]`.
fn visible(n: usize, window: usize) -> tch::Tensor {
    let i = tch::Tensor::arange(n as i64, (Kind::Int64, Device::Cpu));
    let distance = i.unsqueeze(1) - i.unsqueeze(0);
    distance.ge(0).logical_and(&distance.lt(window as i64))
}

/// `F.scaled_dot_product_attention(q, k, v, attn_mask=visible)`.
///
/// # Shapes
/// `q`, `k`, `v`: `[.., n, d]`, `visible`: `[n, n]` bool. Returns `[.., n, d]`.
fn sdpa_mask(
    q: &tch::Tensor,
    k: &tch::Tensor,
    v: &tch::Tensor,
    visible: &tch::Tensor,
) -> tch::Tensor {
    tch::Tensor::scaled_dot_product_attention(
        q,
        k,
        v,
        Some(visible),
        0.0,
        false,
        None,
        false,
    )
}

/// `softmax((q @ kᵀ · scale).masked_fill(~visible, -inf)) @ v`, one operation at a time.
///
/// # Shapes
/// `q`, `k`, `v`: `[.., n, d]`, `hidden`: `[n, n]` bool, true where a key is hidden.
/// Returns `[.., n, d]`.
fn formula(
    q: &tch::Tensor,
    k: &tch::Tensor,
    v: &tch::Tensor,
    hidden: &tch::Tensor,
) -> tch::Tensor {
    let d = *q.size().last().expect("q has a last dim") as f64;
    let scores = q.matmul(&k.transpose(-2, -1)) * (1.0 / d.sqrt());
    scores
        .masked_fill(hidden, f64::NEG_INFINITY)
        .softmax(-1, None::<Kind>)
        .matmul(v)
}

/// Adds `torch_sdpa_mask` and `torch_formula` at length `n`, on one of libtorch's threads.
///
/// # Shapes
/// `q`, `k`, `v`: `[1, heads, n, 64]`.
pub fn window(
    group: &mut BenchmarkGroup<'_, WallTime>,
    n: usize,
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    window: usize,
) {
    tch::set_num_threads(1);
    let [q, k, v] = [q, k, v].map(|t| to_tch(t, Device::Cpu));
    let visible = visible(n, window);
    let hidden = visible.logical_not();
    group.bench_function(BenchmarkId::new("torch_sdpa_mask", n), |b| {
        b.iter(|| black_box(sdpa_mask(&q, &k, &v, &visible)))
    });
    group.bench_function(BenchmarkId::new("torch_formula", n), |b| {
        b.iter(|| black_box(formula(&q, &k, &v, &hidden)))
    });
}

/// Adds `torch_sdpa_mask_1t` and `torch_sdpa_mask_2t` at length `n`.
///
/// # Shapes
/// `q`, `k`, `v`: `[1, heads, n, 64]`.
pub fn threads(
    group: &mut BenchmarkGroup<'_, WallTime>,
    n: usize,
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    window: usize,
) {
    let [q, k, v] = [q, k, v].map(|t| to_tch(t, Device::Cpu));
    let visible = visible(n, window);
    for threads in [1, 2] {
        tch::set_num_threads(threads);
        let name = format!("torch_sdpa_mask_{threads}t");
        group.bench_function(BenchmarkId::new(name, n), |b| {
            b.iter(|| black_box(sdpa_mask(&q, &k, &v, &visible)))
        });
    }
    tch::set_num_threads(1);
}
