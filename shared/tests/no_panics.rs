//! No public operation panics, whatever its input: random shapes (empty and 0-d ones
//! included), random dims and positions (negative and out of range ones included), sizes
//! whose product overflows, and values with zeros, infinities and NaNs. Every `f_` form
//! returns `Ok` or `Err`; every plain form either returns or panics with exactly the message
//! its `f_` form returns.
//!
//! To cover a new operation, add one line to [`checked_ops`] (and to [`plain_ops`] if it
//! has a plain form that can panic).

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use proptest::prelude::*;
use proptest::test_runner::Config;
use shared::nn::{Dropout, Embedding, Linear};
use shared::{Tensor, manual_seed};

/// Everything one call of an operation may need, drawn at random.
#[derive(Debug, Clone)]
struct Input {
    a: Tensor,
    b: Tensor,
    mask: Tensor<bool>,
    ids: Tensor<i64>,
    dim: i64,
    dim2: i64,
    int: i64,
    int2: i64,
    size: usize,
    size2: usize,
    /// A shape argument (`view`, `permute`) with `-1`s and sizes that overflow.
    shape: Vec<i64>,
    /// A list of sizes (`zeros`, `repeat`) with sizes that overflow.
    sizes: Vec<usize>,
    value: f32,
    flag: bool,
}

/// The error message of an `f_` form, or `None` if it returned a value.
fn message<T>(result: shared::Result<T>) -> Option<String> {
    result.err().map(|e| e.to_string())
}

type Checked = fn(&Input) -> Option<String>;
type Plain = fn(&Input);

