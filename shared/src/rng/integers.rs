//! Random integers: `torch.randint(low, high, shape)`.
//!
//! Each value is one draw reduced modulo the width of the range, `low + draw % (high - low)`.
//! The draw is one 32-bit `random()` when the range is narrower than `2^28`, and a 64-bit
//! `random64()` (two draws) otherwise (PyTorch's CPU kernel switches at `2^28`, not at
//! `2^32`: the fixtures check ranges on both sides). The modulo makes small values very slightly more
//! likely when the range does not divide `2^32`; PyTorch accepts that bias, and so must we
//! to draw its numbers.

use super::{Generator, with_default_generator};
use crate::error::{Error, Result, or_panic};
use crate::ops::views::Position;
use crate::tensor::Tensor;

impl Generator {
    /// One integer in `[low, low + range)`, as PyTorch's `random_(from, to)` draws it.
    fn next_below(&mut self, low: i64, range: u64) -> i64 {
        let draw = if range >= 1 << 28 {
            self.random64()
        } else {
            u64::from(self.random())
        };
        // Two's complement wrap-around, as the C++ adds the offset in 64-bit integers.
        low.wrapping_add((draw % range) as i64)
    }

    /// `random_(low, high)` on an int64 buffer: one value per element, in order.
    ///
    /// # Shapes
    /// `out`: any length.
    pub fn fill_randint(&mut self, out: &mut [i64], low: i64, high: i64) {
        let range = high.wrapping_sub(low) as u64;
        for slot in out {
            *slot = self.next_below(low, range);
        }
    }
}

/// `torch.randint(low, high, shape)`: integers drawn uniformly from `[low, high)` by the
/// default generator, as `torch.int64`.
///
/// ```
/// use shared::{manual_seed, randint};
/// manual_seed(0);
/// let ids = randint(0, 50_257, &[2, 4]);
/// assert_eq!(ids.sizes(), [2, 4]);
/// ```
///
/// # Shapes
/// Returns `shape`. `low < high`, any integers (an `i64`, or a `usize` such as a vocabulary
/// size).
pub fn f_randint(
    low: impl Position,
    high: impl Position,
    shape: &[usize],
) -> Result<Tensor<i64>> {
    let (low, high) = (low.to_i64(), high.to_i64());
    if low >= high {
        return Err(Error::InvalidArgument {
            op: "randint",
            detail: format!(
                "random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            ),
        });
    }
    let mut values = crate::alloc::f_alloc("randint", shape)?;
    values.resize(shape.iter().product(), 0);
    with_default_generator(|g| g.fill_randint(&mut values, low, high));
    Ok(crate::storage::from_checked_vec(values, shape))
}

/// Plain form of [`f_randint`].
#[track_caller]
pub fn randint(
    low: impl Position,
    high: impl Position,
    shape: &[usize],
) -> Tensor<i64> {
    or_panic(f_randint(low, high, shape))
}
