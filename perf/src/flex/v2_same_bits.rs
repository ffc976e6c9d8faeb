//! Version 2 of chapter 16's kernel: the listing's bits, in vector instructions.
//!
//! The kernel of [`ch16_flex_attention::kernel`], fast: the same additions in the same
//! order, so the same bits, arranged so that the processor's vector unit does them.
//!
//! [`flex_kernel_over`](ch16_flex_attention::kernel::flex_kernel_over) computes one score
//! at a time: a dot product of `d` additions, each waiting for the one before. Here the
//! keys of a head are first copied tile by tile, each tile transposed,
//! `[d, keys of the tile]`, so that feature `p` of every key of the tile lies in one row;
//! the scores then grow one feature at a time across a whole row of keys,
//! `s[j] += q[p] · kᵀ[p][j]`: as many independent sums as keys, which fill the vector
//! lanes. Each score still adds its `d` products in the order `0, 1, …, d - 1`, as the
//! listing's dot product does, and every step is a multiplication and then an addition,
//! two roundings, never one fused multiply-add, so every score, weight and output is bit
//! for bit the listing's (the tests check it).
//!
//! The rest follows the listing tile for tile:
//! - the mask_mod is called on partial tiles only, on every entry of them; a full tile's
//!   loop holds nothing but the score_mod;
//! - the score_mod runs over a whole row of the tile in one loop, and because both are
//!   generic parameters, each recipe compiles into its own loop with the calls inlined;
//! - the weighted values are added several queries at a time, so that each value row is
//!   read once for all of them, in the listing's order for every feature.
//!
//! The vector operations are chapter 9's [`Simd`] (its `mul` and `add`, not its
//! `mul_add`), and as in chapter 9 the kernel is compiled for AVX-512 (16 lanes, 4 queries
//! × 64 keys of sums in registers), for AVX2 (8 lanes, 2 queries × 32 keys) and for any
//! processor (4 lanes); [`Isa::detect`] picks the widest this processor has. Beyond the
//! listing's memory it keeps one key/value head's keys and values in its own layout,
//! `O(keys · d)`, and one tile of scores.

use ch09_flash_attention::online::OnlineSoftmax;
use shared::Result;
use shared::Tensor;
use shared::simd::Isa;
use shared::simd::{Simd, SimdOp, with_isa};

use ch16_flex_attention::block_mask::{BlockMask, TileVisit};
use ch16_flex_attention::kernel::{KernelOutput, Visits};
use ch16_flex_attention::kv_rows::{KvRows, elements};
use ch16_flex_attention::recipes::{MaskMod, ScoreMod};

use super::inputs::Inputs;

/// [`flex_kernel_over`](ch16_flex_attention::kernel::flex_kernel_over), bit for bit, in
/// vector instructions: the widest this processor has.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`; `kv` of sizes `[batch, kv_heads, keys, d, d_v]`,
/// `heads` a multiple of `kv_heads`; `block_mask` for `queries × keys`. Returns
/// `[batch, heads, queries, d_v]` and `[batch, heads, queries]`.
pub fn flex_kernel_fast(
    q: &Tensor, // [batch, heads, queries, d]
    kv: &impl KvRows,
    block_mask: &BlockMask,
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod,
) -> Result<KernelOutput> {
    flex_kernel_fast_with(Isa::detect(), q, kv, block_mask, score_mod, mask_mod)
}

/// [`flex_kernel_fast`] compiled for `isa` (the portable version where this processor
/// lacks it), so that the tests can check every version.
///
/// # Shapes
/// As [`flex_kernel_fast`].
pub fn flex_kernel_fast_with(
    isa: Isa,
    q: &Tensor, // [batch, heads, queries, d]
    kv: &impl KvRows,
    block_mask: &BlockMask,
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod,
) -> Result<KernelOutput> {
    let q_values = elements(q);
    let inputs = Inputs::checked("flex_kernel_fast", q, &q_values, kv, block_mask)?;
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
            // 32 registers of 16 floats, so the scores of 4 queries × 64 keys (16
            // registers) grow at once, and 4 queries × 64 weighted values too.
            Isa::Avx512 => {
                all_heads::<K, S, 4, 4>(simd, inputs, score_mod, mask_mod, out, lse)
            }
            // 16 registers of 8 floats, 2 queries × 32 keys (8 registers).
            Isa::Avx2 => {
                all_heads::<K, S, 2, 4>(simd, inputs, score_mod, mask_mod, out, lse)
            }
            // The baseline processor: 4 lanes, 1 query × 16 keys at a time.
            Isa::Portable => {
                all_heads::<K, S, 1, 4>(simd, inputs, score_mod, mask_mod, out, lse)
            }
        }
    }
}

