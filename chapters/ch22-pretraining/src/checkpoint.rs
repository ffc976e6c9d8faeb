//! A run that can stop and continue as if it never stopped. A checkpoint keeps everything
//! the next step depends on: the weights, AdamW's moments and step count, the step the
//! schedule is at, and the generator's state (the next batch's draws), as
//! `torch.get_rng_state()` keeps it. Resumed, a run's losses are the uninterrupted run's,
//! bit for bit.
//!
//! It is one safetensors file, `checkpoint.safetensors` in the run's folder: the tensors
//! (`model.<name>`, `adamw.m.<name>`, `adamw.v.<name>`, `rng_state`), and in its metadata
//! the sizes, the settings, the step, and a SHA-256 of the tensors, so that a file cut
//! short or altered is an error and not a run that quietly goes wrong. It is written
//! atomically (a temporary file, then a rename): a run that fails keeps the last good one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ch11_training::adamw::AdamW;
use safetensors::Dtype;
use safetensors::tensor::TensorView;
use sha2::{Digest, Sha256};
use shared::rng::{get_rng_state, set_rng_state};
use shared::{Error, Result, Tensor};

use crate::arithmetic::Arithmetic;
use crate::batches::get_batch;
use crate::config::{Arch, Config};
use crate::files::{f32_bytes, f32_tensor, io_error, write_atomically};
use crate::model::Model;
use crate::train::{Settings, train_step};

/// The checkpoint's file name in a run's folder.
pub const CHECKPOINT_FILE: &str = "checkpoint.safetensors";

/// What the metadata's `format` says: this layout, version 1.
const FORMAT: &str = "ch22-checkpoint/1";

/// Everything the next step of a run depends on.
pub struct Checkpoint {
    /// The model's architecture.
    pub arch: Arch,
    /// Its sizes and the batch's.
    pub config: Config,
    /// The learning rate's schedule and AdamW's settings.
    pub settings: Settings,
    /// The tokenizer the ids come from (`char` or `bpe`).
    pub tokenizer: String,
    /// Steps taken: the next one is step `step` (from 0).
    pub step: u32,
    /// The weights.
    pub model: Model,
    /// AdamW, its moments and its step count.
    pub optimizer: AdamW,
    /// The default generator's state when the checkpoint was taken.
    pub rng_state: Vec<u8>,
}

/// An error about the checkpoint at `path`.
fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument {
        op: "checkpoint",
        detail: format!("{}: {what}", path.display()),
    }
}

impl Checkpoint {
    /// A new run at step 0: the model built and initialised from the default generator.
    pub fn start(
        arch: Arch,
        config: &Config,
        settings: &Settings,
        tokenizer: &str,
    ) -> Result<Checkpoint> {
        let model = Model::new(arch, config)?;
        Ok(Checkpoint {
            arch,
            config: *config,
            settings: *settings,
            tokenizer: tokenizer.to_string(),
            step: 0,
            model,
            optimizer: settings.optimizer(),
            rng_state: get_rng_state(),
        })
    }

    /// The metadata: the format, the run's fields, the step and AdamW's step count.
    fn metadata(&self) -> Vec<(&'static str, String)> {
        let mut all = vec![("format", FORMAT.to_string())];
        all.extend(run_fields(
            self.arch,
            &self.config,
            &self.settings,
            &self.tokenizer,
        ));
        all.push(("step", self.step.to_string()));
        all.push(("adamw_steps", self.optimizer.steps.to_string()));
        all
    }

    /// The tensors, by name, as bytes: the weights, the moments (once AdamW has taken a
    /// step), the generator's state.
    fn tensors(&self) -> Vec<(String, Dtype, Vec<usize>, Vec<u8>)> {
        let named = self.model.named_parameters();
        let mut all: Vec<_> = named
            .iter()
            .map(|(name, p)| {
                (
                    format!("model.{name}"),
                    Dtype::F32,
                    p.sizes().to_vec(),
                    f32_bytes(p),
                )
            })
            .collect();
        for ((name, p), (m, v)) in named.iter().zip(self.optimizer.moments()) {
            for (which, values) in [("m", m), ("v", v)] {
                let bytes = values.iter().flat_map(|x| x.to_le_bytes()).collect();
                all.push((
                    format!("adamw.{which}.{name}"),
                    Dtype::F32,
                    p.sizes().to_vec(),
                    bytes,
                ));
            }
        }
        all.push((
            "rng_state".into(),
            Dtype::U8,
            vec![self.rng_state.len()],
            self.rng_state.clone(),
        ));
        all
    }

