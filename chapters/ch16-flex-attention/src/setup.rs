//! The chapter's sizes: its inputs, its tiles, and the window, documents, prefix and cap of
//! its recipes.

/// Batches, query heads, key/value heads, tokens and features per head.
pub const SIZES: [usize; 5] = [1, 4, 2, 16, 8];
/// Queries and keys per tile.
pub const TILE: usize = 4;
/// The window of the windowed recipes.
pub const WINDOW: usize = 4;
/// The lengths of the documents packed into the 16 tokens.
pub const DOCUMENTS: [usize; 3] = [5, 7, 4];
/// The prompt of the prefix-LM.
pub const PREFIX: usize = 6;
/// The softcap.
pub const CAP: f32 = 2.0;
