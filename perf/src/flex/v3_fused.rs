//! Version 3 of chapter 16's kernel: chapter 9's fused arithmetic on the listing's tiles,
//! within a bound derived from the sizes of the listing.
//!
//! The kernel of [`ch16_flex_attention::kernel`] at chapter 9's speed: the same tiles, the
//! same score_mod and mask_mod, but the arithmetic of chapter 9's kernel, so not the
//! listing's bits.
//!
//! [`super::v2_same_bits`] keeps the listing's additions in the listing's order: every step
//! of a dot product is a multiplication and then an addition, two roundings. Here, as in
//! chapter 9's kernel:
//! - every step of the scores and of the weighted values is one fused multiply-add, one
//!   rounding, half the instructions;
//! - the queries are multiplied by `1/√d` once, when they are copied, rather than every
//!   score after its dot product;
//! - the weights are powers of two: `e^(s - m) = 2^(s·log₂ e - m·log₂ e)`, the argument one
//!   fused multiply-add and [`Simd::exp2_flushed`] shorter than `exp`; the running sum is
//!   kept in vector lanes and added up once at the end of a row;
//! - 6 queries at a time with AVX-512 (24 of its 32 registers hold 6 queries × 64 keys of
//!   scores, or 6 queries × 64 features of output), each key and value row loaded once for
//!   all six (the one or two queries a tile has left over go two at a time);
//! - where the mask hides every key of a stretch of 64 from all the queries of a group
//!   (the upper half of a tile on the diagonal), the stretch's scores and weighted values
//!   are not computed.
//!
//! What stays the listing's: the block mask's tiles, the mask_mod called on every entry of
//! a partial tile and never on a full one, the score_mod applied to every visible score on
//! a whole row of a tile, both monomorphised. So the result differs from the listing's by
//! roundings only; the tests hold the two within a bound derived from the sizes.
//!
//! Beyond the listing's memory it keeps one key/value head's keys (transposed, tile by
//! tile) and values in its own layout, padded to whole vectors, `O(keys · d)`, and one
//! tile of scores.

use shared::Result;
use shared::Tensor;
use shared::simd::Isa;
use shared::simd::exp2_flushed_scalar;
use shared::simd::{Simd, SimdOp, with_isa};

use ch16_flex_attention::block_mask::{BlockMask, TileVisit};
use ch16_flex_attention::kernel::{KernelOutput, Visits};
use ch16_flex_attention::kv_rows::{KvRows, elements};
use ch16_flex_attention::recipes::{MaskMod, ScoreMod};

use super::inputs::Inputs;

/// The most rows of a tile's last group that go in a smaller group of their own.
const TAIL: usize = 2;

/// Vectors of keys whose scores one group of queries holds in registers at once: 64 keys
/// with AVX-512, 32 with AVX2, 16 portable.
const KV: usize = 4;

/// [`flex_kernel_over`](ch16_flex_attention::kernel::flex_kernel_over) with chapter 9's
/// arithmetic (fused multiply-adds, weights in base 2), in the widest vector instructions
/// this processor has: the same tiles and mods, within roundings of the listing.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`; `kv` of sizes `[batch, kv_heads, keys, d, d_v]`,
/// `heads` a multiple of `kv_heads`; `block_mask` for `queries × keys`. Returns
/// `[batch, heads, queries, d_v]` and `[batch, heads, queries]`.
pub fn flex_kernel_fused(
    q: &Tensor, // [batch, heads, queries, d]
    kv: &impl KvRows,
    block_mask: &BlockMask,
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod,
) -> Result<KernelOutput> {
    flex_kernel_fused_with(Isa::detect(), q, kv, block_mask, score_mod, mask_mod)
}

