//! `topk`: the `k` largest (or smallest) values along a dim, and where they are.
//!
//! Greedy decoding keeps the best token; top-k sampling keeps the best `k` and samples
//! among them. PyTorch answers ties the way its C++ library's selection algorithms happen to
//! leave them, so that order is reproduced in `kernels::gcc_order`: equal values (say, the zeros of
//! a filtered distribution) come back with PyTorch's indices.

use ndarray::{ArrayD, Axis, IxDyn};

use crate::error::{Error, Result, or_panic};
use crate::tensor::{Element, Tensor};

/// PyTorch's comparisons for `topk`: NaN counts as larger than every number.
fn goes_first(largest: bool) -> impl Fn(&(f32, i64), &(f32, i64)) -> bool {
    move |x, y| {
        if largest {
            (x.0.is_nan() && !y.0.is_nan()) || x.0 > y.0
        } else {
            (!x.0.is_nan() && y.0.is_nan()) || x.0 < y.0
        }
    }
}

/// The first `k` entries of one lane's `(value, index)` pairs after PyTorch's CPU `topk`
/// loop: a partial sort when `k` is small next to the lane (`64 k <= n`), else a selection
/// of the `k`-th entry and a sort of those before it.
fn select_lane(queue: &mut [(f32, i64)], k: usize, largest: bool, sorted: bool) {
    let less = goes_first(largest);
    if k * 64 <= queue.len() {
        crate::kernels::gcc_order::partial_sort(queue, k, &less);
    } else {
        crate::kernels::gcc_order::nth_element(queue, k - 1, &less);
        if sorted {
            // PyTorch sorts `[0, k - 1)`: the `k`-th is already in its place.
            crate::kernels::gcc_order::sort(&mut queue[..k - 1], &less);
        }
    }
}

impl Tensor {
    /// `torch.topk(t, k, dim, largest, sorted)`: the `k` largest values along `dim` (the `k`
    /// smallest when `largest` is false) and their indices, best first when `sorted`.
    ///
    /// NaN counts as larger than any number. Equal values come back in the order PyTorch's
    /// CPU kernel leaves them, which is not always by index.
    ///
    /// ```
    /// use shared::tensor;
    /// let scores = tensor!([0.1, 0.7, 0.05, 0.15]);
    /// let (values, indices) = scores.topk(2, -1, true, true);
    /// assert_eq!(indices.to_vec(), [1, 3]);
    /// assert_eq!(values.to_vec(), [0.7, 0.15]);
    /// ```
    ///
    /// # Shapes
    /// `[.., n, ..]` (`n` at `dim`) gives two tensors `[.., k, ..]`; `k <= n`. A 0-d tensor
    /// takes `k` of 0 or 1 and comes back whole, with index 0.
    pub fn f_topk(
        &self,
        k: usize,
        dim: i64,
        largest: bool,
        sorted: bool,
    ) -> Result<(Tensor, Tensor<i64>)> {
        let Some(d) = self.f_dim_index_or_scalar("topk", dim)? else {
            if k > 1 {
                return Err(k_out_of_range(k, self.sizes()));
            }
            return Ok((self.clone(), Tensor::scalar(0)));
        };
        let n = self.sizes()[d];
        if k > n {
            return Err(k_out_of_range(k, self.sizes()));
        }
        let mut values = Vec::new();
        let mut indices = Vec::new();
        let mut queue = Vec::with_capacity(n);
        if k > 0 {
            for lane in self.array().lanes(Axis(d)) {
                queue.clear();
                queue.extend(lane.iter().enumerate().map(|(j, &x)| (x, j as i64)));
                select_lane(&mut queue, k, largest, sorted);
                values.extend(queue[..k].iter().map(|&(x, _)| x));
                indices.extend(queue[..k].iter().map(|&(_, j)| j));
            }
        }
        Ok((
            place(values, self.sizes(), d, k),
            place(indices, self.sizes(), d, k),
        ))
    }

    /// Plain form of [`Tensor::f_topk`].
    #[track_caller]
    pub fn topk(
        &self,
        k: usize,
        dim: i64,
        largest: bool,
        sorted: bool,
    ) -> (Tensor, Tensor<i64>) {
        or_panic(self.f_topk(k, dim, largest, sorted))
    }
}

/// Lays out the `k` results of each lane, which came in row-major order of the other dims,
/// as a tensor of `shape` with `k` in place of the size of `dim`.
fn place<E: Element>(
    results: Vec<E>,
    shape: &[usize],
    dim: usize,
    k: usize,
) -> Tensor<E> {
    let mut lane_major = shape.to_vec();
    lane_major.remove(dim);
    lane_major.push(k);
    // `dim` was laid out last: move it back.
    let mut order: Vec<usize> = (0..shape.len() - 1).collect();
    order.insert(dim, shape.len() - 1);
    let flat = ArrayD::from_shape_vec(IxDyn(&lane_major), results)
        .expect("k results per lane");
    Tensor::from_array(
        flat.permuted_axes(IxDyn(&order))
            .as_standard_layout()
            .into_owned()
            .into_shared(),
    )
}

/// PyTorch's message for a `k` larger than the dim.
fn k_out_of_range(k: usize, shape: &[usize]) -> Error {
    Error::Shape {
        op: "topk",
        detail: format!("selected index k out of range (k = {k}, shape {shape:?})"),
    }
}
