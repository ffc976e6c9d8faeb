//! PEFT's files: `adapter_config.json` (the settings, as `LoraConfig` saves them) and
//! `adapter_model.safetensors` (each `A` and `B` under PEFT's name, such as
//! `base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight`). PEFT loads the
//! adapters the chapter saves, and the chapter loads PEFT's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ch15_modern_layer::TinyModel;
use ch22_pretraining::files::{f32_bytes, f32_tensor, temporary_name};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use serde_json::{Value, json};

use crate::adapter::{Adapter, LoraConfig, check_model};
use crate::error::LoraError;

/// The settings file's name.
pub const CONFIG: &str = "adapter_config.json";
/// The weights file's name.
pub const WEIGHTS: &str = "adapter_model.safetensors";

/// The settings as PEFT writes them for `LoraConfig(r, lora_alpha, target_modules,
/// lora_dropout=0.0, task_type="CAUSAL_LM")` on the model `base`.
// ANCHOR: config_json
pub fn config_json(config: &LoraConfig, base: &str) -> Value {
    let targets: Vec<&str> = config.targets.iter().map(|t| t.name()).collect();
    json!({
        "base_model_name_or_path": base,
        "bias": "none",
        "fan_in_fan_out": false,
        "inference_mode": true,
        "init_lora_weights": true,
        "lora_alpha": config.alpha,
        "lora_dropout": 0.0,
        "modules_to_save": null,
        "peft_type": "LORA",
        "r": config.rank,
        "target_modules": targets,
        "task_type": "CAUSAL_LM",
        "use_dora": false,
        "use_rslora": false,
    })
}
// ANCHOR_END: config_json

/// Saves `adapter` in `dir` as PEFT does, for the model `base`. Both files are written
/// in full beside the old ones before either replaces its old one, so a failed save
/// leaves the previous adapter whole.
pub fn save(adapter: &Adapter, base: &str, dir: &Path) -> Result<(), LoraError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| LoraError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let params = adapter.named_parameters();
    let bytes: Vec<(String, Vec<u8>, Vec<usize>)> = params
        .iter()
        .map(|(name, t)| (name.clone(), f32_bytes(t), t.sizes().to_vec()))
        .collect();
    let views = bytes
        .iter()
        .map(|(name, data, shape)| {
            let view = TensorView::new(Dtype::F32, shape.clone(), data)
                .map_err(|e| LoraError::Settings(format!("tensor {name}: {e}")))?;
            Ok((name.clone(), view))
        })
        .collect::<Result<Vec<_>, LoraError>>()?;
    let metadata = HashMap::from([("format".to_string(), "pt".to_string())]);
    let weights = safetensors::serialize(views, Some(metadata))
        .map_err(|e| LoraError::Settings(format!("safetensors: {e}")))?;
    let config = serde_json::to_string_pretty(&config_json(&adapter.config, base))
        .expect("a JSON value serialises");
    let files = [(CONFIG, config.into_bytes()), (WEIGHTS, weights)];
    let mut partials = Vec::new();
    for (name, content) in &files {
        let path = dir.join(name);
        let partial = temporary_name(&path);
        std::fs::write(&partial, content).map_err(io(&partial))?;
        partials.push((partial, path));
    }
    for (partial, path) in partials {
        std::fs::rename(&partial, &path).map_err(io(&path))?;
    }
    Ok(())
}

/// Loads the adapter saved in `dir` (by PEFT or by [`save`]) for `model`, checking every
/// matrix's name and shape against the model.
pub fn load(dir: &Path, model: &TinyModel) -> Result<Adapter, LoraError> {
    check_model(model)?;
    let config_path = dir.join(CONFIG);
    let bad = |path: &PathBuf, detail: String| LoraError::Adapter {
        path: path.clone(),
        detail,
    };
    let text =
        std::fs::read_to_string(&config_path).map_err(|source| LoraError::Io {
            path: config_path.clone(),
            source,
        })?;
    let json: Value = serde_json::from_str(&text)
        .map_err(|e| bad(&config_path, format!("not JSON: {e}")))?;
    let config = parse_config(&json).map_err(|detail| bad(&config_path, detail))?;
    let weights_path = dir.join(WEIGHTS);
    let bytes = std::fs::read(&weights_path).map_err(|source| LoraError::Io {
        path: weights_path.clone(),
        source,
    })?;
    let file = SafeTensors::deserialize(&bytes).map_err(|e| {
        bad(&weights_path, format!("not a whole safetensors file: {e}"))
    })?;
    // New adapters give the names and shapes this model needs; then each is replaced.
    let mut adapter = Adapter::new(model, &config)?;
    let names: Vec<(String, Vec<usize>)> = adapter
        .named_parameters()
        .into_iter()
        .map(|(n, t)| (n, t.sizes().to_vec()))
        .collect();
    if file.len() != names.len() {
        return Err(bad(
            &weights_path,
            format!(
                "{} tensors, but {} for this model's {} layers and targets {:?}",
                file.len(),
                names.len(),
                model.layers.len(),
                config.targets.iter().map(|t| t.name()).collect::<Vec<_>>()
            ),
        ));
    }
    for ((name, shape), slot) in names.iter().zip(adapter.parameters_mut()) {
        let view = file.tensor(name).map_err(|_| {
            bad(
                &weights_path,
                format!("no tensor {name}: an adapter made for another model?"),
            )
        })?;
        if view.shape() != shape.as_slice() {
            return Err(bad(
                &weights_path,
                format!(
                    "{name} is {:?}, this model needs {shape:?}: an adapter made for another model",
                    view.shape()
                ),
            ));
        }
        *slot = f32_tensor(&weights_path, name, &view)?;
    }
    Ok(adapter)
}

/// The settings in an `adapter_config.json`, or what in it the chapter cannot use.
fn parse_config(json: &Value) -> Result<LoraConfig, String> {
    let field = |key: &str| json.get(key).filter(|v| !v.is_null());
    if field("peft_type").and_then(Value::as_str) != Some("LORA") {
        return Err(format!(
            "peft_type is {:?}, not \"LORA\"",
            field("peft_type")
        ));
    }
    for key in ["use_rslora", "use_dora", "fan_in_fan_out"] {
        if field(key).and_then(Value::as_bool) == Some(true) {
            return Err(format!(
                "{key} is true: the chapter's adapters are plain LoRA"
            ));
        }
    }
    let rank = field("r")
        .and_then(Value::as_u64)
        .ok_or("no whole number r")? as usize;
    let alpha = field("lora_alpha")
        .and_then(Value::as_f64)
        .ok_or("no number lora_alpha")?;
    let targets: Vec<&str> = match field("target_modules") {
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        other => {
            return Err(format!("target_modules is {other:?}, not a list of names"));
        }
    };
    LoraConfig::new(rank, alpha, &targets).map_err(|e| e.to_string())
}
