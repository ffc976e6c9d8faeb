//! Elementwise arithmetic with broadcasting (`+ - * /` on tensors and scalars), the unary
//! functions attention needs (`exp`, `sqrt`, `pow`), comparisons that make masks, and dtype
//! conversions (`bool()`, `float()`).
//!
//! The operators work on references so tutorial code reads like PyTorch:
//! `&scores / &sums`, `&weights * &mask`, `&scores / d_k.sqrt()`. Every operation computes
//! in `f32`, one rounding per operation, as PyTorch's CPU kernels do.

use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use ndarray::{Axis, IxDyn, Zip};

use crate::backend::on_libtorch;
#[cfg(feature = "tch")]
use crate::backend::torch;
use crate::error::{Result, or_panic};
use crate::ops::broadcast::f_broadcast_shapes;
use crate::tensor::{Element, Tensor};

/// Combines two tensors element by element after broadcasting them to a common shape.
///
/// # Shapes
/// `a`, `b`: shapes that broadcast together. Returns the broadcast shape.
pub(crate) fn f_zip_with<A: Element, B: Element, O: Element>(
    op: &'static str,
    a: &Tensor<A>,
    b: &Tensor<B>,
    f: impl Fn(A, B) -> O + Sync,
) -> Result<Tensor<O>> {
    let shape = f_broadcast_shapes(op, a.sizes(), b.sizes())?;
    // Before broadcasting: ndarray refuses (panics on) a shape whose size overflows.
    crate::error::f_checked_numel(op, &shape, std::mem::size_of::<O>())?;
    // An expanded tensor's stored elements broadcast as the tensor itself does.
    let a = a
        .stored
        .broadcast(IxDyn(&shape))
        .expect("shape checked above");
    let b = b
        .stored
        .broadcast(IxDyn(&shape))
        .expect("shape checked above");
    crate::storage::f_new(op, &shape, |mut out| {
        // Row by row where both operands' rows are contiguous (a transposed view's heads,
        // a broadcast table of angles): each row is then a loop over three slices, which
        // the compiler turns into vector instructions, not a step of three pointers per
        // element. The same function of the same elements either way.
        if let Some(last) = shape.len().checked_sub(1)
            && a.strides()[last] == 1
            && b.strides()[last] == 1
        {
            let (rows, n) = (Axis(last), shape[last]);
            let zip = Zip::from(out.lanes_mut(rows))
                .and(a.lanes(rows))
                .and(b.lanes(rows));
            crate::kernels::parallel::for_each3_rows(zip, n, |o, x, y| {
                let (o, x, y) = (o.into_slice(), x.to_slice(), y.to_slice());
                let (o, x, y) = (
                    o.expect("a fresh tensor's rows are contiguous"),
                    x.expect("checked above"),
                    y.expect("checked above"),
                );
                for ((o, &x), &y) in o.iter_mut().zip(x).zip(y) {
                    *o = f(x, y);
                }
            });
            return;
        }
        let zip = Zip::from(out).and(&a).and(&b);
        crate::kernels::parallel::for_each3(zip, |o: &mut O, &x: &A, &y: &B| {
            *o = f(x, y)
        });
    })
}

impl Tensor {
    /// `torch.add(a, b)`, also `&a + &b`.
    ///
    /// # Shapes
    /// `self`, `other`: broadcastable. Returns the broadcast shape.
    pub fn f_add(&self, other: &Tensor) -> Result<Tensor> {
        on_libtorch!(|device| {
            let shape = f_broadcast_shapes("add", self.sizes(), other.sizes())?;
            torch::f_binary("add", self, other, &shape, device, |a, b| a.f_add(b))
        });
        f_zip_with("add", self, other, |x, y| x + y)
    }

    /// `torch.sub(a, b)`, also `&a - &b`.
    ///
    /// # Shapes
    /// `self`, `other`: broadcastable. Returns the broadcast shape.
    pub fn f_sub(&self, other: &Tensor) -> Result<Tensor> {
        on_libtorch!(|device| {
            let shape = f_broadcast_shapes("sub", self.sizes(), other.sizes())?;
            torch::f_binary("sub", self, other, &shape, device, |a, b| a.f_sub(b))
        });
        f_zip_with("sub", self, other, |x, y| x - y)
    }

    /// `torch.mul(a, b)`, also `&a * &b`.
    ///
    /// # Shapes
    /// `self`, `other`: broadcastable. Returns the broadcast shape.
    pub fn f_mul(&self, other: &Tensor) -> Result<Tensor> {
        on_libtorch!(|device| {
            let shape = f_broadcast_shapes("mul", self.sizes(), other.sizes())?;
            torch::f_binary("mul", self, other, &shape, device, |a, b| a.f_mul(b))
        });
        f_zip_with("mul", self, other, |x, y| x * y)
    }

