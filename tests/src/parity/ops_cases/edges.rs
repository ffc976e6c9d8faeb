//! Edge cases of the operations: empty and 0-d tensors, sizes that overflow, views of
//! transposed and sliced tensors, negative positions, `arange`'s checks and values, `pow`'s
//! recipes, and what each error says (`tests/fixtures/edge_fixtures.json`, made by
//! `scripts/make_edge_fixtures.py`).
//!
//! The op names here are distinct from the chapters' ones (`edge_view`, `edge_pow`, ...).
//! Views take an optional `prep`: steps applied to input 0 first (a transpose, a permute, a
//! slice, an expand, a select), so a case can start from a tensor that is not contiguous.

use serde_json::Value;
use shared::nn::Linear;
use shared::{Tensor, manual_seed};

use super::{Case, Got};

pub(super) fn run(op: &str, c: &Case) -> Option<Got> {
    let got: Got = match op {
        "edge_view" => prepared(c)
            .and_then(|t| t.f_view(c.arg_i64s("shape")))
            .into(),
        "edge_reshape" => prepared(c)
            .and_then(|t| t.f_reshape(c.arg_i64s("shape")))
            .into(),
        "edge_narrow" => prepared(c)
            .and_then(|t| {
                t.f_narrow(
                    c.arg_i64("dim"),
                    c.arg_i64("start"),
                    usize_arg(c, "length"),
                )
            })
            .into(),
        "edge_slice" => prepared(c)
            .and_then(|t| slice(&t, c.arg_i64("dim"), c.arg("start"), c.arg("end")))
            .into(),
        "edge_select" => prepared(c)
            .and_then(|t| t.f_select(c.arg_i64("dim"), c.arg_i64("index")))
            .into(),
        "edge_is_contiguous" => prepared(c)
            .map(|t| Tensor::scalar(t.is_contiguous()))
            .into(),
        "edge_expanded_sum" => c
            .f32(0)
            .f_expand(c.arg_i64s("sizes"))
            .and_then(|t| t.f_sum_dim(c.arg_i64("dim"), false))
            .into(),
        "edge_expanded_softmax" => c
            .f32(0)
            .f_expand(c.arg_i64s("sizes"))
            .and_then(|t| t.f_softmax(c.arg_i64("dim")))
            .into(),
        "edge_expanded_matmul" => c
            .f32(0)
            .f_expand(c.arg_i64s("sizes"))
            .and_then(|t| t.f_matmul(&c.f32(1)))
            .into(),
        "edge_size" => c
            .f32(0)
            .f_size(c.arg_i64("dim"))
            .map(|n| Tensor::scalar(n as i64))
            .into(),
        "edge_transpose" => c
            .f32(0)
            .f_transpose(c.arg_i64("dim0"), c.arg_i64("dim1"))
            .into(),
        "edge_unsqueeze" => c.f32(0).f_unsqueeze(c.arg_i64("dim")).into(),
        "edge_squeeze_dim" => c.f32(0).f_squeeze_dim(c.arg_i64("dim")).into(),
        "edge_t" => c.f32(0).f_t().into(),
        "edge_permute" => c.f32(0).f_permute(&c.arg_i64s("dims")).into(),
        "edge_cat" => shared::f_cat(&all_inputs(c), c.arg_i64("dim")).into(),
        // `maximum`/`minimum` with a transposed first operand (compared one at a time).
        "room_maximum_t" => c.f32(0).t().f_maximum(&c.f32(1)).into(),
        "room_minimum_t" => c.f32(0).t().f_minimum(&c.f32(1)).into(),
        "edge_stack" => shared::f_stack(&all_inputs(c), c.arg_i64("dim")).into(),
        "edge_repeat" => c.f32(0).f_repeat(&usizes(c, "repeats")).into(),
        "edge_dot" => c.f32(0).f_dot(&c.f32(1)).into(),
        "edge_mm" => c.f32(0).f_mm(&c.f32(1)).into(),
        "edge_matmul" => c.f32(0).f_matmul(&c.f32(1)).into(),
        "edge_bmm" => c.f32(0).f_bmm(&c.f32(1)).into(),
        "edge_triu" => c.f32(0).f_triu(c.arg_i64("diagonal")).into(),
        "edge_masked_fill" => c
            .f32(0)
            .f_masked_fill(&c.bool(1), c.arg_f64("value") as f32)
            .into(),
        "edge_masked_fill_" => {
            let mut t = c.f32(0);
            t.f_masked_fill_(&c.bool(1), c.arg_f64("value") as f32)
                .map(|t| t.clone())
                .into()
        }
        "edge_pow" => c.f32(0).pow(c.arg_f64("exponent") as f32).into(),
        "edge_full" => creation(c).into(),
        "edge_from_vec" => {
            Tensor::<f32>::f_from_vec(vec![], &usizes(c, "size")).into()
        }
        "edge_arange_float" => {
            let [start, end, step] = ["start", "end", "step"].map(|k| f64_bits(c, k));
            shared::f_arange(start, end, step).into()
        }
        "edge_arange_int" => {
            shared::f_arange(c.arg_i64("start"), c.arg_i64("end"), c.arg_i64("step"))
                .into()
        }
        "edge_linear_new" => linear_new(c),
        "edge_linear_forward" => {
            manual_seed(c.arg_i64("seed") as u64);
            let layer = Linear::new(
                usize_arg(c, "in"),
                usize_arg(c, "out"),
                c.arg_bool("bias"),
            );
            layer.f_forward(&c.f32(0)).into()
        }
        _ => return None,
    };
    Some(got)
}

