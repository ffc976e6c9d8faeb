//! Rng fixtures: a seed, a sequence of calls, and the float32 bits PyTorch produced.
//! Every call goes through the public API a learner uses (`manual_seed`, `randn`,
//! `nn::Linear::new`, ...), so the wiring is checked along with the generator.

use serde_json::{Value, json};
use shared::nn::{Dropout, Embedding, Linear};
use shared::{Tensor, empty, f_randint, manual_seed, ones, rand, randn};

use super::{Failure, Report};

fn shape(call: &Value) -> Result<Vec<usize>, String> {
    shape_of(call, "shape")
}

fn shape_of(call: &Value, key: &str) -> Result<Vec<usize>, String> {
    call[key]
        .as_array()
        .ok_or(format!("{key} missing"))?
        .iter()
        .map(|d| d.as_u64().map(|d| d as usize).ok_or("bad dim".to_string()))
        .collect()
}

fn num(call: &Value, key: &str) -> Result<f64, String> {
    call[key].as_f64().ok_or(format!("{key} missing"))
}

fn usize_of(call: &Value, key: &str) -> Result<usize, String> {
    call[key]
        .as_u64()
        .map(|v| v as usize)
        .ok_or(format!("{key} missing"))
}

/// A tensor as the fixtures write it: its shape, and its values as `"0x%08x"` float32 bit
/// patterns in row-major order.
fn param(t: &Tensor) -> Value {
    let bits: Vec<String> = t
        .to_vec()
        .iter()
        .map(|v| format!("0x{:08x}", v.to_bits()))
        .collect();
    json!({"shape": t.sizes(), "values": bits})
}

/// Float32 values written as `"0x%08x"` bit patterns (plain JSON numbers are read too).
fn floats(call: &Value, key: &str) -> Result<Vec<f32>, String> {
    call[key]
        .as_array()
        .ok_or(format!("{key} missing"))?
        .iter()
        .map(|v| match v {
            Value::String(hex) => u32::from_str_radix(
                hex.trim_start_matches("0x").trim_start_matches("0X"),
                16,
            )
            .map(f32::from_bits)
            .map_err(|e| format!("{key}: {hex}: {e}")),
            other => other
                .as_f64()
                .map(|x| x as f32)
                .ok_or(format!("{key}: not a float: {other}")),
        })
        .collect()
}

/// Integer results (sampled ids, `randint` values) as the fixtures write them: the values in
/// row-major order. An error becomes its message, so that the case fails with it.
fn ids(result: shared::Result<Tensor<i64>>) -> Value {
    match result {
        Ok(t) => json!({"shape": t.sizes(), "values": t.to_vec()}),
        Err(e) => json!(format!("error: {e}")),
    }
}

/// Parses a seed as Python's `torch.manual_seed` takes it: up to 2^64 - 1, or negative
/// (taken as its 64-bit two's complement).
fn seed(case: &Value) -> Result<u64, String> {
    let raw = &case["seed"];
    if let Some(s) = raw.as_u64() {
        return Ok(s);
    }
    if let Some(s) = raw.as_i64() {
        return Ok(s as u64);
    }
    let text = raw.to_string();
    text.parse::<i128>()
        .map(|s| s as u64)
        .map_err(|e| format!("seed {text}: {e}"))
}

/// Runs one call and returns its result in the fixture's format.
fn call(call: &Value) -> Result<Value, String> {
    let op = call["op"].as_str().ok_or("op missing")?;
    Ok(match op {
        "randn" => param(&randn(&shape(call)?)),
        "rand" => param(&rand(&shape(call)?)),
        "uniform" => {
            let mut t = empty(&shape(call)?);
            t.uniform_(num(call, "from")?, num(call, "to")?);
            param(&t)
        }
        "normal" => {
            let mut t = empty(&shape(call)?);
            t.normal_(num(call, "mean")?, num(call, "std")?);
            param(&t)
        }
        "linear" => {
            let bias = call["bias"].as_bool().ok_or("bias missing")?;
            let layer = Linear::new(
                usize_of(call, "in_features")?,
                usize_of(call, "out_features")?,
                bias,
            );
            match &layer.bias {
                Some(b) => json!({"weight": param(&layer.weight), "bias": param(b)}),
                None => json!({"weight": param(&layer.weight)}),
            }
        }
        "embedding" => {
            let table = Embedding::new(
                usize_of(call, "num_embeddings")?,
                usize_of(call, "embedding_dim")?,
            );
            param(&table.weight)
        }
        "dropout" => {
            param(&Dropout::new(num(call, "p")?).forward(&ones(&shape(call)?)))
        }
        "multinomial" => {
            let probs = Tensor::f_from_vec(
                floats(call, "probs")?,
                &shape_of(call, "probs_shape")?,
            )
            .map_err(|e| e.to_string())?;
            let replacement =
                call["replacement"].as_bool().ok_or("replacement missing")?;
            ids(probs.f_multinomial(usize_of(call, "num_samples")?, replacement))
        }
        "randint" => {
            let bound =
                |key: &str| call[key].as_i64().ok_or(format!("{key} missing"));
            ids(f_randint(bound("low")?, bound("high")?, &shape(call)?))
        }
        other => return Err(format!("unknown op {other}")),
    })
}

/// Compares two results, ignoring how the fixture spells hex digits. Integer results may be
/// written as a bare list of values (row-major) or with their shape.
fn same(expected: &Value, got: &Value) -> bool {
    match (expected, got) {
        (Value::Array(_), Value::Object(b)) if b.contains_key("values") => {
            same(expected, &b["values"])
        }
        (Value::String(a), Value::String(b)) => a.eq_ignore_ascii_case(b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        (a, b) => a == b,
    }
}

fn run_case(case: &Value) -> Result<Option<Failure>, String> {
    let name = case["name"].as_str().unwrap_or("<unnamed>").to_string();
    let calls = case["calls"].as_array().ok_or("calls missing")?;
    let expected = case["expected"].as_array().ok_or("expected missing")?;
    manual_seed(seed(case)?);
    for (i, (c, want)) in calls.iter().zip(expected).enumerate() {
        let got = call(c)?;
        if !same(want, &got) {
            return Ok(Some(Failure {
                name: format!("{name} (call {i}: {c})"),
                expected: want.to_string(),
                got: got.to_string(),
            }));
        }
    }
    Ok(None)
}

/// Runs every rng case.
pub fn run(cases: &Value) -> Result<Report, String> {
    let mut report = Report::default();
    for case in cases.as_array().ok_or("cases must be a list")? {
        report.record(run_case(case)?);
    }
    Ok(report)
}
