//! Matrix products: `dot`, `mm`, `bmm` and `matmul` with all of `torch.matmul`'s rules.
//!
//! `torch.matmul(a, b)` decides by rank:
//! - 1-D · 1-D: the dot product, a 0-d tensor;
//! - 2-D · 2-D: the matrix product `[m, k] · [k, n] = [m, n]`;
//! - a 1-D operand is treated as a matrix with one row (on the left) or one column (on the
//!   right), and that dim is removed from the result again;
//! - more dims: the last two are the matrices, the dims before them are a batch, and the two
//!   batches broadcast like elementwise shapes (`[2, 1, 6, 3] · [4, 3, 2]` gives `[2, 4, 6, 2]`).
//!
//! Which loop multiplies the matrices, and so in which order the products are added, is
//! chosen as PyTorch chooses it, so the last bits (and the printed digits) agree with
//! PyTorch's: see the crate-private `kernels::matmul`.

use ndarray::{Array, ArrayView2, ArrayViewD, ArrayViewMutD, Axis, Ix2, IxDyn};

use crate::backend::on_libtorch;
#[cfg(feature = "tch")]
use crate::backend::torch;
use crate::error::{Error, Result, or_panic, shape_list, shape_x};
use crate::kernels::dot_orders::{sdot_sum, strided_sdot_sum};
use crate::kernels::matmul as kernels;
use crate::ops::broadcast::f_broadcast_shapes;
use crate::tensor::Tensor;

impl Tensor {
    /// `torch.dot(a, b)`: the sum of elementwise products of two vectors, as a 0-d tensor.
    ///
    /// # Shapes
    /// `self`: `[n]`, `other`: `[n]`. Returns `[]`.
    pub fn f_dot(&self, other: &Tensor) -> Result<Tensor> {
        if self.dim() != 1 || other.dim() != 1 {
            return Err(Error::Shape {
                op: "dot",
                detail: format!(
                    "1D tensors expected, but got {}D and {}D tensors (shapes {} and {})",
                    self.dim(),
                    other.dim(),
                    shape_list(self.sizes()),
                    shape_list(other.sizes())
                ),
            });
        }
        if self.numel() != other.numel() {
            return Err(different_lengths("dot", self.sizes(), other.sizes()));
        }
        on_libtorch!(|device| torch::f_binary(
            "dot",
            self,
            other,
            &[],
            device,
            |a, b| a.f_dot(b)
        ));
        let a = self.array().into_dimensionality().expect("1-D");
        let b = other.array().into_dimensionality().expect("1-D");
        Ok(Tensor::scalar(dot_1d(a, b)))
    }

    /// Plain form of [`Tensor::f_dot`].
    #[track_caller]
    pub fn dot(&self, other: &Tensor) -> Tensor {
        or_panic(self.f_dot(other))
    }

    /// `torch.mm(a, b)`: the product of two matrices.
    ///
    /// # Shapes
    /// `self`: `[m, k]`, `other`: `[k, n]`. Returns `[m, n]`.
    pub fn f_mm(&self, other: &Tensor) -> Result<Tensor> {
        for (name, t) in [("self", self), ("mat2", other)] {
            if t.dim() != 2 {
                return Err(Error::Shape {
                    op: "mm",
                    detail: format!(
                        "{name} must be a matrix, got shapes {} and {}",
                        shape_list(self.sizes()),
                        shape_list(other.sizes())
                    ),
                });
            }
        }
        self.f_matmul_named("mm", other)
    }

    /// Plain form of [`Tensor::f_mm`].
    #[track_caller]
    pub fn mm(&self, other: &Tensor) -> Tensor {
        or_panic(self.f_mm(other))
    }

