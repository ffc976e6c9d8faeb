//! The backward pass of FlashAttention on the CPU, tile by tile (Dao, 2023,
//! "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning",
//! Algorithm 2).
//!
//! Chapter 10's backward keeps the whole `n × n` matrix of weights `P` from the forward
//! pass. This one keeps only what the forward returns anyway, the output `O`, and one number
//! per query, the log-sum-exp `L` of its scores ([`crate::kernel::flash_attention_lse`]).
//! Any weight can be rebuilt from them: `P = exp(S - L)` with `S = q·kᵀ/√d`. With
//! `D = rowsum(dO ∘ O)` (which equals `rowsum(dP ∘ P)`, the dot product of softmax's
//! backward), one tile of `BLOCK` queries and `BLOCK` keys is
//!
//! ```text
//! S  = Q·Kᵀ/√d           P  = exp(S - L)        (masked entries: P = 0)
//! dV += Pᵀ·dO            dP = dO·Vᵀ
//! dS = P ∘ (dP - D)      dQ += dS·K/√d          dK += dSᵀ·Q/√d
//! ```
//!
//! One task owns a set of key blocks of one head: for each of them it keeps the block's
//! `dK` and `dV` in its own buffers and walks over the query blocks (only those on or
//! below the diagonal under the causal mask), so `dK` and `dV` have one writer and need
//! no locks. `dQ` is the problem: every key block adds to every query's row. Each task
//! adds into a `dQ` of its own, and the head sums the tasks' `dQ`s at the end, always
//! [`KEY_CHUNKS`] of them, in the same order. That costs `KEY_CHUNKS` copies of `dQ`
//! per head being worked on (`O(n·d)`, never `O(n²)`) and one addition per element, and
//! keeps every result the same to the bit on one thread or many. (The other way, a second
//! pass over the tiles per query block for `dQ`, would recompute `S`, `P` and `dP`: three
//! more matrix products per tile where this adds none.)
//!
//! The products go through [`crate::products::add_product`], compiled per instruction set
//! as the forward kernel is ([`crate::kernel`]), with the same run-time choice.

use rayon::prelude::*;
use shared::Tensor;
use shared::creation::zeros_in_parallel;

use crate::blocks::tile_needs_mask;
use shared::simd::{Simd, SimdOp, with_isa};

use crate::kernel::{Isa, zero};
use crate::products::{Strided, add_product};

/// Queries and keys per tile of the backward pass (square, so the causal diagonal runs
/// through the tiles `(b, b)` only).
pub const BLOCK: usize = 64;
/// How many tasks share the key blocks of one head (block `b` goes to task
/// `b mod KEY_CHUNKS`, which spreads the causal triangle's long and short columns
/// evenly), and so how many partial `dQ`s a head adds up.
pub const KEY_CHUNKS: usize = 4;
/// Rows of the kernel's buffers are padded to a multiple of this many floats.
const PAD: usize = 16;

/// The gradients of attention's three inputs.
#[derive(Clone, Debug)]
pub struct FlashGrads {
    /// `[.., queries, d]`.
    pub q: Tensor,
    /// `[.., keys, d]`.
    pub k: Tensor,
    /// `[.., keys, d_v]`.
    pub v: Tensor,
}

/// The gradients of `q`, `k` and `v` from the gradient `grad_out` of the output of
/// [`crate::kernel::flash_attention_lse`], given its output `out` and log-sum-exp `lse`;
/// the weights are recomputed tile by tile, never stored. Runs on rayon's thread pool.
///
/// # Shapes
/// `q`: `[.., queries, d]`, `k`: `[.., keys, d]`, `v`: `[.., keys, d_v]`, `out` and
/// `grad_out`: `[.., queries, d_v]`, `lse`: `[.., queries]`, the same leading dims.
/// Returns the shapes of `q`, `k` and `v`.
///
/// # Panics
/// If the shapes do not fit together.
// ANCHOR: flash_attention_backward
pub fn flash_attention_backward(
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    (out, lse): (&Tensor, &Tensor),
    grad_out: &Tensor,
    causal: bool,
) -> FlashGrads {
    let isa = Isa::detect();
    flash_attention_backward_with(isa, (q, k, v), (out, lse), grad_out, causal)
}
// ANCHOR_END: flash_attention_backward

