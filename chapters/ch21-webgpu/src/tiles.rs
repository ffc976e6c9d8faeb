//! Tile sizes from the adapter's limits.
//!
//! Workgroup memory is small: WebGPU guarantees 16 KiB per workgroup, which is what
//! lavapipe and most browsers give; a hardware GPU may give 32 or 48 KiB. Kernel 3 stages
//! a tile of keys and one of values there, so the tile of keys is the largest that fits
//! ([`largest_tile_k`]); kernels 2 and 4 keep a whole row (or part) of scores there.

use wgpu::Limits;

use crate::workgroup_memory::largest_tile_k;

// ANCHOR: head_dim_max
/// The largest `d` and `d_v` kernel 3 handles: a query row and an output row live
/// in each invocation's registers, as arrays of this many floats.
pub const HEAD_DIM_MAX: usize = 64;
// ANCHOR_END: head_dim_max
/// The largest tile of keys kernel 3 handles (a tile's weights live in registers).
pub const TILE_K_MAX: usize = 64;
/// Invocations of kernels 2 and 4, and queries per workgroup of kernel 3 at most.
pub const WORKGROUP: usize = 64;

/// The sizes the kernels are compiled with for one device and one `d`, `d_v`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileSizes {
    /// Kernel 3: queries per workgroup, one invocation each.
    pub tile_q: usize,
    /// Kernel 3: keys per tile.
    pub tile_k: usize,
    /// Kernels 2 and 4: the longest row (or part) of scores a workgroup holds.
    pub row_capacity: usize,
    /// The workgroup memory they were sized for, in bytes.
    pub workgroup_bytes: usize,
}

impl TileSizes {
    /// The tiles for a device with `limits` and heads of `d` and `d_v` features.
    ///
    /// # Shapes
    /// `d`, `d_v`: the features of a query or key, and of a value.
    // ANCHOR: for_limits
    pub fn for_limits(limits: &Limits, d: usize, d_v: usize) -> TileSizes {
        let workgroup_bytes = limits.max_compute_workgroup_storage_size as usize;
        let invocations = (limits.max_compute_invocations_per_workgroup as usize)
            .min(limits.max_compute_workgroup_size_x as usize);
        TileSizes {
            tile_q: WORKGROUP.min(invocations),
            tile_k: largest_tile_k(workgroup_bytes, d, d_v, TILE_K_MAX),
            // Kernel 2's 64 partial results take 64 floats of it.
            row_capacity: (workgroup_bytes / 4).saturating_sub(WORKGROUP),
            workgroup_bytes,
        }
    }
    // ANCHOR_END: for_limits
}
