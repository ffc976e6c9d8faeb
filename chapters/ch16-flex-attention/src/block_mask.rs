//! The block mask: the mask summarised once per tile.
//!
//! Cut the `[queries, keys]` mask into tiles of `tile × tile`. A tile is
//! - **full** if every query in it sees every key in it: its scores need no mask;
//! - **partial** if some entries are visible and some hidden: computed, then masked;
//! - **empty** if no entry is visible: every weight would be 0, so it is skipped.
//!
//! PyTorch's `create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, BLOCK_SIZE=tile)` computes
//! the same summary by calling the mask_mod on every entry once, ahead of the attention.
//! A mask that is the same for every batch and head (all of this chapter's recipes) is
//! computed for one and shared, as with PyTorch's `B=None, H=None`.

use std::ops::Range;

use shared::{Error, Result};

use crate::recipes::MaskMod;

/// What the mask leaves of one tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileKind {
    /// Every entry visible.
    Full,
    /// Some entries visible.
    Partial,
    /// No entry visible.
    Empty,
}

impl TileKind {
    /// `F`, `P` or `.`, as the chapter prints the grid.
    ///
    /// # Shapes
    /// Indices and counts only.
    pub fn symbol(self) -> char {
        match self {
            TileKind::Full => 'F',
            TileKind::Partial => 'P',
            TileKind::Empty => '.',
        }
    }
}

/// The kind of the tile of queries `q_range` and keys `kv_range` in head `h` of batch `b`.
///
/// # Shapes
/// Indices only.
// ANCHOR: classify_tile
pub fn classify_tile(
    mask_mod: &impl MaskMod,
    b: usize,
    h: usize,
    q_range: std::ops::Range<usize>,
    kv_range: std::ops::Range<usize>,
) -> TileKind {
    let entries = q_range.len() * kv_range.len();
    let visible = q_range
        .flat_map(|q_idx| kv_range.clone().map(move |kv_idx| (q_idx, kv_idx)))
        .filter(|&(q_idx, kv_idx)| mask_mod(b, h, q_idx, kv_idx))
        .count();
    match visible {
        0 => TileKind::Empty,
        n if n == entries => TileKind::Full,
        _ => TileKind::Partial,
    }
}
// ANCHOR_END: classify_tile

/// A tile of keys that a tile of queries computes: which tile, its keys, and whether its
/// scores need the mask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileVisit {
    /// The tile's index along the keys.
    pub kt: usize,
    /// The keys it holds.
    pub keys: Range<usize>,
    /// A partial tile (`true`): the mask_mod decides every entry. A full one (`false`):
    /// no mask.
    pub masked: bool,
}

/// Every tile's kind, for `batch × heads` masks (1 and 1 for a mask shared by all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockMask {
    /// Queries and keys per tile.
    pub tile: usize,
    /// How many queries and keys the mask covers.
    pub queries: usize,
    /// How many keys.
    pub keys: usize,
    /// Batches the mask was computed for (1: shared by every batch).
    pub batch: usize,
    /// Heads the mask was computed for (1: shared by every head).
    pub heads: usize,
    /// `[batch, heads, query tiles, key tiles]`, row-major.
    kinds: Vec<TileKind>,
}

impl BlockMask {
    /// Calls `mask_mod` on every entry once and records the kind of every tile.
    ///
    /// # Shapes
    /// Counts only: `queries`, `keys` and `tile` must be positive.
    // ANCHOR: block_mask_new
    pub fn new(
        mask_mod: impl MaskMod,
        batch: usize,
        heads: usize,
        queries: usize,
        keys: usize,
        tile: usize,
    ) -> Result<BlockMask> {
        if tile == 0 || queries == 0 || keys == 0 || batch == 0 || heads == 0 {
            return Err(Error::InvalidArgument {
                op: "create_block_mask",
                detail: format!(
                    "expected positive sizes, got batch {batch}, heads {heads}, queries \
                     {queries}, keys {keys}, tile {tile}"
                ),
            });
        }
        let (q_tiles, kv_tiles) = (queries.div_ceil(tile), keys.div_ceil(tile));
        let span = |t: usize, len: usize| t * tile..((t + 1) * tile).min(len);
        let mut kinds = Vec::with_capacity(batch * heads * q_tiles * kv_tiles);
        for b in 0..batch {
            for h in 0..heads {
                for qt in 0..q_tiles {
                    for kt in 0..kv_tiles {
                        let rows = span(qt, queries);
                        kinds.push(classify_tile(
                            &mask_mod,
                            b,
                            h,
                            rows,
                            span(kt, keys),
                        ));
                    }
                }
            }
        }
        Ok(BlockMask {
            tile,
            queries,
            keys,
            batch,
            heads,
            kinds,
        })
    }
    // ANCHOR_END: block_mask_new

    /// Tiles along the queries.
    ///
    /// # Shapes
    /// Indices and counts only.
    pub fn q_tiles(&self) -> usize {
        self.queries.div_ceil(self.tile)
    }

    /// Tiles along the keys.
    ///
    /// # Shapes
    /// Indices and counts only.
    pub fn kv_tiles(&self) -> usize {
        self.keys.div_ceil(self.tile)
    }

    /// The kind of tile `(qt, kt)` in head `h` of batch `b` (a mask computed for one batch
    /// or one head serves them all).
    ///
    /// # Shapes
    /// Indices only: `qt < q_tiles()`, `kt < kv_tiles()`.
    pub fn kind(&self, b: usize, h: usize, qt: usize, kt: usize) -> TileKind {
        let b = if self.batch == 1 { 0 } else { b };
        let h = if self.heads == 1 { 0 } else { h };
        self.kinds
            [((b * self.heads + h) * self.q_tiles() + qt) * self.kv_tiles() + kt]
    }

    /// The tiles of keys that tile `qt` of queries computes in head `h` of batch `b`, in
    /// order: every tile but the empty ones, whose keys and values are never read. Every
    /// kernel of the chapter (and the faster ones built on it) walks the block mask
    /// through this.
    ///
    /// # Shapes
    /// Indices only: `qt < q_tiles()`.
    // ANCHOR: visit
    pub fn visit(
        &self,
        b: usize,
        h: usize,
        qt: usize,
    ) -> impl Iterator<Item = TileVisit> + '_ {
        (0..self.kv_tiles()).filter_map(move |kt| {
            let masked = match self.kind(b, h, qt, kt) {
                TileKind::Empty => return None,
                TileKind::Full => false,
                TileKind::Partial => true,
            };
            let keys = kt * self.tile..((kt + 1) * self.tile).min(self.keys);
            Some(TileVisit { kt, keys, masked })
        })
    }
    // ANCHOR_END: visit

    /// How many tiles of `kind` the mask holds, over every batch and head it was computed
    /// for.
    ///
    /// # Shapes
    /// Indices and counts only.
    pub fn count(&self, kind: TileKind) -> usize {
        self.kinds.iter().filter(|&&k| k == kind).count()
    }

    /// The tiles of head `h` of batch `b`, one line per query tile, `F`, `P` or `.` each.
    ///
    /// # Shapes
    /// Returns `q_tiles()` lines of `kv_tiles()` symbols.
    pub fn grid(&self, b: usize, h: usize) -> Vec<String> {
        (0..self.q_tiles())
            .map(|qt| {
                let symbols: Vec<String> = (0..self.kv_tiles())
                    .map(|kt| self.kind(b, h, qt, kt).symbol().to_string())
                    .collect();
                symbols.join(" ")
            })
            .collect()
    }
}