/// Input 0 after the case's `prep` steps (to start from a transposed or sliced tensor).
fn prepared(c: &Case) -> shared::Result<Tensor> {
    let mut t = c.f32(0);
    let Some(steps) = c.arg("prep").as_array() else {
        return Ok(t);
    };
    for step in steps {
        let step = step.as_array().expect("a prep step is a list");
        let int = |i: usize| step[i].as_i64().expect("an integer in a prep step");
        t = match step[0].as_str().expect("a prep step's name") {
            "t" => t.f_t()?,
            "transpose" => t.f_transpose(int(1), int(2))?,
            "permute" => {
                let dims: Vec<i64> =
                    serde_json::from_value(step[1].clone()).expect("dims");
                t.f_permute(&dims)?
            }
            "slice" => t.f_slice(int(1), int(2)..int(3))?,
            "expand" => {
                let sizes: Vec<i64> =
                    serde_json::from_value(step[1].clone()).expect("sizes");
                t.f_expand(sizes)?
            }
            "select" => t.f_select(int(1), int(2))?,
            other => panic!("unknown prep step {other}"),
        };
    }
    Ok(t)
}

/// Python's `t[.., start:end, ..]` with either bound absent (`null`).
fn slice(t: &Tensor, dim: i64, start: &Value, end: &Value) -> shared::Result<Tensor> {
    match (start.as_i64(), end.as_i64()) {
        (Some(s), Some(e)) => t.f_slice(dim, s..e),
        (Some(s), None) => t.f_slice(dim, s..),
        (None, Some(e)) => t.f_slice(dim, ..e),
        (None, None) => t.f_slice::<i64>(dim, ..),
    }
}

/// `zeros`, `ones`, `full`, `empty`, `rand` or `randn` of a size (the random ones after
/// `manual_seed(seed)`).
fn creation(c: &Case) -> shared::Result<Tensor> {
    let size = usizes(c, "size");
    match c.arg_str("kind") {
        "zeros" => shared::f_zeros(&size),
        "ones" => shared::f_ones(&size),
        "empty" => shared::f_empty(&size).map(|t| t.zeros_like()),
        "full" => Tensor::f_full(&size, c.arg_f64("value") as f32),
        "rand" => {
            manual_seed(c.arg_i64("seed") as u64);
            shared::f_rand(&size)
        }
        "randn" => {
            manual_seed(c.arg_i64("seed") as u64);
            shared::f_randn(&size)
        }
        other => panic!("unknown creation {other}"),
    }
}

/// `nn.Linear(in, out, bias)` after `manual_seed(seed)`: the weight, the bias (when there is
/// one) and two more `rand` values, which show how far the generator moved.
fn linear_new(c: &Case) -> Got {
    manual_seed(c.arg_i64("seed") as u64);
    let layer =
        Linear::new(usize_arg(c, "in"), usize_arg(c, "out"), c.arg_bool("bias"));
    let mut parts = vec![Got::F32(layer.weight.clone())];
    if let Some(b) = &layer.bias {
        parts.push(Got::F32(b.clone()));
    }
    parts.push(Got::F32(shared::rand(&[2])));
    Got::Many(parts)
}

fn all_inputs(c: &Case) -> Vec<Tensor> {
    (0..c.len()).map(|i| c.f32(i)).collect()
}

fn usize_arg(c: &Case, key: &str) -> usize {
    usize::try_from(c.arg_i64(key)).expect("a size")
}

fn usizes(c: &Case, key: &str) -> Vec<usize> {
    c.arg_i64s(key)
        .into_iter()
        .map(|n| usize::try_from(n).expect("a size"))
        .collect()
}

/// An `f64` argument stored as its bit pattern (`"0x3fb999999999999a"` is Python's `0.1`),
/// so no decimal parsing can move it by one bit.
fn f64_bits(c: &Case, key: &str) -> f64 {
    let hex = c.arg_str(key).trim_start_matches("0x");
    f64::from_bits(u64::from_str_radix(hex, 16).expect("f64 bits"))
}
