//! A model is a configuration plus parameters. The configuration says which layers and how
//! large; the same numbers come from a GGUF file's metadata or from a `config.json`.

use std::fmt::Debug;
use std::path::Path;

use serde::Deserialize;

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

    /// Checks what chapter 15's layer can run, naming the first field it cannot: heads that
    /// split `d_model` evenly, query heads a multiple of key/value heads, no size of 0.
    fn validate(self, path: &Path) -> Result<Config, LoadError> {
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
        for (field, size) in [
            ("vocab_size", self.vocab_size),
            ("n_layers", self.n_layers),
            ("d_ff", self.d_ff),
        ] {
            if size == 0 {
                return Err(unsupported(field, "0".into()));
            }
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
        config.validate(path)
    }

    /// The configuration in a transformers `config.json`.
    pub fn from_json(text: &str, path: &Path) -> Result<Config, LoadError> {
        HfConfig::parse(text, path)?.config(path)
    }
}

/// The keys of a transformers `config.json` that this chapter reads, read by serde: a key
/// that is missing or holds the wrong type is an error that names it, or its line and
/// column; [`HfConfig::validate`] names a value chapter 15's layer cannot run.
#[derive(Debug, Deserialize)]
pub struct HfConfig {
    /// `llama` or `qwen3`.
    pub model_type: String,
    /// Token ids are `0..vocab_size`.
    pub vocab_size: usize,
    /// The width of the residual stream.
    pub hidden_size: usize,
    /// Layers.
    pub num_hidden_layers: usize,
    /// Query heads per layer.
    pub num_attention_heads: usize,
    /// Key/value heads per layer; as many as query heads if absent.
    pub num_key_value_heads: Option<usize>,
    /// Features per head; `hidden_size / num_attention_heads` if absent or `null`.
    pub head_dim: Option<usize>,
    /// The feed-forward network's inner width.
    pub intermediate_size: usize,
    /// RMSNorm's epsilon.
    pub rms_norm_eps: f64,
    /// The longest sequence the model was trained on.
    pub max_position_embeddings: usize,
    /// Whether the output head is the token embedding.
    #[serde(default)]
    pub tie_word_embeddings: bool,
    /// RoPE's base beside the other keys (transformers before version 5).
    pub rope_theta: Option<f64>,
    /// RoPE's base and kind (transformers 5).
    pub rope_parameters: Option<Rope>,
    /// RoPE's scaling (transformers before version 5); `null` for none.
    pub rope_scaling: Option<Rope>,
    /// Biases on the attention's projections: chapter 15's layer has none.
    #[serde(default)]
    pub attention_bias: bool,
    /// Biases in the feed-forward network: none either.
    #[serde(default)]
    pub mlp_bias: bool,
    /// A sliding window on some layers (Qwen's): every layer here is global.
    #[serde(default)]
    pub use_sliding_window: bool,
    /// The feed-forward network's activation: SwiGLU's `silu`.
    pub hidden_act: Option<String>,
    /// The token that starts a sequence.
    pub bos_token_id: Option<TokenIds>,
    /// The token that ends a reply.
    pub eos_token_id: Option<TokenIds>,
}

/// RoPE's settings, as `rope_parameters` (or before transformers 5 `rope_scaling`) holds
/// them.
#[derive(Debug, Deserialize)]
pub struct Rope {
    /// `default`, or a scaling (`llama3`, `yarn`, ...).
    pub rope_type: Option<String>,
    /// The same, under the key older files use.
    pub r#type: Option<String>,
    /// RoPE's base θ.
    pub rope_theta: Option<f64>,
}

impl Rope {
    /// `default`, or the scaling, under either key.
    fn kind(&self) -> Option<&str> {
        self.rope_type.as_deref().or(self.r#type.as_deref())
    }
}

/// A special token's id: one, or a list (chat models that end a reply at any of several).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum TokenIds {
    /// One id.
    One(u32),
    /// Several ids.
    Several(Vec<u32>),
}

impl TokenIds {
    /// The id, where there is one: generation here stops at a single end token.
    pub fn single(&self) -> Option<u32> {
        match self {
            TokenIds::One(id) => Some(*id),
            TokenIds::Several(_) => None,
        }
    }
}

impl HfConfig {
    /// The keys of `text`, the contents of the file at `path`.
    pub fn parse(text: &str, path: &Path) -> Result<HfConfig, LoadError> {
        serde_json::from_str(text).map_err(|e| LoadError::Json {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })
    }

    /// Checks that chapter 15's layer runs this model, naming the first key that says it
    /// does not: the model type, biases, a sliding window, the activation, RoPE's kind.
    /// Returns the layer the model type names.
    pub fn validate(&self, path: &Path) -> Result<Architecture, LoadError> {
        let unsupported = |field: &str, value: &dyn Debug| LoadError::Unsupported {
            path: path.to_path_buf(),
            field: field.to_string(),
            value: format!("{value:?}"),
        };
        let architecture = match self.model_type.as_str() {
            "llama" => Architecture::Llama,
            "qwen3" => Architecture::Qwen3,
            other => return Err(unsupported("model_type", &other)),
        };
        for (key, on) in [
            ("attention_bias", self.attention_bias),
            ("mlp_bias", self.mlp_bias),
            ("use_sliding_window", self.use_sliding_window),
        ] {
            if on {
                return Err(unsupported(key, &on));
            }
        }
        if let Some(act) = self.hidden_act.as_ref().filter(|a| *a != "silu") {
            return Err(unsupported("hidden_act", act));
        }
        if let Some(kind) = self.rope_type().filter(|k| *k != "default") {
            return Err(unsupported("rope_type", &kind));
        }
        Ok(architecture)
    }

    /// The configuration of a model that [`HfConfig::validate`] accepts.
    pub fn config(&self, path: &Path) -> Result<Config, LoadError> {
        let architecture = self.validate(path)?;
        let (d_model, n_heads) = (self.hidden_size, self.num_attention_heads);
        // transformers 5 keeps RoPE's base in `rope_parameters`, earlier versions beside
        // the other keys.
        let rope_theta = match &self.rope_parameters {
            Some(rope) => rope.rope_theta,
            None => self.rope_theta,
        };
        let config = Config {
            architecture,
            vocab_size: self.vocab_size,
            d_model,
            n_layers: self.num_hidden_layers,
            n_heads,
            n_kv_heads: self.num_key_value_heads.unwrap_or(n_heads),
            head_dim: self
                .head_dim
                .unwrap_or(d_model.checked_div(n_heads).unwrap_or(0)),
            d_ff: self.intermediate_size,
            rms_norm_eps: self.rms_norm_eps,
            rope_theta: rope_theta.unwrap_or(10_000.0),
            context_length: self.max_position_embeddings,
            tied_embeddings: self.tie_word_embeddings,
        };
        config.validate(path)
    }

    /// RoPE's kind: `rope_parameters`' (transformers 5), else `rope_scaling`'s.
    fn rope_type(&self) -> Option<&str> {
        self.rope_parameters
            .as_ref()
            .and_then(Rope::kind)
            .or_else(|| self.rope_scaling.as_ref().and_then(Rope::kind))
    }
}
