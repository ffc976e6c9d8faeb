//! Thread pools for timing, their threads pinned one to a core.
//!
//! Linux wakes a thread up near the thread that woke it and moves it elsewhere only when
//! its load balancing runs, some milliseconds later: a call of a few milliseconds on two
//! threads can then spend them both on one core, and a machine that idled a core during
//! the other side's turn shows it most. Pinned, thread `i` of a pool runs on core `i` from
//! its first instruction (what `OMP_PROC_BIND` does for PyTorch's OpenMP threads, which
//! `scripts/bench-vs-torch.sh` sets).

/// A rayon pool of `threads` threads, thread `i` pinned to core `i` where there is one.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .start_handler(move |i| {
            if let Some(&core) = cores.get(i) {
                core_affinity::set_for_current(core);
            }
        })
        .build()
        .expect("a thread pool")
}
