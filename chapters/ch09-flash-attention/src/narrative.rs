//! The chapter's printed steps, in the order of `reference/ch09_flash_attention.py`.

use shared::{Narrative, Result};

/// Runs the chapter and returns what it prints.
pub fn narrative() -> Result<Narrative> {
    let story = Narrative::new("Chapter 9: FlashAttention, attention in tiles");
    Ok(story)
}
