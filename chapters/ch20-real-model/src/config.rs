//! A model is a configuration plus parameters. The configuration says which layers and how
//! large; the same numbers come from a GGUF file's metadata or from a `config.json`.

use std::path::Path;

use serde_json::Value as Json;

use crate::error::LoadError;
use crate::gguf::GgufFile;

/// The two architectures this chapter runs: Llama's layer (SmolLM2 is one), and Qwen3's,
/// which adds QK-norm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Architecture {
    /// `LlamaForCausalLM`, GGUF `llama`.
    Llama,
    /// `Qwen3ForCausalLM`: an RMSNorm over every query and key head.
    Qwen3,
}

/// The sizes of a model, and the numbers its layers need.
#[derive(Clone, Debug, PartialEq)]
// ANCHOR: config
pub struct Config {
    /// Which layer.
    pub architecture: Architecture,
    /// Token ids are `0..vocab_size`.
    pub vocab_size: usize,
    /// The width of the residual stream.
    pub d_model: usize,
    /// Layers.
    pub n_layers: usize,
    /// Query heads per layer.
    pub n_heads: usize,
    /// Key/value heads per layer.
    pub n_kv_heads: usize,
    /// Features per head.
    pub head_dim: usize,
    /// The feed-forward network's inner width.
    pub d_ff: usize,
    /// RMSNorm's epsilon.
    pub rms_norm_eps: f64,
    /// RoPE's base θ.
    pub rope_theta: f64,
    /// The longest sequence the model was trained on.
    pub context_length: usize,
    /// Whether the output head is the token embedding.
    pub tied_embeddings: bool,
}
// ANCHOR_END: config

impl Config {
    /// The parameters the configuration implies: embedding, layers, final norm, head.
    pub fn parameter_count(&self) -> usize {
        let (d, q, kv) = (
            self.d_model,
            self.n_heads * self.head_dim,
            self.n_kv_heads * self.head_dim,
        );
        let qk_norm = match self.architecture {
            Architecture::Qwen3 => 2 * self.head_dim,
            Architecture::Llama => 0,
        };
        let layer = 2 * d + d * q + 2 * d * kv + q * d + 3 * d * self.d_ff + qk_norm;
        let head = if self.tied_embeddings {
            0
        } else {
            self.vocab_size * d
        };
        self.vocab_size * d + self.n_layers * layer + d + head
    }

    /// Checks what chapter 15's layer can run: heads that split `d_model` evenly, query heads
    /// a multiple of key/value heads.
    fn checked(self, path: &Path) -> Result<Config, LoadError> {
        let unsupported = |field: &str, value: String| LoadError::Unsupported {
            path: path.to_path_buf(),
            field: field.to_string(),
            value,
        };
        if self.n_heads == 0
            || self.n_kv_heads == 0
            || !self.n_heads.is_multiple_of(self.n_kv_heads)
        {
            return Err(unsupported(
                "head counts",
                format!(
                    "{} query heads over {} key/value heads",
                    self.n_heads, self.n_kv_heads
                ),
            ));
        }
        if self.head_dim * self.n_heads != self.d_model
            || !self.head_dim.is_multiple_of(2)
        {
            return Err(unsupported(
                "head_dim",
                format!(
                    "{} (this chapter needs an even d_model / n_heads = {} / {})",
                    self.head_dim, self.d_model, self.n_heads
                ),
            ));
        }
        if self.vocab_size == 0 || self.n_layers == 0 || self.d_ff == 0 {
            return Err(unsupported("sizes", format!("{self:?}")));
        }
        Ok(self)
    }

