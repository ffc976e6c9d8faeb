//! The tensor ops a learner reaches for beyond the chapters' own: comparisons, `where_`,
//! `isinf`/`isnan`, `allclose`, extrema, `flatten`/`expand`, the split family,
//! `gather`/`index_select`, `eye`, `randint`, `bernoulli_` and n-operand einsum
//! (`scripts/make_new_ops_fixtures.py`).

use shared::{Tensor, empty, manual_seed, rand};

use super::{Case, Got};

/// Several tensors (a tuple or the pieces of a split) as one result.
fn many<T: Into<Got>>(parts: shared::Result<Vec<T>>) -> Got {
    match parts {
        Ok(parts) => Got::Many(parts.into_iter().map(Into::into).collect()),
        Err(e) => Got::Error(e.to_string()),
    }
}

fn pair((values, indices): (Tensor, Tensor<i64>)) -> Vec<Got> {
    vec![values.into(), indices.into()]
}

fn usizes(values: Vec<i64>) -> Vec<usize> {
    values.into_iter().map(|v| v as usize).collect()
}

fn comparison(op: &str, c: &Case) -> Option<Got> {
    let (a, scalar) = (c.f32(0), || c.arg_f64("scalar") as f32);
    let got: Got = match op {
        "gt" => a.f_gt(&c.f32(1)).into(),
        "lt" => a.f_lt(&c.f32(1)).into(),
        "ge" => a.f_ge(&c.f32(1)).into(),
        "le" => a.f_le(&c.f32(1)).into(),
        "ne" => a.f_ne(&c.f32(1)).into(),
        "eq" => a.f_eq(&c.f32(1)).into(),
        "gt_scalar" => a.gt_scalar(scalar()).into(),
        "lt_scalar" => a.lt_scalar(scalar()).into(),
        "ge_scalar" => a.ge_scalar(scalar()).into(),
        "le_scalar" => a.le_scalar(scalar()).into(),
        "ne_scalar" => a.ne_scalar(scalar()).into(),
        "eq_scalar" => a.eq_scalar(scalar()).into(),
        "isinf" => a.isinf().into(),
        "isnan" => a.isnan().into(),
        "allclose" => a
            .f_allclose(
                &c.f32(1),
                c.arg_f64("rtol"),
                c.arg_f64("atol"),
                c.arg_bool("equal_nan"),
            )
            .map(Tensor::scalar)
            .into(),
        _ => return None,
    };
    Some(got)
}

fn extremum(op: &str, c: &Case) -> Option<Got> {
    let t = c.f32(0);
    let along = || (c.arg_i64("dim"), c.arg_bool("keepdim"));
    let got: Got = match op {
        "max" => t.f_max().into(),
        "min" => t.f_min().into(),
        "argmax" => t.f_argmax().into(),
        "argmin" => t.f_argmin().into(),
        "max_dim" => many(t.f_max_dim(along().0, along().1).map(pair)),
        "min_dim" => many(t.f_min_dim(along().0, along().1).map(pair)),
        "argmax_dim" => t.f_argmax_dim(along().0, along().1).into(),
        "argmin_dim" => t.f_argmin_dim(along().0, along().1).into(),
        "maximum" => t.f_maximum(&c.f32(1)).into(),
        "minimum" => t.f_minimum(&c.f32(1)).into(),
        _ => return None,
    };
    Some(got)
}

fn shape_and_index(op: &str, c: &Case) -> Option<Got> {
    let t = c.f32(0);
    let flatten =
        |t: Tensor| t.f_flatten(c.arg_i64("start_dim"), c.arg_i64("end_dim"));
    let got: Got = match op {
        "flatten" => flatten(t).into(),
        "flatten_t" => flatten(t.transpose(0, 2)).into(),
        "expand" => t.f_expand(c.arg_i64s("sizes")).into(),
        "expand_t" => t.t().f_expand(c.arg_i64s("sizes")).into(),
        "split" => many(t.f_split(c.arg_i64("size") as usize, c.arg_i64("dim"))),
        "split_sizes" => {
            many(t.f_split_sizes(&usizes(c.arg_i64s("sizes")), c.arg_i64("dim")))
        }
        "chunk" => many(t.f_chunk(c.arg_i64("chunks") as usize, c.arg_i64("dim"))),
        "unbind" => many(t.f_unbind(c.arg_i64("dim"))),
        "gather" => t.f_gather(c.arg_i64("dim"), &c.i64(1)).into(),
        "index_select" => t.f_index_select(c.arg_i64("dim"), &c.i64(1)).into(),
        _ => return None,
    };
    Some(got)
}

fn random(op: &str, c: &Case) -> Option<Got> {
    let shape = || usizes(c.arg_i64s("shape"));
    let seed = || manual_seed(c.arg_i64("seed") as u64);
    let got: Got = match op {
        "randint" => {
            seed();
            shared::f_randint(c.arg_i64("low"), c.arg_i64("high"), &shape()).into()
        }
        "bernoulli_" => {
            seed();
            let mut t = empty(&shape());
            t.f_bernoulli_(c.arg_f64("p")).map(|t| t.clone()).into()
        }
        "bernoulli_t" => {
            seed();
            let mut t = empty(&shape()).t();
            t.f_bernoulli_(c.arg_f64("p")).map(|t| t.clone()).into()
        }
        "randint_bernoulli_rand" => {
            seed();
            let first = shared::randint(0, 100, &[3]);
            let second = empty(&[4]).bernoulli_(0.5).clone();
            Got::Many(vec![first.into(), second.into(), rand(&[2]).into()])
        }
        _ => return None,
    };
    Some(got)
}

pub(super) fn run(op: &str, c: &Case) -> Option<Got> {
    match op {
        "where" => Some(shared::f_where_(&c.bool(0), &c.f32(1), &c.f32(2)).into()),
        "eye" => Some(
            shared::eye_m(c.arg_i64("n") as usize, c.arg_i64("m") as usize).into(),
        ),
        "einsum_n" => {
            let operands: Vec<Tensor> = (0..c.len()).map(|i| c.f32(i)).collect();
            let refs: Vec<&Tensor> = operands.iter().collect();
            Some(shared::f_einsum_n(c.arg_str("equation"), &refs).into())
        }
        // The random ops have no input tensor; every other family starts from input 0.
        _ if c.len() == 0 => random(op, c),
        _ => comparison(op, c)
            .or_else(|| extremum(op, c))
            .or_else(|| shape_and_index(op, c)),
    }
}
