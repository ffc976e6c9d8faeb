//! One training step of chapter 11's model, ours against PyTorch's same step, timed in
//! turns on one thread (feature `tch`).
//!
//! Ours is [`train_step`]: the forward pass with its tape, cross-entropy, the backward pass
//! and AdamW, all written by hand. PyTorch's is the loop body of the reference script
//! `reference/ch11_training.py`, run on libtorch 2.13.0 through tch: the same model with
//! the weights copied from ours, the same batch, `F.cross_entropy`,
//! `optimizer.zero_grad()`, autograd's `loss.backward()` and libtorch's own AdamW
//! (`torch::optim::AdamW`, tch's `nn::AdamW`) set as ours is: lr 1e-2, betas (0.9, 0.999),
//! eps 1e-8, weight decay 0.01.
//!
//! First a check that the two compute the same step: from chapter 11's seed, one step of
//! each on the chapter's first batch. The losses must agree (the chapter prints PyTorch's
//! numbers), and the largest difference between the updated parameters is reported: the
//! gradients are a last bit apart here and there (libtorch adds in other orders), which
//! moves an updated parameter by a unit in the last place, more where a gradient nearly
//! cancels (the first step moves a parameter by `lr · g / (|g| + eps)`). Then
//! the timing: each round times [`STEPS_PER_TURN`] steps of ours and as many of PyTorch's,
//! in one order or the reverse, each model training on the one batch, until SECONDS seconds
//! have passed (default 3, at least [`MIN_ROUNDS`] rounds). A slow spell of a shared
//! machine then slows both turns of a round alike, and the ratio is the median of the
//! rounds' ratios.
//!
//! ```text
//! cargo run --release -p attention-perf --features tch --example paired_step -- 3
//! ```
//!
//! Prints one JSON object: the median time of one step of each (µs), the ratio (below 1:
//! ours is faster), the two losses of the check and the largest parameter difference.
//! `perf/scripts/bench-vs-torch.sh` runs it with its `CH09_BENCH_SECONDS` as SECONDS.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use ch11_training::adamw::AdamW;
use ch11_training::model::{AttentionModel, D_MODEL, HEADS};
use ch11_training::task::{TOKENS, Task, VOCAB};
use ch11_training::train::{BATCH, LR, train_step};
use shared::backend::torch::{from_tch, to_tch};
use shared::tch::{self, Device, Kind, Reduction, nn, nn::OptimizerConfig};
use shared::{Tensor, manual_seed};

/// Training steps per turn: one step takes a millisecond or less, short enough for one
/// hiccup of the scheduler to swing a round's ratio.
const STEPS_PER_TURN: usize = 20;
/// Rounds measured however short SECONDS is.
const MIN_ROUNDS: usize = 4;
/// The chapter's seed.
const SEED: u64 = 123;

/// The reference script's `TwoBackModel` in libtorch: the parameters are the variables of
/// a `VarStore`, under the names `model.named_parameters()` gives them.
struct TorchModel {
    vars: nn::VarStore,
    tok_emb: tch::Tensor,
    pos_emb: tch::Tensor,
    w_query: tch::Tensor,
    w_key: tch::Tensor,
    w_value: tch::Tensor,
    out_proj_weight: tch::Tensor,
    out_proj_bias: tch::Tensor,
    head_weight: tch::Tensor,
    head_bias: tch::Tensor,
    /// The attention's `mask` buffer: `torch.triu(torch.ones(8, 8), diagonal=1)`.
    mask: tch::Tensor,
}

impl TorchModel {
    /// The same model as `ours`, its parameters copied.
    fn new(ours: &AttentionModel) -> TorchModel {
        let vars = nn::VarStore::new(Device::Cpu);
        let params: HashMap<&str, tch::Tensor> = ours
            .named_parameters()
            .into_iter()
            .map(|(name, p)| {
                // "attn.W_query.weight": the variable "weight" under the path "attn.W_query".
                let (path, leaf) = name.rsplit_once('.').expect("a dotted name");
                let path = path
                    .split('.')
                    .fold(vars.root(), |path, part| path.sub(part));
                (name, path.var_copy(leaf, &to_tch(p, Device::Cpu)))
            })
            .collect();
        let var = |name: &str| params[name].shallow_clone();
        let tokens = TOKENS as i64;
        TorchModel {
            tok_emb: var("tok_emb.weight"),
            pos_emb: var("pos_emb.weight"),
            w_query: var("attn.W_query.weight"),
            w_key: var("attn.W_key.weight"),
            w_value: var("attn.W_value.weight"),
            out_proj_weight: var("attn.out_proj.weight"),
            out_proj_bias: var("attn.out_proj.bias"),
            head_weight: var("head.weight"),
            head_bias: var("head.bias"),
            mask: tch::Tensor::ones([tokens, tokens], (Kind::Float, Device::Cpu))
                .triu(1),
            vars,
        }
    }

