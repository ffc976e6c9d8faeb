//! The fast kernel: FlashAttention on the CPU, in tiles that stay in the core's caches,
//! parallel over batch × heads × query blocks.
//!
//! The algorithm is [`crate::tiled`]'s; what changes is where the numbers live. One task
//! takes [`BLOCK_Q`] queries of one head and walks over the keys in blocks of
//! [`BLOCK_K`]. For each group of `R` query rows (6 with AVX-512) it
//!
//! 1. computes the `R × BLOCK_K` scores `q·kᵀ` in vector registers (`scores_tile`), the
//!    keys stored transposed so that one vector holds one feature of 16 keys;
//! 2. masks them, only on the tiles the diagonal crosses ([`Simd::hide_from`]);
//! 3. turns each row into weights with the online softmax (`online_update`, the vector
//!    twin of [`OnlineSoftmax::update`](crate::online::OnlineSoftmax::update), in base 2:
//!    the queries carry a factor `log₂ e`, so `e^(s - m)` is `2^(s' - m')`), which also
//!    says how much to shrink what the row accumulated so far;
//! 4. shrinks the `R` output rows by that factor and adds `weights · v`
//!    (`weighted_values`).
//!
//! So per task the extra memory is one block of output rows and one tile, and per head one
//! copy of its queries, keys and values in the layouts the kernel reads (keys transposed,
//! values padded): `O(n·d)`, never `O(n²)`.
//!
//! The vector operations go through `shared`'s [`Simd`] (see [`shared::simd`] for why they
//! are named rather than left to the auto-vectoriser): the kernel is one generic function,
//! [`with_isa`] runs it compiled once for AVX-512, once for AVX2 with FMA (both by
//! `#[target_feature]`) or portable, and [`Isa::detect`] picks the best one this CPU has at
//! run time. A Rust binary is otherwise built for the baseline x86-64 CPU (SSE2, 4 lanes,
//! no fused multiply-add).

use rayon::prelude::*;
use shared::Tensor;
use shared::creation::zeros_in_parallel;

use crate::blocks::{key_block_count, tile_needs_mask};
use shared::simd::{Simd, SimdOp, exp2_flushed_scalar, with_isa};

/// Queries per task: one task computes the output rows of this many queries of one head.
pub const BLOCK_Q: usize = 48;
/// Keys per tile: the scores of a tile row fill 4 AVX-512 registers.
pub const BLOCK_K: usize = 64;
/// The values' rows are padded to a multiple of this many floats, the widest vector.
const PAD: usize = 16;

/// Which vector instructions the kernel is compiled with: the same choice as `shared`'s
/// own vectorised loops make (AVX-512: 6 rows per group; AVX2: 1 row per group).
pub use shared::simd::Isa;

/// `softmax(q·kᵀ/√d)·v`, with the causal mask if `causal` (query `i` sees keys `0..=i`, as
/// PyTorch's `is_causal=True`), computed in tiles without ever storing the scores.
/// Runs on rayon's thread pool: `RAYON_NUM_THREADS=1`, or `ThreadPool::install`, for one
/// thread.
///
/// # Shapes
/// `q`: `[.., queries, d]`, `k`: `[.., keys, d]`, `v`: `[.., keys, d_v]`, the same leading
/// dims (batch, heads, ...). Returns `[.., queries, d_v]`.
///
/// # Panics
/// If the shapes do not fit together.
// ANCHOR: flash_attention
pub fn flash_attention(q: &Tensor, k: &Tensor, v: &Tensor, causal: bool) -> Tensor {
    flash_attention_with(Isa::detect(), q, k, v, causal)
}
// ANCHOR_END: flash_attention

/// [`flash_attention`] with a chosen instruction set (which must be in
/// [`Isa::available`]), to test every version of the kernel.
///
/// # Shapes
/// As [`flash_attention`].
///
/// # Panics
/// If the shapes do not fit together, or the CPU lacks `isa`.
pub fn flash_attention_with(
    isa: Isa,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    causal: bool,
) -> Tensor {
    flash_attention_lse_with(isa, q, k, v, causal).0
}

