//! How a chapter's program runs long work (chapter 19's training, chapter 20's model): on
//! a thread of its own thread pool, with freed memory kept for the next step. Neither
//! changes a bit of the results, only their speed.
//!
//! Every training step of chapter 19 makes the same tensors again: scores and weights of
//! `[64, 2, 32, 32]` (512 KiB each), activations and gradients of `[64, 32, 96]`. glibc's
//! `malloc` serves blocks that large with fresh pages from the kernel and hands them back
//! when they are freed, so each step would pay again for zeroed pages it just returned
//! (about a quarter of a step's time, measured on one thread). Told to keep what is freed,
//! it hands the same memory to the next step's tensors.
//!
//! The tensor operations hand their work to the threads of a rayon pool. Called from a
//! thread outside the pool, each operation wakes a pool thread and waits for it, thousands
//! of times a step; called from a thread of the pool, it runs there at once and shares its
//! work with the others.

/// Asks the C library's allocator to keep freed blocks of up to 32 MiB for reuse instead of
/// returning them to the kernel (what `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:
/// glibc.malloc.trim_threshold=268435456` does from outside). Does nothing off glibc.
///
/// # Shapes
/// No tensors.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // glibc's `mallopt` parameters (malloc.h).
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_MMAP_THRESHOLD: i32 = -3;
        unsafe extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        // SAFETY: `mallopt` only changes two thresholds of the allocator; both values are
        // in the ranges glibc accepts (the mmap threshold's maximum is 32 MiB on 64 bits).
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 32 << 20);
            mallopt(M_TRIM_THRESHOLD, 256 << 20);
        }
    }
}

/// Runs `work` on a thread of a new rayon pool with `RAYON_NUM_THREADS` threads (rayon's
/// default: one per core) and returns its result. The default generator is per thread:
/// seed it inside `work`.
///
/// # Shapes
/// No tensors.
pub fn on_pool_thread<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .build()
        .expect("a thread pool")
        .install(work)
}
