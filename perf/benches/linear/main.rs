//! The cost of the chapter's ways out of the `T × T` matrix, on one head of 64 features,
//! f32, one thread:
//!
//! - `linear`: causal linear attention in its three forms (`linear_parallel`, which
//!   builds the `T × T` weights; `linear_recurrent`, a token at a time; the chunked form,
//!   chunks of [`CHUNK`], as `linear_chunked_fast` and as the listing `linear_chunked`)
//!   against chapter 9's causal flash kernel (`flash_attention`, softmax attention without
//!   the `T × T` matrix), over `T`;
//! - `dsa`: DeepSeek Sparse Attention as the chapter writes it (`index_scores`,
//!   `top_k_kept` with `k` = [`TOP_K`], `sparse_attention`), the last step alone given the
//!   kept keys, the chapter's block selection (`top_k_tiles_kept`, whole tiles of [`TILE`]
//!   keys, as many keys in all, and `sparse_attention_tiled_fast`, chapter 16's kernel,
//!   version 2, over the kept tiles), and dense causal softmax attention by chapter 9's
//!   flash kernel;
//! - `dsa_long`: `dsa_kernel_fast`, DSA a tile of queries at a time with no `T × T` matrix,
//!   for [`LONG_HEADS`] query heads over one key and value per token (MLA's absorbed form,
//!   as DeepSeek-V3.2 runs it), against dense causal attention of the same heads by chapter
//!   9's kernel, and the listing `dsa_kernel` it is tested against, at the lengths of
//!   `CH18_DSA_LISTING_NS` (default 4096 and 8192: it takes seconds a call beyond);
//! - `gdn`: Gated DeltaNet over `T`, a chunk of [`CHUNK`] at a time
//!   (`gated_delta_chunked_fast`, and the listing `gated_delta_chunked`) and token by token
//!   (`gated_delta_recurrent`), one head of [`HEAD_DIM`] (`CH18_GDN_NS`, default 256 to
//!   4096).
//!
//! `CH18_BENCH_NS`, `CH18_PARALLEL_MAX`, `CH18_DSA_NS`, `CH18_DSA_LONG_NS`,
//! `CH18_DSA_LISTING_NS` pick the lengths (defaults 256 to 16384; the parallel form up to
//! 8192, its weights take `4·T²` bytes; 4096 and 8192 for `dsa`: the chapter's DSA computes
//! every index score and every main score before masking, a call takes tens of seconds at
//! `T = 16384`, and `T = 32768` would need tens of GiB; 4096 to 32768 for `dsa_long`),
//! `PART4_BENCH_SECONDS` the measuring time of a variant (default 3).
//! `perf/scripts/bench-part4.sh` runs it all and prints the tables.

use std::hint::black_box;

use ch09_flash_attention::kernel::flash_attention;
use ch15_modern_layer::gate::sigmoid;
use ch18_linear_attention::chunked::linear_chunked;
use ch18_linear_attention::chunked_delta::gated_delta_chunked;
use ch18_linear_attention::gated_delta::gated_delta_recurrent;
use ch18_linear_attention::gates::{exp, l2_normalize, log_sigmoid};
use ch18_linear_attention::parallel::linear_parallel;
use ch18_linear_attention::recurrent::linear_recurrent;
use ch18_linear_attention::sparse::{
    index_scores, sparse_attention, top_k_kept, top_k_tiles_kept,
};
use ch18_linear_attention::sparse_kernel::{Indexer, dsa_kernel};
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main,
    measurement::WallTime,
};
use shared::{Tensor, manual_seed, randn};

use attention_perf::dsa::v2_in_place::dsa_kernel_fast;
use attention_perf::dsa::v2_tiled_same_bits::sparse_attention_tiled_fast;
use attention_perf::linear::v2_chunked_delta_gemm::gated_delta_chunked_fast;
use attention_perf::linear::v2_chunked_gemm::linear_chunked_fast;
// A pool of one thread pinned to a core, lengths from the environment and criterion's
// settings, as chapter 9's and 16's benchmarks.
use attention_perf::pinned::pool;
use attention_perf::settings::{configure, env_list};

