//! A packed matrix product (GEMM) in the style of GotoBLAS and BLIS, for the large products
//! of [`matmul::blocked_into`](super::matmul::blocked_into).
//!
//! A processor core can start two fused multiply-adds of 16 lanes each per cycle, but only
//! if the numbers they need are already in its registers. A plain triple loop spends most
//! of its time waiting for memory instead. Three ideas keep the multiply-add units busy:
//!
//! 1. **A register tile (the micro-kernel).** The innermost code computes a small tile of
//!    `c`, `MR` rows by `NR` columns (14 × 32 with AVX-512), entirely in vector registers:
//!    28 registers of 16 lanes hold the tile's sums. For each step `p` along `k` it loads
//!    one row of `b`'s strip (`NR` numbers, two vectors), and for each of the `MR` rows of
//!    `a`'s strip broadcasts `a[i, p]` to all lanes and fuses `a[i, p] · b[p, j..j+NR]`
//!    into that row's two sums. So 2 loads feed 28 multiply-adds, and the 28 sums are
//!    independent chains: while one waits the 4 cycles of its previous multiply-add, the
//!    others keep both units busy.
//! 2. **Packing.** The micro-kernel reads its operands as two plain streams: the strip of
//!    `a` as `MR` numbers per step `p`, the strip of `b` as `NR` numbers per step. Before
//!    the multiplication, blocks of `a` and `b` are copied ("packed") into buffers in
//!    exactly that order, padded with zeros to whole strips. The copy costs one read per
//!    number, the multiplication reuses each packed number `MR` or `NR` times, and it
//!    never sees strides, transposed views or ragged edges: packing handles them all.
//! 3. **Blocking for the caches.** `k` is cut into slices of `KC` steps. A block of
//!    `KC × NC` numbers of `b` (512 KiB) is packed to stay in the core's 1 MiB level-2
//!    cache while every strip of `a` passes over it, and a strip of `a` (`MR × KC`, 14 KiB)
//!    stays in the 48 KiB level-1 cache while it meets every strip of the `b` block.
//!
//! Each output adds its products in order of `k`, one fused multiply-add per step: a
//! tile's sums start at zero for the first slice of `k` and continue from `c` for the next
//! ones. So the result does not depend on `KC`, on the tile sizes, on how the rows are split
//! between threads, nor on the instruction set: it has the bits of
//! [`fused_sum`](super::dot_orders::fused_sum) for every output.
//!
//! The AVX-512 micro-kernel is 14 × 32; processors with AVX2 and FMA but without AVX-512
//! get a 6 × 16 one (16 registers of 8 lanes). Elsewhere (other processors, WebAssembly)
//! the product goes to `ndarray`'s `general_mat_mul`.
//!
//! No order of PyTorch's is reproduced here: the products it takes are those where MKL's
//! order is not followed, so only the speed is measured (`perf/examples/gemm_speed.rs`,
//! `perf/scripts/bench-vs-torch.sh`); its tests check it against the fused chains of `matmul`.

use ndarray::linalg::general_mat_mul;
#[cfg(target_arch = "x86_64")]
use ndarray::s;
use ndarray::{ArrayView2, ArrayViewMut2};

pub use crate::simd::Isa;
#[cfg(target_arch = "x86_64")]
use crate::simd::{Simd, SimdOp, with_isa};

/// Steps of `k` per slice: a strip of `a` (`MR × KC`) stays in the level-1 cache.
#[cfg(target_arch = "x86_64")]
const KC: usize = 256;

/// Columns of `b` per packed block: `KC × NC` numbers (512 KiB) stay in the level-2 cache.
#[cfg(target_arch = "x86_64")]
const NC: usize = 512;

/// Rows of `a` per packed block. A strip of `a` is read from memory once per block of `b`,
/// so the block can be large; each of its rows costs `4·KC` bytes of buffer.
#[cfg(target_arch = "x86_64")]
const MC: usize = 4096;

/// `c = a · b` with the fastest micro-kernel of this processor (see the module docs).
///
/// # Shapes
/// `a`: `[m, k]`, `b`: `[k, n]`, `c`: `[m, n]` (overwritten); any strides.
pub fn gemm_into(a: ArrayView2<f32>, b: ArrayView2<f32>, c: ArrayViewMut2<f32>) {
    gemm_with(Isa::detect(), a, b, c);
}

