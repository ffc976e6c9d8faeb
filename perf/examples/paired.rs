//! The flash kernel and libtorch's `scaled_dot_product_attention(is_causal=True)` timed in
//! turns, call by call, on one thread (feature `tch`): the time ratio of the two measured
//! so that a slow spell of a shared machine hits both sides alike. The kernel without the
//! mask takes its turn too, for the ratio of causal to full attention, and so does the
//! kernel on two threads, for the speed-up of the second core.
//!
//! Then the same for training: the forward with its log-sum-exp and the backward pass
//! ([`flash_attention_backward`]) against SDPA's forward and backward through libtorch's
//! autograd, both on one thread, and ours on two; and the gradients' error against
//! libtorch's in double precision (the math path of SDPA in `f64`), ours and SDPA's.
//!
//! ```text
//! cargo run --release -p attention-perf --features tch --example paired -- 1024 4096
//! ```
//!
//! Each round times one call of each, in one order or the reverse, and takes their ratios;
//! prints one JSON object per length with the medians over the rounds
//! (`CH09_PAIRED_ROUNDS`, default 15), the forward's first, then one with `"pass":
//! "forward+backward"`. `perf/scripts/bench-vs-torch.sh` runs it after criterion.

#[path = "common/turns.rs"]
mod turns;

use attention_perf::pinned::pool;
use ch09_flash_attention::backward::{FlashGrads, flash_attention_backward};
use ch09_flash_attention::kernel::{flash_attention, flash_attention_lse};
use shared::backend::torch::{from_tch, to_tch};
use shared::tch::{self, Device, Kind};
use shared::{Tensor, manual_seed, randn};
use turns::{median, seconds, sizes_and_rounds};

fn main() {
    let (ns, rounds) = sizes_and_rounds();
    let (one, two) = (pool(1), pool(2));
    for n in ns {
        manual_seed(0);
        let shape = [1, 12, n, 64];
        let (q, k, v): (Tensor, Tensor, Tensor) =
            (randn(&shape), randn(&shape), randn(&shape));
        let (tq, tk, tv) = (
            to_tch(&q, Device::Cpu),
            to_tch(&k, Device::Cpu),
            to_tch(&v, Device::Cpu),
        );
        let flash = || one.install(|| flash_attention(&q, &k, &v, true));
        let flash_full = || one.install(|| flash_attention(&q, &k, &v, false));
        let flash_two = || two.install(|| flash_attention(&q, &k, &v, true));
        let sdpa = || {
            tch::Tensor::scaled_dot_product_attention(
                &tq,
                &tk,
                &tv,
                None::<tch::Tensor>,
                0.0,
                true,
                None,
                false,
            )
        };
        // Warm-up: first calls fault pages in and fill caches.
        seconds(flash);
        seconds(sdpa);
        seconds(flash_full);
        seconds(flash_two);
        // Per round: [causal flash, SDPA, full flash, causal flash on two threads] in
        // seconds, in one order or the reverse.
        let times: Vec<[f64; 4]> = (0..rounds)
            .map(|round| {
                if round % 2 == 0 {
                    let a = seconds(flash);
                    let b = seconds(sdpa);
                    let c = seconds(flash_full);
                    [a, b, c, seconds(flash_two)]
                } else {
                    let d = seconds(flash_two);
                    let c = seconds(flash_full);
                    let b = seconds(sdpa);
                    [seconds(flash), b, c, d]
                }
            })
            .collect();
        let column = |i: usize| times.iter().map(|t| t[i]).collect::<Vec<f64>>();
        let ratio =
            |i: usize, j: usize| median(times.iter().map(|t| t[i] / t[j]).collect());
        let fastest = |i: usize| column(i).into_iter().fold(f64::INFINITY, f64::min);
        println!(
            "{{\"n\": {n}, \"rounds\": {rounds}, \"flash_ms\": {:.3}, \"sdpa_ms\": {:.3}, \"ratio\": {:.3}, \"fastest_flash_ms\": {:.3}, \"fastest_sdpa_ms\": {:.3}, \"full_ms\": {:.3}, \"causal_over_full\": {:.3}, \"two_threads_ms\": {:.3}, \"speedup\": {:.3}}}",
            median(column(0)) * 1e3,
            median(column(1)) * 1e3,
            ratio(0, 1),
            fastest(0) * 1e3,
            fastest(1) * 1e3,
            median(column(2)) * 1e3,
            ratio(0, 2),
            median(column(3)) * 1e3,
            ratio(0, 3)
        );
        train(n, rounds, (&q, &k, &v), (&one, &two));
    }
}

/// `F.scaled_dot_product_attention(q, k, v, is_causal=True)`.
fn sdpa(q: &tch::Tensor, k: &tch::Tensor, v: &tch::Tensor) -> tch::Tensor {
    tch::Tensor::scaled_dot_product_attention(
        q,
        k,
        v,
        None::<tch::Tensor>,
        0.0,
        true,
        None,
        false,
    )
}

