//! Times each kernel against chapter 9's FlashAttention on the CPU, in turns, on the
//! adapter wgpu finds; run by `perf/scripts/bench-gpu.sh`, which builds it in release.
//!
//! For each size: a warm-up call of everything, then `GPU_BENCH_TURNS` turns, each timing
//! every kernel once (timestamp queries where the adapter has them, else the wall clock
//! around submit and wait; pipelines made before, never timed) and chapter 9's kernel
//! once. Prints the medians and each kernel's time as a ratio of chapter 9's, and whether
//! the kernel's result agrees with the CPU's at that size.

use std::time::{Duration, Instant};

use ch21_webgpu::device::{AdapterChoice, Gpu};
use ch21_webgpu::kernels::Kernel;
use ch21_webgpu::launch::Launch;
use ch21_webgpu::setup::{HostInputs, cpu_attention, draw_qkv};
use ch21_webgpu::timing::{Clock, time_once};
use ch21_webgpu::tolerance::{compare, rescales, tolerance};

fn env_list(name: &str, default: &str) -> Vec<usize> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split_whitespace()
        .map(|s| {
            s.parse()
                .unwrap_or_else(|_| panic!("{name}: {s:?} is not a number"))
        })
        .collect()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let choice = if std::env::args().any(|a| a == "--cpu-adapter") {
        AdapterChoice::Cpu
    } else {
        AdapterChoice::Preferred
    };
    let gpu = Gpu::new(choice)?;
    let sizes = env_list("GPU_BENCH_NS", "256 1024");
    let [heads, d] = env_list("GPU_BENCH_HEADS_D", "12 64")[..] else {
        return Err("GPU_BENCH_HEADS_D takes two numbers: heads and d".into());
    };
    let turns = env_list("GPU_BENCH_TURNS", "5")[0].max(1);
    let clock = if gpu.timestamps {
        Clock::Timestamps
    } else {
        Clock::WallClock
    };
    println!("adapter: {}", gpu.description());
    println!(
        "causal attention, batch 1, {heads} heads of {d}; {turns} turns, medians; \
         GPU times by {clock:?}, chapter 9 on all CPU cores"
    );
    if gpu.is_software() {
        println!(
            "a software adapter: it runs the kernels on this CPU, so these ratios say \
             nothing about a GPU"
        );
    }
    println!();
    println!(
        "| n | kernel | time per call | time / chapter 9 on the CPU | agrees with the CPU |"
    );
    println!("|---|---|---|---|---|");
    let split = Kernel::SplitKv { splits: 8 };
    for n in sizes {
        let [q, k, v] = draw_qkv(0, &[1, heads, n, d], &[1, heads, n, d]);
        let host = HostInputs::new(&q, &k, &v);
        let cpu = cpu_attention(&q, &k, &v, true);
        let mut kernels = Vec::new();
        for kernel in Kernel::FORWARD {
            match Launch::new(&gpu, kernel, &host.inputs(), true) {
                Ok(launch) => kernels.push((kernel, launch)),
                Err(e) => println!("| {n} | {} | not run: {e} | | |", kernel.name()),
            }
        }
        // Warm-up, and the check of each kernel's result at this size.
        let mut agrees = Vec::new();
        for (kernel, launch) in &kernels {
            launch.run(&gpu)?;
            let bound = tolerance(&host.inputs(), true, rescales(*kernel, n));
            agrees.push(compare(&launch.read(&gpu)?, &cpu, &bound).within());
        }
        let mut gpu_times = vec![Vec::new(); kernels.len()];
        let mut cpu_times = Vec::new();
        for _ in 0..turns {
            for ((_, launch), times) in kernels.iter().zip(&mut gpu_times) {
                times.push(time_once(&gpu, launch)?.0);
            }
            let started = Instant::now();
            std::hint::black_box(cpu_attention(&q, &k, &v, true));
            cpu_times.push(started.elapsed());
        }
        let cpu_median = median(cpu_times);
        for (((kernel, _), times), agrees) in
            kernels.iter().zip(gpu_times).zip(agrees)
        {
            let time = median(times);
            println!(
                "| {n} | {} | {:.3} ms | {:.2} | {} |",
                kernel.name(),
                time.as_secs_f64() * 1e3,
                time.as_secs_f64() / cpu_median.as_secs_f64(),
                if agrees {
                    "yes"
                } else {
                    "NO (see the appendix)"
                }
            );
        }
        println!(
            "| {n} | chapter 9 on the CPU | {:.3} ms | 1 | |",
            cpu_median.as_secs_f64() * 1e3
        );
    }
    // Decoding: one query per head over a cache of the largest size, split into parts.
    let cache = *env_list("GPU_BENCH_NS", "256 1024").last().unwrap_or(&1024);
    let [q, k, v] = draw_qkv(0, &[1, heads, 1, d], &[1, heads, cache, d]);
    let host = HostInputs::new(&q, &k, &v);
    let launch = Launch::new(&gpu, split, &host.inputs(), false)?;
    launch.run(&gpu)?;
    let mut gpu_times = Vec::new();
    let mut cpu_times = Vec::new();
    for _ in 0..turns {
        gpu_times.push(time_once(&gpu, &launch)?.0);
        let started = Instant::now();
        std::hint::black_box(cpu_attention(&q, &k, &v, false));
        cpu_times.push(started.elapsed());
    }
    let (time, cpu_median) = (median(gpu_times), median(cpu_times));
    println!(
        "| 1 x {cache} | {} | {:.3} ms | {:.2} | |",
        split.name(),
        time.as_secs_f64() * 1e3,
        time.as_secs_f64() / cpu_median.as_secs_f64()
    );
    Ok(())
}
