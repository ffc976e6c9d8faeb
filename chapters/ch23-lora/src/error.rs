//! What can go wrong, each naming the file or the value.

use std::path::PathBuf;

use ch20_real_model::LoadError;

/// An error of the chapter's files and settings.
#[derive(Debug, thiserror::Error)]
pub enum LoraError {
    /// Loading the model (chapter 20's loader) failed.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A tensor operation refused its input.
    #[error(transparent)]
    Tensor(#[from] shared::Error),
    /// A setting that cannot make an adapter.
    #[error("{0}")]
    Settings(String),
    /// A model the adapters cannot be put on.
    #[error("{0}")]
    Model(String),
    /// An adapter file that cannot be read, or does not fit the model.
    #[error("adapter {path}: {detail}")]
    Adapter {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The loss or a gradient is not a finite number.
    #[error("{0}")]
    NotFinite(String),
}

impl From<LoraError> for shared::Error {
    fn from(error: LoraError) -> shared::Error {
        match error {
            LoraError::Tensor(e) => e,
            other => shared::Error::InvalidArgument {
                op: "lora",
                detail: other.to_string(),
            },
        }
    }
}