/// SDPA's forward and backward through autograd, as a training step runs them: leaf
/// tensors `q`, `k`, `v` in `kind`, the output, and the gradients for `grad_out` (as
/// `out.backward(grad_out)` gives them).
///
/// # Shapes
/// All `[1, 12, n, 64]`; returns the gradients of `q`, `k`, `v`.
fn sdpa_train(
    qkv: [&tch::Tensor; 3],
    grad_out: &tch::Tensor,
    kind: Kind,
) -> Vec<tch::Tensor> {
    let leaves = qkv.map(|t| t.to_kind(kind).detach().set_requires_grad(true));
    let out = sdpa(&leaves[0], &leaves[1], &leaves[2]);
    let loss = (out * grad_out.to_kind(kind)).sum(kind);
    tch::Tensor::run_backward(&[loss], &leaves, false, false)
}

/// Ours, forward (with the log-sum-exp) and backward, for the output's gradient `grad_out`.
///
/// # Shapes
/// All `[1, 12, n, 64]`.
fn flash_train(
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    grad_out: &Tensor,
) -> FlashGrads {
    let (out, lse) = flash_attention_lse(q, k, v, true);
    flash_attention_backward((q, k, v), (&out, &lse), grad_out, true)
}

/// The largest error of `got` against `want` relative to `want`'s largest entry.
fn error(got: &Tensor, want: &Tensor) -> f64 {
    let scale = want.to_vec().iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let diff = got
        .to_vec()
        .iter()
        .zip(want.to_vec())
        .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
    f64::from(diff / scale)
}

/// The training step (causal forward and backward) timed in turns: ours on one thread,
/// SDPA through autograd on one, ours on two; then both gradients against SDPA's in
/// double precision. Prints one JSON object.
///
/// # Shapes
/// `q`, `k`, `v`: `[1, 12, n, 64]`.
fn train(
    n: usize,
    rounds: usize,
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    (one, two): (&rayon::ThreadPool, &rayon::ThreadPool),
) {
    let grad_out = randn(q.sizes());
    let tch_in = [q, k, v].map(|t| to_tch(t, Device::Cpu));
    let tch_grad = to_tch(&grad_out, Device::Cpu);
    let tch_in = [&tch_in[0], &tch_in[1], &tch_in[2]];
    let flash = || one.install(|| flash_train((q, k, v), &grad_out));
    let flash_two = || two.install(|| flash_train((q, k, v), &grad_out));
    let sdpa = || sdpa_train(tch_in, &tch_grad, Kind::Float);
    seconds(flash);
    seconds(sdpa);
    seconds(flash_two);
    // Per round: [flash, SDPA, flash on two threads], in one order or the reverse.
    let times: Vec<[f64; 3]> = (0..rounds)
        .map(|round| {
            if round % 2 == 0 {
                let a = seconds(flash);
                let b = seconds(sdpa);
                [a, b, seconds(flash_two)]
            } else {
                let c = seconds(flash_two);
                let b = seconds(sdpa);
                [seconds(flash), b, c]
            }
        })
        .collect();
    let column = |i: usize| times.iter().map(|t| t[i]).collect::<Vec<f64>>();
    let ratio =
        |i: usize, j: usize| median(times.iter().map(|t| t[i] / t[j]).collect());
    // The gradients' errors against double precision, of q, k and v in turn.
    let exact: Vec<Tensor> = sdpa_train(tch_in, &tch_grad, Kind::Double)
        .iter()
        .map(from_tch)
        .collect();
    let ours = flash();
    let theirs: Vec<Tensor> = sdpa().iter().map(from_tch).collect();
    let ours = [&ours.q, &ours.k, &ours.v].map(|g| g.clone());
    let errors = |grads: &[Tensor]| -> Vec<f64> {
        grads.iter().zip(&exact).map(|(g, e)| error(g, e)).collect()
    };
    let (ours_errors, sdpa_errors) = (errors(&ours), errors(&theirs));
    let worst = |errors: &[f64]| errors.iter().copied().fold(0.0, f64::max);
    let (ours_error, sdpa_error) = (worst(&ours_errors), worst(&sdpa_errors));
    let list = |errors: &[f64]| {
        let items: Vec<String> = errors.iter().map(|e| format!("{e:.3e}")).collect();
        items.join(", ")
    };
    println!(
        "{{\"n\": {n}, \"pass\": \"forward+backward\", \"rounds\": {rounds}, \"flash_ms\": {:.3}, \"sdpa_ms\": {:.3}, \"ratio\": {:.3}, \"two_threads_ms\": {:.3}, \"speedup\": {:.3}, \"grad_error\": {:.3e}, \"sdpa_grad_error\": {:.3e}, \"error_ratio\": {:.3}, \"grad_errors_qkv\": [{}], \"sdpa_grad_errors_qkv\": [{}]}}",
        median(column(0)) * 1e3,
        median(column(1)) * 1e3,
        ratio(0, 1),
        median(column(2)) * 1e3,
        ratio(0, 2),
        ours_error,
        sdpa_error,
        ours_error / sdpa_error,
        list(&ours_errors),
        list(&sdpa_errors)
    );
}
