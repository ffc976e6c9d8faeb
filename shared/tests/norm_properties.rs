//! Property tests of the activations, statistics and norms: no input makes them panic
//! (empty and 0-d tensors, NaN, infinities, any dim or normalized shape), and their results
//! have the properties that define them, checked against plain `f64` formulas.

use proptest::prelude::*;
use shared::{GeluApproximate, Tensor, manual_seed, randn};

/// Values that stress the kernels: zeros of both signs, infinities, NaN, subnormals, huge
/// and tiny numbers, and ordinary ones.
fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => -10.0f32..10.0,
        1 => prop::sample::select(vec![
            0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e-40, -1e-40,
            f32::MAX, f32::MIN, 1e30, -1e-30, 5.542594, 8.664339,
        ]),
    ]
}

/// A shape of rank 0 to 4 with sizes 0 to 4, and values for it.
fn tensor() -> impl Strategy<Value = Tensor> {
    prop::collection::vec(0usize..5, 0..5).prop_flat_map(|shape| {
        let n: usize = shape.iter().product();
        prop::collection::vec(value(), n)
            .prop_map(move |v| Tensor::from_vec(v, &shape))
    })
}

/// `n` standard normal values per row, scaled and shifted.
fn rows(rows: usize, n: usize, scale: f32, offset: f32, seed: u64) -> Vec<Vec<f32>> {
    manual_seed(seed);
    let t = randn(&[rows, n]);
    t.to_vec()
        .chunks(n)
        .map(|r| r.iter().map(|x| x * scale + offset).collect())
        .collect()
}

/// Mean and biased variance in `f64`.
fn moments(xs: &[f32]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
    (mean, var)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn no_input_makes_them_panic(
        t in tensor(),
        dim in -5i64..5,
        take in 0usize..5,
        extra in 0usize..3,
        correction in -1.0f64..3.0,
        keepdim in any::<bool>(),
        lo in value(),
        hi in value(),
    ) {
        // A normalized shape that usually fits (the last `take` dims) and sometimes not.
        let mut normalized: Vec<usize> = t.sizes()[t.dim().saturating_sub(take)..].to_vec();
        if extra == 1 { normalized.insert(0, 3); }
        let weight = Tensor::full(&normalized, 0.5);
        let _ = t.f_var_dim(Some(dim), correction, keepdim);
        let _ = t.f_std_dim(None, correction, keepdim);
        let _ = t.f_layer_norm(&normalized, Some(&weight), (extra == 2).then_some(&weight), 1e-5);
        let _ = t.f_rms_norm(&normalized, Some(&weight), None);
        let _ = t.f_clamp(Some(lo), Some(hi));
        for approximate in [GeluApproximate::None, GeluApproximate::Tanh] {
            let y = t.gelu(approximate);
            prop_assert_eq!(y.sizes(), t.sizes());
        }
        let _ = (t.relu(), t.abs(), t.tanh(), t.log(), t.var(), t.std());
    }

    #[test]
    fn layer_norm_gives_mean_zero_and_variance_one(
        n in 2usize..300, scale in 1e-2f32..1e3, offset in -100.0f32..100.0, seed in 0u64..1000,
    ) {
        for row in rows(2, n, scale, offset, seed) {
            let y = Tensor::from_vec(row.clone(), &[n]).layer_norm(&[n], None, None, 0.0).to_vec();
            let (mean, var) = moments(&y);
            prop_assert!(mean.abs() < 1e-4, "mean {mean}");
            prop_assert!((var - 1.0).abs() < 1e-3, "variance {var}");
        }
    }

    #[test]
    fn rms_norm_gives_mean_square_one(n in 1usize..300, scale in 1e-2f32..1e3, seed in 0u64..1000) {
        for row in rows(2, n, scale, 0.0, seed) {
            let y = Tensor::from_vec(row, &[n]).rms_norm(&[n], None, Some(0.0)).to_vec();
            let ms = y.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / n as f64;
            prop_assert!((ms - 1.0).abs() < 1e-5, "mean square {ms}");
        }
    }

    #[test]
    fn var_and_std_agree_with_f64(
        r in 1usize..4, n in 2usize..200, scale in 1e-3f32..1e3, offset in -1e3f32..1e3,
        seed in 0u64..1000,
    ) {
        let data = rows(r, n, scale, offset, seed);
        let t = Tensor::from_vec(data.concat(), &[r, n]);
        let var = t.var_dim(Some(-1), 1.0, false).to_vec();
        let std = t.std_dim(Some(1), 0.0, true).to_vec();
        for (i, row) in data.iter().enumerate() {
            let (_, biased) = moments(row);
            let unbiased = biased * n as f64 / (n - 1) as f64;
            prop_assert!((var[i] as f64 - unbiased).abs() <= 1e-6 * unbiased, "{} vs {unbiased}", var[i]);
            prop_assert!((std[i] as f64 - biased.sqrt()).abs() <= 1e-6 * biased.sqrt());
        }
    }

    #[test]
    fn gelu_forms_agree_and_are_odd_around_x(x in -8.0f32..8.0) {
        let t = Tensor::from_vec(vec![x, -x, x, -x], &[4]);
        for approximate in [GeluApproximate::None, GeluApproximate::Tanh] {
            let y = t.gelu(approximate).to_vec();
            // x·Φ(x) − (−x)·Φ(−x) = x·(Φ(x) + Φ(−x)) = x.
            prop_assert!((y[0] - y[1] - x).abs() <= 1e-5 * x.abs().max(1.0), "{y:?}");
        }
        let exact = t.gelu(GeluApproximate::None).to_vec()[0];
        let approx = t.gelu(GeluApproximate::Tanh).to_vec()[0];
        prop_assert!((exact - approx).abs() < 1e-3, "{exact} vs {approx}");
    }
}