/// `c = a · b` on the instruction set `isa`.
///
/// # Shapes
/// `a`: `[m, k]`, `b`: `[k, n]`, `c`: `[m, n]` (overwritten); any strides.
///
/// # Panics
/// If the processor cannot run `isa`, or the shapes do not match.
pub fn gemm_with(
    isa: Isa,
    a: ArrayView2<f32>,
    b: ArrayView2<f32>,
    c: ArrayViewMut2<f32>,
) {
    assert!(isa.is_available(), "this processor cannot run {isa:?}");
    let ((m, k), (k2, n)) = (a.dim(), b.dim());
    assert!(k == k2 && c.dim() == (m, n), "mismatched shapes");
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 | Isa::Avx2 => packed_product(isa, a, b, c),
        // Off x86-64 only `Portable` is available (the assert above), but the enum is the
        // same on every target.
        _ => {
            let mut c = c;
            general_mat_mul(1.0, &a, &b, 0.0, &mut c);
        }
    }
}

/// The micro-kernel's register tile for `S`, `MR × NR` outputs from packed strips (`NR`
/// is two vectors), and the blocked loops around it: [`packed_product`]'s work, run by
/// [`with_isa`] so that it is compiled for the instruction set.
#[cfg(target_arch = "x86_64")]
struct PackedBlocks<'a> {
    a: ArrayView2<'a, f32>,
    b: ArrayView2<'a, f32>,
    /// `b` packed once, if it was kept so (see [`super::packed_once`]).
    kept: Option<&'a super::packed_once::PackedOnce>,
    c: ArrayViewMut2<'a, f32>,
    a_buffer: &'a mut Vec<f32>,
    b_buffer: &'a mut Vec<f32>,
}

#[cfg(target_arch = "x86_64")]
impl SimdOp for PackedBlocks<'_> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd>(self, simd: S) {
        match S::ISA {
            // 14 × 32 with AVX-512: 28 sums in 28 of the 32 `zmm` registers, 2 for `b`'s
            // row.
            Isa::Avx512 => packed_blocks::<S, 14>(simd, self),
            // 6 × 16 with AVX2 and FMA: 12 sums in 12 of the 16 `ymm` registers, 2 for
            // `b`'s row.
            Isa::Avx2 => packed_blocks::<S, 6>(simd, self),
            // `Portable` has no fused multiply-add: `gemm_with` hands it to `ndarray`.
            Isa::Portable => unreachable!("the portable product is ndarray's"),
        }
    }
}

/// The largest `MR · NR` of the micro-kernels: the size of the scratch tile of edges.
#[cfg(target_arch = "x86_64")]
const MAX_TILE: usize = 14 * 32;

/// The blocked loops around the micro-kernel of `isa` (see the module docs).
#[cfg(target_arch = "x86_64")]
fn packed_product(
    isa: Isa,
    a: ArrayView2<f32>,
    b: ArrayView2<f32>,
    mut c: ArrayViewMut2<f32>,
) {
    let ((m, k), n) = (a.dim(), b.dim().1);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c.fill(0.0);
        return;
    }
    // A matrix packed once (a weight multiplied by one prompt after another) is read
    // where it is kept, block by block, instead of being packed again.
    let kept = super::packed_once::find(isa, b);
    PACKING.with_borrow_mut(|(a_buffer, b_buffer)| {
        let blocks = PackedBlocks {
            a,
            b,
            kept: kept.as_deref(),
            c,
            a_buffer,
            b_buffer,
        };
        with_isa(isa, blocks);
    });
}

/// Whether `b` is kept packed for this processor's products (see [`keep`]).
///
/// # Shapes
/// `b`: `[k, n]`.
pub(crate) fn is_kept(b: ArrayView2<f32>) -> bool {
    super::packed_once::find(Isa::detect(), b).is_some()
}

/// Packs `b` once for the products on this processor's instruction set and keeps it while
/// the returned value lives (see [`super::packed_once`]); nothing where the product packs
/// nothing.
///
/// # Shapes
/// `b`: `[k, n]`, any strides.
pub(crate) fn keep(b: ArrayView2<f32>) -> super::packed_once::Kept {
    super::packed_once::keep(b, pack_once(Isa::detect(), b))
}