/// [`flash_attention_backward`] with a chosen instruction set (which must be in
/// [`Isa::available`]).
///
/// # Shapes
/// As [`flash_attention_backward`].
///
/// # Panics
/// If the shapes do not fit together, or the CPU lacks `isa`.
pub fn flash_attention_backward_with(
    isa: Isa,
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    (out, lse): (&Tensor, &Tensor),
    grad_out: &Tensor,
    causal: bool,
) -> FlashGrads {
    assert!(
        isa.is_available(),
        "flash_attention_backward: this CPU cannot run {isa:?}"
    );
    let rank = q.dim();
    assert!(
        rank >= 2 && [k, v, out, grad_out].iter().all(|t| t.dim() == rank),
        "flash_attention_backward: q, k, v, out and grad_out need the same rank (at least 2), \
         got shapes {:?}, {:?}, {:?}, {:?} and {:?}",
        q.sizes(),
        k.sizes(),
        v.sizes(),
        out.sizes(),
        grad_out.sizes()
    );
    let lead = &q.sizes()[..rank - 2];
    let (queries, d) = (q.size(-2), q.size(-1));
    let (keys, d_v) = (k.size(-2), v.size(-1));
    let mut out_shape = lead.to_vec();
    out_shape.extend([queries, d_v]);
    assert!(
        &k.sizes()[..rank - 2] == lead
            && &v.sizes()[..rank - 2] == lead
            && k.size(-1) == d
            && v.size(-2) == keys
            && out.sizes() == out_shape
            && grad_out.sizes() == out_shape
            && lse.sizes() == &out_shape[..rank - 1],
        "flash_attention_backward: shapes q {:?}, k {:?}, v {:?}, out {:?}, lse {:?} and \
         grad_out {:?} do not fit q [.., n, d], k [.., m, d], v [.., m, d_v], \
         out and grad_out [.., n, d_v], lse [.., n]",
        q.sizes(),
        k.sizes(),
        v.sizes(),
        out.sizes(),
        lse.sizes(),
        grad_out.sizes()
    );
    assert!(
        d > 0 && keys > 0,
        "flash_attention_backward: need at least one key and one feature, got q {:?}, k {:?}",
        q.sizes(),
        k.sizes()
    );
    let heads: usize = lead.iter().product();
    let mut grad_q = zeros_in_parallel(heads * queries * d);
    let mut grad_k = zeros_in_parallel(heads * keys * d);
    let mut grad_v = zeros_in_parallel(heads * keys * d_v);
    // With no output features the output is empty and depends on nothing: zero gradients.
    if heads * queries * d_v > 0 {
        let sizes = Sizes {
            queries,
            keys,
            d,
            d_v,
        };
        let inputs = [q, k, v, out, grad_out, lse].map(Tensor::contiguous);
        let slices = inputs.each_ref().map(|t| t.as_slice().expect("contiguous"));
        // ANCHOR: parallel
        grad_q
            .par_chunks_mut(queries * d)
            .zip(grad_k.par_chunks_mut(keys * d))
            .zip(grad_v.par_chunks_mut(keys * d_v))
            .enumerate()
            // One set of buffers per task that rayon splits off, refilled for each of its
            // heads: megabytes allocated once instead of once per head.
            .for_each_init(
                Workspace::default,
                |work, (h, ((grad_q, grad_k), grad_v))| {
                    work.head.load(h, slices, sizes);
                    let head = &work.head;
                    zero(&mut work.dq, KEY_CHUNKS * queries * head.d_pad);
                    let key_blocks: Vec<Vec<KeyBlockGrads>> = work
                        .dq
                        .par_chunks_mut(queries * head.d_pad)
                        .enumerate()
                        .map(|(chunk, dq)| {
                            let key_chunk = KeyChunk {
                                head,
                                chunk,
                                causal,
                                dq,
                            };
                            with_isa(isa, key_chunk)
                        })
                        .collect();
                    head.write_grads(&work.dq, key_blocks, grad_q, grad_k, grad_v);
                },
            );
        // ANCHOR_END: parallel
    }
    let shape_of = |t: &Tensor| t.sizes().to_vec();
    FlashGrads {
        q: Tensor::from_vec(grad_q, &shape_of(q)),
        k: Tensor::from_vec(grad_k, &shape_of(k)),
        v: Tensor::from_vec(grad_v, &shape_of(v)),
    }
}