    /// `torch.bmm(a, b)`: one matrix product per batch entry, with no broadcasting.
    ///
    /// # Shapes
    /// `self`: `[b, m, k]`, `other`: `[b, k, n]`. Returns `[b, m, n]`.
    pub fn f_bmm(&self, other: &Tensor) -> Result<Tensor> {
        let shapes = || {
            format!(
                "(shapes {} and {})",
                shape_list(self.sizes()),
                shape_list(other.sizes())
            )
        };
        for (name, t) in [("batch1", self), ("batch2", other)] {
            if t.dim() != 3 {
                return Err(Error::Shape {
                    op: "bmm",
                    detail: format!("{name} must be a 3D tensor {}", shapes()),
                });
            }
        }
        let expected = [self.sizes()[0], self.sizes()[2]];
        if other.sizes()[..2] != expected {
            return Err(Error::Shape {
                op: "bmm",
                detail: format!(
                    "Expected size for first two dimensions of batch2 tensor to be: {} but got: \
                     {} {}",
                    shape_list(&expected),
                    shape_list(&other.sizes()[..2]),
                    shapes()
                ),
            });
        }
        self.f_matmul_named("bmm", other)
    }

    /// Plain form of [`Tensor::f_bmm`].
    #[track_caller]
    pub fn bmm(&self, other: &Tensor) -> Tensor {
        or_panic(self.f_bmm(other))
    }

    /// `torch.matmul(a, b)` (Python's `a @ b`), with all the rank rules in the module docs.
    ///
    /// ```
    /// use shared::tensor;
    /// let inputs = tensor!([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]]);
    /// let scores = inputs.matmul(&inputs.t());
    /// assert_eq!(
    ///     scores.to_string(),
    ///     "tensor([[0.9995, 0.9544],\n        [0.9544, 1.4950]])"
    /// );
    /// ```
    ///
    /// # Shapes
    /// `self`: `[..batch_a, m, k]` (or `[k]`), `other`: `[..batch_b, k, n]` (or `[k]`).
    /// Returns `[..broadcast(batch_a, batch_b), m, n]` without the dims of 1-D operands.
    pub fn f_matmul(&self, other: &Tensor) -> Result<Tensor> {
        self.f_matmul_named("matmul", other)
    }

    /// Plain form of [`Tensor::f_matmul`].
    #[track_caller]
    pub fn matmul(&self, other: &Tensor) -> Tensor {
        or_panic(self.f_matmul(other))
    }

    /// The shared engine of `matmul`, `mm` and `bmm`; `op` names the caller in errors. In
    /// steps: check the ranks, promote vectors to matrices, check the shapes and broadcast
    /// the batches, multiply (one folded product or one per batch entry), and remove the dims
    /// the promotion added.
    fn f_matmul_named(&self, op: &'static str, other: &Tensor) -> Result<Tensor> {
        f_check_ranks(op, self, other)?;
        if self.is_expanded() || other.is_expanded() {
            // A matrix whose rows or columns step by 0 is copied out first, as PyTorch
            // copies a layout its matrix kernels cannot take.
            return self
                .f_materialized(op)?
                .f_matmul_named(op, &other.f_materialized(op)?);
        }
        if self.dim() == 1 && other.dim() == 1 {
            return self
                .f_dot(other)
                .map_err(|_| different_lengths(op, self.sizes(), other.sizes()));
        }
        let (a, b) = promote_vectors(self, other);
        let shapes = f_product_shapes(op, &a, &b, self, other)?;
        crate::error::f_checked_numel(
            op,
            &shapes.out_shape(),
            std::mem::size_of::<f32>(),
        )?;
        on_libtorch!(|device| torch::f_binary(
            op,
            self,
            other,
            &shapes.out_shape(),
            device,
            |a, b| a.f_matmul(b)
        ));
        let out = if b.dim() == 2 {
            folded_product(op, &a, &b, &shapes, other.dim() == 1)?
        } else {
            batched_product(op, &a, &b, &shapes, other.dim() == 1)?
        };
        Ok(squeeze_promoted(
            Tensor::from_array(out.into_shared()),
            self,
            other,
        ))
    }
}

/// PyTorch's error when an operand is 0-d.
fn f_check_ranks(op: &'static str, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.dim() == 0 || b.dim() == 0 {
        return Err(Error::Shape {
            op,
            detail: format!(
                "both arguments to matmul need to be at least 1D, but they are {}D and {}D \
                 (shapes {} and {})",
                a.dim(),
                b.dim(),
                shape_list(a.sizes()),
                shape_list(b.sizes())
            ),
        });
    }
    Ok(())
}

/// A vector on the left is one row; a vector on the right is one column.
fn promote_vectors(a: &Tensor, b: &Tensor) -> (Tensor, Tensor) {
    let a = if a.dim() == 1 {
        a.unsqueeze(0)
    } else {
        a.clone()
    };
    let b = if b.dim() == 1 {
        b.unsqueeze(1)
    } else {
        b.clone()
    };
    (a, b)
}

