//! Which vector instructions this processor can run: the one choice every hand-vectorised
//! loop of the course makes (the packed GEMM here, chapter 9's attention kernel).
//!
//! Not to be confused with [`crate::cpu::Capability`], which says which build of PyTorch's
//! kernels we follow (and so in which order the arithmetic is done): the instruction set
//! only decides how fast the same arithmetic runs.

/// An instruction set, as detected on this processor at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// x86-64 with AVX-512F and FMA: 16 floats per vector.
    Avx512,
    /// x86-64 with AVX2 and FMA: 8 floats per vector.
    Avx2,
    /// Whatever the target has without run-time detection (SSE2 on x86-64, NEON on ARM).
    Portable,
}

impl Isa {
    /// The best instruction set this processor has.
    pub fn detect() -> Isa {
        [Isa::Avx512, Isa::Avx2]
            .into_iter()
            .find(|isa| isa.is_available())
            .unwrap_or(Isa::Portable)
    }

    /// Whether this processor can run `self`.
    pub fn is_available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let fma = std::arch::is_x86_feature_detected!("fma");
            match self {
                Isa::Avx512 => std::arch::is_x86_feature_detected!("avx512f") && fma,
                Isa::Avx2 => std::arch::is_x86_feature_detected!("avx2") && fma,
                Isa::Portable => true,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Isa::Portable
        }
    }

    /// Every instruction set this processor can run, best first (for tests that compare
    /// them).
    pub fn available() -> Vec<Isa> {
        [Isa::Avx512, Isa::Avx2, Isa::Portable]
            .into_iter()
            .filter(|isa| isa.is_available())
            .collect()
    }
}
