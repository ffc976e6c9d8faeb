//! Hand-vectorised code, written once for three kinds of vector unit: the [`Simd`] trait
//! (the vector operations the attention kernels and the packed matrix product need), its
//! tokens, and [`with_isa`], the one place where an [`Isa`] becomes code compiled for it.
//!
//! Chapter 9's first kernel was plain Rust loops over fixed-size arrays, compiled with
//! AVX-512 enabled, hoping LLVM would vectorise them. The matrix products did vectorise;
//! the row maximum did not (LLVM turned it into 64 scalar `vmaxss`, or into gathers across
//! rows), and a bounds check in the scores loop made it load every key four times. So the
//! kernels name their vector operations explicitly, through [`Simd`], and each token maps
//! them onto one instruction set:
//!
//! - [`Avx512`]: 16 lanes (`std::arch` intrinsics, `__m512`);
//! - [`Avx2`]: 8 lanes (`__m256`, with FMA);
//! - [`Portable`]: 4 lanes as a plain array, for every other CPU (the compiler vectorises
//!   what it can).
//!
//! The x86 types are tokens: a value of [`Avx512`] can only be made by
//! [`Avx512::detect`], which checks the CPU, so every method can be safe.
//!
//! # Dispatch
//!
//! A Rust binary is built for the baseline x86-64 CPU (SSE2, 4 lanes, no fused
//! multiply-add); an intrinsic runs as one instruction only inside a function compiled
//! with its feature (`#[target_feature]`). A kernel is therefore written once, generic
//! over `S: Simd`, as a type implementing [`SimdOp`], and [`with_isa`] runs it:
//!
//! ```
//! use shared::simd::{Isa, Simd, SimdOp, with_isa};
//!
//! /// The sum of 32 floats.
//! struct Sum<'a>(&'a [f32; 32]);
//!
//! impl SimdOp for Sum<'_> {
//!     type Output = f32;
//!     #[inline(always)]
//!     fn run<S: Simd>(self, simd: S) -> f32 {
//!         let mut sums = simd.splat(0.0);
//!         for chunk in self.0.chunks_exact(S::LANES) {
//!             sums = simd.add(sums, simd.load(chunk));
//!         }
//!         simd.reduce_sum(sums)
//!     }
//! }
//!
//! let x = [1.0; 32];
//! for isa in Isa::available() {
//!     assert_eq!(with_isa(isa, Sum(&x)), 32.0);
//! }
//! ```
//!
//! `with_isa` makes the token and calls `op.run(token)` from a function compiled with
//! `#[target_feature(enable = "avx512f,fma")]` (or `"avx2,fma"`); `run`, the kernel it
//! calls and the token's methods, all `#[inline(always)]`, melt into that function. An
//! operation is a type rather than a closure because a closure cannot be generic: the
//! kernel is one function, instantiated for each token. `run` must be `#[inline(always)]`
//! (and so must the generic code it calls down to the token's methods), or it may be
//! compiled without the features and each intrinsic become a call. Where a kernel's shape
//! depends on the instruction set (how many rows fit in 32 registers of 16 floats or 16 of
//! 8), `run` picks it by [`Simd::ISA`], a constant, so only one branch is compiled.
//!
//! The weights of the attention kernels are powers of two, [`Simd::exp2_flushed`]: a
//! kernel scales its queries by `log₂ e` once, so that `e^(s - m) = 2^(s' - m')` for the
//! scaled scores `s'` (see [`exp2_flushed_scalar`]). It is an `exp`'s method without the
//! first step: without fused multiply-adds for [`Portable`] and [`Avx2`], which give the
//! scalar results bit for bit (a test checks it); with them, and with AVX-512's
//! `vscalefps` for the `2ⁿ`, for [`Avx512`] (a test checks it is within 2 ulp too).

mod exp2;
mod isa;
mod portable;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use exp2::{FLUSH_BELOW, exp2_flushed_scalar};
pub use isa::Isa;
pub use portable::Portable;
#[cfg(target_arch = "x86_64")]
pub use x86::{Avx2, Avx512};