/// The sizes of a product `[..batch, m, k] · [..batch, k, n]`.
struct ProductShapes {
    batch: Vec<usize>,
    m: usize,
    k: usize,
    n: usize,
}

impl ProductShapes {
    /// `[..batch, m, n]`.
    fn out_shape(&self) -> Vec<usize> {
        [self.batch.as_slice(), &[self.m, self.n]].concat()
    }
}

/// The sizes of the product of the promoted operands `a` and `b`, or PyTorch's error naming
/// the shapes the caller gave (`self_`, `other`).
fn f_product_shapes(
    op: &'static str,
    a: &Tensor,
    b: &Tensor,
    self_: &Tensor,
    other: &Tensor,
) -> Result<ProductShapes> {
    let (m, k) = (a.sizes()[a.dim() - 2], a.sizes()[a.dim() - 1]);
    let (k2, n) = (b.sizes()[b.dim() - 2], b.sizes()[b.dim() - 1]);
    let batch_a = &a.sizes()[..a.dim() - 2];
    let batch_b = &b.sizes()[..b.dim() - 2];
    if k != k2 {
        // A batch times one matrix is one product of the folded rows (see
        // `folded_product`), and PyTorch's message shows the folded shape: `[2, 3, 2] @
        // [3, 2]` says `6x2`.
        let rows = if b.dim() == 2 {
            batch_a.iter().fold(m, |r, &d| r.saturating_mul(d))
        } else {
            m
        };
        return Err(Error::Shape {
            op,
            detail: format!(
                "mat1 and mat2 shapes cannot be multiplied ({} and {})",
                shape_x(&[rows, k]),
                shape_x(&[k2, n])
            ),
        });
    }
    let batch = f_broadcast_shapes(op, batch_a, batch_b).map_err(|e| {
        let why = match &e {
            Error::Shape { detail, .. } => detail.rsplit_once(" (shapes").map(|(w, _)| w),
            _ => None,
        };
        Error::Shape {
            op,
            detail: format!(
                "the batch dims {} and {} of shapes {} and {} cannot be broadcast together: {}",
                shape_list(batch_a),
                shape_list(batch_b),
                shape_list(self_.sizes()),
                shape_list(other.sizes()),
                why.unwrap_or("they differ")
            ),
        }
    })?;
    Ok(ProductShapes { batch, m, k, n })
}

/// A batch times one matrix, folded into one 2-D product as PyTorch does:
/// `[..batch, m, k]` is viewed as `[batch·m, k]` (also when `k` is 0: every product is then
/// an empty sum, 0).
fn folded_product(
    op: &'static str,
    a: &Tensor,
    b: &Tensor,
    shapes: &ProductShapes,
    b_is_vector: bool,
) -> Result<Array<f32, IxDyn>> {
    let out_shape = shapes.out_shape();
    let rows = shapes.batch.iter().product::<usize>() * shapes.m;
    let folded = a.reshape(&[rows as i64, shapes.k as i64]);
    let a2 = folded.array().into_dimensionality::<Ix2>().expect("2-D");
    let b2 = b.array().into_dimensionality::<Ix2>().expect("2-D");
    let zeros = crate::storage::f_zeros_in_parallel(op, &out_shape)?;
    let mut c =
        Array::from_shape_vec((rows, shapes.n), zeros).expect("rows × n zeros");
    let order = kernels::mkl_order(a2.view(), b2.view(), b_is_vector);
    kernels::matmul_into(order, a2, b2, c.view_mut());
    Ok(c.into_shape_with_order(IxDyn(&out_shape))
        .expect("same element count"))
}

