//! The most floating-point work one core can do: 16 independent chains of fused
//! multiply-adds on the widest vectors the processor has (16 lanes with AVX-512, 8 with
//! AVX2), so that no FMA waits for another. A kernel's GFLOP/s divided by this number is
//! the fraction of the core it uses.
//!
//! `cargo run --release -p attention-perf --example fma_peak` prints `fma peak: X GFLOP/s
//! (ISA)`, the best of five runs of about a fifth of a second each.
use std::time::Instant;

use ch09_flash_attention::kernel::Isa;

/// Independent accumulators: more than an FMA's latency times the FMAs started per cycle.
const CHAINS: usize = 16;

fn main() {
    let isa = Isa::detect();
    let rounds = 20_000_000;
    let best = (0..5)
        .map(|_| {
            let start = Instant::now();
            let (sum, lanes) = chains(isa, rounds);
            std::hint::black_box(sum);
            let flop = (rounds * CHAINS * lanes * 2) as f64;
            flop / start.elapsed().as_secs_f64() / 1e9
        })
        .fold(0.0, f64::max);
    println!("fma peak: {best:.1} GFLOP/s ({isa:?})");
}

/// Runs `rounds` rounds of one FMA per chain; returns a sum that depends on every chain
/// (so that none can be skipped) and the lanes of one FMA.
fn chains(isa: Isa, rounds: usize) -> (f32, usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if isa == Isa::Avx512 {
            // SAFETY: the processor has AVX-512F (`Isa::detect`).
            return (unsafe { avx512::chains(rounds) }, 16);
        }
        if isa == Isa::Avx2 {
            // SAFETY: the processor has AVX2 and FMA (`Isa::detect`).
            return (unsafe { avx2::chains(rounds) }, 8);
        }
    }
    let _ = isa;
    let mut acc = [0.0f32; CHAINS];
    for _ in 0..rounds {
        for a in &mut acc {
            *a = a.mul_add(1.000_000_1, 0.999_999_9);
        }
    }
    (acc.iter().sum(), 1)
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx512f")]
    pub unsafe fn chains(rounds: usize) -> f32 {
        let mut acc = [_mm512_setzero_ps(); super::CHAINS];
        let (a, b) = (_mm512_set1_ps(1.000_000_1), _mm512_set1_ps(0.999_999_9));
        for _ in 0..rounds {
            for r in &mut acc {
                *r = _mm512_fmadd_ps(*r, a, b);
            }
        }
        let sum = acc
            .iter()
            .fold(_mm512_setzero_ps(), |s, &r| _mm512_add_ps(s, r));
        _mm512_reduce_add_ps(sum)
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn chains(rounds: usize) -> f32 {
        let mut acc = [_mm256_setzero_ps(); super::CHAINS];
        let (a, b) = (_mm256_set1_ps(1.000_000_1), _mm256_set1_ps(0.999_999_9));
        for _ in 0..rounds {
            for r in &mut acc {
                *r = _mm256_fmadd_ps(*r, a, b);
            }
        }
        let mut lanes = [0.0f32; 8];
        let sum = acc
            .iter()
            .fold(_mm256_setzero_ps(), |s, &r| _mm256_add_ps(s, r));
        // SAFETY: `lanes` holds the 8 floats the store writes.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), sum) };
        lanes.iter().sum()
    }
}
