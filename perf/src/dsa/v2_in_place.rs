//! Version 2 of chapter 18's DSA kernel: the listing's keys, the attention computed where
//! they lie, within a bound derived from the sizes of the listing.
//!
//! [`dsa_kernel`](ch18_linear_attention::sparse_kernel::dsa_kernel), fast: the same keys
//! chosen, the attention over them computed where the keys lie.
//!
//! A profile of the listing at `T = 16384` finds a query's time in four places: gathering
//! its kept keys and values into a buffer (rows spread over the whole cache, so the copy
//! waits on memory), chapter 9's kernel laying that buffer out again in its own tiles and
//! zeroing them, choosing the best keys by comparisons, and the indexer's scores, which are
//! a matrix product followed by a pass of scalar arithmetic. This version changes each:
//!
//! 1. the indexer's products for a few queries at a time come from the packed GEMM
//!    straight into a buffer reused for every tile, and the weighted `ReLU`s are summed a
//!    chunk of keys at a time, head after head, in the listing's order
//!    ([`index_scores_into`]): the scores are the listing's bit for bit, so the same keys
//!    are chosen;
//! 2. the keys are chosen by their scores' bits ([`RadixTopK`]): the same set;
//! 3. the attention reads each kept key's and value's row where it lies in the cache,
//!    asking for it a few keys ahead: the scores with the vector lanes over the heads, two
//!    lanes a head (its even and odd features, [`Simd::splat_pair`]), so that eight heads
//!    fill sixteen lanes, 8 keys at a time, then a softmax per head, then the weighted
//!    values of four heads at a time, their outputs held in registers while the kept value
//!    rows stream past.
//!
//! The attention adds its products in another order than chapter 9's kernel and computes
//! its softmax in two passes rather than online, so its outputs agree with the listing's
//! within a tolerance the tests derive, not bit for bit. The vector operations are chapter
//! 9's [`Simd`], compiled for AVX-512, AVX2 or any processor, as chapter 16's fast kernel.

use std::ops::Range;

use ch18_linear_attention::sparse_kernel::{Indexer, check_shapes};
use ndarray::{ArrayView2, ArrayViewMut2};
use shared::exact::gemm_with;
use shared::simd::{Isa, Simd, SimdOp, with_isa};
use shared::{Result, Tensor};

use super::top_k_radix::RadixTopK;

/// The inputs as flat rows, and their sizes.
struct Inputs<'a> {
    /// `[T, heads, d]`, scaled by `log₂ e / √d` (the softmax is taken in base 2).
    q: &'a [f32],
    /// `[T, d]`.
    k: &'a [f32],
    /// `[T, d_v]`.
    v: &'a [f32],
    /// The indexer's queries `[T, index_heads, d_I]`, keys `[T, d_I]`, weights
    /// `[T, index_heads]`.
    q_index: &'a [f32],
    k_index: &'a [f32],
    w_index: &'a [f32],
    /// `[T, heads, d, d_v, index_heads, d_I]`.
    sizes: [usize; 6],
    top_k: usize,
    tile: usize,
}

/// [`dsa_kernel`](ch18_linear_attention::sparse_kernel::dsa_kernel), the same keys kept, in
/// the widest vector instructions this processor has.
///
/// # Shapes
/// As [`dsa_kernel`](ch18_linear_attention::sparse_kernel::dsa_kernel): `q`
/// `[T, heads, d]`, `k` `[T, d]`, `v` `[T, d_v]`, the indexer as in [`Indexer`]. Returns
/// `[T, heads, d_v]`.
///
/// # Errors
/// If the shapes do not fit together, or `top_k` or `tile` is 0.
pub fn dsa_kernel_fast(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    indexer: &Indexer,
    top_k: usize,
    tile: usize,
) -> Result<Tensor> {
    dsa_kernel_fast_with(Isa::detect(), q, k, v, indexer, top_k, tile)
}

