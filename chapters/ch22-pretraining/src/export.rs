//! The trained Llama in the layout the Hugging Face Hub keeps, which transformers'
//! `AutoModelForCausalLM.from_pretrained(dir)` and chapter 20's `--model DIR` both read:
//!
//! - `config.json`: the sizes, under transformers' names (`LlamaForCausalLM`);
//! - `model.safetensors`: every parameter, float32, under transformers' names
//!   (`model.layers.0.self_attn.q_proj.weight`);
//! - `tokenizer.json`: the byte-pair encoding, through `tokenizers`.
//!
//! Nothing is converted: chapter 15's layer turns its queries and keys by RoPE's
//! half-split pairs (features `i` and `i + d/2`), as transformers' Llama does
//! (`rotate_half`), and keeps its projections as `[out, in]` matrices, as PyTorch's
//! `nn.Linear` does. (llama.cpp's GGUF files pair neighbouring features instead, which is
//! why chapter 20 reorders their rows.) The output head is the token table, so the file
//! stores it once and the configuration says `tie_word_embeddings`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::json;
use shared::{Error, Result};
use tokenizers::Tokenizer;

use crate::config::Config;
use crate::files::{io_error, safetensors_file, temporary_name, write_atomically};
use crate::model::Model;
use crate::model::llama::THETA;

/// The three files of a saved model; a folder is written only if it holds nothing else.
pub const HUB_FILES: [&str; 3] =
    ["config.json", "model.safetensors", "tokenizer.json"];

/// The mark `model.safetensors` carries in its metadata, so a later save knows the folder
/// is one it wrote and may replace.
pub const WRITTEN_BY: (&str, &str) = ("written_by", "ch22-pretraining");

/// Our parameter names within a layer, and transformers'.
const LAYER_NAMES: [(&str, &str); 9] = [
    ("attn_norm.weight", "input_layernorm.weight"),
    ("attn.w_query.weight", "self_attn.q_proj.weight"),
    ("attn.w_key.weight", "self_attn.k_proj.weight"),
    ("attn.w_value.weight", "self_attn.v_proj.weight"),
    ("attn.out_proj.weight", "self_attn.o_proj.weight"),
    ("ffn_norm.weight", "post_attention_layernorm.weight"),
    ("ffn.w_gate.weight", "mlp.gate_proj.weight"),
    ("ffn.w_up.weight", "mlp.up_proj.weight"),
    ("ffn.w_down.weight", "mlp.down_proj.weight"),
];

/// transformers' name for one of the Llama's parameters (`layers.0.attn.w_query.weight`
/// is `model.layers.0.self_attn.q_proj.weight`).
pub fn hf_name(ours: &str) -> Option<String> {
    match ours {
        "wte.weight" => return Some("model.embed_tokens.weight".into()),
        "norm.weight" => return Some("model.norm.weight".into()),
        _ => {}
    }
    let (layer, param) = ours.strip_prefix("layers.")?.split_once('.')?;
    let (_, hf) = LAYER_NAMES.iter().find(|(o, _)| *o == param)?;
    Some(format!("model.layers.{layer}.{hf}"))
}

/// The `config.json` of a Llama of size `config`, as transformers 5 writes one. The
/// tokenizer has no special tokens, so `bos_token_id` and `eos_token_id` are `null`
/// (absent, transformers would take Llama's 1 and 2, two ordinary tokens here).
pub fn hub_config(config: &Config) -> serde_json::Value {
    json!({
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": config.vocab_size,
        "hidden_size": config.d_model,
        "intermediate_size": config.swiglu_width(),
        "num_hidden_layers": config.n_layers,
        "num_attention_heads": config.n_heads,
        "num_key_value_heads": config.n_heads,
        "head_dim": config.head_dim(),
        "hidden_act": "silu",
        "max_position_embeddings": config.context,
        "rms_norm_eps": ch15_modern_layer::attention::EPS,
        "rope_parameters": {"rope_type": "default", "rope_theta": THETA},
        "attention_bias": false,
        "mlp_bias": false,
        "tie_word_embeddings": true,
        "bos_token_id": null,
        "eos_token_id": null,
        "pad_token_id": null,
        "dtype": "float32",
    })
}

