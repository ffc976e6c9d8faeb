//! The attention variants of the chapters, timed on GPT-2 small's shapes (batch 1, 12
//! heads of 64 features, f32), one thread unless the group says otherwise:
//!
//! - `core_causal`: causal attention of given `q`, `k`, `v` `[1, 12, n, 64]`: chapter 5's
//!   masked softmax, chapter 7's `scaled_dot_product_attention`, chapter 9's kernel
//!   (through a `Tensor`, and on plain slices: the kernel alone);
//! - `core_full`: the same without the mask: chapter 2's loops (`n = 128` only), chapter
//!   4's matrix products, the kernel;
//! - `module`: the whole causal multi-head module with `d_model = 768`: chapter 6's
//!   wrapper, chapter 7's `MultiHeadAttention`, the same with the flash core, on one and on
//!   two threads;
//! - `threads`: the kernel on one and on two threads;
//! - `backward`: the causal forward (with its log-sum-exp) and backward pass, as a
//!   training step runs them, on one and on two threads.
//!
//! With the feature `tch` (libtorch 2.13.0, see `scripts/libtorch-env.sh`), the same
//! groups also time PyTorch's own kernels in the same run (`torch.rs`): `torch_sdpa`
//! (`F.scaled_dot_product_attention`) and `torch_matmul_softmax` (the plain path) in
//! `core_causal`, `core_full` and `module` (there also `torch_sdpa_2t`, on two threads),
//! and `torch_sdpa_1t`/`_2t` in `threads` and in `backward` (there SDPA's forward and
//! backward through libtorch's autograd).
//!
//! Our variants run in rayon pools of one or two threads pinned to cores
//! (`attention_perf::pinned`).
//!
//! `cargo bench -p attention-perf --bench attention -- core_causal` runs one group;
//! `CH09_BENCH_NS="1024 4096"` picks the lengths (default 128 512 1024 2048 4096).
//! `perf/scripts/bench-vs-torch.sh` runs it all with `tch` and prints the comparison.

use std::hint::black_box;
use std::time::Duration;

use ch02_dot_product::context::context_vector;
use ch02_dot_product::scores::attention_scores;
use ch04_trainable::scaled::scaled_attention_weights;
use ch05_causal::causal_mask;
use ch05_causal::masked_softmax::masked_softmax;
use ch06_multihead_wrapper::wrapper::MultiHeadAttentionWrapper;
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use ch09_flash_attention::backward::flash_attention_backward;
use ch09_flash_attention::core::{Flash, forward_with_core};
use ch09_flash_attention::kernel::{
    AttentionShape, Isa, flash_attention, flash_attention_lse, flash_attention_slices,
};
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput,
    criterion_group, criterion_main, measurement::WallTime,
};
use shared::{Device, Tensor, manual_seed, ones, randn, set_device, stack};
// Pools of one and two threads for the kernels, their threads pinned to cores.
use attention_perf::pinned::pool;

#[cfg(feature = "tch")]
mod torch;

const HEADS: usize = 12;
const HEAD_DIM: usize = 64;
const D_MODEL: usize = HEADS * HEAD_DIM;

/// The lengths to time: `CH09_BENCH_NS` or GPT-2's 128 to 4096.
fn lengths() -> Vec<usize> {
    std::env::var("CH09_BENCH_NS")
        .ok()
        .map(|s| {
            s.split_whitespace()
                .map(|n| n.parse().expect("CH09_BENCH_NS: lengths"))
                .collect()
        })
        .unwrap_or_else(|| vec![128, 512, 1024, 2048, 4096])
}

/// Few samples of flat size: one iteration of the slow variants takes seconds at n = 4096.
/// Each variant is measured for `CH09_BENCH_SECONDS` (default 3) after a sixth of that
/// of warm-up. Also puts the chapters' variants on our own CPU code, whatever
/// `SHARED_DEVICE` says.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    set_device(Device::Cpu);
    let seconds: f64 = std::env::var("CH09_BENCH_SECONDS")
        .ok()
        .map_or(3.0, |s| s.parse().expect("CH09_BENCH_SECONDS: seconds"));
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs_f64(seconds / 6.0))
        .measurement_time(Duration::from_secs_f64(seconds));
}

/// `q`, `k`, `v` of shape `[1, 12, n, 64]`, the same numbers for every variant.
fn qkv(n: usize) -> (Tensor, Tensor, Tensor) {
    manual_seed(0);
    let shape = [1, HEADS, n, HEAD_DIM];
    (randn(&shape), randn(&shape), randn(&shape))
}

/// The useful floating-point work of attention (`q·kᵀ` and `weights·v`): `4·n²·d` per head,
/// half of it under the causal mask.
fn flops(n: usize, causal: bool) -> u64 {
    let full = 4 * HEADS * n * n * HEAD_DIM;
    (if causal { full / 2 } else { full }) as u64
}

/// Times `f` as variant `name` at length `n`, inside `threads` (a pool of one thread for
/// most variants).
fn bench_one(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    n: usize,
    threads: &rayon::ThreadPool,
    f: impl Fn() -> Tensor + Sync,
) {
    group.bench_function(BenchmarkId::new(name, n), |b| {
        threads.install(|| b.iter(|| black_box(f())))
    });
}

