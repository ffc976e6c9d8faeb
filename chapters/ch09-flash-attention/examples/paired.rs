//! The flash kernel and libtorch's `scaled_dot_product_attention(is_causal=True)` timed in
//! turns, call by call, on one thread (feature `tch`): the time ratio of the two measured
//! so that a slow spell of a shared machine hits both sides alike. The kernel without the
//! mask takes its turn too, for the ratio of causal to full attention, and so does the
//! kernel on two threads, for the speed-up of the second core.
//!
//! ```text
//! cargo run --release -p ch09-flash-attention --features tch --example paired -- 1024 4096
//! ```
//!
//! Each round times one call of each, in one order or the reverse, and takes their ratios;
//! prints one JSON object per length with the medians over the rounds
//! (`CH09_PAIRED_ROUNDS`, default 15). `scripts/bench-vs-torch.sh` runs it after criterion.

use std::time::Instant;

use ch09_flash_attention::kernel::flash_attention;
use shared::backend::torch::to_tch;
use shared::tch::{self, Device};
use shared::{Tensor, manual_seed, randn};

/// The median of some numbers.
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[mid]
    } else {
        (xs[mid - 1] + xs[mid]) / 2.0
    }
}

/// Seconds `f` takes, once.
fn seconds<T>(f: impl FnOnce() -> T) -> f64 {
    let start = Instant::now();
    std::hint::black_box(f());
    start.elapsed().as_secs_f64()
}

fn main() {
    let ns: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect("sequence lengths"))
        .collect();
    let rounds: usize = std::env::var("CH09_PAIRED_ROUNDS")
        .ok()
        .map_or(15, |s| s.parse().expect("CH09_PAIRED_ROUNDS: a count"));
    shared::set_device(shared::Device::Cpu);
    tch::set_num_threads(1);
    let pool = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
    };
    let (one, two) = (pool(1), pool(2));
    for n in ns {
        manual_seed(0);
        let shape = [1, 12, n, 64];
        let (q, k, v): (Tensor, Tensor, Tensor) = (randn(&shape), randn(&shape), randn(&shape));
        let (tq, tk, tv) = (
            to_tch(&q, Device::Cpu),
            to_tch(&k, Device::Cpu),
            to_tch(&v, Device::Cpu),
        );
        let flash = || one.install(|| flash_attention(&q, &k, &v, true));
        let flash_full = || one.install(|| flash_attention(&q, &k, &v, false));
        let flash_two = || two.install(|| flash_attention(&q, &k, &v, true));
        let sdpa = || {
            tch::Tensor::scaled_dot_product_attention(
                &tq,
                &tk,
                &tv,
                None::<tch::Tensor>,
                0.0,
                true,
                None,
                false,
            )
        };
        // Warm-up: first calls fault pages in and fill caches.
        seconds(flash);
        seconds(sdpa);
        seconds(flash_full);
        seconds(flash_two);
        // Per round: [causal flash, SDPA, full flash, causal flash on two threads] in
        // seconds, in one order or the reverse.
        let times: Vec<[f64; 4]> = (0..rounds)
            .map(|round| {
                if round % 2 == 0 {
                    let a = seconds(flash);
                    let b = seconds(sdpa);
                    let c = seconds(flash_full);
                    [a, b, c, seconds(flash_two)]
                } else {
                    let d = seconds(flash_two);
                    let c = seconds(flash_full);
                    let b = seconds(sdpa);
                    [seconds(flash), b, c, d]
                }
            })
            .collect();
        let column = |i: usize| times.iter().map(|t| t[i]).collect::<Vec<f64>>();
        let ratio = |i: usize, j: usize| median(times.iter().map(|t| t[i] / t[j]).collect());
        let fastest = |i: usize| column(i).into_iter().fold(f64::INFINITY, f64::min);
        println!(
            "{{\"n\": {n}, \"rounds\": {rounds}, \"flash_ms\": {:.3}, \"sdpa_ms\": {:.3}, \"ratio\": {:.3}, \"fastest_flash_ms\": {:.3}, \"fastest_sdpa_ms\": {:.3}, \"full_ms\": {:.3}, \"causal_over_full\": {:.3}, \"two_threads_ms\": {:.3}, \"speedup\": {:.3}}}",
            median(column(0)) * 1e3,
            median(column(1)) * 1e3,
            ratio(0, 1),
            fastest(0) * 1e3,
            fastest(1) * 1e3,
            median(column(2)) * 1e3,
            ratio(0, 2),
            median(column(3)) * 1e3,
            ratio(0, 3)
        );
    }
}
