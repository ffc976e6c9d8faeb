//! The trained run, saved: what the chapter prints after training, so the default run does
//! not have to train first.
//!
//! Training takes a while; reading its result takes nothing. The checkpoint holds the
//! seed, every step's training loss, the logged scores of both runs and the parameters of
//! the run with repeats of varying length before training and at every logged step (the
//! last are the trained ones), so that the book can redraw the heads at any of them. The
//! chapter's own training writes it, byte for byte the same on every run:
//!
//! ```text
//! cargo run --release -p ch19-induction-heads -- --write-checkpoint \
//!     chapters/ch19-induction-heads/data/trained.ckpt
//! ```
//!
//! The layout, all numbers little-endian: the line `ch19-induction-heads checkpoint 2\n`;
//! the seed (u64); the number of steps of each run (two u32); every step's loss of the
//! varying run (f32); the logged entries of the varying run, then of the fixed run (per
//! entry the loss as f32, then the repeated-token loss, the two previous-token scores and
//! the two induction scores as f64); then, for step 0 and every logged step of the varying
//! run, the parameters in `named_parameters` order (f32).

use shared::{Error, Result, Tensor};

use crate::model::AttentionOnly;
use crate::scores::Scores;

/// The first line of every checkpoint.
pub const MAGIC: &[u8] = b"ch19-induction-heads checkpoint 2\n";

/// A model's parameters in `named_parameters` order, each flattened.
pub type Parameters = Vec<Vec<f32>>;

/// `model`'s parameters, copied out in `named_parameters` order.
pub fn parameters_of(model: &AttentionOnly) -> Parameters {
    model
        .named_parameters()
        .iter()
        .map(|(_, p)| p.to_vec())
        .collect()
}

/// One logged step: the training loss of that step and the scores on the evaluation batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogEntry {
    /// The step, counted from 1.
    pub step: u32,
    /// That step's training loss.
    pub loss: f32,
    /// The scores after that step.
    pub scores: Scores,
}

/// What a checkpoint holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// The seed the run was trained from.
    pub seed: u64,
    /// Every step's training loss, repeats of varying length.
    pub losses: Vec<f32>,
    /// The logged steps of the run with repeats of varying length.
    pub log: Vec<LogEntry>,
    /// The steps of the fixed-offset run.
    pub fixed_steps: u32,
    /// The logged steps of the fixed-offset run.
    pub fixed_log: Vec<LogEntry>,
    /// The parameters of the varying run before training, then after every logged step:
    /// `snapshots[i]` after step `i · log_every`; the last are the trained parameters.
    pub snapshots: Vec<Parameters>,
}

impl Checkpoint {
    /// The checkpoint as bytes (see the module's docs for the layout).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend(self.seed.to_le_bytes());
        out.extend((self.losses.len() as u32).to_le_bytes());
        out.extend(self.fixed_steps.to_le_bytes());
        for loss in &self.losses {
            out.extend(loss.to_le_bytes());
        }
        for entry in self.log.iter().chain(&self.fixed_log) {
            out.extend(entry.loss.to_le_bytes());
            let s = &entry.scores;
            let numbers = [s.repeat_loss, s.previous[0], s.previous[1]];
            for x in numbers.into_iter().chain(s.induction) {
                out.extend(x.to_le_bytes());
            }
        }
        for values in self.snapshots.iter().flatten() {
            for x in values {
                out.extend(x.to_le_bytes());
            }
        }
        out
    }

    /// Reads a checkpoint for `model`'s parameter shapes, logged every `log_every` steps.
    pub fn from_bytes(
        bytes: &[u8],
        model: &AttentionOnly,
        log_every: u32,
    ) -> Result<Checkpoint> {
        let bad = |detail: String| Error::InvalidArgument {
            op: "Checkpoint::from_bytes",
            detail,
        };
        let rest = bytes.strip_prefix(MAGIC).ok_or_else(|| {
            bad("not a chapter 19 checkpoint (wrong first line)".into())
        })?;
        let mut reader = Reader { bytes: rest };
        let seed = u64::from_le_bytes(reader.take()?);
        let steps = u32::from_le_bytes(reader.take()?);
        let fixed_steps = u32::from_le_bytes(reader.take()?);
        let losses = (0..steps)
            .map(|_| Ok(f32::from_le_bytes(reader.take()?)))
            .collect::<Result<Vec<f32>>>()?;
        let mut read_log = |steps: u32| {
            (1..=steps / log_every)
                .map(|i| {
                    let loss = f32::from_le_bytes(reader.take()?);
                    let mut x = [0.0; 5];
                    for v in &mut x {
                        *v = f64::from_le_bytes(reader.take()?);
                    }
                    Ok(LogEntry {
                        step: i * log_every,
                        loss,
                        scores: Scores {
                            repeat_loss: x[0],
                            previous: [x[1], x[2]],
                            induction: [x[3], x[4]],
                        },
                    })
                })
                .collect::<Result<Vec<LogEntry>>>()
        };
        let log = read_log(steps)?;
        let fixed_log = read_log(fixed_steps)?;
        let sizes: Vec<usize> = model
            .named_parameters()
            .iter()
            .map(|(_, p)| p.numel())
            .collect();
        let snapshots = (0..=steps / log_every)
            .map(|_| {
                sizes
                    .iter()
                    .map(|&n| {
                        (0..n)
                            .map(|_| Ok(f32::from_le_bytes(reader.take()?)))
                            .collect::<Result<Vec<f32>>>()
                    })
                    .collect::<Result<Parameters>>()
            })
            .collect::<Result<Vec<Parameters>>>()?;
        if !reader.bytes.is_empty() {
            return Err(bad(format!("{} bytes left over", reader.bytes.len())));
        }
        Ok(Checkpoint {
            seed,
            losses,
            log,
            fixed_steps,
            fixed_log,
            snapshots,
        })
    }

    /// The steps whose parameters the checkpoint holds: 0, then every logged step.
    pub fn saved_steps(&self) -> Vec<u32> {
        std::iter::once(0)
            .chain(self.log.iter().map(|entry| entry.step))
            .collect()
    }

    /// Copies the trained parameters into `model`.
    pub fn load_into(&self, model: &mut AttentionOnly) {
        let trained = self
            .snapshots
            .last()
            .expect("a checkpoint holds its parameters");
        load(trained, model);
    }

    /// Copies the parameters after `step` into `model`; `step` must be one of
    /// [`Checkpoint::saved_steps`].
    pub fn load_step(&self, step: u32, model: &mut AttentionOnly) -> Result<()> {
        let steps = self.saved_steps();
        let i = steps
            .iter()
            .position(|&s| s == step)
            .ok_or_else(|| Error::InvalidArgument {
                op: "Checkpoint::load_step",
                detail: format!(
                    "no parameters saved after step {step}: the saved steps are 0 to {} by {}",
                    steps.last().unwrap_or(&0),
                    steps.get(1).unwrap_or(&0)
                ),
            })?;
        load(&self.snapshots[i], model);
        Ok(())
    }
}

/// Copies `parameters` into `model`.
fn load(parameters: &Parameters, model: &mut AttentionOnly) {
    for (param, values) in model.parameters_mut().into_iter().zip(parameters) {
        *param = Tensor::from_vec(values.clone(), param.sizes());
    }
}

/// Reads fixed-size numbers off the front of a byte slice.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let (head, rest) = self.bytes.split_first_chunk::<N>().ok_or_else(|| {
            Error::InvalidArgument {
                op: "Checkpoint::from_bytes",
                detail: "the checkpoint ends too early".into(),
            }
        })?;
        self.bytes = rest;
        Ok(*head)
    }
}
