//! A mixture of experts: the feed-forward network of gpt-oss, Qwen3's MoE models,
//! Qwen3-Next and DeepSeek-V3.
//!
//! Instead of one SwiGLU network, a layer holds many (the experts) and a router that
//! scores every expert for every token. Each token is sent to its `k` best experts only
//! (dispatch), and their outputs come back weighted (combine): a model with 128 experts of
//! which 8 run for each token holds 16 times the parameters it computes with. Some models
//! add a shared expert that every token goes through.
//!
//! Two routers are in use:
//! - Qwen3 (and gpt-oss): a softmax over the experts' logits, the `k` largest
//!   probabilities kept and renormalised to sum to 1 ([`route_softmax_top_k`]);
//! - DeepSeek-V3: a sigmoid score per expert; the `k` experts are chosen by score plus a
//!   selection bias (which training moves to even out the load), and weighted by their
//!   scores without it, renormalised and scaled ([`route_sigmoid_biased`]).
//!
//! A route is a discrete choice: where two experts' scores are within a rounding error of
//! each other, that error picks the expert, and the output changes by the difference of
//! two whole networks.

use shared::nn::Linear;
use shared::{Tensor, randn};

use crate::gate::sigmoid;
use crate::swiglu::SwiGLU;

#[cfg_attr(feature = "exercise", path = "../../exercises/softmax_router.rs")]
mod softmax_router;
pub use softmax_router::route_softmax_top_k;

/// The sizes of a [`Moe`] layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoeConfig {
    /// The width of the residual stream.
    pub d_model: usize,
    /// Each expert's inner width (`moe_intermediate_size`).
    pub d_expert: usize,
    /// Routed experts.
    pub n_experts: usize,
    /// Experts per token.
    pub top_k: usize,
}

/// Where every token goes: its `k` experts and the weight of each.
#[derive(Clone, Debug)]
pub struct Route {
    /// `[tokens, k]` expert ids.
    pub experts: Tensor<i64>,
    /// `[tokens, k]` the weights their outputs are combined with.
    pub weights: Tensor,
}

/// A mixture-of-experts feed-forward network.
// ANCHOR: moe_struct
pub struct Moe {
    /// `[n_experts, d_model]`, no bias: one logit per expert.
    pub router: Linear,
    /// The routed experts, each a SwiGLU network of width `d_expert`.
    pub experts: Vec<SwiGLU>,
    /// The shared expert, which every token goes through (DeepSeek-V3, Qwen3-Next).
    pub shared_expert: SwiGLU,
    /// `[n_experts]`: DeepSeek-V3's selection bias, added to the scores to choose and
    /// left out of the weights.
    pub selection_bias: Tensor,
}
// ANCHOR_END: moe_struct

impl Moe {
    /// Draws the router, each expert, the shared expert (as `nn.Linear`, no bias), then
    /// the selection bias (`0.1 · torch.randn(n_experts)`), in that order.
    ///
    /// # Shapes
    /// Inputs of `[tokens, d_model]`.
    pub fn new(config: MoeConfig) -> Moe {
        let MoeConfig {
            d_model,
            d_expert,
            n_experts,
            ..
        } = config;
        Moe {
            router: Linear::new(d_model, n_experts, false),
            experts: (0..n_experts)
                .map(|_| SwiGLU::new(d_model, d_expert))
                .collect(),
            shared_expert: SwiGLU::new(d_model, d_expert),
            selection_bias: randn(&[n_experts]) * 0.1,
        }
    }

    /// The routed experts' outputs, combined: every expert runs once on the tokens sent
    /// to it (dispatch), and each output row is added to its token's row with the
    /// route's weight (combine), experts in order.
    ///
    /// # Shapes
    /// `x`: `[tokens, d_model]`; the route's tensors `[tokens, k]`. Returns
    /// `[tokens, d_model]`.
    // ANCHOR: dispatch_combine
    pub fn routed(&self, x: &Tensor, route: &Route) -> Tensor {
        let [tokens, d] = x.dims();
        let k = route.experts.size(1);
        let chosen: Vec<usize> = route
            .experts
            .to_vec()
            .into_iter()
            .map(|e| e as usize)
            .collect();
        let weights = route.weights.to_vec();
        let mut out = vec![0.0f32; tokens * d];
        for (e, expert) in self.experts.iter().enumerate() {
            // The (token, slot) pairs routed to expert e, in token order.
            let slots: Vec<usize> =
                (0..tokens * k).filter(|&i| chosen[i] == e).collect();
            if slots.is_empty() {
                continue;
            }
            let rows =
                Tensor::from(slots.iter().map(|&i| i / k).collect::<Vec<usize>>());
            let y = expert.forward(&x.index_select(0, &rows).unsqueeze(0));
            for (y_row, &i) in y.to_vec().chunks(d).zip(&slots) {
                let token = &mut out[i / k * d..(i / k + 1) * d];
                for (o, &value) in token.iter_mut().zip(y_row) {
                    *o += weights[i] * value;
                }
            }
        }
        Tensor::from_vec(out, &[tokens, d])
    }
    // ANCHOR_END: dispatch_combine

    /// The three experts the router scores highest for token `token` of `x`, the likeliest
    /// first.
    ///
    /// # Shapes
    /// `x`: `[tokens, d_model]`.
    pub fn likeliest(&self, x: &Tensor, token: usize) -> [usize; 3] {
        let logits = self.router.forward(x).get(token).to_vec();
        let mut order: Vec<usize> = (0..logits.len()).collect();
        order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]));
        [order[0], order[1], order[2]]
    }

    /// Replaces expert `expert`'s router row, the weights of its logit.
    ///
    /// # Shapes
    /// `row`: `[d_model]`.
    pub fn set_router_row(&mut self, expert: usize, row: &Tensor) {
        let d = row.numel();
        let mut rows = self.router.weight.to_vec();
        rows[expert * d..(expert + 1) * d].copy_from_slice(&row.to_vec());
        self.router.weight = Tensor::from_vec(rows, self.router.weight.sizes());
    }

    /// The shared expert's output.
    ///
    /// # Shapes
    /// `x`: `[tokens, d_model]`. Returns `[tokens, d_model]`.
    pub fn shared(&self, x: &Tensor) -> Tensor {
        self.shared_expert.forward(&x.unsqueeze(0)).select(0, 0)
    }
}

/// DeepSeek-V3's route: sigmoid scores, the `k` experts with the best score plus
/// `bias`, weighted by their scores alone, renormalised to sum to 1, times `scale`
/// (`routed_scaling_factor`, 2.5 in DeepSeek-V3).
///
/// # Shapes
/// `logits`: `[tokens, n_experts]`, `bias`: `[n_experts]`. Returns a route of
/// `[tokens, k]`.
// ANCHOR: route_sigmoid_biased
pub fn route_sigmoid_biased(
    logits: &Tensor,
    bias: &Tensor,
    k: usize,
    scale: f32,
) -> Route {
    let scores = sigmoid(logits);
    let (_, experts) = (&scores + bias).topk(k, -1, true, true);
    let chosen = scores.gather(-1, &experts);
    let weights = &chosen / chosen.sum_dim(-1, true) * scale;
    Route { experts, weights }
}
// ANCHOR_END: route_sigmoid_biased

/// How many tokens each of `n_experts` experts receives.
///
/// # Shapes
/// `route.experts`: `[tokens, k]`. Returns `n_experts` counts.
pub fn load(route: &Route, n_experts: usize) -> Vec<usize> {
    let mut counts = vec![0; n_experts];
    for e in route.experts.to_vec() {
        counts[e as usize] += 1;
    }
    counts
}
