//! The Mersenne Twister MT19937: where every random bit of PyTorch's CPU generator comes from.
//!
//! The twister keeps 624 words of 32 bits. Once every 624 draws it "twists" the whole table in
//! place (a linear recurrence over GF(2)), and each draw reads the next word and "tempers" it
//! (a few shifts and masks that spread its bits). This is exactly C++'s `std::mt19937` and
//! PyTorch's `at::mt19937`, seeded with a 32-bit number by Matsumoto and Nishimura's
//! `init_genrand`.

/// Number of 32-bit words in the state.
pub(super) const N: usize = 624;
/// Offset of the word that the twist mixes in.
const M: usize = 397;
/// The twist matrix's last row, applied when the shifted-in word is odd.
const MATRIX_A: u32 = 0x9908_B0DF;
/// The twist takes the top bit of one word ...
const UPPER_MASK: u32 = 0x8000_0000;
/// ... and the low 31 bits of the next.
const LOWER_MASK: u32 = 0x7FFF_FFFF;

/// A Mersenne Twister state: the 624 words, the index of the next one to read, and how many
/// draws are left before the next twist, counted as PyTorch's `at::mt19937` counts them (its
/// `next_` and `left_`, which `torch.get_rng_state()` saves).
#[derive(Clone)]
pub(super) struct Mt19937 {
    words: [u32; N],
    /// Index of the next word to temper.
    next: usize,
    /// One more than the words left before a twist: 1 means "twist before the next draw".
    left: usize,
}

impl Mt19937 {
    /// `init_genrand(seed)`: fills the table from one 32-bit seed.
    pub(super) fn new(seed: u32) -> Self {
        let mut words = [0u32; N];
        words[0] = seed;
        for i in 1..N {
            let prev = words[i - 1];
            // Knuth's multiplier; the `+ i` keeps a zero seed from giving an all-zero table.
            words[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        // The first draw twists the freshly seeded table before reading from it.
        Self {
            words,
            next: 0,
            left: 1,
        }
    }

    /// One tempered 32-bit output.
    pub(super) fn next_u32(&mut self) -> u32 {
        self.left -= 1;
        if self.left == 0 {
            self.twist();
        }
        let mut y = self.words[self.next];
        self.next += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9D2C_5680;
        y ^= (y << 15) & 0xEFC6_0000;
        y ^ (y >> 18)
    }

    /// Regenerates all 624 words in place, in index order.
    ///
    /// In place matters: word `i + M` has already been replaced for `i >= N - M`, and the last
    /// word pairs with the *new* word 0. That is the reference algorithm, not a shortcut.
    fn twist(&mut self) {
        for i in 0..N {
            let next = self.words[(i + 1) % N];
            let y = (self.words[i] & UPPER_MASK) | (next & LOWER_MASK);
            let odd = if next & 1 == 1 { MATRIX_A } else { 0 };
            self.words[i] = self.words[(i + M) % N] ^ (y >> 1) ^ odd;
        }
        self.next = 0;
        self.left = N;
    }

    /// The state as `at::mt19937` keeps it: the 624 words, `next_` and `left_`.
    pub(super) fn parts(&self) -> (&[u32; N], usize, usize) {
        (&self.words, self.next, self.left)
    }

    /// A state from its parts, if they can be one: `left` in `1..=N`, and `next` where
    /// `left` puts it (`N + 1 − left`; a freshly seeded table, `left` 1, reads 0 too).
    pub(super) fn from_parts(
        words: [u32; N],
        next: usize,
        left: usize,
    ) -> Option<Self> {
        let consistent = (1..=N).contains(&left)
            && (next == N + 1 - left || (left == 1 && next == 0));
        consistent.then_some(Self { words, next, left })
    }
}

#[cfg(test)]
mod tests {
    use super::Mt19937;

    #[test]
    fn matches_std_mt19937_default_seed() {
        // C++ requires `std::mt19937` seeded with 5489 to give 4123659995 as its 10000th draw.
        let mut mt = Mt19937::new(5489);
        assert_eq!(mt.next_u32(), 3_499_211_612);
        let ten_thousandth = (1..10_000).map(|_| mt.next_u32()).last();
        assert_eq!(ten_thousandth, Some(4_123_659_995));
    }

    #[test]
    fn seed_zero_first_draws() {
        let mut mt = Mt19937::new(0);
        let draws: Vec<u32> = (0..3).map(|_| mt.next_u32()).collect();
        assert_eq!(draws, [2_357_136_044, 2_546_248_239, 3_071_714_933]);
    }
}
