//! Criterion benchmarks of the two operations attention spends its time in: `matmul`
//! (square 2-D matrices, and the batched shapes of attention: scores `Q·Kᵀ` and the
//! weighted sum `A·V` for 12 heads of size 64) and `softmax` over the last dim.
//!
//! `cargo bench -p shared --bench ops`; `scripts/bench-matmul-vs-torch.sh` runs the
//! 1024² case next to PyTorch's `torch.matmul` and prints the throughput ratio.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
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

criterion_group!(benches, matmul_2d, matmul_attention, softmax);
criterion_main!(benches);