/// [`flex_kernel_fused`] compiled for `isa` (the portable version where this processor
/// lacks it), so that the tests can check every version.
///
/// # Shapes
/// As [`flex_kernel_fused`].
pub fn flex_kernel_fused_with(
    isa: Isa,
    q: &Tensor, // [batch, heads, queries, d]
    kv: &impl KvRows,
    block_mask: &BlockMask,
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod,
) -> Result<KernelOutput> {
    let q_values = elements(q);
    let inputs = Inputs::checked("flex_kernel_fused", q, &q_values, kv, block_mask)?;
    let [batch, heads, queries, _] = inputs.dims;
    let d_v = inputs.d_v;
    let mut out = vec![0.0f32; batch * heads * queries * d_v];
    let mut lse = vec![f32::NEG_INFINITY; batch * heads * queries];
    // A processor without `isa` runs the portable kernel.
    let isa = if isa.is_available() {
        isa
    } else {
        Isa::Portable
    };
    let all = AllHeads {
        inputs: &inputs,
        score_mod: &score_mod,
        mask_mod: &mask_mod,
        out: &mut out,
        lse: &mut lse,
    };
    let visits = with_isa(isa, all);
    Ok(KernelOutput {
        out: Tensor::from_vec(out, &[batch, heads, queries, d_v]),
        lse: Tensor::from_vec(lse, &[batch, heads, queries]),
        visits,
    })
}

/// [`all_heads`] as an operation for [`with_isa`], which runs it compiled for one
/// instruction set; the register tiles follow the instruction set.
struct AllHeads<'a, 'i, K, Sm, Mm> {
    inputs: &'a Inputs<'i, K>,
    score_mod: &'a Sm,
    mask_mod: &'a Mm,
    out: &'a mut [f32],
    lse: &'a mut [f32],
}

impl<K: KvRows, Sm: ScoreMod, Mm: MaskMod> SimdOp for AllHeads<'_, '_, K, Sm, Mm> {
    type Output = Visits;

    #[inline(always)]
    fn run<S: Simd>(self, simd: S) -> Visits {
        let AllHeads {
            inputs,
            score_mod,
            mask_mod,
            out,
            lse,
        } = self;
        match S::ISA {
            // 6 queries × 64 keys of scores in 24 registers, as chapter 9's kernel.
            Isa::Avx512 => {
                all_heads::<K, S, 6>(simd, inputs, score_mod, mask_mod, out, lse)
            }
            // 16 registers of 8 floats, 2 queries × 32 keys (8 registers).
            Isa::Avx2 => {
                all_heads::<K, S, 2>(simd, inputs, score_mod, mask_mod, out, lse)
            }
            // The baseline processor: 4 lanes, 2 queries × 16 keys at a time.
            Isa::Portable => {
                all_heads::<K, S, 2>(simd, inputs, score_mod, mask_mod, out, lse)
            }
        }
    }
}

/// The running maximum and sum of one query's scores: the maximum of the modified scores
/// as they are (not in base 2), the sum of the weights `2^((s - max)·log₂ e)` kept in
/// vector lanes, added up once at the end.
#[derive(Clone, Copy)]
struct RowState<V> {
    max: f32,
    sums: V,
}

/// One key/value head's keys and values in the layout the kernel reads, each tile of keys
/// padded to `width` keys (a whole number of `KV` vectors) with zeros. A tile is copied
/// when a query first visits it, so that its copy is still in the cache when the
/// arithmetic reads it: copied all at once, a long sequence's head would have left the
/// cache before its first tile was used.
struct HeadCopy {
    /// `[tiles of keys, d, width]`: each tile transposed, feature `p` of its keys in a row.
    keys_t: Vec<f32>,
    /// `[tiles of keys · width, d_v_pad]`: the values, rows and features padded with zeros.
    values: Vec<f32>,
    /// Which tiles of this head are copied.
    copied: Vec<bool>,
    width: usize,
    d_v_pad: usize,
}

