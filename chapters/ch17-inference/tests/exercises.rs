//! One test per exercise, named after it, so `cargo test -p ch17-inference --features
//! exercise NAME` checks just that function. Each checks what PyTorch printed (through the
//! reference output) or the definition, and properties a hard-coded answer cannot
//! satisfy; none calls another exercise.

use ch15_modern_layer::TinyModel;
use course::narrative::step_text;
use course::quiet_proptest::{holds, quiet};
use proptest::prelude::*;
use shared::{Tensor, cat, manual_seed, randn};

use ch17_inference::absorbed_scores::absorbed_scores;
use ch17_inference::accept_or_replace::accept_or_replace;
use ch17_inference::expected_tokens::expected_tokens_per_pass;
use ch17_inference::mla_bytes::mla_bytes_per_token;
use ch17_inference::setup::{CONFIG, DRAFT_LAYERS, K, N_SPECULATE, PROMPT, recipe};
use ch17_inference::speculative_sampling::speculate_sampled;
use ch17_inference::write::Write;
use ch17_inference::write_target::write_target;

const PYTORCH: &str = include_str!("../../../reference/expected/ch17-inference.txt");

/// An answer to `write_target`.
type WriteTarget = dyn Fn(usize, usize, Option<usize>) -> Write;

/// Where `f` decides one of five cases wrongly: no block yet, a full last block (alone or
/// shared), a last block with room of its own, a last block with room that another
/// sequence reads.
fn cases_broken(f: &WriteTarget) -> Option<String> {
    [
        (0, 4, None, Write::NewBlock, "no block yet"),
        (4, 4, Some(1), Write::NewBlock, "the last block is full"),
        (
            8,
            4,
            Some(3),
            Write::NewBlock,
            "the last block is full, and shared",
        ),
        (5, 4, Some(1), Write::InPlace, "room in a block of its own"),
        (
            6,
            4,
            Some(2),
            Write::CopyOnWrite,
            "room in a block another sequence reads",
        ),
    ]
    .into_iter()
    .find_map(|(t, block, refs, want, case)| {
        let got = f(t, block, refs);
        (got != want).then(|| {
            format!(
                "position {t}, blocks of {block}, {refs:?} readers of the last block ({case}): \
                 you decide {got:?}, it should be {want:?}"
            )
        })
    })
}

/// Where `f` breaks the block count of a sequence written alone for `fork_at` tokens (one
/// block per `block_size` tokens), then forked and grown by `grow` tokens (one copy if the
/// fork fell inside a block, none otherwise).
fn growth_broken(
    f: &WriteTarget,
    block_size: usize,
    fork_at: usize,
    grow: usize,
) -> Option<String> {
    let input = format!(
        "blocks of {block_size}, forked after {fork_at} tokens, grown by {grow}"
    );
    let mut blocks = 0;
    let mut refs = None;
    for position in 0..fork_at {
        match f(position, block_size, refs) {
            Write::NewBlock => {
                blocks += 1;
                refs = Some(1);
            }
            Write::InPlace => {}
            Write::CopyOnWrite => {
                return Some(format!(
                    "{input}: a copy at position {position}, before anything is shared"
                ));
            }
        }
    }
    if blocks != fork_at.div_ceil(block_size) {
        return Some(format!(
            "{input}: {blocks} blocks for the first {fork_at} tokens, not {}",
            fork_at.div_ceil(block_size)
        ));
    }
    refs = Some(2); // forked: the last block is shared
    let mut copies = 0;
    for position in fork_at..fork_at + grow {
        match f(position, block_size, refs) {
            Write::NewBlock => refs = Some(1),
            Write::CopyOnWrite => {
                copies += 1;
                refs = Some(1);
            }
            Write::InPlace if refs != Some(1) => {
                return Some(format!(
                    "{input}: position {position} written in place into a block another \
                     sequence reads"
                ));
            }
            Write::InPlace => {}
        }
    }
    let want = usize::from(!fork_at.is_multiple_of(block_size));
    (copies != want).then(|| format!("{input}: {copies} copies, not {want}"))
}

#[test]
fn exercise_write_target_decides_each_case() {
    if let Some(broken) = cases_broken(&write_target) {
        panic!("{broken}");
    }
}

proptest! {
    #![proptest_config(quiet(64))]

    /// A sequence growing alone takes exactly one block per `block_size` tokens; a
    /// sequence forked inside a block copies it on its first write and never again.
    #[test]
    fn exercise_write_target_counts_blocks_and_copies(
        block_size in 1usize..8,
        fork_at in 1usize..20,
        grow in 1usize..20,
    ) {
        holds(growth_broken(&write_target, block_size, fork_at, grow))?;
    }
}

