//! A run as nanoGPT makes one: training steps, and every few hundred steps the
//! loss on fixed batches of the training and the validation text, so that the two curves
//! can be read side by side (the gap between them is how much the model learns by heart).

use shared::Result;

use crate::arithmetic::Arithmetic;
use crate::batches::{Batch, fixed_batches, get_batch};
use crate::config::Config;
use crate::model::Model;
use crate::train::{EVAL_BATCHES, EVAL_INTERVAL, Settings, evaluate, train_step};

/// The seed of the generator the evaluation batches are drawn from, one of their own: the
/// same windows for every run, whatever its seed.
pub const EVAL_SEED: u64 = 2026;

/// The fixed batches of an evaluation, from both parts of the text.
pub struct EvalBatches {
    /// [`EVAL_BATCHES`] batches of the training text.
    pub train: Vec<Batch>,
    /// [`EVAL_BATCHES`] batches of the validation text.
    pub val: Vec<Batch>,
}

impl EvalBatches {
    /// [`EVAL_BATCHES`] batches of `config`'s size from each text, the training text's
    /// from a generator seeded with [`EVAL_SEED`], the validation text's from one seeded
    /// with `EVAL_SEED + 1`.
    ///
    /// # Shapes
    /// `train`, `val`: token ids, more than `config.context` of each.
    pub fn new(train: &[u32], val: &[u32], config: &Config) -> Result<EvalBatches> {
        let draw = |ids, seed| {
            fixed_batches(ids, config.context, config.batch, EVAL_BATCHES, seed)
        };
        Ok(EvalBatches {
            train: draw(train, EVAL_SEED)?,
            val: draw(val, EVAL_SEED + 1)?,
        })
    }
}

/// What a run trains and for how long.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// The model's and the batches' sizes.
    pub config: Config,
    /// The learning rate's schedule, AdamW's settings and the clip.
    pub settings: Settings,
    /// Training steps.
    pub steps: u32,
    /// Steps between two evaluations.
    pub eval_every: u32,
}

impl Plan {
    /// nanoGPT's baby GPT: [`Config::baby`] for 2000 steps, the learning rate decaying
    /// over all of them.
    pub fn baby(vocab_size: usize) -> Plan {
        Plan::of(Config::baby(vocab_size), 2000)
    }

    /// A longer run: [`Config::long`] (context 128, batch 16) for 3000 steps.
    pub fn long(vocab_size: usize) -> Plan {
        Plan::of(Config::long(vocab_size), 3000)
    }

    /// A short run of the baby model on `batch` sequences a step, the learning rate warmed
    /// up over 10 steps ([`Settings::short`]).
    pub fn short(vocab_size: usize, steps: u32, batch: usize) -> Plan {
        let config = Config {
            batch,
            ..Config::baby(vocab_size)
        };
        Plan {
            settings: Settings::short(steps),
            ..Plan::of(config, steps)
        }
    }

    /// `config` for `steps` steps with nanoGPT's `shakespeare_char` settings.
    pub fn of(config: Config, steps: u32) -> Plan {
        Plan {
            config,
            settings: Settings::shakespeare(steps),
            steps,
            eval_every: EVAL_INTERVAL,
        }
    }
}

/// One evaluation: the mean losses after `step` steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    /// Steps trained before it.
    pub step: u32,
    /// The mean loss on the training batches.
    pub train: f32,
    /// The mean loss on the validation batches.
    pub val: f32,
}

/// Both losses of `model` on `batches`.
///
/// # Shapes
/// `batches`: `[batch, tokens]` each, `tokens <= model.context()`.
pub fn evaluation<A: Arithmetic>(
    model: &Model,
    batches: &EvalBatches,
    step: u32,
) -> Evaluation {
    Evaluation {
        step,
        train: evaluate::<A>(model, &batches.train),
        val: evaluate::<A>(model, &batches.val),
    }
}

/// Trains `model` for `plan.steps` steps on batches of `data` drawn from the default generator,
/// and evaluates it before the first step, every `plan.eval_every` steps and after the
/// last; calls `on_step(step, loss)` after each step and `on_eval(model, evaluation)`
/// after each evaluation. Returns the evaluations.
///
/// # Shapes
/// `data`: token ids, more than `plan.config.context` of them; `plan.config.context <=
/// model.context()`.
pub fn run<A: Arithmetic>(
    model: &mut Model,
    data: &[u32],
    batches: &EvalBatches,
    plan: &Plan,
    mut on_step: impl FnMut(u32, f32),
    mut on_eval: impl FnMut(&Model, &Evaluation),
) -> Result<Vec<Evaluation>> {
    let Plan {
        config,
        settings,
        steps,
        eval_every,
    } = plan;
    let (steps, eval_every) = (*steps, (*eval_every).max(1));
    model.check_context(config.context)?;
    if steps == 0 {
        return Err(shared::Error::InvalidArgument {
            op: "run",
            detail: "a run needs at least 1 step, got 0".into(),
        });
    }
    let mut optimizer = settings.optimizer();
    let mut log = Vec::new();
    for step in 0..=steps {
        if step % eval_every == 0 || step == steps {
            let evaluation = evaluation::<A>(model, batches, step);
            on_eval(model, &evaluation);
            log.push(evaluation);
        }
        if step == steps {
            break;
        }
        let batch = get_batch(data, config.context, config.batch)?;
        let loss = train_step::<A>(model, &mut optimizer, settings, step, &batch)?;
        on_step(step, loss);
    }
    Ok(log)
}

/// One line of a log of evaluations, as `--log PATH` writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct LogRow {
    /// Who trained: `ours` or `pytorch`.
    pub source: String,
    /// The architecture: `gpt2` or `llama`.
    pub arch: String,
    /// The run's steps.
    pub steps: u32,
    /// The evaluation.
    pub evaluation: Evaluation,
}

/// The rows of a log of evaluations (`source,arch,steps,step,train,val`, a header first).
pub fn parse_log(csv: &str) -> Result<Vec<LogRow>> {
    let bad = |line: &str| shared::Error::InvalidArgument {
        op: "parse_log",
        detail: format!("expected source,arch,steps,step,train,val, got {line:?}"),
    };
    csv.lines()
        .skip(1)
        .filter(|line| !line.is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            let [source, arch, steps, step, train, val] = fields[..] else {
                return Err(bad(line));
            };
            let number = |s: &str| s.parse::<f32>().map_err(|_| bad(line));
            let count = |s: &str| s.parse::<u32>().map_err(|_| bad(line));
            Ok(LogRow {
                source: source.to_string(),
                arch: arch.to_string(),
                steps: count(steps)?,
                evaluation: Evaluation {
                    step: count(step)?,
                    train: number(train)?,
                    val: number(val)?,
                },
            })
        })
        .collect()
}
