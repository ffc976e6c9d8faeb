//! The cost of FlexAttention's kernel (the fastest, `flex_kernel_fused`, unless a variant
//! says otherwise), on batch 1, [`HEADS`] heads of 64 features, f32,
//! one thread unless the group says otherwise, tiles of 128 (the default `BLOCK_SIZE` of
//! PyTorch's `create_block_mask`):
//!
//! - `flex_window`: the kernel with a causal sliding window of 256 keys, over `n`: the
//!   block mask keeps about `n · 3 / 128` tiles, so the time should grow as `n · w`, not
//!   `n²`;
//! - `flex_documents`: the kernel with the document mask at one length
//!   (`CH16_DOC_N`, default 4096) cut into 1, 2, 4, 8, 16 equal documents (the id is the
//!   number of documents): the work is `Σ Lᵢ²/2`;
//! - `flex_causal`: the kernel with the plain causal mask against chapter 9's flash kernel,
//!   causal: what the generality costs; `ch16_flex_exact` is `flex_kernel_fast`, bit for
//!   bit the listing, for comparison;
//! - `flex_vs_torch`: the window again, by the kernel and by the chapter's formula
//!   (`flex_attention`, every score materialised), at lengths the `n × n` scores fit;
//! - `flex_threads`: the kernel with the window inside a pool of one and of two threads.
//!   The kernel is a plain loop over heads and tiles, with no parallelism of its own: the
//!   second thread has nothing to do, which the group shows.
//!
//! With the feature `tch` (libtorch 2.13.0, see `scripts/libtorch-env.sh`), `flex_vs_torch`
//! also times `F.scaled_dot_product_attention` with the window as an explicit boolean mask
//! (`torch_sdpa_mask`) and the formula in PyTorch operations (`torch_formula`), and
//! `flex_threads` SDPA with the mask on one and on two threads (`torch.rs`).
//!
//! `CH16_BENCH_NS`, `CH16_CAUSAL_NS`, `CH16_TORCH_NS` pick the lengths of the groups
//! (defaults 1024 to 32768; 1024 4096; 1024 2048 4096), `PART4_BENCH_SECONDS` the
//! measuring time of a variant (default 3). `perf/scripts/bench-part4.sh` runs it all and
//! prints the tables.

use std::hint::black_box;

use ch09_flash_attention::kernel::flash_attention;
use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::formula::flex_attention;
use ch16_flex_attention::kv_rows::InTensors;
use ch16_flex_attention::recipes::{
    MaskMod, causal, causal_window, document_mask, unchanged,
};
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group,
    criterion_main, measurement::WallTime,
};
use shared::{Tensor, manual_seed, randn};

use attention_perf::flex::v2_same_bits::flex_kernel_fast;
use attention_perf::flex::v3_fused::flex_kernel_fused;
// Pools of one and two threads pinned to cores, lengths from the environment and criterion's
// settings, as chapter 9's and 18's benchmarks.
use attention_perf::pinned::pool;
use attention_perf::settings::{configure, env_list};
#[cfg(feature = "tch")]
mod torch;

/// Query (and key/value) heads.
const HEADS: usize = 2;
const HEAD_DIM: usize = 64;
/// The sliding window: each query sees itself and the 255 keys before it.
const WINDOW: usize = 256;
/// Queries and keys per tile, PyTorch's default `BLOCK_SIZE`.
const TILE: usize = 128;

/// `q`, `k`, `v` of shape `[1, HEADS, n, 64]`, the same numbers for every variant.
fn qkv(n: usize) -> (Tensor, Tensor, Tensor) {
    manual_seed(0);
    let shape = [1, HEADS, n, HEAD_DIM];
    (randn(&shape), randn(&shape), randn(&shape))
}

/// Times the fastest kernel, [`flex_kernel_fused`], with `mask_mod` as variant `name`
/// with id `id`, inside `threads`; the block mask is made once, outside the timing
/// (PyTorch's too is made ahead of the call).
fn bench_kernel(
    group: &mut BenchmarkGroup<'_, WallTime>,
    (name, id): (&str, usize),
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    mask_mod: impl MaskMod + Clone + Sync,
    threads: &rayon::ThreadPool,
) {
    let n = q.size(2);
    let block_mask =
        BlockMask::new(mask_mod.clone(), 1, 1, n, n, TILE).expect("a block mask");
    group.bench_function(BenchmarkId::new(name, id), |b| {
        threads.install(|| {
            b.iter(|| {
                let kv = InTensors::new(k, v).expect("keys and values");
                black_box(flex_kernel_fused(
                    q,
                    &kv,
                    &block_mask,
                    unchanged,
                    mask_mod.clone(),
                ))
                .expect("flex_kernel_fused")
            })
        })
    });
}