/// The sizes of one head.
#[derive(Clone, Copy, Debug, Default)]
struct Sizes {
    queries: usize,
    keys: usize,
    d: usize,
    d_v: usize,
}

/// The buffers of one task: a head's inputs and the [`KEY_CHUNKS`] partial `dQ`s.
#[derive(Default)]
struct Workspace {
    head: HeadInputs,
    /// `[KEY_CHUNKS, queries, d_pad]`.
    dq: Vec<f32>,
}

/// One head's inputs, copied into the layouts the products read, rows padded to [`PAD`]
/// floats with zeros (and the keys and values to whole blocks).
#[derive(Default)]
struct HeadInputs {
    /// `[queries, d_pad]`: the queries times `log₂ e / √d`, rounded exactly as the forward
    /// kernel rounds them, so that the products `q'·k` come out bit for bit as the forward's
    /// scores (in base 2) and the weights rebuilt from them agree with those that made `O`.
    q: Vec<f32>,
    /// `[key blocks, d, BLOCK]`: each block of keys transposed.
    kt: Vec<f32>,
    /// `[key blocks · BLOCK, d_pad]`: the keys.
    k: Vec<f32>,
    /// `[key blocks, d_v, BLOCK]`: each block of values transposed.
    vt: Vec<f32>,
    /// `[queries, d_v_pad]`: the output's gradient `dO`.
    grad_out: Vec<f32>,
    /// `[queries]`: the log-sum-exp in base 2, `L·log₂ e`, in two parts: the nearest
    /// `f32` and what it misses, so that `s - hi - lo` has the accuracy of a double.
    lse2_hi: Vec<f32>,
    lse2_lo: Vec<f32>,
    /// `[queries]`: `D = rowsum(dO ∘ O)`.
    delta: Vec<f32>,
    sizes: Sizes,
    d_pad: usize,
    d_v_pad: usize,
}

/// Copies the rows of `src`, `width` floats each, into `rows` rows of `pitch` floats in
/// `dst`, zeros after them.
fn padded(dst: &mut Vec<f32>, src: &[f32], width: usize, pitch: usize, rows: usize) {
    zero(dst, rows * pitch);
    for (dst, src) in dst.chunks_exact_mut(pitch).zip(src.chunks_exact(width)) {
        dst[..width].copy_from_slice(src);
    }
}

/// Each block of `BLOCK` rows of `src` (`width` floats each) transposed into `dst`:
/// `[blocks, width, BLOCK]`, zero columns after the last row.
fn blocks_transposed(dst: &mut Vec<f32>, src: &[f32], width: usize, blocks: usize) {
    zero(dst, blocks * width * BLOCK);
    for (block, tile) in src
        .chunks(BLOCK * width)
        .zip(dst.chunks_exact_mut(width * BLOCK))
    {
        for (j, row) in block.chunks_exact(width).enumerate() {
            for (c, &x) in row.iter().enumerate() {
                tile[c * BLOCK + j] = x;
            }
        }
    }
}

