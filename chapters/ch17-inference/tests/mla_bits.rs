//! Both MLA paths against PyTorch at full precision, for a few seeds: the bits of
//! PyTorch's outputs and caches are in `tests/fixtures/mla_bits.json`, written on an
//! Intel CPU with AVX-512 (the reference platform) by the command in its `made_by` field.
//!
//! - the naive path equals PyTorch's naive path bit for bit, and the absorbed path
//!   PyTorch's absorbed path: each takes its products in the reference script's order.
//!   That holds wherever the products add in the reference platform's order: on our own
//!   kernels on every machine, on libtorch where `course::platform` finds it reproduces that
//!   platform; elsewhere each value is held to 1e-6 of its tensor's largest magnitude;
//! - the two paths are not equal to each other: the absorbed path adds the same terms in
//!   another order (`(q W_UK) c` against `q (W_UK c)`), so they agree within 1e-5, the
//!   bound the chapter's property test states.

use ch17_inference::mla::Mla;
use ch17_inference::setup::{MLA, MLA_TOKENS};
use course::platform::{Platform, platform};
use serde_json::Value;
use shared::testing::ulps;
use shared::{Tensor, cat, manual_seed, randn};

const FIXTURE: &str = include_str!("fixtures/mla_bits.json");

/// The fixture's values under `key`, stored as float32 bit patterns.
fn values_of(case: &Value, key: &str) -> Vec<f32> {
    case[key]
        .as_array()
        .expect("an array of bit patterns")
        .iter()
        .map(|v| {
            f32::from_bits(u32::try_from(v.as_u64().expect("a u32")).expect("a u32"))
        })
        .collect()
}

/// Asserts `ours` is PyTorch's `theirs`: bit for bit on the reference platform, else within
/// 1e-6 of the largest magnitude; a failure names the value, both numbers and their ulps.
fn assert_pytorchs(ours: &Tensor, theirs: &[f32], what: &str, platform: &Platform) {
    let scale = theirs.iter().fold(0.0f32, |m, t| m.max(t.abs()));
    for (i, (o, t)) in ours.to_vec().into_iter().zip(theirs).enumerate() {
        let close = !platform.is_reference() && (o - t).abs() <= 1e-6 * scale;
        assert!(
            o.to_bits() == t.to_bits() || close,
            "{what}[{i}]: ours {o:e}, PyTorch {t:e} ({} ulps apart; {platform})",
            ulps(o, *t)
        );
    }
    assert_eq!(ours.numel(), theirs.len(), "{what}: sizes");
}

#[test]
fn each_mla_path_matches_pytorch_bits() {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("valid JSON");
    assert!(
        fixture["made_by"]
            .as_str()
            .is_some_and(|s| s.contains("--fixture")),
        "the fixture says how it was made"
    );
    assert!(
        fixture["torch"]
            .as_str()
            .is_some_and(|v| v.starts_with("2.13.0")),
        "made by PyTorch 2.13.0"
    );
    let cases = fixture["cases"].as_array().expect("cases");
    assert!(cases.len() >= 3, "a few seeds");
    let mut paths_differ = 0;
    for case in cases {
        let seed = case["seed"].as_u64().expect("a seed");
        manual_seed(seed);
        let mla = Mla::new(MLA);
        let x = randn(&[1, MLA_TOKENS, MLA.d_model]);
        let naive = mla.forward_naive(&x);
        let mut cache = None;
        let steps: Vec<Tensor> = (0..MLA_TOKENS)
            .map(|t| mla.step_absorbed(&x.narrow(1, t, 1), t, &mut cache))
            .collect();
        let absorbed = cat(&steps, 1);
        let cache = cache.expect("tokens cached");

        let platform = platform();
        for (ours, key) in [
            (&cache.latent, "latent"),
            (&cache.rope_key, "rope_key"),
            (&naive, "naive"),
            (&absorbed, "absorbed"),
        ] {
            let what = format!("{key}, seed {seed}");
            assert_pytorchs(ours, &values_of(case, key), &what, &platform);
        }

        let gap = (&naive - &absorbed).abs().max().item();
        assert!(
            gap < 1e-5,
            "the paths agree within 1e-5, seed {seed}: gap {gap}"
        );
        paths_differ += usize::from(naive.to_vec() != absorbed.to_vec());
    }
    // Not a requirement of either path, but what reassociation does: PyTorch's two paths
    // differ somewhere for every seed of the fixture, and so do ours.
    let pytorch_differ = cases
        .iter()
        .filter(|c| values_of(c, "naive") != values_of(c, "absorbed"))
        .count();
    assert_eq!(paths_differ, pytorch_differ);
}