/// [`flash_attention`], also returning each query's log-sum-exp of its (scaled, masked)
/// scores, `L = log Σⱼ exp(q·kⱼ/√d)`: what the backward pass
/// ([`crate::backward::flash_attention_backward`]) needs, with the output, to rebuild any
/// weight as `exp(q·kⱼ/√d - L)`. PyTorch's fused kernels return the same numbers
/// (`logsumexp`) for their backward.
///
/// # Shapes
/// As [`flash_attention`]; the log-sum-exp has shape `[.., queries]` (NaN when `d_v` is 0).
pub fn flash_attention_lse(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    causal: bool,
) -> (Tensor, Tensor) {
    flash_attention_lse_with(Isa::detect(), q, k, v, causal)
}

/// [`flash_attention_lse`] with a chosen instruction set (which must be in
/// [`Isa::available`]).
///
/// # Shapes
/// As [`flash_attention_lse`].
///
/// # Panics
/// If the shapes do not fit together, or the CPU lacks `isa`.
pub fn flash_attention_lse_with(
    isa: Isa,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    causal: bool,
) -> (Tensor, Tensor) {
    assert!(
        isa.is_available(),
        "flash_attention: this CPU cannot run {isa:?}"
    );
    let rank = q.dim();
    assert!(
        rank >= 2 && k.dim() == rank && v.dim() == rank,
        "flash_attention: q, k and v need the same rank (at least 2), got shapes {:?}, {:?} and {:?}",
        q.sizes(),
        k.sizes(),
        v.sizes()
    );
    let lead = &q.sizes()[..rank - 2];
    let (queries, d) = (q.size(-2), q.size(-1));
    let (keys, d_v) = (k.size(-2), v.size(-1));
    assert!(
        &k.sizes()[..rank - 2] == lead
            && &v.sizes()[..rank - 2] == lead
            && k.size(-1) == d
            && v.size(-2) == keys,
        "flash_attention: shapes {:?}, {:?} and {:?} do not fit q [.., n, d], k [.., m, d], v [.., m, d_v]",
        q.sizes(),
        k.sizes(),
        v.sizes()
    );
    assert!(
        d > 0,
        "flash_attention: queries and keys need at least one feature"
    );
    let heads: usize = lead.iter().product();
    let mut out_shape = lead.to_vec();
    out_shape.extend([queries, d_v]);
    let lse_shape = &out_shape[..rank - 1];
    if heads * queries * d_v == 0 {
        // Nothing to compute; without value features the kernel does not run, and the
        // log-sum-exp is left undefined (NaN).
        let lse = vec![f32::NAN; heads * queries];
        return (
            Tensor::from_vec(Vec::new(), &out_shape),
            Tensor::from_vec(lse, lse_shape),
        );
    }
    assert!(
        keys > 0,
        "flash_attention: no keys to attend to (k has shape {:?})",
        k.sizes()
    );
    let shape = AttentionShape {
        heads,
        queries,
        keys,
        d,
        d_v,
    };
    // The kernel reads each head as a stretch of a row-major buffer. Row-major tensors lend
    // theirs; other views (heads split out of a projection are a transpose) are copied
    // into one first, as PyTorch's `.contiguous()` would.
    let (q, k, v) = (q.contiguous(), k.contiguous(), v.contiguous());
    let (q, k, v) = (
        q.as_slice().expect("contiguous"),
        k.as_slice().expect("contiguous"),
        v.as_slice().expect("contiguous"),
    );
    let (out, lse) = run(isa, shape, causal, |h, head| head.load(h, q, k, v, shape));
    (
        Tensor::from_vec(out, &out_shape),
        Tensor::from_vec(lse, lse_shape),
    )
}

/// The sizes of one call: `heads` independent attentions (batch × heads) of `queries`
/// queries over `keys` keys, `d` features per query and key, `d_v` per value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttentionShape {
    /// Batch × heads: how many independent attentions.
    pub heads: usize,
    /// Queries per head (`n`).
    pub queries: usize,
    /// Keys and values per head.
    pub keys: usize,
    /// Features of a query and of a key.
    pub d: usize,
    /// Features of a value (and of an output row).
    pub d_v: usize,
}