impl HeadInputs {
    /// Lays out head `h` of `[q, k, v, out, grad_out, lse]`, row-major buffers of
    /// `[heads, ..]`, reusing the buffers of the head this held before.
    ///
    /// # Shapes
    /// `q`: `[heads, queries, d]`, `k`: `[heads, keys, d]`, `v`: `[heads, keys, d_v]`,
    /// `out`, `grad_out`: `[heads, queries, d_v]`, `lse`: `[heads, queries]`.
    fn load(
        &mut self,
        h: usize,
        [q, k, v, out, grad_out, lse]: [&[f32]; 6],
        sizes: Sizes,
    ) {
        let Sizes {
            queries,
            keys,
            d,
            d_v,
        } = sizes;
        let q = &q[h * queries * d..][..queries * d];
        let k = &k[h * keys * d..][..keys * d];
        let v = &v[h * keys * d_v..][..keys * d_v];
        let out = &out[h * queries * d_v..][..queries * d_v];
        let grad_out = &grad_out[h * queries * d_v..][..queries * d_v];
        let lse = &lse[h * queries..][..queries];
        let (d_pad, d_v_pad) = (d.next_multiple_of(PAD), d_v.next_multiple_of(PAD));
        let scale = std::f32::consts::LOG2_E / (d as f32).sqrt(); // as crate::kernel does
        zero(&mut self.q, queries * d_pad);
        for (dst, src) in self.q.chunks_exact_mut(d_pad).zip(q.chunks_exact(d)) {
            for (x, &y) in dst.iter_mut().zip(src) {
                *x = y * scale;
            }
        }
        let key_blocks = keys.div_ceil(BLOCK);
        blocks_transposed(&mut self.kt, k, d, key_blocks);
        padded(&mut self.k, k, d, d_pad, key_blocks * BLOCK);
        blocks_transposed(&mut self.vt, v, d_v, key_blocks);
        padded(&mut self.grad_out, grad_out, d_v, d_v_pad, queries);
        let lse2 = lse.iter().map(|&l| f64::from(l) * std::f64::consts::LOG2_E);
        self.lse2_hi.clear();
        self.lse2_lo.clear();
        for l in lse2 {
            self.lse2_hi.push(l as f32);
            self.lse2_lo.push((l - f64::from(l as f32)) as f32);
        }
        // D in double precision: dS = P ∘ (dP - D) subtracts two close numbers where the
        // weights matter most, and these are only n·d operations.
        self.delta.clear();
        self.delta
            .extend(grad_out.chunks_exact(d_v).zip(out.chunks_exact(d_v)).map(
                |(g, o)| {
                    let dot: f64 = g
                        .iter()
                        .zip(o)
                        .map(|(&g, &o)| f64::from(g) * f64::from(o))
                        .sum();
                    dot as f32
                },
            ));
        (self.sizes, self.d_pad, self.d_v_pad) = (sizes, d_pad, d_v_pad);
    }

    /// Adds up the chunks' `dQ`s, scales the sums, and copies them and each key block's
    /// `dK` and `dV` into the head's gradients.
    ///
    /// # Shapes
    /// `grad_q`: `[queries, d]`, `grad_k`: `[keys, d]`, `grad_v`: `[keys, d_v]`.
    fn write_grads(
        &self,
        dq: &[f32],
        key_blocks: Vec<Vec<KeyBlockGrads>>,
        grad_q: &mut [f32],
        grad_k: &mut [f32],
        grad_v: &mut [f32],
    ) {
        let Sizes {
            queries,
            keys,
            d,
            d_v,
        } = self.sizes;
        let dq_of = |chunk: usize| {
            &dq[chunk * queries * self.d_pad..][..queries * self.d_pad]
        };
        // dQ = dS·K/√d; dK = dSᵀ·Q/√d = dSᵀ·q'·ln 2, since q' = q·log₂ e/√d.
        let q_scale = 1.0 / (d as f32).sqrt();
        let k_scale = std::f32::consts::LN_2;
        for (i, row) in grad_q.chunks_exact_mut(d).enumerate() {
            for (c, x) in row.iter_mut().enumerate() {
                let sum: f32 =
                    (0..KEY_CHUNKS).map(|t| dq_of(t)[i * self.d_pad + c]).sum();
                *x = sum * q_scale;
            }
        }
        for block in key_blocks.iter().flatten() {
            let start = block.index * BLOCK;
            let len = BLOCK.min(keys - start);
            let grad_k = grad_k[start * d..][..len * d].chunks_exact_mut(d);
            for (dst, src) in grad_k.zip(block.dk.chunks_exact(self.d_pad)) {
                for (x, &y) in dst.iter_mut().zip(src) {
                    *x = y * k_scale;
                }
            }
            let grad_v = grad_v[start * d_v..][..len * d_v].chunks_exact_mut(d_v);
            for (dst, src) in grad_v.zip(block.dv.chunks_exact(self.d_v_pad)) {
                dst.copy_from_slice(&src[..d_v]);
            }
        }
    }
}

