//! Tuning helper: times the kernel (on slices), the fastest of several calls by the wall
//! clock:
//! `cargo run --release -p attention-perf --example quick -- N [avx2|portable] [full] [calls]`.
//!
//! The fastest call, not the mean: on a shared machine the noise only ever adds time.
//! (Thread CPU time from `/proc/thread-self/schedstat` moved in 4 ms steps on the machine
//! the kernel was tuned on, too coarse for calls of a few milliseconds.)
use std::time::Instant;

use ch09_flash_attention::kernel::{AttentionShape, Isa, flash_attention_slices};
use shared::{manual_seed, randn};

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let n: usize = arg(1).and_then(|s| s.parse().ok()).unwrap_or(1024);
    let isa = match arg(2).as_deref() {
        Some("avx2") => Isa::Avx2,
        Some("portable") => Isa::Portable,
        _ => Isa::detect(),
    };
    let causal = arg(3).as_deref() != Some("full");
    let calls: usize = arg(4).and_then(|s| s.parse().ok()).unwrap_or(5);
    manual_seed(0);
    let (q, k, v) = (
        randn(&[1, 12, n, 64]),
        randn(&[1, 12, n, 64]),
        randn(&[1, 12, n, 64]),
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a pool");
    let (q, k, v) = (q.to_vec(), k.to_vec(), v.to_vec());
    let shape = AttentionShape {
        heads: 12,
        queries: n,
        keys: n,
        d: 64,
        d_v: 64,
    };
    let best = pool.install(|| {
        (0..calls.max(1))
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(flash_attention_slices(
                    isa, &q, &k, &v, shape, causal,
                ));
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    });
    let flops = if causal { 2.0 } else { 4.0 } * (n * n) as f64 * 64.0 * 12.0;
    println!(
        "n={n} {isa:?} causal={causal}: {:.2} ms, {:.1} useful GFLOP/s",
        best * 1e3,
        flops / best / 1e9
    );
}
