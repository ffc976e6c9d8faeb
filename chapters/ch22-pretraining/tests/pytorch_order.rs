//! Every backward in PyTorch's order agrees with its formula within a few float32 steps,
//! and every formula agrees with the derivative taken by finite differences.

use ch15_modern_layer::rope::{apply_rope, rope_tables};
use ch22_pretraining::backward::gelu::{gelu_backward, gelu_derivative};
use ch22_pretraining::backward::layer_norm::layer_norm_backward;
use ch22_pretraining::backward::rms_norm::rms_norm_backward;
use ch22_pretraining::backward::rope::rope_backward;
use ch22_pretraining::backward::silu::{silu_backward, silu_derivative};
use ch22_pretraining::clip::clip_grad_norm;
use ch22_pretraining::pytorch_order::{
    clip_grad_norm_in_pytorch_order, gelu_backward_in_pytorch_order,
    layer_norm_backward_in_pytorch_order, rms_norm_backward_in_pytorch_order,
    silu_backward_in_pytorch_order,
};
use shared::nn::{LayerNorm, RMSNorm};
use shared::{GeluApproximate, Tensor, manual_seed, randn};

/// The largest `|a − b|` over the largest `|b|`.
fn relative(a: &Tensor, b: &Tensor) -> f32 {
    let (a, b) = (a.to_vec(), b.to_vec());
    let scale = b.iter().fold(f32::MIN_POSITIVE, |m, v| m.max(v.abs()));
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
        / scale
}

fn loss_of(y: &Tensor, probe: &Tensor) -> f64 {
    y.to_vec()
        .iter()
        .zip(probe.to_vec())
        .map(|(a, b)| f64::from(*a) * f64::from(b))
        .sum()
}

/// `∂(Σ probe·f(x))/∂x[i]` by central differences in f32, for a few `i`.
fn numeric(
    f: impl Fn(&Tensor) -> Tensor,
    x: &Tensor,
    probe: &Tensor,
    i: usize,
) -> f64 {
    let h = 1e-2f32;
    let nudged = |d: f32| {
        let mut v = x.to_vec();
        v[i] += d;
        loss_of(&f(&Tensor::from_vec(v, x.sizes())), probe)
    };
    (nudged(h) - nudged(-h)) / (2.0 * f64::from(h))
}

#[test]
fn layer_norm_twins_agree_and_match_finite_differences() {
    manual_seed(1);
    for d in [5, 8, 32, 37] {
        let mut norm = LayerNorm::with_options(&[d], 1e-5, true, false);
        norm.weight = Some(randn(&[d]) * 0.5 + 1.0);
        let x = randn(&[3, 7, d]) * 2.0 + 0.5;
        let g = randn(&[3, 7, d]);
        let formula = layer_norm_backward(&norm, &x, &g);
        let ordered = layer_norm_backward_in_pytorch_order(&norm, &x, &g);
        assert!(
            relative(&ordered.input, &formula.input) < 1e-5,
            "d {d}: input"
        );
        assert!(
            relative(&ordered.weight, &formula.weight) < 1e-5,
            "d {d}: weight"
        );
        for i in [0, 3, d + 1] {
            let want = numeric(|x| norm.forward(x), &x, &g, i);
            let got = f64::from(formula.input.to_vec()[i]);
            assert!(
                (got - want).abs() < 2e-2 * want.abs().max(1.0),
                "d {d}, {i}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn rms_norm_twins_agree_and_match_finite_differences() {
    manual_seed(2);
    for d in [5, 8, 32, 37] {
        let mut norm = RMSNorm::with_options(&[d], Some(1e-6), true);
        norm.weight = Some(randn(&[d]) * 0.5 + 1.0);
        let x = randn(&[3, 7, d]);
        let g = randn(&[3, 7, d]);
        let stream = randn(&[3, 7, d]);
        let formula = rms_norm_backward(&norm, &x, &g);
        let ordered = rms_norm_backward_in_pytorch_order(&norm, &x, &g, None);
        assert!(
            relative(&ordered.input, &formula.input) < 1e-5,
            "d {d}: input"
        );
        assert!(
            relative(&ordered.weight, &formula.weight) < 1e-5,
            "d {d}: weight"
        );
        let with_stream =
            rms_norm_backward_in_pytorch_order(&norm, &x, &g, Some(&stream));
        assert!(relative(&with_stream.input, &(&stream + &formula.input)) < 1e-5);
        for i in [0, 3, d + 1] {
            let want = numeric(|x| norm.forward(x), &x, &g, i);
            let got = f64::from(formula.input.to_vec()[i]);
            assert!(
                (got - want).abs() < 2e-2 * want.abs().max(1.0),
                "d {d}, {i}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn activation_twins_agree_and_match_finite_differences() {
    manual_seed(3);
    for n in [1, 31, 32, 33, 100, 1000] {
        let x = randn(&[n]) * 3.0;
        let g = randn(&[n]);
        let gelu = gelu_backward(&x, &g);
        assert!(
            relative(&gelu_backward_in_pytorch_order(&x, &g), &gelu) < 1e-5,
            "gelu {n}"
        );
        let silu = silu_backward(&x, &g);
        assert!(
            relative(&silu_backward_in_pytorch_order(&x, &g), &silu) < 1e-5,
            "silu {n}"
        );
    }
    for x in [-4.0f32, -1.0, -0.1, 0.0, 0.3, 1.0, 2.5] {
        let h = 1e-3f32;
        let at = |v: f32| Tensor::from_vec(vec![v], &[1]);
        let gelu = |v: f32| at(v).gelu(GeluApproximate::Tanh).item();
        let want =
            (f64::from(gelu(x + h)) - f64::from(gelu(x - h))) / (2.0 * f64::from(h));
        assert!(
            (f64::from(gelu_derivative(x)) - want).abs() < 1e-2,
            "gelu' at {x}"
        );
        let silu = |v: f32| at(v).silu().item();
        let want =
            (f64::from(silu(x + h)) - f64::from(silu(x - h))) / (2.0 * f64::from(h));
        assert!(
            (f64::from(silu_derivative(x)) - want).abs() < 1e-2,
            "silu' at {x}"
        );
    }
}

#[test]
fn rope_backward_is_the_turn_back() {
    manual_seed(4);
    let (cos, sin) = rope_tables(&[0, 1, 2, 3, 4], 8, 10_000.0, false);
    let x = randn(&[2, 3, 5, 8]);
    let g = randn(&[2, 3, 5, 8]);
    let grad = rope_backward(&g, &cos, &sin);
    // A rotation keeps dot products: ⟨rope(x), g⟩ = ⟨x, rope_backward(g)⟩.
    let lhs = loss_of(&apply_rope(&x, &cos, &sin), &g);
    let rhs = loss_of(&x, &grad);
    assert!(
        (lhs - rhs).abs() < 1e-4 * lhs.abs().max(1.0),
        "{lhs} vs {rhs}"
    );
}

#[test]
fn clipping_twins_agree() {
    manual_seed(5);
    for scale in [0.01f32, 10.0] {
        let grads: Vec<Tensor> = [vec![40, 8], vec![8], vec![3, 5, 7]]
            .iter()
            .map(|s| randn(s) * scale)
            .collect();
        let (mut a, mut b) = (grads.clone(), grads);
        let na = clip_grad_norm(&mut a, 1.0);
        let nb = clip_grad_norm_in_pytorch_order(&mut b, 1.0);
        assert!((na - nb).abs() <= 1e-5 * na, "{na} vs {nb}");
        for (x, y) in a.iter().zip(&b) {
            assert!(relative(y, x) < 1e-5);
        }
    }
}