/// `dK` and `dV` of one key block, not yet scaled.
struct KeyBlockGrads {
    index: usize,
    /// `[BLOCK, d_pad]`.
    dk: Vec<f32>,
    /// `[BLOCK, d_v_pad]`.
    dv: Vec<f32>,
}

/// The gradients from the key blocks `chunk`, `chunk + KEY_CHUNKS`, ... of one head: their
/// share of `dQ`, added into `dq` (`[queries, d_pad]`, not yet scaled), and `dK` and `dV`
/// of each block. The kernel as an operation for [`with_isa`].
struct KeyChunk<'a> {
    head: &'a HeadInputs,
    chunk: usize,
    causal: bool,
    dq: &'a mut [f32],
}

impl SimdOp for KeyChunk<'_> {
    type Output = Vec<KeyBlockGrads>;

    #[inline(always)]
    fn run<S: Simd>(self, simd: S) -> Vec<KeyBlockGrads> {
        let KeyChunk {
            head,
            chunk,
            causal,
            dq,
        } = self;
        match S::ISA {
            // Blocks of 4 rows × 4 vectors (64 columns) of sums.
            Isa::Avx512 => {
                key_chunk_generic::<S, 4, 4>(simd, head, chunk, causal, dq)
            }
            // Blocks of 4 rows × 2 vectors (16 columns) of sums.
            Isa::Avx2 | Isa::Portable => {
                key_chunk_generic::<S, 4, 2>(simd, head, chunk, causal, dq)
            }
        }
    }
}

/// The backward pass over the key blocks `chunk`, `chunk + KEY_CHUNKS`, ... of one head,
/// the products `R` rows × `C` vectors at a time; adds their share of `dQ` into `dq`
/// (`[queries, d_pad]`) and returns `dK` and `dV` of each block.
// ANCHOR: key_chunk
#[inline(always)]
fn key_chunk_generic<S: Simd, const R: usize, const C: usize>(
    simd: S,
    head: &HeadInputs,
    chunk: usize,
    causal: bool,
    dq: &mut [f32],
) -> Vec<KeyBlockGrads> {
    let Sizes {
        queries,
        keys,
        d,
        d_v,
    } = head.sizes;
    let (d_pad, d_v_pad) = (head.d_pad, head.d_v_pad);
    let mut key_blocks = Vec::new();
    // The types written out: each call then borrows its own tiles (a closure would
    // otherwise infer one lifetime for all its calls).
    type Matrix<'a> = (&'a [f32], usize);
    type MatrixMut<'a> = (&'a mut [f32], usize);
    type Dims = (usize, usize, usize); // m, k, n
    let product = |a: Strided, b: Matrix, c: MatrixMut, sizes: Dims| {
        add_product::<S, R, C>(simd, a, b, c, sizes)
    };
    // One tile of scores, then of weights P; one of dP, then of dS.
    let mut p = vec![0.0f32; BLOCK * BLOCK];
    let mut ds = vec![0.0f32; BLOCK * BLOCK];
    for kb in (chunk..keys.div_ceil(BLOCK)).step_by(KEY_CHUNKS) {
        let k_start = kb * BLOCK;
        let k_len = BLOCK.min(keys - k_start);
        let kt = &head.kt[kb * d * BLOCK..][..d * BLOCK];
        let vt = &head.vt[kb * d_v * BLOCK..][..d_v * BLOCK];
        let k_rows = &head.k[k_start * d_pad..][..BLOCK * d_pad];
        let mut dk = vec![0.0f32; BLOCK * d_pad];
        let mut dv = vec![0.0f32; BLOCK * d_v_pad];
        // Causal: the query blocks above the diagonal see none of these keys.
        let first_qb = if causal { kb } else { 0 };
        for qb in first_qb..queries.div_ceil(BLOCK) {
            let q_start = qb * BLOCK;
            let rows = BLOCK.min(queries - q_start);
            let q_rows = &head.q[q_start * d_pad..][..rows * d_pad];
            let do_rows = &head.grad_out[q_start * d_v_pad..][..rows * d_v_pad];
            // The scores S' = Q'·Kᵀ (in base 2) and dP = dO·Vᵀ.
            p.fill(0.0);
            ds.fill(0.0);
            product(
                Strided::by_rows(q_rows, d_pad),
                (kt, BLOCK),
                (&mut p, BLOCK),
                (rows, d, BLOCK),
            );
            let sizes = (rows, d_v, BLOCK);
            product(
                Strided::by_rows(do_rows, d_v_pad),
                (vt, BLOCK),
                (&mut ds, BLOCK),
                sizes,
            );
            // P = 2^(S' - L·log₂ e), dS = P ∘ (dP - D), row by row.
            let crosses_diagonal = tile_needs_mask(q_start, k_start + BLOCK, causal);
            let masked = crosses_diagonal || k_len < BLOCK;
            let tile = ((q_start, rows), (k_start, masked));
            weights_and_score_grads(simd, head, tile, causal, &mut p, &mut ds);
            // dV += Pᵀ·dO, dK += dSᵀ·Q': the tiles read transposed, by their strides.
            let sizes = (k_len, rows, d_v_pad);
            product(
                Strided::by_columns(&p, BLOCK),
                (do_rows, d_v_pad),
                (&mut dv, d_v_pad),
                sizes,
            );
            let sizes = (k_len, rows, d_pad);
            product(
                Strided::by_columns(&ds, BLOCK),
                (q_rows, d_pad),
                (&mut dk, d_pad),
                sizes,
            );
            // dQ += dS·K.
            let dq_rows = &mut dq[q_start * d_pad..][..rows * d_pad];
            let sizes = (rows, k_len, d_pad);
            product(
                Strided::by_rows(&ds, BLOCK),
                (k_rows, d_pad),
                (dq_rows, d_pad),
                sizes,
            );
        }
        key_blocks.push(KeyBlockGrads { index: kb, dk, dv });
    }
    key_blocks
}
// ANCHOR_END: key_chunk

