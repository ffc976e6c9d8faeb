//! The chapter's command line: the default run prints the chapter's steps on the tiny
//! checkpoint ([`crate::narrative`]); the other options work on SmolLM2 itself.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch20_real_model::loader::{Loaded, default_model_path, how_to_get_it, load};
use course::{Narrative, Seed};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shared::manual_seed;

use crate::accuracy::{accuracy, answer_all};
use crate::adapter::{Adapter, LoraConfig};
use crate::error::LoraError;
use crate::examples::Encoder;
use crate::peft;
use crate::setup::{
    ALPHA, BATCH, HELD_OUT, LR, RANK, SEED, SHOWN, TARGETS, TRAINED, in_workspace,
};
use crate::task::{Sum, split};
use crate::train::run;

/// The chapter's own options.
#[derive(clap::Args, Clone, Debug)]
pub struct Options {
    /// Fine-tune SmolLM2 on the sums (minutes: use `cargo run --release`), then save the
    /// adapter (see --save).
    #[arg(long)]
    pub train: bool,
    /// Answer all the held-out sums by greedy decoding, before and after the adapter.
    #[arg(long)]
    pub eval: bool,
    /// The model: a GGUF file or a transformers folder (SmolLM2 by default).
    #[arg(long, value_name = "PATH")]
    pub model: Option<PathBuf>,
    /// A PEFT adapter folder to put beside the model (the chapter's trained one by default
    /// for --eval).
    #[arg(long, value_name = "DIR")]
    pub adapter: Option<PathBuf>,
    /// Where --train saves its adapter.
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    /// The adapters' rank.
    #[arg(long, default_value_t = RANK)]
    pub rank: usize,
    /// LoRA's alpha: the update is scaled by alpha / rank.
    #[arg(long, default_value_t = ALPHA)]
    pub alpha: f64,
    /// The adapted projections, by name, separated by commas.
    #[arg(long, value_delimiter = ',', default_values_t = TARGETS.map(String::from))]
    pub targets: Vec<String>,
    /// Training steps.
    #[arg(long, default_value_t = 300)]
    pub steps: u32,
    /// Questions per step.
    #[arg(long, default_value_t = BATCH)]
    pub batch: usize,
    /// AdamW's learning rate.
    #[arg(long, default_value_t = LR)]
    pub lr: f64,
    /// Measure the held-out accuracy every N steps, on the first 50 held-out sums.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub eval_every: u32,
}

impl Options {
    /// The options of a bare `cargo run -p ch23-lora`.
    pub fn defaults() -> Options {
        Options {
            train: false,
            eval: false,
            model: None,
            adapter: None,
            save: None,
            rank: RANK,
            alpha: ALPHA,
            targets: TARGETS.map(String::from).to_vec(),
            steps: 300,
            batch: BATCH,
            lr: LR,
            eval_every: 50,
        }
    }
}

/// The binary's entry.
pub fn main(seed: Seed, options: Options) -> shared::Result<Narrative> {
    if options.train {
        train(seed, &options)?;
        std::process::exit(0);
    }
    if options.eval {
        eval(seed, &options, usize::MAX)?;
        std::process::exit(0);
    }
    crate::narrative::narrative(seed)
}

/// The model of `--model`, or SmolLM2, or an error that says how to get it.
pub fn model(options: &Options) -> Result<Loaded, LoraError> {
    let path = options.model.clone().unwrap_or_else(default_model_path);
    if !path.exists() {
        return Err(LoraError::Model(how_to_get_it(&path)));
    }
    Ok(load(&path, |_, _| {})?)
}

/// The held-out sums answered with and without the adapter.
fn eval(seed: Seed, options: &Options, count: usize) -> Result<(), LoraError> {
    let loaded = model(options)?;
    let encoder = Encoder::new(&loaded)?;
    manual_seed(seed.or(SEED));
    let sums = split(HELD_OUT)?;
    let shown = &sums.held_out[..count.min(sums.held_out.len())];
    let dir = options
        .adapter
        .clone()
        .unwrap_or_else(|| in_workspace(TRAINED));
    let adapter = peft::load(&dir, &loaded.model)?;
    let before = report("before", &loaded, &encoder, shown)?;
    let mut merged = loaded;
    adapter.merge_into(&mut merged.model);
    let after = report("after", &merged, &encoder, shown)?;
    println!("held-out accuracy: {before:.1} % before, {after:.1} % after");
    Ok(())
}

