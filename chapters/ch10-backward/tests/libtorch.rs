//! With `--features tch`: the same gradients from libtorch's own autograd, in-process.
//! The module's parameters and the input go to libtorch as leaf tensors, the forward pass
//! is written with libtorch's operations, `backward()` runs there, and each `.grad` must
//! equal ours: bit for bit where libtorch's products add in the order `shared` follows (the
//! Intel reference machine), within `MKL_RTOL` of the tensor's largest value elsewhere (see
//! `tests/bits.rs`). Run with `source scripts/libtorch-env.sh` first.
#![cfg(feature = "tch")]

use ch01_embeddings::inputs::your_journey;
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch10_backward::multihead::{multihead_backward, multihead_forward};
use shared::tch::{self, Device, Kind};
use shared::testing::libtorch::{assert_agrees, leaf};
use shared::{manual_seed, stack};

/// As in `tests/bits.rs`: a few units in the last place of the tensor's largest value.
const MKL_RTOL: f32 = 1e-6;

#[test]
fn multihead_gradients_equal_libtorch_autograd() {
    let inputs = your_journey();
    let batch = stack(&[&inputs, &inputs], 0);
    manual_seed(123);
    let mha = MultiHeadAttention::new(3, 4, 6, 0.0, 2, false);
    let (out, tape) = multihead_forward(&mha, &batch);
    let grads = multihead_backward(&mha, &tape, &(&out * 2.0));

    let x = leaf(&batch);
    let (wq, wk, wv) = (
        leaf(&mha.w_query.weight),
        leaf(&mha.w_key.weight),
        leaf(&mha.w_value.weight),
    );
    let wo = leaf(&mha.out_proj.weight);
    let bo = leaf(mha.out_proj.bias.as_ref().expect("a bias"));
    let (b, n, h, hd) = (2i64, 6i64, 2i64, 2i64);
    let split = |t: tch::Tensor| t.view([b, n, h, hd]).transpose(1, 2);
    let keys = split(x.linear(&wk, None::<tch::Tensor>));
    let queries = split(x.linear(&wq, None::<tch::Tensor>));
    let values = split(x.linear(&wv, None::<tch::Tensor>));
    let mask = tch::Tensor::ones([n, n], (Kind::Float, Device::Cpu))
        .triu(1)
        .to_kind(Kind::Bool);
    let scores = queries
        .matmul(&keys.transpose(2, 3))
        .masked_fill(&mask, f64::NEG_INFINITY);
    let weights = (scores / (hd as f64).sqrt()).softmax(-1, Kind::Float);
    let context =
        weights
            .matmul(&values)
            .transpose(1, 2)
            .contiguous()
            .view([b, n, h * hd]);
    let theirs = context.linear(&wo, Some(&bo));
    theirs.square().sum(Kind::Float).backward();

    assert_agrees("out", &out, &theirs, MKL_RTOL);
    assert_agrees(
        "W_query.weight",
        &grads.w_query.weight,
        &wq.grad(),
        MKL_RTOL,
    );
    assert_agrees("W_key.weight", &grads.w_key.weight, &wk.grad(), MKL_RTOL);
    assert_agrees(
        "W_value.weight",
        &grads.w_value.weight,
        &wv.grad(),
        MKL_RTOL,
    );
    assert_agrees(
        "out_proj.weight",
        &grads.out_proj.weight,
        &wo.grad(),
        MKL_RTOL,
    );
    let bias = grads.out_proj.bias.as_ref().expect("a bias");
    assert_agrees("out_proj.bias", bias, &bo.grad(), MKL_RTOL);
    assert_agrees("batch", &grads.input, &x.grad(), MKL_RTOL);
}
