//! Replays `tests/fixtures/rng_fixtures_public.json`, recorded from real PyTorch 2.13.0.
//!
//! Each case seeds a generator, makes its calls one after another and compares every float32
//! bit pattern with the recorded one. The format is described in `fixtures/README.md`.

use serde_json::Value;

use super::super::Generator;
use super::{bits, dropout_full, linear, normal, randn, uniform};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/rng_fixtures_public.json"
);

/// The product of a JSON shape such as `[2, 6, 6]`.
fn numel(shape: &Value) -> usize {
    shape
        .as_array()
        .expect("shape is a list")
        .iter()
        .map(|d| d.as_u64().expect("dimension is a non-negative integer") as usize)
        .product()
}

/// The bit patterns of an expected `{"shape": ..., "values": ["0x3f800000", ...]}`.
fn expected_bits(tensor: &Value) -> Vec<u32> {
    tensor["values"]
        .as_array()
        .expect("values is a list")
        .iter()
        .map(|v| {
            let hex = v.as_str().expect("value is a hex string");
            u32::from_str_radix(hex.trim_start_matches("0x"), 16).expect("value is hex")
        })
        .collect()
}

/// A seed as `torch.manual_seed` takes it: up to 2^64 - 1, negative ones in two's complement.
fn seed(value: &Value) -> u64 {
    value
        .as_u64()
        .or_else(|| value.as_i64().map(|s| s as u64))
        .expect("seed is an integer in [-2^63, 2^64)")
}

fn f64_field(call: &Value, key: &str) -> f64 {
    call[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is a number"))
}

fn usize_field(call: &Value, key: &str) -> usize {
    call[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is an integer")) as usize
}

/// Makes one call on `generator` and returns, per result tensor, (label, got, expected) bits.
fn replay(
    generator: &mut Generator,
    call: &Value,
    expected: &Value,
) -> Vec<(String, Vec<u32>, Vec<u32>)> {
    let op = call["op"].as_str().expect("op is a string");
    let single = |values: Vec<f32>| vec![(op.to_string(), bits(&values), expected_bits(expected))];
    match op {
        "randn" => single(randn(generator, numel(&call["shape"]))),
        "rand" => single(uniform(generator, numel(&call["shape"]), 0.0, 1.0)),
        "uniform" => single(uniform(
            generator,
            numel(&call["shape"]),
            f64_field(call, "from"),
            f64_field(call, "to"),
        )),
        "normal" => single(normal(
            generator,
            numel(&call["shape"]),
            f64_field(call, "mean"),
            f64_field(call, "std"),
        )),
        "embedding" => single(randn(
            generator,
            usize_field(call, "num_embeddings") * usize_field(call, "embedding_dim"),
        )),
        "dropout" => single(dropout_full(
            generator,
            numel(&call["shape"]),
            1.0,
            f64_field(call, "p"),
        )),
        "linear" => {
            let with_bias = call["bias"].as_bool().expect("bias is a bool");
            let (weight, bias) = linear(
                generator,
                usize_field(call, "in_features"),
                usize_field(call, "out_features"),
                with_bias,
            );
            let mut results = vec![(
                "linear.weight".to_string(),
                bits(&weight),
                expected_bits(&expected["weight"]),
            )];
            match (bias, expected.get("bias")) {
                (Some(bias), Some(want)) => {
                    results.push(("linear.bias".to_string(), bits(&bias), expected_bits(want)));
                }
                (None, None) => {}
                _ => panic!("bias presence disagrees with the fixture"),
            }
            results
        }
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn public_fixtures_match_bit_for_bit() {
    let text = std::fs::read_to_string(FIXTURES).expect("fixture file is readable");
    let fixture: Value = serde_json::from_str(&text).expect("fixture file is JSON");
    let cases = fixture["cases"].as_array().expect("cases is a list");
    assert!(!cases.is_empty());

    let mut failures = Vec::new();
    let mut failed_cases = 0;
    let mut compared = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?");
        let mut generator = Generator::new(seed(&case["seed"]));
        let calls = case["calls"].as_array().expect("calls is a list");
        let expected = case["expected"].as_array().expect("expected is a list");
        assert_eq!(calls.len(), expected.len(), "{name}: one entry per call");
        let failures_before = failures.len();
        for (index, (call, want)) in calls.iter().zip(expected).enumerate() {
            for (label, got, want) in replay(&mut generator, call, want) {
                compared += got.len();
                if got != want {
                    let first = got.iter().zip(&want).position(|(g, w)| g != w);
                    let (got, want) = (got.len(), want.len());
                    failures.push(format!(
                        "{name} (seed {}) call {index} ({label}): {got} values for {want}, \
                         first difference at {first:?}",
                        case["seed"]
                    ));
                }
            }
        }
        if failures.len() > failures_before {
            failed_cases += 1;
        }
    }
    println!(
        "{} of {} fixture cases pass ({compared} values compared)",
        cases.len() - failed_cases,
        cases.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