impl HeadCopy {
    /// Copies tile `kt` of key/value head `kv_head` of batch `b` from `kv`, unless it is
    /// copied already.
    ///
    /// # Shapes
    /// `kv` of sizes `[batch, kv_heads, keys, d, d_v]`; tiles of `tile` keys.
    fn tile(
        &mut self,
        kv: &impl KvRows,
        [b, kv_head]: [usize; 2],
        kt: usize,
        tile: usize,
    ) {
        if std::mem::replace(&mut self.copied[kt], true) {
            return;
        }
        let [_, _, keys, d, d_v] = kv.sizes();
        let (width, d_v_pad) = (self.width, self.d_v_pad);
        let keys_t = &mut self.keys_t[kt * d * width..][..d * width];
        for (c, j) in (kt * tile..((kt + 1) * tile).min(keys)).enumerate() {
            for (p, &x) in kv.k_row(b, kv_head, j).iter().enumerate() {
                keys_t[p * width + c] = x;
            }
            let row = (kt * width + c) * d_v_pad;
            self.values[row..][..d_v].copy_from_slice(kv.v_row(b, kv_head, j));
        }
    }
}

/// The listing's loops over batches, heads, tiles of queries and tiles of keys, writing
/// `out` (`[batch, heads, queries, d_v]`) and `lse` (`[batch, heads, queries]`), `R`
/// queries at a time.
///
/// # Shapes
/// As above.
#[inline(always)]
fn all_heads<K: KvRows, S: Simd, const R: usize>(
    simd: S,
    inputs: &Inputs<'_, K>,
    score_mod: &impl ScoreMod,
    mask_mod: &impl MaskMod,
    out: &mut [f32],
    lse: &mut [f32],
) -> Visits {
    let &Inputs {
        q,
        kv,
        block_mask,
        dims: [batch, heads, queries, d],
        keys: _,
        d_v,
        groups,
    } = inputs;
    let scale = (1.0 / (d as f64).sqrt()) as f32;
    let tile = block_mask.tile.max(1);
    let chunk = KV * S::LANES;
    let width = tile.next_multiple_of(chunk);
    let d_v_pad = d_v.next_multiple_of(S::LANES);
    let rows_pad = tile.next_multiple_of(R);
    let kv_tiles = block_mask.kv_tiles();
    let mut head_copy = HeadCopy {
        keys_t: vec![0.0; kv_tiles * d * width],
        values: vec![0.0; kv_tiles * width * d_v_pad],
        copied: vec![false; kv_tiles],
        width,
        d_v_pad,
    };
    let mut visits = Visits::default();
    // One tile of queries times 1/√d, padded with zero rows to whole groups of R.
    let mut q_tile = vec![0.0f32; rows_pad * d];
    // The scores, then the weights, of one group: [R, width].
    let mut scores = vec![0.0f32; R * width];
    // Which keys of a partial tile each query of the group sees: [R, width].
    let mut visible = vec![false; R * width];
    // The output rows of one tile of queries, before the division by the sum.
    let mut acc = vec![0.0f32; rows_pad * d_v_pad];
    for b in 0..batch {
        for h in 0..heads {
            let kv_head = h / groups;
            let head = (b * heads + h) * queries;
            if h % groups == 0 {
                // The first query head of this key/value head: no tile of it copied yet.
                head_copy.copied.fill(false);
            }
            for qt in 0..block_mask.q_tiles() {
                let rows = qt * tile..((qt + 1) * tile).min(queries);
                let q_rows = &q[(head + rows.start) * d..(head + rows.end) * d];
                for (x, &y) in q_tile.iter_mut().zip(q_rows) {
                    *x = y * scale;
                }
                let mut state = vec![
                    RowState {
                        max: f32::NEG_INFINITY,
                        sums: simd.splat(0.0),
                    };
                    rows_pad
                ];
                acc.fill(0.0);
                for visit in block_mask.visit(b, h, qt) {
                    visits.record(&visit);
                    let TileVisit {
                        kt,
                        keys: cols,
                        masked,
                    } = visit;
                    head_copy.tile(kv, [b, kv_head], kt, tile);
                    let keys_t = &head_copy.keys_t[kt * d * width..][..d * width];
                    let values =
                        &head_copy.values[kt * width * d_v_pad..][..width * d_v_pad];
                    let mut g = 0;
                    while g < rows.len() {
                        let group = Group {
                            b,
                            h,
                            first: rows.start + g,
                            real: R.min(rows.len() - g),
                            cols: cols.clone(),
                            masked,
                        };
                        let tiles = Tiles {
                            keys_t,
                            values,
                            scores: &mut scores,
                            visible: &mut visible,
                            width,
                            d,
                        };
                        let mods = (score_mod, mask_mod);
                        let (q_group, acc) =
                            (&q_tile[g * d..], &mut acc[g * d_v_pad..]);
                        // The last rows of a tile, when they are no more than 2, go 2 at a
                        // time: a tile of 128 queries is 21 groups of 6 and one of 2, not
                        // 22 groups of 6 with 4 rows of padding.
                        if group.real > TAIL || R <= TAIL {
                            group_tile::<S, R>(
                                simd,
                                &group,
                                tiles,
                                q_group,
                                mods,
                                &mut state[g..],
                                acc,
                            );
                            g += R;
                        } else {
                            group_tile::<S, TAIL>(
                                simd,
                                &group,
                                tiles,
                                q_group,
                                mods,
                                &mut state[g..],
                                acc,
                            );
                            g += TAIL;
                        }
                    }
                }
                for (r, i) in rows.enumerate() {
                    let RowState { max, sums } = state[r];
                    let sum = simd.reduce_sum(sums);
                    let out = &mut out[(head + i) * d_v..][..d_v];
                    for (o, a) in out.iter_mut().zip(&acc[r * d_v_pad..][..d_v]) {
                        *o = if sum > 0.0 { a / sum } else { 0.0 };
                    }
                    if sum > 0.0 {
                        lse[head + i] = max + sum.ln();
                    }
                }
            }
        }
    }
    visits
}

