//! Tuning helper (not part of the chapter): times the kernel in thread CPU time, which
//! stays meaningful while other processes load the machine.
use ch09_flash_attention::core::{AttentionCore, Materialised};
use ch09_flash_attention::kernel::{Isa, flash_attention_with};
use shared::{manual_seed, randn};

fn cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    s.split_whitespace().next().unwrap().parse().unwrap()
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1024);
    let isa = match std::env::args().nth(2).as_deref() {
        Some("avx2") => Isa::Avx2,
        Some("portable") => Isa::Portable,
        _ => Isa::Avx512,
    };
    let causal = std::env::args().nth(3).as_deref() != Some("full");
    manual_seed(0);
    let (q, k, v) = (
        randn(&[1, 12, n, 64]),
        randn(&[1, 12, n, 64]),
        randn(&[1, 12, n, 64]),
    );
    {
        for _ in 0..3 {
            let t = cpu_ns();
            let x = q.to_vec();
            println!("  to_vec {:.2} ms", (cpu_ns() - t) as f64 / 1e6);
            std::hint::black_box(x);
        }
        let t = cpu_ns();
        let x = q.to_vec();
        let dt = cpu_ns() - t;
        println!(
            "to_vec of {} floats: {:.2} ms ({:.2} ns each)",
            x.len(),
            dt as f64 / 1e6,
            dt as f64 / x.len() as f64
        );
        let t = cpu_ns();
        let heads: Vec<Vec<f32>> = (0..12).map(|h| q.get(0).get(h).to_vec()).collect();
        let dt = cpu_ns() - t;
        println!(
            "per-head to_vec: {:.2} ms ({})",
            dt as f64 / 1e6,
            heads.len()
        );
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let (best, out) = pool.install(|| {
        let a = randn(&[1024, 1024]);
        let b = randn(&[1024, 1024]);
        let mut g = u64::MAX;
        for _ in 0..3 {
            let t = cpu_ns();
            std::hint::black_box(a.matmul(&b));
            g = g.min(cpu_ns() - t);
        }
        println!(
            "gemm 1024: {:.1} GFLOP/s (cpu time)",
            2.0 * 1024f64.powi(3) / g as f64
        );
        let mut best = u64::MAX;
        let mut out = None;
        for _ in 0..5 {
            let t = cpu_ns();
            out = Some(flash_attention_with(isa, &q, &k, &v, causal));
            best = best.min(cpu_ns() - t);
        }
        (best as f64 / 1e9, out.unwrap())
    });
    let flops = if causal { 2.0 } else { 4.0 } * (n * n) as f64 * 64.0 * 12.0;
    println!(
        "n={n} {isa:?} causal={causal}: {:.2} ms, {:.1} useful GFLOP/s",
        best * 1e3,
        flops / best / 1e9
    );
    if n <= 1024 && causal {
        let r = Materialised.causal_attention(&q, &k, &v);
        let (a, b) = (out.to_vec(), r.to_vec());
        let maxdiff = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max);
        let maxabs = b.iter().map(|y| y.abs()).fold(0f32, f32::max);
        println!("max abs diff {maxdiff:e}, max |out| {maxabs}");
    }
}

#[test]
fn to_vec_speed() {}