/// One product per batch entry, the batches broadcast against each other.
fn batched_product(
    op: &'static str,
    a: &Tensor,
    b: &Tensor,
    shapes: &ProductShapes,
    b_is_vector: bool,
) -> Result<Array<f32, IxDyn>> {
    let ProductShapes { batch, m, k, n } = shapes;
    let (m, k, n) = (*m, *k, *n);
    let a_view = a
        .stored
        .broadcast(IxDyn(&[batch.as_slice(), &[m, k]].concat()))
        .expect("batch broadcast checked");
    let b_view = b
        .stored
        .broadcast(IxDyn(&[batch.as_slice(), &[k, n]].concat()))
        .expect("batch broadcast checked");
    let out_shape = shapes.out_shape();
    let zeros = crate::storage::f_zeros_in_parallel(op, &out_shape)?;
    let mut out =
        Array::from_shape_vec(IxDyn(&out_shape), zeros).expect("the product's zeros");
    // Batched products of small matrices run PyTorch's own `bmm` loop.
    let order = |a2: ArrayView2<f32>, b2: ArrayView2<f32>| {
        if k.saturating_mul(m * n) < kernels::SMALL_BMM_LIMIT {
            kernels::Order::Plain
        } else {
            kernels::mkl_order(a2, b2, b_is_vector)
        }
    };
    if let Some((a_rows, b_shared, c_rows)) =
        shared_right_matrices(&a_view, &b_view, out.view_mut(), m, b_is_vector)
    {
        // Each row keeps the order it has as a one-row product alone.
        crate::kernels::batched::batched_into(
            a_rows,
            b_shared,
            c_rows,
            |a2, b2, c2| {
                let order = order(a2.slice(ndarray::s![..1, ..]), b2);
                kernels::rows_alone_into(order, a2, b2, c2);
            },
        );
        return Ok(out);
    }
    // Each matrix keeps its order of additions, on whichever thread multiplies it.
    crate::kernels::batched::batched_into(
        a_view,
        b_view,
        out.view_mut(),
        |a2, b2, c2| {
            kernels::matmul_into(order(a2.view(), b2.view()), a2, b2, c2);
        },
    );
    Ok(out)
}

/// One-row products whose right matrix is the same along the last batch dim (a cached key
/// or value head broadcast to the query heads that share it), regrouped as one matrix of
/// those rows times the shared matrix, or `None` for any other batch.
///
/// # Shapes
/// `a`: `[..batch, 1, k]`, `b`: `[..batch, k, n]` with stride 0 along the last batch dim
/// `r`, `c`: `[..batch, 1, n]`. Returns `[..rest, r, k]`, `[..rest, k, n]`, `[..rest, r, n]`
/// (`rest` the other batch dims, or `[1]` if there are none).
fn shared_right_matrices<'a>(
    a: &ArrayViewD<'a, f32>,
    b: &ArrayViewD<'a, f32>,
    c: ArrayViewMutD<'a, f32>,
    m: usize,
    b_is_vector: bool,
) -> Option<(
    ArrayViewD<'a, f32>,
    ArrayViewD<'a, f32>,
    ArrayViewMutD<'a, f32>,
)> {
    let last = a.ndim().checked_sub(3)?;
    if m != 1 || b_is_vector || a.shape()[last] < 2 || b.strides()[last] != 0 {
        return None;
    }
    let mut a_rows = a.clone().index_axis_move(Axis(last + 1), 0);
    let mut b_shared = b.clone().index_axis_move(Axis(last), 0);
    let mut c_rows = c.index_axis_move(Axis(last + 1), 0);
    if last == 0 {
        a_rows = a_rows.insert_axis(Axis(0));
        b_shared = b_shared.insert_axis(Axis(0));
        c_rows = c_rows.insert_axis(Axis(0));
    }
    Some((a_rows, b_shared, c_rows))
}

/// Removes the dims that the promotion of 1-D operands added.
fn squeeze_promoted(mut result: Tensor, a: &Tensor, b: &Tensor) -> Tensor {
    if b.dim() == 1 {
        result = result.squeeze_dim(-1);
    }
    if a.dim() == 1 {
        result = result.squeeze_dim(-2);
    }
    result
}

/// PyTorch's error for two vectors of different lengths.
fn different_lengths(op: &'static str, a: &[usize], b: &[usize]) -> Error {
    Error::Shape {
        op,
        detail: format!(
            "inconsistent tensor size, expected tensor {} and src {} to have the same number of \
             elements, but got {} and {} elements respectively",
            shape_list(a),
            shape_list(b),
            a[0],
            b[0]
        ),
    }
}