/// [`dsa_kernel_fast`] compiled for `isa` (the portable version where this processor lacks
/// it), so that the tests can check every version.
///
/// # Shapes
/// As [`dsa_kernel_fast`].
///
/// # Errors
/// As [`dsa_kernel_fast`].
pub fn dsa_kernel_fast_with(
    isa: Isa,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    indexer: &Indexer,
    top_k: usize,
    tile: usize,
) -> Result<Tensor> {
    check_shapes("dsa_kernel_fast", q, k, v, indexer, top_k, tile)?;
    let [t, heads, d] = q.dims();
    let d_v = v.size(1);
    let [_, index_heads, d_index] = indexer.q.dims();
    // Scaled once here, so that each score is already the exponent of a power of two.
    let scale = std::f32::consts::LOG2_E / (d as f32).sqrt();
    let q_scaled: Vec<f32> = q.to_vec().iter().map(|x| x * scale).collect();
    let (k, v) = (k.to_vec(), v.to_vec());
    let (q_index, k_index, w_index) =
        (indexer.q.to_vec(), indexer.k.to_vec(), indexer.w.to_vec());
    let inputs = Inputs {
        q: &q_scaled,
        k: &k,
        v: &v,
        q_index: &q_index,
        k_index: &k_index,
        w_index: &w_index,
        sizes: [t, heads, d, d_v, index_heads, d_index],
        top_k,
        tile,
    };
    let mut out = vec![0.0f32; t * heads * d_v];
    with_isa(
        isa,
        AllQueries {
            inputs: &inputs,
            out: &mut out,
        },
    );
    Ok(Tensor::from_vec(out, &[t, heads, d_v]))
}

/// [`all_queries`] as an operation for [`with_isa`] to compile for one instruction set.
struct AllQueries<'a, 'b> {
    inputs: &'a Inputs<'b>,
    out: &'a mut [f32],
}

impl SimdOp for AllQueries<'_, '_> {
    type Output = ();
    #[inline(always)]
    fn run<S: Simd>(self, simd: S) {
        all_queries(simd, self.inputs, self.out);
    }
}

/// The listing's loop: a tile of queries' index scores, then each query's kept keys and
/// its attention over them. Every buffer is allocated once and reused.
#[inline(always)]
fn all_queries<S: Simd>(simd: S, inputs: &Inputs, out: &mut [f32]) {
    let [t, heads, d, d_v, index_heads, d_index] = inputs.sizes;
    let (mut products, mut scores) = (Vec::new(), Vec::new());
    let mut scratch = Scratch::default();
    let mut top_k = RadixTopK::default();
    // The indexer's products of a tile go through the cache [`KEY_CHUNK`] keys at a time;
    // too few queries at a time and the GEMM packs the keys again for each: 64 took less
    // time than 32, 28 or 56 at `T = 16384`. The scores do not depend on the tiling.
    let tile = inputs.tile.min(INDEX_TILE);
    for start in (0..t).step_by(tile) {
        let queries = start..(start + tile).min(t);
        let index = IndexInputs {
            q: inputs.q_index,
            k: inputs.k_index,
            w: inputs.w_index,
            heads: index_heads,
            d: d_index,
        };
        index_scores_of_tile(&index, queries.clone(), &mut products, &mut scores);
        for (row, i) in scores.chunks(queries.end).zip(queries) {
            // Query i sees keys 0..=i.
            let kept = top_k.select(&row[..=i], inputs.top_k);
            let query = Query {
                q: &inputs.q[i * heads * d..][..heads * d],
                heads,
                d,
                d_v,
            };
            let out_i = &mut out[i * heads * d_v..][..heads * d_v];
            attend(simd, &query, inputs.k, inputs.v, kept, &mut scratch, out_i);
        }
    }
}

/// The most queries the indexer scores at a time.
const INDEX_TILE: usize = 64;

/// The indexer's inputs as flat rows: queries `[T, heads, d]`, keys `[T, d]`, weights
/// `[T, heads]`.
pub struct IndexInputs<'a> {
    /// The indexer's queries, `[T, heads, d]`, flattened.
    pub q: &'a [f32],
    /// The indexer's keys, `[T, d]`, flattened.
    pub k: &'a [f32],
    /// Each query's weights of its index heads, `[T, heads]`, flattened.
    pub w: &'a [f32],
    /// Index heads per query.
    pub heads: usize,
    /// Features of an index head.
    pub d: usize,
}