/// Every block of `b` packed for `isa`, in the order [`packed_blocks`] reads them, or
/// `None` where `isa` packs nothing (the portable product).
///
/// # Shapes
/// `b`: `[k, n]`, any strides.
#[cfg(target_arch = "x86_64")]
fn pack_once(isa: Isa, b: ArrayView2<f32>) -> Option<super::packed_once::PackedOnce> {
    let nr = strip_width(isa)?;
    let (k, n) = b.dim();
    let bt = b.t();
    let mut sizes = Vec::new();
    for pc in (0..k).step_by(KC) {
        for jc in (0..n).step_by(NC) {
            sizes.push(NC.min(n - jc).next_multiple_of(nr) * KC.min(k - pc));
        }
    }
    // Room to start on a 64-byte boundary: each block is a whole number of strips of `NR`
    // numbers (64 or 128 bytes), so every strip starts on one too.
    let total: usize = sizes.iter().sum();
    let mut buffer = vec![0.0f32; total + 16];
    let offset = buffer.as_ptr().align_offset(64).min(16);
    let mut starts = Vec::with_capacity(sizes.len());
    let (mut at, mut blocks) = (offset, sizes.iter());
    for pc in (0..k).step_by(KC) {
        let kc = KC.min(k - pc);
        for jc in (0..n).step_by(NC) {
            let size = *blocks.next().expect("one size per block");
            let nc = NC.min(n - jc);
            pack(
                bt.slice(s![jc..jc + nc, pc..pc + kc]),
                nr,
                &mut buffer[at..at + size],
            );
            starts.push(at);
            at += size;
        }
    }
    buffer.truncate(at);
    Some(super::packed_once::PackedOnce {
        isa,
        buffer,
        starts,
        blocks_per_slice: n.div_ceil(NC),
    })
}

/// Off x86-64 the product is `ndarray`'s: nothing is packed.
#[cfg(not(target_arch = "x86_64"))]
fn pack_once(
    _isa: Isa,
    _b: ArrayView2<f32>,
) -> Option<super::packed_once::PackedOnce> {
    None
}

/// The width of `b`'s strips on `isa` (`NR`, two vectors), or `None` where the product is
/// `ndarray`'s and nothing is packed.
#[cfg(target_arch = "x86_64")]
fn strip_width(isa: Isa) -> Option<usize> {
    match isa {
        Isa::Avx512 => Some(32),
        Isa::Avx2 => Some(16),
        Isa::Portable => None,
    }
}

