//! The two facts about the machine that decide PyTorch's CPU results bit for bit: which
//! vector kernels it runs (its *CPU capability*) and how many threads it splits work into.
//!
//! PyTorch compiles its CPU kernels several times, once per instruction set, and picks one
//! build when it starts. The builds compute the same mathematics but group the additions
//! differently: a softmax row is summed in 16 lanes by the AVX-512 build and in 8 by the AVX2
//! build, so the last bit of a weight can depend on the machine. We follow one build, AVX512
//! unless `ATEN_CPU_CAPABILITY` says otherwise (see [`Capability::detect`] for why).
//!
//! The thread count matters too: a softmax over a column dim, and a sum of 32768 elements or
//! more, are cut into one piece per thread, and the pieces are added in a different order than
//! one thread would add them.
//!
//! What differs between the builds, for the kernels of this crate that follow them:
//!
//! | | AVX512 | AVX2 | DEFAULT (portable) |
//! |---|---|---|---|
//! | softmax, log_softmax: lanes per row | 16 | 8 | 8, combined one after the other |
//! | their `exp`, `log` | SLEEF | SLEEF | the C library's `expf`, `logf` |
//! | sum, mean | 8 lanes | 8 lanes | 8 lanes |
//!
//! All three are reproduced; DEFAULT's `logf` is taken from the C library Rust links
//! against, which is PyTorch's own on Linux with glibc. (The portable build also draws other
//! `randn` numbers and multiplies matrices in another order; this crate's generator and
//! matrix products follow the AVX2 and AVX-512 builds whatever the capability.)

use std::cell::Cell;
use std::fmt;

/// Which build of PyTorch's CPU kernels runs, as `torch.backends.cpu.get_cpu_capability()`
/// reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// `"DEFAULT"`: the portable build. Its vectors are 8 floats wide, computed one lane at a
    /// time, and its `exp` and `log` are the C library's `expf` and `logf`.
    Default,
    /// `"AVX2"`: 8-float vectors with fused multiply-add; `exp`/`log` from the SLEEF library.
    Avx2,
    /// `"AVX512"`: 16-float vectors; the same SLEEF functions, lane for lane.
    Avx512,
}

impl Capability {
    /// How many floats one vector of this build holds: how many partial sums a softmax row
    /// keeps before it adds them together.
    pub fn softmax_lanes(self) -> usize {
        match self {
            Capability::Avx512 => 16,
            Capability::Avx2 | Capability::Default => 8,
        }
    }

    /// Parses the values PyTorch accepts in `ATEN_CPU_CAPABILITY` (`default`, `avx2`,
    /// `avx512`); anything else is `None`, and PyTorch ignores it with a warning.
    pub fn from_env_value(value: &str) -> Option<Capability> {
        match value {
            "default" => Some(Capability::Default),
            "avx2" => Some(Capability::Avx2),
            "avx512" => Some(Capability::Avx512),
            _ => None,
        }
    }

    /// The capability this crate computes as: `ATEN_CPU_CAPABILITY` if it holds a known
    /// value (the variable PyTorch reads for the same choice), else AVX512.
    ///
    /// Why not what this processor supports, as PyTorch does? Because one build has to be
    /// followed throughout, and the matrix products cannot follow the machine: PyTorch takes
    /// them from MKL, a closed library whose order of additions also changes from one
    /// processor to another, and our products follow the order measured with PyTorch 2.13.0
    /// on an Intel CPU with AVX-512, where the book's reference outputs were made. So by
    /// default every machine prints the book's digits, and `ATEN_CPU_CAPABILITY=avx2` (or
    /// `default`) gives the last bits of PyTorch's other builds where we reproduce them.
    /// [`Capability::of_processor`] says which build PyTorch itself picks on this machine.
    pub fn detect() -> Capability {
        if let Ok(value) = std::env::var("ATEN_CPU_CAPABILITY")
            && let Some(capability) = Capability::from_env_value(&value)
        {
            return capability;
        }
        Capability::Avx512
    }

    /// The build PyTorch picks on this processor when `ATEN_CPU_CAPABILITY` is not set.
    ///
    /// PyTorch's rule (`aten/src/ATen/native/DispatchStub.cpp`): AVX512 when the processor
    /// has AVX-512 VL, BW and DQ and FMA (every such processor also has AVX-512 F, which we
    /// check too); else AVX2 when it has AVX2 and FMA; else DEFAULT. Other architectures
    /// (ARM, POWER) are DEFAULT here.
    #[cfg(target_arch = "x86_64")]
    pub fn of_processor() -> Capability {
        let avx512 = std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("fma");
        if avx512 {
            Capability::Avx512
        } else if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
        {
            Capability::Avx2
        } else {
            Capability::Default
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub fn of_processor() -> Capability {
        Capability::Default
    }
}

/// Prints the name PyTorch prints: `DEFAULT`, `AVX2` or `AVX512`.
impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Capability::Default => "DEFAULT",
            Capability::Avx2 => "AVX2",
            Capability::Avx512 => "AVX512",
        })
    }
}