fn core_causal(c: &mut Criterion) {
    let one = pool(1);
    let mut group = c.benchmark_group("core_causal");
    configure(&mut group);
    for n in lengths() {
        let (q, k, v) = qkv(n);
        group.throughput(Throughput::Elements(flops(n, true)));
        let future = causal_mask(n); // chapter 5: true above the diagonal
        bench_one(&mut group, "ch05_masked_softmax", n, &one, || {
            masked_softmax(&q.matmul(&k.transpose(-2, -1)), &future, HEAD_DIM)
                .matmul(&v)
        });
        let visible = ones(&[n, n]).tril(0).bool(); // chapter 7: true where visible
        bench_one(&mut group, "ch07_sdpa", n, &one, || {
            scaled_dot_product_attention(&q, &k, &v, Some(&visible)).0
        });
        bench_one(&mut group, "ch09_flash", n, &one, || {
            flash_attention(&q, &k, &v, true)
        });
        let (qs, ks, vs) = (q.to_vec(), k.to_vec(), v.to_vec());
        let shape = AttentionShape {
            heads: HEADS,
            queries: n,
            keys: n,
            d: HEAD_DIM,
            d_v: HEAD_DIM,
        };
        group.bench_function(BenchmarkId::new("ch09_flash_slices", n), |b| {
            one.install(|| {
                b.iter(|| {
                    black_box(flash_attention_slices(
                        Isa::detect(),
                        &qs,
                        &ks,
                        &vs,
                        shape,
                        true,
                    ))
                })
            })
        });
        #[cfg(feature = "tch")]
        torch::cores(&mut group, n, (&q, &k, &v), true);
    }
    group.finish();
}

fn core_full(c: &mut Criterion) {
    let one = pool(1);
    let mut group = c.benchmark_group("core_full");
    configure(&mut group);
    for n in lengths() {
        let (q, k, v) = qkv(n);
        group.throughput(Throughput::Elements(flops(n, false)));
        if n <= 128 {
            // Chapter 2: one dot product at a time, per head and query (unscaled scores).
            bench_one(&mut group, "ch02_loops", n, &one, || {
                let heads: Vec<Tensor> = (0..HEADS as i64)
                    .map(|h| {
                        let (q, k, v) =
                            (q.get(0).get(h), k.get(0).get(h), v.get(0).get(h));
                        let rows: Vec<Tensor> = q
                            .iter()
                            .map(|query| {
                                context_vector(
                                    &attention_scores(&query, &k).softmax(0),
                                    &v,
                                )
                            })
                            .collect();
                        stack(&rows, 0)
                    })
                    .collect();
                stack(&heads, 0).unsqueeze(0)
            });
        }
        bench_one(&mut group, "ch04_matmul", n, &one, || {
            scaled_attention_weights(&q.matmul(&k.transpose(-2, -1)), HEAD_DIM)
                .matmul(&v)
        });
        bench_one(&mut group, "ch09_flash", n, &one, || {
            flash_attention(&q, &k, &v, false)
        });
        #[cfg(feature = "tch")]
        torch::cores(&mut group, n, (&q, &k, &v), false);
    }
    group.finish();
}

fn module(c: &mut Criterion) {
    let (one, two) = (pool(1), pool(2));
    let mut group = c.benchmark_group("module");
    configure(&mut group);
    for n in lengths() {
        manual_seed(0);
        let x = randn(&[1, n, D_MODEL]);
        group.throughput(Throughput::Elements(flops(n, true)));
        let wrapper =
            MultiHeadAttentionWrapper::new(D_MODEL, HEAD_DIM, n, 0.0, HEADS, false);
        bench_one(&mut group, "ch06_wrapper", n, &one, || wrapper.forward(&x));
        let mha = MultiHeadAttention::new(D_MODEL, D_MODEL, n, 0.0, HEADS, false);
        bench_one(&mut group, "ch07_split", n, &one, || mha.forward(&x));
        bench_one(&mut group, "ch09_flash", n, &one, || {
            forward_with_core(&mha, &x, &Flash)
        });
        // The same inside a pool of two threads: the flash core shares out its heads and
        // blocks of queries, and the projections' matrix products their rows.
        bench_one(&mut group, "ch09_flash_2t", n, &two, || {
            forward_with_core(&mha, &x, &Flash)
        });
        #[cfg(feature = "tch")]
        torch::module(&mut group, n, &mha, &x);
    }
    group.finish();
}

fn threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("threads");
    configure(&mut group);
    for n in lengths() {
        let (q, k, v) = qkv(n);
        group.throughput(Throughput::Elements(flops(n, true)));
        for threads in [1, 2] {
            let pool = pool(threads);
            group.bench_function(
                BenchmarkId::new(format!("ch09_flash_{threads}t"), n),
                |b| {
                    pool.install(|| {
                        b.iter(|| black_box(flash_attention(&q, &k, &v, true)))
                    })
                },
            );
        }
        #[cfg(feature = "tch")]
        torch::threads(&mut group, n, (&q, &k, &v));
    }
    group.finish();
}

fn backward(c: &mut Criterion) {
    let mut group = c.benchmark_group("backward");
    configure(&mut group);
    for n in lengths() {
        let (q, k, v) = qkv(n);
        let grad_out = randn(q.sizes());
        // The forward's two products and the backward's five.
        group.throughput(Throughput::Elements(flops(n, true) * 7 / 2));
        for threads in [1, 2] {
            let pool = pool(threads);
            group.bench_function(
                BenchmarkId::new(format!("ch09_flash_{threads}t"), n),
                |b| {
                    pool.install(|| {
                        b.iter(|| {
                            let (out, lse) = flash_attention_lse(&q, &k, &v, true);
                            let qkv = (&q, &k, &v);
                            black_box(flash_attention_backward(
                                qkv,
                                (&out, &lse),
                                &grad_out,
                                true,
                            ))
                        })
                    })
                },
            );
        }
        #[cfg(feature = "tch")]
        torch::backward(&mut group, n, (&q, &k, &v), &grad_out);
    }
    group.finish();
}

criterion_group!(benches, core_causal, core_full, module, threads, backward);
criterion_main!(benches);
