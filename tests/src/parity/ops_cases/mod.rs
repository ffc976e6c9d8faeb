//! Operation fixtures: each case names an operation (`op`), its arguments (`args`), its
//! input tensors (`inputs`), and what PyTorch 2.13.0 gave: a tensor or a list of tensors
//! (`expected`) with its printed text (`expected_repr`), or the error it raised
//! (`expected_error`, a part of PyTorch's message). Values are compared bit for bit, or
//! within `ulp` units in the last place where the case says so (the transcendental
//! elementwise ops, which PyTorch takes from MKL's closed vector library).
//!
//! The operations are dispatched by family, one module each; the first that knows the
//! `op` runs it.
//!
//! The file's header says on which CPU build (`cpu_capability`) and with how many threads
//! (`num_threads`) PyTorch ran: some results depend on both (softmax sums a row in 16 lanes
//! with AVX-512, in 8 with AVX2), so the cases run as that machine computed.

mod chapter_ops;
mod edges;
mod kernels;
mod new_ops;
mod norms;

use serde_json::Value;
use shared::cpu::{self, Capability};
use shared::testing::ulps;
use shared::{Element, Tensor};

use super::{Drift, Failure, Report};

/// What `shared` gave for one case.
pub(crate) enum Got {
    F32(Tensor),
    I64(Tensor<i64>),
    Bool(Tensor<bool>),
    /// Several results (a tuple like `max(dim)`'s, or the pieces of `split`).
    Many(Vec<Got>),
    /// The `f_` form's error message.
    Error(String),
}

impl From<Tensor> for Got {
    fn from(t: Tensor) -> Got {
        Got::F32(t)
    }
}

impl From<Tensor<i64>> for Got {
    fn from(t: Tensor<i64>) -> Got {
        Got::I64(t)
    }
}

impl From<Tensor<bool>> for Got {
    fn from(t: Tensor<bool>) -> Got {
        Got::Bool(t)
    }
}

impl<T: Into<Got>> From<shared::Result<T>> for Got {
    fn from(r: shared::Result<T>) -> Got {
        match r {
            Ok(t) => t.into(),
            Err(e) => Got::Error(e.to_string()),
        }
    }
}

/// One case's inputs and arguments, decoded on demand.
pub(crate) struct Case<'a> {
    inputs: &'a [Value],
    args: &'a Value,
}

impl Case<'_> {
    /// Input `i` as an `f32` tensor.
    pub(crate) fn f32(&self, i: usize) -> Tensor {
        decode_f32(&self.inputs[i])
    }

    /// Input `i` as an `i64` tensor.
    pub(crate) fn i64(&self, i: usize) -> Tensor<i64> {
        decode_i64(&self.inputs[i])
    }

    /// Input `i` as a `bool` tensor.
    pub(crate) fn bool(&self, i: usize) -> Tensor<bool> {
        decode_bool(&self.inputs[i])
    }

    /// How many input tensors the case has.
    pub(crate) fn len(&self) -> usize {
        self.inputs.len()
    }

    /// The argument `key` (JSON `null` when absent).
    pub(crate) fn arg(&self, key: &str) -> &Value {
        &self.args[key]
    }

    pub(crate) fn arg_i64(&self, key: &str) -> i64 {
        self.args[key]
            .as_i64()
            .unwrap_or_else(|| panic!("integer argument {key}"))
    }

    pub(crate) fn arg_f64(&self, key: &str) -> f64 {
        number(&self.args[key]).unwrap_or_else(|| panic!("number argument {key}"))
    }

    pub(crate) fn arg_bool(&self, key: &str) -> bool {
        self.args[key]
            .as_bool()
            .unwrap_or_else(|| panic!("boolean argument {key}"))
    }

    pub(crate) fn arg_str(&self, key: &str) -> &str {
        self.args[key]
            .as_str()
            .unwrap_or_else(|| panic!("string argument {key}"))
    }

    /// A list of integers (dims, sizes, repeats).
    pub(crate) fn arg_i64s(&self, key: &str) -> Vec<i64> {
        serde_json::from_value(self.args[key].clone())
            .unwrap_or_else(|_| panic!("integer list argument {key}"))
    }
}

/// A JSON number, or one of the strings `"inf"`, `"-inf"`, `"nan"` (JSON has no such numbers).
pub(crate) fn number(v: &Value) -> Option<f64> {
    match v.as_str() {
        Some("inf") => Some(f64::INFINITY),
        Some("-inf") => Some(f64::NEG_INFINITY),
        Some("nan") => Some(f64::NAN),
        Some(_) => None,
        None => v.as_f64(),
    }
}

