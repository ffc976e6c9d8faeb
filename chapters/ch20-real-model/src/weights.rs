//! The parameters, by name, whatever file they came from.
//!
//! Loading is its own room: a GGUF file and a safetensors checkpoint both end here, as
//! float32 tensors under transformers' names (`model.layers.0.self_attn.q_proj.weight`),
//! with `W_q` and `W_k` in the half-split order. The model is built from this and never
//! sees a file format.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use shared::Tensor;

use crate::config::Config;
use crate::error::LoadError;
use crate::gguf::GgufFile;
use crate::unpermute::unpermute_rows;

/// Float32 parameters under transformers' names.
#[derive(Debug)]
pub struct Weights {
    /// Where they were read from (for error messages).
    pub path: PathBuf,
    tensors: HashMap<String, Tensor>,
}

/// GGUF's name of every parameter of a layer, and transformers'.
const LAYER_NAMES: [(&str, &str); 11] = [
    ("attn_norm.weight", "input_layernorm.weight"),
    ("attn_q.weight", "self_attn.q_proj.weight"),
    ("attn_k.weight", "self_attn.k_proj.weight"),
    ("attn_v.weight", "self_attn.v_proj.weight"),
    ("attn_output.weight", "self_attn.o_proj.weight"),
    ("attn_q_norm.weight", "self_attn.q_norm.weight"),
    ("attn_k_norm.weight", "self_attn.k_norm.weight"),
    ("ffn_norm.weight", "post_attention_layernorm.weight"),
    ("ffn_gate.weight", "mlp.gate_proj.weight"),
    ("ffn_up.weight", "mlp.up_proj.weight"),
    ("ffn_down.weight", "mlp.down_proj.weight"),
];

impl Weights {
    /// Every tensor of a GGUF file, dequantised to float32 and renamed; `W_q` and `W_k`
    /// un-permuted. `progress` is called after each tensor with (done, total).
    pub fn from_gguf(
        file: &GgufFile,
        config: &Config,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<Weights, LoadError> {
        let mut tensors = HashMap::new();
        let total = file.tensors.len();
        for (done, info) in file.tensors.iter().enumerate() {
            let name = hf_name(&info.name).ok_or_else(|| LoadError::Unsupported {
                path: file.path.clone(),
                field: "tensor".into(),
                value: info.name.clone(),
            })?;
            let (mut values, shape) = file.tensor(&info.name)?;
            let heads = if name.ends_with("q_proj.weight") {
                Some(config.n_heads)
            } else if name.ends_with("k_proj.weight") {
                Some(config.n_kv_heads)
            } else {
                None
            };
            if let (Some(heads), &[rows, d_in]) = (heads, &shape[..]) {
                if rows != heads * config.head_dim {
                    return Err(LoadError::Shape {
                        tensor: info.name.clone(),
                        detail: format!(
                            "{rows} rows, expected {heads} heads of {}",
                            config.head_dim
                        ),
                    });
                }
                values = unpermute_rows(&values, heads, config.head_dim, d_in);
            }
            tensors.insert(name, Tensor::from_vec(values, &shape));
            progress(done + 1, total);
        }
        Ok(Weights {
            path: file.path.clone(),
            tensors,
        })
    }

    /// Every tensor of a transformers `model.safetensors` (float32, float16 or bfloat16).
    pub fn from_safetensors(path: &Path) -> Result<Weights, LoadError> {
        let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let file = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| {
            LoadError::Corrupt {
                path: path.to_path_buf(),
                offset: 0,
                detail: e.to_string(),
            }
        })?;
        let mut tensors = HashMap::new();
        for (name, view) in file.tensors() {
            let data = view.data();
            let values: Vec<f32> = match view.dtype() {
                safetensors::Dtype::F32 => data
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
                safetensors::Dtype::F16 => data
                    .chunks_exact(2)
                    .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                    .collect(),
                safetensors::Dtype::BF16 => data
                    .chunks_exact(2)
                    .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
                    .collect(),
                other => {
                    return Err(LoadError::Unsupported {
                        path: path.to_path_buf(),
                        field: format!("dtype of {name}"),
                        value: format!("{other:?}"),
                    });
                }
            };
            tensors.insert(name, Tensor::from_vec(values, view.shape()));
        }
        Ok(Weights {
            path: path.to_path_buf(),
            tensors,
        })
    }

    /// Removes and returns the tensor `name`, checking its shape.
    ///
    /// # Shapes
    /// Returns a tensor of `shape`.
    pub fn take(&mut self, name: &str, shape: &[usize]) -> Result<Tensor, LoadError> {
        let tensor =
            self.tensors
                .remove(name)
                .ok_or_else(|| LoadError::MissingTensor {
                    path: self.path.clone(),
                    name: name.to_string(),
                })?;
        if tensor.sizes() != shape {
            return Err(LoadError::Shape {
                tensor: name.to_string(),
                detail: format!(
                    "has shape {:?}, the configuration needs {shape:?}",
                    tensor.sizes()
                ),
            });
        }
        Ok(tensor)
    }

    /// Whether a tensor of that name is (still) there.
    pub fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    /// The names of the tensors not taken yet, sorted.
    pub fn remaining(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.tensors.keys().map(String::as_str).collect();
        names.sort();
        names
    }
}

/// transformers' name for a GGUF tensor name.
pub fn hf_name(gguf: &str) -> Option<String> {
    match gguf {
        "token_embd.weight" => return Some("model.embed_tokens.weight".into()),
        "output_norm.weight" => return Some("model.norm.weight".into()),
        "output.weight" => return Some("lm_head.weight".into()),
        _ => {}
    }
    let rest = gguf.strip_prefix("blk.")?;
    let (layer, param) = rest.split_once('.')?;
    let layer: usize = layer.parse().ok()?;
    let (_, hf) = LAYER_NAMES.iter().find(|(g, _)| *g == param)?;
    Some(format!("model.layers.{layer}.{hf}"))
}
