//! The operations the chapters use, against real PyTorch 2.13.0
//! (`tests/fixtures/ops_fixtures.json`, made by `scripts/make_ops_fixtures.py`):
//! every value within 1e-6 relative of PyTorch's, and the printed text exactly the same.

use serde_json::Value;
use shared::nn::{Embedding, Linear};
use shared::{Tensor, cat, einsum, stack};

fn decode_f32(input: &Value) -> Tensor {
    let shape: Vec<usize> = serde_json::from_value(input["shape"].clone()).expect("shape");
    let values: Vec<f32> = input["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|v| {
            let hex = v.as_str().expect("hex").trim_start_matches("0x");
            f32::from_bits(u32::from_str_radix(hex, 16).expect("hex bits"))
        })
        .collect();
    Tensor::from_vec(values, &shape)
}

fn decode_bool(input: &Value) -> Tensor<bool> {
    let shape: Vec<usize> = serde_json::from_value(input["shape"].clone()).expect("shape");
    let values: Vec<bool> = serde_json::from_value(input["values"].clone()).expect("bools");
    Tensor::from_vec(values, &shape)
}

fn decode_i64(input: &Value) -> Tensor<i64> {
    let shape: Vec<usize> = serde_json::from_value(input["shape"].clone()).expect("shape");
    let values: Vec<i64> = serde_json::from_value(input["values"].clone()).expect("ints");
    Tensor::from_vec(values, &shape)
}

fn dims(value: &Value) -> Vec<i64> {
    serde_json::from_value(value.clone()).expect("a list of dims")
}

/// Runs one case through `shared`.
fn run(case: &Value) -> Tensor {
    let inputs = case["inputs"].as_array().expect("inputs");
    let args = &case["args"];
    let f = |i: usize| decode_f32(&inputs[i]);
    let dim = || args["dim"].as_i64().expect("dim");
    let keepdim = || args["keepdim"].as_bool().expect("keepdim");
    match case["op"].as_str().expect("op") {
        "matmul" => f(0).matmul(&f(1)),
        "bmm" => f(0).bmm(&f(1)),
        "matmul_t" => f(0).matmul(&f(0).t()),
        "softmax" => f(0).softmax(dim()),
        "masked_fill" => f(0).masked_fill(&decode_bool(&inputs[1]), f32::NEG_INFINITY),
        "scaled_softmax" => (&f(0) / args["scale"].as_f64().expect("scale") as f32).softmax(dim()),
        "triu" => f(0).triu(args["diagonal"].as_i64().expect("diagonal")),
        "tril" => f(0).tril(args["diagonal"].as_i64().expect("diagonal")),
        "einsum" => einsum(args["equation"].as_str().expect("equation"), &f(0), &f(1)),
        "linear" => {
            let bias = (inputs.len() == 3).then(|| f(2));
            Linear::from_parameters(f(1), bias).forward(&f(0))
        }
        "embedding" => Embedding { weight: f(0) }.forward(&decode_i64(&inputs[1])),
        "sum" => f(0).sum(),
        "sum_dim" => f(0).sum_dim(dim(), keepdim()),
        "mean_dim" => f(0).mean_dim(dim(), keepdim()),
        "div" => &f(0) / &f(1),
        "div_scalar" => &f(0) / args["scalar"].as_f64().expect("scalar") as f32,
        "exp" => f(0).exp(),
        "split_heads" => f(0)
            .view(&dims(&args["shape"]))
            .transpose(1, 2)
            .contiguous(),
        "cat" => cat(&[f(0), f(1)], dim()),
        "stack" => stack(&[f(0), f(1)], dim()),
        "repeat" => {
            let repeats: Vec<usize> =
                serde_json::from_value(args["repeats"].clone()).expect("repeats");
            f(0).repeat(&repeats)
        }
        "permute" => f(0).permute(&dims(&args["dims"])).contiguous(),
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn operations_match_pytorch() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/ops_fixtures.json");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
    let cases = json["cases"].as_array().expect("cases");
    let (mut values, mut bit_equal, mut failures) = (0, 0, Vec::new());
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let got = run(case);
        let expected = decode_f32(&case["expected"]);
        if got.dims() != expected.dims() {
            failures.push(format!(
                "{name}: shape {:?} != {:?}",
                got.dims(),
                expected.dims()
            ));
            continue;
        }
        let mut case_equal = 0;
        for (g, e) in got.to_vec().iter().zip(expected.to_vec()) {
            values += 1;
            case_equal += usize::from(g.to_bits() == e.to_bits());
            let close = g == &e || (g - e).abs() <= 1e-6 * e.abs().max(g.abs());
            if !close {
                failures.push(format!("{name}: {g:e} vs PyTorch {e:e}"));
            }
        }
        bit_equal += case_equal;
        if case_equal < expected.numel() {
            eprintln!(
                "{name}: {case_equal} of {} values bit for bit equal",
                expected.numel()
            );
        }
        let text = got.to_string();
        if text != case["expected_repr"].as_str().expect("repr") {
            failures.push(format!(
                "{name}: printed\n{text}\nPyTorch printed\n{}",
                case["expected_repr"]
            ));
        }
    }
    eprintln!(
        "{} cases, {values} values, {bit_equal} bit for bit equal",
        cases.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