const HEAD_DIM: usize = 64;
/// Tokens per chunk of the chunked form.
const CHUNK: usize = 64;
/// Keys each query keeps, as in DeepSeek-V3.2.
const TOP_K: usize = 2048;
/// Keys per tile of the block selection, and the tiles each tile of queries keeps: as many
/// keys as [`TOP_K`].
const TILE: usize = 128;
const TOP_TILES: usize = TOP_K / TILE;
/// The indexer's heads and their features (DeepSeek-V3.2's 64 of 128, scaled down).
const INDEX_HEADS: usize = 4;
const D_INDEX: usize = 32;
/// The query heads of `dsa_long`, which share each token's key and value and the indexer's
/// choice of keys.
const LONG_HEADS: usize = 8;
/// Queries the indexer scores at a time in `dsa_kernel`.
const QUERY_TILE: usize = 64;

/// `q`, `k`, `v` of shape `[T, 64]`, the same numbers for every variant.
fn qkv(t: usize) -> (Tensor, Tensor, Tensor) {
    manual_seed(0);
    let shape = [t, HEAD_DIM];
    (randn(&shape), randn(&shape), randn(&shape))
}

/// Times `f` as variant `name` at length `t` on one pinned thread.
fn bench_one(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    t: usize,
    one: &rayon::ThreadPool,
    f: impl Fn() -> Tensor + Sync,
) {
    group.bench_function(BenchmarkId::new(name, t), |b| {
        one.install(|| b.iter(|| black_box(f())))
    });
}

/// `[T, d]` as one head of one batch, `[1, 1, T, d]`, for chapter 9's kernel.
fn one_head(x: &Tensor) -> Tensor {
    x.unsqueeze(0).unsqueeze(0)
}

fn linear(c: &mut Criterion) {
    let one = pool(1);
    let mut group = c.benchmark_group("linear");
    configure(&mut group);
    let parallel_max = env_list("CH18_PARALLEL_MAX", &[8192])[0];
    for t in env_list("CH18_BENCH_NS", &[256, 512, 1024, 2048, 4096, 8192, 16384]) {
        let (q, k, v) = qkv(t);
        if t <= parallel_max {
            bench_one(&mut group, "ch18_parallel", t, &one, || {
                linear_parallel(&q, &k, &v)
            });
        }
        bench_one(&mut group, "ch18_recurrent", t, &one, || {
            linear_recurrent(&q, &k, &v)
        });
        bench_one(&mut group, "ch18_chunked", t, &one, || {
            linear_chunked_fast(&q, &k, &v, CHUNK).unwrap()
        });
        bench_one(&mut group, "ch18_chunked_listing", t, &one, || {
            linear_chunked(&q, &k, &v, CHUNK)
        });
        let (q4, k4, v4) = (one_head(&q), one_head(&k), one_head(&v));
        bench_one(&mut group, "ch09_flash", t, &one, || {
            flash_attention(&q4, &k4, &v4, true)
        });
    }
    group.finish();
}

fn dsa(c: &mut Criterion) {
    let one = pool(1);
    let mut group = c.benchmark_group("dsa");
    configure(&mut group);
    for t in env_list("CH18_DSA_NS", &[4096, 8192]) {
        let (q, k, v) = qkv(t);
        let q_index = randn(&[t, INDEX_HEADS, D_INDEX]);
        let k_index = randn(&[t, D_INDEX]);
        let w_index = randn(&[t, INDEX_HEADS]);
        bench_one(&mut group, "ch18_dsa", t, &one, || {
            let kept = top_k_kept(&index_scores(&q_index, &k_index, &w_index), TOP_K);
            sparse_attention(&q, &k, &v, &kept)
        });
        let kept = top_k_kept(&index_scores(&q_index, &k_index, &w_index), TOP_K);
        bench_one(&mut group, "ch18_sparse_attention", t, &one, || {
            sparse_attention(&q, &k, &v, &kept)
        });
        drop(kept);
        // Block selection: whole tiles of keys chosen by their best index score, and
        // chapter 16's kernel, which skips the tiles no query of a tile keeps.
        bench_one(&mut group, "ch18_dsa_tiles", t, &one, || {
            let scores = index_scores(&q_index, &k_index, &w_index);
            let kept = top_k_tiles_kept(&scores, TILE, TOP_TILES);
            let tiled = sparse_attention_tiled_fast(&q, &k, &v, &kept, TILE);
            tiled.expect("sparse_attention_tiled_fast").0
        });
        let (q4, k4, v4) = (one_head(&q), one_head(&k), one_head(&v));
        bench_one(&mut group, "ch09_flash", t, &one, || {
            flash_attention(&q4, &k4, &v4, true)
        });
    }
    group.finish();
}