    /// Writes the checkpoint to `dir/checkpoint.safetensors` atomically (creating `dir`);
    /// returns the file's path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf> {
        let path = dir.join(CHECKPOINT_FILE);
        std::fs::create_dir_all(dir).map_err(|e| io_error("checkpoint", dir, e))?;
        let mut tensors = self.tensors();
        // Sorted by name, the order `read` checks them in.
        tensors.sort_by(|a, b| a.0.cmp(&b.0));
        let mut metadata: HashMap<String, String> = self
            .metadata()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let digest = checksum(
            &metadata,
            tensors.iter().map(|(n, _, _, b)| (n.as_str(), &b[..])),
        );
        metadata.insert("sha256".into(), digest);
        let views = tensors
            .iter()
            .map(|(name, dtype, shape, bytes)| {
                TensorView::new(*dtype, shape.clone(), bytes)
                    .map(|v| (name.clone(), v))
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| bad(&path, e))?;
        let bytes = safetensors::serialize(views, Some(metadata))
            .map_err(|e| bad(&path, e))?;
        write_atomically("checkpoint", &path, &bytes)?;
        Ok(path)
    }

    /// Reads `dir/checkpoint.safetensors`. A file cut short, altered (its checksum), or
    /// missing a tensor or setting is an error naming the file and what is wrong.
    pub fn read(dir: &Path) -> Result<Checkpoint> {
        let path = dir.join(CHECKPOINT_FILE);
        let bytes =
            std::fs::read(&path).map_err(|e| io_error("checkpoint", &path, e))?;
        let file = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| {
            bad(
                &path,
                format!(
                    "cut short or not a checkpoint ({e}); the file has {} bytes",
                    bytes.len()
                ),
            )
        })?;
        let (_, header) = safetensors::SafeTensors::read_metadata(&bytes)
            .map_err(|e| bad(&path, e))?;
        let meta = header.metadata().clone().unwrap_or_default();
        let get = |key: &str| {
            meta.get(key)
                .map(String::as_str)
                .ok_or_else(|| bad(&path, format!("no {key} in its metadata")))
        };
        if get("format")? != FORMAT {
            return Err(bad(
                &path,
                format!("format {:?}, expected {FORMAT:?}", get("format")?),
            ));
        }
        let mut names: Vec<String> =
            file.names().into_iter().map(str::to_string).collect();
        names.sort();
        let views = names
            .iter()
            .map(|n| file.tensor(n).map_err(|e| bad(&path, e)))
            .collect::<Result<Vec<_>>>()?;
        let digest = checksum(
            &meta,
            names
                .iter()
                .map(String::as_str)
                .zip(views.iter().map(|v| v.data())),
        );
        if digest != get("sha256")? {
            return Err(bad(
                &path,
                "altered: its settings or tensors do not match the checksum they were saved with",
            ));
        }
        let view = |name: &str| {
            file.tensor(name)
                .map_err(|_| bad(&path, format!("no tensor {name}")))
        };
        let number = |key: &str| -> Result<f64> {
            let text = get(key)?;
            text.parse()
                .map_err(|_| bad(&path, format!("{key} is {text:?}, not a number")))
        };
        let size = |key: &str| -> Result<usize> {
            let text = get(key)?;
            text.parse()
                .map_err(|_| bad(&path, format!("{key} is {text:?}, not a count")))
        };
        let count = |key: &str| -> Result<u32> {
            let text = get(key)?;
            text.parse()
                .map_err(|_| bad(&path, format!("{key} is {text:?}, not a count")))
        };
        let arch = match get("arch")? {
            "gpt2" => Arch::Gpt2,
            "llama" => Arch::Llama,
            other => return Err(bad(&path, format!("unknown arch {other:?}"))),
        };
        let config = Config {
            vocab_size: size("vocab_size")?,
            context: size("context")?,
            d_model: size("d_model")?,
            n_layers: size("n_layers")?,
            n_heads: size("n_heads")?,
            batch: size("batch")?,
        };
        config.check().map_err(|e| bad(&path, e))?;
        let settings = Settings {
            lr: number("lr")?,
            min_lr: number("min_lr")?,
            warmup: count("warmup")?,
            decay_steps: count("decay_steps")?,
            weight_decay: number("weight_decay")?,
            betas: (number("beta1")?, number("beta2")?),
            // Read as the float32 it was written from, not through a float64.
            grad_clip: get("grad_clip")?
                .parse()
                .map_err(|_| bad(&path, "grad_clip is not a number"))?,
        };
        // A model of the saved sizes, its drawn weights replaced by the saved ones; the
        // default generator is put back as it was, so reading moves no run's draws.
        let generator = get_rng_state();
        let model = Model::new(arch, &config);
        set_rng_state(&generator)?;
        let mut model = model?;
        let param_names: Vec<String> = model
            .named_parameters()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let saved = |name: &str, shape: &[usize]| -> Result<Tensor> {
            let t = f32_tensor(&path, name, &view(name)?)?;
            if t.sizes() != shape {
                return Err(bad(
                    &path,
                    format!(
                        "tensor {name} has shape {:?}, expected {shape:?}",
                        t.sizes()
                    ),
                ));
            }
            Ok(t)
        };
        for (name, p) in param_names.iter().zip(model.parameters_mut()) {
            *p = saved(&format!("model.{name}"), p.sizes())?;
        }
        let adamw_steps = count("adamw_steps")?;
        let mut moments = Vec::new();
        if adamw_steps > 0 {
            for (name, p) in model.named_parameters() {
                let m = saved(&format!("adamw.m.{name}"), p.sizes())?.to_vec();
                let v = saved(&format!("adamw.v.{name}"), p.sizes())?.to_vec();
                moments.push((m, v));
            }
        }
        let mut optimizer = settings.optimizer();
        optimizer.restore(adamw_steps, moments);
        let rng = view("rng_state")?;
        if rng.dtype() != Dtype::U8 {
            return Err(bad(&path, "rng_state is not bytes"));
        }
        Ok(Checkpoint {
            arch,
            config,
            settings,
            tokenizer: get("tokenizer")?.to_string(),
            step: count("step")?,
            model,
            optimizer,
            rng_state: rng.data().to_vec(),
        })
    }

    /// Checks that this checkpoint is of the run asked for: the same architecture,
    /// tokenizer, sizes and settings, or an error naming the first that differs.
    pub fn check_matches(
        &self,
        dir: &Path,
        arch: Arch,
        config: &Config,
        settings: &Settings,
        tokenizer: &str,
    ) -> Result<()> {
        let asked = run_fields(arch, config, settings, tokenizer);
        let saved =
            run_fields(self.arch, &self.config, &self.settings, &self.tokenizer);
        for ((key, was), (_, now)) in saved.iter().zip(&asked) {
            if was != now {
                return Err(bad(
                    &dir.join(CHECKPOINT_FILE),
                    format!("saved with {key} {was}, this run asks for {key} {now}"),
                ));
            }
        }
        Ok(())
    }
}

