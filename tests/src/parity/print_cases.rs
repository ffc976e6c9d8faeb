//! Print fixtures: `expected_repr` is `repr(t)`, `expected_size_repr` is `t.shape`.

use serde_json::Value;
use shared::Tensor;
use shared::fmt::{Size, Suffixes, Values, format_tensor};

use super::{Failure, Report};

/// Decoded values of one case, in the dtype the case names.
enum Decoded {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    Bool(Vec<bool>),
}

impl Decoded {
    fn values(&self) -> Values<'_> {
        match self {
            Decoded::F32(v) => Values::F32(v),
            Decoded::F64(v) => Values::F64(v),
            Decoded::I64(v) => Values::I64(v),
            Decoded::I32(v) => Values::I32(v),
            Decoded::Bool(v) => Values::Bool(v),
        }
    }
}

fn hex(v: &Value) -> Result<u64, String> {
    let s = v.as_str().ok_or("float values are hex strings")?;
    u64::from_str_radix(s.trim_start_matches("0x"), 16)
        .map_err(|e| format!("{s}: {e}"))
}

fn decode(dtype: &str, values: &[Value]) -> Result<Decoded, String> {
    let ints = || -> Result<Vec<i64>, String> {
        values
            .iter()
            .map(|v| v.as_i64().ok_or("integer expected".to_string()))
            .collect()
    };
    Ok(match dtype {
        "float32" => Decoded::F32(
            values
                .iter()
                .map(|v| hex(v).map(|b| f32::from_bits(b as u32)))
                .collect::<Result<_, _>>()?,
        ),
        "float64" => Decoded::F64(
            values
                .iter()
                .map(|v| hex(v).map(f64::from_bits))
                .collect::<Result<_, _>>()?,
        ),
        "int64" => Decoded::I64(ints()?),
        "int32" => Decoded::I32(ints()?.into_iter().map(|x| x as i32).collect()),
        "bool" => Decoded::Bool(
            values
                .iter()
                .map(|v| v.as_bool().ok_or("bool expected".to_string()))
                .collect::<Result<_, _>>()?,
        ),
        other => return Err(format!("unknown dtype {other}")),
    })
}

fn shape_of(case: &Value) -> Result<Vec<usize>, String> {
    case["shape"]
        .as_array()
        .ok_or("shape missing")?
        .iter()
        .map(|d| d.as_u64().map(|d| d as usize).ok_or("bad dim".to_string()))
        .collect()
}

/// Runs one case; `None` when everything matched.
fn run_case(case: &Value) -> Result<Option<Failure>, String> {
    let name = case["name"].as_str().unwrap_or("<unnamed>").to_string();
    let shape = shape_of(case)?;
    let dtype = case["dtype"].as_str().ok_or("dtype missing")?;
    let decoded = decode(dtype, case["values"].as_array().ok_or("values missing")?)?;
    let suffixes = Suffixes {
        requires_grad: case["requires_grad"].as_bool().unwrap_or(false),
        grad_fn: case["grad_fn"].as_str().map(str::to_string),
    };
    let expected = case["expected_repr"]
        .as_str()
        .ok_or("expected_repr missing")?;
    let expected_size = case["expected_size_repr"]
        .as_str()
        .ok_or("expected_size_repr missing")?;

    let got = format_tensor(decoded.values(), &shape, &suffixes);
    if got != expected {
        return Ok(Some(Failure {
            name,
            expected: expected.into(),
            got,
        }));
    }
    let got_size = Size(shape.clone()).to_string();
    if got_size != expected_size {
        return Ok(Some(Failure {
            name,
            expected: expected_size.into(),
            got: got_size,
        }));
    }
    // Tensors of our own dtypes without autograd suffixes also print through `Display`.
    if suffixes == Suffixes::default() {
        let via_display = match &decoded {
            Decoded::F32(v) => Some(Tensor::from_vec(v.clone(), &shape).to_string()),
            Decoded::I64(v) => Some(Tensor::from_vec(v.clone(), &shape).to_string()),
            Decoded::Bool(v) => Some(Tensor::from_vec(v.clone(), &shape).to_string()),
            _ => None,
        };
        if let Some(got) = via_display.filter(|g| g != expected) {
            return Ok(Some(Failure {
                name,
                expected: expected.into(),
                got,
            }));
        }
    }
    Ok(None)
}

/// Runs every print case.
pub fn run(cases: &[Value]) -> Result<Report, String> {
    let mut report = Report::default();
    for case in cases {
        report.record(run_case(case)?);
    }
    Ok(report)
}
