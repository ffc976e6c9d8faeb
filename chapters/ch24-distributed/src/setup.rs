//! The chapter's sizes: a small sequence whose digits are printed, and the article's
//! sizes, whose counts are printed.

/// Ranks (processes) the sequence is cut across.
pub const WORLD: usize = 4;

/// The printed run: `[tokens, heads, head_dim]`, small enough to print rows of.
pub const SIZES: Sizes = Sizes {
    tokens: 16,
    heads: 4,
    head_dim: 16,
};

/// Keys per tile of chapter 16's kernel inside a block.
pub const TILE: usize = 2;

/// Width of the model whose heads the tensor-parallel step splits.
pub const D_MODEL: usize = 16;

/// The article's sizes, whose products and bytes the chapter counts: 1024 tokens, 8 heads
/// of 64.
pub const ARTICLE: Sizes = Sizes {
    tokens: 1024,
    heads: 8,
    head_dim: 64,
};

/// The sizes of one attention: every rank must hold the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Tokens of the whole sequence.
    pub tokens: usize,
    /// Query heads, each with its own keys and values here.
    pub heads: usize,
    /// Numbers per query, key and value.
    pub head_dim: usize,
}
