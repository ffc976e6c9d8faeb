//! RoPE against PyTorch at full precision, for several seeds: the bits of PyTorch's outputs
//! are in `tests/fixtures/rope_bits.json`, written by
//! `reference/ch12_positions.py --fixture tests/fixtures/rope_bits.json` (see its header).
//!
//! - the input `randn(1, 2, 6, 8)` is bit-equal (the generator);
//! - interleaved pairs (Meta's complex-number code) are bit-equal: `polar` uses the C
//!   library's `cosf`/`sinf` in PyTorch as here, and the complex product rounds in the same
//!   order;
//! - half-split pairs (Hugging Face) are within one unit in the last place of the rotated
//!   pair's length (the scale of the value; see `half_split_scale`): PyTorch's `cos`/`sin` of a
//!   tensor are Intel MKL's, ours are correctly rounded, and the two differ in the last bit
//!   for a few percent of the angles.

use ch12_positions::{rope_half_split, rope_interleaved, rotate_half};
use serde_json::Value;
use shared::{Tensor, manual_seed, randn};

const FIXTURE: &str = include_str!("fixtures/rope_bits.json");

fn floats(case: &Value, key: &str) -> Vec<f32> {
    case[key]
        .as_array()
        .expect("an array of bit patterns")
        .iter()
        .map(|v| f32::from_bits(v.as_i64().expect("an int32") as i32 as u32))
        .collect()
}

/// The length of the pair each element belongs to, `√(x_i² + x_{i±d/2}²)`: the size of
/// the rotated point (a rotation keeps it), against which the rounding error of the
/// half-split output is measured. Where `x·cos` and `rotate_half(x)·sin` cancel, the error
/// stays the size of those terms, not of their small sum.
fn half_split_scale(x: &Tensor) -> Vec<f32> {
    let partner = rotate_half(x).to_vec();
    x.to_vec()
        .iter()
        .zip(&partner)
        .map(|(a, b)| a.hypot(*b))
        .collect()
}

/// The spacing of `f32` values at `v`: one unit in the last place.
fn ulp(v: f32) -> f32 {
    let v = v.abs();
    f32::from_bits(v.to_bits() + 1) - v
}

#[test]
fn rope_matches_pytorch_bits() {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("valid JSON");
    let cases = fixture["cases"].as_array().expect("cases");
    let (mut total, mut interleaved_equal, mut half_equal, mut half_one_ulp) = (0, 0, 0, 0);
    let mut worst = 0.0f32;
    for case in cases {
        let seed = case["seed"].as_u64().expect("a seed");
        manual_seed(seed);
        let x = randn(&[1, 2, 6, 8]);
        let bits = |v: Vec<f32>| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(x.to_vec()),
            bits(floats(case, "x")),
            "randn, seed {seed}"
        );

        let interleaved = rope_interleaved(&x, 10000.0).to_vec();
        let want = floats(case, "interleaved");
        for (got, want) in interleaved.iter().zip(&want) {
            interleaved_equal += usize::from(got.to_bits() == want.to_bits());
        }

        let half = rope_half_split(&x, 10000.0).to_vec();
        let want = floats(case, "half_split");
        for ((got, want), scale) in half.iter().zip(&want).zip(half_split_scale(&x)) {
            total += 1;
            half_equal += usize::from(got.to_bits() == want.to_bits());
            let ulps = (got - want).abs() / ulp(scale.max(want.abs()));
            half_one_ulp += usize::from(ulps <= 1.0);
            worst = worst.max(ulps);
        }
    }
    println!(
        "{} cases, {total} values: interleaved bit-equal {interleaved_equal}; half-split \
         bit-equal {half_equal}, within 1 ulp of the pair's length {half_one_ulp} (worst {worst:.3} ulp)",
        cases.len()
    );
    assert_eq!(interleaved_equal, total, "interleaved RoPE is bit-equal");
    assert_eq!(half_one_ulp, total, "half-split RoPE within 1 ulp");
}
