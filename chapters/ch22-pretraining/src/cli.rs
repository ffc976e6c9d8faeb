//! The chapter's command line: the default run prints the chapter's steps
//! ([`crate::narrative`]); `--train` and `--long` train a model for minutes, with a
//! progress bar, an evaluation every 250 steps and a sample every 500.

use std::path::{Path, PathBuf};

use ch19_induction_heads::pytorch_order::PytorchOrder;
use course::{Narrative, Seed};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shared::rng::Generator;
use shared::{Error, Result, manual_seed};

use crate::config::{Arch, Tokenizer};
use crate::data::Shakespeare;
use crate::encoder::Encoder;
use crate::model::Model;
use crate::runs::{EvalBatches, Evaluation, Plan, run};
use crate::sample::sample;
use crate::save_flags::FileOptions;
use crate::setup::{PROGRESS_SAMPLE_CHARS, PROMPT, SAMPLE_EVERY, SAMPLE_SEED, SEED};
use crate::weights::to_safetensors;

/// The chapter's own options.
#[derive(clap::Args, Clone, Debug)]
pub struct Options {
    /// Train nanoGPT's baby GPT: 4 layers, 4 heads, width 128, context 64, batch 12,
    /// 2000 steps (minutes: use `cargo run --release`).
    #[arg(long)]
    pub train: bool,
    /// Train a longer run: context 128, batch 16, 3000 steps.
    #[arg(long, conflicts_with = "train")]
    pub long: bool,
    /// The architecture to train.
    #[arg(long, value_enum, default_value_t = Arch::Llama)]
    pub arch: Arch,
    /// How to cut the text into tokens.
    #[arg(long, value_enum, default_value_t = Tokenizer::Char)]
    pub tokenizer: Tokenizer,
    /// Train for N steps instead of the run's own (the learning rate decays over them).
    #[arg(long, value_name = "N")]
    pub steps: Option<u32>,
    /// Sequences per step instead of the run's own.
    #[arg(long, value_name = "N")]
    pub batch: Option<usize>,
    /// Tokens per sequence instead of the run's own.
    #[arg(long, value_name = "N")]
    pub context: Option<usize>,
    /// The learning rate after the warm-up instead of 1e-3.
    #[arg(long, value_name = "LR")]
    pub lr: Option<f64>,
    /// Evaluates every N steps instead of every 250.
    #[arg(long, value_name = "N")]
    pub eval_every: Option<u32>,
    /// Writes the evaluations to PATH as CSV (`source,arch,steps,step,train,val`).
    #[arg(long, value_name = "PATH")]
    pub log: Option<PathBuf>,
    /// Writes the trained weights to PATH as safetensors.
    #[arg(long, value_name = "PATH")]
    pub weights: Option<PathBuf>,
    /// `--save DIR`, `--checkpoint DIR`, `--resume DIR`: a run of their own (the llama
    /// model with byte-pair encoding, on the baby budget) whose files are kept.
    #[command(flatten)]
    pub files: FileOptions,
}

/// The binary's entry: the chapter's steps, a training run with `--train` or `--long`, or
/// one that keeps its files with `--save`, `--checkpoint` or `--resume`.
pub fn main(seed: Seed, options: Options) -> Result<Narrative> {
    if options.files.is_command() {
        // That run printed its lines as it went: there is no narrative after it.
        crate::save_flags::run(seed, &options.files)?;
        std::process::exit(0);
    }
    if options.train || options.long {
        training_run(seed, &options)
    } else {
        crate::narrative::narrative(seed)
    }
}

/// The run the options ask for: the budget, then any size or step changed.
fn plan(options: &Options, vocab_size: usize) -> Plan {
    let budget = if options.long {
        Plan::long(vocab_size)
    } else {
        Plan::baby(vocab_size)
    };
    let mut config = budget.config;
    config.batch = options.batch.unwrap_or(config.batch);
    config.context = options.context.unwrap_or(config.context);
    let mut plan = Plan::of(config, options.steps.unwrap_or(budget.steps));
    plan.settings.lr = options.lr.unwrap_or(plan.settings.lr);
    plan.eval_every = options.eval_every.unwrap_or(plan.eval_every);
    plan
}