fn dsa_long(c: &mut Criterion) {
    let one = pool(1);
    let mut group = c.benchmark_group("dsa_long");
    configure(&mut group);
    let listing_ns = env_list("CH18_DSA_LISTING_NS", &[4096, 8192]);
    for t in env_list("CH18_DSA_LONG_NS", &[4096, 8192, 16384, 32768]) {
        manual_seed(0);
        let q = randn(&[t, LONG_HEADS, HEAD_DIM]);
        let (k, v) = (randn(&[t, HEAD_DIM]), randn(&[t, HEAD_DIM]));
        let q_index = randn(&[t, INDEX_HEADS, D_INDEX]);
        let k_index = randn(&[t, D_INDEX]);
        let w_index = randn(&[t, INDEX_HEADS]);
        let indexer = Indexer {
            q: &q_index,
            k: &k_index,
            w: &w_index,
        };
        bench_one(&mut group, "ch18_dsa_kernel", t, &one, || {
            dsa_kernel_fast(&q, &k, &v, &indexer, TOP_K, QUERY_TILE)
                .expect("dsa_kernel_fast")
        });
        if listing_ns.contains(&t) {
            bench_one(&mut group, "ch18_dsa_kernel_listing", t, &one, || {
                dsa_kernel(&q, &k, &v, &indexer, TOP_K, QUERY_TILE)
                    .expect("dsa_kernel")
            });
        }
        // Dense attention of the same heads: each head reads every key it can see.
        let heads = |x: &Tensor| {
            x.unsqueeze(0)
                .expand([LONG_HEADS, t, HEAD_DIM])
                .contiguous()
                .unsqueeze(0)
        };
        let q4 = q.transpose(0, 1).contiguous().unsqueeze(0);
        let (k4, v4) = (heads(&k), heads(&v));
        bench_one(&mut group, "ch09_flash", t, &one, || {
            flash_attention(&q4, &k4, &v4, true)
        });
    }
    group.finish();
}

fn gdn(c: &mut Criterion) {
    let one = pool(1);
    let mut group = c.benchmark_group("gdn");
    configure(&mut group);
    for t in env_list("CH18_GDN_NS", &[256, 512, 1024, 2048, 4096]) {
        // As the chapter draws them: unit-length queries and keys, decays near 1.
        manual_seed(0);
        let shape = [t, HEAD_DIM];
        let (q, k, v) = (
            l2_normalize(&randn(&shape)),
            l2_normalize(&randn(&shape)),
            randn(&shape),
        );
        let beta = sigmoid(&randn(&[t]));
        let log_alpha = log_sigmoid(&(randn(&[t]) + 3.0));
        bench_one(&mut group, "ch18_gdn_chunked", t, &one, || {
            gated_delta_chunked_fast(&q, &k, &v, &log_alpha, &beta, CHUNK).unwrap()
        });
        bench_one(&mut group, "ch18_gdn_chunked_listing", t, &one, || {
            gated_delta_chunked(&q, &k, &v, &log_alpha, &beta, CHUNK)
        });
        let alpha = exp(&log_alpha);
        bench_one(&mut group, "ch18_gdn_recurrent", t, &one, || {
            gated_delta_recurrent(&q, &k, &v, &alpha, &beta)
        });
    }
    group.finish();
}

criterion_group!(benches, linear, dsa, dsa_long, gdn);
criterion_main!(benches);
