//! One test per exercise, named after it, so `cargo test -p ch18-linear-attention --features
//! exercise NAME` checks just that function. Each checks what PyTorch printed (through the
//! reference output) or the formula, and properties a hard-coded answer cannot satisfy;
//! none calls another exercise.

use course::narrative::step_text;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::max_abs_diff;
use shared::{eye, manual_seed, randn};

use ch15_modern_layer::gate::sigmoid;
use ch18_linear_attention::chunked_delta::{gated_delta_chunked, ut_transform};
use ch18_linear_attention::delta::delta_write;
use ch18_linear_attention::gates::{cumsum, exp, l2_normalize, log_sigmoid};
use ch18_linear_attention::memory::{Memory, numbers_kept};
use ch18_linear_attention::parallel::linear_parallel;
use ch18_linear_attention::recurrent::linear_recurrent;
use ch18_linear_attention::setup::{CHUNK, D, T};

const PYTORCH: &str = include_str!("../../../reference/expected/ch18-linear-attention.txt");

#[test]
fn exercise_linear_recurrent_prints_pytorchs_rows() {
    manual_seed(18);
    let (q, k, v) = (randn(&[T, D]), randn(&[T, D]), randn(&[T, D]));
    let ours = linear_recurrent(&q, &k, &v);
    assert_eq!(ours.sizes(), &[T, D]);
    let printed = step_text(PYTORCH, "Linear attention in three forms").expect("the step");
    let rows = ours.slice(0, ..3).slice(1, ..6).to_string();
    let last = ours.get(-1).slice(0, ..6).to_string();
    let recurrent = printed
        .split("recurrent, rows 0-2, first 6 features:\n")
        .nth(1)
        .expect("the recurrent rows");
    assert!(
        recurrent.starts_with(&rows),
        "PyTorch printed\n{printed}\nyour rows 0-2 are\n{rows}"
    );
    assert!(
        printed.ends_with(&last),
        "PyTorch printed\n{printed}\nyour last row is\n{last}"
    );
}

#[test]
fn exercise_ut_transform_prints_pytorchs_chunked_rows() {
    manual_seed(18);
    for _ in 0..3 {
        randn(&[T, D]);
    }
    let (q, k, v) = (randn(&[T, D]), randn(&[T, D]), randn(&[T, D]));
    let (q, k) = (l2_normalize(&q), l2_normalize(&k));
    let beta = sigmoid(&randn(&[T]));
    let log_alpha = log_sigmoid(&(randn(&[T]) + 3.0));
    let ours = gated_delta_chunked(&q, &k, &v, &log_alpha, &beta, CHUNK);
    let step = "Gated DeltaNet, token by token and chunk by chunk";
    let printed = step_text(PYTORCH, step).expect("the step");
    let rows = ours.slice(0, ..3).slice(1, ..6).to_string();
    let last = ours.get(-1).slice(0, ..6).to_string();
    assert!(
        printed.contains(&rows) && printed.contains(&last),
        "PyTorch printed\n{printed}\nyour chunked rows 0-2 are\n{rows}\nand the last\n{last}"
    );
}

proptest! {
    #![proptest_config(quiet(16))]

    /// `T · (I + A) = I` for any chunk: the transform inverts the matrix it is given, and
    /// is lower triangular with ones on its diagonal.
    #[test]
    fn exercise_ut_transform_inverts(seed in 0u64..1000, c in 1usize..17) {
        manual_seed(seed);
        let k = l2_normalize(&randn(&[c, 8]));
        let beta = sigmoid(&randn(&[c]));
        let g = cumsum(&log_sigmoid(&(randn(&[c]) + 3.0)));
        let decay = exp(&(g.unsqueeze(1) - g.unsqueeze(0))).tril(0);
        let k_beta = &k * beta.unsqueeze(1);
        let a = (k_beta.matmul(&k.t()) * &decay).tril(-1);
        let t = ut_transform(&k_beta, &k, &decay);
        prop_assert_eq!(t.sizes(), &[c, c][..]);
        prop_assert_eq!(t.triu(1).abs().max().item(), 0.0);
        let product = t.matmul(&(a + eye(c)));
        prop_assert!(max_abs_diff(&product, &eye(c)) <= 1e-5, "gap {}", max_abs_diff(&product, &eye(c)));
    }

    /// The recurrent form is the parallel form, reordered: for any inputs they agree to
    /// within float32 rounding (a hard-coded answer cannot follow the inputs).
    #[test]
    fn exercise_linear_recurrent_agrees_with_the_parallel_form(
        seed in 0u64..1000,
        t in 1usize..40,
        d in 1usize..9,
        d_v in 1usize..9,
    ) {
        manual_seed(seed);
        let (q, k, v) = (randn(&[t, d]), randn(&[t, d]), randn(&[t, d_v]));
        let ours = linear_recurrent(&q, &k, &v);
        prop_assert_eq!(ours.sizes(), &[t, d_v][..]);
        let parallel = linear_parallel(&q, &k, &v);
        let scale = parallel.abs().max().item().max(1.0);
        prop_assert!(max_abs_diff(&ours, &parallel) <= 1e-5 * scale, "gap {}", max_abs_diff(&ours, &parallel));
    }

    /// With a unit-length key and β = 1, whatever the state held, the key reads back the
    /// newest value; a key at right angles to it reads what it read before; with β the
    /// key reads `(1 − β) old + β new`.
    #[test]
    fn exercise_delta_write_keeps_only_the_newer_value(
        seed in 0u64..1000,
        d_k in 2usize..9,
        d_v in 1usize..9,
        beta in 0.0f32..1.0,
    ) {
        manual_seed(seed);
        let state = randn(&[d_v, d_k]);
        let key = l2_normalize(&randn(&[d_k]));
        let (first, second) = (randn(&[d_v]), randn(&[d_v]));
        let once = delta_write(&state, &key, &first, 1.0);
        let twice = delta_write(&once, &key, &second, 1.0);
        prop_assert!(max_abs_diff(&twice.matmul(&key), &second) <= 1e-5, "the key should read the newer value");
        // A direction at right angles to the key: what it read is untouched.
        let other = randn(&[d_k]);
        let other = &other - other.dot(&key).item() * &key;
        prop_assert!(max_abs_diff(&twice.matmul(&other), &state.matmul(&other)) <= 1e-4);
        let partial = delta_write(&once, &key, &second, beta);
        let mixed = (1.0 - beta) * &first + beta * &second;
        prop_assert!(max_abs_diff(&partial.matmul(&key), &mixed) <= 1e-5, "with beta the key reads a mix");
    }

    /// The cache grows with the tokens, the state does not.
    #[test]
    fn exercise_numbers_kept_counts_the_cache_and_the_state(
        tokens in 0usize..100_000,
        d_k in 1usize..300,
        d_v in 1usize..300,
    ) {
        let kept = numbers_kept(tokens, d_k, d_v);
        prop_assert_eq!(kept, Memory { kv_cache: tokens * (d_k + d_v), state: d_k * d_v });
    }
}

#[test]
fn exercise_numbers_kept_prints_pytorchs_table() {
    let printed = step_text(PYTORCH, "The state against a KV cache").expect("the step");
    for n in [1024, 32768, 262144] {
        let kept = numbers_kept(n, 128, 128);
        let line = format!(
            "  n = {n:6}: KV cache {:9}, state {}",
            kept.kv_cache, kept.state
        );
        assert!(
            printed.contains(&line),
            "PyTorch printed\n{printed}\nyou have\n{line}"
        );
    }
}
