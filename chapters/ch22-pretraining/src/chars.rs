//! The character tokenizer nanoGPT's `shakespeare_char` uses: every distinct
//! character of the text is a token, numbered in sorted order.

use std::collections::BTreeSet;

use shared::{Error, Result};

/// Characters to ids and back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chars {
    /// The vocabulary: token `i` is `chars[i]`, in sorted order.
    pub chars: Vec<char>,
}

// ANCHOR: chars
impl Chars {
    /// The sorted distinct characters of `text` (nanoGPT: `chars =
    /// sorted(list(set(data)))`).
    pub fn new(text: &str) -> Self {
        let distinct: BTreeSet<char> = text.chars().collect();
        Self {
            chars: distinct.into_iter().collect(),
        }
    }

    /// How many tokens there are.
    pub fn vocab_size(&self) -> usize {
        self.chars.len()
    }

    /// Each character's id.
    ///
    /// # Shapes
    /// `text`: `n` characters → `n` ids.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        text.chars().map(|c| self.id(c)).collect()
    }

    /// The characters of `ids`.
    ///
    /// # Shapes
    /// `ids`: `n` ids → `n` characters.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        ids.iter().map(|&id| self.char(id)).collect()
    }
}
// ANCHOR_END: chars

impl Chars {
    /// The id of one character; one the text never had is an error that names it.
    pub fn id(&self, c: char) -> Result<u32> {
        match self.chars.binary_search(&c) {
            Ok(i) => Ok(i as u32),
            Err(_) => Err(Error::InvalidArgument {
                op: "encode",
                detail: format!(
                    "the character {c:?} is not in the vocabulary of {} characters",
                    self.chars.len()
                ),
            }),
        }
    }

    /// The character of one id; an id past the vocabulary is an error that names it.
    pub fn char(&self, id: u32) -> Result<char> {
        self.chars
            .get(id as usize)
            .copied()
            .ok_or_else(|| Error::IndexOutOfRange {
                op: "decode",
                index: i64::from(id),
                dim: 0,
                size: self.chars.len(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_the_sorted_characters() {
        let chars = Chars::new("hello, world");
        assert_eq!(
            chars.chars,
            vec![' ', ',', 'd', 'e', 'h', 'l', 'o', 'r', 'w']
        );
        let ids = chars.encode("hello").unwrap();
        assert_eq!(ids, vec![4, 3, 5, 5, 6]);
        assert_eq!(chars.decode(&ids).unwrap(), "hello");
    }

    #[test]
    fn unknown_characters_and_ids_are_errors() {
        let chars = Chars::new("ab");
        let error = chars.encode("abc").unwrap_err().to_string();
        assert_eq!(
            error,
            "encode: the character 'c' is not in the vocabulary of 2 characters"
        );
        let error = chars.decode(&[0, 2]).unwrap_err().to_string();
        assert!(
            error.starts_with("decode: index 2 is out of bounds"),
            "{error}"
        );
    }
}
