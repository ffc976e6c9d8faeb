//! One timing of the real model, for `perf/scripts/bench-real-model.sh` (which runs it in
//! turns with transformers): load, a prefill of `--prompt-tokens` tokens, then
//! `--new-tokens` greedy decoding steps with the KV cache, on the threads of
//! `RAYON_NUM_THREADS`. Prints one line of JSON: seconds for each phase and the peak
//! resident memory.
//!
//! ```text
//! cargo run -p attention-perf --features real-model --example speed_real_model -- \
//!     --prompt-tokens 128 --new-tokens 128
//! ```

use std::time::Instant;

use ch20_real_model::generate::as_batch;
use ch20_real_model::loader::{default_model_path, load};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // As the chapter's binary runs: on a thread of the rayon pool.
    course::process::on_pool_thread(run);
}

fn run() {
    let (prompt_tokens, new_tokens) =
        (arg("--prompt-tokens", 128), arg("--new-tokens", 128));
    let start = Instant::now();
    let m = load(&default_model_path(), |_, _| {})
        .expect("the model (bash scripts/get-model.sh)");
    let load_s = start.elapsed().as_secs_f64();
    // The same prompt as the benchmark script gives transformers: ids 1000, 1001, ...
    let ids: Vec<u32> = (0..prompt_tokens as u32).map(|i| 1000 + i).collect();
    let start = Instant::now();
    let (logits, mut caches) = m.model.forward(&as_batch(&ids), &m.recipe);
    let mut next = logits.select(0, 0).select(0, -1).argmax().item() as u32;
    let prefill_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    for step in 0..new_tokens {
        let position = prompt_tokens + step;
        let logits =
            m.model
                .step(&as_batch(&[next]), position, &mut caches, &m.recipe);
        next = logits.select(0, 0).argmax().item() as u32;
    }
    let decode_s = start.elapsed().as_secs_f64();
    println!(
        "{{\"load_s\": {load_s:.4}, \"prefill_s\": {prefill_s:.4}, \"decode_s\": {decode_s:.4}, \"peak_rss\": {}, \"threads\": {}}}",
        attention_perf::peak_memory::peak_bytes().unwrap_or(0),
        rayon::current_num_threads()
    );
}
