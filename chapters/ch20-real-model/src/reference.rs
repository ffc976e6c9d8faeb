//! What transformers computed on the real model, as the reference script saved it
//! (`fixtures/real/`): the narrative prints it beside ours, the tests compare with it.

use std::path::PathBuf;

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
    let bytes = std::fs::read(&path).map_err(|source| LoadError::Io {
        path: path.clone(),
        source,
    })?;
    let file = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| {
        LoadError::Corrupt {
            path: path.clone(),
            offset: 0,
            detail: e.to_string(),
        }
    })?;
    let name = format!("last_logits_{index}");
    let view = file.tensor(&name).map_err(|_| LoadError::MissingTensor {
        path: path.clone(),
        name,
    })?;
    let values = view
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok(Tensor::from_vec(values, view.shape()))
}
