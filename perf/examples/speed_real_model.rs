//! One timing of the real model, for `perf/scripts/bench-real-model.sh` (which runs it in
//! turns with transformers): load, a prefill of `--prompt-tokens` tokens, then
//! `--new-tokens` greedy decoding steps with the KV cache, on the threads of
//! `RAYON_NUM_THREADS`; then, for each length of `--decode-at` (default `40,2000`), a
//! prefill of that many tokens and `--new-tokens` decoding steps after it, so that the
//! speed with a long cache stands beside the speed with a short one. Prints one line of
//! JSON: seconds for each phase, the decoding speeds, the peak resident memory, and the
//! resident memory after the last decoding step.
//!
//! `--weights quantised` runs the model with its matrices kept in the file's quantised
//! blocks (chapter 20's `quantised`), its one-row products by `attention_perf::quantised`'s
//! version 2 (the chapter's bits); `--weights quantised-listing` by the chapter's own
//! listing. `--weights float32` (the default) as the chapter's
//! narrative runs it: every weight packed for the prompts' products once, at load
//! (`pack_weights`; counted in the load), so that a prefill reads the packed copies instead
//! of packing as it goes. `--pack-each-prompt` leaves them unpacked, so that each prefill
//! packs every weight again (half the memory: a single prompt, as `--prompt` and `--chat`
//! put through the model, packs each weight once either way).
//!
//! ```text
//! cargo run -p attention-perf --features real-model --example speed_real_model -- \
//!     --prompt-tokens 128 --new-tokens 128 --decode-at 40,2000 --weights quantised
//! ```

use std::time::Instant;

use ch20_real_model::generate::{Decoder, as_batch};
use ch20_real_model::growing_cache::growing;
use ch20_real_model::loader::{Loaded, default_model_path, load, load_quantised};
use ch20_real_model::model::pack_weights;

use attention_perf::command_line::{flag, number as arg, value};
use attention_perf::quantised::v2_same_bits;

/// The lengths of `--decode-at`, comma-separated (`none` for none).
fn lengths(name: &str, default: &[usize]) -> Vec<usize> {
    match value(name) {
        Some(list) => list.split(',').filter_map(|v| v.parse().ok()).collect(),
        None => default.to_vec(),
    }
}

fn main() {
    // As the chapter's binary runs: on a thread of the rayon pool.
    course::process::on_pool_thread(run);
}

/// Seconds of a prefill of `prompt_tokens` tokens (ids 1000, 1001, ..., as the benchmark
/// script gives transformers), then of `new_tokens` greedy steps after it; and the resident
/// memory after the last step (the caches still held).
fn prefill_and_decode<M: Decoder>(
    m: &Loaded<M>,
    prompt_tokens: usize,
    new_tokens: usize,
) -> (f64, f64, u64) {
    let ids: Vec<u32> = (0..prompt_tokens as u32).map(|i| 1000 + i).collect();
    let start = Instant::now();
    let (logits, caches) = m.model.prefill(&as_batch(&ids), &m.recipe);
    let mut next = logits.select(0, 0).argmax().item() as u32;
    let prefill_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut caches = growing(&caches, &m.recipe, prompt_tokens + new_tokens);
    for s in 0..new_tokens {
        let position = prompt_tokens + s;
        let logits =
            m.model
                .step(&as_batch(&[next]), position, &mut caches, &m.recipe);
        next = logits.select(0, 0).argmax().item() as u32;
    }
    let decode_s = start.elapsed().as_secs_f64();
    let resident = attention_perf::peak_memory::resident_bytes().unwrap_or(0);
    (prefill_s, decode_s, resident)
}

fn run() {
    let weights = value("--weights").unwrap_or_else(|| "float32".into());
    let start = Instant::now();
    let path = default_model_path();
    let expect = "the model (bash scripts/get-model.sh)";
    match weights.as_str() {
        "quantised" => {
            let mut m = load_quantised(&path).expect(expect);
            m.model = m.model.with_one_row_product(v2_same_bits::times_row);
            timed(m, start, &weights)
        }
        "quantised-listing" => {
            timed(load_quantised(&path).expect(expect), start, &weights)
        }
        _ => {
            let m = load(&path, |_, _| {}).expect(expect);
            let each_prompt = flag("--pack-each-prompt");
            let _kept = (!each_prompt).then(|| pack_weights(&m.model));
            let name = if each_prompt {
                "float32, packed for each prompt"
            } else {
                &weights
            };
            timed(m, start, name)
        }
    }
}

/// The timings of a model loaded since `start`, printed as one line of JSON.
fn timed<M: Decoder>(m: Loaded<M>, start: Instant, weights: &str) {
    let (prompt_tokens, new_tokens) =
        (arg("--prompt-tokens", 128), arg("--new-tokens", 128));
    let load_s = start.elapsed().as_secs_f64();
    let (prefill_s, decode_s, rss_decoding) =
        prefill_and_decode(&m, prompt_tokens, new_tokens);
    let at: Vec<String> = lengths("--decode-at", &[40, 2000])
        .into_iter()
        .map(|cached| {
            let (_, seconds, _) = prefill_and_decode(&m, cached, new_tokens);
            format!("\"{cached}\": {:.2}", new_tokens as f64 / seconds)
        })
        .collect();
    println!(
        "{{\"weights\": \"{weights}\", \"load_s\": {load_s:.4}, \"prefill_s\": {prefill_s:.4}, \"decode_s\": {decode_s:.4}, \"decode_at\": {{{}}}, \"peak_rss\": {}, \"rss_decoding\": {}, \"threads\": {}}}",
        at.join(", "),
        attention_perf::peak_memory::peak_bytes().unwrap_or(0),
        rss_decoding,
        rayon::current_num_threads()
    );
}
