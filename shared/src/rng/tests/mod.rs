//! The generator's own tests. Its values are checked against real PyTorch 2.13.0 by the
//! fixture files in `tests/fixtures/`, which the `workspace-tests` package replays through the
//! one fixture decoder in `tests/src/parity/`.

mod generator;
mod multinomial;

use super::{Generator, dropout_in_place, linear_bias_bound, linear_weight_bound};

/// `torch.randn(n)` (a fresh, contiguous tensor).
fn randn(generator: &mut Generator, n: usize) -> Vec<f32> {
    normal(generator, n, 0.0, 1.0)
}

/// `torch.empty(n).normal_(mean, std)`.
fn normal(generator: &mut Generator, n: usize, mean: f64, std: f64) -> Vec<f32> {
    let mut out = vec![0.0; n];
    generator.fill_normal(&mut out, mean, std, true);
    out
}

/// `torch.empty(n).uniform_(from, to)`; `torch.rand(n)` is `uniform(.., n, 0.0, 1.0)`.
fn uniform(generator: &mut Generator, n: usize, from: f64, to: f64) -> Vec<f32> {
    let mut out = vec![0.0; n];
    generator.fill_uniform(&mut out, from, to);
    out
}

/// `nn.Linear(in_features, out_features, bias)`: the weight (row-major) and the bias, if any.
fn linear(
    generator: &mut Generator,
    in_features: usize,
    out_features: usize,
    bias: bool,
) -> (Vec<f32>, Option<Vec<f32>>) {
    let bound = linear_weight_bound(in_features);
    let weight = uniform(generator, out_features * in_features, -bound, bound);
    let bias = bias.then(|| {
        let bound = linear_bias_bound(in_features);
        uniform(generator, out_features, -bound, bound)
    });
    (weight, bias)
}

/// `nn.Dropout(p)` in training mode applied to `torch.full((n,), value)`.
fn dropout_full(generator: &mut Generator, n: usize, value: f32, p: f64) -> Vec<f32> {
    let mut values = vec![value; n];
    dropout_in_place(generator, &mut values, p);
    values
}

/// The IEEE bit patterns of `values`.
fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}
