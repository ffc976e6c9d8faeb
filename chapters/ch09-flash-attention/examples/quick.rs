//! Tuning helper: times the kernel (on slices) in thread CPU time (which stays meaningful while other
//! processes load the machine): `cargo run --release --example quick -- N [avx2|portable] [full]`.
use ch09_flash_attention::kernel::{AttentionShape, Isa, flash_attention_slices};
use shared::{manual_seed, randn};

/// CPU time of this thread, in nanoseconds.
fn cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").expect("Linux");
    s.split_whitespace()
        .next()
        .and_then(|t| t.parse().ok())
        .expect("a number")
}

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let n: usize = arg(1).and_then(|s| s.parse().ok()).unwrap_or(1024);
    let isa = match arg(2).as_deref() {
        Some("avx2") => Isa::Avx2,
        Some("portable") => Isa::Portable,
        _ => Isa::detect(),
    };
    let causal = arg(3).as_deref() != Some("full");
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
        (0..3)
            .map(|_| {
                let t = cpu_ns();
                std::hint::black_box(flash_attention_slices(isa, &q, &k, &v, shape, causal));
                cpu_ns() - t
            })
            .min()
            .expect("three runs")
    }) as f64
        / 1e9;
    let flops = if causal { 2.0 } else { 4.0 } * (n * n) as f64 * 64.0 * 12.0;
    println!(
        "n={n} {isa:?} causal={causal}: {:.2} ms, {:.1} useful GFLOP/s",
        best * 1e3,
        flops / best / 1e9
    );
}