thread_local! {
    /// The packing buffers of this thread's products, kept from one product to the next:
    /// a training step runs thousands of small products, and a fresh zeroed buffer for each
    /// cost about a quarter as much as packing into it.
    #[cfg(target_arch = "x86_64")]
    static PACKING: std::cell::RefCell<(Vec<f32>, Vec<f32>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// The loops of [`packed_product`] over the blocks of `k`, `a` and `b`, packing into the
/// buffers (grown to the sizes they need), around the micro-kernel [`tile`] of `MR` rows.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn packed_blocks<S: Simd, const MR: usize>(simd: S, blocks: PackedBlocks) {
    let PackedBlocks {
        a,
        b,
        kept,
        mut c,
        a_buffer,
        b_buffer,
    } = blocks;
    let ((m, k), n) = (a.dim(), b.dim().1);
    let (mr, nr) = (MR, 2 * S::LANES);
    let (mc_max, nc_max, kc_max) = (m.min(MC), n.min(NC), k.min(KC));
    let a_len = mc_max.next_multiple_of(mr) * kc_max;
    let b_len = nc_max.next_multiple_of(nr) * kc_max + 16;
    // Only grown, never cleared: packing writes every number the micro-kernel reads.
    for (buffer, len) in [(&mut *a_buffer, a_len), (&mut *b_buffer, b_len)] {
        if buffer.len() < len {
            buffer.resize(len, 0.0);
        }
    }
    let (a_pack, b_buffer) = (&mut a_buffer[..a_len], &mut b_buffer[..b_len]);
    // The strips of `b` start on 64-byte boundaries, so no vector load straddles two
    // cache lines (each strip is a whole number of vectors long).
    let start = b_buffer.as_ptr().align_offset(64).min(16);
    let b_pack = &mut b_buffer[start..start + nc_max.next_multiple_of(nr) * kc_max];
    // `bᵀ` is packed like `a`: its rows are the columns of `b`.
    let bt = b.t();
    let (rs_c, cs_c) = (c.strides()[0], c.strides()[1]);
    let c_ptr = c.as_mut_ptr();
    let mut scratch = [0.0f32; MAX_TILE];
    for pc in (0..k).step_by(KC) {
        let kc = KC.min(k - pc);
        for ic in (0..m).step_by(MC) {
            let mc = MC.min(m - ic);
            pack(a.slice(s![ic..ic + mc, pc..pc + kc]), mr, a_pack);
            for jc in (0..n).step_by(NC) {
                let nc = NC.min(n - jc);
                let b_strips: &[f32] = match kept {
                    Some(kept) => kept.block(pc / KC, jc / NC),
                    None => {
                        pack(bt.slice(s![jc..jc + nc, pc..pc + kc]), nr, b_pack);
                        &*b_pack
                    }
                };
                for (ir, a_strip) in
                    (0..mc).step_by(mr).zip(a_pack.chunks_exact(mr * kc))
                {
                    for (jr, b_strip) in
                        (0..nc).step_by(nr).zip(b_strips.chunks_exact(nr * kc))
                    {
                        let (i, j) = (ic + ir, jc + jr);
                        let (rows, cols) = (mr.min(m - i), nr.min(n - j));
                        // SAFETY: (i, j) is inside `c`, so the offset stays in its buffer.
                        let corner = unsafe {
                            c_ptr.offset(i as isize * rs_c + j as isize * cs_c)
                        };
                        let accumulate = pc > 0;
                        if rows == mr && cols == nr && cs_c == 1 {
                            // SAFETY: the whole tile lies inside `c` (row stride `rs_c`,
                            // unit column stride), which borrows mutably and so overlaps
                            // no strip.
                            unsafe {
                                tile::<S, MR, MR>(
                                    simd, a_strip, b_strip, corner, rs_c, accumulate,
                                )
                            };
                            continue;
                        }
                        // An edge tile (or a strided `c`) goes through a full scratch tile.
                        let at = |r: usize, q: usize| {
                            r as isize * rs_c + q as isize * cs_c
                        };
                        for r in 0..rows {
                            for q in 0..cols {
                                // SAFETY: (i + r, j + q) is inside `c`.
                                scratch[r * nr + q] =
                                    unsafe { *corner.offset(at(r, q)) };
                            }
                        }
                        let tile_at = scratch.as_mut_ptr();
                        // SAFETY: the tile is `scratch` (`MR·NR ≤ MAX_TILE` numbers, row
                        // stride `NR`), a local array.
                        unsafe {
                            edge_tile::<S, MR>(
                                simd,
                                rows,
                                a_strip,
                                b_strip,
                                tile_at,
                                nr as isize,
                                accumulate,
                            )
                        };
                        for r in 0..rows {
                            for q in 0..cols {
                                // SAFETY: (i + r, j + q) is inside `c`.
                                unsafe {
                                    *corner.offset(at(r, q)) = scratch[r * nr + q]
                                };
                            }
                        }
                    }
                }
            }
        }
    }
}

/// [`tile`] for the last strip of `a`, whose `rows < MR` rows are followed by zeros: only
/// the first `rows` rows (rounded up to an even number, so that fewer kernels are compiled)
/// are multiplied. A prompt of 128 tokens is nine strips of 14 and one of 2, which the
/// full kernel would compute as 14.
///
/// # Safety
/// As [`tile`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn edge_tile<S: Simd, const MR: usize>(
    simd: S,
    rows: usize,
    a: &[f32],
    b: &[f32],
    c: *mut f32,
    rs_c: isize,
    accumulate: bool,
) {
    // SAFETY: each arm's contract is the caller's, for `ROWS ≤ MR` rows of the tile.
    unsafe {
        match rows.next_multiple_of(2) {
            2 if MR > 2 => tile::<S, MR, 2>(simd, a, b, c, rs_c, accumulate),
            4 if MR > 4 => tile::<S, MR, 4>(simd, a, b, c, rs_c, accumulate),
            6 if MR > 6 => tile::<S, MR, 6>(simd, a, b, c, rs_c, accumulate),
            8 if MR > 8 => tile::<S, MR, 8>(simd, a, b, c, rs_c, accumulate),
            10 if MR > 10 => tile::<S, MR, 10>(simd, a, b, c, rs_c, accumulate),
            12 if MR > 12 => tile::<S, MR, 12>(simd, a, b, c, rs_c, accumulate),
            _ => tile::<S, MR, MR>(simd, a, b, c, rs_c, accumulate),
        }
    }
}

