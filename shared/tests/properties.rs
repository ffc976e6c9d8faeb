//! Property tests of the tensor operations: broadcasting against explicit index loops,
//! matmul against the textbook triple loop, softmax's defining properties, and views
//! against element-by-element copies.

use proptest::prelude::*;
use shared::{Tensor, manual_seed, rand, randn};

/// A random tensor of the given shape, drawn with a seed so failures reproduce.
fn random(shape: &[usize], seed: u64) -> Tensor {
    manual_seed(seed);
    randn(shape)
}

/// The value of a broadcast operand at an index of the broadcast shape.
fn at_broadcast(t: &Tensor, index: &[usize]) -> f32 {
    let offset = index.len() - t.dim();
    let mut own: Vec<usize> = Vec::new();
    for (d, &n) in t.sizes().iter().enumerate() {
        own.push(if n == 1 { 0 } else { index[offset + d] });
    }
    let strides: Vec<usize> = (0..t.dim())
        .map(|d| t.sizes()[d + 1..].iter().product())
        .collect();
    t.to_vec()[own.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>()]
}

/// Every multi-index of a shape, in row-major order.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut all = vec![vec![]];
    for &n in shape {
        all = all
            .into_iter()
            .flat_map(|prefix| {
                (0..n).map(move |i| {
                    let mut v = prefix.clone();
                    v.push(i);
                    v
                })
            })
            .collect();
    }
    all
}

/// A shape and a second shape that broadcasts with it (some dims set to 1, some dropped).
fn broadcastable() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    prop::collection::vec(1usize..4, 1..4).prop_flat_map(|full| {
        let n = full.len();
        (
            Just(full.clone()),
            prop::collection::vec(any::<bool>(), n),
            0..=n,
        )
            .prop_map(|(full, ones, drop)| {
                let other: Vec<usize> = full
                    .iter()
                    .zip(&ones)
                    .map(|(&d, &one)| if one { 1 } else { d })
                    .skip(drop)
                    .collect();
                (full, other)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn broadcasting_matches_index_loops((a_shape, b_shape) in broadcastable(), seed in 0u64..1000, swap in any::<bool>()) {
        let (a_shape, b_shape) = if swap { (b_shape, a_shape) } else { (a_shape, b_shape) };
        let a = random(&a_shape, seed);
        let b = random(&b_shape, seed + 1);
        let sum = &a + &b;
        let product = &a * &b;
        let out_shape = sum.sizes().to_vec();
        let (sums, products) = (sum.to_vec(), product.to_vec());
        for (flat, index) in indices(&out_shape).iter().enumerate() {
            let (x, y) = (at_broadcast(&a, index), at_broadcast(&b, index));
            prop_assert_eq!(sums[flat], x + y);
            prop_assert_eq!(products[flat], x * y);
        }
    }

    #[test]
    fn matmul_matches_the_triple_loop(m in 1usize..9, k in 1usize..9, n in 1usize..9, batch in 1usize..3, seed in 0u64..1000) {
        let a = random(&[batch, m, k], seed);
        let b = random(&[k, n], seed + 1);
        let c = a.matmul(&b);
        prop_assert_eq!(c.shape(), [batch, m, n]);
        let (av, bv, cv) = (a.to_vec(), b.to_vec(), c.to_vec());
        for p in 0..batch {
            for i in 0..m {
                for j in 0..n {
                    let exact: f64 = (0..k).map(|t| av[p * m * k + i * k + t] as f64 * bv[t * n + j] as f64).sum();
                    let scale: f64 = (0..k).map(|t| (av[p * m * k + i * k + t] as f64 * bv[t * n + j] as f64).abs()).sum();
                    let got = cv[p * m * n + i * n + j] as f64;
                    prop_assert!((got - exact).abs() <= 1e-6 * scale.max(1e-30), "{} vs {}", got, exact);
                }
            }
        }
    }

    #[test]
    fn softmax_rows_sum_to_one_and_ignore_a_shift(rows in 1usize..6, cols in 1usize..9, shift in -50.0f32..50.0, seed in 0u64..1000) {
        let scores = &random(&[rows, cols], seed) * 4.0;
        let weights = scores.softmax(-1);
        for row in weights.iter() {
            prop_assert!((row.sum().item() - 1.0).abs() < 1e-5);
            prop_assert!(row.to_vec().iter().all(|&w| (0.0..=1.0).contains(&w)));
        }
        let shifted = (&scores + shift).softmax(-1);
        for (w, s) in weights.to_vec().iter().zip(shifted.to_vec()) {
            prop_assert!((w - s).abs() < 2e-6, "{} vs {}", w, s);
        }
    }

    #[test]
    fn views_equal_copies(d0 in 1usize..5, d1 in 1usize..5, d2 in 1usize..5, seed in 0u64..1000) {
        manual_seed(seed);
        let t = rand(&[d0, d1, d2]);
        let v = t.to_vec();
        let at = |i: usize, j: usize, k: usize| v[i * d1 * d2 + j * d2 + k];
        // A row-major tensor lends its values in that order; element by element they agree.
        prop_assert_eq!(t.as_slice(), Some(&v[..]));
        for i in 0..d0 { for j in 0..d1 { for k in 0..d2 {
            prop_assert_eq!(t.get(i).get(j).get(k).item(), at(i, j, k));
        } } }
        // permute(2, 0, 1): element [k, i, j] of the view is element [i, j, k] of t.
        let p = t.permute(&[2, 0, 1]);
        let mut copy = Vec::new();
        for k in 0..d2 { for i in 0..d0 { for j in 0..d1 { copy.push(at(i, j, k)); } } }
        prop_assert_eq!(p.to_vec(), copy.clone());
        prop_assert_eq!(p.as_slice().is_some(), p.is_contiguous());
        prop_assert_eq!(p.contiguous().to_vec(), copy);
        // transpose(0, 1) and a slice of it.
        let tr = t.transpose(0, 1);
        let mut copy = Vec::new();
        for j in 0..d1 { for i in 0..d0 { for k in 0..d2 { copy.push(at(i, j, k)); } } }
        prop_assert_eq!(tr.to_vec(), copy);
        let s = tr.slice(1, 1..);
        let mut copy = Vec::new();
        for j in 0..d1 { for i in 1..d0 { for k in 0..d2 { copy.push(at(i, j, k)); } } }
        prop_assert_eq!(s.to_vec(), copy);
        // view of a contiguous tensor keeps row-major order; reshape of a view copies.
        prop_assert_eq!(t.view(&[-1]).to_vec(), v.clone());
        prop_assert_eq!(tr.reshape(&[-1]).to_vec(), tr.to_vec());
        // select(1, j) is row j of every matrix.
        let j = d1 - 1;
        let mut copy = Vec::new();
        for i in 0..d0 { for k in 0..d2 { copy.push(at(i, j, k)); } }
        prop_assert_eq!(t.select(1, j as i64).to_vec(), copy);
    }
}
