//! Byte-pair encoding (Sennrich, Haddow and Birch, "Neural Machine Translation of
//! Rare Words with Subword Units", 2016), written out: start from the characters,
//! count every pair of neighbouring tokens, merge the most frequent pair into a new
//! token, and repeat until the vocabulary has the size asked for. Encoding replays
//! the merges in the order they were learnt; decoding joins the tokens' texts.
//!
//! Before counting, the text is cut into words ([`words`]) and no merge crosses a
//! cut, so a token never spans two words. Hugging Face's `tokenizers` trains the same
//! merges from the same words ([`crate::tokenizer_json`] builds it and writes the
//! trained tokenizer as a `tokenizer.json`); the chapter's tests compare the two
//! merge for merge.

#[cfg_attr(feature = "exercise", path = "../../exercises/bpe_step.rs")]
mod step;

use std::collections::HashMap;

use shared::{Error, Result};

use crate::chars::Chars;

pub use step::{merge, most_frequent_pair};

/// A distinct word of the training text, as token ids, and how often the text has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The word's tokens: its characters at first, fewer and longer after each merge.
    pub ids: Vec<u32>,
    /// How many times the word occurs in the text.
    pub count: u64,
}

// ANCHOR: words
/// Cuts `text` into words: a run of non-whitespace characters with the one space
/// before it, if there is one, or else a run of whitespace (line breaks,
/// indentation). Joined, the words are the text again. This is the regular expression
/// ` ?\S+|\s+`.
pub fn words(text: &str) -> Vec<&str> {
    let is_space = |c: char| c.is_whitespace();
    let mut words = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let after_space = rest.strip_prefix(' ').unwrap_or(rest);
        let len = if after_space.starts_with(|c: char| !is_space(c)) {
            rest.len() - after_space.trim_start_matches(|c: char| !is_space(c)).len()
        } else {
            rest.len() - rest.trim_start_matches(is_space).len()
        };
        let (word, tail) = rest.split_at(len);
        words.push(word);
        rest = tail;
    }
    words
}
// ANCHOR_END: words

// ANCHOR: count_pairs
/// `counts[a][b]`: how often token `a` is followed by token `b` inside a word, each
/// word's pairs counted as often as the word occurs.
///
/// # Shapes
/// `words`: ids below `vocab_size` → `[vocab_size][vocab_size]`.
pub fn count_pairs(words: &[Word], vocab_size: usize) -> Vec<Vec<u64>> {
    let mut counts = vec![vec![0; vocab_size]; vocab_size];
    for word in words {
        for pair in word.ids.windows(2) {
            counts[pair[0] as usize][pair[1] as usize] += word.count;
        }
    }
    counts
}
// ANCHOR_END: count_pairs

/// A trained byte-pair encoding.
#[derive(Clone, Debug)]
pub struct Bpe {
    /// The first tokens: the training text's characters, in sorted order.
    pub alphabet: Chars,
    /// The merges in the order learnt: merge `r` joins its pair into token
    /// `alphabet.vocab_size() + r`.
    pub merges: Vec<(u32, u32)>,
    /// Every token's text, by id.
    pub vocab: Vec<String>,
    /// The token each merged pair becomes; a smaller id was learnt earlier.
    merged_into: HashMap<(u32, u32), u32>,
}

impl Bpe {
    // ANCHOR: train
    /// Learns merges from `text` until the vocabulary has `vocab_size` tokens (or no
    /// pair is left to merge: every word is one token).
    pub fn train(text: &str, vocab_size: usize) -> Result<Self> {
        let alphabet = Chars::new(text);
        if vocab_size < alphabet.vocab_size() {
            return Err(Error::InvalidArgument {
                op: "bpe_train",
                detail: format!(
                    "a vocabulary of {vocab_size} tokens cannot hold the text's {} \
                     characters",
                    alphabet.vocab_size()
                ),
            });
        }
        let mut words = distinct_words(text, &alphabet)?;
        let mut merges = Vec::new();
        while alphabet.vocab_size() + merges.len() < vocab_size {
            let new_id = (alphabet.vocab_size() + merges.len()) as u32;
            let counts = count_pairs(&words, new_id as usize);
            let Some(pair) = most_frequent_pair(&counts) else {
                break;
            };
            for word in &mut words {
                // Most words do not hold the pair: leave them as they are.
                if word.ids.windows(2).any(|p| (p[0], p[1]) == pair) {
                    word.ids = merge(&word.ids, pair, new_id);
                }
            }
            merges.push(pair);
        }
        Ok(Self::from_merges(alphabet, merges))
    }
    // ANCHOR_END: train