fn shape(t: &Value) -> Vec<usize> {
    serde_json::from_value(t["shape"].clone()).expect("shape")
}

/// A float32 tensor stored as `"0x%08x"` bit patterns, or as the draw that makes it
/// (`"generator": {"seed": s, "dist": "rand" or "randn"}`, i.e. `torch.manual_seed(s)` then
/// `torch.rand(shape)`), which our generator reproduces bit for bit.
pub(crate) fn decode_f32(t: &Value) -> Tensor {
    if let Some(draw) = t.get("generator") {
        shared::manual_seed(draw["seed"].as_u64().expect("seed"));
        return match draw["dist"].as_str() {
            Some("rand") => shared::rand(&shape(t)),
            Some("randn") => shared::randn(&shape(t)),
            other => panic!("unknown distribution {other:?}"),
        };
    }
    let values: Vec<f32> = t["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|v| {
            let hex = v.as_str().expect("hex").trim_start_matches("0x");
            f32::from_bits(u32::from_str_radix(hex, 16).expect("hex bits"))
        })
        .collect();
    Tensor::from_vec(values, &shape(t))
}

pub(crate) fn decode_bool(t: &Value) -> Tensor<bool> {
    let values: Vec<bool> =
        serde_json::from_value(t["values"].clone()).expect("bools");
    Tensor::from_vec(values, &shape(t))
}

pub(crate) fn decode_i64(t: &Value) -> Tensor<i64> {
    let values: Vec<i64> = serde_json::from_value(t["values"].clone()).expect("ints");
    Tensor::from_vec(values, &shape(t))
}

/// Runs one case through the family that knows its op.
fn dispatch(op: &str, case: &Case) -> Option<Got> {
    chapter_ops::run(op, case)
        .or_else(|| kernels::run(op, case))
        .or_else(|| edges::run(op, case))
        .or_else(|| new_ops::run(op, case))
        .or_else(|| norms::run(op, case))
}

/// How far a value may be from PyTorch's: bit for bit unless the case says otherwise.
#[derive(Clone, Copy)]
struct Tolerance {
    /// Units in the last place (`"ulp"`): PyTorch's transcendental elementwise ops come from
    /// MKL's closed vector library.
    ulp: u64,
    /// A distance relative to the largest magnitude of the result (`"atol_of_max"`): matrix
    /// products come from MKL's `sgemm`, whose order of additions changes with the processor,
    /// and a GPU's libraries add in their own order too.
    atol: f32,
}

impl Tolerance {
    fn of(case: &Value) -> Tolerance {
        let mut tol = Tolerance {
            ulp: case["ulp"].as_u64().unwrap_or(0),
            atol: case["atol_of_max"].as_f64().unwrap_or(0.0) as f32,
        };
        // Off the reference platform (libtorch on another processor or MKL path, a GPU),
        // nothing is bit for bit the reference machine's: every value within 1e-6 of the
        // scale of its result.
        if shared::device() != shared::Device::Cpu
            && !course::platform::platform().is_reference()
        {
            tol.atol = tol.atol.max(1e-6);
        }
        tol
    }
}