/// Every `f_` form (and the operations that cannot fail, which must not panic either).
fn checked_ops() -> Vec<(&'static str, Checked)> {
    vec![
        ("from_vec", |x| {
            message(Tensor::f_from_vec(x.a.to_vec(), &x.sizes))
        }),
        ("size", |x| message(x.a.f_size(x.dim))),
        ("item", |x| message(x.a.f_item())),
        ("set", |x| message(x.a.clone().f_set(&x.sizes, x.value))),
        ("zeros", |x| message(shared::f_zeros(&x.sizes))),
        ("ones", |x| message(shared::f_ones(&x.sizes))),
        ("empty", |x| message(shared::f_empty(&x.sizes))),
        ("full", |x| message(Tensor::f_full(&x.sizes, x.value))),
        ("rand", |x| message(shared::f_rand(&x.sizes))),
        ("randn", |x| message(shared::f_randn(&x.sizes))),
        ("arange int", |x| {
            message(shared::f_arange(x.int, x.int2, x.dim))
        }),
        ("arange float", |x| {
            message(shared::f_arange(
                x.value as f64,
                x.int as f64,
                x.dim as f64 / 4.0,
            ))
        }),
        ("transpose", |x| message(x.a.f_transpose(x.dim, x.dim2))),
        ("t", |x| message(x.a.f_t())),
        ("permute", |x| message(x.a.f_permute(&x.shape))),
        ("view", |x| message(x.a.f_view(&x.shape))),
        ("view of a transpose", |x| {
            message(x.a.t_or_self().f_view(&x.shape))
        }),
        ("reshape", |x| message(x.a.f_reshape(&x.shape))),
        ("select", |x| message(x.a.f_select(x.dim, x.int))),
        ("slice", |x| message(x.a.f_slice(x.dim, x.int..x.int2))),
        ("slice from", |x| message(x.a.f_slice(x.dim, x.int..))),
        ("narrow", |x| message(x.a.f_narrow(x.dim, x.int, x.size))),
        ("unsqueeze", |x| message(x.a.f_unsqueeze(x.dim))),
        ("squeeze", |x| Some(x.a.squeeze().to_string())),
        ("squeeze_dim", |x| message(x.a.f_squeeze_dim(x.dim))),
        ("iter", |x| message(x.a.f_iter().map(|i| i.count()))),
        ("contiguous", |x| {
            Some(x.a.t_or_self().contiguous().to_string())
        }),
        ("triu", |x| message(x.a.f_triu(x.int))),
        ("tril", |x| message(x.a.f_tril(x.int))),
        ("masked_fill", |x| {
            message(x.a.f_masked_fill(&x.mask, x.value))
        }),
        ("masked_fill_", |x| {
            message(x.a.clone().f_masked_fill_(&x.mask, x.value).map(|_| ()))
        }),
        ("cat", |x| message(shared::f_cat(&[&x.a, &x.b], x.dim))),
        ("cat of none", |x| {
            message(shared::f_cat::<f32, Tensor>(&[], x.dim))
        }),
        ("stack", |x| message(shared::f_stack(&[&x.a, &x.b], x.dim))),
        ("repeat", |x| message(x.a.f_repeat(&x.sizes))),
        ("expand", |x| message(x.a.f_expand(&x.shape))),
        ("randint", |x| {
            message(shared::f_randint(x.int, x.int2, &x.sizes))
        }),
        ("eye_m", |x| message(shared::f_eye_m(x.size, x.size2))),
        ("split_sizes", |x| {
            message(x.a.f_split_sizes(&x.sizes, x.dim))
        }),
        ("maximum", |x| message(x.a.f_maximum(&x.b))),
        ("minimum", |x| message(x.a.f_minimum(&x.b))),
        ("where", |x| message(shared::f_where_(&x.mask, &x.a, &x.b))),
        ("outer", |x| message(x.a.f_outer(&x.b))),
        ("polar", |x| message(shared::f_polar(&x.a, &x.b))),
        ("dot", |x| message(x.a.f_dot(&x.b))),
        ("mm", |x| message(x.a.f_mm(&x.b))),
        ("bmm", |x| message(x.a.f_bmm(&x.b))),
        ("matmul", |x| message(x.a.f_matmul(&x.b))),
        ("add", |x| message(x.a.f_add(&x.b))),
        ("sub", |x| message(x.a.f_sub(&x.b))),
        ("mul", |x| message(x.a.f_mul(&x.b))),
        ("div", |x| message(x.a.f_div(&x.b))),
        ("eq", |x| message(x.a.f_eq(&x.b))),
        ("scalar arithmetic", |x| {
            Some((&(&x.a * x.value) - x.value).to_string())
        }),
        ("unary", |x| {
            Some(format!("{} {} {}", x.a.exp(), x.a.sqrt(), -&x.a))
        }),
        ("pow", |x| Some(x.a.pow(x.value).to_string())),
        ("dtypes", |x| {
            Some(format!("{} {}", x.a.bool().float(), x.ids.float()))
        }),
        ("softmax", |x| message(x.a.f_softmax(x.dim))),
        ("sum", |x| Some(format!("{} {}", x.a.sum(), x.a.mean()))),
        ("sum_dim", |x| message(x.a.f_sum_dim(x.dim, x.flag))),
        ("mean_dim", |x| message(x.a.f_mean_dim(x.dim, x.flag))),
        ("max", |x| message(x.a.f_max())),
        ("max_dim", |x| message(x.a.f_max_dim(x.dim, x.flag))),
        ("einsum", |x| {
            message(shared::f_einsum(
                EQUATIONS[x.size % EQUATIONS.len()],
                &x.a,
                &x.b,
            ))
        }),
        ("Linear::f_new", |x| {
            message(Linear::f_new(x.size, x.size2, x.flag))
        }),
        ("Linear forward", |x| {
            message(
                Linear::f_from_parameters(x.a.clone(), Some(x.b.clone()))
                    .and_then(|l| l.f_forward(&x.b)),
            )
        }),
        ("Embedding::f_new", |x| {
            message(Embedding::f_new(x.size, x.size2))
        }),
        ("Embedding forward", |x| {
            message(
                Embedding {
                    weight: x.a.clone(),
                }
                .f_forward(&x.ids),
            )
        }),
        ("Dropout", |x| {
            message(Dropout::f_new(x.value as f64).map(|d| d.forward(&x.a)))
        }),
        ("print", |x| {
            Some(format!("{} {:?} {} {}", x.a, x.mask, x.ids, x.a.shape()))
        }),
    ]
}

