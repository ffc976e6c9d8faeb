//! One test per exercise, named after it, so `cargo test -p ch18-linear-attention --features
//! exercise NAME` checks just that function. Each checks what PyTorch printed (through the
//! reference output) or the formula, and properties a hard-coded answer cannot satisfy;
//! none calls another exercise.

use course::narrative::{lines_after, step_text};
use course::printed;
use course::quiet_proptest::{holds, quiet};
use proptest::prelude::*;
use shared::testing::max_abs_diff;
use shared::{Tensor, eye, manual_seed, randn, stack, zeros};

use ch15_modern_layer::gate::sigmoid;
use ch18_linear_attention::chunked_delta::{gated_delta_chunked, ut_transform};
use ch18_linear_attention::delta::delta_write;
use ch18_linear_attention::feature_map::elu_plus_one;
use ch18_linear_attention::gates::{cumsum, exp, l2_normalize, log_sigmoid};
use ch18_linear_attention::memory::{Memory, numbers_kept, state_pays_after};
use ch18_linear_attention::parallel::linear_parallel;
use ch18_linear_attention::recurrent::linear_recurrent;
use ch18_linear_attention::setup::{CHUNK, D, T};

const PYTORCH: &str =
    include_str!("../../../reference/expected/ch18-linear-attention.txt");

#[test]
fn exercise_linear_recurrent_prints_pytorchs_rows() {
    manual_seed(18);
    let (q, k, v) = (randn(&[T, D]), randn(&[T, D]), randn(&[T, D]));
    let ours = linear_recurrent(&q, &k, &v);
    assert_eq!(ours.sizes(), &[T, D]);
    let step =
        step_text(PYTORCH, "Linear attention in three forms").expect("the step");
    let header = "recurrent, rows 0-2, first 6 features:";
    let rows = ours.slice(0, ..3).slice(1, ..6).to_string();
    if let Err(e) =
        printed::compare(&rows, lines_after(step, header, 3).expect("the rows"))
    {
        panic!("your rows 0-2 are not what PyTorch printed:\n{e}");
    }
    let last = ours.get(-1).slice(0, ..6).to_string();
    let printed = lines_after(step, "the last row, parallel and recurrent:", 2)
        .and_then(|rows| rows.lines().nth(1))
        .expect("the recurrent form's last row");
    if let Err(e) = printed::compare(&last, printed) {
        panic!("your last row is not what PyTorch printed:\n{e}");
    }
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
    let step =
        step_text(PYTORCH, "Gated DeltaNet, token by token and chunk by chunk")
            .expect("the step");
    let rows = ours.slice(0, ..3).slice(1, ..6).to_string();
    let header = "chunked (chunks of 16), rows 0-2, first 6 features:";
    if let Err(e) =
        printed::compare(&rows, lines_after(step, header, 3).expect("the rows"))
    {
        panic!("your chunked rows 0-2 are not what PyTorch printed:\n{e}");
    }
    let last = ours.get(-1).slice(0, ..6).to_string();
    let printed = lines_after(step, "the last row, recurrent and chunked:", 2)
        .and_then(|rows| rows.lines().nth(1))
        .expect("the chunked form's last row");
    if let Err(e) = printed::compare(&last, printed) {
        panic!("your chunked last row is not what PyTorch printed:\n{e}");
    }
}

/// Where `f` fails to invert `I + A` for a chunk of `c` tokens drawn from `seed` (unit
/// keys of 8 features, gates as the chapter draws them): `T · (I + A)` must be the
/// identity within 1e-5, and `T` lower triangular.
fn inverse_broken(
    f: &dyn Fn(&Tensor, &Tensor, &Tensor) -> Tensor,
    seed: u64,
    c: usize,
) -> Option<String> {
    manual_seed(seed);
    let k = l2_normalize(&randn(&[c, 8]));
    let beta = sigmoid(&randn(&[c]));
    let g = cumsum(&log_sigmoid(&(randn(&[c]) + 3.0)));
    let decay = exp(&(g.unsqueeze(1) - g.unsqueeze(0))).tril(0);
    let k_beta = &k * beta.unsqueeze(1);
    let a = (k_beta.matmul(&k.t()) * &decay).tril(-1);
    let t = f(&k_beta, &k, &decay);
    let input = format!("a chunk of {c} tokens drawn from seed {seed}");
    if t.sizes() != [c, c] {
        return Some(format!(
            "{input}: your T has shape {:?}, not [{c}, {c}]",
            t.sizes()
        ));
    }
    let above = t.triu(1).abs().max().item();
    if above != 0.0 {
        return Some(format!("{input}: your T has {above} above its diagonal"));
    }
    let gap = max_abs_diff(&t.matmul(&(a + eye(c))), &eye(c));
    (gap > 1e-5)
        .then(|| format!("{input}: T (I + A) is {gap} away from the identity"))
}

