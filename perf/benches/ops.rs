//! Criterion benchmarks of the two operations attention spends its time in: `matmul`
//! (square 2-D matrices, the projections of a multi-head module, and the batched shapes of
//! attention: scores `Q·Kᵀ` and the weighted sum `A·V` for 12 heads of size 64) and
//! `softmax` over the last dim.
//!
//! `cargo bench -p attention-perf --bench ops`; `perf/scripts/bench-matmul-vs-torch.sh`
//! runs the 1024² case and the module's products next to PyTorch's and prints the
//! throughput ratios.

use criterion::{
    BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
};
use shared::{manual_seed, randn};
use std::hint::black_box;

fn matmul_2d(c: &mut Criterion) {
    let mut group = c.benchmark_group("matmul_2d");
    for n in [64usize, 128, 256, 512, 1024] {
        manual_seed(0);
        let a = randn(&[n, n]);
        let b = randn(&[n, n]);
        group.throughput(Throughput::Elements((2 * n * n * n) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |bench, _| {
            bench.iter(|| black_box(a.matmul(&b)))
        });
    }
    group.finish();
}

/// The products of a multi-head attention module with GPT-2 small's width (`d_model` 768):
/// `x·Wᵀ` as `nn.Linear` computes it, for the output projection (`[768, 768]`) and the
/// three input projections at once (`[2304, 768]`), over 1024 and 4096 tokens.
fn matmul_module(c: &mut Criterion) {
    let mut group = c.benchmark_group("matmul_module");
    group.sample_size(10);
    for (n, out) in [
        (1024usize, 768usize),
        (1024, 2304),
        (4096, 768),
        (4096, 2304),
    ] {
        manual_seed(0);
        let x = randn(&[n, 768]);
        let w = randn(&[out, 768]);
        group.throughput(Throughput::Elements((2 * n * 768 * out) as u64));
        group
            .bench_function(BenchmarkId::new(format!("{n}x768_{out}"), n), |bench| {
                bench.iter(|| black_box(x.matmul(&w.t())))
            });
    }
    group.finish();
}

fn matmul_attention(c: &mut Criterion) {
    let mut group = c.benchmark_group("matmul_attention");
    let (heads, d) = (12usize, 64usize);
    for n in [128usize, 256, 512] {
        manual_seed(0);
        let q = randn(&[1, heads, n, d]);
        let k = randn(&[1, heads, n, d]);
        let weights = randn(&[1, heads, n, n]);
        group.throughput(Throughput::Elements((2 * heads * n * n * d) as u64));
        group.bench_with_input(BenchmarkId::new("scores_q_kt", n), &n, |bench, _| {
            bench.iter(|| black_box(q.matmul(&k.transpose(-2, -1))))
        });
        group.bench_with_input(BenchmarkId::new("weights_v", n), &n, |bench, _| {
            bench.iter(|| black_box(weights.matmul(&k)))
        });
    }
    group.finish();
}

fn softmax(c: &mut Criterion) {
    let mut group = c.benchmark_group("softmax");
    for n in [128usize, 512, 1024] {
        manual_seed(0);
        let scores = randn(&[12, n, n]);
        group.throughput(Throughput::Elements((12 * n * n) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |bench, _| {
            bench.iter(|| black_box(scores.softmax(-1)))
        });
    }
    group.finish();
}

criterion_group!(benches, matmul_2d, matmul_module, matmul_attention, softmax);
criterion_main!(benches);
