//! PyTorch's CPU kernels that must match bit for bit: `log_softmax`, `mean`, and sums and
//! means of views (a permutation, then maybe a narrowing), which PyTorch adds in the order of
//! memory rather than of the logical shape.

use super::{Case, Got};

pub(super) fn run(op: &str, c: &Case) -> Option<Got> {
    let got: Got = match op {
        "log_softmax" => c.f32(0).f_log_softmax(c.arg_i64("dim")).into(),
        "mean" => c.f32(0).mean().into(),
        "sum_view" => {
            let mut view = c.f32(0).permute(&c.arg_i64s("permute"));
            if !c.arg("narrow").is_null() {
                let [dim, start, length] = c.arg_i64s("narrow")[..] else {
                    panic!("narrow: [dim, start, length]")
                };
                view = view.narrow(dim, start as usize, length as usize);
            }
            let dim = c.arg("dim").as_i64();
            let keepdim = c.arg_bool("keepdim");
            match (c.arg_str("reduce"), dim) {
                ("sum", None) => view.sum().into(),
                ("mean", None) => view.mean().into(),
                ("sum", Some(d)) => view.f_sum_dim(d, keepdim).into(),
                ("mean", Some(d)) => view.f_mean_dim(d, keepdim).into(),
                (other, _) => panic!("unknown reduction {other}"),
            }
        }
        _ => return None,
    };
    Some(got)
}
