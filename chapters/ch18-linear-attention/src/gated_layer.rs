//! A Gated DeltaNet layer as Qwen3-Next builds it around the recurrence: a short
//! convolution before, an RMSNorm and an output gate after.
//!
//! From the layer's normalised input `h` and its projections `q`, `k`, `v`:
//! - `q`, `k` and `v` each pass the [short convolution](crate::short_conv) and SiLU, then
//!   `q` and `k` are divided by their length;
//! - the write strength and decay come from `h`: `β_t = σ(w_β·h_t)`,
//!   `α_t = σ(w_α·h_t + 3)`;
//! - the recurrence's output `o_t` is RMS-normalised (a learned weight per feature) and
//!   multiplied by `SiLU(W_g h_t)`, the output gate, before the layer's output projection.

use ch15_modern_layer::attention::EPS;
use ch15_modern_layer::gate::sigmoid;
use shared::Tensor;
use shared::nn::{Linear, RMSNorm};

use crate::chunked_delta::gated_delta_chunked;
use crate::gated_delta::gated_delta_recurrent;
use crate::gates::{exp, l2_normalize, log_sigmoid, silu};
use crate::short_conv::ShortConv;

/// What a Gated DeltaNet layer adds to its projections of `q`, `k` and `v`.
pub struct GatedDeltaNet {
    /// `[1, d_model]`, no bias: the write strength `β_t`.
    pub w_beta: Linear,
    /// `[1, d_model]`, no bias: the decay `α_t`.
    pub w_alpha: Linear,
    /// The short convolutions of `q`, `k` and `v`.
    pub conv_query: ShortConv,
    /// See `conv_query`.
    pub conv_key: ShortConv,
    /// See `conv_query`.
    pub conv_value: ShortConv,
    /// `[d_model, d_model]`, no bias: the output gate's projection `W_g`.
    pub w_gate: Linear,
    /// The RMSNorm of the recurrence's output (chapter 15's epsilon, weight of ones).
    pub out_norm: RMSNorm,
}

impl GatedDeltaNet {
    /// Draws `W_beta`, `W_alpha`, the three convolutions and `W_gate`, in that order, from
    /// the default generator.
    ///
    /// # Shapes
    /// Inputs of `[T, d_model]`.
    pub fn new(d_model: usize) -> GatedDeltaNet {
        let w_beta = Linear::new(d_model, 1, false);
        let w_alpha = Linear::new(d_model, 1, false);
        let conv_query = ShortConv::new(d_model);
        let conv_key = ShortConv::new(d_model);
        let conv_value = ShortConv::new(d_model);
        GatedDeltaNet {
            w_beta,
            w_alpha,
            conv_query,
            conv_key,
            conv_value,
            w_gate: Linear::new(d_model, d_model, false),
            out_norm: RMSNorm::with_options(&[d_model], Some(EPS), true),
        }
    }

    /// The layer token by token, as in generation: each convolution keeps its last three
    /// inputs, the recurrence its `d × d` state.
    ///
    /// # Shapes
    /// `h`, `q`, `k`, `v`: `[T, d_model]`. Returns `[T, d_model]`.
    // ANCHOR: gated_layer
    pub fn forward(&self, h: &Tensor, q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor {
        let conv = |c: &ShortConv, x: &Tensor| silu(&c.decode(x));
        let q = l2_normalize(&conv(&self.conv_query, q));
        let k = l2_normalize(&conv(&self.conv_key, k));
        let v = conv(&self.conv_value, v);
        let (beta, log_alpha) = self.gates(h);
        let o = gated_delta_recurrent(&q, &k, &v, &exp(&log_alpha), &beta);
        self.out_norm.forward(&o) * silu(&self.w_gate.forward(h))
    }
    // ANCHOR_END: gated_layer

    /// The same layer a chunk of `chunk` tokens at a time (the convolution over the whole
    /// sequence, the recurrence in its UT form); equal to [`GatedDeltaNet::forward`] up to
    /// rounding.
    ///
    /// # Shapes
    /// `h`, `q`, `k`, `v`: `[T, d_model]`, `chunk` ≥ 1. Returns `[T, d_model]`.
    pub fn forward_chunked(
        &self,
        h: &Tensor,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        chunk: usize,
    ) -> Tensor {
        let conv = |c: &ShortConv, x: &Tensor| silu(&c.forward(x));
        let q = l2_normalize(&conv(&self.conv_query, q));
        let k = l2_normalize(&conv(&self.conv_key, k));
        let v = conv(&self.conv_value, v);
        let (beta, log_alpha) = self.gates(h);
        let o = gated_delta_chunked(&q, &k, &v, &log_alpha, &beta, chunk);
        self.out_norm.forward(&o) * silu(&self.w_gate.forward(h))
    }

    /// `β_t = σ(w_β·h_t)` and `log α_t = log σ(w_α·h_t + 3)`: the `+3` starts every decay
    /// near `σ(3) ≈ 0.95`, a memory that forgets slowly. Each dot product is a row sum of
    /// `h ⊙ w`, the formula as written.
    ///
    /// # Shapes
    /// `h`: `[T, d_model]`. Returns two `[T]`.
    fn gates(&self, h: &Tensor) -> (Tensor, Tensor) {
        let gate = |w: &Linear| (h * w.weight.get(0)).sum_dim(-1, false);
        let beta = sigmoid(&gate(&self.w_beta));
        (beta, log_sigmoid(&(gate(&self.w_alpha) + 3.0)))
    }
}