/// The kernel on plain row-major buffers, without a [`Tensor`]'s copy: what
/// [`flash_attention_with`] does after copying the tensors out, for callers that hold the
/// numbers in slices already (and for the benchmarks, to time the kernel alone).
///
/// # Shapes
/// `q`: `[heads, queries, d]`, `k`: `[heads, keys, d]`, `v`: `[heads, keys, d_v]`, row
/// major. Returns `[heads, queries, d_v]`.
///
/// # Panics
/// If the slices' lengths do not match `shape`, if `d` or `keys` is 0, or if the CPU lacks
/// `isa`.
pub fn flash_attention_slices(
    isa: Isa,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    shape: AttentionShape,
    causal: bool,
) -> Vec<f32> {
    assert!(
        isa.is_available(),
        "flash_attention: this CPU cannot run {isa:?}"
    );
    let AttentionShape {
        heads,
        queries,
        keys,
        d,
        d_v,
    } = shape;
    assert!(
        q.len() == heads * queries * d
            && k.len() == heads * keys * d
            && v.len() == heads * keys * d_v,
        "flash_attention_slices: buffers of {}, {} and {} floats do not fit {shape:?}",
        q.len(),
        k.len(),
        v.len()
    );
    assert!(
        d > 0 && keys > 0,
        "flash_attention_slices: d and keys must be positive, got {shape:?}"
    );
    run(isa, shape, causal, |h, head| head.load(h, q, k, v, shape)).0
}

/// Runs the kernel on `isa` over every head and every block of queries, in parallel;
/// `load(h, head)` lays out head `h`'s inputs in `head`. Returns the output `[heads, queries, d_v]` and
/// the log-sum-exp `[heads, queries]`.
fn run(
    isa: Isa,
    shape: AttentionShape,
    causal: bool,
    load: impl Fn(usize, &mut HeadInputs) + Sync,
) -> (Vec<f32>, Vec<f32>) {
    let AttentionShape {
        heads,
        queries,
        d_v,
        ..
    } = shape;
    let mut out = zeros_in_parallel(heads * queries * d_v);
    let mut lse = zeros_in_parallel(heads * queries);
    if out.is_empty() {
        return (out, lse);
    }
    // ANCHOR: parallel
    out.par_chunks_mut(queries * d_v)
        .zip(lse.par_chunks_mut(queries))
        .enumerate()
        // One set of buffers per task that rayon splits off, refilled for each of its
        // heads: megabytes allocated once instead of once per head.
        .for_each_init(HeadInputs::default, |head, (h, (out_head, lse_head))| {
            load(h, head);
            let head = &*head;
            out_head
                .par_chunks_mut(BLOCK_Q * d_v)
                .zip(lse_head.par_chunks_mut(BLOCK_Q))
                .enumerate()
                .for_each(|(qb, (rows, lse))| {
                    let block = QueryBlock {
                        head,
                        qb,
                        causal,
                        out: rows,
                        lse,
                    };
                    with_isa(isa, block);
                });
        });
    // ANCHOR_END: parallel
    (out, lse)
}

/// One head's queries, keys and values, copied into the layouts the kernel reads.
#[derive(Default)]
struct HeadInputs {
    /// `[queries, d]`: the queries times `log₂ e / √d`. The scale is folded in once, here,
    /// and so is the change to base 2: the scores come out as `s · log₂ e`, and the
    /// weights `e^(s - max)` as `2^(s·log₂ e - max·log₂ e)`, which takes fewer
    /// instructions (see [`exp2_flushed_scalar`]).
    q: Vec<f32>,
    /// `[key blocks, d, BLOCK_K]`: each block of keys transposed, so that feature `c` of
    /// the block's 64 keys lies in a row; zero columns after the last key.
    kt: Vec<f32>,
    /// `[key blocks · BLOCK_K, d_v rounded up to PAD]`: the values, zero-padded.
    v: Vec<f32>,
    queries: usize,
    keys: usize,
    d: usize,
    d_v: usize,
    d_v_pad: usize,
}

