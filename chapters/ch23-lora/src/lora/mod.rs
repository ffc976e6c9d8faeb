//! A low-rank adapter (Hu et al., 2021, "LoRA: Low-Rank Adaptation of Large Language
//! Models"): beside a frozen projection `W` (`d_out × d_in`), two small matrices,
//! `A` (`r × d_in`) and `B` (`d_out × r`), and the layer computes
//! `W x + (alpha / r) · B A x`. Only `A` and `B` learn: `r · (d_in + d_out)` numbers
//! instead of `d_out · d_in`.
//!
//! `A` starts random (as `nn.Linear` draws its weight, `kaiming_uniform_(a = √5)`) and `B`
//! at zero, so the adapted model starts as the model itself; the first step moves `B` alone
//! (the gradient of `A` goes through `B`, which is zero).

use ch10_backward::linear::LinearGrads;
use ch19_induction_heads::arithmetic::Arithmetic;
use shared::Tensor;
use shared::nn::Linear;

#[cfg_attr(feature = "exercise", path = "../../exercises/lora_grads.rs")]
mod grads;

/// One adapter beside one projection.
// ANCHOR: lora
#[derive(Clone, Debug)]
pub struct Lora {
    /// `[r, d_in]`: from the input down to `r` numbers.
    pub a: Tensor,
    /// `[d_out, r]`: from those `r` numbers up to the output.
    pub b: Tensor,
    /// `alpha / r`.
    pub scale: f32,
}
// ANCHOR_END: lora

/// The gradients of an adapter's two matrices.
#[derive(Clone, Debug)]
pub struct LoraGrads {
    /// `[r, d_in]`.
    pub a: Tensor,
    /// `[d_out, r]`.
    pub b: Tensor,
}

/// The gradients of an adapted projection: its input's, by the frozen weight and by the
/// adapter, and the adapter's own (none where the projection has no adapter).
#[derive(Clone, Debug)]
pub struct ProjectionGrads {
    /// `grad_y · W`, the frozen weight's way back.
    pub through_weight: Tensor,
    /// `scale · grad_y · B · A`, the adapter's way back, and its two gradients.
    pub adapter: Option<(Tensor, LoraGrads)>,
}

impl Lora {
    /// A new adapter of rank `rank`: `A` drawn from the default generator as `nn.Linear`
    /// draws a `[rank, d_in]` weight (`kaiming_uniform_(a = √5)`, bound `1/√d_in`), `B` zero.
    ///
    /// # Shapes
    /// Inputs of `[.., d_in]`, outputs of `[.., d_out]`.
    // ANCHOR: new
    pub fn new(d_in: usize, d_out: usize, rank: usize, alpha: f64) -> Lora {
        Lora {
            a: Linear::new(d_in, rank, false).weight,
            b: shared::zeros(&[d_out, rank]),
            scale: (alpha / rank as f64) as f32,
        }
    }
    // ANCHOR_END: new

    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.a.size(0)
    }

    /// What the adapter adds to the projection's output: `scale · B (A x)`, in PEFT's order
    /// (`lora_B(lora_A(x)) * scaling`).
    ///
    /// # Shapes
    /// `x`: `[.., d_in]`. Returns `[.., d_out]`.
    // ANCHOR: delta
    pub fn delta(&self, x: &Tensor) -> Tensor {
        x.matmul(&self.a.t()).matmul(&self.b.t()) * self.scale
    }
    // ANCHOR_END: delta

    /// The adapted projection: `W x + scale · B A x`, the adapter beside the weight.
    ///
    /// # Shapes
    /// `x`: `[.., d_in]`. Returns `[.., d_out]`.
    // ANCHOR: forward
    pub fn forward(&self, base: &Linear, x: &Tensor) -> Tensor {
        base.forward(x) + self.delta(x)
    }
    // ANCHOR_END: forward

    /// The weight with the adapter merged in: `W + scale · B A`, one matrix that computes
    /// what the two side by side compute, with nothing added at inference.
    ///
    /// # Shapes
    /// `w`: `[d_out, d_in]`. Returns `[d_out, d_in]`.
    // ANCHOR: merged
    pub fn merged(&self, w: &Tensor) -> Tensor {
        w + &(self.b.matmul(&self.a) * self.scale)
    }
    // ANCHOR_END: merged
}

/// The backward of `y = W x + scale · B A x` (or of `W x` alone when `lora` is `None`),
/// given `grad_y`, with the arithmetic `Ar`: the input's gradient by both ways, and the
/// gradients of `A` and `B`; never the frozen `W`'s, which nothing would use.
///
/// # Shapes
/// `x`: `[.., d_in]`, `grad_y`: `[.., d_out]`.
// ANCHOR: projection_backward
pub fn projection_backward<Ar: Arithmetic>(
    base: &Linear,
    lora: Option<&Lora>,
    x: &Tensor,
    grad_y: &Tensor,
) -> ProjectionGrads {
    let through_weight = grad_y
        .flatten(0, -2)
        .matmul(&base.weight)
        .reshape(x.sizes());
    let adapter = lora.map(|lora| {
        let down = Linear::from_parameters(lora.a.clone(), None);
        let up = Linear::from_parameters(lora.b.clone(), None);
        let grad_up = grad_y * lora.scale; // the scale's backward
        let LinearGrads {
            weight: b,
            input: grad_down,
            ..
        } = Ar::linear_backward(&up, &down.forward(x), &grad_up);
        let LinearGrads {
            weight: a, input, ..
        } = Ar::linear_backward(&down, x, &grad_down);
        (input, LoraGrads { a, b })
    });
    ProjectionGrads {
        through_weight,
        adapter,
    }
}
// ANCHOR_END: projection_backward

impl ProjectionGrads {
    /// The input's gradients, the adapter's first (autograd runs the later-made use of
    /// the input first: `lora_A(x)` was made after `W x`).
    pub fn input_terms(&self) -> Vec<&Tensor> {
        let mut terms: Vec<&Tensor> = self.adapter.iter().map(|(g, _)| g).collect();
        terms.push(&self.through_weight);
        terms
    }
}