/// [`index_scores_of_tile`](ch18_linear_attention::sparse_kernel::index_scores_of_tile) bit
/// for bit, into reused buffers: the products of every index head by the packed GEMM (a
/// fused chain in order of the features for every product, as the listing's matrix
/// product), then each row's weighted `ReLU`s summed head after head, starting from 0, each
/// product rounded before it is added, as the listing does.
///
/// # Shapes
/// `products` is scratch, grown to hold the products of up to 512 keys at a
/// time; `scores` becomes `[queries.len(), queries.end]` (0 where a query cannot see the
/// key).
pub fn index_scores_into(
    index: &IndexInputs,
    queries: Range<usize>,
    products: &mut Vec<f32>,
    scores: &mut Vec<f32>,
) {
    index_scores_of_tile(index, queries, products, scores);
}

/// Keys whose products the GEMM writes at a time: `64 · 4 · 512` floats (512 KiB) for the
/// kernel's tiles, which the weighted `ReLU`s then read back from the level-2 cache rather
/// than from memory. (The whole row of products, `64 · 4 · T` floats, is 16 MiB at
/// `T = 16384`.)
const KEY_CHUNK: usize = 512;

/// [`index_scores_into`], inlined into each instruction set's kernel so that the weighted
/// `ReLU`s run in its vectors: the products of [`KEY_CHUNK`] keys at a time, then their
/// weighted `ReLU`s, while the products are in the cache. Each product is a fused chain
/// over the features whatever the keys around it, so the chunks do not change a bit.
#[inline(always)]
fn index_scores_of_tile(
    index: &IndexInputs,
    queries: Range<usize>,
    products: &mut Vec<f32>,
    scores: &mut Vec<f32>,
) {
    let (rows, seen, heads, d) = (queries.len(), queries.end, index.heads, index.d);
    scores.resize(scores.len().max(rows * seen), 0.0);
    let q_rows = &index.q[queries.start * heads * d..][..rows * heads * d];
    if rows * heads == 1 || seen <= 3 {
        // PyTorch's matrix product adds a single row's products, or those of at most three
        // columns, in other orders than the fused chain (see `shared`'s matmul); these
        // small products go through the same tensor product as the listing's.
        let a = Tensor::from_vec(q_rows.to_vec(), &[rows * heads, d]);
        let b = Tensor::from_vec(index.k[..seen * d].to_vec(), &[seen, d]);
        let product = a.matmul(&b.t()).to_vec();
        weighted_relus(index, queries, 0..seen, &product, scores);
        return;
    }
    let a =
        ArrayView2::from_shape((rows * heads, d), q_rows).expect("the index queries");
    for first in (0..seen).step_by(KEY_CHUNK) {
        let keys = first..(first + KEY_CHUNK).min(seen);
        let width = keys.len();
        // Grown once to the largest chunk; every entry is written before it is read.
        products.resize(products.len().max(rows * heads * width), 0.0);
        let k_rows = &index.k[first * d..][..width * d];
        let b = ArrayView2::from_shape((width, d), k_rows).expect("the index keys");
        let c = ArrayViewMut2::from_shape(
            (rows * heads, width),
            &mut products[..rows * heads * width],
        )
        .expect("the products buffer");
        gemm_with(Isa::detect(), a, b.t(), c);
        weighted_relus(index, queries.clone(), keys, products, scores);
    }
}

/// The second half of [`index_scores_of_tile`], for the keys `keys` of `products`
/// `[queries.len() · heads, keys.len()]`: `scores[r, s] = 0 + w[t, 0]·ReLU(products[r, 0,
/// s]) + …` for the keys `s ≤ t` query `t` sees, 0 after.
#[inline(always)]
fn weighted_relus(
    index: &IndexInputs,
    queries: Range<usize>,
    keys: Range<usize>,
    products: &[f32],
    scores: &mut [f32],
) {
    let (seen, heads, width) = (queries.end, index.heads, keys.len());
    for (r, t) in queries.enumerate() {
        let row = &mut scores[r * seen..][keys.clone()];
        let w = &index.w[t * heads..][..heads];
        let visible_here = (t + 1).saturating_sub(keys.start).min(width);
        let (visible, future) = row.split_at_mut(visible_here);
        future.fill(0.0);
        let head_rows = &products[r * heads * width..][..heads * width];
        // A chunk of keys at a time, every head added into it before the next chunk: one
        // pass over the row, each score still `0 + w_0·ReLU(·) + w_1·ReLU(·) + …` in order.
        const CHUNK: usize = 64;
        for (c, scores) in visible.chunks_mut(CHUNK).enumerate() {
            let mut sums = [0.0f32; CHUNK];
            for (&weight, head) in w.iter().zip(head_rows.chunks_exact(width)) {
                let head = &head[c * CHUNK..][..scores.len()];
                for (sum, &product) in sums.iter_mut().zip(head) {
                    *sum += weight * product.max(0.0);
                }
            }
            scores.copy_from_slice(&sums[..scores.len()]);
        }
    }
}