/// Turns a tile of scores `p` (in base 2, `S' = q'·k`) into weights `P = 2^(S' - L·log₂
/// e)`, `0` where the mask hides a key or past the last key, and the tile `ds` of `dP` into
/// `dS = P ∘ (dP - D)`: the softmax's backward (chapter 10) with the row's dot product `D`
/// computed once from the output.
///
/// The scores are the forward's to the bit, and `L·log₂ e` is subtracted in two parts
/// (`hi` then `lo`): where a weight is large, `S' - hi` is exact, and the weights then
/// differ from those of the forward by the rounding of `L` alone.
///
/// # Shapes
/// `p`, `ds`: `[BLOCK, BLOCK]`, of which the first `rows` rows are used.
// ANCHOR: weights_and_score_grads
#[inline(always)]
fn weights_and_score_grads<S: Simd>(
    simd: S,
    head: &HeadInputs,
    ((q_start, rows), (k_start, masked)): ((usize, usize), (usize, bool)),
    causal: bool,
    p: &mut [f32],
    ds: &mut [f32],
) {
    let keys = head.sizes.keys;
    for r in 0..rows {
        let query = q_start + r;
        let limit = if causal { (query + 1).min(keys) } else { keys };
        let (hi, lo) = (head.lse2_hi[query], head.lse2_lo[query]);
        let (hi, lo) = (simd.splat(hi), simd.splat(lo));
        let delta = simd.splat(head.delta[query]);
        for i in (0..BLOCK).step_by(S::LANES) {
            let at = r * BLOCK + i;
            let mut s = simd.load(&p[at..]);
            if masked {
                s = simd.hide_from(s, k_start + i, limit);
            }
            let weights = simd.exp2_flushed(simd.sub(simd.sub(s, hi), lo));
            simd.store(weights, &mut p[at..]);
            let dp = simd.load(&ds[at..]);
            simd.store(simd.mul(weights, simd.sub(dp, delta)), &mut ds[at..]);
        }
    }
}
// ANCHOR_END: weights_and_score_grads