/// The listing's loops over batches, heads, tiles of queries and tiles of keys, writing
/// `out` (`[batch, heads, queries, d_v]`) and `lse` (`[batch, heads, queries]`). The
/// scores are computed `R` queries × `KV` vectors of keys at a time, the weighted values
/// `R` queries × `KV` vectors of features, in registers.
///
/// # Shapes
/// As above.
#[inline(always)]
fn all_heads<K: KvRows, S: Simd, const R: usize, const KV: usize>(
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
        keys,
        d_v,
        groups,
    } = inputs;
    let scale = (1.0 / (d as f64).sqrt()) as f32;
    let tile = block_mask.tile;
    let mut visits = Visits::default();
    // The keys of one key/value head, tile after tile, each tile transposed
    // ([d, keys of the tile]), and its values, one row per key: copied once per head
    // rather than once per tile of queries.
    let mut keys_t = vec![0.0f32; d * keys];
    let mut values = vec![0.0f32; keys * d_v];
    // The scores of one tile of queries: [queries of the tile, keys of the tile].
    let mut scores = vec![0.0f32; tile * tile];
    for b in 0..batch {
        for h in 0..heads {
            let kv_head = h / groups;
            let head = (b * heads + h) * queries;
            if h % groups == 0 {
                // The first query head of this key/value head.
                for cols in (0..keys)
                    .step_by(tile.max(1))
                    .map(|c| c..(c + tile).min(keys))
                {
                    let keys_t = &mut keys_t[cols.start * d..cols.end * d];
                    for (c, j) in cols.clone().enumerate() {
                        for (p, &x) in kv.k_row(b, kv_head, j).iter().enumerate() {
                            keys_t[p * cols.len() + c] = x;
                        }
                        values[j * d_v..][..d_v]
                            .copy_from_slice(kv.v_row(b, kv_head, j));
                    }
                }
            }
            for qt in 0..block_mask.q_tiles() {
                let rows = qt * tile..((qt + 1) * tile).min(queries);
                let q_tile = &q[(head + rows.start) * d..(head + rows.end) * d];
                let mut state = vec![OnlineSoftmax::new(); rows.len()];
                let mut acc = vec![0.0f32; rows.len() * d_v];
                for visit in block_mask.visit(b, h, qt) {
                    visits.record(&visit);
                    let TileVisit {
                        keys: cols, masked, ..
                    } = visit;
                    let width = cols.len();
                    let keys_t = &keys_t[cols.start * d..cols.end * d];
                    let values = &values[cols.start * d_v..cols.end * d_v];
                    let scores = &mut scores[..rows.len() * width];
                    tile_scores::<S, R, KV>(
                        simd,
                        q_tile,
                        keys_t,
                        [rows.len(), d, width],
                        scale,
                        scores,
                    );
                    let mut live = vec![false; rows.len()];
                    let row_scores = scores.chunks_exact_mut(width);
                    for ((r, i), scores) in rows.clone().enumerate().zip(row_scores) {
                        // The score_mod on the visible scores; on a partial tile the
                        // mask_mod first, which hides the rest. Two loops, so that the
                        // full tiles' loop holds nothing but the score_mod.
                        if masked {
                            for (s, j) in scores.iter_mut().zip(cols.clone()) {
                                *s = if mask_mod(b, h, i, j) {
                                    score_mod(*s, b, h, i, j)
                                } else {
                                    f32::NEG_INFINITY
                                };
                            }
                        } else {
                            for (s, j) in scores.iter_mut().zip(cols.clone()) {
                                *s = score_mod(*s, b, h, i, j);
                            }
                        }
                        // Query i sees no key of this tile: the listing skips it.
                        // (`fold` rather than `all`, which would stop at the first
                        // visible key and leave no loop to vectorise.)
                        let none = scores
                            .iter()
                            .fold(true, |none, &s| none & (s == f32::NEG_INFINITY));
                        if none {
                            continue;
                        }
                        live[r] = true;
                        let rescale = state[r].update(scores);
                        acc[r * d_v..][..d_v].iter_mut().for_each(|a| *a *= rescale);
                    }
                    tile_values::<S, R, KV>(
                        simd,
                        &mut acc,
                        scores,
                        values,
                        &live,
                        [width, d_v],
                    );
                }
                for (r, i) in rows.enumerate() {
                    let OnlineSoftmax { max, sum } = state[r];
                    let out = &mut out[(head + i) * d_v..][..d_v];
                    for (o, a) in out.iter_mut().zip(&acc[r * d_v..][..d_v]) {
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

/// `scores[i][j] = (q_i · k_j) · scale` for every query `i` and key `j` of a tile, the keys
/// given transposed: feature by feature across the keys, each dot product summed in the
/// order of its features, as the listing's `dot` sums it. The queries go `R` at a time,
/// then one at a time.
///
/// # Shapes
/// `q_tile`: `[queries, d]`, `keys_t`: `[d, width]`, `scores`: `[queries, width]`.
#[inline(always)]
fn tile_scores<S: Simd, const R: usize, const KV: usize>(
    simd: S,
    q_tile: &[f32],
    keys_t: &[f32],
    [queries, d, width]: [usize; 3],
    scale: f32,
    scores: &mut [f32],
) {
    let sizes = [d, width];
    let mut i = 0;
    while i + R <= queries {
        let (q_rows, scores) = (&q_tile[i * d..], &mut scores[i * width..]);
        rows_scores::<S, R, KV>(simd, q_rows, keys_t, sizes, scale, scores);
        i += R;
    }
    while i < queries {
        let (q_rows, scores) = (&q_tile[i * d..], &mut scores[i * width..]);
        rows_scores::<S, 1, KV>(simd, q_rows, keys_t, sizes, scale, scores);
        i += 1;
    }
}

/// The scores of the `R` queries at the start of `q_rows` against every key of the tile:
/// `KV` vectors of keys at a time with the `R × KV` vectors of sums in registers, the keys
/// left over one by one. Each step is a multiplication, then an addition: two roundings,
/// as in the listing, never one fused multiply-add.
///
/// # Shapes
/// `q_rows`: `[R.., d]`, `keys_t`: `[d, width]`, `scores`: `[R.., width]`.
#[inline(always)]
fn rows_scores<S: Simd, const R: usize, const KV: usize>(
    simd: S,
    q_rows: &[f32],
    keys_t: &[f32],
    [d, width]: [usize; 2],
    scale: f32,
    scores: &mut [f32],
) {
    let block = KV * S::LANES;
    // The R rows of queries, each of length d up front: no bounds checks in the loop.
    let q: [&[f32]; R] = std::array::from_fn(|r| &q_rows[r * d..][..d]);
    let mut c = 0;
    // ANCHOR: feature_by_feature
    while c + block <= width {
        // -0.0 is where Rust's `sum` of floats starts: -0.0 + x is x for every x.
        let mut sums = [[simd.splat(-0.0); KV]; R];
        for p in 0..d {
            let keys = &keys_t[p * width + c..][..block];
            let mut k = [simd.splat(0.0); KV];
            for (v, k) in k.iter_mut().enumerate() {
                *k = simd.load(&keys[v * S::LANES..]);
            }
            for (row, q_row) in sums.iter_mut().zip(q) {
                let x = simd.splat(q_row[p]);
                for (s, &k) in row.iter_mut().zip(&k) {
                    *s = simd.add(*s, simd.mul(x, k));
                }
            }
        }
        let scale = simd.splat(scale);
        for (r, row) in sums.iter().enumerate() {
            let out = &mut scores[r * width + c..][..block];
            for (v, &s) in row.iter().enumerate() {
                simd.store(simd.mul(s, scale), &mut out[v * S::LANES..]);
            }
        }
        c += block;
    }
    // ANCHOR_END: feature_by_feature
    if c == width {
        return; // no key left over
    }
    for r in 0..R {
        let rest = &mut scores[r * width + c..r * width + width];
        rest.fill(-0.0);
        for p in 0..d {
            let x = q_rows[r * d + p];
            for (s, &y) in rest.iter_mut().zip(&keys_t[p * width + c..]) {
                *s += x * y;
            }
        }
        rest.iter_mut().for_each(|s| *s *= scale);
    }
}

/// `acc_i += Σ_j weights[i][j] · values[j]` for every query `i` of the tile that sees a
/// key of it (`live[i]`), the weights taken in order for every feature as the listing adds
/// them. `R` live queries go at once, so that each value is loaded once for `R` of them.
///
/// # Shapes
/// `acc`: `[queries, d_v]`, `weights`: `[queries, width]`, `values`: `[width, d_v]`,
/// `live`: `[queries]`.
#[inline(always)]
fn tile_values<S: Simd, const R: usize, const CV: usize>(
    simd: S,
    acc: &mut [f32],
    weights: &[f32],
    values: &[f32],
    live: &[bool],
    [width, d_v]: [usize; 2],
) {
    let sizes = [width, d_v];
    let mut i = 0;
    while i < live.len() {
        let (acc, weights) = (&mut acc[i * d_v..], &weights[i * width..]);
        if i + R <= live.len() && live[i..i + R].iter().all(|&l| l) {
            rows_values::<S, R, CV>(simd, acc, weights, values, sizes);
            i += R;
        } else {
            if live[i] {
                rows_values::<S, 1, CV>(simd, acc, weights, values, sizes);
            }
            i += 1;
        }
    }
}

/// `acc_r += Σ_j weights[r][j] · values[j]` for the `R` queries at the start of `acc`:
/// `CV` vectors of features at a time with the `R × CV` vectors of sums in registers, the
/// features left over one by one; a multiplication, then an addition, as in the listing.
///
/// # Shapes
/// `acc`: `[R.., d_v]`, `weights`: `[R.., width]`, `values`: `[width, d_v]`.
#[inline(always)]
fn rows_values<S: Simd, const R: usize, const CV: usize>(
    simd: S,
    acc: &mut [f32],
    weights: &[f32],
    values: &[f32],
    [width, d_v]: [usize; 2],
) {
    let block = CV * S::LANES;
    // The R rows of weights, each of length width up front: no bounds checks in the loop.
    let w: [&[f32]; R] = std::array::from_fn(|r| &weights[r * width..][..width]);
    let mut f = 0;
    while f + block <= d_v {
        let mut sums = [[simd.splat(0.0); CV]; R];
        for (r, row) in sums.iter_mut().enumerate() {
            for (u, s) in row.iter_mut().enumerate() {
                *s = simd.load(&acc[r * d_v + f + u * S::LANES..]);
            }
        }
        let mut v = [simd.splat(0.0); CV];
        for (j, value) in values.chunks_exact(d_v).take(width).enumerate() {
            for (u, v) in v.iter_mut().enumerate() {
                *v = simd.load(&value[f + u * S::LANES..]);
            }
            for (row, w) in sums.iter_mut().zip(w) {
                let w = simd.splat(w[j]);
                for (s, &v) in row.iter_mut().zip(&v) {
                    *s = simd.add(*s, simd.mul(w, v));
                }
            }
        }
        for (r, row) in sums.iter().enumerate() {
            for (u, &s) in row.iter().enumerate() {
                simd.store(s, &mut acc[r * d_v + f + u * S::LANES..]);
            }
        }
        f += block;
    }
    if f == d_v {
        return; // no feature left over
    }
    for r in 0..R {
        for j in 0..width {
            let w = weights[r * width + j];
            let rest = &mut acc[r * d_v + f..r * d_v + d_v];
            for (a, &x) in rest.iter_mut().zip(&values[j * d_v + f..]) {
                *a += w * x;
            }
        }
    }
}
