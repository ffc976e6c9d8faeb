//! Elementwise maths, activations, statistics and normalisation: `abs`, `clamp`, `relu`,
//! `tanh`, `log`, `gelu`, `var`, `std`, `layer_norm`, `rms_norm` and the modules
//! `LayerNorm` and `RMSNorm`.
//!
//! Long inputs are not stored in the fixture but described as a `ramp` (`start + i·step`
//! in float32, as `torch.arange(n) * step + start` computes it), and only the windows
//! `keep` of such a result are compared.

use serde_json::Value;
use shared::nn::{LayerNorm, RMSNorm};
use shared::{GeluApproximate, Tensor};

use super::{Case, Got, number};

pub(super) fn run(op: &str, c: &Case) -> Option<Got> {
    let got: Got = match op {
        "abs" => x(c).abs().into(),
        "clamp" => x(c).f_clamp(bound(c, "min"), bound(c, "max")).into(),
        "clamp_min" => x(c).clamp_min(c.arg_f64("min") as f32).into(),
        "clamp_max" => x(c).clamp_max(c.arg_f64("max") as f32).into(),
        "relu" => x(c).relu().into(),
        "tanh" => x(c).tanh().into(),
        "log" => x(c).log().into(),
        "gelu" | "gelu_t" | "gelu_narrow" | "gelu_each" => {
            match c.arg_str("approximate").parse() {
                Ok(approximate) => gelu(op, c, approximate).into(),
                Err(e) => Got::Error(e.to_string()),
            }
        }
        "var" => x(c)
            .f_var_dim(dim(c), c.arg_f64("correction"), c.arg_bool("keepdim"))
            .into(),
        "std" => x(c)
            .f_std_dim(dim(c), c.arg_f64("correction"), c.arg_bool("keepdim"))
            .into(),
        "layer_norm" => {
            let (weight, bias) = parameters(c);
            x(c).f_layer_norm(
                &normalized_shape(c),
                weight.as_ref(),
                bias.as_ref(),
                c.arg_f64("eps"),
            )
            .into()
        }
        "rms_norm" => {
            let (weight, _) = parameters(c);
            let eps = number(c.arg("eps"));
            x(c).f_rms_norm(&normalized_shape(c), weight.as_ref(), eps)
                .into()
        }
        "LayerNorm" => LayerNorm::new(&normalized_shape(c)).f_forward(&x(c)).into(),
        "RMSNorm" => RMSNorm::new(&normalized_shape(c)).f_forward(&x(c)).into(),
        _ => return None,
    };
    Some(keep_windows(got, c.arg("keep")))
}

/// The input: input 0, or the ramp the case describes.
fn x(c: &Case) -> Tensor {
    let ramp = c.arg("ramp");
    if ramp.is_null() {
        return c.f32(0);
    }
    let n = ramp["n"].as_u64().expect("ramp length") as usize;
    let start = number(&ramp["start"]).expect("ramp start") as f32;
    let step = number(&ramp["step"]).expect("ramp step") as f32;
    let values = (0..n).map(|i| i as f32 * step + start).collect();
    Tensor::from_vec(values, &[n])
}

/// `gelu` on the input, on its transpose (`gelu_t`), on a view with gaps (`gelu_narrow`),
/// or on each element as a tensor of its own (`gelu_each`, the one-element path).
fn gelu(op: &str, c: &Case, approximate: GeluApproximate) -> Tensor {
    let x = &x(c);
    match op {
        "gelu_t" => x.t().gelu(approximate),
        "gelu_narrow" => x
            .narrow(
                c.arg_i64("dim"),
                c.arg_i64("start") as usize,
                c.arg_i64("length") as usize,
            )
            .gelu(approximate),
        "gelu_each" => {
            let values = x
                .to_vec()
                .into_iter()
                .map(|v| Tensor::from_vec(vec![v], &[1]).gelu(approximate).item())
                .collect();
            Tensor::from_vec(values, &[x.numel()])
        }
        _ => x.gelu(approximate),
    }
}

/// A clamp bound: a number (maybe `"nan"`, `"inf"`) or `null` for none.
fn bound(c: &Case, key: &str) -> Option<f32> {
    number(c.arg(key)).map(|v| v as f32)
}

fn dim(c: &Case) -> Option<i64> {
    c.arg("dim").as_i64()
}

fn normalized_shape(c: &Case) -> Vec<usize> {
    c.arg_i64s("normalized_shape")
        .into_iter()
        .map(|d| d as usize)
        .collect()
}

/// `weight` and `bias` follow the input when the case's args say they are there.
fn parameters(c: &Case) -> (Option<Tensor>, Option<Tensor>) {
    let mut next = 1;
    let mut take = |present: bool| {
        present.then(|| {
            next += 1;
            c.f32(next - 1)
        })
    };
    let weight = take(c.arg("weight").as_bool() == Some(true));
    let bias = take(c.arg("bias").as_bool() == Some(true));
    (weight, bias)
}

/// Keeps only the windows `[start, end)` of a long flattened result.
fn keep_windows(got: Got, keep: &Value) -> Got {
    let (Got::F32(t), Some(windows)) = (&got, keep.as_array()) else {
        return got;
    };
    if t.numel() <= 1 {
        return got;
    }
    let values = t.to_vec();
    let kept: Vec<f32> = windows
        .iter()
        .flat_map(|w| {
            let (a, b) = (
                w[0].as_u64().unwrap() as usize,
                w[1].as_u64().unwrap() as usize,
            );
            values[a..b].to_vec()
        })
        .collect();
    let n = kept.len();
    Got::F32(Tensor::from_vec(kept, &[n]))
}
