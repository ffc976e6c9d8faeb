//! Either tokenizer behind one type, for a run that may read its text either way.

use shared::Result;

use crate::bpe::Bpe;
use crate::chars::Chars;
use crate::config::Tokenizer;
use crate::data::Shakespeare;
use crate::setup::BPE_VOCAB;

/// A trained tokenizer of either kind.
pub enum Encoder {
    /// One token per character.
    Chars(Chars),
    /// Byte-pair encoding, trained on the training text.
    Bpe(Bpe),
}

impl Encoder {
    /// The tokenizer `kind` for `data`: its characters, or byte-pair encoding of
    /// [`BPE_VOCAB`] tokens trained on the training text.
    pub fn new(kind: Tokenizer, data: &Shakespeare) -> Result<Encoder> {
        Ok(match kind {
            Tokenizer::Char => Encoder::Chars(Chars::new(&data.text)),
            Tokenizer::Bpe => Encoder::Bpe(Bpe::train(data.split().0, BPE_VOCAB)?),
        })
    }

    /// The number of token ids.
    pub fn vocab_size(&self) -> usize {
        match self {
            Encoder::Chars(c) => c.vocab_size(),
            Encoder::Bpe(b) => b.vocab_size(),
        }
    }

    /// `text` as token ids.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        match self {
            Encoder::Chars(c) => c.encode(text),
            Encoder::Bpe(b) => b.encode(text),
        }
    }

    /// Token ids back to text.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        match self {
            Encoder::Chars(c) => c.decode(ids),
            Encoder::Bpe(b) => b.decode(ids),
        }
    }
}
