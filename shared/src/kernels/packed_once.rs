//! A right-hand matrix packed once for the packed GEMM, for a matrix that is multiplied
//! again and again: a layer's weight `W`, as `x·Wᵀ`, against one prompt after another.
//!
//! [`gemm`](super::gemm) packs `b` block by block before it multiplies, reading every
//! number of `b` once per product. For a weight matrix and a prompt of a few tokens the
//! packing costs as much as the multiplication. Here every block of `b` is packed once, in
//! the order [`gemm`](super::gemm)'s loops ask for them (the slices of `k` of `KC` steps,
//! the blocks of `NC` columns within each), and kept while its owner keeps it (see
//! [`Kept`]): a product whose `b` is that matrix, the same numbers at the same address,
//! reads the kept blocks instead of packing. The kept blocks are the numbers packing would
//! write, and the micro-kernel and its loops are the same, so the product has the same bits.

use std::sync::{Arc, RwLock};

use ndarray::ArrayView2;
#[cfg(target_arch = "x86_64")]
use ndarray::s;

use super::gemm::{Isa, strip_width};
#[cfg(target_arch = "x86_64")]
use super::gemm::{KC, NC, pack};

/// Every block of one matrix `b` (`[k, n]`), packed for the micro-kernels of one
/// instruction set.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) struct PackedOnce {
    /// The instruction set whose strips these are (their width is its `NR`).
    isa: Isa,
    /// The numbers, from a 64-byte boundary on; each block a whole number of strips.
    buffer: Vec<f32>,
    /// Where each block starts in `buffer`: block `(pc / KC, jc / NC)` at
    /// `starts[pc / KC · blocks_per_slice + jc / NC]`.
    starts: Vec<usize>,
    /// Blocks of `NC` columns per slice of `k`.
    blocks_per_slice: usize,
}

#[cfg(target_arch = "x86_64")]
impl PackedOnce {
    /// The strips of the block of `b` that starts at step `pc` of `k` and column `jc`.
    pub(crate) fn block(&self, pc: usize, jc: usize) -> &[f32] {
        let index = pc / KC * self.blocks_per_slice + jc / NC;
        let end = self
            .starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.buffer.len());
        &self.buffer[self.starts[index]..end]
    }
}

/// `b` packed for `isa`, or `None` where `isa` packs nothing (the portable product).
///
/// # Shapes
/// `b`: `[k, n]`, any strides.
#[cfg(target_arch = "x86_64")]
fn pack_once(isa: Isa, b: ArrayView2<f32>) -> Option<PackedOnce> {
    let nr = strip_width(isa)?;
    let (k, n) = b.dim();
    let bt = b.t();
    let blocks_per_slice = n.div_ceil(NC);
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
    let mut at = offset;
    let mut blocks = sizes.iter();
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
    // `block` reads from its start to the next one's: the first starts after the padding.
    Some(PackedOnce {
        isa,
        buffer,
        starts,
        blocks_per_slice,
    })
}

/// Off x86-64 the product is `ndarray`'s: nothing is packed.
#[cfg(not(target_arch = "x86_64"))]
fn pack_once(isa: Isa, _b: ArrayView2<f32>) -> Option<PackedOnce> {
    strip_width(isa)?;
    None
}

/// One kept matrix: where its numbers are, its shape and strides, its packing.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Entry {
    id: u64,
    address: usize,
    dim: (usize, usize),
    strides: (isize, isize),
    packed: Arc<PackedOnce>,
}

/// The matrices kept packed, with the number the next one gets.
static KEPT: RwLock<(Vec<Entry>, u64)> = RwLock::new((Vec::new(), 0));

/// The kept packing of `b` for `isa`, if `b` is a kept matrix (the same address, shape
/// and strides).
///
/// # Shapes
/// `b`: `[k, n]`.
#[cfg(target_arch = "x86_64")]
pub(crate) fn find(isa: Isa, b: ArrayView2<f32>) -> Option<Arc<PackedOnce>> {
    let kept = KEPT.read().unwrap_or_else(|e| e.into_inner());
    let strides = (b.strides()[0], b.strides()[1]);
    kept.0
        .iter()
        .find(|e| {
            e.address == b.as_ptr() as usize
                && e.dim == b.dim()
                && e.strides == strides
                && e.packed.isa == isa
        })
        .map(|e| Arc::clone(&e.packed))
}

/// A matrix kept packed while this lives; dropped, the packing is freed.
///
/// The owner must keep the matrix's numbers where they are, unchanged, as long as this
/// lives (`shared::exact::PackedWeight` holds a reference to them for that).
pub(crate) struct Kept {
    id: Option<u64>,
}

/// Packs `b` once for the products on this processor's instruction set (nothing where it
/// has no packed product).
///
/// # Shapes
/// `b`: `[k, n]`, any strides.
pub(crate) fn keep(b: ArrayView2<f32>) -> Kept {
    let Some(packed) = pack_once(Isa::detect(), b) else {
        return Kept { id: None };
    };
    let mut kept = KEPT.write().unwrap_or_else(|e| e.into_inner());
    let id = kept.1;
    kept.1 += 1;
    kept.0.push(Entry {
        id,
        address: b.as_ptr() as usize,
        dim: b.dim(),
        strides: (b.strides()[0], b.strides()[1]),
        packed: Arc::new(packed),
    });
    Kept { id: Some(id) }
}

impl Drop for Kept {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            let mut kept = KEPT.write().unwrap_or_else(|e| e.into_inner());
            kept.0.retain(|e| e.id != id);
        }
    }
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;

    use super::*;
    use crate::kernels::matmul::blocked_into;
    use crate::kernels::row_dots::tests::{bits, values};
    use ndarray::s;

    /// `a · wᵀ` by the product the large products take.
    fn product(a: &Array2<f32>, w: &Array2<f32>) -> Array2<f32> {
        let mut c = Array2::from_elem((a.dim().0, w.dim().0), f32::NAN);
        blocked_into(a.view(), w.t(), c.view_mut());
        c
    }

    #[test]
    fn a_kept_matrix_gives_the_packing_products_bits() {
        // More than one slice of `k` and one block of columns, ragged edges in both.
        let (m, k, n) = (37, 300, 530);
        let a = Array2::from_shape_vec((m, k), values(3, m * k)).unwrap();
        let w = Array2::from_shape_vec((n, k), values(4, n * k)).unwrap();
        let packing = product(&a, &w);
        let kept = keep(w.t());
        assert_eq!(
            find(Isa::detect(), w.t()).is_some(),
            Isa::detect() != Isa::Portable,
            "a kept matrix is found where the product packs"
        );
        assert_eq!(
            bits(product(&a, &w).as_slice().unwrap()),
            bits(packing.as_slice().unwrap())
        );
        // Part of the matrix (fewer columns of `wᵀ`) is not the kept matrix.
        assert!(find(Isa::detect(), w.slice(s![..n - 1, ..]).t()).is_none());
        drop(kept);
        assert!(
            find(Isa::detect(), w.t()).is_none(),
            "dropped, the packing is gone"
        );
    }
}