    /// `model(ids)`: embeddings, attention, head.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns the logits `[batch, tokens, VOCAB]`.
    fn forward(&self, ids: &tch::Tensor) -> tch::Tensor {
        let tokens = ids.size()[1];
        let positions = tch::Tensor::arange(tokens, (Kind::Int64, Device::Cpu));
        let x = tch::Tensor::embedding(&self.tok_emb, ids, -1, false, false)
            + tch::Tensor::embedding(&self.pos_emb, &positions, -1, false, false);
        self.attention(&x)
            .linear(&self.head_weight, Some(&self.head_bias))
    }

    /// Chapter 7's causal `MultiHeadAttention.forward`, line by line as the reference
    /// script writes it.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, D_MODEL]`. Returns the same.
    fn attention(&self, x: &tch::Tensor) -> tch::Tensor {
        let (b, tokens) = (x.size()[0], x.size()[1]);
        let (heads, head_dim) = (HEADS as i64, (D_MODEL / HEADS) as i64);
        let split = |w: &tch::Tensor| {
            x.linear(w, None::<tch::Tensor>)
                .view([b, tokens, heads, head_dim])
                .transpose(1, 2)
        };
        let (keys, queries, values) = (
            split(&self.w_key),
            split(&self.w_query),
            split(&self.w_value),
        );
        let mask = self
            .mask
            .to_kind(Kind::Bool)
            .slice(0, 0, tokens, 1)
            .slice(1, 0, tokens, 1);
        let scores = queries
            .matmul(&keys.transpose(2, 3))
            .masked_fill(&mask, f64::NEG_INFINITY);
        // nn.Dropout(0.0) in training mode: PyTorch's CPU dropout hands its input back.
        let weights = (scores / (head_dim as f64).sqrt())
            .softmax(-1, None::<Kind>)
            .dropout(0.0, true);
        weights
            .matmul(&values)
            .transpose(1, 2)
            .contiguous()
            .view([b, tokens, D_MODEL as i64])
            .linear(&self.out_proj_weight, Some(&self.out_proj_bias))
    }

    /// The reference script's loop body: the loss, `optimizer.zero_grad()`,
    /// `loss.backward()`, `optimizer.step()`. Returns `loss.item()`.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`.
    fn train_step(&self, optimizer: &mut nn::Optimizer, ids: &tch::Tensor) -> f32 {
        let loss = loss_fn(&self.forward(ids), ids);
        optimizer.zero_grad();
        loss.backward();
        optimizer.step();
        loss.double_value(&[]) as f32
    }
}

/// The reference script's `loss_fn`: `F.cross_entropy` over the positions that have a
/// token two places back.
///
/// # Shapes
/// `logits`: `[batch, tokens, VOCAB]`, `ids`: `[batch, tokens]`. Returns a scalar.
fn loss_fn(logits: &tch::Tensor, ids: &tch::Tensor) -> tch::Tensor {
    let shift = Task::TWO_BACK.shift as i64;
    let predicted = logits.slice(1, shift, None, 1).reshape([-1, VOCAB as i64]);
    let wanted = ids.slice(1, 0, -shift, 1).reshape([-1]);
    predicted.cross_entropy_loss::<tch::Tensor>(
        &wanted,
        None,
        Reduction::Mean,
        -100,
        0.0,
    )
}

/// libtorch's AdamW with the settings of ours (PyTorch's defaults but the learning rate).
///
/// libtorch's C++ AdamW is the same formula as Python's `torch.optim.AdamW`, but it
/// updates the first moment with `mul_` and `add_` where Python's uses `lerp_`: the same
/// numbers at the first step (the check below), possibly a last bit apart later.
fn libtorch_adamw(vars: &nn::VarStore, ours: &AdamW) -> nn::Optimizer {
    let (beta1, beta2) = ours.betas;
    let config = nn::AdamW {
        beta1,
        beta2,
        wd: ours.weight_decay,
        eps: ours.eps,
        amsgrad: false,
    };
    config.build(vars, ours.lr).expect("libtorch's AdamW")
}

/// Our token ids in a libtorch tensor.
///
/// # Shapes
/// `ids`: `[batch, tokens]`; returns the same, int64.
fn ids_to_tch(ids: &Tensor<i64>) -> tch::Tensor {
    let dims: Vec<i64> = ids.sizes().iter().map(|&d| d as i64).collect();
    tch::Tensor::from_slice(&ids.to_vec()).view(&dims[..])
}

/// Both sides of the comparison, each with its model, its optimizer and the batch.
struct Sides {
    ours: AttentionModel,
    our_adamw: AdamW,
    ids: Tensor<i64>,
    /// Where our steps run: a pool of one thread.
    one_thread: rayon::ThreadPool,
    theirs: TorchModel,
    their_adamw: nn::Optimizer,
    tch_ids: tch::Tensor,
}

