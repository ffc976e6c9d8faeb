//! What can go wrong reading a model: every message names the file (or the tensor) and
//! what was expected, so that a reader can tell a truncated download from a model this
//! chapter does not run.

use std::path::PathBuf;

/// An error while loading a model, its tokenizer or a prompt.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read at all.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file does not start with `GGUF`.
    #[error("{}: not a GGUF file (it does not start with the bytes GGUF)", path.display())]
    NotGguf {
        /// The file.
        path: PathBuf,
    },
    /// The file ends before something it announced.
    #[error(
        "{}: truncated: {what} needs {needed} bytes at offset {offset}, but the file has {len}",
        path.display()
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// What was being read.
        what: String,
        /// Where it starts.
        offset: u64,
        /// How many bytes it needs.
        needed: u64,
        /// The file's length.
        len: u64,
    },
    /// Bytes that cannot be what the format says is there.
    #[error("{}: corrupted at offset {offset}: {detail}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Where.
        offset: u64,
        /// What is wrong.
        detail: String,
    },
    /// A model, format or type this chapter does not run.
    #[error("{}: unsupported {field}: {value}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// The field that says so.
        field: String,
        /// Its value.
        value: String,
    },
    /// A `config.json` that is not JSON, or misses a key the model needs, or holds a
    /// value of the wrong type (serde's message names the key, or its line and column).
    #[error("{}: {detail}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// What serde found.
        detail: String,
    },
    /// A metadata or configuration key the model needs is missing.
    #[error("{}: missing {key}", path.display())]
    MissingKey {
        /// The file.
        path: PathBuf,
        /// The key.
        key: String,
    },
    /// A tensor the model needs is missing.
    #[error("{}: missing tensor {name}", path.display())]
    MissingTensor {
        /// The file.
        path: PathBuf,
        /// The tensor's name.
        name: String,
    },
    /// A tensor of the wrong size.
    #[error("tensor {tensor}: {detail}")]
    Shape {
        /// The tensor's name.
        tensor: String,
        /// What is wrong.
        detail: String,
    },
    /// A prompt the model cannot take.
    #[error("prompt: {0}")]
    Prompt(String),
    /// The tokenizer or the chat template failed.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
}

impl From<LoadError> for shared::Error {
    /// For the narrative, whose steps return `shared::Result`.
    fn from(error: LoadError) -> shared::Error {
        shared::Error::InvalidArgument {
            op: "model",
            detail: error.to_string(),
        }
    }
}
