//! The chapter's sizes: a small sequence whose digits are printed, and the article's
//! sizes, whose counts are printed; and the model and optimizer of the training step.

use ch22_pretraining::config::Config;
use ch22_pretraining::train::Settings;

use crate::shards::Layout;

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

/// The model of the training step across ranks: chapter 22's small Llama for tests (2
/// layers, 2 heads of 16, width 32, a batch of 4 sequences of 16 tokens) over 64 token
/// ids. 16 tokens cut into zigzag shards on 4 ranks: 8 chunks of 2 tokens.
pub fn step_config() -> Config {
    Config::tiny(64)
}

/// The step's AdamW: chapter 22's (betas 0.9 and 0.99, weight decay 0.1 on the matrices,
/// the gradients clipped to a norm of 1) at a learning rate of 1e-3 from the first step,
/// without a warm-up, so that one step moves the weights visibly.
pub fn step_settings() -> Settings {
    Settings {
        warmup: 0,
        decay_steps: 1,
        ..Settings::shakespeare(1)
    }
}

/// The shards of the training step: zigzag, each rank one run of tokens from the front
/// and one from the back.
pub const STEP_LAYOUT: Layout = Layout::Zigzag;