thread_local! {
    // Per thread, so that tests running side by side can each pretend to be another machine.
    static CAPABILITY: Cell<Option<Capability>> = const { Cell::new(None) };
    static NUM_THREADS: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The capability this thread computes as: the one set by [`set_capability`], else
/// [`Capability::detect`].
pub fn capability() -> Capability {
    CAPABILITY.with(|c| match c.get() {
        Some(capability) => capability,
        None => {
            let capability = Capability::detect();
            c.set(Some(capability));
            capability
        }
    })
}

/// Makes this thread compute as PyTorch does with `capability`, e.g. to reproduce results
/// recorded on an AVX-512 machine on an AVX2 one (our code is plain Rust, so any capability
/// runs anywhere). `None` goes back to [`Capability::detect`].
pub fn set_capability(capability: Option<Capability>) {
    CAPABILITY.with(|c| c.set(capability));
}

/// `torch.get_num_threads()`: how many pieces PyTorch cuts parallel work into.
///
/// As PyTorch's default (its thread pool is sized by MKL): `MKL_NUM_THREADS` if set, else
/// `OMP_NUM_THREADS`, else the number of physical cores (hyper-threads do not count); and
/// never more than the physical cores unless `MKL_DYNAMIC=false`. [`set_num_threads`]
/// overrides it for this thread. Our code runs the pieces one after the other: only the
/// order of the additions follows PyTorch's threads, not the speed.
pub fn get_num_threads() -> usize {
    NUM_THREADS.with(|n| match n.get() {
        Some(threads) => threads,
        None => {
            let threads = default_num_threads();
            n.set(Some(threads));
            threads
        }
    })
}

/// `torch.set_num_threads(n)`, for this thread (at least 1).
pub fn set_num_threads(threads: usize) {
    NUM_THREADS.with(|n| n.set(Some(threads.max(1))));
}

/// What this thread computes as, to take along to another thread: the capability of
/// [`set_capability`] and the thread count of [`set_num_threads`] decide orders of additions,
/// and both belong to the thread that set them. Work handed to another thread of the pool
/// computes as the thread that handed it over inside [`ThreadSettings::run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadSettings {
    capability: Option<Capability>,
    num_threads: Option<usize>,
}

impl ThreadSettings {
    /// This thread's settings.
    pub fn current() -> ThreadSettings {
        ThreadSettings {
            capability: CAPABILITY.with(Cell::get),
            num_threads: NUM_THREADS.with(Cell::get),
        }
    }

    /// Runs `work` under these settings on this thread, then puts the thread's own back
    /// (also if `work` panics).
    pub fn run<R>(self, work: impl FnOnce() -> R) -> R {
        /// Puts a thread's settings back when dropped.
        struct Restore(ThreadSettings);
        impl Drop for Restore {
            fn drop(&mut self) {
                self.0.apply();
            }
        }
        let _restore = Restore(ThreadSettings::current());
        self.apply();
        work()
    }

    fn apply(self) {
        CAPABILITY.with(|c| c.set(self.capability));
        NUM_THREADS.with(|n| n.set(self.num_threads));
    }
}

fn default_num_threads() -> usize {
    let from_env = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
    };
    let cores = physical_cores()
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1);
    let asked = from_env("MKL_NUM_THREADS").or_else(|| from_env("OMP_NUM_THREADS"));
    let dynamic =
        !std::env::var("MKL_DYNAMIC").is_ok_and(|v| v.eq_ignore_ascii_case("false"));
    match asked {
        Some(n) if dynamic => n.min(cores),
        Some(n) => n,
        None => cores,
    }
}

/// The number of distinct (socket, core) pairs Linux lists in `/proc/cpuinfo`.
fn physical_cores() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let mut cores = std::collections::BTreeSet::new();
    let mut socket = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "physical id" => socket = Some(value.trim().to_string()),
            "core id" => {
                cores.insert((socket.clone(), value.trim().to_string()));
            }
            _ => {}
        }
    }
    (!cores.is_empty()).then_some(cores.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_per_thread_and_reversible() {
        set_capability(Some(Capability::Avx512));
        assert_eq!(capability().softmax_lanes(), 16);
        std::thread::spawn(|| assert_eq!(capability(), Capability::detect()))
            .join()
            .unwrap();
        set_capability(None);
        assert_eq!(capability(), Capability::detect());
        set_num_threads(0);
        assert_eq!(get_num_threads(), 1);
        assert_eq!(Capability::from_env_value("avx2"), Some(Capability::Avx2));
        assert_eq!(Capability::from_env_value("sse"), None);
        assert_eq!(Capability::Avx512.to_string(), "AVX512");
    }

    #[test]
    fn settings_go_along_to_another_thread_and_come_back() {
        set_capability(Some(Capability::Default));
        set_num_threads(3);
        let settings = ThreadSettings::current();
        set_capability(None);
        set_num_threads(1);
        let there = std::thread::spawn(move || {
            set_capability(Some(Capability::Avx2));
            let inside = settings.run(|| (capability(), get_num_threads()));
            (
                inside,
                capability(),
                get_num_threads() == default_num_threads(),
            )
        });
        let (inside, after, default_threads) = there.join().unwrap();
        assert_eq!(inside, (Capability::Default, 3));
        assert_eq!(
            after,
            Capability::Avx2,
            "the thread's own capability is back"
        );
        assert!(default_threads, "the thread's own thread count is back");
        assert_eq!(get_num_threads(), 1);
        set_capability(None);
    }
}