/// The queries of one group in one tile of keys: batch `b`, head `h`, queries
/// `first..first + real` (the group's last `R - real` rows are padding), keys `cols`.
struct Group {
    b: usize,
    h: usize,
    first: usize,
    real: usize,
    cols: std::ops::Range<usize>,
    masked: bool,
}

/// One tile of keys and values in the kernel's layout, and the buffers a group fills.
struct Tiles<'a> {
    /// `[d, width]`.
    keys_t: &'a [f32],
    /// `[width, d_v_pad]`.
    values: &'a [f32],
    /// `[R, width]`.
    scores: &'a mut [f32],
    /// `[R, width]`.
    visible: &'a mut [bool],
    width: usize,
    d: usize,
}

/// One group of `R` queries against one tile of keys: the scores, the mods, the online
/// softmax in base 2, the weighted values added into `acc`.
///
/// # Shapes
/// `q_group`: `[R.., d]` (times `1/√d`), `state`: `[R..]`, `acc`: `[R.., d_v_pad]`; the
/// group's rows are the first `R` of each.
#[inline(always)]
fn group_tile<S: Simd, const R: usize>(
    simd: S,
    group: &Group,
    tiles: Tiles<'_>,
    q_group: &[f32],
    (score_mod, mask_mod): (&impl ScoreMod, &impl MaskMod),
    state: &mut [RowState<S::V>],
    acc: &mut [f32],
) {
    let Tiles {
        keys_t,
        values,
        scores,
        visible,
        width,
        d,
    } = tiles;
    let &Group {
        b,
        h,
        first,
        real,
        ref cols,
        masked,
    } = group;
    let d_v_pad = values.len() / width;
    let (q_group, state) = (&q_group[..R * d], &mut state[..R]);
    let acc = &mut acc[..R * d_v_pad];
    let chunk = KV * S::LANES;
    let count = cols.len();
    // The keys the group's queries may see, `lo..hi` of the tile: all of them on a full
    // tile; on a partial one, from the first to the last that the mask_mod shows to
    // some query of the group, rounded out to whole chunks.
    let (mut lo, mut hi) = (0, count);
    if masked {
        (lo, hi) = (count, 0);
        for r in 0..real {
            let seen = &mut visible[r * width..][..count];
            for (v, j) in seen.iter_mut().zip(cols.clone()) {
                *v = mask_mod(b, h, first + r, j);
            }
            if let Some(j) = seen.iter().position(|&v| v) {
                lo = lo.min(j);
                hi = hi.max(count - seen.iter().rev().position(|&v| v).unwrap_or(0));
            }
        }
        if lo >= hi {
            return; // no query of the group sees a key of this tile
        }
    }
    let (lo, hi) = (lo / chunk * chunk, hi.next_multiple_of(chunk));
    let q: [&[f32]; R] = std::array::from_fn(|r| &q_group[r * d..][..d]);
    for c in (lo..hi).step_by(chunk) {
        let sums = scores_chunk::<S, R>(simd, q, &keys_t[c..], width);
        for (r, row) in sums.iter().enumerate() {
            for (v, &s) in row.iter().enumerate() {
                simd.store(s, &mut scores[r * width + c + v * S::LANES..]);
            }
        }
    }
    let end = hi.min(count);
    let mut rescale = [1.0f32; R];
    for r in 0..R {
        let row = &mut scores[r * width..][..width];
        if r >= real {
            row[lo..hi].fill(f32::NEG_INFINITY); // a padding row sees nothing
        } else if masked {
            let seen = &visible[r * width..][..count];
            for ((s, &v), j) in row[lo..end]
                .iter_mut()
                .zip(&seen[lo..end])
                .zip(cols.start + lo..)
            {
                *s = if v {
                    score_mod(*s, b, h, first + r, j)
                } else {
                    f32::NEG_INFINITY
                };
            }
        } else {
            for (s, j) in row[lo..end].iter_mut().zip(cols.start + lo..) {
                *s = score_mod(*s, b, h, first + r, j);
            }
        }
        // The padding keys after the tile's last one.
        row[end..hi].fill(f32::NEG_INFINITY);
        rescale[r] = online_update(simd, &mut state[r], &mut row[lo..hi]);
    }
    weighted_values::<S, R>(
        simd,
        scores,
        &values[lo * (acc.len() / R)..],
        [width, lo, hi],
        rescale,
        acc,
    );
}