impl HeadInputs {
    /// Copies head `h` of row-major buffers into the kernel's layouts, reusing the buffers
    /// of the head this held before.
    ///
    /// # Shapes
    /// `q`: `[heads, queries, d]`, `k`: `[heads, keys, d]`, `v`: `[heads, keys, d_v]`,
    /// sizes from `shape`.
    fn load(
        &mut self,
        h: usize,
        q: &[f32],
        k: &[f32],
        v: &[f32],
        shape: AttentionShape,
    ) {
        let AttentionShape {
            queries,
            keys,
            d,
            d_v,
            ..
        } = shape;
        let q = &q[h * queries * d..][..queries * d];
        let k = &k[h * keys * d..][..keys * d];
        let v = &v[h * keys * d_v..][..keys * d_v];
        let scale = std::f32::consts::LOG2_E / (d as f32).sqrt();
        self.q.clear();
        self.q.extend(q.iter().map(|&x| x * scale));
        let key_blocks = keys.div_ceil(BLOCK_K);
        zero(&mut self.kt, key_blocks * d * BLOCK_K);
        for (block, tile) in k
            .chunks(BLOCK_K * d)
            .zip(self.kt.chunks_exact_mut(d * BLOCK_K))
        {
            for (j, key) in block.chunks_exact(d).enumerate() {
                for (c, &x) in key.iter().enumerate() {
                    tile[c * BLOCK_K + j] = x;
                }
            }
        }
        let d_v_pad = d_v.next_multiple_of(PAD);
        zero(&mut self.v, key_blocks * BLOCK_K * d_v_pad);
        for (dst, src) in self.v.chunks_exact_mut(d_v_pad).zip(v.chunks_exact(d_v)) {
            dst[..d_v].copy_from_slice(src);
        }
        (self.queries, self.keys, self.d, self.d_v, self.d_v_pad) =
            (queries, keys, d, d_v, d_v_pad);
    }
}

/// Makes `buffer` `len` zeros, in the memory it already has where that is enough.
pub(crate) fn zero(buffer: &mut Vec<f32>, len: usize) {
    buffer.clear();
    buffer.resize(len, 0.0);
}

/// The output rows of query block `qb` of one head, and their log-sum-exp: the kernel as
/// an operation for [`with_isa`], which runs it compiled for one instruction set.
///
/// # Shapes
/// `out`: `[rows of this block, d_v]`, `lse`: `[rows of this block]`.
struct QueryBlock<'a> {
    head: &'a HeadInputs,
    qb: usize,
    causal: bool,
    out: &'a mut [f32],
    lse: &'a mut [f32],
}

impl SimdOp for QueryBlock<'_> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd>(self, simd: S) {
        let QueryBlock {
            head,
            qb,
            causal,
            out,
            lse,
        } = self;
        match S::ISA {
            // AVX-512 has 32 registers of 16 floats, so six query rows × 64 keys of scores
            // (24 registers, with 4 for the keys and 1 for a query's feature) are summed at
            // once. Six rows rather than four load each key's feature for half again as
            // many multiply-adds, which measured 5–7 % faster; a block of 48 queries is
            // eight groups of six.
            Isa::Avx512 => query_block_generic::<S, 6, { BLOCK_K / 16 }, 4>(
                simd, head, qb, causal, out, lse,
            ),
            // AVX2 has 16 registers of 8 floats: one query row × 64 keys (8 registers) at
            // a time.
            Isa::Avx2 => query_block_generic::<S, 1, { BLOCK_K / 8 }, 8>(
                simd, head, qb, causal, out, lse,
            ),
            Isa::Portable => query_block_generic::<S, 2, { BLOCK_K / 4 }, 2>(
                simd, head, qb, causal, out, lse,
            ),
        }
    }
}

/// The running maximum and sum of one query row (the kernel's own version of
/// [`crate::online::OnlineSoftmax`]), in base 2. The sum is kept as one vector of partial
/// sums, lane by lane, and added up once at the end rather than after every tile.
#[derive(Clone, Copy, Debug)]
struct RowState<V> {
    max: f32,
    sums: V,
}