/// Copy-on-write checked before the block boundary: a shared, full last block copied
/// instead of a fresh one taken. Caught.
#[test]
fn wrong_answers_fail_the_write_target_tests() {
    let copy_first = |t: usize, block_size: usize, refs: Option<usize>| match refs {
        None => Write::NewBlock,
        Some(refs) if refs > 1 => Write::CopyOnWrite,
        Some(_) if t.is_multiple_of(block_size) => Write::NewBlock,
        Some(_) => Write::InPlace,
    };
    assert!(
        cases_broken(&copy_first).is_some()
            || growth_broken(&copy_first, 4, 8, 3).is_some(),
        "the write_target tests accept a copy of a full shared block"
    );
}

#[test]
fn exercise_mla_bytes_per_token_matches_the_reference_ledger() {
    let text =
        step_text(PYTORCH, "Cache per token, bfloat16").expect("the ledger step");
    let line = |name: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .expect("the model's line");
        line[line.rfind("= ").unwrap() + 2..line.rfind(" bytes").unwrap()]
            .parse()
            .unwrap()
    };
    for (name, layers) in [("DeepSeek-V2 ", 60), ("DeepSeek-V3 ", 61)] {
        let (ours, printed) = (mla_bytes_per_token(layers, 512, 64, 2), line(name));
        assert_eq!(
            ours, printed,
            "{name}: PyTorch's ledger prints {printed} bytes a token, you count {ours}"
        );
    }
}

/// Where `f` breaks the latent cache's count: per layer `latent_dim + rope_dim` values of
/// `bytes` bytes, nothing per head.
fn latent_bytes_broken(
    f: &dyn Fn(usize, usize, usize, usize) -> u64,
    layers: usize,
    latent: usize,
    rope: usize,
    bytes: usize,
) -> Option<String> {
    let want = (layers * (latent + rope) * bytes) as u64;
    let got = f(layers, latent, rope, bytes);
    (got != want).then(|| {
        format!(
            "{layers} layers, a latent of {latent}, a RoPE key of {rope}, {bytes} bytes a \
             value: you count {got} bytes a token, the cache holds {want}"
        )
    })
}

proptest! {
    #![proptest_config(quiet(128))]

    /// Linear in the layers and the bytes per value, and the latent and the RoPE key
    /// count alike.
    #[test]
    fn exercise_mla_bytes_per_token_is_linear(
        layers in 1usize..100,
        latent in 1usize..1024,
        rope in 0usize..128,
        bytes in 1usize..5,
    ) {
        holds(latent_bytes_broken(&mla_bytes_per_token, layers, latent, rope, bytes))?;
    }
}

/// The RoPE key counted once per model instead of once per layer: caught.
#[test]
fn wrong_answers_fail_the_mla_bytes_tests() {
    let rope_once = |layers: usize, latent: usize, rope: usize, bytes: usize| {
        ((layers * latent + rope) * bytes) as u64
    };
    assert!(
        latent_bytes_broken(&rope_once, 60, 512, 64, 2).is_some(),
        "the mla_bytes tests accept the RoPE key counted once"
    );
}

// ---------------------------------------------------------------------------------------
// accept_or_replace

/// An answer to `accept_or_replace`.
type AcceptOrReplace = dyn Fn(&Tensor, &Tensor, i64) -> Option<i64>;

/// Where a token drafted from `q` and passed through `f` does not come out as often as
/// the target's `p` says, over 20 000 draws from seed 5: a frequency more than five
/// standard deviations of a frequency over 20 000 draws (at most 0.018) from `p`.
fn distribution_broken(
    f: &AcceptOrReplace,
    p: [f32; 4],
    q: [f32; 4],
) -> Option<String> {
    manual_seed(5);
    let (pt, qt) = (
        Tensor::from_vec(p.to_vec(), &[1, 4]),
        Tensor::from_vec(q.to_vec(), &[1, 4]),
    );
    let n = 20_000;
    let mut counts = [0usize; 4];
    for _ in 0..n {
        let drafted = qt.multinomial(1, false).item();
        let out = f(&pt, &qt, drafted).unwrap_or(drafted);
        counts[out as usize] += 1;
    }
    let seen: Vec<f64> = counts.iter().map(|&c| c as f64 / n as f64).collect();
    (0..4)
        .find(|&x| (seen[x] - p[x] as f64).abs() >= 0.018)
        .map(|x| {
            format!(
                "draft q = {q:?}, target p = {p:?}: over {n} draws the tokens came out with \
             frequencies {seen:.3?}; token {x} should come out with frequency {}",
                p[x]
            )
        })
}