/// The scores `q·kᵀ` of `R` queries and one chunk of `KV` vectors of keys, in registers:
/// for each feature `p`, every query adds `q[r][p]` times feature `p` of the chunk's keys
/// (one row of `keys_t`, loaded once for all `R`), one fused multiply-add a step.
///
/// # Shapes
/// `q`: `R` rows of `[d]`, `keys_t`: `[d, width]` from the chunk's first key. Returns `R`
/// rows of `KV` vectors.
#[inline(always)]
fn scores_chunk<S: Simd, const R: usize>(
    simd: S,
    q: [&[f32]; R],
    keys_t: &[f32],
    width: usize,
) -> [[S::V; KV]; R] {
    let mut sums = [[simd.splat(0.0); KV]; R];
    let d = q[0].len();
    for p in 0..d {
        let k_row = &keys_t[p * width..][..KV * S::LANES];
        let mut k = [simd.splat(0.0); KV];
        for (v, k) in k.iter_mut().enumerate() {
            *k = simd.load(&k_row[v * S::LANES..]);
        }
        for (row, q_r) in sums.iter_mut().zip(q) {
            let x = simd.splat(q_r[p]);
            for (s, &k) in row.iter_mut().zip(&k) {
                *s = simd.mul_add(x, k, *s);
            }
        }
    }
    sums
}

