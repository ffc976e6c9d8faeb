//! The four kernels, each a WGSL file in `kernels/` that the book shows whole,
//! compiled by the device when a pipeline is made (the first program's kernel, adding
//! two arrays, is in [`crate::first_program`]). The same files run in the book's
//! page, in the reader's browser.

/// Kernel 1: one invocation per query row, the scores in global memory.
pub const NAIVE: &str = include_str!("../kernels/01_naive.wgsl");
/// Kernel 2: one workgroup per query row, the scores in workgroup memory.
pub const ROW_PER_WORKGROUP: &str =
    include_str!("../kernels/02_row_per_workgroup.wgsl");
/// Kernel 3: FlashAttention's forward pass, without `key_tiles` (see [`CAUSAL_TILES`]).
pub const FLASH: &str = include_str!("../kernels/03_flash.wgsl");
/// Kernel 4: split-KV decoding, its parts and their merge.
pub const SPLIT_KV: &str = include_str!("../kernels/04_split_kv.wgsl");

/// `key_tiles`, the causal tile skip of kernel 3, in a file of its own.
pub const CAUSAL_TILES: &str = include_str!("../kernels/causal_tiles.wgsl");

/// `window_tiles`, the tile range of kernel 3's workgroups under a sliding window
/// instead of the causal mask: with `--features exercise` the learner's version from
/// `exercises/window_tiles.wgsl`.
#[cfg(not(feature = "exercise"))]
pub const WINDOW_TILES: &str = include_str!("../kernels/window_tiles.wgsl");
/// `window_tiles` under a sliding window: the learner's version.
#[cfg(feature = "exercise")]
pub const WINDOW_TILES: &str = include_str!("../exercises/window_tiles.wgsl");

/// Which kernel computes the attention.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Kernel 1: one invocation per query row.
    Naive,
    /// Kernel 2: one workgroup per query row.
    RowPerWorkgroup,
    /// Kernel 3: FlashAttention, a workgroup per tile of queries.
    Flash,
    /// Kernel 4: the keys in `splits` parts, each a workgroup, merged at the end.
    SplitKv {
        /// How many parts the keys are cut into.
        splits: u32,
    },
}

impl Kernel {
    /// The forward kernels, in the order of the chapter.
    pub const FORWARD: [Kernel; 3] =
        [Kernel::Naive, Kernel::RowPerWorkgroup, Kernel::Flash];

    /// The kernel's name, for messages and timings.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Naive => "kernel 1 (naive)",
            Kernel::RowPerWorkgroup => "kernel 2 (row per workgroup)",
            Kernel::Flash => "kernel 3 (flash)",
            Kernel::SplitKv { .. } => "kernel 4 (split-KV)",
        }
    }

    /// The WGSL source the device compiles: the file, and for kernel 3 `key_tiles` after it.
    pub fn source(self) -> String {
        match self {
            Kernel::Naive => NAIVE.to_string(),
            Kernel::RowPerWorkgroup => ROW_PER_WORKGROUP.to_string(),
            Kernel::Flash => format!("{FLASH}\n{CAUSAL_TILES}"),
            Kernel::SplitKv { .. } => SPLIT_KV.to_string(),
        }
    }
}