/// Times [`flex_kernel_fast`], bit for bit the listing, with the causal mask as variant
/// `ch16_flex_exact`: what the fused kernel's roundings gain.
fn bench_exact_causal(
    group: &mut BenchmarkGroup<'_, WallTime>,
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    threads: &rayon::ThreadPool,
) {
    let n = q.size(2);
    let block_mask = BlockMask::new(causal, 1, 1, n, n, TILE).expect("a block mask");
    let kv = InTensors::new(k, v).expect("keys and values");
    group.bench_function(BenchmarkId::new("ch16_flex_exact", n), |b| {
        threads.install(|| {
            b.iter(|| {
                black_box(flex_kernel_fast(q, &kv, &block_mask, unchanged, causal))
                    .expect("flex_kernel_fast")
            })
        })
    });
}

fn flex_window(c: &mut Criterion) {
    let one = pool(1);
    let mut group = c.benchmark_group("flex_window");
    configure(&mut group);
    for n in env_list("CH16_BENCH_NS", &[1024, 2048, 4096, 8192, 16384, 32768]) {
        let (q, k, v) = qkv(n);
        // The visible pairs: n·w less the triangle at the start.
        let visible = n * WINDOW - WINDOW * (WINDOW - 1) / 2;
        group.throughput(Throughput::Elements((HEADS * visible.min(n * n)) as u64));
        let qkv = (&q, &k, &v);
        bench_kernel(
            &mut group,
            ("ch16_flex", n),
            qkv,
            causal_window(WINDOW),
            &one,
        );
    }
    group.finish();
}

fn flex_documents(c: &mut Criterion) {
    let one = pool(1);
    let mut group = c.benchmark_group("flex_documents");
    configure(&mut group);
    let n = env_list("CH16_DOC_N", &[4096])[0];
    let (q, k, v) = qkv(n);
    for documents in [1, 2, 4, 8, 16] {
        let lengths = vec![n / documents; documents];
        let mask = document_mask(&lengths);
        bench_kernel(
            &mut group,
            ("ch16_flex", documents),
            (&q, &k, &v),
            mask,
            &one,
        );
    }
    group.finish();
}

fn flex_causal(c: &mut Criterion) {
    let one = pool(1);
    let mut group = c.benchmark_group("flex_causal");
    configure(&mut group);
    for n in env_list("CH16_CAUSAL_NS", &[1024, 4096]) {
        let (q, k, v) = qkv(n);
        bench_kernel(&mut group, ("ch16_flex", n), (&q, &k, &v), causal, &one);
        bench_exact_causal(&mut group, (&q, &k, &v), &one);
        group.bench_function(BenchmarkId::new("ch09_flash", n), |b| {
            one.install(|| b.iter(|| black_box(flash_attention(&q, &k, &v, true))))
        });
    }
    group.finish();
}

fn flex_vs_torch(c: &mut Criterion) {
    let one = pool(1);
    let mut group = c.benchmark_group("flex_vs_torch");
    configure(&mut group);
    for n in env_list("CH16_TORCH_NS", &[1024, 2048, 4096]) {
        let (q, k, v) = qkv(n);
        let window = causal_window(WINDOW);
        bench_kernel(&mut group, ("ch16_flex", n), (&q, &k, &v), window, &one);
        group.bench_function(BenchmarkId::new("ch16_formula", n), |b| {
            one.install(|| {
                b.iter(|| black_box(flex_attention(&q, &k, &v, unchanged, window)))
            })
        });
        #[cfg(feature = "tch")]
        torch::window(&mut group, n, (&q, &k, &v), WINDOW);
    }
    group.finish();
}

fn flex_threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("flex_threads");
    configure(&mut group);
    for n in env_list("CH16_TORCH_NS", &[1024, 2048, 4096]) {
        let (q, k, v) = qkv(n);
        for threads in [1, 2] {
            let name = format!("ch16_flex_{threads}t");
            let window = causal_window(WINDOW);
            bench_kernel(
                &mut group,
                (&name, n),
                (&q, &k, &v),
                window,
                &pool(threads),
            );
        }
        #[cfg(feature = "tch")]
        torch::threads(&mut group, n, (&q, &k, &v), WINDOW);
    }
    group.finish();
}

criterion_group!(
    benches,
    flex_window,
    flex_documents,
    flex_causal,
    flex_vs_torch,
    flex_threads
);
criterion_main!(benches);
