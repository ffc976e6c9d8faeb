//! Random numbers exactly as PyTorch 2.13's CPU generator makes them.
//!
//! PyTorch's CPU generator is a Mersenne Twister (`mt19937.rs`) plus a handful of recipes that turn
//! its 32-bit draws into floats. Reproducing PyTorch bit for bit means copying each recipe
//! exactly, down to which multiply-adds the C++ compiler fused into one rounding:
//!
//! * `uniform.rs`: `rand` / `uniform_`, one draw per element, 24 random bits scaled into `[0, 1)`
//!   and stretched with a fused multiply-add;
//! * `normal.rs`: `randn` / `normal_`, Box–Muller in two flavours: a float32 block recipe
//!   (using the vectorised log and sincos of `avx_mathfun.rs`) for contiguous tensors of 16 or
//!   more elements, and a double-precision one with a cached spare value otherwise;
//! * `dropout.rs`: `bernoulli_` and `nn.Dropout`, one 53-bit double per element;
//! * `init.rs`: the bounds `nn.Linear` uses to initialise its parameters.
//!
//! Where PyTorch compiles several CPU flavours, this is the AVX2 one, which every x86-64 CPU with
//! AVX2 runs (AVX-512 machines included). The code is plain scalar Rust: what matters for the bits
//! is the order of the operations and their roundings, not the vector width.
//!
//! The book's appendix "How we match PyTorch exactly" walks through these recipes.

mod bernoulli;
mod dropout;
mod exponential;
mod init;
mod integers;
mod mt19937;
mod multinomial;
mod normal;
mod state;
mod uniform;

#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::fmt;

pub use dropout::dropout_in_place;
pub use init::{linear_bias_bound, linear_weight_bound};
pub use integers::{f_randint, randint};
pub use state::{STATE_BYTES, get_rng_state, set_rng_state};

use mt19937::Mt19937;

/// The seed of PyTorch's default CPU generator before any `torch.manual_seed`
/// (`default_rng_seed_val` in `c10/core/GeneratorImpl.h`).
const DEFAULT_SEED: u64 = 67_280_421_310_721;

/// PyTorch's CPU generator state: a Mersenne Twister, the seed it came from, and the spare
/// normal value that the double-precision Box–Muller path keeps between calls.
///
/// The drawing methods live next to the recipe they implement: [`Generator::fill_uniform`] in
/// `uniform.rs`, [`Generator::fill_normal`] in `normal.rs`, [`Generator::fill_bernoulli`] in
/// `dropout.rs`. Cloning a generator saves its state; [`Generator::get_state`] writes it as
/// `torch.get_rng_state()`'s bytes (`state.rs`).
#[derive(Clone)]
pub struct Generator {
    twister: Mt19937,
    /// The full 64-bit seed, only kept for [`Generator::initial_seed`].
    seed: u64,
    /// The second value of the last double Box–Muller pair, served by the next scalar-path draw.
    next_double_normal: Option<f64>,
}

impl Generator {
    /// A generator seeded with `seed`, like `torch.Generator().manual_seed(seed)`.
    ///
    /// Only the low 32 bits of `seed` reach the twister (see [`Generator::manual_seed`]).
    pub fn new(seed: u64) -> Self {
        Self {
            // Truncation is the point: PyTorch seeds the twister with `seed & 0xFFFF_FFFF`.
            twister: Mt19937::new(seed as u32),
            seed,
            next_double_normal: None,
        }
    }

    /// Re-seeds the generator in place, like `torch.Generator.manual_seed(seed)`.
    ///
    /// Only the low 32 bits seed the twister, so `123` and `2^32 + 123` give the same stream.
    /// A negative Python seed `s` is its 64-bit two's complement, `s as u64` in Rust (so `-1` is
    /// `u64::MAX`, the same stream as `4294967295`). Re-seeding also forgets the cached spare
    /// normal value.
    pub fn manual_seed(&mut self, seed: u64) {
        *self = Self::new(seed);
    }

    /// The full 64-bit seed last given to [`Generator::new`] or [`Generator::manual_seed`],
    /// like `torch.initial_seed()`.
    pub fn initial_seed(&self) -> u64 {
        self.seed
    }

    /// One tempered Mersenne Twister draw (`CPUGeneratorImpl::random`).
    pub fn random(&mut self) -> u32 {
        self.twister.next_u32()
    }

    /// Two draws glued together, the first one as the high half (`CPUGeneratorImpl::random64`).
    pub fn random64(&mut self) -> u64 {
        let high = u64::from(self.random());
        let low = u64::from(self.random());
        (high << 32) | low
    }
}

impl fmt::Debug for Generator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The 624 twister words would drown everything else.
        f.debug_struct("Generator")
            .field("initial_seed", &self.seed)
            .field("next_double_normal", &self.next_double_normal)
            .finish_non_exhaustive()
    }
}

thread_local! {
    /// One default generator per thread, so tests running in parallel do not share a stream.
    static DEFAULT_GENERATOR: RefCell<Generator> = RefCell::new(Generator::new(DEFAULT_SEED));
}

/// Runs `f` on this thread's default generator, the one `torch.rand`, `torch.randn`, `nn.Linear`
/// and friends draw from.
///
/// Each thread starts with its own generator, seeded with PyTorch's default seed
/// 67280421310721.
///
/// # Panics
///
/// If `f` itself calls `with_default_generator` (the generator is already borrowed).
pub fn with_default_generator<R>(f: impl FnOnce(&mut Generator) -> R) -> R {
    DEFAULT_GENERATOR.with_borrow_mut(f)
}

/// `torch.manual_seed(seed)` for this thread's default generator.
///
/// A negative Python seed `s` is passed as `s as u64` (two's complement); only the low 32 bits
/// seed the twister. See [`Generator::manual_seed`].
pub fn manual_seed(seed: u64) {
    with_default_generator(|generator| generator.manual_seed(seed));
}
