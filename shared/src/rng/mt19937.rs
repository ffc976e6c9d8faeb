//! The Mersenne Twister MT19937: where every random bit of PyTorch's CPU generator comes from.
//!
//! The twister keeps 624 words of 32 bits. Once every 624 draws it "twists" the whole table in
//! place (a linear recurrence over GF(2)), and each draw reads the next word and "tempers" it
//! (a few shifts and masks that spread its bits). This is exactly C++'s `std::mt19937` and
//! PyTorch's `at::mt19937`, seeded with a 32-bit number by Matsumoto and Nishimura's
//! `init_genrand`.

/// Number of 32-bit words in the state.
const N: usize = 624;
/// Offset of the word that the twist mixes in.
const M: usize = 397;
/// The twist matrix's last row, applied when the shifted-in word is odd.
const MATRIX_A: u32 = 0x9908_B0DF;
/// The twist takes the top bit of one word ...
const UPPER_MASK: u32 = 0x8000_0000;
/// ... and the low 31 bits of the next.
const LOWER_MASK: u32 = 0x7FFF_FFFF;

/// A Mersenne Twister state: the 624 words and the index of the next one to read.
#[derive(Clone)]
pub(super) struct Mt19937 {
    words: [u32; N],
    /// Index of the next word to temper; `N` means "twist before the next draw".
    pos: usize,
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
        Self { words, pos: N }
    }

    /// One tempered 32-bit output.
    pub(super) fn next_u32(&mut self) -> u32 {
        if self.pos == N {
            self.twist();
        }
        let mut y = self.words[self.pos];
        self.pos += 1;
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
        self.pos = 0;
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