    /// `torch.div(a, b)`, also `&a / &b`.
    ///
    /// # Shapes
    /// `self`, `other`: broadcastable. Returns the broadcast shape.
    pub fn f_div(&self, other: &Tensor) -> Result<Tensor> {
        on_libtorch!(|device| {
            let shape = f_broadcast_shapes("div", self.sizes(), other.sizes())?;
            torch::f_binary("div", self, other, &shape, device, |a, b| a.f_div(b))
        });
        f_zip_with("div", self, other, |x, y| x / y)
    }

    /// `torch.exp(t)`.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn exp(&self) -> Tensor {
        on_libtorch!(|device| or_panic(torch::f_unary(
            "exp",
            self,
            self.sizes(),
            device,
            |t| t.f_exp()
        )));
        // In float64, rounded once: the same bits on every platform's maths library.
        self.map(|x| (x as f64).exp() as f32)
    }

    /// `torch.sqrt(t)`.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn sqrt(&self) -> Tensor {
        self.map(f32::sqrt)
    }

    /// `t ** exponent`, with PyTorch's recipe for each exponent, so the last bit agrees:
    ///
    /// | exponent | computed as | so that |
    /// |---|---|---|
    /// | `0` | `1` | even `nan ** 0` is `1` |
    /// | `1` | `x` | a copy |
    /// | `2`, `3` | `x·x`, `(x·x)·x` | exact multiplies, no `powf` rounding |
    /// | `-1`, `-2` | `1/x`, `1/(x·x)` | |
    /// | `0.5` | `sqrt(x)` | `(-0.) ** 0.5` is `-0.`, `(-inf) ** 0.5` is `nan` |
    /// | `-0.5` | `1/sqrt(x)` | `(-0.) ** -0.5` is `-inf` |
    /// | other | `powf` in `f64`, rounded to `f32` | |
    ///
    /// (For the last row PyTorch uses a vectorised `powf` on blocks of 8 elements, which
    /// can differ from the correctly rounded value in the last bit; `0.5` takes PyTorch's
    /// `sqrt`, which may also differ by one unit in the last place on this CPU.)
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn pow(&self, exponent: f32) -> Tensor {
        match exponent {
            0.0 => self.map(|_| 1.0),
            1.0 => self.map(|x| x),
            2.0 => self.map(|x| x * x),
            3.0 => self.map(|x| x * x * x),
            -1.0 => self.map(|x| 1.0 / x),
            -2.0 => self.map(|x| 1.0 / (x * x)),
            0.5 => self.map(f32::sqrt),
            -0.5 => self.map(|x| 1.0 / x.sqrt()),
            _ => self.map(|x| (x as f64).powf(exponent as f64) as f32),
        }
    }

    /// `base ** t` with a number as the base and the tensor as the exponent (Python's
    /// `__rpow__`, `torch.pow(base, t)`): how RoPE and the sinusoidal encodings write
    /// `10000 ** (2i / d)`. Computed in `f64` and rounded once to `f32`, the correctly
    /// rounded answer. (PyTorch uses SLEEF's vectorised `powf`, within one unit in the last
    /// place; for base 10000 and the exponents `2i/d` of head sizes 8, 16, 64 and 128 the
    /// two agree exactly.)
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn rpow(&self, base: f32) -> Tensor {
        self.map(|x| (base as f64).powf(x as f64) as f32)
    }

    /// `t.bool()`: every non-zero value becomes `true` (how `mask.bool()` turns a 0/1
    /// matrix into the boolean mask `masked_fill` takes).
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn bool(&self) -> Tensor<bool> {
        self.map(|x| x != 0.0)
    }
}

impl Tensor<bool> {
    /// `mask.float()`: `true` becomes 1.0, `false` 0.0.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn float(&self) -> Tensor {
        self.map(|x| if x { 1.0 } else { 0.0 })
    }

    /// `~mask` / `mask.logical_not()`.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn logical_not(&self) -> Tensor<bool> {
        self.map(|x| !x)
    }
}

impl Tensor<i64> {
    /// `ids.float()`: the ids as `f32` values.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn float(&self) -> Tensor {
        self.map(|x| x as f32)
    }
}

impl<E: Element> Tensor<E> {
    /// `t == value` (PyTorch's `t.eq(value)`): a `bool` mask, e.g. `mask.eq_scalar(0.0)`.
    ///
    /// # Shapes
    /// Any shape; unchanged.
    pub fn eq_scalar(&self, value: E) -> Tensor<bool> {
        self.map(|x| x == value)
    }