/// Compares one result with PyTorch's, describing the first difference.
fn compare(
    got: &Got,
    expected: &Value,
    repr: Option<&Value>,
    tol: Tolerance,
    drift: &mut Drift,
) -> Result<(), String> {
    // The printed text must match too, unless the values may differ by more than a last
    // bit (a matrix product within `atol` can print another 4th digit).
    let mut differs = false;
    let text_of = |text: String, differs: bool| -> Result<(), String> {
        match repr.and_then(Value::as_str) {
            Some(want) if want != text && !(differs && tol.atol > 0.0) => {
                Err(format!("printed\n{text}\nPyTorch printed\n{want}"))
            }
            _ => Ok(()),
        }
    };
    fn check_shape<E: Element>(
        t: &Tensor<E>,
        expected: &Value,
    ) -> Result<(), String> {
        let want = shape(expected);
        if t.sizes() != want.as_slice() {
            return Err(format!("shape {:?}, PyTorch {want:?}", t.sizes()));
        }
        Ok(())
    }
    match got {
        Got::Error(e) => Err(format!("error `{e}`, PyTorch gave a result")),
        Got::F32(t) => {
            if expected["dtype"] != "float32" {
                return Err(format!(
                    "float32 result, PyTorch's is {}",
                    expected["dtype"]
                ));
            }
            check_shape(t, expected)?;
            let want = decode_f32(expected).to_vec();
            let scale = want.iter().fold(0.0f32, |m, e| m.max(e.abs()));
            let atol = tol.atol * scale;
            for (i, (g, e)) in t.to_vec().into_iter().zip(want).enumerate() {
                drift.values += 1;
                if ulps(g, e) > 0 {
                    differs = true;
                    drift.differing += 1;
                    let relative = (g as f64 - e as f64).abs()
                        / scale.max(f32::MIN_POSITIVE) as f64;
                    if relative.is_finite() {
                        drift.largest_relative = drift.largest_relative.max(relative);
                    }
                }
                let within_atol = (g - e).abs() <= atol; // false for NaN against a number
                if ulps(g, e) > tol.ulp && !within_atol {
                    return Err(format!(
                        "value {i}: {g:e}, PyTorch {e:e} ({} ulps apart; allowed {} ulps or \
                         {atol:e})",
                        ulps(g, e),
                        tol.ulp
                    ));
                }
            }
            text_of(t.to_string(), differs)
        }
        Got::I64(t) => {
            if expected["dtype"] != "int64" {
                return Err(format!(
                    "int64 result, PyTorch's is {}",
                    expected["dtype"]
                ));
            }
            check_shape(t, expected)?;
            if t.to_vec() != decode_i64(expected).to_vec() {
                return Err(format!(
                    "values {:?}, PyTorch {:?}",
                    t.to_vec(),
                    decode_i64(expected).to_vec()
                ));
            }
            text_of(t.to_string(), false)
        }
        Got::Bool(t) => {
            if expected["dtype"] != "bool" {
                return Err(format!(
                    "bool result, PyTorch's is {}",
                    expected["dtype"]
                ));
            }
            check_shape(t, expected)?;
            if t.to_vec() != decode_bool(expected).to_vec() {
                return Err(format!(
                    "values {:?}, PyTorch {:?}",
                    t.to_vec(),
                    decode_bool(expected).to_vec()
                ));
            }
            text_of(t.to_string(), false)
        }
        Got::Many(parts) => {
            let want = expected
                .as_array()
                .ok_or("several results, PyTorch gave one")?;
            if parts.len() != want.len() {
                return Err(format!(
                    "{} results, PyTorch {}",
                    parts.len(),
                    want.len()
                ));
            }
            for (i, (g, e)) in parts.iter().zip(want).enumerate() {
                let r = repr.and_then(|r| r.as_array()).map(|r| &r[i]);
                compare(g, e, r, tol, drift)
                    .map_err(|m| format!("result {i}: {m}"))?;
            }
            Ok(())
        }
    }
}

fn run_case(case: &Value, drift: &mut Drift) -> Result<Option<Failure>, String> {
    let name = case["name"].as_str().ok_or("a case without a name")?;
    let op = case["op"].as_str().ok_or("a case without an op")?;
    let inputs = case["inputs"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let c = Case {
        inputs,
        args: &case["args"],
    };
    let got = dispatch(op, &c).ok_or_else(|| format!("{name}: unknown op {op}"))?;
    let tol = Tolerance::of(case);
    let outcome = match (&got, case["expected_error"].as_str()) {
        (Got::Error(e), Some(want)) if e.contains(want) => Ok(()),
        (Got::Error(e), Some(want)) => {
            Err(format!("error `{e}`, expected one containing `{want}`"))
        }
        (_, Some(want)) => Err(format!("a result, PyTorch raised `{want}`")),
        (_, None) => compare(
            &got,
            &case["expected"],
            case.get("expected_repr"),
            tol,
            drift,
        ),
    };
    Ok(outcome.err().map(|got| Failure {
        name: name.to_string(),
        expected: "what PyTorch gave".to_string(),
        got,
    }))
}

/// Runs every case of an operation fixture file (`header` is the file's top-level object),
/// computing as the CPU build and thread count it records; both are restored afterwards.
pub fn run(
    header: &serde_json::Map<String, Value>,
    cases: &[Value],
) -> Result<Report, String> {
    let capability = match header.get("cpu_capability").and_then(Value::as_str) {
        Some(name) => Some(
            Capability::from_env_value(&name.to_lowercase())
                .ok_or_else(|| format!("unknown cpu_capability {name}"))?,
        ),
        None => None,
    };
    let threads = header.get("num_threads").and_then(Value::as_u64);
    let (before_capability, before_threads) =
        (cpu::capability(), cpu::get_num_threads());
    if capability.is_some() {
        cpu::set_capability(capability);
    }
    if let Some(threads) = threads {
        cpu::set_num_threads(threads as usize);
    }
    let mut report = Report::default();
    let outcome = cases.iter().try_for_each(|case| {
        let failure = run_case(case, &mut report.drift)?;
        report.record(failure);
        Ok::<(), String>(())
    });
    cpu::set_capability(Some(before_capability));
    cpu::set_num_threads(before_threads);
    outcome.map(|()| report)
}
