//! The command line's files: `--save DIR` writes the trained Llama in the layout the
//! Hugging Face Hub keeps ([`crate::export`]), `--checkpoint DIR` keeps a checkpoint of the
//! run as it goes, and `--resume DIR` continues a run from its checkpoint
//! ([`crate::checkpoint`]) with the losses it would have had uninterrupted.
//!
//! Everything that can be refused is refused before the first step: a `--save` folder
//! holding files this chapter did not write, a checkpoint cut short, altered, or of
//! another run. A run that fails keeps its last good checkpoint.

use std::path::{Path, PathBuf};

use ch19_induction_heads::pytorch_order::PytorchOrder;
use course::Seed;
use shared::{Error, Result, manual_seed};

use crate::bpe::Bpe;
use crate::checkpoint::{Checkpoint, resume, train_until};
use crate::config::{Arch, Config};
use crate::data::Shakespeare;
use crate::export::{check_folder, save_hub};
use crate::setup::BPE_VOCAB;
use crate::tokenizer_json::to_tokenizer;
use crate::train::{EVAL_INTERVAL, Settings};

/// The seed of a run when `--seed` gives none (nanoGPT's).
pub const RUN_SEED: u64 = 1337;

/// The steps of a run: nanoGPT's baby budget.
pub const RUN_STEPS: u32 = 2000;

/// The options for the run's files.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct FileOptions {
    /// Train the llama model with byte-pair encoding, then save it into DIR as the Hugging
    /// Face Hub keeps a model (config.json, model.safetensors, tokenizer.json), for
    /// transformers or chapter 20's --model DIR. DIR must be new, empty, or an earlier save.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["train", "long", "arch", "tokenizer", "steps", "batch", "context", "lr", "eval_every", "log", "weights"])]
    pub save: Option<PathBuf>,
    /// Write a checkpoint of the run into DIR every 250 steps and at the end.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["train", "long", "arch", "tokenizer", "steps", "batch", "context", "lr", "eval_every", "log", "weights"])]
    pub checkpoint: Option<PathBuf>,
    /// Continue the run whose checkpoint is in DIR, and keep its checkpoint there.
    #[arg(long, value_name = "DIR", conflicts_with = "checkpoint", conflicts_with_all = ["train", "long", "arch", "tokenizer", "steps", "batch", "context", "lr", "eval_every", "log", "weights"])]
    pub resume: Option<PathBuf>,
}

impl FileOptions {
    /// Whether any of them is given.
    pub fn is_command(&self) -> bool {
        self.save.is_some() || self.checkpoint.is_some() || self.resume.is_some()
    }

    /// Where the run's checkpoints go: `--checkpoint`, or the folder it resumes from.
    pub fn checkpoint_dir(&self) -> Option<&Path> {
        self.checkpoint.as_deref().or(self.resume.as_deref())
    }

    /// What can be checked before training: `--save` is for the llama model with
    /// byte-pair encoding, into a folder that holds nothing of the reader's; `--resume`'s
    /// checkpoint reads whole.
    pub fn check(&self, arch: Arch, tokenizer: &str) -> Result<()> {
        if let Some(dir) = &self.save {
            if (arch, tokenizer) != (Arch::Llama, "bpe") {
                return Err(Error::InvalidArgument {
                    op: "--save",
                    detail: format!(
                        "saves the llama model with byte-pair encoding (bpe), not {arch} with {tokenizer}"
                    ),
                });
            }
            check_folder(dir)?;
        }
        if let Some(dir) = &self.resume {
            Checkpoint::read(dir)?;
        }
        Ok(())
    }

    /// The run: resumed from `--resume`'s checkpoint (which must be of this run), or
    /// started at step 0 after `manual_seed(seed)`.
    pub fn start(
        &self,
        seed: u64,
        arch: Arch,
        config: &Config,
        settings: &Settings,
        tokenizer: &str,
    ) -> Result<Checkpoint> {
        match &self.resume {
            Some(dir) => resume(dir, arch, config, settings, tokenizer),
            None => {
                manual_seed(seed);
                Checkpoint::start(arch, config, settings, tokenizer)
            }
        }
    }
}

/// `--save`, `--checkpoint` or `--resume`: trains the llama model with byte-pair encoding
/// on nanoGPT's baby budget, printing the loss every 100 steps, and saves what was asked.
pub fn run(seed: Seed, options: &FileOptions) -> Result<()> {
    let (arch, tokenizer) = (Arch::Llama, "bpe");
    options.check(arch, tokenizer)?;
    let data = Shakespeare::load()?;
    let (train, _) = data.split();
    let bpe = Bpe::train(train, BPE_VOCAB)?;
    let ids = bpe.encode(train)?;
    let config = Config::baby(bpe.vocab_size());
    let settings = Settings::shakespeare(RUN_STEPS);
    let mut run =
        options.start(seed.or(RUN_SEED), arch, &config, &settings, tokenizer)?;
    if run.step > 0 {
        println!("resumed at step {}", run.step);
    }
    let save = options.checkpoint_dir().map(|dir| (dir, EVAL_INTERVAL));
    train_until::<PytorchOrder>(&mut run, &ids, RUN_STEPS, save, |_, step, loss| {
        if step % 100 == 0 || step + 1 == RUN_STEPS {
            println!("step {step}: loss {loss:.4}");
        }
    })?;
    if let Some(dir) = options.checkpoint_dir() {
        println!("checkpoint: {} (step {})", dir.display(), run.step);
    }
    if let Some(dir) = &options.save {
        for path in save_hub(dir, &run.model, &config, &to_tokenizer(&bpe)?)? {
            println!("saved {}", path.display());
        }
    }
    Ok(())
}
