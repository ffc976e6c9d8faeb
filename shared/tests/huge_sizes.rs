//! No size aborts the program: an operation asked for a result that cannot fit in memory
//! (terabytes, or more elements than an address can count) returns an error naming the
//! operation, as PyTorch raises "can't allocate memory: you tried to allocate N bytes",
//! instead of panicking (`capacity overflow`) or aborting the process (an allocation that
//! fails inside `Vec::with_capacity`, which no `catch_unwind` can stop).
//!
//! The inputs are small: a `[2^20, 1]` column and a `[1, 2^20]` row broadcast to `2^40`
//! elements (4 TiB of `f32`), and size lists that overflow. A last test runs the same calls
//! in a child process, so that an abort there fails the test here instead of killing it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::Command;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::Config;
use shared::{Tensor, manual_seed};

/// `2^20`: a column of this many rows times a row of this many columns is `2^40` elements.
const N: usize = 1 << 20;

/// The small operands whose results are huge, made once.
struct Operands {
    column: Tensor,
    row: Tensor,
    mask_column: Tensor<bool>,
    vector: Tensor,
}

fn operands() -> &'static Operands {
    static OPERANDS: OnceLock<Operands> = OnceLock::new();
    OPERANDS.get_or_init(|| Operands {
        column: shared::zeros(&[N, 1]),
        row: shared::zeros(&[1, N]),
        mask_column: Tensor::full(&[N, 1], true),
        vector: shared::zeros(&[N]),
    })
}

/// Size lists that cannot be allocated: too many bytes, too many elements, wrap-arounds.
const HUGE_SHAPES: &[&[usize]] = &[
    &[N, N],
    &[1 << 31, 1 << 31],
    &[1 << 62, 4],
    &[usize::MAX],
    &[usize::MAX, 2, 0],
    &[1 << 40],
];

type Op = fn(&Operands, &[usize]) -> shared::Result<()>;

/// Every operation whose result can be larger than its inputs, with a huge result.
fn ops() -> Vec<(&'static str, Op)> {
    fn ok<T>(r: shared::Result<T>) -> shared::Result<()> {
        r.map(drop)
    }
    vec![
        ("zeros", |_, s| ok(shared::f_zeros(s))),
        ("ones", |_, s| ok(shared::f_ones(s))),
        ("empty", |_, s| ok(shared::f_empty(s))),
        ("full", |_, s| ok(Tensor::f_full(s, 0.5))),
        ("full bool", |_, s| ok(Tensor::f_full(s, true))),
        ("rand", |_, s| ok(shared::f_rand(s))),
        ("randn", |_, s| ok(shared::f_randn(s))),
        ("randint", |_, s| ok(shared::f_randint(0, 10, s))),
        ("eye", |_, s| {
            let (n, m) = (s[0], s.get(1).copied().unwrap_or(s[0]));
            ok(shared::f_eye_m(n, m))
        }),
        ("arange", |_, s| {
            ok(shared::f_arange(0i64, as_i64(numel(s)), 1))
        }),
        ("add", |x, _| ok(x.column.f_add(&x.row))),
        ("sub", |x, _| ok(x.column.f_sub(&x.row))),
        ("mul", |x, _| ok(x.column.f_mul(&x.row))),
        ("div", |x, _| ok(x.column.f_div(&x.row))),
        ("eq", |x, _| ok(x.column.f_eq(&x.row))),
        ("gt", |x, _| ok(x.column.f_gt(&x.row))),
        ("maximum", |x, _| ok(x.column.f_maximum(&x.row))),
        ("minimum", |x, _| ok(x.column.f_minimum(&x.row))),
        ("logical_and", |x, _| {
            ok(x.mask_column.f_logical_and(&x.row.bool()))
        }),
        ("where", |x, _| {
            ok(shared::f_where_(&x.mask_column, &x.column, &x.row))
        }),
        ("polar", |x, _| ok(shared::f_polar(&x.column, &x.row))),
        ("outer", |x, _| ok(x.vector.f_outer(&x.vector))),
        ("matmul", |x, _| ok(x.column.f_matmul(&x.row))),
        ("masked_fill", |x, _| {
            ok(x.row.f_masked_fill(&x.mask_column, 1.0))
        }),
        ("repeat", |x, s| ok(x.row.f_repeat(&[s[0], 1]))),
        // `expand` itself is a view that costs nothing; what reads its repeats allocates.
        ("add expanded", |x, s| {
            let wide = x.column.f_expand(&[N as i64, as_i64(s[0])])?;
            ok(wide.f_add(&shared::zeros(&[1])))
        }),
        ("split_sizes", |x, s| {
            ok(x.vector.f_split_sizes(&[s[0], s[0], N], 0))
        }),
    ]
}

