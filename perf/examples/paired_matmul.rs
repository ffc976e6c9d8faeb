//! `shared`'s large matrix products and libtorch's (MKL's `sgemm`) timed in turns, call by
//! call, on one thread (feature `tch`): a square product, and the projections of a
//! multi-head attention module of GPT-2 small's width, `x·Wᵀ` with `x` of `[n, 768]` and
//! `W` of `[768, 768]` (one projection) or `[2304, 768]` (queries, keys and values at
//! once).
//!
//! ```text
//! cargo run --release -p attention-perf --features tch --example paired_matmul -- 1024 4096
//! ```
//!
//! For each token count `n`: the square `n × n × n` product (for `n ≤ 1024`) and the two
//! projections. Each round times one call of each side, in one order or the reverse;
//! prints one JSON object per product with the medians over the rounds
//! (`CH09_PAIRED_ROUNDS`, default 15) and the throughput ratio, ours ÷ libtorch's (above 1:
//! ours is faster). `perf/scripts/bench-vs-torch.sh` runs it.

#[path = "common/turns.rs"]
mod turns;

use attention_perf::pinned::pool;
use shared::backend::torch::to_tch;
use shared::tch::Device;
use shared::{Tensor, manual_seed, randn};
use turns::{median, seconds, sizes_and_rounds};

fn main() {
    let (ns, rounds) = sizes_and_rounds();
    let one = pool(1);
    for n in ns {
        // (name, rows of x, inner size, outputs, transposed right operand)
        let mut products = vec![
            ("projection", n, 768, 768, true),
            ("qkv projection", n, 768, 2304, true),
        ];
        if n <= 1024 {
            products.insert(0, ("square matmul", n, n, n, false));
        }
        for (name, m, k, out, transposed) in products {
            manual_seed(0);
            let x = randn(&[m, k]);
            // `nn.Linear` keeps `W` as `[out, in]` and multiplies by its transpose.
            let w = if transposed {
                randn(&[out, k])
            } else {
                randn(&[k, out])
            };
            let (tx, tw) = (to_tch(&x, Device::Cpu), to_tch(&w, Device::Cpu));
            let ours = || -> Tensor {
                one.install(|| {
                    if transposed {
                        x.matmul(&w.t())
                    } else {
                        x.matmul(&w)
                    }
                })
            };
            let theirs = || {
                if transposed {
                    tx.matmul(&tw.tr())
                } else {
                    tx.matmul(&tw)
                }
            };
            // Warm-up: first calls fault pages in and fill caches.
            seconds(ours);
            seconds(theirs);
            let times: Vec<[f64; 2]> = (0..rounds)
                .map(|round| {
                    if round % 2 == 0 {
                        let a = seconds(ours);
                        [a, seconds(theirs)]
                    } else {
                        let b = seconds(theirs);
                        [seconds(ours), b]
                    }
                })
                .collect();
            let gflops = |s: f64| (2 * m * k * out) as f64 / s / 1e9;
            let ours_s = median(times.iter().map(|t| t[0]).collect());
            let torch_s = median(times.iter().map(|t| t[1]).collect());
            println!(
                "{{\"product\": \"{name}\", \"m\": {m}, \"k\": {k}, \"n\": {out}, \"rounds\": {rounds}, \"ours_gflops\": {:.1}, \"torch_gflops\": {:.1}, \"ratio\": {:.3}}}",
                gflops(ours_s),
                gflops(torch_s),
                median(times.iter().map(|t| t[1] / t[0]).collect())
            );
        }
    }
}
