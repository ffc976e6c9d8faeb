//! Both MLA paths against PyTorch at full precision, for a few seeds: the bits of
//! PyTorch's outputs and caches are in `tests/fixtures/mla_bits.json`, written on an
//! Intel CPU with AVX-512 by the command in its `made_by` field.
//!
//! - the naive path equals PyTorch's naive path bit for bit, and the absorbed path
//!   PyTorch's absorbed path: each takes its products in the reference script's order;
//! - the two paths are not equal to each other: the absorbed path adds the same terms in
//!   another order (`(q W_UK) c` against `q (W_UK c)`), so they agree within 1e-5, the
//!   bound the chapter's property test states.

use ch17_inference::mla::Mla;
use ch17_inference::narrative::{MLA, MLA_TOKENS};
use serde_json::Value;
use shared::{Tensor, cat, manual_seed, randn};

const FIXTURE: &str = include_str!("fixtures/mla_bits.json");

/// The fixture's bit patterns under `key`.
fn bits_of(case: &Value, key: &str) -> Vec<u32> {
    case[key]
        .as_array()
        .expect("an array of bit patterns")
        .iter()
        .map(|v| u32::try_from(v.as_u64().expect("a u32")).expect("a u32"))
        .collect()
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec().iter().map(|f| f.to_bits()).collect()
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

        assert_eq!(
            bits(&cache.latent),
            bits_of(case, "latent"),
            "latent, seed {seed}"
        );
        assert_eq!(
            bits(&cache.rope_key),
            bits_of(case, "rope_key"),
            "RoPE key, seed {seed}"
        );
        assert_eq!(
            bits(&naive),
            bits_of(case, "naive"),
            "naive path, seed {seed}"
        );
        assert_eq!(
            bits(&absorbed),
            bits_of(case, "absorbed"),
            "absorbed path, seed {seed}"
        );

        let gap = (&naive - &absorbed).abs().max().item();
        assert!(
            gap < 1e-5,
            "the paths agree within 1e-5, seed {seed}: gap {gap}"
        );
        paths_differ += usize::from(bits(&naive) != bits(&absorbed));
    }
    // Not a requirement of either path, but what reassociation does: PyTorch's two paths
    // differ somewhere for every seed of the fixture, and so do ours.
    let pytorch_differ = cases
        .iter()
        .filter(|c| bits_of(c, "naive") != bits_of(c, "absorbed"))
        .count();
    assert_eq!(paths_differ, pytorch_differ);
}