const TARGET_AND_DRAFT: [([f32; 4], [f32; 4]); 3] = [
    ([0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]),
    ([0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25]),
    ([0.0, 0.5, 0.5, 0.0], [0.5, 0.0, 0.0, 0.5]),
];

/// Speculative sampling's rule leaves the target's distribution: a token drawn from the
/// draft's `q`, kept or replaced, comes out as often as the target's `p` says.
#[test]
fn exercise_accept_or_replace_samples_the_targets_distribution() {
    for (p, q) in TARGET_AND_DRAFT {
        if let Some(broken) = distribution_broken(&accept_or_replace, p, q) {
            panic!("{broken}");
        }
    }
}

/// With the draws in the documented order, the chapter's passes are PyTorch's.
#[test]
fn exercise_accept_or_replace_prints_pytorchs_passes() {
    manual_seed(2026);
    let target = TinyModel::new(CONFIG);
    manual_seed(2026);
    let mut draft = TinyModel::new(CONFIG);
    draft.layers.truncate(DRAFT_LAYERS);
    let prompt = Tensor::from_vec(PROMPT.to_vec(), &[1, PROMPT.len()]);
    manual_seed(17);
    let sampled =
        speculate_sampled(&draft, &target, &prompt, N_SPECULATE, K, &recipe());
    let step = step_text(
        PYTORCH,
        "Speculative sampling, 3 draft tokens per target pass (manual_seed(17))",
    )
    .expect("the step");
    for (i, round) in sampled.rounds.iter().enumerate() {
        let line = format!(
            "pass {}: draft {:?}, kept {}, wrote {:?}",
            i + 1,
            round.drafted,
            round.accepted,
            round.target
        );
        assert!(
            step.lines().any(|l| l == line),
            "PyTorch printed\n{step}\nyour pass {} is\n{line}",
            i + 1
        );
    }
}

/// The replacement drawn from the target's `p` instead of the leftover `max(0, p − q)`:
/// tokens the draft favours come out too often. Caught.
#[test]
fn wrong_answers_fail_the_accept_or_replace_tests() {
    let from_p = |p: &Tensor, q: &Tensor, drafted: i64| {
        let ratio = p.select(1, drafted).item() / q.select(1, drafted).item();
        if shared::rand(&[1]).item() < ratio {
            None
        } else {
            Some(p.multinomial(1, false).item())
        }
    };
    assert!(
        TARGET_AND_DRAFT
            .iter()
            .any(|&(p, q)| distribution_broken(&from_p, p, q).is_some()),
        "the accept_or_replace tests accept a replacement drawn from p"
    );
}

// ---------------------------------------------------------------------------------------
// expected_tokens_per_pass

/// Where `f` breaks the expectation over the pass's outcomes: it keeps exactly `n < k`
/// drafted tokens with probability `α^n (1 − α)` and all `k` with `α^k`, and writes one
/// token more than it keeps. Compared within 1e-9 of the expectation's size.
fn expectation_broken(
    f: &dyn Fn(f64, usize) -> f64,
    acceptance: f64,
    k: usize,
) -> Option<String> {
    let kept_exactly = |n: usize| {
        if n < k {
            acceptance.powi(n as i32) * (1.0 - acceptance)
        } else {
            acceptance.powi(k as i32)
        }
    };
    let want: f64 = (0..=k).map(|n| (n + 1) as f64 * kept_exactly(n)).sum();
    let got = f(acceptance, k);
    ((got - want).abs() > 1e-9 * want).then(|| {
        format!(
            "acceptance {acceptance}, {k} drafted tokens: you expect {got} tokens a pass; \
             the pass's outcomes give {want}"
        )
    })
}

#[test]
fn exercise_expected_tokens_per_pass_of_simple_drafts() {
    // A draft that is never kept still yields the target's own token; a draft of none too.
    for (acceptance, k, want) in
        [(0.0, 3, 1.0), (0.5, 0, 1.0), (0.5, 1, 1.5), (0.5, 2, 1.75)]
    {
        let got = expected_tokens_per_pass(acceptance, k);
        assert!(
            (got - want).abs() < 1e-12,
            "acceptance {acceptance}, {k} drafted: {want} tokens a pass, you expect {got}"
        );
    }
}

proptest! {
    #![proptest_config(quiet(128))]

    /// Any acceptance below 1 and any draft length: the expectation over the outcomes.
    #[test]
    fn exercise_expected_tokens_per_pass_is_the_expectation(
        acceptance in 0.0f64..0.999,
        k in 0usize..20,
    ) {
        holds(expectation_broken(&expected_tokens_per_pass, acceptance, k))?;
    }
}