/// The micro-kernel: fuses the `kc` steps of the strips `a` (`kc·MR` numbers) and `b`
/// (`kc·NR`, `NR` two vectors) into the first `ROWS` rows of the `MR × NR` tile at `c`:
/// for each `p` in order, for each `i < ROWS`, `j < NR`: `c[i, j] = fma(a[p·MR + i],
/// b[p·NR + j], c[i, j])`, the tile starting from zero unless `accumulate`. Output `(i, j)`
/// lives at `c + i·rs_c + j`. The loops over `i` and the two vectors are unrolled by the
/// compiler, so the sums live in registers. Each output is its own chain of fused
/// multiply-adds along `p`, so how many rows go together changes no bit.
///
/// # Safety
/// The `ROWS × NR` tile at `c` (row stride `rs_c`) is writable and overlaps neither strip;
/// `ROWS ≤ MR`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn tile<S: Simd, const MR: usize, const ROWS: usize>(
    simd: S,
    a: &[f32],
    b: &[f32],
    c: *mut f32,
    rs_c: isize,
    accumulate: bool,
) {
    let (lanes, nr) = (S::LANES, 2 * S::LANES);
    let mut sums = [[simd.splat(0.0); 2]; ROWS];
    if accumulate {
        for (i, row) in sums.iter_mut().enumerate() {
            // SAFETY: row `i` of the tile, `NR` numbers, is inside it (the caller's
            // contract).
            let out = unsafe {
                std::slice::from_raw_parts(c.offset(i as isize * rs_c), nr)
            };
            *row = [simd.load(out), simd.load(&out[lanes..])];
        }
    }
    for (a_p, b_p) in a.chunks_exact(MR).zip(b.chunks_exact(nr)) {
        let (b0, b1) = (simd.load(b_p), simd.load(&b_p[lanes..]));
        for (row, &x) in sums.iter_mut().zip(a_p) {
            let x = simd.splat(x);
            row[0] = simd.mul_add(x, b0, row[0]);
            row[1] = simd.mul_add(x, b1, row[1]);
        }
    }
    for (i, row) in sums.iter().enumerate() {
        // SAFETY: as above; the tile is writable and no other reference to it is alive.
        let out = unsafe {
            std::slice::from_raw_parts_mut(c.offset(i as isize * rs_c), nr)
        };
        simd.store(row[0], out);
        simd.store(row[1], &mut out[lanes..]);
    }
}

