//! A model with its adapter merged in, saved as transformers saves a model (the layout of
//! a folder on the Hugging Face Hub): `config.json`, `model.safetensors` under
//! transformers' tensor names, `tokenizer.json` and `chat_template.jinja`. Chapter 20's
//! `--model DIR` runs it, and so does `AutoModelForCausalLM.from_pretrained(DIR)`.

use std::collections::HashMap;
use std::path::Path;

use ch20_real_model::config::Architecture;
use ch20_real_model::loader::Loaded;
use ch22_pretraining::files::{safetensors_file, temporary_name};
use serde_json::{Value, json};
use shared::Tensor;
use shared::nn::RMSNorm;

use crate::error::LoraError;

/// `config.json` for `loaded`'s configuration and special tokens, with the keys
/// transformers 5 writes (chapter 20's loader reads the same keys back).
pub fn config_json(loaded: &Loaded) -> Value {
    let c = &loaded.config;
    let (architecture, model_type) = match c.architecture {
        Architecture::Llama => ("LlamaForCausalLM", "llama"),
        Architecture::Qwen3 => ("Qwen3ForCausalLM", "qwen3"),
    };
    json!({
        "architectures": [architecture],
        "model_type": model_type,
        "vocab_size": c.vocab_size,
        "hidden_size": c.d_model,
        "num_hidden_layers": c.n_layers,
        "num_attention_heads": c.n_heads,
        "num_key_value_heads": c.n_kv_heads,
        "head_dim": c.head_dim,
        "intermediate_size": c.d_ff,
        "hidden_act": "silu",
        "rms_norm_eps": c.rms_norm_eps,
        "rope_parameters": { "rope_theta": c.rope_theta, "rope_type": "default" },
        "max_position_embeddings": c.context_length,
        "tie_word_embeddings": c.tied_embeddings,
        "attention_bias": false,
        "mlp_bias": false,
        "bos_token_id": loaded.bos,
        "eos_token_id": loaded.eos,
        "dtype": "float32",
    })
}

/// Every parameter of `loaded`'s model under transformers' name, in the order chapter
/// 20's loader takes them; a tied head is the embedding, stored once.
///
/// # Shapes
/// Each projection `[d_out, d_in]`, as `nn.Linear` keeps it.
pub fn named_tensors(loaded: &Loaded) -> Vec<(String, &Tensor)> {
    let m = &loaded.model;
    let mut all = vec![("model.embed_tokens.weight".to_string(), &m.tok_emb.weight)];
    for (i, layer) in m.layers.iter().enumerate() {
        let (a, f) = (&layer.attn, &layer.ffn);
        let mut named: Vec<(&str, Option<&Tensor>)> = vec![
            ("input_layernorm.weight", norm(&layer.attn_norm)),
            ("self_attn.q_proj.weight", Some(&a.w_query.weight)),
            ("self_attn.k_proj.weight", Some(&a.w_key.weight)),
            ("self_attn.v_proj.weight", Some(&a.w_value.weight)),
            ("self_attn.o_proj.weight", Some(&a.out_proj.weight)),
        ];
        if let Some((q_norm, k_norm)) = &a.qk_norm {
            named.push(("self_attn.q_norm.weight", norm(q_norm)));
            named.push(("self_attn.k_norm.weight", norm(k_norm)));
        }
        named.extend([
            ("post_attention_layernorm.weight", norm(&layer.ffn_norm)),
            ("mlp.gate_proj.weight", Some(&f.w_gate.weight)),
            ("mlp.up_proj.weight", Some(&f.w_up.weight)),
            ("mlp.down_proj.weight", Some(&f.w_down.weight)),
        ]);
        for (name, tensor) in named {
            if let Some(t) = tensor {
                all.push((format!("model.layers.{i}.{name}"), t));
            }
        }
    }
    if let Some(w) = norm(&m.final_norm) {
        all.push(("model.norm.weight".to_string(), w));
    }
    if !loaded.config.tied_embeddings {
        all.push(("lm_head.weight".to_string(), &m.lm_head.weight));
    }
    all
}

/// A norm's weight, if it has one.
fn norm(n: &RMSNorm) -> Option<&Tensor> {
    n.weight.as_ref()
}

/// Saves `loaded` (its adapter already merged) as a new transformers folder `dir`. The
/// files are written into a hidden folder beside `dir`, which is renamed to `dir` only
/// once all of them are whole: a failed save leaves no half-written model. A `dir` that
/// exists and holds anything is refused, never replaced.
pub fn save(loaded: &Loaded, dir: &Path) -> Result<(), LoraError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| LoraError::Io { path, source }
    };
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir).map_err(io(dir))?;
        if entries.next().is_some() {
            return Err(LoraError::Settings(format!(
                "--merge-to {}: the folder is not empty; the merged model goes into a new \
                 (or empty) folder and never replaces what is there: choose another name",
                dir.display()
            )));
        }
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    // Left by a save that failed halfway: this tool's own, never the reader's.
    let partial = temporary_name(dir);
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(io(&partial))?;
    }
    let written = write_files(loaded, &partial).and_then(|()| {
        if dir.exists() {
            // Empty (checked above): renaming onto it needs it gone on some systems.
            std::fs::remove_dir(dir).map_err(io(dir))?;
        }
        std::fs::rename(&partial, dir).map_err(io(dir))
    });
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    written
}

/// The folder's four files, written into `dir`.
fn write_files(loaded: &Loaded, dir: &Path) -> Result<(), LoraError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| LoraError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let config = serde_json::to_string_pretty(&config_json(loaded))
        .expect("a JSON value serialises");
    let metadata = HashMap::from([("format".to_string(), "pt".to_string())]);
    let weights =
        safetensors_file("merge_to", &named_tensors(loaded), Some(metadata))?;
    let tokenizer = loaded
        .tokenizer
        .to_string(false)
        .map_err(|e| LoraError::Settings(format!("merge_to: the tokenizer: {e}")))?;
    let mut files = vec![
        ("config.json", config.into_bytes()),
        ("model.safetensors", weights),
        ("tokenizer.json", tokenizer.into_bytes()),
    ];
    if let Some(template) = &loaded.chat_template {
        files.push(("chat_template.jinja", template.clone().into_bytes()));
    }
    for (name, bytes) in files {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(io(&path))?;
    }
    Ok(())
}
