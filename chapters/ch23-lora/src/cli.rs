//! The chapter's command line: the default run prints the chapter's steps on the tiny
//! checkpoint ([`crate::narrative`]), then SmolLM2's answers to a few held-out sums before
//! and after the chapter's trained adapter; the other options work on SmolLM2 itself.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch20_real_model::cli::answer;
use ch20_real_model::loader::{Loaded, default_model_path, how_to_get_it, load};
use course::{Narrative, Seed, Step};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shared::manual_seed;

use crate::accuracy::{Answered, accuracy, answer_all};
use crate::adapter::{Adapter, LoraConfig};
use crate::error::LoraError;
use crate::examples::Encoder;
use crate::setup::{
    ALPHA, BATCH, EVAL_EVERY, HELD_OUT, LR, RANK, SAVED, SEED, SHOWN, TRAIN_STEPS,
    TRAIN_TARGETS, TRAINED, in_workspace,
};
use crate::task::{Sum, split};
use crate::train::{Schedule, run};
use crate::{hub, peft};
use ch11_training::adamw::AdamW;

/// The chapter's own options.
#[derive(clap::Args, Clone, Debug)]
pub struct Options {
    /// Fine-tune SmolLM2 on the sums (minutes: use `cargo run --release`), then save the
    /// adapter (see --save). Without --save it refuses to start when adapters/sums
    /// already holds an adapter.
    #[arg(long)]
    pub train: bool,
    /// Answer all the held-out sums by greedy decoding, before and after the adapter.
    #[arg(long)]
    pub eval: bool,
    /// The model: a GGUF file or a transformers folder (SmolLM2 by default).
    #[arg(long, value_name = "PATH")]
    pub model: Option<PathBuf>,
    /// A PEFT adapter folder, for --eval, --prompt, --chat and --merge-to (the chapter's
    /// trained one, chapters/ch23-lora/data/adapter, by default).
    #[arg(long, value_name = "DIR")]
    pub adapter: Option<PathBuf>,
    /// Continue TEXT with the adapter merged into the model (chapter 20's --prompt).
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["chat", "train", "eval"])]
    pub prompt: Option<String>,
    /// Ask TEXT through the chat template, the adapter merged into the model (chapter 20's
    /// --chat), such as "What is 17 + 25?".
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["train", "eval"])]
    pub chat: Option<String>,
    /// Write the model with the adapter merged into its weights as a new transformers
    /// folder DIR (config.json, model.safetensors, tokenizer.json), which chapter 20's
    /// --model DIR runs. DIR must not exist yet, or be empty.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["train", "eval", "prompt", "chat"]
    )]
    pub merge_to: Option<PathBuf>,
    /// Where --train saves its adapter, replacing any adapter already in DIR. Without it,
    /// adapters/sums at the workspace's root (which git ignores), and only when no adapter
    /// is there yet.
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    /// The adapters' rank.
    #[arg(long, default_value_t = RANK)]
    pub rank: usize,
    /// LoRA's alpha: the update is scaled by alpha / rank.
    #[arg(long, default_value_t = ALPHA)]
    pub alpha: f64,
    /// The adapted projections, by name, separated by commas.
    #[arg(long, value_delimiter = ',', default_values_t = TRAIN_TARGETS.map(String::from))]
    pub targets: Vec<String>,
    /// Training steps.
    #[arg(long, default_value_t = TRAIN_STEPS)]
    pub steps: u32,
    /// Questions per step.
    #[arg(long, default_value_t = BATCH)]
    pub batch: usize,
    /// AdamW's learning rate at the first step; it decays in a straight line to 0.
    #[arg(long, default_value_t = LR)]
    pub lr: f64,
    /// Measure the held-out accuracy every N steps, on the first 50 held-out sums.
    #[arg(long, value_name = "N", default_value_t = EVAL_EVERY)]
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
            prompt: None,
            chat: None,
            merge_to: None,
            save: None,
            rank: RANK,
            alpha: ALPHA,
            targets: TRAIN_TARGETS.map(String::from).to_vec(),
            steps: TRAIN_STEPS,
            batch: BATCH,
            lr: LR,
            eval_every: EVAL_EVERY,
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
    if options.prompt.is_some() || options.chat.is_some() {
        // The answer streams as it comes: there is no narrative to print after it.
        answer(seed, &options.for_chapter_20(), merged(&options)?)?;
        std::process::exit(0);
    }
    if let Some(dir) = &options.merge_to {
        merge_to(&options, dir)?;
        std::process::exit(0);
    }
    let mut story = crate::narrative::narrative(seed)?;
    // The committed adapter was trained on the default seed's split: with another seed
    // some of "its" held-out sums would be sums it trained on.
    if seed.or(SEED) == SEED {
        before_and_after(story.step("SmolLM2 before and after"), &options)?;
    }
    Ok(story)
}

impl Options {
    /// Chapter 20's options for `--prompt` or `--chat`: greedy, up to 64 new tokens.
    fn for_chapter_20(&self) -> ch20_real_model::cli::Options {
        ch20_real_model::cli::Options {
            prompt: self.prompt.clone(),
            chat: self.chat.clone(),
            max_new_tokens: 64,
            ..Default::default()
        }
    }

    /// The adapter's folder: `--adapter`, or the chapter's trained one.
    fn adapter_dir(&self) -> PathBuf {
        self.adapter
            .clone()
            .unwrap_or_else(|| in_workspace(TRAINED))
    }
}