/// Trains the model the options describe and prints its evaluations and samples, as they
/// come on a terminal (above the progress bar) and all together at the end.
fn training_run(seed: Seed, options: &Options) -> Result<Narrative> {
    let data = Shakespeare::load()?;
    let (train_text, val_text) = data.split();
    let encoder = Encoder::new(options.tokenizer, &data)?;
    let train = encoder.encode(train_text)?;
    let val = encoder.encode(val_text)?;
    let plan = plan(options, encoder.vocab_size());
    let c = plan.config;
    c.check()?;
    manual_seed(seed.or(SEED));
    let mut model = Model::new(options.arch, &c)?;
    let batches = EvalBatches::new(&train, &val, &c)?;
    let prompt = encoder.encode(PROMPT)?;
    let mut sampler = Generator::new(seed.or(SAMPLE_SEED));

    let mut story = Narrative::new("Chapter 22: Pretraining on Shakespeare");
    let step = story.step(format!(
        "Training {} on {}: {} layers, {} heads, width {}, context {}, batch {}, {} steps",
        options.arch,
        options.tokenizer,
        c.n_layers,
        c.n_heads,
        c.d_model,
        c.context,
        c.batch,
        plan.steps
    ));
    let bar = progress_bar(plan.steps);
    let mut failed = None;
    let log = run::<PytorchOrder>(
        &mut model,
        &train,
        &batches,
        &plan,
        |_, loss| {
            bar.set_message(format!("{loss:.4}"));
            bar.inc(1);
        },
        |model, e| {
            let mut lines = vec![evaluation_line(e)];
            if e.step > 0 && e.step % SAMPLE_EVERY == 0 {
                let ids = sample(model, &prompt, PROGRESS_SAMPLE_CHARS, &mut sampler);
                match ids.and_then(|ids| encoder.decode(&ids)) {
                    Ok(text) => lines.push(format!("sample: {text:?}")),
                    Err(error) => failed = Some(error),
                }
            }
            for line in lines {
                bar.println(&line);
                step.print(line);
            }
        },
    );
    bar.finish_and_clear();
    let log = log?;
    if let Some(error) = failed {
        return Err(error);
    }
    let text = encoder.decode(&sample(&model, &prompt, 500, &mut sampler)?)?;
    step.print("a sample of the trained model:").print(text);
    if let Some(path) = &options.log {
        let rows: Vec<String> = log
            .iter()
            .map(|e| {
                let (arch, steps) = (options.arch, plan.steps);
                format!("ours,{arch},{steps},{},{:.4},{:.4}", e.step, e.train, e.val)
            })
            .collect();
        let csv = format!("{LOG_HEADER}\n{}\n", rows.join("\n"));
        write(path, csv.as_bytes())?;
    }
    if let Some(path) = &options.weights {
        write(path, &to_safetensors(&model)?)?;
    }
    Ok(story)
}

/// The first line of a log of evaluations.
pub const LOG_HEADER: &str = "source,arch,steps,step,train,val";

/// One evaluation, as the run prints it.
pub fn evaluation_line(e: &Evaluation) -> String {
    format!(
        "step {:4}: train loss {:.4}, val loss {:.4}",
        e.step, e.train, e.val
    )
}

/// A progress bar on stderr when it is a terminal, else a hidden one.
fn progress_bar(steps: u32) -> ProgressBar {
    use std::io::IsTerminal;
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(steps.into()), target);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} steps, loss {msg}, {eta} left",
        )
        .expect("a valid template"),
    );
    bar
}

/// Writes `bytes` to `path`, an error naming the path if it cannot.
fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| Error::InvalidArgument {
        op: "write",
        detail: format!("cannot write {}: {e}", path.display()),
    })
}
