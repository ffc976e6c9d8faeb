//! What transformers computed on the real model, as the reference script saved it
//! (`fixtures/real/`): the narrative prints it beside ours, the tests compare with it, the
//! book draws the saved attention weights.

use std::path::{Path, PathBuf};

use safetensors::{Dtype, SafeTensors};
use shared::Tensor;

use crate::error::LoadError;

/// `fixtures/real/NAME` in this crate.
pub fn real_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real")
        .join(name)
}

/// transformers' logits after the last token of the reference's prompt `index`.
///
/// # Shapes
/// Returns `[vocab]`.
pub fn transformers_last_logits(index: usize) -> Result<Tensor, LoadError> {
    let path = real_fixture("last-logits.safetensors");
    let bytes = read(&path)?;
    let file = parse(&path, &bytes)?;
    f32_tensor(&path, &file, &format!("last_logits_{index}"))
}

/// The real model's attention weights the reference script saved: every head of one
/// layer on the chapter's sentence (where the sink shows), and its strongest induction
/// head on a short random sequence repeated once.
#[derive(Clone, Debug)]
pub struct SavedAttention {
    /// The layer of `sentence_layer`.
    pub sink_layer: usize,
    /// That layer's weights on [`crate::setup::SENTENCE`], `[heads, tokens, tokens]`.
    pub sentence_layer: Tensor,
    /// The sentence's token ids.
    pub sentence_ids: Vec<i64>,
    /// The strongest induction head, as `layer.head`.
    pub induction_head_name: String,
    /// Its weights on the repeat, `[tokens, tokens]`.
    pub induction_head: Tensor,
    /// The repeat's token ids: the start token, then twelve random tokens, twice.
    pub repeat_ids: Vec<i64>,
}

/// Reads `fixtures/real/attention.safetensors`.
pub fn saved_attention() -> Result<SavedAttention, LoadError> {
    let path = real_fixture("attention.safetensors");
    let bytes = read(&path)?;
    let file = parse(&path, &bytes)?;
    let (_, metadata) =
        SafeTensors::read_metadata(&bytes).map_err(|e| corrupt(&path, e))?;
    let field = |key: &str| {
        metadata
            .metadata()
            .as_ref()
            .and_then(|m| m.get(key).cloned())
            .ok_or_else(|| LoadError::MissingTensor {
                path: path.clone(),
                name: format!("metadata {key}"),
            })
    };
    let sink_layer = field("sink_layer")?;
    Ok(SavedAttention {
        sink_layer: sink_layer.parse().map_err(|_| LoadError::Unsupported {
            path: path.clone(),
            field: "sink_layer".into(),
            value: sink_layer.clone(),
        })?,
        sentence_layer: f32_tensor(&path, &file, "sentence_layer")?,
        sentence_ids: i64_values(&path, &file, "sentence_ids")?,
        induction_head_name: field("induction_head")?,
        induction_head: f32_tensor(&path, &file, "induction_head")?,
        repeat_ids: i64_values(&path, &file, "repeat_ids")?,
    })
}

fn read(path: &Path) -> Result<Vec<u8>, LoadError> {
    std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn corrupt(path: &Path, e: safetensors::SafeTensorError) -> LoadError {
    LoadError::Corrupt {
        path: path.to_path_buf(),
        offset: 0,
        detail: e.to_string(),
    }
}

fn parse<'a>(path: &Path, bytes: &'a [u8]) -> Result<SafeTensors<'a>, LoadError> {
    SafeTensors::deserialize(bytes).map_err(|e| corrupt(path, e))
}

/// The little-endian bytes of tensor `name`, which must be of type `dtype`, and its shape.
fn raw<'a>(
    path: &Path,
    file: &'a SafeTensors,
    name: &str,
    dtype: Dtype,
) -> Result<(&'a [u8], Vec<usize>), LoadError> {
    let view = file.tensor(name).map_err(|_| LoadError::MissingTensor {
        path: path.to_path_buf(),
        name: name.to_string(),
    })?;
    if view.dtype() != dtype {
        return Err(LoadError::Unsupported {
            path: path.to_path_buf(),
            field: format!("dtype of {name}"),
            value: format!("{:?}", view.dtype()),
        });
    }
    Ok((view.data(), view.shape().to_vec()))
}

fn f32_tensor(
    path: &Path,
    file: &SafeTensors,
    name: &str,
) -> Result<Tensor, LoadError> {
    let (data, shape) = raw(path, file, name, Dtype::F32)?;
    let values = data
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok(Tensor::from_vec(values, &shape))
}

fn i64_values(
    path: &Path,
    file: &SafeTensors,
    name: &str,
) -> Result<Vec<i64>, LoadError> {
    let (data, _) = raw(path, file, name, Dtype::I64)?;
    Ok(data
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect())
}