    /// `a == b` elementwise (PyTorch's `a.eq(b)`), with broadcasting.
    ///
    /// # Shapes
    /// `self`, `other`: broadcastable. Returns the broadcast shape.
    pub fn f_eq(&self, other: &Tensor<E>) -> Result<Tensor<bool>> {
        f_zip_with("eq", self, other, |x, y| x == y)
    }

    /// Plain form of [`Tensor::f_eq`].
    #[track_caller]
    pub fn eq(&self, other: &Tensor<E>) -> Tensor<bool> {
        or_panic(self.f_eq(other))
    }
}

/// Implements one binary operator for every mix of owned and borrowed tensors and `f32`
/// scalars, all through the `f_` method, so a shape error panics with its message.
macro_rules! binary_operator {
    ($trait:ident, $method:ident, $f_method:ident, $assign_trait:ident, $assign_method:ident) => {
        impl $trait<&Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                or_panic(self.$f_method(rhs))
            }
        }
        impl $trait<Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                or_panic(self.$f_method(&rhs))
            }
        }
        impl $trait<&Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                or_panic(self.$f_method(rhs))
            }
        }
        impl $trait<Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                or_panic(self.$f_method(&rhs))
            }
        }
        // A Python float next to a float32 tensor is used as a float32 value.
        impl $trait<f32> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: f32) -> Tensor {
                self.map(|x| $trait::$method(x, rhs))
            }
        }
        impl $trait<f32> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: f32) -> Tensor {
                self.map(|x| $trait::$method(x, rhs))
            }
        }
        impl $trait<&Tensor> for f32 {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                rhs.map(|x| $trait::$method(self, x))
            }
        }
        impl $trait<Tensor> for f32 {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                rhs.map(|x| $trait::$method(self, x))
            }
        }
        /// In place, like PyTorch's `t += other`: the result must keep `self`'s shape.
        impl $assign_trait<&Tensor> for Tensor {
            #[track_caller]
            fn $assign_method(&mut self, rhs: &Tensor) {
                let result = or_panic(self.$f_method(rhs));
                if result.sizes() != self.sizes() {
                    panic!(
                        "{}: output with shape {:?} doesn't match the broadcast shape {:?}",
                        stringify!($assign_method),
                        self.sizes(),
                        result.sizes()
                    );
                }
                *self = result;
            }
        }
        impl $assign_trait<Tensor> for Tensor {
            #[track_caller]
            fn $assign_method(&mut self, rhs: Tensor) {
                $assign_trait::$assign_method(self, &rhs);
            }
        }
        impl $assign_trait<f32> for Tensor {
            fn $assign_method(&mut self, rhs: f32) {
                self.make_writable();
                self.stored.mapv_inplace(|x| $trait::$method(x, rhs));
            }
        }
    };
}

binary_operator!(Add, add, f_add, AddAssign, add_assign);
binary_operator!(Sub, sub, f_sub, SubAssign, sub_assign);
binary_operator!(Mul, mul, f_mul, MulAssign, mul_assign);
binary_operator!(Div, div, f_div, DivAssign, div_assign);

impl Neg for &Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        self.map(|x| -x)
    }
}

impl Neg for Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        -&self
    }
}

#[cfg(test)]
mod tests {
    use crate::tensor;

    #[test]
    fn broadcasts_a_row_over_a_matrix() {
        let m = tensor!([[1.0, 2.0], [3.0, 4.0]]);
        let row = tensor!([10.0, 20.0]);
        assert_eq!((&m + &row).to_vec(), vec![11.0, 22.0, 13.0, 24.0]);
        assert_eq!((&m / 2.0).to_vec(), vec![0.5, 1.0, 1.5, 2.0]);
        assert_eq!((1.0 - &m).to_vec(), vec![0.0, -1.0, -2.0, -3.0]);
    }

    #[test]
    fn rpow_puts_the_tensor_in_the_exponent() {
        let e = tensor!([0.0, 0.25, 0.5, 0.75]);
        let p = e.rpow(10000.0).to_vec();
        assert_eq!(p, vec![1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(
            tensor!([2.0, -1.0]).rpow(3.0).to_vec(),
            vec![9.0, 1.0 / 3.0]
        );
    }

    #[test]
    fn add_assign_keeps_the_shape() {
        let mut acc = tensor!([0.0, 0.0]);
        acc += &tensor!([1.0, 2.0]);
        acc += 1.0;
        assert_eq!(acc.to_vec(), vec![2.0, 3.0]);
    }

    #[test]
    #[should_panic(
        expected = "mul: the size of tensor a (3) must match the size of tensor b (2)"
    )]
    fn a_shape_error_names_the_operation() {
        let _ = &tensor!([1.0, 2.0, 3.0]) * &tensor!([1.0, 2.0]);
    }
}
