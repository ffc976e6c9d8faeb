//! Writing files so that a run that fails halfway loses nothing: each file is written
//! whole under a temporary name in its own folder, then renamed over the old one (a rename
//! within a folder is all or nothing), so the folder holds either the old file or the new
//! one, never half of one. And the tensors' bytes as safetensors stores them.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use safetensors::Dtype;
use safetensors::tensor::TensorView;
use shared::{Error, Result, Tensor};

/// The temporary name `path` is written under before the rename: a hidden file beside it.
pub fn temporary_name(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.partial"))
}

/// An input/output error, naming the operation and the file.
pub fn io_error(
    op: &'static str,
    path: &Path,
    error: impl std::fmt::Display,
) -> Error {
    Error::InvalidArgument {
        op,
        detail: format!("{}: {error}", path.display()),
    }
}

/// Writes `bytes` to `path` atomically: to [`temporary_name`] first, flushed to the disk,
/// then renamed to `path`. On an error the temporary file is removed and `path` is as it
/// was.
pub fn write_atomically(op: &'static str, path: &Path, bytes: &[u8]) -> Result<()> {
    let partial = temporary_name(path);
    let written = (|| {
        let mut file = std::fs::File::create(&partial)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&partial, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        io_error(op, path, e)
    })
}

/// A float32 tensor's values as little-endian bytes, row after row.
///
/// # Shapes
/// `t`: any shape. Returns `4 · t.numel()` bytes.
pub fn f32_bytes(t: &Tensor) -> Vec<u8> {
    t.to_vec().iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Named float32 tensors as the bytes of a safetensors file, with `metadata` in its
/// header; an error names `op`.
///
/// # Shapes
/// `tensors`: any shapes.
pub fn safetensors_file(
    op: &'static str,
    tensors: &[(String, &Tensor)],
    metadata: Option<HashMap<String, String>>,
) -> Result<Vec<u8>> {
    let failed = |detail: String| Error::InvalidArgument { op, detail };
    let bytes: Vec<(&str, Vec<usize>, Vec<u8>)> = tensors
        .iter()
        .map(|(name, t)| (name.as_str(), t.sizes().to_vec(), f32_bytes(t)))
        .collect();
    let views = bytes
        .iter()
        .map(|(name, shape, data)| {
            TensorView::new(Dtype::F32, shape.clone(), data)
                .map(|view| (*name, view))
                .map_err(|e| failed(format!("{name}: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    safetensors::serialize(views, metadata).map_err(|e| failed(e.to_string()))
}

/// The float32 tensor a safetensors view holds, or an error naming the file and tensor.
///
/// # Shapes
/// Returns the view's shape.
pub fn f32_tensor(path: &Path, name: &str, view: &TensorView<'_>) -> Result<Tensor> {
    if view.dtype() != Dtype::F32 {
        return Err(io_error(
            "read_tensor",
            path,
            format!("tensor {name} is {:?}, expected F32", view.dtype()),
        ));
    }
    let values = view
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok(Tensor::from_vec(values, view.shape()))
}
