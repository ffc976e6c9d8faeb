//! The `k` best keys of a query by their scores' bits: the same choice as
//! [`keep_top_k`](crate::sparse_kernel::keep_top_k), without comparing keys to each other.
//!
//! `keep_top_k` partitions the key indices with a comparison that looks up two scores each
//! time, a few hundred thousand dependent look-ups per query at long lengths. A float's bits
//! can be turned into an unsigned integer that orders exactly as `f32::total_cmp` does (for
//! a positive float, set the sign bit; for a negative one, flip every bit). The `k`-th best
//! score is then found a byte at a time, most significant first: count how many scores
//! fall in each of the 256 values of the byte, walk down from the top until the count
//! reaches `k`, and keep only the scores in that bucket for the next byte. After four bytes
//! the threshold is known exactly; one pass over the scores keeps those above it and, of
//! those equal to it, the earliest, as `keep_top_k` breaks ties. The choice is the same set
//! of keys, in the same increasing order (the tests check it).

/// Reusable buffers for [`RadixTopK::select`]: no allocation per query once they have grown.
#[derive(Default)]
pub struct RadixTopK {
    /// The scores' order keys (see [`order_key`]).
    keys: Vec<u32>,
    /// The keys still in the running for the threshold, after each byte.
    candidates: Vec<u32>,
    /// The next byte's candidates, while they are picked from `candidates`.
    next: Vec<u32>,
    /// The chosen indices.
    kept: Vec<u32>,
}

/// An unsigned integer that orders as `f32::total_cmp` orders the floats: larger is better.
///
/// # Shapes
/// One float in, one integer out.
#[inline(always)]
pub fn order_key(score: f32) -> u32 {
    let bits = score.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    }
}

impl RadixTopK {
    /// The indices of the `top_k` best of `scores`, in increasing order; of equal scores the
    /// earlier wins. The same as [`keep_top_k`](crate::sparse_kernel::keep_top_k).
    ///
    /// # Shapes
    /// `scores`: one per visible key. Returns `min(top_k, scores.len())` indices.
    pub fn select(&mut self, scores: &[f32], top_k: usize) -> &[u32] {
        self.kept.clear();
        if top_k >= scores.len() {
            self.kept.extend(0..scores.len() as u32);
            return &self.kept;
        }
        if top_k == 0 {
            return &self.kept;
        }
        // The keys, and the counts of their first byte in the same pass.
        self.keys.clear();
        self.keys.extend(scores.iter().map(|&s| order_key(s)));
        let Threshold {
            key: threshold,
            mut ties,
            equal,
        } = self.threshold(top_k);
        // Every key above the threshold is kept; of those equal to it, the first `ties`.
        // Which keys pass is as good as random, so a branch on it would be mispredicted
        // time and again: every index is written, and the count moves on only for those
        // kept (one slot more than `top_k`, for the writes after the last kept key).
        self.kept.resize(top_k + 1, 0);
        let mut count = 0;
        if ties == equal {
            // Every key equal to the threshold is kept (the usual case: one key is the
            // threshold), so the test is a single comparison.
            for (index, &key) in self.keys.iter().enumerate() {
                self.kept[count] = index as u32;
                count += usize::from(key >= threshold);
            }
        } else {
            for (index, &key) in self.keys.iter().enumerate() {
                let tie = key == threshold && ties > 0;
                self.kept[count] = index as u32;
                count += usize::from(key > threshold || tie);
                ties -= usize::from(tie);
            }
        }
        self.kept.truncate(top_k);
        &self.kept
    }

    /// The `top_k`-th largest of `self.keys` (1 ≤ `top_k` ≤ its length), a byte at a time.
    fn threshold(&mut self, top_k: usize) -> Threshold {
        // `prefix` holds the bytes found so far; `wanted` how many of the keys that share
        // them must still be counted to reach `top_k`.
        let (mut prefix, mut wanted) = (0u32, top_k);
        let (mut from_all, mut shift) = (true, 24);
        loop {
            let pool = if from_all {
                &self.keys
            } else {
                &self.candidates
            };
            let counts = byte_counts(pool, shift);
            // Walk down from the largest byte until `wanted` keys are reached.
            let mut byte = 255;
            while (counts[byte] as usize) < wanted {
                wanted -= counts[byte] as usize;
                byte -= 1;
            }
            prefix |= (byte as u32) << shift;
            if shift == 0 {
                // Every byte is known: the bucket holds the keys equal to the threshold.
                return Threshold {
                    key: prefix,
                    ties: wanted,
                    equal: counts[byte] as usize,
                };
            }
            // Keep the keys of that bucket only; they share every byte found so far.
            let mask = !0u32 << shift;
            let pool = if from_all {
                &self.keys
            } else {
                &self.candidates
            };
            let mut next = std::mem::take(&mut self.next);
            next.resize(pool.len() + 1, 0);
            // Written without a branch, as the kept indices in `select`.
            let mut count = 0;
            for &key in pool {
                next[count] = key;
                count += usize::from(key & mask == prefix);
            }
            next.truncate(count);
            self.next = std::mem::replace(&mut self.candidates, next);
            from_all = false;
            shift -= 8;
        }
    }
}

/// The `top_k`-th largest key, and how its equals fare.
struct Threshold {
    key: u32,
    /// How many keys equal to it are among the `top_k` best.
    ties: usize,
    /// How many keys equal it.
    equal: usize,
}

/// How many of `keys` have each value of the byte at `shift`. Scores of one query share
/// their first byte (the sign and most of the exponent), so counting into one table would
/// add to the same entry again and again, each addition waiting for the one before;
/// four tables, one per key in turn, keep four additions going at once.
fn byte_counts(keys: &[u32], shift: u32) -> [u32; 256] {
    let mut tables = [[0u32; 256]; 4];
    let mut quads = keys.chunks_exact(4);
    for quad in &mut quads {
        for (table, &key) in tables.iter_mut().zip(quad) {
            table[(key >> shift & 0xff) as usize] += 1;
        }
    }
    for &key in quads.remainder() {
        tables[0][(key >> shift & 0xff) as usize] += 1;
    }
    std::array::from_fn(|b| tables.iter().map(|table| table[b]).sum())
}
