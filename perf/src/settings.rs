//! What the benchmarks of chapters 16 and 18 share (`perf/scripts/bench-part4.sh` runs
//! both): lengths read from the environment, and criterion's settings for variants that
//! take seconds a call.

use std::time::Duration;

use criterion::{BenchmarkGroup, SamplingMode, measurement::WallTime};
use shared::{Device, set_device};

/// Whole numbers from the environment variable `name`, or `default`.
pub fn env_list(name: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(name).ok().map_or_else(
        || default.to_vec(),
        |s| {
            s.split_whitespace()
                .map(|n| {
                    n.parse()
                        .unwrap_or_else(|_| panic!("{name}: whole numbers"))
                })
                .collect()
        },
    )
}

/// Few samples of flat size, each variant measured for `PART4_BENCH_SECONDS` (default 3)
/// after a sixth of that of warm-up; our code on our own CPU back-end.
pub fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    set_device(Device::Cpu);
    let seconds: f64 = std::env::var("PART4_BENCH_SECONDS")
        .ok()
        .map_or(3.0, |s| s.parse().expect("PART4_BENCH_SECONDS: seconds"));
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs_f64(seconds / 6.0))
        .measurement_time(Duration::from_secs_f64(seconds));
}