/// Packs `block` into strips of `width` rows: strip `s` holds, for each column `p` in
/// order, the `width` numbers `block[s·width + i, p]` (zeros below the last row).
///
/// # Shapes
/// `block`: `[rows, kc]`; `packed`: at least `rows.next_multiple_of(width) · kc` numbers.
#[cfg(target_arch = "x86_64")]
fn pack(block: ArrayView2<f32>, width: usize, packed: &mut [f32]) {
    let (rows, kc) = block.dim();
    let (rs, cs) = (block.strides()[0], block.strides()[1]);
    let base = block.as_ptr();
    for (first, out) in (0..rows)
        .step_by(width)
        .zip(packed.chunks_exact_mut(width * kc))
    {
        let height = width.min(rows - first);
        if height < width {
            out.fill(0.0);
        }
        // A whole strip of contiguous rows (a prompt's rows, a weight `W` read as `Wᵀ`) is
        // turned around eight rows by eight columns at a time in vector registers, the
        // last group overlapping the one before where the strip is not a multiple of eight
        // rows high (rows 6 and 7 of a 14-row strip are written twice, the same numbers);
        // the rest number by number below.
        let mut done = 0;
        if height == width
            && width >= 8
            && cs == 1
            && std::arch::is_x86_feature_detected!("avx")
        {
            done = kc - kc % 8;
            let groups = (0..=width - 8)
                .step_by(8)
                .chain((!width.is_multiple_of(8)).then_some(width - 8));
            for group in groups {
                // SAFETY: rows `first + group..first + group + 8` are inside `block`, and
                // each holds `kc` numbers one apart.
                let rows: [&[f32]; 8] = std::array::from_fn(|i| unsafe {
                    let row = base.offset((first + group + i) as isize * rs);
                    std::slice::from_raw_parts(row, kc)
                });
                for p in (0..done).step_by(8) {
                    // SAFETY: the processor has AVX (checked above).
                    unsafe {
                        transpose_8x8(&rows, p, &mut out[p * width + group..], width)
                    };
                }
            }
        }
        // The packed strip is written in order; the block is read down its columns, so
        // the `height` rows of the strip are read side by side.
        for (p, slots) in out.chunks_exact_mut(width).enumerate().skip(done) {
            // SAFETY: row `first` and column `p` are inside `block`.
            let column =
                unsafe { base.offset(first as isize * rs + p as isize * cs) };
            if rs == 1 {
                // SAFETY: the `height` numbers below are inside `block`, one apart.
                let values = unsafe { std::slice::from_raw_parts(column, height) };
                slots[..height].copy_from_slice(values);
            } else {
                for (i, slot) in slots[..height].iter_mut().enumerate() {
                    // SAFETY: row `first + i` (`i < height`) is inside `block`.
                    *slot = unsafe { *column.offset(i as isize * rs) };
                }
            }
        }
    }
}

/// Writes the eight numbers `rows[i][p + j]` (`i < 8`) at `out[j·stride..j·stride + 8]`,
/// for each `j < 8`: eight columns of eight rows, each column now a row of `out`. The
/// classic three rounds of shuffles (pairs of numbers, pairs of pairs, halves).
///
/// # Safety
/// The processor has AVX.
///
/// # Panics
/// If a row has fewer than `p + 8` numbers or `out` fewer than `7·stride + 8`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn transpose_8x8(rows: &[&[f32]; 8], p: usize, out: &mut [f32], stride: usize) {
    use std::arch::x86_64::*;
    // Through `[f32; 8]` values, not `_mm256_loadu_ps`, whose pointer checks cost more
    // than the load in the dev profile; written out, not as a closure, which the dev
    // profile would call for each row.
    macro_rules! load {
        ($i:expr) => {{
            let values: [f32; 8] = rows[$i][p..p + 8].try_into().expect("8 numbers");
            // SAFETY: `[f32; 8]` and `__m256` are 32 bytes, every bit pattern valid in
            // both.
            unsafe { std::mem::transmute::<[f32; 8], __m256>(values) }
        }};
    }
    let r = [
        load!(0),
        load!(1),
        load!(2),
        load!(3),
        load!(4),
        load!(5),
        load!(6),
        load!(7),
    ];
    // Rows 2i and 2i+1 interleaved: (r0[0], r1[0], r0[1], r1[1] | r0[4], r1[4], ...).
    let t = [
        _mm256_unpacklo_ps(r[0], r[1]),
        _mm256_unpackhi_ps(r[0], r[1]),
        _mm256_unpacklo_ps(r[2], r[3]),
        _mm256_unpackhi_ps(r[2], r[3]),
        _mm256_unpacklo_ps(r[4], r[5]),
        _mm256_unpackhi_ps(r[4], r[5]),
        _mm256_unpacklo_ps(r[6], r[7]),
        _mm256_unpackhi_ps(r[6], r[7]),
    ];
    // Four rows' numbers of one column in each 128-bit half.
    let u = [
        _mm256_shuffle_ps::<0b01_00_01_00>(t[0], t[2]),
        _mm256_shuffle_ps::<0b11_10_11_10>(t[0], t[2]),
        _mm256_shuffle_ps::<0b01_00_01_00>(t[1], t[3]),
        _mm256_shuffle_ps::<0b11_10_11_10>(t[1], t[3]),
        _mm256_shuffle_ps::<0b01_00_01_00>(t[4], t[6]),
        _mm256_shuffle_ps::<0b11_10_11_10>(t[4], t[6]),
        _mm256_shuffle_ps::<0b01_00_01_00>(t[5], t[7]),
        _mm256_shuffle_ps::<0b11_10_11_10>(t[5], t[7]),
    ];
    // Rows 0-3 and rows 4-7 of the same column joined: columns 0-3 from the low halves,
    // 4-7 from the high ones.
    let columns = [
        _mm256_permute2f128_ps::<0x20>(u[0], u[4]),
        _mm256_permute2f128_ps::<0x20>(u[1], u[5]),
        _mm256_permute2f128_ps::<0x20>(u[2], u[6]),
        _mm256_permute2f128_ps::<0x20>(u[3], u[7]),
        _mm256_permute2f128_ps::<0x31>(u[0], u[4]),
        _mm256_permute2f128_ps::<0x31>(u[1], u[5]),
        _mm256_permute2f128_ps::<0x31>(u[2], u[6]),
        _mm256_permute2f128_ps::<0x31>(u[3], u[7]),
    ];
    for (j, column) in columns.into_iter().enumerate() {
        // SAFETY: as for the loads.
        let values = unsafe { std::mem::transmute::<__m256, [f32; 8]>(column) };
        out[j * stride..j * stride + 8].copy_from_slice(&values);
    }
}