/// One row of a tile into the online softmax, in base 2: updates the running maximum and
/// sums, replaces each score `s` by its weight `2^((s - max)·log₂ e)` and returns the
/// factor for what the row accumulated before. A row that has seen no key yet and sees
/// none here gets weights 0 and keeps its state.
///
/// # Shapes
/// `row`: a whole number of vectors, overwritten with the weights.
#[inline(always)]
fn online_update<S: Simd>(
    simd: S,
    state: &mut RowState<S::V>,
    row: &mut [f32],
) -> f32 {
    let log2_e = std::f32::consts::LOG2_E;
    let mut block_max = simd.splat(f32::NEG_INFINITY);
    for s in row.chunks_exact(S::LANES) {
        block_max = simd.max(block_max, simd.load(s));
    }
    // The maximum seldom grows once the first tiles are seen: one comparison tells.
    let rescale = if simd.any_greater(block_max, state.max) {
        let new_max = simd.reduce_max(block_max);
        let rescale = exp2_flushed_scalar((state.max - new_max) * log2_e);
        state.max = new_max;
        state.sums = simd.mul(state.sums, simd.splat(rescale));
        rescale
    } else {
        1.0
    };
    if state.max == f32::NEG_INFINITY {
        row.fill(0.0); // nothing seen yet: -∞ - (-∞) would be NaN
        return rescale;
    }
    let (log2_e, minus_max) = (simd.splat(log2_e), simd.splat(-state.max * log2_e));
    let mut sums = state.sums;
    for s in row.chunks_exact_mut(S::LANES) {
        let w = simd.exp2_flushed(simd.mul_add(simd.load(s), log2_e, minus_max));
        sums = simd.add(sums, w);
        simd.store(w, s);
    }
    state.sums = sums;
    rescale
}

/// `acc_r = rescale_r · acc_r + Σ_j weights[r][j] · values[j]` for the keys `lo..hi` of
/// the tile, 4 vectors of features at a time (then one), the sums in registers.
///
/// # Shapes
/// `weights`: `[R, width]`, `values`: `[hi - lo.., d_v_pad]` from key `lo`,
/// `acc`: `[R, d_v_pad]`.
#[inline(always)]
fn weighted_values<S: Simd, const R: usize>(
    simd: S,
    weights: &[f32],
    values: &[f32],
    [width, lo, hi]: [usize; 3],
    rescale: [f32; R],
    acc: &mut [f32],
) {
    let d_v_pad = acc.len() / R;
    let w: [&[f32]; R] =
        std::array::from_fn(|r| &weights[r * width + lo..r * width + hi]);
    let values = &values[..(hi - lo) * d_v_pad];
    let mut f = 0;
    while f + 4 * S::LANES <= d_v_pad {
        columns::<S, R, 4>(simd, w, values, rescale, acc, f);
        f += 4 * S::LANES;
    }
    while f < d_v_pad {
        columns::<S, R, 1>(simd, w, values, rescale, acc, f);
        f += S::LANES;
    }
}

/// [`weighted_values`] for the `C` vectors of features from `f`.
#[inline(always)]
fn columns<S: Simd, const R: usize, const C: usize>(
    simd: S,
    w: [&[f32]; R],
    values: &[f32],
    rescale: [f32; R],
    acc: &mut [f32],
    f: usize,
) {
    let d_v_pad = acc.len() / R;
    let mut sums = [[simd.splat(0.0); C]; R];
    for (r, row) in sums.iter_mut().enumerate() {
        let factor = simd.splat(rescale[r]);
        for (u, s) in row.iter_mut().enumerate() {
            *s = simd.mul(simd.load(&acc[r * d_v_pad + f + u * S::LANES..]), factor);
        }
    }
    let mut x = [simd.splat(0.0); C];
    for (j, value) in values.chunks_exact(d_v_pad).enumerate() {
        for (u, x) in x.iter_mut().enumerate() {
            *x = simd.load(&value[f + u * S::LANES..]);
        }
        for (row, w) in sums.iter_mut().zip(w) {
            let w = simd.splat(w[j]);
            for (s, &x) in row.iter_mut().zip(&x) {
                *s = simd.mul_add(w, x, *s);
            }
        }
    }
    for (r, row) in sums.iter().enumerate() {
        for (u, &s) in row.iter().enumerate() {
            simd.store(s, &mut acc[r * d_v_pad + f + u * S::LANES..]);
        }
    }
}
