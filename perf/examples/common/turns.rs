//! Timing two things in turns, shared by the examples that compare ours with libtorch's.
//!
//! Both examples take sizes as their arguments and the number of rounds from
//! `CH09_PAIRED_ROUNDS` (default 15), compute on our CPU code against libtorch's on one
//! thread, and report medians.

use std::time::Instant;

/// The median of some numbers.
pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[mid]
    } else {
        (xs[mid - 1] + xs[mid]) / 2.0
    }
}

/// Seconds `f` takes, once.
pub fn seconds<T>(f: impl FnOnce() -> T) -> f64 {
    let start = Instant::now();
    std::hint::black_box(f());
    start.elapsed().as_secs_f64()
}

/// The sizes given on the command line, and the rounds to time (`CH09_PAIRED_ROUNDS`).
/// Sets up both sides: our own CPU code, and libtorch on one thread.
pub fn sizes_and_rounds() -> (Vec<usize>, usize) {
    let sizes = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect("sizes: whole numbers"))
        .collect();
    let rounds = std::env::var("CH09_PAIRED_ROUNDS")
        .ok()
        .map_or(15, |s| s.parse().expect("CH09_PAIRED_ROUNDS: a count"));
    shared::set_device(shared::Device::Cpu);
    shared::tch::set_num_threads(1);
    (sizes, rounds)
}