/// One query's heads, scaled, and the sizes.
struct Query<'a> {
    /// `[heads, d]`, scaled by `log₂ e / √d`.
    q: &'a [f32],
    heads: usize,
    d: usize,
    d_v: usize,
}

/// A query's buffers, allocated once and reused for every query.
#[derive(Default)]
struct Scratch {
    /// A group of the query's heads by pairs of features, `[⌈d/2⌉, lanes]`: lane `2h + e`
    /// of row `p` is feature `2p + e` of the group's head `h`, 0 past the last head or
    /// feature.
    q_pairs: Vec<f32>,
    /// The group's scores, then its weights, two keys to a vector (see
    /// [`Simd::splat_pair`]): `[⌈kept/2⌉, lanes]`.
    weights: Vec<f32>,
}

/// Keys whose scores grow at once: as many independent sums, so that the processor
/// overlaps their multiply-adds rather than wait for each before the next. Even, so that
/// a block's keys pair up. 8 rather than 16: with two features a multiply-add, 8 sums
/// keep the multiply-add units as busy, and 8 rows' addresses stay in the registers where
/// 16 were partly reloaded from the stack (5 % less time at `T = 16384`).
const KEYS_AT_ONCE: usize = 8;

/// Where the weight of kept key `j` for head `h` of a group lies in [`Scratch::weights`]:
/// keys `2m` and `2m + 1` share vector `m`, each group of four lanes holding two heads of
/// the first key, then the same two heads of the second.
#[inline(always)]
fn weight_at(lanes: usize, j: usize, h: usize) -> usize {
    j / 2 * lanes + h / 2 * 4 + j % 2 * 2 + h % 2
}