/// The kernel for one block of queries: `R` rows at a time, each tile row `KV` vectors
/// (`KV · LANES = BLOCK_K`), the values `CV` vectors wide.
///
/// # Shapes
/// `out`: `[rows of this block, d_v]`, `lse`: `[rows of this block]`.
// ANCHOR: query_block
#[inline(always)]
fn query_block_generic<S: Simd, const R: usize, const KV: usize, const CV: usize>(
    simd: S,
    head: &HeadInputs,
    qb: usize,
    causal: bool,
    out: &mut [f32],
    lse: &mut [f32],
) {
    debug_assert_eq!(KV * S::LANES, BLOCK_K);
    let (d, d_v_pad) = (head.d, head.d_v_pad);
    let q_start = qb * BLOCK_Q;
    let rows = BLOCK_Q.min(head.queries - q_start);
    let groups = rows.div_ceil(R);
    let q_rows = &head.q[q_start * d..][..rows * d];
    let mut acc = vec![0.0f32; groups * R * d_v_pad]; // the output rows, unnormalised
    let mut state = vec![
        RowState {
            max: f32::NEG_INFINITY,
            sums: simd.splat(0.0),
        };
        groups * R
    ];
    let mut weights = [[0.0f32; BLOCK_K]; R];
    for kb in 0..key_block_count(q_start + rows, head.keys, BLOCK_K, causal) {
        let k_start = kb * BLOCK_K;
        let kt = &head.kt[kb * d * BLOCK_K..][..d * BLOCK_K];
        let v = &head.v[k_start * d_v_pad..][..BLOCK_K * d_v_pad];
        let crosses_diagonal = tile_needs_mask(q_start, k_start + BLOCK_K, causal);
        let runs_past_keys = k_start + BLOCK_K > head.keys;
        let masked = crosses_diagonal || runs_past_keys;
        for g in 0..groups {
            // A tile on the diagonal can lie wholly after a group's last query
            // (blocks of 48 queries and 64 keys do not line up): all its weights
            // would be 0, and the group skips it.
            let last_query = q_start + (g * R + R - 1).min(rows - 1);
            if causal && k_start > last_query {
                continue;
            }
            // The group's R queries; a last group short of R rows repeats its last
            // query (the extra rows are computed and never written out).
            let queries: [&[f32]; R] = std::array::from_fn(|r| {
                let row = (g * R + r).min(rows - 1);
                &q_rows[row * d..][..d]
            });
            let scores = scores_tile::<S, R, KV>(simd, queries, kt);
            let mut rescale = [0.0f32; R];
            for r in 0..R {
                let mut row = scores[r];
                if masked {
                    let query = q_start + g * R + r;
                    let limit = if causal {
                        (query + 1).min(head.keys)
                    } else {
                        head.keys
                    };
                    for (i, x) in row.iter_mut().enumerate() {
                        *x = simd.hide_from(*x, k_start + i * S::LANES, limit);
                    }
                }
                let row_state = &mut state[g * R + r];
                rescale[r] = online_update(simd, row_state, row, &mut weights[r]);
            }
            let acc_rows = &mut acc[g * R * d_v_pad..][..R * d_v_pad];
            weighted_values::<S, R, CV>(simd, &weights, v, rescale, acc_rows);
        }
    }
    for (((out_row, acc_row), state), lse) in out
        .chunks_exact_mut(head.d_v)
        .zip(acc.chunks_exact(d_v_pad))
        .zip(&state)
        .zip(lse)
    {
        let sum = simd.reduce_sum(state.sums);
        for (o, &a) in out_row.iter_mut().zip(acc_row) {
            *o = a / sum;
        }
        // max and sum are in base 2: L = ln(2^max · sum) = (max + log₂ sum) · ln 2,
        // in double precision and rounded once: the backward's weights depend on it.
        let lse2 = f64::from(state.max) + f64::from(sum).log2();
        *lse = (lse2 * std::f64::consts::LN_2) as f32;
    }
}
// ANCHOR_END: query_block

/// The scores `q·kᵀ` of `R` query rows and one block of keys, in registers: for each
/// feature `c`, row `r` adds `q[r][c]` times feature `c` of the 64 keys (one row of `kt`,
/// `KV` vectors, loaded once for all `R` rows).
///
/// # Shapes
/// `q`: `R` rows of `[d]`, `kt`: `[d, BLOCK_K]`. Returns `R` rows of `KV` vectors.
// ANCHOR: scores_tile
#[inline(always)]
fn scores_tile<S: Simd, const R: usize, const KV: usize>(
    simd: S,
    q: [&[f32]; R],
    kt: &[f32],
) -> [[S::V; KV]; R] {
    let d = kt.len() / BLOCK_K;
    // Equal lengths up front let the compiler drop the bounds checks inside the loop.
    let q = q.map(|row| &row[..d]);
    let mut sums = [[simd.splat(0.0); KV]; R];
    for (c, k_row) in kt.chunks_exact(BLOCK_K).enumerate() {
        let mut k = [simd.splat(0.0); KV];
        for (i, k) in k.iter_mut().enumerate() {
            *k = simd.load(&k_row[i * S::LANES..]);
        }
        for (sum, q_r) in sums.iter_mut().zip(q) {
            let q_rc = simd.splat(q_r[c]);
            for (s, &k) in sum.iter_mut().zip(&k) {
                *s = simd.mul_add(q_rc, k, *s);
            }
        }
    }
    sums
}
// ANCHOR_END: scores_tile

