//! Properties of the PyTorch-exact CPU kernels (softmax, log_softmax, sum, mean) that hold
//! for any input, whatever the exact bits: weights sum to about 1, log_softmax is the log of
//! softmax, a sum is close to the exact sum, and sums walk memory (a transposed view adds in
//! the same order as the matrix it views). The bit-exact checks against PyTorch are the
//! operation fixtures of the workspace tests.

use proptest::prelude::*;
use shared::cpu::{Capability, set_capability};
use shared::{Tensor, manual_seed, randn};

fn scaled(shape: &[usize], seed: u64, scale: f32) -> Tensor {
    manual_seed(seed);
    &randn(shape) * scale
}

fn capabilities() -> impl Strategy<Value = Capability> {
    prop_oneof![
        Just(Capability::Default),
        Just(Capability::Avx2),
        Just(Capability::Avx512)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn softmax_weights_sum_to_one_and_log_softmax_is_their_log(
        rows in 1usize..4, n in 1usize..70, inner in 1usize..4, seed in 0u64..1000,
        scale in prop_oneof![Just(0.01f32), Just(1.0), Just(30.0)], capability in capabilities(),
    ) {
        set_capability(Some(capability));
        let x = scaled(&[rows, n, inner], seed, scale);
        for dim in [1, -1] {
            let w = x.softmax(dim);
            let sums = w.sum_dim(dim, false).to_vec();
            prop_assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-5), "{sums:?}");
            let log_w = x.log_softmax(dim).to_vec();
            for (l, w) in log_w.iter().zip(w.to_vec()) {
                prop_assert!(*l <= 1e-6);
                if w > 1e-30 {
                    prop_assert!((l - w.ln()).abs() <= 1e-5 * l.abs().max(1.0), "{l} vs ln {w}");
                }
            }
        }
        set_capability(None);
    }

    #[test]
    fn rows_shorter_than_a_vector_do_not_depend_on_the_capability(
        n in 1usize..8, seed in 0u64..1000,
    ) {
        let x = scaled(&[3, n], seed, 3.0);
        set_capability(Some(Capability::Avx2));
        let avx2 = x.softmax(-1).to_vec();
        set_capability(Some(Capability::Avx512));
        let avx512 = x.softmax(-1).to_vec();
        set_capability(None);
        prop_assert_eq!(avx2, avx512);
    }

    #[test]
    fn sums_are_close_to_the_exact_sum_and_follow_memory(
        r in 1usize..60, c in 1usize..60, seed in 0u64..1000,
    ) {
        let x = scaled(&[r, c], seed, 10.0);
        let values = x.to_vec();
        let exact: f64 = values.iter().map(|&v| f64::from(v)).sum();
        let magnitude: f64 = values.iter().map(|&v| f64::from(v).abs()).sum();
        let total = x.sum().item();
        prop_assert!((f64::from(total) - exact).abs() <= 1e-6 * magnitude + 1e-30);
        // PyTorch walks memory: the transpose of a matrix is summed in the matrix's order.
        prop_assert_eq!(x.t().sum().item().to_bits(), total.to_bits());
        // Summing one dim of the transpose is summing the other dim of the matrix.
        prop_assert_eq!(x.t().sum_dim(1, false).to_vec(), x.sum_dim(0, false).to_vec());
        prop_assert_eq!(x.t().sum_dim(0, false).to_vec(), x.sum_dim(1, false).to_vec());
        let mean = x.mean_dim(0, true);
        prop_assert_eq!(mean.sizes(), &[1, c]);
        for (m, s) in mean.to_vec().iter().zip(x.sum_dim(0, false).to_vec()) {
            prop_assert_eq!(*m, s / r as f32);
        }
    }
}

#[test]
fn empty_and_zero_dimensional_tensors() {
    let empty = Tensor::from_vec(vec![], &[3, 0]);
    assert_eq!(empty.sum().item(), 0.0);
    assert!(empty.mean().item().is_nan());
    assert_eq!(empty.sum_dim(1, false).to_vec(), vec![0.0; 3]);
    assert!(empty.mean_dim(1, false).to_vec().iter().all(|m| m.is_nan()));
    assert_eq!(empty.softmax(0).sizes(), &[3, 0]);
    // The output starts at +0 and the sum is added to it: a sum is never -0.
    assert_eq!(Tensor::scalar(-0.0).sum().item().to_bits(), 0);
    assert_eq!(Tensor::scalar(-0.5).sum().item(), -0.5);
}

#[test]
fn large_sums_are_split_like_pytorch_threads() {
    // 40000 elements: two pieces of 20000 with two threads, one run with one.
    let x = scaled(&[40000], 7, 1.0);
    shared::set_num_threads(1);
    let one = x.sum().item();
    shared::set_num_threads(2);
    let two = x.sum().item();
    let exact: f64 = x.to_vec().iter().map(|&v| f64::from(v)).sum();
    assert!(
        (f64::from(one) - exact).abs() < 1e-2
            && (f64::from(two) - exact).abs() < 1e-2
    );
    assert_eq!(shared::get_num_threads(), 2);
}
