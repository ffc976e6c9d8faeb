//! The trained byte-pair encoding in Hugging Face's format: a `tokenizers::Tokenizer`
//! with the same vocabulary and merges, the same cut into words (the regular
//! expression [`WORDS`], which [`crate::bpe::words`] spells out), and a decoder that
//! joins the tokens' texts as they are. Saved, it is the `tokenizer.json` that
//! transformers and chapter 20 read beside a model.

use std::path::Path;

use shared::{Error, Result};
use tokenizers::decoders::fuse::Fuse;
use tokenizers::models::bpe::{BPE, Vocab};
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{SplitDelimiterBehavior, Tokenizer};

use crate::bpe::Bpe;

/// The cut into words as a regular expression: a space and the non-whitespace
/// characters after it, or else a run of whitespace.
pub const WORDS: &str = r" ?\S+|\s+";

/// A `tokenizers` error, naming what was being done.
fn failed(op: &'static str, error: impl std::fmt::Display) -> Error {
    Error::InvalidArgument {
        op,
        detail: error.to_string(),
    }
}

/// The pre-tokenizer that cuts text as [`crate::bpe::words`] does: each match of
/// [`WORDS`] is a word of its own.
pub fn words_pre_tokenizer() -> Result<Split> {
    Split::new(
        SplitPattern::Regex(WORDS.to_string()),
        SplitDelimiterBehavior::Isolated,
        false,
    )
    .map_err(|e| failed("words_pre_tokenizer", e))
}

// ANCHOR: save
/// `bpe` as a `tokenizers::Tokenizer`.
pub fn to_tokenizer(bpe: &Bpe) -> Result<Tokenizer> {
    let vocab: Vocab = bpe
        .vocab
        .iter()
        .enumerate()
        .map(|(id, token)| (token.clone(), id as u32))
        .collect();
    let merges = bpe
        .merges
        .iter()
        .map(|&(a, b)| Ok((bpe.token(a)?.to_string(), bpe.token(b)?.to_string())))
        .collect::<Result<Vec<_>>>()?;
    let model = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(|e| failed("to_tokenizer", e))?;
    let mut tokenizer = Tokenizer::new(model);
    tokenizer.with_pre_tokenizer(Some(words_pre_tokenizer()?));
    tokenizer.with_decoder(Some(Fuse::new()));
    Ok(tokenizer)
}

/// Writes `bpe` to `path` as a `tokenizer.json`.
pub fn save(bpe: &Bpe, path: &Path) -> Result<()> {
    to_tokenizer(bpe)?
        .save(path, false)
        .map_err(|e| failed("save_tokenizer", format!("{}: {e}", path.display())))
}
// ANCHOR_END: save
