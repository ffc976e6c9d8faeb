//! A trained model's weights as a safetensors file: every parameter under its name in
//! `named_parameters()`, float32, so that the chapter can sample from a model trained once
//! instead of training it on every run, and PyTorch's `load_state_dict` reads the same
//! file.

use safetensors::{Dtype, SafeTensors};
use shared::{Error, Result, Tensor};

use crate::files::safetensors_file;
use crate::model::Model;

/// An error of reading or writing weights.
fn invalid(op: &'static str, detail: impl Into<String>) -> Error {
    Error::InvalidArgument {
        op,
        detail: detail.into(),
    }
}

/// `model`'s parameters as the bytes of a safetensors file.
pub fn to_safetensors(model: &Model) -> Result<Vec<u8>> {
    safetensors_file("to_safetensors", &model.named_parameters(), None)
}

/// Reads every parameter of `model` from a safetensors file's `bytes`, by name: each must
/// be there, float32, in the parameter's shape.
pub fn load_safetensors(model: &mut Model, bytes: &[u8]) -> Result<()> {
    let file = SafeTensors::deserialize(bytes).map_err(|e| {
        invalid("load_safetensors", format!("not a safetensors file: {e}"))
    })?;
    let names: Vec<String> = model
        .named_parameters()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    for (name, p) in names.iter().zip(model.parameters_mut()) {
        let stored = file
            .tensor(name)
            .map_err(|e| invalid("load_safetensors", format!("{name}: {e}")))?;
        if stored.dtype() != Dtype::F32 || stored.shape() != p.sizes() {
            return Err(invalid(
                "load_safetensors",
                format!(
                    "{name}: expected float32 of shape {:?}, found {:?} of shape {:?}",
                    p.sizes(),
                    stored.dtype(),
                    stored.shape()
                ),
            ));
        }
        let values = stored
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        *p = Tensor::from_vec(values, p.sizes());
    }
    Ok(())
}