/// The target's own token forgotten: caught.
#[test]
fn wrong_answers_fail_the_expected_tokens_tests() {
    let drafted_only = |acceptance: f64, k: usize| -> f64 {
        (1..=k).map(|i| acceptance.powi(i as i32)).sum()
    };
    assert!(
        expectation_broken(&drafted_only, 0.5, 3).is_some(),
        "the expected_tokens_per_pass tests accept a pass that forgets the target's token"
    );
}

// ---------------------------------------------------------------------------------------
// absorbed_scores

/// An answer to `absorbed_scores`.
type AbsorbedScores =
    dyn Fn(&Tensor, &Tensor, &Tensor, &Tensor, &Tensor, f32) -> Tensor;

/// Where `f` differs from the naive path's scores on inputs drawn from `seed`: every
/// latent expanded into each head's key, `W_UK c`, beside the shared RoPE key, and the
/// dot product with `[q_nope ; q_pe]`, scaled. The two group the same sums differently,
/// so they are compared within float32's rounding of a sum of `nope · latent + rope`
/// products of numbers of order 1.
fn naive_broken(
    f: &AbsorbedScores,
    seed: u64,
    (cached, nope, latent_dim): (usize, usize, usize),
) -> Option<String> {
    manual_seed(seed);
    let (heads, rope) = (3, 2);
    let q_nope = randn(&[1, heads, 1, nope]);
    let q_pe = randn(&[1, heads, 1, rope]);
    let w_uk = randn(&[heads, nope, latent_dim]);
    let latent = randn(&[1, cached, latent_dim]);
    let rope_key = randn(&[1, cached, rope]);
    let scale = 0.5;
    let k_nope = latent.unsqueeze(1).matmul(&w_uk.transpose(1, 2)); // [1, heads, cached, nope]
    let k_pe = rope_key.unsqueeze(1).expand([1, heads, cached, rope]);
    let q = cat(&[&q_nope, &q_pe], -1);
    let k = cat(&[&k_nope, &k_pe], -1);
    let want = q.matmul(&k.transpose(2, 3)) * scale;
    let got = f(&q_nope, &q_pe, &w_uk, &latent, &rope_key, scale);
    let input = format!(
        "{cached} cached tokens, {nope} features without position, a latent of {latent_dim}, seed {seed}"
    );
    if got.sizes() != want.sizes() {
        return Some(format!(
            "{input}: your scores have shape {:?}, the naive path's {:?}",
            got.sizes(),
            want.sizes()
        ));
    }
    let tolerance = 4.0
        * (nope * latent_dim + rope) as f32
        * f32::EPSILON
        * (nope * latent_dim) as f32;
    let gap = shared::testing::max_abs_diff(&got, &want);
    (gap > tolerance).then(|| {
        format!(
            "{input}: your scores are {gap} from the naive path's (rounding allows {tolerance:e})"
        )
    })
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Any sizes: the absorbed scores are the naive path's, to rounding.
    #[test]
    fn exercise_absorbed_scores_are_the_naive_scores(
        seed in 0u64..1000,
        cached in 1usize..8,
        nope in 1usize..6,
        latent in 1usize..10,
    ) {
        holds(naive_broken(&absorbed_scores, seed, (cached, nope, latent)))?;
    }
}

/// Two mistakes, each caught: the shared RoPE key's scores left out, and `W_UK` applied
/// from the other side (its transpose, on a square `W_UK`).
#[test]
fn wrong_answers_fail_the_absorbed_scores_tests() {
    let no_rope = |q_nope: &Tensor,
                   _q_pe: &Tensor,
                   w_uk: &Tensor,
                   latent: &Tensor,
                   _k: &Tensor,
                   scale: f32| {
        q_nope
            .matmul(w_uk)
            .matmul(&latent.unsqueeze(1).transpose(2, 3))
            * scale
    };
    let transposed = |q_nope: &Tensor,
                      q_pe: &Tensor,
                      w_uk: &Tensor,
                      latent: &Tensor,
                      rope_key: &Tensor,
                      scale: f32| {
        let q_latent = q_nope.matmul(&w_uk.transpose(1, 2));
        (q_latent.matmul(&latent.unsqueeze(1).transpose(2, 3))
            + q_pe.matmul(&rope_key.unsqueeze(1).transpose(2, 3)))
            * scale
    };
    let wrong: [(&str, &AbsorbedScores); 2] = [
        ("the RoPE key's scores left out", &no_rope),
        ("W_UK transposed", &transposed),
    ];
    for (name, answer) in wrong {
        assert!(
            naive_broken(answer, 3, (4, 5, 5)).is_some(),
            "the absorbed_scores tests accept a wrong answer: {name}"
        );
    }
}
