//! The attention of one decoding step over a long cache, timed part by part: the real
//! model's first attention layer, over 30 caches (one per layer, as the model holds them)
//! of `--cached` random keys and values, on the threads of `RAYON_NUM_THREADS`. Prints the
//! milliseconds per token (all 30 layers) of the scores `q·Kᵀ`, of the attention weights
//! (the scores scaled and softmaxed: chapter 20's `grouped_weights`) and of the weights
//! times the values, or with `--whole` of the whole step's attention alone (`attend`: the
//! new key and value written into the cache, then all three), the median of `--rounds`
//! rounds of `--steps` steps.
//!
//! `--hot` reads the first layer's cache every time, so that it stays in the processor's
//! caches: the difference from a run without it is the cost of bringing the cache from
//! memory. `--back-to-back` times the values' product alone, one product straight after
//! the other, which shows what the second thread gives when it never waits to be woken.
//!
//! ```text
//! cargo run -p attention-perf --features real-model --example speed_long_cache -- \
//!     --cached 2000 [--hot | --back-to-back | --whole]
//! ```

use std::time::Instant;

use ch14_generation::KvCache;
use ch20_real_model::growing_cache::{GrowingCache, attend, grouped_weights};
use ch20_real_model::loader::{default_model_path, load};
use shared::Tensor;

use attention_perf::command_line::{flag, number as arg};

fn main() {
    // As the chapter's binary runs: on a thread of the rayon pool.
    course::process::on_pool_thread(run);
}

/// Milliseconds per token of each part, one round.
#[derive(Default)]
struct Round {
    scores: f64,
    weights: f64,
    values: f64,
    attend: f64,
}

fn run() {
    let m = load(&default_model_path(), |_, _| {})
        .expect("the model (bash scripts/get-model.sh)");
    let (cached, steps, rounds) = (
        arg("--cached", 2000),
        arg("--steps", 10),
        arg("--rounds", 5),
    );
    let (hot, back_to_back) = (flag("--hot"), flag("--back-to-back"));
    // The whole attention only: the parts' views would share the buffers, and a shared
    // buffer is copied before the new key is written into it.
    let whole = flag("--whole") && !hot;
    let a = &m.model.layers[0].attn;
    let (kv_heads, head_dim) = (a.n_kv_heads, a.head_dim);
    let layers = m.model.layers.len();
    shared::manual_seed(0);
    // Room for every step's new key, so that no cache grows while it is timed.
    let room = cached + rounds * steps + 1;
    let mut caches: Vec<GrowingCache> = (0..layers)
        .map(|_| {
            let shape = [1, kv_heads, cached, head_dim];
            let kv = KvCache {
                keys: shared::randn(&shape),
                values: shared::randn(&shape),
                window: None,
            };
            GrowingCache::new(&kv, 0, room)
        })
        .collect();
    let q: Tensor = shared::randn(&[1, a.n_heads, 1, head_dim]);
    let (k, v): (Tensor, Tensor) = (
        shared::randn(&[1, kv_heads, 1, head_dim]),
        shared::randn(&[1, kv_heads, 1, head_dim]),
    );
    let weights: Tensor = shared::randn(&[1, a.n_heads, 1, cached]);
    let grouped = |t: &Tensor, cols: usize| {
        t.reshape([1, kv_heads, a.n_heads / kv_heads, 1, cols])
    };
    // The scores, the weights and the values' product over the first `cached` positions.
    let time_parts = |cache: &GrowingCache, round: &mut Round| {
        let keys = cache.keys().narrow(2, 0, cached);
        let values = cache.values().narrow(2, 0, cached).unsqueeze(2);
        if back_to_back {
            let start = Instant::now();
            let _ = grouped(&weights, cached).matmul(&values);
            round.values += start.elapsed().as_secs_f64();
            return;
        }
        let start = Instant::now();
        let _ = grouped(&q, head_dim).matmul(&keys.unsqueeze(2).transpose(-2, -1));
        round.scores += start.elapsed().as_secs_f64();
        let start = Instant::now();
        let _ = grouped_weights(a, &q, &keys, &m.recipe);
        round.weights += start.elapsed().as_secs_f64();
        let start = Instant::now();
        let _ = grouped(&weights, cached).matmul(&values);
        round.values += start.elapsed().as_secs_f64();
    };
    let mut results = Vec::new();
    for _ in 0..rounds {
        let mut round = Round::default();
        for _ in 0..steps {
            for layer in 0..layers {
                let cache = &mut caches[if hot { 0 } else { layer }];
                if whole {
                    let start = Instant::now();
                    let _ = attend(a, &q, &k, &v, cache, &m.recipe);
                    round.attend += start.elapsed().as_secs_f64();
                } else {
                    time_parts(cache, &mut round);
                }
            }
        }
        results.push(round);
    }
    let median = |part: fn(&Round) -> f64| {
        let mut ms: Vec<f64> = results
            .iter()
            .map(|r| part(r) * 1e3 / steps as f64)
            .collect();
        ms.sort_by(f64::total_cmp);
        ms[ms.len() / 2]
    };
    println!(
        "{{\"cached\": {cached}, \"hot\": {hot}, \"back_to_back\": {back_to_back}, \"whole\": {whole}, \"threads\": {}, \"ms_per_token\": {{\"scores\": {:.2}, \"weights\": {:.2}, \"values\": {:.2}, \"attend\": {:.2}}}}}",
        rayon::current_num_threads(),
        median(|r| r.scores),
        median(|r| r.weights),
        median(|r| r.values),
        median(|r| r.attend),
    );
}