/// [`crate::online::OnlineSoftmax::update`] on one row of a tile held in `KV` vectors, in
/// base 2: the new maximum, the weights `2^(s - max)` (written to `weights`), the new
/// sums; returns the factor for what the row accumulated before.
///
/// # Shapes
/// `scores`: `KV` vectors, `BLOCK_K` scores. `weights`: `[BLOCK_K]` (overwritten).
// ANCHOR: online_update
#[inline(always)]
fn online_update<S: Simd, const KV: usize>(
    simd: S,
    state: &mut RowState<S::V>,
    scores: [S::V; KV],
    weights: &mut [f32; BLOCK_K],
) -> f32 {
    let mut block_max = scores[0];
    for &s in &scores[1..] {
        block_max = simd.max(block_max, s);
    }
    // Once the first tiles have been seen the maximum seldom grows. One comparison
    // of the lanes with it tells; only then is the lanes' maximum found, and the
    // factor 2^(old max - new max) computed (0 on the first tile, where the old max
    // is -∞).
    let rescale = if simd.any_greater(block_max, state.max) {
        let new_max = simd.reduce_max(block_max);
        let rescale = exp2_flushed_scalar(state.max - new_max);
        state.max = new_max;
        state.sums = simd.mul(state.sums, simd.splat(rescale));
        rescale
    } else {
        1.0
    };
    let max = simd.splat(state.max);
    let mut sums = state.sums;
    for (i, &s) in scores.iter().enumerate() {
        let w = simd.exp2_flushed(simd.sub(s, max));
        sums = simd.add(sums, w);
        simd.store(w, &mut weights[i * S::LANES..]);
    }
    state.sums = sums;
    rescale
}
// ANCHOR_END: online_update

/// `acc = rescale · acc + weights · v` for `R` rows, `CV` vectors of output columns at a
/// time (then one vector at a time for the rest), the sums in registers.
///
/// # Shapes
/// `weights`: `[R, BLOCK_K]`, `v`: `[BLOCK_K, d_v_pad]`, `acc`: `[R, d_v_pad]`.
// ANCHOR: weighted_values
#[inline(always)]
fn weighted_values<S: Simd, const R: usize, const CV: usize>(
    simd: S,
    weights: &[[f32; BLOCK_K]; R],
    v: &[f32],
    rescale: [f32; R],
    acc: &mut [f32],
) {
    let d_v_pad = acc.len() / R;
    let mut col = 0;
    while col + CV * S::LANES <= d_v_pad {
        columns::<S, R, CV>(simd, weights, v, rescale, acc, col);
        col += CV * S::LANES;
    }
    while col < d_v_pad {
        columns::<S, R, 1>(simd, weights, v, rescale, acc, col);
        col += S::LANES;
    }
}

/// [`weighted_values`] for the `C` vectors of columns from `col`.
#[inline(always)]
fn columns<S: Simd, const R: usize, const C: usize>(
    simd: S,
    weights: &[[f32; BLOCK_K]; R],
    v: &[f32],
    rescale: [f32; R],
    acc: &mut [f32],
    col: usize,
) {
    let d_v_pad = acc.len() / R;
    let lanes = S::LANES;
    let mut sums = [[simd.splat(0.0); C]; R];
    for (r, sum) in sums.iter_mut().enumerate() {
        let factor = simd.splat(rescale[r]);
        for (i, s) in sum.iter_mut().enumerate() {
            *s = simd.mul(simd.load(&acc[r * d_v_pad + col + i * lanes..]), factor);
        }
    }
    let mut x = [simd.splat(0.0); C];
    for (j, v_row) in (0..BLOCK_K).zip(v.chunks_exact(d_v_pad)) {
        for (i, x) in x.iter_mut().enumerate() {
            *x = simd.load(&v_row[col + i * lanes..]);
        }
        for (sum, w) in sums.iter_mut().zip(weights) {
            let w = simd.splat(w[j]);
            for (s, &x) in sum.iter_mut().zip(&x) {
                *s = simd.mul_add(w, x, *s);
            }
        }
    }
    for (r, sum) in sums.iter().enumerate() {
        for (i, &s) in sum.iter().enumerate() {
            simd.store(s, &mut acc[r * d_v_pad + col + i * lanes..]);
        }
    }
}
// ANCHOR_END: weighted_values