/// Softmax attention of the query's heads over the keys `kept`, read in place from `k`
/// `[T, d]` and `v` `[T, d_v]`; `out` `[heads, d_v]` is written.
///
/// The vector lanes run over the heads for the scores, two lanes a head (its even and its
/// odd features, see [`Simd::splat_pair`]), so that eight heads fill AVX-512's sixteen
/// lanes: `s_j += [k_j[2p], k_j[2p+1], …] · q_pairs[p]` takes two features of a key for
/// every head in one multiply-add, and only one addition of lanes per head and key is
/// needed at the end (a dot product along the features would end in a sum across all the
/// lanes, several instructions per head and key). The softmax's maximum and sum then run
/// lane by lane too, and the weighted values run along the features.
#[inline(always)]
fn attend<S: Simd>(
    simd: S,
    query: &Query,
    k: &[f32],
    v: &[f32],
    kept: &[u32],
    scratch: &mut Scratch,
    out: &mut [f32],
) {
    let (n, heads, d, d_v) = (kept.len(), query.heads, query.d, query.d_v);
    let lanes = S::LANES;
    let group_heads = lanes / 2;
    let weights = &mut scratch.weights;
    weights.resize(weights.len().max(n.div_ceil(2) * lanes), 0.0);
    for group in (0..heads).step_by(group_heads) {
        let in_group = (heads - group).min(group_heads);
        let q_pairs = &mut scratch.q_pairs;
        q_pairs.clear();
        q_pairs.resize(d.div_ceil(2) * lanes, 0.0);
        for (h, q_h) in query.q[group * d..][..in_group * d]
            .chunks_exact(d)
            .enumerate()
        {
            for (f, &x) in q_h.iter().enumerate() {
                q_pairs[f / 2 * lanes + 2 * h + f % 2] = x;
            }
        }
        let scores = KeyScores { q_pairs, k, d };
        let mut blocks = kept.chunks_exact(KEYS_AT_ONCE);
        let mut j = 0;
        for block in &mut blocks {
            for &ahead in kept.iter().skip(j + AHEAD).take(KEYS_AT_ONCE) {
                prefetch(&k[ahead as usize * d..][..d]);
            }
            let acc = scores.block::<S, KEYS_AT_ONCE>(simd, block);
            for (m, pair) in acc.chunks_exact(2).enumerate() {
                let two_keys = simd.add_pairs(pair[0], pair[1]);
                simd.store(two_keys, &mut weights[(j / 2 + m) * lanes..]);
            }
            j += KEYS_AT_ONCE;
        }
        for pair in blocks.remainder().chunks(2) {
            let [first] = scores.block::<S, 1>(simd, &pair[..1]);
            // A lone last key is paired with a key that scores -∞: its weight is 0.
            let second = match pair {
                [_, key] => scores.block::<S, 1>(simd, &[*key])[0],
                _ => simd.splat(f32::NEG_INFINITY),
            };
            simd.store(simd.add_pairs(first, second), &mut weights[j / 2 * lanes..]);
            j += 2;
        }
        // The softmax of every head of the group, lane by lane; each head's two keys'
        // lanes are then combined, so that both hold the head's maximum (and its sum).
        let pairs = n.div_ceil(2);
        let mut max = simd.splat(f32::NEG_INFINITY);
        for m in 0..pairs {
            max = simd.max(max, simd.load(&weights[m * lanes..]));
        }
        let max = simd.max(max, simd.swap_keys(max));
        let mut sum = simd.splat(0.0);
        for m in 0..pairs {
            let at = &mut weights[m * lanes..];
            let e = simd.exp2_flushed(simd.sub(simd.load(at), max));
            simd.store(e, at);
            sum = simd.add(sum, e);
        }
        let mut sums = [0.0; 16];
        simd.store(simd.add(sum, simd.swap_keys(sum)), &mut sums);
        // The weighted values, [`HEADS_AT_ONCE`] heads at a time, so that each value row
        // is read once for all of them.
        let mut h = 0;
        while h < in_group {
            let at_once = (in_group - h).min(HEADS_AT_ONCE);
            let out_heads = &mut out[(group + h) * d_v..][..at_once * d_v];
            let rows = Rows { kept, v, d_v };
            if at_once == HEADS_AT_ONCE {
                weighted_rows::<S, HEADS_AT_ONCE>(simd, weights, h, &rows, out_heads);
            } else {
                for (a, out_h) in out_heads.chunks_exact_mut(d_v).enumerate() {
                    weighted_rows::<S, 1>(simd, weights, h + a, &rows, out_h);
                }
            }
            for (a, out_h) in out_heads.chunks_exact_mut(d_v).enumerate() {
                let sum = sums[weight_at(lanes, 0, h + a)];
                for o in out_h.iter_mut() {
                    *o /= sum;
                }
            }
            h += at_once;
        }
    }
}

/// A group of heads by pairs of features, and the keys they score.
struct KeyScores<'a> {
    /// `[⌈d/2⌉, lanes]`, see [`Scratch::q_pairs`].
    q_pairs: &'a [f32],
    /// `[T, d]`.
    k: &'a [f32],
    d: usize,
}

impl KeyScores<'_> {
    /// The scores of the `B` keys `keys` for every head of the group, each head's even
    /// and odd features in two lanes (`B` independent sums).
    ///
    /// # Shapes
    /// `keys`: `B` indices; returns `B` vectors.
    #[inline(always)]
    fn block<S: Simd, const B: usize>(&self, simd: S, keys: &[u32]) -> [S::V; B] {
        let (d, lanes) = (self.d, S::LANES);
        let rows: [&[f32]; B] =
            std::array::from_fn(|b| &self.k[keys[b] as usize * d..][..d]);
        let mut acc = [simd.splat(0.0); B];
        for p in 0..d / 2 {
            let q_p = simd.load(&self.q_pairs[p * lanes..]);
            for (acc, row) in acc.iter_mut().zip(&rows) {
                *acc = simd.mul_add(simd.splat_pair(&row[2 * p..]), q_p, *acc);
            }
        }
        if d % 2 == 1 {
            // The last feature alone: its odd lanes of `q_pairs` are 0.
            let q_p = simd.load(&self.q_pairs[d / 2 * lanes..]);
            for (acc, row) in acc.iter_mut().zip(&rows) {
                *acc = simd.mul_add(simd.splat(row[d - 1]), q_p, *acc);
            }
        }
        acc
    }
}