/// Answers `sums`, prints the first few and returns the accuracy in percent.
fn report(
    when: &str,
    loaded: &Loaded,
    encoder: &Encoder,
    sums: &[Sum],
) -> Result<f64, LoraError> {
    let bar = bar(sums.len() as u64, when);
    let answered = answer_all(
        &loaded.model,
        &loaded.recipe,
        encoder,
        loaded.config.context_length,
        sums,
        |n| bar.set_position(n as u64),
    )?;
    bar.finish_and_clear();
    println!("{when}:");
    for a in answered.iter().take(SHOWN) {
        let mark = if a.correct() { "right" } else { "wrong" };
        println!("  {} -> {:?} ({mark})", a.sum.question(), a.reply);
    }
    Ok(100.0 * accuracy(&answered))
}

/// A progress bar on standard error.
fn bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} {elapsed}")
            .expect("a valid template"),
    );
    bar.set_message(what.to_string());
    bar
}

/// `--train`: fine-tunes, measuring the held-out accuracy every `--eval-every` steps.
fn train(seed: Seed, options: &Options) -> Result<(), LoraError> {
    let loaded = model(options)?;
    let encoder = Encoder::new(&loaded)?;
    manual_seed(seed.or(SEED));
    let sums = split(HELD_OUT)?;
    let config = LoraConfig::new(options.rank, options.alpha, &options.targets)?;
    let mut adapter = Adapter::new(&loaded.model, &config)?;
    println!(
        "{} numbers train; {} steps of {} questions, AdamW at learning rate {}",
        adapter.trainable(),
        options.steps,
        options.batch,
        options.lr
    );
    let probe = &sums.held_out[..50.min(sums.held_out.len())];
    let every = options.eval_every.max(1);
    let mut done = 0;
    let start = Instant::now();
    while done < options.steps {
        let chunk = every.min(options.steps - done);
        let bar = bar(u64::from(chunk), "training");
        let losses = run::<PytorchOrder>(
            &loaded.model,
            &loaded.recipe,
            &mut adapter,
            &encoder,
            &sums.train,
            (chunk, options.batch, options.lr),
            |_, loss| {
                bar.set_message(format!("loss {loss:.4}"));
                bar.inc(1);
            },
        )?;
        bar.finish_and_clear();
        done += chunk;
        let mut merged = load(&loaded.path, |_, _| {})?;
        adapter.merge_into(&mut merged.model);
        let answered = answer_all(
            &merged.model,
            &merged.recipe,
            &encoder,
            merged.config.context_length,
            probe,
            |_| {},
        )?;
        let mean = losses.iter().sum::<f32>() / losses.len() as f32;
        println!(
            "step {done}: mean loss {mean:.4}, held-out accuracy {:.1} % ({:.1} s per step)",
            100.0 * accuracy(&answered),
            start.elapsed().as_secs_f64() / f64::from(done)
        );
    }
    let dir = options
        .save
        .clone()
        .unwrap_or_else(|| in_workspace(TRAINED));
    save_for(&adapter, &loaded.path, &dir)?;
    println!("saved the adapter in {}", dir.display());
    Ok(())
}

/// Saves `adapter`, naming the model it was made for.
fn save_for(adapter: &Adapter, model: &Path, dir: &Path) -> Result<(), LoraError> {
    peft::save(adapter, &base_name(model), dir)
}

/// The name PEFT records for the model at `path`: SmolLM2's Hub name for its GGUF file,
/// the folder's or file's name otherwise.
pub fn base_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.starts_with("SmolLM2-135M-Instruct") {
        "HuggingFaceTB/SmolLM2-135M-Instruct".into()
    } else {
        name
    }
}
