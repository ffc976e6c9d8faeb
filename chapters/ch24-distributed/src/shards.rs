//! How the sequence is cut across ranks: contiguous shards, or zigzag shards that give
//! every rank the same causal work.
//!
//! The sequence is cut into chunks of equal length. With contiguous shards rank `r` holds
//! chunk `r` of `W`; with zigzag shards the sequence is cut into `2W` chunks and rank `r`
//! holds chunks `r` and `2W - 1 - r`, one early and one late (the head-tail balance of
//! ring-flash-attention, Megatron-LM and PyTorch's context parallelism; Brandon et al.,
//! "Striped Attention", balance the same work by dealing the tokens out one at a time).

use shared::{Error, Result};

pub use crate::zigzag::zigzag_chunks;

/// Which tokens each rank holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Rank `r` holds chunk `r` of `W`.
    Contiguous,
    /// Rank `r` holds chunks `r` and `2W - 1 - r` of `2W`.
    Zigzag,
}

impl Layout {
    /// Chunks the sequence is cut into on `world` ranks.
    ///
    /// # Shapes
    /// Counts only.
    pub fn chunks(self, world: usize) -> usize {
        match self {
            Layout::Contiguous => world,
            Layout::Zigzag => 2 * world,
        }
    }

    /// The chunks rank `rank` holds, in the order its queries are kept.
    ///
    /// # Shapes
    /// Counts only: `rank < world`.
    pub fn chunks_of(self, rank: usize, world: usize) -> Vec<usize> {
        match self {
            Layout::Contiguous => vec![rank],
            Layout::Zigzag => zigzag_chunks(rank, world).to_vec(),
        }
    }

    /// The layout's name as the chapter prints it.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Contiguous => "contiguous",
            Layout::Zigzag => "zigzag",
        }
    }
}

/// Tokens per chunk of `tokens` cut for `world` ranks with `layout`, or an error naming
/// the sizes when they do not divide.
///
/// # Shapes
/// Counts only.
pub fn chunk_len(tokens: usize, world: usize, layout: Layout) -> Result<usize> {
    let chunks = layout.chunks(world);
    if world == 0 || tokens == 0 || !tokens.is_multiple_of(chunks) {
        return Err(Error::InvalidArgument {
            op: "ring_attention",
            detail: format!(
                "{tokens} tokens on {world} ranks with {} shards: the tokens must split into \
                 {chunks} chunks of equal, positive length",
                layout.name()
            ),
        });
    }
    Ok(tokens / chunks)
}