/// The plain forms, each next to its `f_` form: a panic must carry the `f_` form's message.
fn plain_ops() -> Vec<(&'static str, Plain, Checked)> {
    vec![
        (
            "zeros",
            |x| drop(shared::zeros(&x.sizes)),
            |x| message(shared::f_zeros(&x.sizes)),
        ),
        (
            "arange",
            |x| drop(shared::arange(x.int, x.int2, x.dim)),
            |x| message(shared::f_arange(x.int, x.int2, x.dim)),
        ),
        (
            "view",
            |x| drop(x.a.view(&x.shape)),
            |x| message(x.a.f_view(&x.shape)),
        ),
        (
            "reshape",
            |x| drop(x.a.reshape(&x.shape)),
            |x| message(x.a.f_reshape(&x.shape)),
        ),
        (
            "narrow",
            |x| drop(x.a.narrow(x.dim, x.int, x.size)),
            |x| message(x.a.f_narrow(x.dim, x.int, x.size)),
        ),
        (
            "slice",
            |x| drop(x.a.slice(x.dim, x.int..x.int2)),
            |x| message(x.a.f_slice(x.dim, x.int..x.int2)),
        ),
        (
            "select",
            |x| drop(x.a.select(x.dim, x.int)),
            |x| message(x.a.f_select(x.dim, x.int)),
        ),
        (
            "transpose",
            |x| drop(x.a.transpose(x.dim, x.dim2)),
            |x| message(x.a.f_transpose(x.dim, x.dim2)),
        ),
        (
            "unsqueeze",
            |x| drop(x.a.unsqueeze(x.dim)),
            |x| message(x.a.f_unsqueeze(x.dim)),
        ),
        (
            "size",
            |x| _ = x.a.size(x.dim),
            |x| message(x.a.f_size(x.dim)),
        ),
        (
            "repeat",
            |x| drop(x.a.repeat(&x.sizes)),
            |x| message(x.a.f_repeat(&x.sizes)),
        ),
        (
            "cat",
            |x| drop(shared::cat(&[&x.a, &x.b], x.dim)),
            |x| message(shared::f_cat(&[&x.a, &x.b], x.dim)),
        ),
        (
            "stack",
            |x| drop(shared::stack(&[&x.a, &x.b], x.dim)),
            |x| message(shared::f_stack(&[&x.a, &x.b], x.dim)),
        ),
        (
            "masked_fill",
            |x| drop(x.a.masked_fill(&x.mask, x.value)),
            |x| message(x.a.f_masked_fill(&x.mask, x.value)),
        ),
        (
            "matmul",
            |x| drop(x.a.matmul(&x.b)),
            |x| message(x.a.f_matmul(&x.b)),
        ),
        (
            "&a + &b",
            |x| drop(&x.a + &x.b),
            |x| message(x.a.f_add(&x.b)),
        ),
        (
            "softmax",
            |x| drop(x.a.softmax(x.dim)),
            |x| message(x.a.f_softmax(x.dim)),
        ),
    ]
}

/// Equations `einsum` is tried with (any shapes go with each).
const EQUATIONS: &[&str] = &[
    "ij,jk->ik",
    "i,i->",
    "bij,bjk->bik",
    "ij,ij->ij",
    "sd,hde->hse",
    "i,j->ij",
];

/// A transposed view for tensors of 2 or more dims (not contiguous), else the tensor.
trait TransposeOrSelf {
    fn t_or_self(&self) -> Tensor;
}

impl TransposeOrSelf for Tensor {
    fn t_or_self(&self) -> Tensor {
        if self.dim() >= 2 {
            self.transpose(0, -1)
        } else {
            self.clone()
        }
    }
}

/// Sizes: mostly small (0 included), sometimes so large that products overflow.
fn size() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0usize..4, 1 => Just(1usize << 62), 1 => Just(usize::MAX)]
}

/// Integers for dims and positions: around 0, and the extremes.
fn int() -> impl Strategy<Value = i64> {
    prop_oneof![8 => -5i64..5, 1 => Just(i64::MIN), 1 => Just(i64::MAX)]
}

fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => -3.0f32..3.0,
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(f32::NAN),
        1 => prop::sample::select(vec![0.5f32, -0.5, 1.0, 2.0, 3.0, -1.0, -2.0]),
    ]
}