/// The model of `--model` with the adapter of `--adapter` merged into its weights.
pub fn merged(options: &Options) -> Result<Loaded, LoraError> {
    let mut loaded = model(options)?;
    let adapter = peft::load(&options.adapter_dir(), &loaded.model)?;
    adapter.merge_into(&mut loaded.model);
    Ok(loaded)
}

/// `--merge-to DIR`: the merged model saved as a transformers folder.
fn merge_to(options: &Options, dir: &Path) -> Result<(), LoraError> {
    hub::save(&merged(options)?, dir)?;
    println!(
        "wrote {} (the adapter of {} merged into the weights): run it with\n  \
         cargo run -p ch20-real-model -- --model {} --chat \"What is 17 + 25?\"",
        dir.display(),
        options.adapter_dir().display(),
        dir.display()
    );
    Ok(())
}

/// The default run's last step: `SHOWN` held-out sums answered by SmolLM2 before and after
/// the chapter's trained adapter, or how to get the model when it is missing.
fn before_and_after(step: &mut Step, options: &Options) -> shared::Result<()> {
    let path = options.model.clone().unwrap_or_else(default_model_path);
    if !path.exists() {
        step.print(format!(
            "(SmolLM2 before and after its adapter needs the model: {})",
            how_to_get_it(&path)
        ));
        return Ok(());
    }
    let loaded = model(options)?;
    let encoder = Encoder::new(&loaded)?;
    manual_seed(SEED);
    let sums = split(HELD_OUT)?;
    let shown = &sums.held_out[..SHOWN];
    let dir = options.adapter_dir();
    let adapter = peft::load(&dir, &loaded.model)?;
    let before = answered("before", &loaded, &encoder, shown)?;
    let mut merged = loaded;
    adapter.merge_into(&mut merged.model);
    let after = answered("after", &merged, &encoder, shown)?;
    step.print(format!(
        "{SHOWN} held-out sums, before and after the adapter in {TRAINED}:"
    ));
    let mark = |x: &Answered| if x.correct() { "right" } else { "wrong" };
    for (b, a) in before.iter().zip(&after) {
        step.print(b.sum.question());
        step.print(format!("  before: {:?} ({})", b.reply, mark(b)));
        step.print(format!("  after:  {:?} ({})", a.reply, mark(a)));
    }
    let right = |all: &[Answered]| all.iter().filter(|x| x.correct()).count();
    step.print(format!(
        "right: {} of {SHOWN} before, {} of {SHOWN} after (all {HELD_OUT}: --eval)",
        right(&before),
        right(&after)
    ));
    Ok(())
}

/// SmolLM2's greedy answers to `sums`, with a progress bar.
fn answered(
    when: &str,
    loaded: &Loaded,
    encoder: &Encoder,
    sums: &[Sum],
) -> Result<Vec<Answered>, LoraError> {
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
    Ok(answered)
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
    let adapter = peft::load(&options.adapter_dir(), &loaded.model)?;
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
    let answered = answered(when, loaded, encoder, sums)?;
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
    // Refused before the minutes of training, not after them.
    let dir = save_dir(options.save.as_deref(), &in_workspace(SAVED))?;
    let loaded = model(options)?;
    let encoder = Encoder::new(&loaded)?;
    manual_seed(seed.or(SEED));
    let sums = split(HELD_OUT)?;
    let config = LoraConfig::new(options.rank, options.alpha, &options.targets)?;
    let mut adapter = Adapter::new(&loaded.model, &config)?;
    println!(
        "{} numbers train (rank {}, alpha {}, beside {}); {} steps of {} questions, AdamW \
         from learning rate {} down to 0",
        adapter.trainable(),
        options.rank,
        options.alpha,
        options.targets.join(","),
        options.steps,
        options.batch,
        options.lr
    );
    // One optimizer for the whole run: its moments and its place in the schedule carry
    // over from one piece of the run to the next.
    let mut optimizer = AdamW::new(options.lr);
    let schedule = Schedule::Linear {
        lr: options.lr,
        steps: options.steps,
    };
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
            &mut optimizer,
            (chunk, options.batch, schedule),
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
    save_for(&adapter, &loaded.path, &dir)?;
    // --eval, --chat and --prompt use the chapter's adapter unless told otherwise.
    println!(
        "saved the adapter in {}: --adapter {} answers with it",
        dir.display(),
        dir.display()
    );
    Ok(())
}

/// The folder `--train` saves in: `save` (`--save DIR`), whose adapter, if it holds one,
/// the new one replaces; or else `default`, which must not hold an adapter yet, since a
/// run nobody pointed at a folder must not replace what is in it.
pub fn save_dir(save: Option<&Path>, default: &Path) -> Result<PathBuf, LoraError> {
    if let Some(dir) = save {
        return Ok(dir.to_path_buf());
    }
    if [peft::CONFIG, peft::WEIGHTS]
        .iter()
        .any(|file| default.join(file).exists())
    {
        let shown = default.display();
        return Err(LoraError::Settings(format!(
            "--train: {shown} already holds an adapter, and --train without --save never \
             replaces one: pass --save DIR to save in another folder, or --save {shown} \
             to replace it"
        )));
    }
    Ok(default.to_path_buf())
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