    /// The configuration in a GGUF file's metadata (`llama.block_count`, ...).
    pub fn from_gguf(file: &GgufFile) -> Result<Config, LoadError> {
        let path = &file.path;
        let arch = file.get("general.architecture")?;
        let architecture = match arch.as_str() {
            Some("llama") => Architecture::Llama,
            _ => {
                return Err(LoadError::Unsupported {
                    path: path.clone(),
                    field: "general.architecture".into(),
                    value: format!("{arch} (this chapter reads llama GGUF files)"),
                });
            }
        };
        let number = |key: &str| -> Result<f64, LoadError> {
            let value = file.get(&format!("llama.{key}"))?;
            value.as_f64().ok_or_else(|| LoadError::Unsupported {
                path: path.clone(),
                field: format!("llama.{key}"),
                value: value.to_string(),
            })
        };
        let size = |key: &str| number(key).map(|v| v as usize);
        let vocab_size = match file.get("tokenizer.ggml.tokens")?.as_strings() {
            Some(tokens) => tokens.len(),
            None => {
                return Err(LoadError::Unsupported {
                    path: path.clone(),
                    field: "tokenizer.ggml.tokens".into(),
                    value: "not a list of strings".into(),
                });
            }
        };
        let (d_model, n_heads) =
            (size("embedding_length")?, size("attention.head_count")?);
        let config = Config {
            architecture,
            vocab_size,
            d_model,
            n_layers: size("block_count")?,
            n_heads,
            n_kv_heads: size("attention.head_count_kv").unwrap_or(n_heads),
            head_dim: d_model.checked_div(n_heads).unwrap_or(0),
            d_ff: size("feed_forward_length")?,
            rms_norm_eps: number("attention.layer_norm_rms_epsilon")?,
            rope_theta: number("rope.freq_base").unwrap_or(10_000.0),
            context_length: size("context_length")?,
            tied_embeddings: !file.tensors.iter().any(|t| t.name == "output.weight"),
        };
        if let Ok(scaling) = file.get("llama.rope.scaling.type") {
            return Err(LoadError::Unsupported {
                path: path.clone(),
                field: "llama.rope.scaling.type".into(),
                value: scaling.to_string(),
            });
        }
        config.checked(path)
    }

    /// The configuration in a transformers `config.json`.
    pub fn from_json(text: &str, path: &Path) -> Result<Config, LoadError> {
        let json: Json =
            serde_json::from_str(text).map_err(|e| LoadError::Corrupt {
                path: path.to_path_buf(),
                offset: e.column() as u64,
                detail: format!("not JSON: {e}"),
            })?;
        let unsupported = |field: &str, value: &Json| LoadError::Unsupported {
            path: path.to_path_buf(),
            field: field.to_string(),
            value: value.to_string(),
        };
        let get = |key: &str| {
            json.get(key).ok_or_else(|| LoadError::MissingKey {
                path: path.to_path_buf(),
                key: key.to_string(),
            })
        };
        let size = |key: &str| -> Result<usize, LoadError> {
            let v = get(key)?;
            v.as_u64()
                .map(|n| n as usize)
                .ok_or_else(|| unsupported(key, v))
        };
        let model_type = get("model_type")?;
        let architecture = match model_type.as_str() {
            Some("llama") => Architecture::Llama,
            Some("qwen3") => Architecture::Qwen3,
            _ => return Err(unsupported("model_type", model_type)),
        };
        // What chapter 15's layer does not have must be off.
        for (key, off) in [
            ("attention_bias", Json::Bool(false)),
            ("mlp_bias", Json::Bool(false)),
            ("use_sliding_window", Json::Bool(false)),
        ] {
            if let Some(v) = json.get(key).filter(|v| **v != off) {
                return Err(unsupported(key, v));
            }
        }
        if let Some(v) = json
            .get("hidden_act")
            .filter(|v| v.as_str() != Some("silu"))
        {
            return Err(unsupported("hidden_act", v));
        }
        // transformers 5 keeps RoPE's numbers in `rope_parameters`, earlier versions beside
        // the others.
        let rope = json.get("rope_parameters").unwrap_or(&json);
        let kind = rope
            .get("rope_type")
            .or_else(|| json.get("rope_scaling").filter(|v| !v.is_null()));
        if let Some(kind) = kind.filter(|k| k.as_str() != Some("default")) {
            return Err(unsupported("rope_type", kind));
        }
        let rope_theta = match rope.get("rope_theta") {
            Some(v) => v.as_f64().ok_or_else(|| unsupported("rope_theta", v))?,
            None => 10_000.0,
        };
        let eps = get("rms_norm_eps")?;
        let (d_model, n_heads) = (size("hidden_size")?, size("num_attention_heads")?);
        let config = Config {
            architecture,
            vocab_size: size("vocab_size")?,
            d_model,
            n_layers: size("num_hidden_layers")?,
            n_heads,
            n_kv_heads: size("num_key_value_heads").unwrap_or(n_heads),
            head_dim: match json.get("head_dim").filter(|v| !v.is_null()) {
                Some(v) => {
                    v.as_u64().ok_or_else(|| unsupported("head_dim", v))? as usize
                }
                None if n_heads > 0 => d_model / n_heads,
                None => 0,
            },
            d_ff: size("intermediate_size")?,
            rms_norm_eps: eps
                .as_f64()
                .ok_or_else(|| unsupported("rms_norm_eps", eps))?,
            rope_theta,
            context_length: size("max_position_embeddings")?,
            tied_embeddings: json
                .get("tie_word_embeddings")
                .and_then(Json::as_bool)
                .unwrap_or(false),
        };
        config.checked(path)
    }
}
