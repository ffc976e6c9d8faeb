//! The `k` best keys of a query by their scores' bits: the same choice as
//! [`keep_top_k`](ch18_linear_attention::sparse_kernel::keep_top_k), without comparing keys
//! to each other.
//!
//! `keep_top_k` partitions the key indices with a comparison that looks up two scores each
//! time, a few hundred thousand dependent look-ups per query at long lengths. A float's
//! bits can be turned into an unsigned integer that orders exactly as `f32::total_cmp` does
//! (for a positive float, set the sign bit; for a negative one, flip every bit). The `k`-th
//! best score is then found a byte at a time, most significant first: count how many scores
//! fall in each of the 256 values of the byte, walk down from the top until the count
//! reaches `k`, and keep only the scores in that bucket for the next byte. After four bytes
//! the threshold is known exactly; one pass over the scores keeps those above it and, of
//! those equal to it, the earliest, as `keep_top_k` breaks ties. The choice is the same set
//! of keys, in the same increasing order (the tests check it).
//!
//! Most keys are far below the threshold, and need not take part in the search for it. An
//! eighth of the scores, sampled, give a bound a little below it: one pass over the scores
//! keeps the keys at or above the bound (a few more than `k`, [`super::top_k_compact`]),
//! and the threshold is looked for among those alone. That is exact whatever the sample: if
//! fewer than `k` keys reach the bound, the search runs over every key.

use shared::simd::Isa;

use super::top_k_compact::{
    keys_at_least, keys_between, order_key, payload_at_least,
};

/// Reusable buffers for [`RadixTopK::select`]: no allocation per query once they have
/// grown.
pub struct RadixTopK {
    /// The instruction set of the passes over every score ([`super::top_k_compact`]).
    isa: Isa,
    /// The order keys (see [`order_key`]) of a sample of the scores.
    sample: Vec<u32>,
    /// The candidates' order keys, the threshold is looked for in.
    keys: Vec<u32>,
    /// The candidates' indices.
    indices: Vec<u32>,
    /// The keys still in the running for the threshold after each byte, and the next
    /// byte's, while they are picked.
    buffers: [Vec<u32>; 2],
    /// The chosen indices.
    kept: Vec<u32>,
}

impl Default for RadixTopK {
    fn default() -> RadixTopK {
        RadixTopK::with_isa(Isa::detect())
    }
}

/// One score in this many is sampled for the bound below which no key can be kept.
const SAMPLE_EVERY: usize = 8;

impl RadixTopK {
    /// Buffers whose passes over every score run on `isa` (the portable version where
    /// this processor lacks it), so that the tests can check every version.
    ///
    /// # Shapes
    /// None: the scores come with each call.
    pub fn with_isa(isa: Isa) -> RadixTopK {
        RadixTopK {
            isa,
            sample: Vec::new(),
            keys: Vec::new(),
            indices: Vec::new(),
            buffers: [Vec::new(), Vec::new()],
            kept: Vec::new(),
        }
    }

    /// The indices of the `top_k` best of `scores`, in increasing order; of equal scores
    /// the earlier wins. The same as
    /// [`keep_top_k`](ch18_linear_attention::sparse_kernel::keep_top_k).
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
        let bound = self.sample_bound(scores, top_k);
        let mut count = self.candidates(scores, bound);
        if count < top_k {
            // Fewer than `top_k` at or above the bound (scores not spread as the sample
            // said): the best are not all among them, so every score is a candidate.
            count = self.candidates(scores, 0);
        }
        let (keys, indices) = (&self.keys[..count], &self.indices[..count]);
        let threshold = threshold(self.isa, keys, top_k, &mut self.buffers);
        if threshold.ties == threshold.equal {
            // Every key equal to the threshold is kept (the usual case: one key is the
            // threshold), so one comparison decides.
            self.kept.resize(count + 16, 0);
            payload_at_least(self.isa, keys, indices, threshold.key, &mut self.kept);
        } else {
            keep_ties(keys, indices, threshold, top_k, &mut self.kept);
        }
        self.kept.truncate(top_k);
        &self.kept
    }

    /// A bound at or below the `top_k`-th best score's order key, in all likelihood: most
    /// keys are far below it, and a sample of the scores tells where it lies. The bound
    /// is the sample's key a little past its share of `top_k`, so that a few more than
    /// `top_k` keys reach it; 0 (every key) when the sample is too small to say.
    fn sample_bound(&mut self, scores: &[f32], top_k: usize) -> u32 {
        let n = scores.len();
        self.sample.clear();
        self.sample
            .extend(scores.iter().step_by(SAMPLE_EVERY).map(|&s| order_key(s)));
        let sampled = self.sample.len();
        // The sample's share of `top_k`, a quarter more, and 16 more: several standard
        // deviations of how many of the sample beat the threshold.
        let rank = (5 * top_k * sampled).div_ceil(4 * n) + 16;
        if rank >= sampled {
            return 0;
        }
        threshold(self.isa, &self.sample, rank, &mut self.buffers).key
    }

    /// Puts in `keys` and `indices` the order keys and indices of the scores whose key is
    /// at least `bound`; returns how many.
    fn candidates(&mut self, scores: &[f32], bound: u32) -> usize {
        // Grown, never cleared: every slot read is written first.
        let slots = scores.len() + 16;
        if self.keys.len() < slots {
            self.keys.resize(slots, 0);
            self.indices.resize(slots, 0);
        }
        keys_at_least(self.isa, scores, bound, &mut self.keys, &mut self.indices)
    }
}

/// Writes into `kept` the `indices` of every key above the threshold and, of those equal
/// to it, the first `threshold.ties`: `top_k` in all, in increasing order.
fn keep_ties(
    keys: &[u32],
    indices: &[u32],
    threshold: Threshold,
    top_k: usize,
    kept: &mut Vec<u32>,
) {
    let Threshold {
        key: threshold,
        mut ties,
        ..
    } = threshold;
    // Written without a branch, as in `super::top_k_compact` (one slot more than `top_k`
    // for the writes after the last kept key), into a plain slice: the vector's length
    // would otherwise be read again after every write.
    kept.resize(top_k + 1, 0);
    let (slots, mut count) = (&mut kept[..], 0);
    for (&key, &index) in keys.iter().zip(indices) {
        let tie = key == threshold && ties > 0;
        slots[count] = index;
        count += usize::from(key > threshold || tie);
        ties -= usize::from(tie);
    }
}

/// The `top_k`-th largest of `keys` (1 ≤ `top_k` ≤ its length), a byte at a time;
/// `buffers` hold the candidates between bytes.
fn threshold(
    isa: Isa,
    keys: &[u32],
    top_k: usize,
    buffers: &mut [Vec<u32>; 2],
) -> Threshold {
    let [candidates, next] = buffers;
    // `prefix` holds the bytes found so far; `wanted` how many of the keys that share
    // them must still be counted to reach `top_k`.
    let (mut prefix, mut wanted) = (0u32, top_k);
    let (mut from_all, mut shift) = (true, 24);
    loop {
        let pool: &[u32] = if from_all { keys } else { candidates };
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
        // Keep the keys of that bucket only: they share every byte found so far, the rest
        // of their bits anything.
        if next.len() < pool.len() + 16 {
            next.resize(pool.len() + 16, 0);
        }
        let count = keys_between(isa, pool, prefix, prefix | !(!0u32 << shift), next);
        next.truncate(count);
        std::mem::swap(candidates, next);
        from_all = false;
        shift -= 8;
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