/// What a resumed run must share with the run it continues, named, as text (floats in
/// Rust's shortest form that reads back to the same bits).
fn run_fields(
    arch: Arch,
    config: &Config,
    settings: &Settings,
    tokenizer: &str,
) -> Vec<(&'static str, String)> {
    let (c, s) = (config, settings);
    vec![
        ("arch", arch.to_string()),
        ("tokenizer", tokenizer.to_string()),
        ("vocab_size", c.vocab_size.to_string()),
        ("context", c.context.to_string()),
        ("d_model", c.d_model.to_string()),
        ("n_layers", c.n_layers.to_string()),
        ("n_heads", c.n_heads.to_string()),
        ("batch", c.batch.to_string()),
        ("lr", s.lr.to_string()),
        ("min_lr", s.min_lr.to_string()),
        ("warmup", s.warmup.to_string()),
        ("decay_steps", s.decay_steps.to_string()),
        ("weight_decay", s.weight_decay.to_string()),
        ("beta1", s.betas.0.to_string()),
        ("beta2", s.betas.1.to_string()),
        ("grad_clip", s.grad_clip.to_string()),
    ]
}

/// SHA-256 of the metadata (but its own `sha256`), sorted by key, then of the tensors'
/// names and bytes in the order given (by name), as hexadecimal. Each piece is preceded
/// by its length, so that no two different checkpoints hash the same bytes.
fn checksum<'a, B: AsRef<[u8]>>(
    metadata: &HashMap<String, String>,
    tensors: impl Iterator<Item = (&'a str, B)>,
) -> String {
    let mut hash = Sha256::new();
    let mut piece = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    let mut keys: Vec<&String> = metadata.keys().filter(|k| *k != "sha256").collect();
    keys.sort();
    for key in keys {
        piece(key.as_bytes());
        piece(metadata[key].as_bytes());
    }
    for (name, bytes) in tensors {
        piece(name.as_bytes());
        piece(bytes.as_ref());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads the checkpoint in `dir`, checks it is of this run, and puts the generator back
/// where it was: the run continues from its next step.
pub fn resume(
    dir: &Path,
    arch: Arch,
    config: &Config,
    settings: &Settings,
    tokenizer: &str,
) -> Result<Checkpoint> {
    let run = Checkpoint::read(dir)?;
    run.check_matches(dir, arch, config, settings, tokenizer)?;
    set_rng_state(&run.rng_state).map_err(|e| bad(&dir.join(CHECKPOINT_FILE), e))?;
    Ok(run)
}

/// Trains `run` from its step to step `steps`, as [`crate::train::train`] does, calling
/// `on_step(run, step, loss)` after each (the run to evaluate or sample from); with `save = Some((dir, every))`, writes a checkpoint
/// every `every` steps and after the last. A loss that is not finite stops the run with an
/// error before anything more is written: the last checkpoint stays the last good one.
/// Returns the losses of the steps taken.
///
/// # Shapes
/// `data`: token ids, more than `run.config.context` of them.
pub fn train_until<A: Arithmetic>(
    run: &mut Checkpoint,
    data: &[u32],
    steps: u32,
    save: Option<(&Path, u32)>,
    mut on_step: impl FnMut(&Checkpoint, u32, f32),
) -> Result<Vec<f32>> {
    let mut losses = Vec::new();
    let mut last_saved = run.step;
    for step in run.step..steps {
        let batch = get_batch(data, run.config.context, run.config.batch)?;
        let settings = run.settings;
        // A loss or gradient that is not finite stops the run before the update, with the
        // step and the largest gradient named; the checkpoint on disk is the last good one.
        let loss = train_step::<A>(
            &mut run.model,
            &mut run.optimizer,
            &settings,
            step,
            &batch,
        )
        .map_err(|error| match error {
            Error::InvalidArgument { op, detail } => Error::InvalidArgument {
                op,
                detail: format!(
                    "{detail}; the last checkpoint (step {last_saved}) kept"
                ),
            },
            other => other,
        })?;
        run.step = step + 1;
        on_step(run, step, loss);
        losses.push(loss);
        if let Some((dir, every)) = save
            && (run.step.is_multiple_of(every.max(1)) || run.step == steps)
        {
            // The update after a finite loss can still overflow: such weights are no
            // checkpoint to keep.
            if let Some((name, _)) = run
                .model
                .named_parameters()
                .into_iter()
                .find(|(_, p)| p.to_vec().iter().any(|v| !v.is_finite()))
            {
                return Err(Error::InvalidArgument {
                    op: "train",
                    detail: format!(
                        "step {step}: {name} is no longer finite; stopped, the last checkpoint (step {last_saved}) kept"
                    ),
                });
            }
            run.rng_state = get_rng_state();
            run.write(dir)?;
            last_saved = run.step;
        }
    }
    Ok(losses)
}
