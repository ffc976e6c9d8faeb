//! A right-hand matrix packed once for the packed GEMM, for a matrix that is multiplied
//! again and again: a layer's weight `W`, as `x·Wᵀ`, against one prompt after another.
//!
//! [`gemm`](super::gemm) packs `b` block by block before it multiplies, reading every
//! number of `b` once per product. For a weight matrix and a prompt of a few tokens the
//! packing costs as much as the multiplication. `gemm::keep` packs every block of `b` once,
//! in the order its loops ask for them (the slices of `k`, the blocks of columns within
//! each), and this module keeps them while their owner keeps them (see [`Kept`]): a
//! product whose `b` is that matrix, the same numbers at the same address, reads the kept
//! blocks instead of packing. The kept blocks are the numbers packing would write, and the
//! micro-kernel and its loops are the same, so the product has the same bits (`gemm`'s
//! tests).

use std::sync::{Arc, RwLock};

use ndarray::ArrayView2;

use crate::simd::Isa;

/// Every block of one matrix `b` (`[k, n]`), packed for the micro-kernels of one
/// instruction set.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) struct PackedOnce {
    /// The instruction set whose strips these are (their width is its `NR`).
    pub(crate) isa: Isa,
    /// The numbers; each block a whole number of strips.
    pub(crate) buffer: Vec<f32>,
    /// Where each block starts in `buffer`: block `j` of slice `p` of `k` at
    /// `starts[p · blocks_per_slice + j]`, each ending where the next starts.
    pub(crate) starts: Vec<usize>,
    /// Blocks of columns per slice of `k`.
    pub(crate) blocks_per_slice: usize,
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
impl PackedOnce {
    /// The strips of block `column_block` of slice `slice` of `k`.
    pub(crate) fn block(&self, slice: usize, column_block: usize) -> &[f32] {
        let index = slice * self.blocks_per_slice + column_block;
        let end = self
            .starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.buffer.len());
        &self.buffer[self.starts[index]..end]
    }
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
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
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
/// lives (`shared::nn::PackedWeight` holds a reference to them for that).
pub(crate) struct Kept {
    id: Option<u64>,
}

/// Keeps `packed`, the packing of `b`, for the products by `b` (nothing kept for `None`,
/// where the processor's product packs nothing).
///
/// # Shapes
/// `b`: `[k, n]`, any strides.
pub(crate) fn keep(b: ArrayView2<f32>, packed: Option<PackedOnce>) -> Kept {
    let Some(packed) = packed else {
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