/// A shape of rank 0 to 4 with sizes 0 to 3.
fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..4, 0..5)
}

/// A tensor of a shape, filled from `value()`, sometimes as a transposed (non-contiguous) view.
fn tensor_of(shape: Vec<usize>) -> impl Strategy<Value = Tensor> {
    let n: usize = shape.iter().product();
    (prop::collection::vec(value(), n), any::<bool>()).prop_map(
        move |(values, transposed)| {
            let t = Tensor::from_vec(values, &shape);
            if transposed && t.dim() >= 2 {
                // The transpose of the transpose: same shape, but reached through a view.
                t.transpose(0, -1).contiguous().transpose(0, -1)
            } else {
                t
            }
        },
    )
}

/// Two shapes: unrelated, equal, or fitting together as matrices (`[.., m, k]`, `[.., k, n]`).
fn two_shapes() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    (shape(), shape(), 0..3u8).prop_map(|(a, b, how)| match how {
        0 => (a, b),
        1 => (a.clone(), a),
        _ => {
            let mut b = b;
            // `b`'s second-to-last dim (or its only one) takes `a`'s last size.
            if let (Some(&k), false) = (a.last(), b.is_empty()) {
                let at = b.len().saturating_sub(2);
                b[at] = k;
            }
            (a, b)
        }
    })
}

fn input() -> impl Strategy<Value = Input> {
    (two_shapes(), shape())
        .prop_flat_map(|((sa, sb), sm)| {
            let nm: usize = sm.iter().product();
            let ids_shape = sm.clone();
            (
                tensor_of(sa),
                tensor_of(sb),
                prop::collection::vec(any::<bool>(), nm)
                    .prop_map(move |m| Tensor::from_vec(m, &sm)),
                prop::collection::vec(-2i64..5, nm)
                    .prop_map(move |v| Tensor::from_vec(v, &ids_shape)),
                (int(), int(), int(), int()),
                (size(), size()),
                prop::collection::vec(prop_oneof![-2i64..4, Just(1i64 << 62)], 0..5),
                prop::collection::vec(size(), 0..5),
                (value(), any::<bool>()),
            )
        })
        .prop_map(
            |(
                a,
                b,
                mask,
                ids,
                (dim, dim2, int, int2),
                (size, size2),
                shape,
                sizes,
                (value, flag),
            )| {
                Input {
                    a,
                    b,
                    mask,
                    ids,
                    dim,
                    dim2,
                    int,
                    int2,
                    size,
                    size2,
                    shape,
                    sizes,
                    value,
                    flag,
                }
            },
        )
}

thread_local! {
    /// Whether this thread is inside [`run`], where panics are expected and caught.
    static CATCHING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, turning a panic into its message. The panic is not printed (the test checks
/// it); panics elsewhere, such as proptest's report of a failing case, still are.
fn run<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CATCHING.with(Cell::get) {
                default(info);
            }
        }));
    });
    CATCHING.with(|c| c.set(true));
    let outcome = catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    outcome.map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

fn quiet_config() -> Config {
    // No `proptest-regressions` files and no warning about them; failures print their input.
    Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(quiet_config())]

    #[test]
    fn no_checked_op_panics(x in input()) {
        manual_seed(0);
        for (name, op) in checked_ops() {
            let outcome = run(|| op(&x));
            prop_assert!(outcome.is_ok(), "{name} panicked: {:?}\non {x:?}", outcome.err());
        }
    }

    #[test]
    fn plain_forms_panic_only_with_the_message(x in input()) {
        for (name, plain, checked) in plain_ops() {
            let expected = run(|| checked(&x));
            prop_assert!(expected.is_ok(), "{name}'s f_ form panicked on {x:?}");
            match (run(|| plain(&x)), expected.unwrap()) {
                (Ok(()), None) => {}
                (Err(got), Some(want)) => prop_assert_eq!(got, want, "{} on {:?}", name, x),
                (got, want) => prop_assert!(false, "{name}: plain form {got:?}, f_ form {want:?}\non {x:?}"),
            }
        }
    }
}