/// What the first step gave on each side.
struct Check {
    our_loss: f32,
    their_loss: f32,
    /// The largest absolute difference between an updated parameter of ours and PyTorch's.
    param_diff: f32,
    /// That parameter's name.
    param_diff_of: &'static str,
}

impl Sides {
    /// The chapter's model and first batch, drawn as `training_run` draws them (the
    /// parameters, the sequence its heatmaps show, the first batch), and PyTorch's copy.
    fn chapter_start() -> Sides {
        let task = Task::TWO_BACK;
        manual_seed(SEED);
        let ours = AttentionModel::new();
        let _shown = task.draw_batch(1);
        let ids = task.draw_batch(BATCH);
        let theirs = TorchModel::new(&ours);
        let our_adamw = AdamW::new(LR);
        let their_adamw = libtorch_adamw(&theirs.vars, &our_adamw);
        Sides {
            tch_ids: ids_to_tch(&ids),
            one_thread: rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .expect("a thread pool"),
            ours,
            our_adamw,
            ids,
            theirs,
            their_adamw,
        }
    }

    /// One step of ours; returns its loss.
    fn our_step(&mut self) -> f32 {
        let Sides {
            ours,
            our_adamw,
            ids,
            one_thread,
            ..
        } = self;
        one_thread.install(|| train_step(ours, our_adamw, Task::TWO_BACK, ids))
    }

    /// One step of PyTorch's; returns its loss.
    fn their_step(&mut self) -> f32 {
        self.theirs.train_step(&mut self.their_adamw, &self.tch_ids)
    }

    /// One step of each; panics unless the losses agree.
    fn check(&mut self) -> Check {
        let (our_loss, their_loss) = (self.our_step(), self.their_step());
        // A few units in the last place at most: the chapter prints PyTorch's losses.
        assert!(
            (our_loss - their_loss).abs() <= 1e-6 * their_loss.abs(),
            "the first step's loss: ours {our_loss}, PyTorch's {their_loss}"
        );
        let variables = self.theirs.vars.variables();
        let (param_diff, param_diff_of) = self
            .ours
            .named_parameters()
            .into_iter()
            .map(|(name, p)| {
                (largest_difference(p, &from_tch(&variables[name])), name)
            })
            .fold((0.0, ""), |worst, d| if d.0 > worst.0 { d } else { worst });
        Check {
            our_loss,
            their_loss,
            param_diff,
            param_diff_of,
        }
    }

    /// Times [`STEPS_PER_TURN`] steps of each side per round, in one order or the reverse,
    /// after one turn each of warm-up, for `seconds` and at least [`MIN_ROUNDS`] rounds.
    /// Returns each round's [ours, PyTorch's] in seconds.
    fn time_in_turns(&mut self, seconds: f64) -> Vec<[f64; 2]> {
        turn(|| self.our_step());
        turn(|| self.their_step());
        let start = Instant::now();
        let mut rounds = Vec::new();
        while rounds.len() < MIN_ROUNDS || start.elapsed().as_secs_f64() < seconds {
            rounds.push(if rounds.len() % 2 == 0 {
                let ours = turn(|| self.our_step());
                [ours, turn(|| self.their_step())]
            } else {
                let theirs = turn(|| self.their_step());
                [turn(|| self.our_step()), theirs]
            });
        }
        rounds
    }
}

/// The largest absolute difference between two tensors of one shape.
fn largest_difference(a: &Tensor, b: &Tensor) -> f32 {
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

/// The median of some numbers.
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[mid]
    } else {
        (xs[mid - 1] + xs[mid]) / 2.0
    }
}

/// Seconds that [`STEPS_PER_TURN`] calls of `step` take.
fn turn(mut step: impl FnMut() -> f32) -> f64 {
    let start = Instant::now();
    for _ in 0..STEPS_PER_TURN {
        black_box(step());
    }
    start.elapsed().as_secs_f64()
}

fn main() {
    let seconds: f64 = std::env::args()
        .nth(1)
        .map_or(3.0, |s| s.parse().expect("SECONDS: a number of seconds"));
    shared::set_device(shared::Device::Cpu);
    tch::set_num_threads(1);
    let mut sides = Sides::chapter_start();
    let check = sides.check();
    let rounds = sides.time_in_turns(seconds);
    let per_step_us = |i: usize| {
        median(rounds.iter().map(|t| t[i]).collect()) / STEPS_PER_TURN as f64 * 1e6
    };
    println!(
        "{{\"rounds\": {}, \"steps_per_turn\": {STEPS_PER_TURN}, \"ours_us\": {:.1}, \"torch_us\": {:.1}, \"ratio\": {:.3}, \"loss_ours\": {:.9}, \"loss_torch\": {:.9}, \"param_diff\": {:.3e}, \"param_diff_of\": \"{}\"}}",
        rounds.len(),
        per_step_us(0),
        per_step_us(1),
        median(rounds.iter().map(|t| t[0] / t[1]).collect()),
        check.our_loss,
        check.their_loss,
        check.param_diff,
        check.param_diff_of,
    );
}