/// The parameters under transformers' names, as `model.safetensors` holds them (with its
/// mark), as bytes.
fn safetensors_bytes(model: &Model) -> Result<Vec<u8>> {
    let named = model.named_parameters();
    let mut tensors = Vec::with_capacity(named.len());
    for (name, p) in named {
        let hf = hf_name(&name).ok_or_else(|| Error::InvalidArgument {
            op: "save_hub",
            detail: format!("no transformers name for the parameter {name}"),
        })?;
        tensors.push((hf, p));
    }
    let metadata = HashMap::from([
        ("format".to_string(), "pt".to_string()),
        (WRITTEN_BY.0.to_string(), WRITTEN_BY.1.to_string()),
    ]);
    safetensors_file("save_hub", &tensors, Some(metadata))
}

fn failed(op: &'static str, error: impl std::fmt::Display) -> Error {
    Error::InvalidArgument {
        op,
        detail: error.to_string(),
    }
}

/// Checks that `dir` may be written: it does not exist yet, or it holds only the three
/// files of an earlier save of this chapter (its `model.safetensors` carries the mark
/// [`WRITTEN_BY`]). Anything else there is the reader's, and is never overwritten.
pub fn check_folder(dir: &Path) -> Result<()> {
    let refuse = |why: String| Error::InvalidArgument {
        op: "save_hub",
        detail: format!(
            "{}: {why}; nothing was written (choose a new or empty folder)",
            dir.display()
        ),
    };
    if !dir.exists() {
        return Ok(());
    }
    if !dir.is_dir() {
        return Err(refuse("is a file, not a folder".into()));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| io_error("save_hub", dir, e))?;
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error("save_hub", dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let partial = HUB_FILES
            .iter()
            .any(|f| temporary_name(Path::new(f)).as_os_str() == name.as_str());
        if HUB_FILES.contains(&name.as_str()) {
            ours.push(name);
        } else if !partial {
            theirs.push(name);
        }
    }
    if !theirs.is_empty() {
        theirs.sort();
        return Err(refuse(format!(
            "holds files this chapter did not write ({})",
            theirs.join(", ")
        )));
    }
    if !ours.is_empty() && !written_by_us(&dir.join("model.safetensors")) {
        ours.sort();
        return Err(refuse(format!(
            "holds {} from somewhere else (its model.safetensors is not one this chapter saved)",
            ours.join(", ")
        )));
    }
    Ok(())
}

/// Whether `path` is a safetensors file with this chapter's mark.
fn written_by_us(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let Ok((_, metadata)) = safetensors::SafeTensors::read_metadata(&bytes) else {
        return false;
    };
    metadata
        .metadata()
        .as_ref()
        .and_then(|m| m.get(WRITTEN_BY.0))
        .is_some_and(|v| v == WRITTEN_BY.1)
}

/// Saves the Llama `model` of size `config` and its `tokenizer` into `dir` in the Hub's
/// layout ([`HUB_FILES`]), each file written atomically, after [`check_folder`]. Returns
/// the paths written.
///
/// # Shapes
/// The model's token table `[config.vocab_size, config.d_model]`; the tokenizer's
/// vocabulary of `config.vocab_size` tokens.
// ANCHOR: save_hub
pub fn save_hub(
    dir: &Path,
    model: &Model,
    config: &Config,
    tokenizer: &Tokenizer,
) -> Result<Vec<PathBuf>> {
    if !matches!(model, Model::Llama(_)) {
        return Err(failed(
            "save_hub",
            format!(
                "the Hub layout is written for the llama model, not {}",
                model.arch()
            ),
        ));
    }
    let vocab = tokenizer.get_vocab_size(true);
    if vocab != config.vocab_size {
        return Err(failed(
            "save_hub",
            format!(
                "the tokenizer has {vocab} tokens, the model {}",
                config.vocab_size
            ),
        ));
    }
    check_folder(dir)?;
    std::fs::create_dir_all(dir).map_err(|e| io_error("save_hub", dir, e))?;
    let config_text = serde_json::to_string_pretty(&hub_config(config))
        .map_err(|e| failed("save_hub", e))?;
    let tokenizer_text = tokenizer
        .to_string(true)
        .map_err(|e| failed("save_hub", e))?;
    let files = [
        ("model.safetensors", safetensors_bytes(model)?),
        ("tokenizer.json", tokenizer_text.into_bytes()),
        ("config.json", (config_text + "\n").into_bytes()),
    ];
    let mut written = Vec::with_capacity(files.len());
    for (name, bytes) in files {
        let path = dir.join(name);
        write_atomically("save_hub", &path, &bytes)?;
        written.push(path);
    }
    Ok(written)
}
// ANCHOR_END: save_hub
