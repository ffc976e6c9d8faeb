//! Text to token ids and back, with Hugging Face's `tokenizers` library.
//!
//! SmolLM2 reads text as GPT-2 does: the text's UTF-8 bytes, each byte one of 256 base
//! tokens, merged by byte-pair encoding (Sennrich et al., 2016) into longer tokens, merge
//! by merge in the order learnt. A regular expression first cuts the text into words,
//! numbers, runs of spaces and punctuation, and no merge crosses a cut. Special tokens
//! (`<|im_start|>`, `<|im_end|>`) are matched whole before anything else.
//!
//! SmolLM2's own rule (`smollm`, the file's `tokenizer.ggml.pre`) also cuts every digit on
//! its own, where GPT-2's expression, used here as transformers uses it for this file,
//! keeps a number whole. The ids are the same because none of SmolLM2's merges joins two
//! digits: a number ends as one token a digit either way.
//!
//! A GGUF file stores the vocabulary (`tokenizer.ggml.tokens`), the merges
//! (`tokenizer.ggml.merges`) and which tokens are special (`tokenizer.ggml.token_type`
//! 3); the tokenizer is built from them as transformers builds it from the same file.
//! A safetensors folder has a `tokenizer.json` that the library reads as it is.

use std::path::Path;

use tokenizers::models::bpe::{BPE, Vocab};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::{AddedToken, Tokenizer};

use crate::error::LoadError;
use crate::gguf::GgufFile;

/// GGUF's token type of a control token (`<|im_start|>`, `<|endoftext|>`).
pub const CONTROL: u64 = 3;

/// A tokenizer error, naming what was being done.
fn failed(what: &str, error: impl std::fmt::Display) -> LoadError {
    LoadError::Tokenizer(format!("{what}: {error}"))
}

/// The tokenizer in a GGUF file: byte-level BPE from its vocabulary and merges.
// ANCHOR: from_gguf
pub fn from_gguf(file: &GgufFile) -> Result<Tokenizer, LoadError> {
    let strings = |key: &str| -> Result<Vec<String>, LoadError> {
        let value = file.get(key)?;
        let list = value.as_strings().ok_or_else(|| LoadError::Unsupported {
            path: file.path.clone(),
            field: key.to_string(),
            value: format!("{value} (expected a list of strings)"),
        })?;
        Ok(list.into_iter().map(str::to_string).collect())
    };
    let model = file.get("tokenizer.ggml.model")?;
    if model.as_str() != Some("gpt2") {
        return Err(LoadError::Unsupported {
            path: file.path.clone(),
            field: "tokenizer.ggml.model".into(),
            value: format!("{model} (this chapter reads byte-level BPE, gpt2)"),
        });
    }
    let tokens = strings("tokenizer.ggml.tokens")?;
    let merges = strings("tokenizer.ggml.merges")?
        .into_iter()
        .map(|m| match m.split_once(' ') {
            Some((a, b)) => Ok((a.to_string(), b.to_string())),
            None => Err(failed(
                "tokenizer.ggml.merges",
                format!("{m:?} is not two tokens"),
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let vocab: Vocab = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(|e| failed("building the BPE model", e))?;
    let mut tokenizer = Tokenizer::new(bpe);
    // GPT-2's regular expression cuts the text; no space is added in front of it.
    tokenizer.with_pre_tokenizer(Some(ByteLevel::new(false, true, true)));
    tokenizer.with_decoder(Some(ByteLevel::default()));
    let types = file.get("tokenizer.ggml.token_type")?;
    let Some(types) = (match types {
        crate::gguf::Value::Array(items) => items
            .iter()
            .map(|v| v.as_u64())
            .collect::<Option<Vec<u64>>>(),
        _ => None,
    }) else {
        return Err(failed(
            "tokenizer.ggml.token_type",
            "not a list of integers",
        ));
    };
    let special: Vec<AddedToken> = tokens
        .iter()
        .zip(&types)
        .filter(|&(_, &t)| t == CONTROL)
        .map(|(token, _)| AddedToken::from(token.clone(), true).normalized(false))
        .collect();
    tokenizer.add_special_tokens(&special);
    Ok(tokenizer)
}
// ANCHOR_END: from_gguf

/// The tokenizer of a safetensors folder: its `tokenizer.json`, as transformers saved it.
pub fn from_file(path: &Path) -> Result<Tokenizer, LoadError> {
    Tokenizer::from_file(path).map_err(|e| failed(&path.display().to_string(), e))
}

/// The ids of `text`, with no token added in front or behind.
///
/// # Shapes
/// Returns one id per token.
pub fn encode(tokenizer: &Tokenizer, text: &str) -> Result<Vec<u32>, LoadError> {
    let encoding = tokenizer
        .encode(text, false)
        .map_err(|e| failed("encode", e))?;
    Ok(encoding.get_ids().to_vec())
}

/// The text of `ids`.
pub fn decode(tokenizer: &Tokenizer, ids: &[u32]) -> Result<String, LoadError> {
    tokenizer
        .decode(ids, false)
        .map_err(|e| failed("decode", e))
}

/// The bytes of token `id`: a byte-level vocabulary writes each byte as one printable
/// character (GPT-2's alphabet: `Ġ` for a space), so a token's string spells its bytes.
/// `None` for a token that is not spelt so (a special token such as `<|im_end|>`).
pub fn token_bytes(tokenizer: &Tokenizer, id: u32) -> Option<Vec<u8>> {
    let token = tokenizer.id_to_token(id)?;
    token.chars().map(byte_of).collect()
}

/// GPT-2's alphabet read backwards: the 188 printable bytes (`!` to `~`, `¡` to `¬`, `®` to
/// `ÿ`) are written as themselves, the 68 others (space, control bytes, ...) as the
/// characters from U+0100 on, in the order of the bytes.
fn byte_of(c: char) -> Option<u8> {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let code = u32::from(c);
    match u8::try_from(code) {
        Ok(b) if printable(b) => Some(b),
        Ok(_) => None,
        Err(_) => {
            let n = usize::try_from(code.checked_sub(256)?).ok()?;
            (0..=255u8).filter(|&b| !printable(b)).nth(n)
        }
    }
}
