//! Conformance with real PyTorch output: the public print fixtures.
//!
//! Each case records a tensor (shape, dtype, values as exact bit patterns, autograd
//! state) and what PyTorch 2.13.0 printed for it and for its shape.

use super::{Size, Suffixes, Values, format_tensor};
use serde::Deserialize;
use serde_json::Value;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/print_fixtures_public.json"
);

#[derive(Deserialize)]
struct Case {
    name: String,
    shape: Vec<usize>,
    dtype: String,
    values: Vec<Value>,
    requires_grad: bool,
    grad_fn: Option<String>,
    expected_repr: String,
    expected_size_repr: String,
}

/// The decoded values of one case, owned so that [`Values`] can borrow them.
enum Owned {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    Bool(Vec<bool>),
}

impl Owned {
    fn decode(case: &Case) -> Owned {
        let hex = |v: &Value| {
            let text = v.as_str().expect("float values are hex strings");
            let digits = text.strip_prefix("0x").expect("hex strings start with 0x");
            u64::from_str_radix(digits, 16).expect("valid hex")
        };
        let int = |v: &Value| v.as_i64().expect("integer values are JSON integers");
        let values = &case.values;
        match case.dtype.as_str() {
            "float32" => Owned::F32(
                values
                    .iter()
                    .map(|v| f32::from_bits(u32::try_from(hex(v)).expect("32-bit pattern")))
                    .collect(),
            ),
            "float64" => Owned::F64(values.iter().map(|v| f64::from_bits(hex(v))).collect()),
            "int64" => Owned::I64(values.iter().map(int).collect()),
            "int32" => Owned::I32(
                values
                    .iter()
                    .map(|v| i32::try_from(int(v)).expect("int32 value"))
                    .collect(),
            ),
            "bool" => Owned::Bool(
                values
                    .iter()
                    .map(|v| v.as_bool().expect("bool values are JSON booleans"))
                    .collect(),
            ),
            other => panic!("case {}: unknown dtype {other}", case.name),
        }
    }

    fn values(&self) -> Values<'_> {
        match self {
            Owned::F32(v) => Values::F32(v),
            Owned::F64(v) => Values::F64(v),
            Owned::I64(v) => Values::I64(v),
            Owned::I32(v) => Values::I32(v),
            Owned::Bool(v) => Values::Bool(v),
        }
    }
}

#[test]
fn public_print_fixtures_match_pytorch() {
    let text = std::fs::read_to_string(FIXTURES).expect("read the print fixtures");
    let cases: Vec<Case> = serde_json::from_str(&text).expect("parse the print fixtures");
    assert_eq!(cases.len(), 320, "the public fixture file has 320 cases");

    let mut failures = Vec::new();
    for case in &cases {
        let owned = Owned::decode(case);
        let suffixes = Suffixes {
            requires_grad: case.requires_grad,
            grad_fn: case.grad_fn.clone(),
        };
        let got = format_tensor(owned.values(), &case.shape, &suffixes);
        if got != case.expected_repr {
            failures.push(format!(
                "{}:\n--- expected\n{}\n--- got\n{}",
                case.name, case.expected_repr, got
            ));
        }
        let size = Size(case.shape.clone()).to_string();
        if size != case.expected_size_repr {
            failures.push(format!(
                "{} (size): expected {}, got {}",
                case.name, case.expected_size_repr, size
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
