//! The operations the chapters use: matmul in all its rank rules, softmax, masks, einsum,
//! Linear and Embedding, reductions, views, joins, scalar arithmetic.

use shared::nn::{Embedding, Linear};

use super::{Case, Got};

pub(super) fn run(op: &str, c: &Case) -> Option<Got> {
    let got: Got = match op {
        "matmul" => c.f32(0).f_matmul(&c.f32(1)).into(),
        "bmm" => c.f32(0).f_bmm(&c.f32(1)).into(),
        "matmul_t" => c.f32(0).f_matmul(&c.f32(0).t()).into(),
        "softmax" => c.f32(0).f_softmax(c.arg_i64("dim")).into(),
        "masked_fill" => c.f32(0).f_masked_fill(&c.bool(1), f32::NEG_INFINITY).into(),
        "scaled_softmax" => (&c.f32(0) / c.arg_f64("scale") as f32)
            .f_softmax(c.arg_i64("dim"))
            .into(),
        "triu" => c.f32(0).f_triu(c.arg_i64("diagonal")).into(),
        "tril" => c.f32(0).f_tril(c.arg_i64("diagonal")).into(),
        "einsum" => {
            shared::f_einsum(c.arg_str("equation"), &c.f32(0), &c.f32(1)).into()
        }
        "linear" => {
            let bias = (c.len() == 3).then(|| c.f32(2));
            Linear::f_from_parameters(c.f32(1), bias)
                .and_then(|layer| layer.f_forward(&c.f32(0)))
                .into()
        }
        "embedding" => Embedding { weight: c.f32(0) }.f_forward(&c.i64(1)).into(),
        "sum" => c.f32(0).sum().into(),
        "sum_dim" => c
            .f32(0)
            .f_sum_dim(c.arg_i64("dim"), c.arg_bool("keepdim"))
            .into(),
        "mean_dim" => c
            .f32(0)
            .f_mean_dim(c.arg_i64("dim"), c.arg_bool("keepdim"))
            .into(),
        "div" => c.f32(0).f_div(&c.f32(1)).into(),
        "div_scalar" => (&c.f32(0) / c.arg_f64("scalar") as f32).into(),
        "exp" => c.f32(0).exp().into(),
        "split_heads" => c
            .f32(0)
            .f_view(c.arg_i64s("shape"))
            .and_then(|t| t.f_transpose(1, 2))
            .map(|t| t.contiguous())
            .into(),
        "cat" => shared::f_cat(&[c.f32(0), c.f32(1)], c.arg_i64("dim")).into(),
        "stack" => shared::f_stack(&[c.f32(0), c.f32(1)], c.arg_i64("dim")).into(),
        "repeat" => {
            let repeats: Vec<usize> =
                c.arg_i64s("repeats").iter().map(|&r| r as usize).collect();
            c.f32(0).f_repeat(&repeats).into()
        }
        "permute" => c
            .f32(0)
            .f_permute(&c.arg_i64s("dims"))
            .map(|t| t.contiguous())
            .into(),
        _ => return None,
    };
    Some(got)
}