/// The element count of `shape`, or `usize::MAX` where it does not fit.
fn numel(shape: &[usize]) -> usize {
    shape
        .iter()
        .fold(1, |n: usize, &d| n.saturating_mul(d.max(1)))
}

/// A size as an `i64` argument, the largest one where it does not fit.
fn as_i64(size: usize) -> i64 {
    i64::try_from(size).unwrap_or(i64::MAX)
}

fn config() -> Config {
    Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Each operation with a huge size returns an error (never a panic) that names it.
    #[test]
    fn huge_sizes_are_errors(op in 0..ops().len(), shape in 0..HUGE_SHAPES.len()) {
        manual_seed(0);
        let (name, f) = ops()[op];
        let shape = HUGE_SHAPES[shape];
        let outcome = catch_unwind(AssertUnwindSafe(|| f(operands(), shape)));
        prop_assert!(outcome.is_ok(), "{name} panicked with {shape:?}");
        let result = outcome.unwrap();
        prop_assert!(result.is_err(), "{name} with {shape:?} returned a tensor");
        let message = result.unwrap_err().to_string();
        let op = name.split(' ').next().unwrap();
        prop_assert!(
            message.starts_with(op)
                || message.starts_with("split_with_sizes")
                || (name == "add expanded" && message.starts_with("expand")),
            "{name}'s error does not name it: {message}"
        );
    }
}

/// `expand` to `2^40` elements is a view, as in PyTorch: it allocates nothing and is not
/// contiguous; only a size whose element count overflows is refused.
#[test]
fn a_huge_expand_is_a_view() {
    let x = operands();
    let wide = x.column.f_expand(&[N as i64, N as i64]).unwrap();
    assert_eq!(wide.sizes(), [N, N]);
    assert!(!wide.is_contiguous());
    assert_eq!(wide.select(0, 7).sizes(), [N]);
    assert!(
        x.column
            .f_expand(&[N as i64, 1 << 43])
            .unwrap_err()
            .to_string()
            .starts_with("expand: Storage size calculation overflowed")
    );
}

#[test]
fn the_error_says_how_many_bytes_as_pytorch_does() {
    let x = operands();
    assert_eq!(
        x.column.f_add(&x.row).unwrap_err().to_string(),
        "add: can't allocate memory: you tried to allocate 4398046511104 bytes (shape \
         [1048576, 1048576])"
    );
    assert!(
        shared::f_randint(0, 10, &[1 << 31, 1 << 31])
            .unwrap_err()
            .to_string()
            .starts_with("randint: Storage size calculation overflowed")
    );
}

/// The environment variable that tells this test binary it runs as the child.
const CHILD: &str = "SHARED_HUGE_SIZES_CHILD";

/// In the child: the calls that used to abort, at `2^40` elements. Elsewhere: nothing.
#[test]
fn child_allocates_2_pow_40_elements() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let x = operands();
    for (name, f) in ops() {
        assert!(f(x, &[N, N]).is_err(), "{name} returned a tensor");
        assert!(f(x, &[1 << 40]).is_err(), "{name} returned a tensor");
    }
    println!("child: every op returned an error");
}

/// An abort cannot be caught in the process that aborts: the child runs the calls, and its
/// exit status says whether it came back.
#[test]
fn no_size_aborts_the_process() {
    let output = Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "--exact",
            "child_allocates_2_pow_40_elements",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the child died: {:?}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("child: every op returned an error"),
        "{stdout}"
    );
}