/// Where `f` differs from the parallel form on `t` tokens of `d` features (values of
/// `d_v`) drawn from `seed`, by more than float32 rounding (1e-5 of the outputs' size).
fn recurrence_broken(
    f: &dyn Fn(&Tensor, &Tensor, &Tensor) -> Tensor,
    seed: u64,
    (t, d, d_v): (usize, usize, usize),
) -> Option<String> {
    manual_seed(seed);
    let (q, k, v) = (randn(&[t, d]), randn(&[t, d]), randn(&[t, d_v]));
    let ours = f(&q, &k, &v);
    let input = format!("{t} tokens of {d} features, values of {d_v}, seed {seed}");
    if ours.sizes() != [t, d_v] {
        return Some(format!(
            "{input}: your outputs have shape {:?}, not [{t}, {d_v}]",
            ours.sizes()
        ));
    }
    let parallel = linear_parallel(&q, &k, &v);
    let scale = parallel.abs().max().item().max(1.0);
    let gap = max_abs_diff(&ours, &parallel);
    (gap > 1e-5 * scale).then(|| {
        format!("{input}: your outputs are up to {gap} from the parallel form's (of size {scale})")
    })
}

/// Where `f` breaks the delta rule's promises on a state, a unit key and two values drawn
/// from `seed`: after writing `first`, then `second` with β = 1, the key reads `second`; a
/// direction at right angles to the key reads what it read before; written with β, the key
/// reads `(1 − β) first + β second`.
fn delta_broken(
    f: &dyn Fn(&Tensor, &Tensor, &Tensor, f32) -> Tensor,
    seed: u64,
    (d_k, d_v, beta): (usize, usize, f32),
) -> Option<String> {
    manual_seed(seed);
    let state = randn(&[d_v, d_k]);
    let key = l2_normalize(&randn(&[d_k]));
    let (first, second) = (randn(&[d_v]), randn(&[d_v]));
    let input = format!("a {d_v} × {d_k} state, seed {seed}");
    let once = f(&state, &key, &first, 1.0);
    let twice = f(&once, &key, &second, 1.0);
    let gap = max_abs_diff(&twice.matmul(&key), &second);
    if gap > 1e-5 {
        return Some(format!(
            "{input}: a key written twice with β = 1 reads back {gap} away from the newer value"
        ));
    }
    let other = randn(&[d_k]);
    let other = &other - other.dot(&key).item() * &key;
    let gap = max_abs_diff(&twice.matmul(&other), &state.matmul(&other));
    if gap > 1e-4 {
        return Some(format!(
            "{input}: a direction at right angles to the key reads {gap} away from what it \
             read before the writes"
        ));
    }
    let partial = f(&once, &key, &second, beta);
    let mixed = (1.0 - beta) * &first + beta * &second;
    let gap = max_abs_diff(&partial.matmul(&key), &mixed);
    (gap > 1e-5).then(|| {
        format!(
            "{input}: written with β = {beta}, the key reads {gap} away from (1 − β) old + β new"
        )
    })
}

/// Where `f` is not the fewest tokens after which the KV cache holds more numbers than the
/// state, as the chapter's `numbers_kept` counts them.
fn crossing_broken(
    f: &dyn Fn(usize, usize) -> usize,
    d_k: usize,
    d_v: usize,
) -> Option<String> {
    let n = f(d_k, d_v);
    let more = |n: usize| {
        let kept = numbers_kept(n, d_k, d_v);
        kept.kv_cache > kept.state
    };
    let input = format!(
        "d_k = {d_k}, d_v = {d_v} (a state of {} numbers)",
        d_k * d_v
    );
    if !more(n) {
        return Some(format!(
            "{input}: after your {n} tokens the cache holds {} numbers, not more than the state",
            numbers_kept(n, d_k, d_v).kv_cache
        ));
    }
    (n > 0 && more(n - 1)).then(|| {
        format!(
            "{input}: the cache already holds more after {} tokens ({} numbers), fewer than your {n}",
            n - 1,
            numbers_kept(n - 1, d_k, d_v).kv_cache
        )
    })
}