#[cfg(test)]
mod tests {
    use ndarray::{Array2, ArrayView2, s};

    use super::*;
    use crate::kernels::dot_orders::fused_sum;

    /// A matrix of numbers in `[-1, 1)` from a small xorshift generator.
    fn random(rows: usize, cols: usize, seed: &mut u64) -> Array2<f32> {
        Array2::from_shape_simple_fn((rows, cols), || {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (*seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
    }

    /// Checks `c = a · b` against a float64 reference: each output within `(k + 2)` units
    /// of float32 rounding of `Σ |a·b|` (the bound of a chain of `k` roundings). With
    /// `exact`, also the bits of `fused_sum`, the order the micro-kernels promise.
    fn check(
        a: ArrayView2<f32>,
        b: ArrayView2<f32>,
        c: ArrayView2<f32>,
        exact: bool,
        what: &str,
    ) {
        let k = a.dim().1;
        let unit = f32::EPSILON as f64 / 2.0;
        for ((i, j), &got) in c.indexed_iter() {
            let pairs = a
                .row(i)
                .into_iter()
                .copied()
                .zip(b.column(j).into_iter().copied());
            let (sum, size) =
                pairs.clone().fold((0.0f64, 0.0f64), |(s, z), (x, y)| {
                    let p = x as f64 * y as f64;
                    (s + p, z + p.abs())
                });
            let bound = (k + 2) as f64 * unit * size;
            assert!(
                (got as f64 - sum).abs() <= bound,
                "{what}: c[{i}, {j}] = {got}, float64 says {sum} (bound {bound:e})"
            );
            if exact {
                let fused = fused_sum(pairs);
                assert_eq!(
                    got.to_bits(),
                    fused.to_bits(),
                    "{what}: c[{i}, {j}] not fused in order"
                );
            }
        }
    }

    #[test]
    fn a_kept_matrix_gives_the_packing_products_bits() {
        // More than one slice of `k` and one block of columns, ragged edges in both.
        let (m, k, n, mut seed) = (37, 300, 530, 0x2545f4914f6cdd1d);
        let a = random(m, k, &mut seed);
        let w = random(n, k, &mut seed);
        let product = || {
            let mut c = Array2::from_elem((m, n), f32::NAN);
            gemm_into(a.view(), w.t(), c.view_mut());
            c.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        };
        let packing = product();
        let kept = keep(w.t());
        let find =
            |b: ArrayView2<f32>| super::super::packed_once::find(Isa::detect(), b);
        assert_eq!(
            find(w.t()).is_some(),
            Isa::detect() != Isa::Portable,
            "a kept matrix is found where the product packs"
        );
        assert_eq!(product(), packing, "the kept packing's product");
        // Part of the matrix (fewer columns of `wᵀ`) is not the kept matrix.
        assert!(find(w.slice(s![..n - 1, ..]).t()).is_none());
        drop(kept);
        assert!(find(w.t()).is_none(), "dropped, the packing is gone");
    }

    #[test]
    fn every_instruction_set_multiplies_odd_shapes() {
        let mut seed = 0x9e3779b97f4a7c15;
        let shapes = [
            (1, 1, 1),
            (1, 7, 13),
            (7, 13, 33),
            (13, 1, 7),
            (33, 257, 13),
            (15, 300, 33),
            (29, 600, 65),
            (257, 33, 7),
            (30, 40, 530),
            // Last strips of every height, a prompt of 128 rows among them.
            (18, 20, 40),
            (24, 9, 70),
            (26, 300, 33),
            (128, 64, 40),
            (3, 0, 5),
        ];
        for isa in Isa::available() {
            let exact = isa != Isa::Portable;
            for (m, k, n) in shapes {
                let (a, b) = (random(m, k, &mut seed), random(k, n, &mut seed));
                let mut c = Array2::from_elem((m, n), f32::NAN);
                gemm_with(isa, a.view(), b.view(), c.view_mut());
                check(
                    a.view(),
                    b.view(),
                    c.view(),
                    exact,
                    &format!("{isa:?} {m}x{k}x{n}"),
                );
            }
        }
    }

    #[test]
    fn every_instruction_set_takes_transposed_and_strided_views() {
        let mut seed = 7;
        let (m, k, n) = (37, 290, 45);
        // `a` read by columns, `b` a transposed `W` (`x·Wᵀ`), every other row of a bigger
        // matrix, or the rows of a matrix backwards; `c` transposed or strided.
        let a_t = random(k, m, &mut seed);
        let w = random(n, k, &mut seed);
        let a_wide = random(2 * m, 3 * k, &mut seed);
        let b_big = random(2 * k, n, &mut seed);
        let a_views = [a_t.t(), a_wide.slice(s![..;2, 1..;3])];
        let b_views = [w.t(), b_big.slice(s![..;-2, ..])];
        for isa in Isa::available() {
            let exact = isa != Isa::Portable;
            for (x, a) in a_views.iter().enumerate() {
                for (y, b) in b_views.iter().enumerate() {
                    let what = format!("{isa:?} a {x} b {y}");
                    let mut c_t = Array2::from_elem((n, m), f32::NAN);
                    gemm_with(
                        isa,
                        a.view(),
                        b.view(),
                        c_t.view_mut().reversed_axes(),
                    );
                    check(
                        a.view(),
                        b.view(),
                        c_t.t(),
                        exact,
                        &format!("{what} c transposed"),
                    );
                    let mut c_wide = Array2::from_elem((m, 2 * n), f32::NAN);
                    gemm_with(
                        isa,
                        a.view(),
                        b.view(),
                        c_wide.slice_mut(s![.., ..;2]),
                    );
                    check(
                        a.view(),
                        b.view(),
                        c_wide.slice(s![.., ..;2]),
                        exact,
                        &what,
                    );
                }
            }
        }
    }

    #[test]
    fn rows_split_between_threads_give_the_same_bits() {
        let mut seed = 3;
        let (m, k, n) = (301, 300, 37);
        let (a, b) = (random(m, k, &mut seed), random(k, n, &mut seed));
        let bits =
            |x: &Array2<f32>| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        for isa in Isa::available() {
            let mut one = Array2::zeros((m, n));
            gemm_with(isa, a.view(), b.view(), one.view_mut());
            for threads in [2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let rows = m.div_ceil(threads);
                let mut many = Array2::zeros((m, n));
                pool.scope(|scope| {
                    let parts = a.axis_chunks_iter(ndarray::Axis(0), rows);
                    for (a, c) in
                        parts.zip(many.axis_chunks_iter_mut(ndarray::Axis(0), rows))
                    {
                        let b = b.view();
                        scope.spawn(move |_| gemm_with(isa, a, b, c));
                    }
                });
                assert_eq!(bits(&one), bits(&many), "{isa:?} on {threads} threads");
            }
        }
    }
}
