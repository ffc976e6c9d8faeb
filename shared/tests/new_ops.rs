//! Properties of the comparison, extrema, shape, split, index and einsum ops over random
//! shapes, dims and values (empty and 0-d tensors included): none panics in its `f_` form,
//! whatever the arguments, and each agrees with a simpler way to compute the same thing.

use proptest::prelude::*;
use shared::{Tensor, cat, f_einsum_n, f_where_};

/// A tensor of 0 to 3 dims, each of size 0 to 3, with values that include ties, ±0, ±inf
/// and NaN.
fn tensor() -> impl Strategy<Value = Tensor> {
    proptest::collection::vec(0usize..4, 0..4).prop_flat_map(|shape| {
        let n: usize = shape.iter().product();
        let value = prop_oneof![
            4 => (-3i32..3).prop_map(|v| v as f32),
            1 => Just(-0.0f32),
            1 => Just(f32::INFINITY),
            1 => Just(f32::NAN),
        ];
        proptest::collection::vec(value, n)
            .prop_map(move |v| Tensor::from_vec(v, &shape))
    })
}

/// An index tensor with values around the valid range (negative and too large included).
fn index() -> impl Strategy<Value = Tensor<i64>> {
    proptest::collection::vec(0usize..4, 0..4).prop_flat_map(|shape| {
        let n: usize = shape.iter().product();
        proptest::collection::vec(-1i64..4, n)
            .prop_map(move |v| Tensor::from_vec(v, &shape))
    })
}

/// A random einsum equation over a few letters, possibly malformed.
fn equation() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("i"),
            Just("j"),
            Just("k"),
            Just("..."),
            Just(","),
            Just("->"),
            Just(".")
        ],
        0..8,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn no_op_panics(x in tensor(), y in tensor(), idx in index(), dim in -4i64..4, other in -4i64..4,
                    n in 0usize..4, sizes in proptest::collection::vec(-2i64..4, 0..4),
                    eq in equation()) {
        let _ = x.f_gt(&y);
        let _ = x.f_ne(&y);
        let _ = f_where_(&x.gt_scalar(0.0), &x, &y);
        let _ = x.f_allclose(&y, 1e-5, 1e-8, true);
        let _ = x.f_maximum(&y);
        let _ = (x.f_max(), x.f_min(), x.f_argmax(), x.f_argmin());
        let _ = (x.f_max_dim(dim, true), x.f_min_dim(dim, false));
        let _ = (x.f_argmax_dim(dim, false), x.f_argmin_dim(dim, true));
        let _ = x.f_flatten(dim, other);
        let _ = x.f_expand(&sizes);
        let _ = (x.f_split(n, dim), x.f_chunk(n, dim), x.f_unbind(dim));
        let split: Vec<usize> = sizes.iter().map(|&s| s.unsigned_abs() as usize).collect();
        let _ = x.f_split_sizes(&split, dim);
        let _ = (x.f_gather(dim, &idx), x.f_index_select(dim, &idx));
        let _ = f_einsum_n(&eq, &[&x]);
        let _ = f_einsum_n(&eq, &[&x, &y]);
    }

    #[test]
    fn split_and_chunk_pieces_cat_back(x in tensor(), dim in -3i64..3, n in 1usize..4) {
        prop_assume!(x.dim() > 0 && dim < x.dim() as i64 && dim >= -(x.dim() as i64));
        for pieces in [x.split(n, dim), x.chunk(n, dim)] {
            let back = cat(&pieces, dim);
            prop_assert_eq!(back.sizes(), x.sizes());
            let same = back.to_vec().iter().zip(x.to_vec()).all(|(a, b)| a.to_bits() == b.to_bits());
            prop_assert!(same);
        }
        prop_assert!(x.chunk(n, dim).len() <= n.max(1));
    }

    #[test]
    fn argmax_points_at_the_max(x in tensor(), dim in -3i64..3) {
        prop_assume!(x.dim() > 0 && dim < x.dim() as i64 && dim >= -(x.dim() as i64));
        prop_assume!(x.size(dim) > 0);
        let (values, indices) = x.max_dim(dim, true);
        prop_assert_eq!(x.argmax_dim(dim, true).to_vec(), indices.to_vec());
        // Gathering at the indices gives the values back, NaN included.
        let gathered = x.gather(dim, &indices);
        let same = gathered.to_vec().iter().zip(values.to_vec())
            .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
        prop_assert!(same);
    }

    #[test]
    fn einsum_agrees_with_matmul_and_transpose(m in 1usize..5, k in 1usize..5, n in 1usize..5,
                                               seed in 0u64..1000) {
        shared::manual_seed(seed);
        let (a, b) = (shared::randn(&[m, k]), shared::randn(&[k, n]));
        // PyTorch's einsum is a `bmm` with a batch of 1, which is not always `mm` bit for bit
        // (a one-column `b` can take another kernel in `mm`): compare with `bmm`.
        let product = shared::einsum("ij,jk->ik", &a, &b);
        let batched = a.unsqueeze(0).bmm(&b.unsqueeze(0)).get(0);
        prop_assert_eq!(product.to_vec(), batched.to_vec());
        prop_assert_eq!(shared::einsum_n("ij->ji", &[&a]).to_vec(), a.t().contiguous().to_vec());
        let index = Tensor::from_vec((0..m as i64).rev().collect(), &[m]);
        prop_assert_eq!(a.index_select(0, &index).get(0).to_vec(), a.get(m as i64 - 1).to_vec());
    }
}

proptest! {
    /// An expanded tensor's values (copied a row at a time) are its values read one by one:
    /// rows repeated whole (a key/value head shared by a group of query heads), single
    /// values repeated along a row, and both.
    #[test]
    fn expanded_tensors_read_out_in_row_major_order(
        (a, g, c) in (0usize..4, 1usize..4, 0usize..5),
        seed in any::<u32>(),
    ) {
        let values: Vec<f32> = (0..a * c).map(|i| (i as u32 ^ seed) as f32).collect();
        let rows = Tensor::from_vec(values.clone(), &[a, 1, c]).expand([a, g, c]);
        let expected: Vec<f32> = (0..a)
            .flat_map(|i| (0..g).flat_map(move |_| 0..c).map(move |j| i * c + j))
            .map(|e| values[e])
            .collect();
        prop_assert_eq!(rows.to_vec(), expected.clone());
        prop_assert_eq!(rows.contiguous().to_vec(), expected);
        let singles = Tensor::from_vec(values.clone(), &[a * c, 1]).expand([a * c, g]);
        let expected: Vec<f32> = values.iter().flat_map(|&v| std::iter::repeat_n(v, g)).collect();
        prop_assert_eq!(singles.to_vec(), expected);
    }
}