/// `Σ a[i]·b[i]` in MKL's `sdot` order: for two contiguous vectors
/// [`sdot_sum`], otherwise [`strided_sdot_sum`].
fn dot_1d(a: ndarray::ArrayView1<f32>, b: ndarray::ArrayView1<f32>) -> f32 {
    match (a.as_slice(), b.as_slice()) {
        (Some(a), Some(b)) => sdot_sum(a, b),
        _ => strided_sdot_sum(a.iter().copied().zip(b.iter().copied())),
    }
}

#[cfg(test)]
mod tests {
    use crate::{ones, tensor};

    #[test]
    fn rank_rules() {
        let m = ones(&[6, 3]);
        assert_eq!(m.matmul(&ones(&[3, 2])).shape(), [6, 2]);
        assert_eq!(m.matmul(&ones(&[3])).shape(), [6]);
        assert_eq!(ones(&[6]).matmul(&m).shape(), [3]);
        assert_eq!(ones(&[3]).matmul(&ones(&[3])).shape(), [0usize; 0]);
        assert_eq!(
            ones(&[2, 1, 6, 3]).matmul(&ones(&[4, 3, 2])).shape(),
            [2, 4, 6, 2]
        );
    }

    #[test]
    fn small_product() {
        let a = tensor!([[1.0, 2.0], [3.0, 4.0]]);
        let b = tensor!([[5.0, 6.0], [7.0, 8.0]]);
        assert_eq!(a.matmul(&b).to_vec(), vec![19.0, 22.0, 43.0, 50.0]);
        assert_eq!(a.matmul(&b.t()).to_vec(), vec![17.0, 23.0, 39.0, 53.0]);
    }

    #[test]
    fn errors_name_both_shapes() {
        let err = ones(&[6, 3])
            .f_matmul(&ones(&[2, 2]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "matmul: mat1 and mat2 shapes cannot be multiplied (6x3 and 2x2)"
        );
        let err = ones(&[3]).f_dot(&ones(&[2])).unwrap_err().to_string();
        assert_eq!(
            err,
            "dot: inconsistent tensor size, expected tensor [3] and src [2] to have the same \
             number of elements, but got 3 and 2 elements respectively"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// The query heads that share a cached head (`[b, kv, rep, 1, k]` times the
        /// head broadcast along `rep`) go through the shared matrix together: each head
        /// has the bits of its own one-row product, for the scores (`Kᵀ`, a transposed
        /// view) and for the values.
        #[test]
        fn heads_sharing_a_matrix_keep_their_own_products_bits(
            kv in 1usize..=3,
            rep in 2usize..=4,
            k in proptest::sample::select(vec![1usize, 5, 8, 20, 64, 130]),
            n in 1usize..=70,
            transposed in proptest::bool::ANY,
            seed in 0u64..1000,
        ) {
            crate::manual_seed(seed);
            let q = crate::randn(&[1, kv, rep, 1, k]);
            let b = if transposed {
                crate::randn(&[1, kv, 1, n, k]).transpose(-2, -1)
            } else {
                crate::randn(&[1, kv, 1, k, n])
            };
            let together = q.matmul(&b);
            for h in 0..kv {
                let b_h = b.select(1, h);
                for r in 0..rep {
                    // One query head alone: a batch of one, nothing shared.
                    let alone = q.select(1, h).select(1, r).matmul(&b_h.select(1, 0));
                    let got = together.select(1, h).select(1, r).to_vec();
                    let want = alone.to_vec();
                    for (j, (g, w)) in got.iter().zip(&want).enumerate() {
                        let ulps = (i64::from(g.to_bits() as i32) - i64::from(w.to_bits() as i32)).abs();
                        proptest::prop_assert!(
                            ulps == 0,
                            "head {} of {}, query {}, output {}: {} against {} ({} ulps)",
                            h, kv, r, j, g, w, ulps
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn an_empty_inner_dim_gives_zeros() {
        let c = ones(&[2, 0]).matmul(&ones(&[0, 3]));
        assert_eq!(c.shape(), [2, 3]);
        assert!(c.to_vec().iter().all(|x| x.to_bits() == 0));
        assert_eq!(ones(&[4, 2, 0]).matmul(&ones(&[0, 3])).shape(), [4, 2, 3]);
        assert_eq!(ones(&[0]).dot(&ones(&[0])).item().to_bits(), 0);
    }
}
