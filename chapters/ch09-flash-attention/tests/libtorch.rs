//! With `--features tch`: the backward pass against PyTorch's own, in-process. The queries,
//! keys and values go to libtorch as leaf tensors, `F.scaled_dot_product_attention` runs
//! forward and backward through autograd for the same output gradient, and each gradient
//! must agree with ours within a few units in the last place of its largest entry (the two
//! add their products in different orders, so the bits differ). The log-sum-exp is checked
//! against `torch.logsumexp` of the scaled, masked scores. Run with
//! `source scripts/libtorch-env.sh` first.
#![cfg(feature = "tch")]

use ch09_flash_attention::backward::flash_attention_backward_with;
use ch09_flash_attention::kernel::{Isa, flash_attention_lse_with};
use shared::backend::torch::to_tch;
use shared::tch::{self, Device, Kind};
use shared::testing::libtorch::{assert_agrees, leaf};
use shared::{manual_seed, randn};

/// Relative to the largest entry: what float rounding in sums of a few hundred terms gives.
const RTOL: f32 = 2e-5;

#[test]
fn gradients_equal_sdpa_autograd() {
    // Lengths that do not fill the tiles, more queries than keys and fewer, d not a
    // multiple of the vector width.
    for (queries, keys, d, d_v) in
        [(130, 130, 64, 64), (70, 150, 20, 24), (150, 70, 33, 17)]
    {
        for causal in [false, true] {
            manual_seed(3);
            let q = randn(&[2, 3, queries, d]);
            let k = randn(&[2, 3, keys, d]);
            let v = randn(&[2, 3, keys, d_v]);
            let grad_out = randn(&[2, 3, queries, d_v]);
            let (tq, tk, tv) = (leaf(&q), leaf(&k), leaf(&v));
            let theirs = tch::Tensor::scaled_dot_product_attention(
                &tq,
                &tk,
                &tv,
                None::<tch::Tensor>,
                0.0,
                causal,
                None,
                false,
            );
            (&theirs * to_tch(&grad_out, Device::Cpu))
                .sum(Kind::Float)
                .backward();
            // torch.logsumexp of the scores q·kᵀ/√d, with is_causal's mask.
            let scores = tq.detach().matmul(&tk.detach().transpose(-2, -1))
                / (d as f64).sqrt();
            let scores = if causal {
                let future = tch::Tensor::ones(
                    [queries as i64, keys as i64],
                    (Kind::Bool, Device::Cpu),
                )
                .triu(1);
                scores.masked_fill(&future, f64::NEG_INFINITY)
            } else {
                scores
            };
            let theirs_lse = scores.logsumexp([-1i64].as_slice(), false);
            for isa in Isa::available() {
                let at = format!(
                    "{isa:?} {queries}x{keys}, d = {d}, d_v = {d_v}, causal = {causal}"
                );
                let (out, lse) = flash_attention_lse_with(isa, &q, &k, &v, causal);
                assert_agrees(&format!("{at}: out"), &out, &theirs, RTOL);
                assert_agrees(&format!("{at}: lse"), &lse, &theirs_lse, RTOL);
                let grads = flash_attention_backward_with(
                    isa,
                    (&q, &k, &v),
                    (&out, &lse),
                    &grad_out,
                    causal,
                );
                assert_agrees(&format!("{at}: q.grad"), &grads.q, &tq.grad(), RTOL);
                assert_agrees(&format!("{at}: k.grad"), &grads.k, &tk.grad(), RTOL);
                assert_agrees(&format!("{at}: v.grad"), &grads.v, &tv.grad(), RTOL);
            }
        }
    }
}
