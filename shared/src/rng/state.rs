//! The generator as bytes, laid out as `torch.get_rng_state()` lays out PyTorch's CPU
//! generator (`CPUGeneratorImplState` in `aten/src/ATen/CPUGeneratorImpl.cpp`), so that a
//! training run saved here resumes with the same draws, and a state saved by PyTorch can be
//! read back.
//!
//! The 5056 bytes, little-endian, C's layout with its padding as zeros:
//!
//! | offset | what |
//! |---|---|
//! | 0 | the seed, `u64` |
//! | 8 | `left`, `i32`: one more than the draws before the next twist |
//! | 12 | `seeded`, `i32`: 1 |
//! | 16 | `next`, `u64`: the index of the next word |
//! | 24 | the 624 words, each a `u64` |
//! | 5016 | three `f64` (`normal_x`, `normal_y`, `normal_rho`): `normal_y` the spare normal |
//! | 5040 | whether the spare is there, `i32` (then 4 bytes of padding) |
//! | 5048 | a spare float32 normal, `f32`, and whether it is there, one byte (then 3 of padding) |
//!
//! PyTorch's float32 spare is never kept by the draws this crate makes: it is written empty
//! and must be empty when read.

use super::mt19937::{Mt19937, N};
use super::{Generator, with_default_generator};
use crate::{Error, Result};

/// The length of `torch.get_rng_state()`.
pub const STATE_BYTES: usize = 5056;

const SEED: usize = 0;
const LEFT: usize = 8;
const SEEDED: usize = 12;
const NEXT: usize = 16;
const WORDS: usize = 24;
const NORMAL_Y: usize = WORDS + 8 * N + 8;
const NORMAL_VALID: usize = NORMAL_Y + 16;
const FLOAT_NORMAL_VALID: usize = NORMAL_VALID + 12;

impl Generator {
    /// The generator's state as `torch.get_rng_state()`'s bytes.
    pub fn get_state(&self) -> Vec<u8> {
        let mut bytes = vec![0u8; STATE_BYTES];
        let (words, next, left) = self.twister.parts();
        let mut put = |offset: usize, field: &[u8]| {
            bytes[offset..offset + field.len()].copy_from_slice(field);
        };
        put(SEED, &self.seed.to_le_bytes());
        put(LEFT, &(left as i32).to_le_bytes());
        put(SEEDED, &1i32.to_le_bytes());
        put(NEXT, &(next as u64).to_le_bytes());
        for (i, word) in words.iter().enumerate() {
            put(WORDS + 8 * i, &u64::from(*word).to_le_bytes());
        }
        if let Some(spare) = self.next_double_normal {
            put(NORMAL_Y, &spare.to_le_bytes());
            put(NORMAL_VALID, &1i32.to_le_bytes());
        }
        bytes
    }

    /// Replaces the generator's state with `bytes`, as `torch.set_rng_state(bytes)`.
    /// Bytes that cannot be a state (another length, a position outside the table, a word
    /// wider than 32 bits, a float32 spare) are an error naming the field, and leave the
    /// generator as it was.
    pub fn set_state(&mut self, bytes: &[u8]) -> Result<()> {
        *self = Generator::from_state(bytes)?;
        Ok(())
    }

    /// A generator from `torch.get_rng_state()`'s bytes (see [`Generator::set_state`]).
    pub fn from_state(bytes: &[u8]) -> Result<Generator> {
        let bad = |detail: String| Error::InvalidArgument {
            op: "set_rng_state",
            detail,
        };
        if bytes.len() != STATE_BYTES {
            return Err(bad(format!(
                "a generator's state is {STATE_BYTES} bytes, got {}",
                bytes.len()
            )));
        }
        let u64_at = |offset: usize| {
            u64::from_le_bytes(bytes[offset..offset + 8].try_into().expect("8 bytes"))
        };
        let i32_at = |offset: usize| {
            i32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"))
        };
        let mut words = [0u32; N];
        for (i, word) in words.iter_mut().enumerate() {
            let wide = u64_at(WORDS + 8 * i);
            *word = u32::try_from(wide).map_err(|_| {
                bad(format!("word {i} is {wide}, wider than 32 bits"))
            })?;
        }
        let (left, next) = (i32_at(LEFT), u64_at(NEXT));
        let twister = usize::try_from(left)
            .ok()
            .zip(usize::try_from(next).ok())
            .and_then(|(left, next)| Mt19937::from_parts(words, next, left))
            .ok_or_else(|| {
                bad(format!(
                    "left {left} and next {next} are not a position in the table of {N} words"
                ))
            })?;
        if i32_at(SEEDED) != 1 {
            return Err(bad(format!("seeded is {}, not 1", i32_at(SEEDED))));
        }
        let next_double_normal = match i32_at(NORMAL_VALID) {
            0 => None,
            1 => Some(f64::from_bits(u64_at(NORMAL_Y))),
            other => {
                return Err(bad(format!(
                    "the spare normal's flag is {other}, not 0 or 1"
                )));
            }
        };
        if bytes[FLOAT_NORMAL_VALID] != 0 {
            return Err(bad(
                "a spare float32 normal, which this crate never keeps".into()
            ));
        }
        Ok(Generator {
            twister,
            seed: u64_at(SEED),
            next_double_normal,
        })
    }
}

/// `torch.get_rng_state()`: this thread's default generator as bytes.
pub fn get_rng_state() -> Vec<u8> {
    with_default_generator(|generator| generator.get_state())
}

/// `torch.set_rng_state(bytes)` for this thread's default generator; an error, leaving it
/// as it was, if `bytes` cannot be a state.
pub fn set_rng_state(bytes: &[u8]) -> Result<()> {
    let restored = Generator::from_state(bytes)?;
    with_default_generator(|generator| *generator = restored);
    Ok(())
}
