//! RoPE against PyTorch at full precision, for several seeds: the bits of PyTorch's outputs
//! are in `tests/fixtures/rope_bits.json`, written by
//! `reference/ch12_positions.py --fixture tests/fixtures/rope_bits.json` (see its header).
//!
//! - the input `randn(1, 2, 6, 8)` is bit-equal (the generator);
//! - interleaved pairs (Meta's complex-number code) are bit-equal: `polar` uses the C
//!   library's `cosf`/`sinf` in PyTorch as here, and the complex product rounds in the same
//!   order;
//! - half-split pairs (Hugging Face) are bit-equal: the reference script takes `cos`/`sin`
//!   of the angles in float64 and rounds them once to float32, as ours are (float32
//!   `torch.cos`/`torch.sin` come from a CPU library whose last bit depends on the
//!   processor; see the appendix on matching PyTorch).

use ch12_positions::{rope_half_split, rope_interleaved};
use serde_json::Value;
use shared::{manual_seed, randn};

const FIXTURE: &str = include_str!("fixtures/rope_bits.json");

fn floats(case: &Value, key: &str) -> Vec<f32> {
    case[key]
        .as_array()
        .expect("an array of bit patterns")
        .iter()
        .map(|v| f32::from_bits(v.as_i64().expect("an int32") as i32 as u32))
        .collect()
}

#[test]
fn rope_matches_pytorch_bits() {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("valid JSON");
    let cases = fixture["cases"].as_array().expect("cases");
    let (mut total, mut interleaved_equal, mut half_equal) = (0, 0, 0);
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
        for (got, want) in half.iter().zip(&want) {
            total += 1;
            half_equal += usize::from(got.to_bits() == want.to_bits());
        }
    }
    println!(
        "{} cases, {total} values: interleaved bit-equal {interleaved_equal}; half-split \
         bit-equal {half_equal}",
        cases.len()
    );
    assert_eq!(interleaved_equal, total, "interleaved RoPE is bit-equal");
    assert_eq!(half_equal, total, "half-split RoPE is bit-equal");
}