/// A vector of `LANES` floats and what the kernels do with it.
pub trait Simd: Copy + Send + Sync + 'static {
    /// The vector: `LANES` floats.
    type V: Copy;
    /// Floats per vector.
    const LANES: usize;
    /// The instruction set this token stands for: a constant, for kernels whose register
    /// tiles depend on it.
    const ISA: Isa;

    /// Every lane `x`.
    fn splat(self, x: f32) -> Self::V;
    /// The first `LANES` floats of `from`.
    fn load(self, from: &[f32]) -> Self::V;
    /// Writes the lanes to the first `LANES` floats of `to`.
    fn store(self, v: Self::V, to: &mut [f32]);
    /// `a + b` lane by lane.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a - b` lane by lane.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a · b` lane by lane.
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a · b + c` lane by lane, in one rounding where the CPU can.
    fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// The larger of `a` and `b` lane by lane.
    fn max(self, a: Self::V, b: Self::V) -> Self::V;
    /// The largest lane.
    fn reduce_max(self, v: Self::V) -> f32;
    /// The sum of the lanes.
    fn reduce_sum(self, v: Self::V) -> f32;
    /// Whether some lane is greater than `x`.
    fn any_greater(self, v: Self::V, x: f32) -> bool;
    /// `2ˣ` of every lane, exactly 0 below [`FLUSH_BELOW`]: the softmax weights. Bit for
    /// bit [`exp2_flushed_scalar`] ([`Portable`], [`Avx2`]), or within the same 2 ulp with
    /// fused multiply-adds ([`Avx512`]).
    fn exp2_flushed(self, v: Self::V) -> Self::V;
    /// `v` with `-∞` in the lanes `i` where `first + i >= limit`: the keys after the last
    /// visible one, when lane `i` holds the score of key `first + i`.
    fn hide_from(self, v: Self::V, first: usize, limit: usize) -> Self::V;

    // Two keys' scores in one vector, for kernels whose heads fill half a vector (chapter
    // 18's sparse kernel at eight heads): lane `2h` sums head `h`'s products of the even
    // features, lane `2h + 1` those of the odd ones, and each head's score is the sum of
    // its two lanes. `LANES` is a multiple of four for every token.

    /// `[x[0], x[1], x[0], x[1], …]`.
    ///
    /// # Shapes
    /// `x`: at least 2 floats. Returns one vector.
    fn splat_pair(self, x: &[f32]) -> Self::V;
    /// In each group of four lanes: `[a_0 + a_1, a_2 + a_3, b_0 + b_1, b_2 + b_3]`: two
    /// heads' scores of the first key, then the same two heads' of the second.
    ///
    /// # Shapes
    /// Two vectors in, one out.
    fn add_pairs(self, a: Self::V, b: Self::V) -> Self::V;
    /// In each group of four lanes: `[v_2, v_3, v_0, v_1]`, the two keys' halves swapped.
    ///
    /// # Shapes
    /// One vector in, one out.
    fn swap_keys(self, v: Self::V) -> Self::V;
}

/// Code generic over the vector unit, for [`with_isa`] to run compiled for one (see the
/// [module docs](self)).
pub trait SimdOp {
    /// What the operation returns.
    type Output;
    /// Runs the operation with `simd`'s instructions. Mark it `#[inline(always)]`.
    fn run<S: Simd>(self, simd: S) -> Self::Output;
}

/// Runs `op` with the vector instructions of `isa`, compiled for them (see the
/// [module docs](self)).
///
/// # Panics
/// If this CPU cannot run `isa` (see [`Isa::available`]).
#[inline]
pub fn with_isa<Op: SimdOp>(isa: Isa, op: Op) -> Op::Output {
    let missing = || -> ! { panic!("this CPU cannot run {isa:?}") };
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            let simd = Avx512::detect().unwrap_or_else(|| missing());
            // SAFETY: the token exists only on a CPU with AVX-512F and FMA, the features
            // `run_avx512` is compiled with.
            unsafe { x86::run_avx512(simd, op) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            let simd = Avx2::detect().unwrap_or_else(|| missing());
            // SAFETY: the token exists only on a CPU with AVX2 and FMA.
            unsafe { x86::run_avx2(simd, op) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Isa::Avx512 | Isa::Avx2 => missing(),
        Isa::Portable => op.run(Portable),
    }
}
