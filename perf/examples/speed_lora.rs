//! One timing of chapter 23's training step on SmolLM2, for `perf/scripts/bench-lora.sh`
//! (which runs it in turns with PyTorch + PEFT): the recipe of the chapter's committed
//! adapter (`--train`'s defaults: rank 8 and alpha 16 beside all seven projections of every
//! layer, batches of 8 training sums drawn and padded as the chapter does, AdamW), on the
//! threads of `RAYON_NUM_THREADS`. `--warmup` steps (default 1, at least 1: the first
//! timed step starts where the last of them ends) run untimed, then `--steps` steps
//! (default 3) are timed one by one, each from the end of the step before it, its batch's
//! drawing and encoding included. Prints one line of JSON: the wall and processor seconds
//! of each timed step, the peak resident memory and the threads.
//!
//! ```text
//! cargo run --release -p attention-perf --features lora --example speed_lora -- --steps 3
//! ```

use std::time::Instant;

use ch11_training::adamw::AdamW;
use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch20_real_model::loader::{default_model_path, load};
use ch23_lora::adapter::{Adapter, LoraConfig};
use ch23_lora::examples::Encoder;
use ch23_lora::setup::{ALPHA, BATCH, HELD_OUT, LR, RANK, SEED, TRAIN_TARGETS};
use ch23_lora::task::split;
use ch23_lora::train::{Schedule, run};

use attention_perf::command_line::number as arg;

/// The processor time (user and system) of this process and all its threads so far, in
/// seconds, from `/proc/self/stat` (Linux), whose fields 14 and 15 count clock ticks of
/// 1/100 s (`USER_HZ`, 100 on every Linux the course runs on).
fn processor_seconds() -> f64 {
    let stat =
        std::fs::read_to_string("/proc/self/stat").expect("Linux's /proc/self/stat");
    // The name in parentheses may hold spaces: the fields are counted after it.
    let after_name = &stat[stat.rfind(')').expect("a process name") + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // Field 3 (the state) is the first after the name, so field n is at n - 3.
    let ticks = |n: usize| fields[n - 3].parse::<f64>().expect("a count of ticks");
    (ticks(14) + ticks(15)) / 100.0
}

fn main() {
    // As the chapter's binary runs: on a thread of the rayon pool.
    course::process::on_pool_thread(timed);
}

fn timed() {
    let (warmup, steps) = (arg("--warmup", 1).max(1), arg("--steps", 3));
    let loaded = load(&default_model_path(), |_, _| {})
        .expect("the model (bash scripts/get-model.sh)");
    let encoder = Encoder::new(&loaded).expect("the model's tokenizer");
    shared::manual_seed(SEED);
    let sums = split(HELD_OUT).expect("the sums");
    let config = LoraConfig::new(RANK, ALPHA, &TRAIN_TARGETS).expect("the recipe");
    let mut adapter = Adapter::new(&loaded.model, &config).expect("the adapters");
    let mut optimizer = AdamW::new(LR);
    let schedule = Schedule::Linear {
        lr: LR,
        steps: warmup + steps,
    };
    // The end of each step: its wall clock and the processor time so far.
    let mut ends = Vec::new();
    run::<PytorchOrder>(
        &loaded.model,
        &loaded.recipe,
        &mut adapter,
        &encoder,
        &sums.train,
        &mut optimizer,
        (warmup + steps, BATCH, schedule),
        |_, _| ends.push((Instant::now(), processor_seconds())),
    )
    .expect("the training steps");
    let timed = &ends[warmup as usize - 1..];
    let wall: Vec<f64> = timed
        .windows(2)
        .map(|w| (w[1].0 - w[0].0).as_secs_f64())
        .collect();
    let processor: Vec<f64> = timed.windows(2).map(|w| w[1].1 - w[0].1).collect();
    println!(
        "{}",
        serde_json::json!({
            "wall_s": wall,
            "processor_s": processor,
            "peak_rss": attention_perf::peak_memory::peak_bytes().unwrap_or(0),
            "threads": rayon::current_num_threads(),
        })
    );
}
