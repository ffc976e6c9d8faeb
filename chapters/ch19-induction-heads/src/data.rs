//! The data: random tokens that end with a repeat.
//!
//! An induction head completes `… A B … A` with `B`: it finds the earlier occurrence of the
//! current token and copies the token that followed it. To make the model need one, every
//! sequence ends with a copy of the `k` tokens just before it, and `k` changes from sequence
//! to sequence, so the copy's source is never at the same distance. With a fixed distance
//! (every sequence a random half, twice) position alone says where to copy from, and the
//! model learns that instead.

use shared::{Tensor, cat, randint};

/// How many token ids there are, `0..VOCAB`.
pub const VOCAB: usize = 24;
/// Tokens per sequence (the context length).
pub const TOKENS: usize = 32;
/// The shortest and the longest repeated segment of [`Repeats::Variable`].
pub const K_MIN: usize = 6;
/// See [`K_MIN`].
pub const K_MAX: usize = 15;

/// Where the repeat sits in a sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repeats {
    /// The last `k` tokens copy the `k` before them, `k` drawn in `K_MIN..=K_MAX` per
    /// sequence.
    Variable,
    /// A random half of `TOKENS / 2` tokens, twice: the repeat always starts at the middle.
    Fixed,
}

/// A batch and the length of each sequence's repeated segment.
#[derive(Clone, Debug)]
pub struct Batch {
    /// `[n, TOKENS]` token ids.
    pub ids: Tensor<i64>,
    /// `[n]` segment lengths `k`: the last `k` tokens repeat the `k` before them.
    pub ks: Vec<usize>,
}

impl Repeats {
    /// `n` sequences drawn from the default generator: for `Variable`, `randint(0, VOCAB,
    /// (n, TOKENS))` then `randint(K_MIN, K_MAX + 1, (n,))`; for `Fixed`, `randint(0,
    /// VOCAB, (n, TOKENS / 2))` written twice.
    ///
    /// # Shapes
    /// Returns `ids`: `[n, TOKENS]`, `ks`: `n` lengths.
    // ANCHOR: draw
    pub fn draw(self, n: usize) -> Batch {
        match self {
            Repeats::Variable => {
                let mut ids = randint(0, VOCAB, &[n, TOKENS]).to_vec();
                let ks = randint(K_MIN, K_MAX + 1, &[n]).to_vec();
                let ks: Vec<usize> = ks.into_iter().map(|k| k as usize).collect();
                for (row, &k) in ids.chunks_mut(TOKENS).zip(&ks) {
                    // row[T-k..] = row[T-2k..T-k]
                    row.copy_within(TOKENS - 2 * k..TOKENS - k, TOKENS - k);
                }
                Batch {
                    ids: Tensor::from_vec(ids, &[n, TOKENS]),
                    ks,
                }
            }
            Repeats::Fixed => {
                let half = randint(0, VOCAB, &[n, TOKENS / 2]);
                Batch {
                    ids: cat(&[&half, &half], 1),
                    ks: vec![TOKENS / 2; n],
                }
            }
        }
    }
    // ANCHOR_END: draw
}