/// How many keys ahead a key's row is asked for: far enough that it has arrived when its
/// turn comes, near enough that it is still in the cache.
const AHEAD: usize = 16;

/// Asks the processor to start bringing `row` into its cache. The kept rows lie anywhere
/// in the cache of keys and values, where the processor's own prefetching, which follows
/// regular strides, cannot guess them; without the hint each row's first use waits on
/// memory.
#[inline(always)]
fn prefetch(row: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    for line in row.chunks(16) {
        // SAFETY: a prefetch is only a hint: it never faults and reads or writes no value
        // the program sees; the address is that of a live slice.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

/// Heads whose weighted values grow at once, each value row read once for all of them.
const HEADS_AT_ONCE: usize = 4;

/// The kept keys' value rows, where they lie: `v` is `[T, d_v]`.
struct Rows<'a> {
    kept: &'a [u32],
    v: &'a [f32],
    d_v: usize,
}

/// For each of `H` heads `a` from `first`, `out_a = Σ_j w(j, a) · v[kept[j]]`, the weights
/// where [`weight_at`] puts them: four vectors of every head's output stay in registers
/// while each kept value row streams past once; the features after the last whole block,
/// one vector and then one float at a time.
///
/// # Shapes
/// `weights`: `[⌈kept/2⌉, lanes]`, `out`: `[H, d_v]`.
#[inline(always)]
fn weighted_rows<S: Simd, const H: usize>(
    simd: S,
    weights: &[f32],
    first: usize,
    rows: &Rows,
    out: &mut [f32],
) {
    const BLOCK: usize = 4;
    let (kept, v, d_v) = (rows.kept, rows.v, rows.d_v);
    let w = |j: usize, a: usize| weights[weight_at(S::LANES, j, first + a)];
    let block = BLOCK * S::LANES;
    let whole_blocks = d_v / block * block;
    for f in (0..whole_blocks).step_by(block) {
        let mut acc = [[simd.splat(0.0); BLOCK]; H];
        for (j, &key) in kept.iter().enumerate() {
            if let Some(&ahead) = kept.get(j + AHEAD) {
                prefetch(&v[ahead as usize * d_v + f..][..block]);
            }
            let v_row = &v[key as usize * d_v + f..][..block];
            let values = [
                simd.load(v_row),
                simd.load(&v_row[S::LANES..]),
                simd.load(&v_row[2 * S::LANES..]),
                simd.load(&v_row[3 * S::LANES..]),
            ];
            for (a, acc) in acc.iter_mut().enumerate() {
                let w = simd.splat(w(j, a));
                for (acc, &value) in acc.iter_mut().zip(&values) {
                    *acc = simd.mul_add(w, value, *acc);
                }
            }
        }
        for (a, acc) in acc.iter().enumerate() {
            for (b, acc) in acc.iter().enumerate() {
                simd.store(*acc, &mut out[a * d_v + f + b * S::LANES..]);
            }
        }
    }
    let whole = d_v / S::LANES * S::LANES;
    for a in 0..H {
        for f in (whole_blocks..whole).step_by(S::LANES) {
            let mut acc = simd.splat(0.0);
            for (j, &key) in kept.iter().enumerate() {
                let value = simd.load(&v[key as usize * d_v + f..]);
                acc = simd.mul_add(simd.splat(w(j, a)), value, acc);
            }
            simd.store(acc, &mut out[a * d_v + f..]);
        }
        for f in whole..d_v {
            let mut sum = 0.0;
            for (j, &key) in kept.iter().enumerate() {
                sum += w(j, a) * v[key as usize * d_v + f];
            }
            out[a * d_v + f] = sum;
        }
    }
}