    /// The encoding that `merges` make from `alphabet`'s characters.
    pub fn from_merges(alphabet: Chars, merges: Vec<(u32, u32)>) -> Self {
        let mut vocab: Vec<String> =
            alphabet.chars.iter().map(char::to_string).collect();
        let mut merged_into = HashMap::new();
        for &(a, b) in &merges {
            merged_into.insert((a, b), vocab.len() as u32);
            vocab.push(format!("{}{}", vocab[a as usize], vocab[b as usize]));
        }
        Self {
            alphabet,
            merges,
            vocab,
            merged_into,
        }
    }

    /// How many tokens there are: the characters and one per merge.
    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    // ANCHOR: encode
    /// The tokens of `text`: each word's characters, merged in the order the merges
    /// were learnt (the pair learnt first, wherever it is, then the next) until no
    /// learnt pair is left.
    ///
    /// # Shapes
    /// `text`: `n` characters → at most `n` ids.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let mut tokens = Vec::new();
        for word in words(text) {
            let mut ids = self.alphabet.encode(word)?;
            while let Some((pair, new_id)) = ids
                .windows(2)
                .filter_map(|p| {
                    Some(((p[0], p[1]), *self.merged_into.get(&(p[0], p[1]))?))
                })
                .min_by_key(|&(_, new_id)| new_id)
            {
                ids = merge(&ids, pair, new_id);
            }
            tokens.extend(ids);
        }
        Ok(tokens)
    }

    /// The text of `ids`: their tokens' texts, joined.
    ///
    /// # Shapes
    /// `ids`: `n` → at least `n` characters.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        ids.iter().map(|&id| self.token(id)).collect()
    }
    // ANCHOR_END: encode

    /// The text of one token; an id past the vocabulary is an error that names it.
    pub fn token(&self, id: u32) -> Result<&str> {
        self.vocab
            .get(id as usize)
            .map(String::as_str)
            .ok_or_else(|| Error::IndexOutOfRange {
                op: "decode",
                index: i64::from(id),
                dim: 0,
                size: self.vocab.len(),
            })
    }
}

/// The distinct words of `text` as characters' ids, each with how often it occurs:
/// the counts of pairs are the same as over the whole text, with far fewer words to
/// walk.
fn distinct_words(text: &str, alphabet: &Chars) -> Result<Vec<Word>> {
    let mut counts: HashMap<&str, u64> = HashMap::new();
    for word in words(text) {
        *counts.entry(word).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(word, count)| {
            Ok(Word {
                ids: alphabet.encode(word)?,
                count,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_one_space_in_front_and_join_back_to_the_text() {
        let text = "To be, or  not\n  to be:\nthat is ";
        let cut = words(text);
        assert_eq!(
            cut,
            [
                "To", " be,", " or", "  ", "not", "\n  ", "to", " be:", "\n", "that",
                " is", " "
            ]
        );
        assert_eq!(cut.concat(), text);
        assert!(words("").is_empty());
    }

    #[test]
    fn training_merges_the_most_frequent_pair_first() {
        // "ab" occurs 4 times, "bc" 2 times; then "ab"+"c" twice.
        let bpe = Bpe::train("ab ab abc abc", 7).unwrap();
        let [space, a, b, c] = [0, 1, 2, 3];
        assert_eq!(bpe.alphabet.chars, vec![' ', 'a', 'b', 'c']);
        assert_eq!(bpe.merges, vec![(a, b), (space, 4), (5, c)]);
        assert_eq!(bpe.vocab[4..], ["ab", " ab", " abc"]);
        let ids = bpe.encode("ab abc").unwrap();
        assert_eq!(ids, vec![4, 6]);
        assert_eq!(bpe.decode(&ids).unwrap(), "ab abc");
    }

    #[test]
    fn training_stops_when_every_word_is_one_token() {
        let bpe = Bpe::train("aa aa", 100).unwrap();
        assert_eq!(bpe.vocab, vec![" ", "a", "aa", " aa"]);
    }

    #[test]
    fn bad_input_is_an_error_that_names_it() {
        let error = Bpe::train("abc", 2).unwrap_err().to_string();
        assert_eq!(
            error,
            "bpe_train: a vocabulary of 2 tokens cannot hold the text's 3 characters"
        );
        let bpe = Bpe::train("abc", 3).unwrap();
        assert!(bpe.encode("abd").unwrap_err().to_string().contains("'d'"));
        assert!(
            bpe.decode(&[3])
                .unwrap_err()
                .to_string()
                .starts_with("decode: index 3")
        );
    }
}