proptest! {
    #![proptest_config(quiet(16))]

    /// `T · (I + A) = I` for any chunk: the transform inverts the matrix it is given, and
    /// is lower triangular with ones on its diagonal.
    #[test]
    fn exercise_ut_transform_inverts(seed in 0u64..1000, c in 1usize..17) {
        holds(inverse_broken(&ut_transform, seed, c))?;
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
        holds(recurrence_broken(&linear_recurrent, seed, (t, d, d_v)))?;
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
        holds(delta_broken(&delta_write, seed, (d_k, d_v, beta)))?;
    }

    /// Any head: the first length at which the cache holds more numbers than the state.
    #[test]
    fn exercise_state_pays_after_the_crossing(d_k in 1usize..300, d_v in 1usize..300) {
        holds(crossing_broken(&state_pays_after, d_k, d_v))?;
    }
}

#[test]
fn exercise_state_pays_after_a_head_of_128() {
    // 128 + 128 numbers a token against a state of 128 · 128: the cache is larger from the
    // 65th token on.
    let got = state_pays_after(128, 128);
    assert_eq!(
        got, 65,
        "d_k = d_v = 128: the cache outgrows the state after 65 tokens, you say {got}"
    );
}

/// A plausible mistake for each exercise, each caught: the recurrent state read before the
/// token is added (a token that does not see itself), linear attention's write in place of
/// the delta rule's, `T = I − A` (the first term of the inverse only), and the crossing
/// where the two counts are equal rather than past it.
#[test]
fn wrong_answers_fail_the_exercise_tests() {
    let reads_first = |q: &Tensor, k: &Tensor, v: &Tensor| {
        let (fq, fk) = (elu_plus_one(q), elu_plus_one(k));
        let mut s = zeros(&[k.size(1), v.size(1)]);
        let mut z = zeros(&[k.size(1)]);
        let mut out = Vec::new();
        for t in 0..q.size(0) {
            let query = fq.get(t);
            let denominator = query.matmul(&z) + 1e-6;
            out.push(query.matmul(&s) / denominator);
            s += fk.get(t).outer(&v.get(t));
            z += fk.get(t);
        }
        stack(&out, 0)
    };
    assert!(
        recurrence_broken(&reads_first, 1, (6, 4, 3)).is_some(),
        "the linear_recurrent tests accept a token that does not see itself"
    );
    let adds = |s: &Tensor, k: &Tensor, v: &Tensor, beta: f32| s + beta * v.outer(k);
    assert!(
        delta_broken(&adds, 1, (4, 3, 0.5)).is_some(),
        "the delta_write tests accept linear attention's write"
    );
    let first_term = |k_beta: &Tensor, k: &Tensor, decay: &Tensor| {
        eye(k.size(0)) - (k_beta.matmul(&k.t()) * decay).tril(-1)
    };
    assert!(
        inverse_broken(&first_term, 1, 6).is_some(),
        "the ut_transform tests accept I − A"
    );
    let where_equal = |d_k: usize, d_v: usize| d_k * d_v / (d_k + d_v);
    assert!(
        crossing_broken(&where_equal, 128, 128).is_some(),
        "the state_pays_after tests accept the length where the counts are equal"
    );
}

/// The chapter's count of a head's memory, which the crossing is checked against, prints
/// PyTorch's table; and the cache grows with the tokens, the state does not.
#[test]
fn numbers_kept_prints_pytorchs_table() {
    let printed =
        step_text(PYTORCH, "The state against a KV cache").expect("the step");
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

proptest! {
    #![proptest_config(quiet(32))]

    #[test]
    fn numbers_kept_counts_the_cache_and_the_state(
        tokens in 0usize..100_000,
        d_k in 1usize..300,
        d_v in 1usize..300,
    ) {
        let kept = numbers_kept(tokens, d_k, d_v);
        prop_assert_eq!(kept, Memory { kv_cache: tokens * (d_k + d_v), state: d_k * d_v }, "the count of a head's memory is wrong");
    }
}
