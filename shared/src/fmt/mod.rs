//! Printing tensors exactly like PyTorch 2.13.0 does with its default options.
//!
//! `print(t)` in PyTorch writes `repr(t)`, which is built in four steps, mirrored by the
//! submodules here:
//!
//! 1. **Which elements are shown** (`layout.rs`). A tensor with more than 1000 elements is
//!    *summarised*: every dimension longer than 6 keeps only its first 3 and last 3 indices.
//! 2. **One formatter for the whole tensor** (`number.rs`). From the shown elements only,
//!    PyTorch picks a single number style (integer-looking `3.`, fixed `0.1376` or
//!    scientific `1.0000e-05`) and a single column width, so that every cell lines up.
//! 3. **Layout** (`layout.rs`). Cells are joined into nested `[...]` brackets, rows are
//!    wrapped at 80 columns, and d-dimensional blocks are separated by d − 1 newlines.
//! 4. **Suffixes** (`suffix.rs`). Things the values do not say — the shape of an empty
//!    tensor, a non-default dtype, autograd state — are appended as `, key=value`, moved to
//!    their own line when the current one would grow too long.
//!
//! The rules were read from PyTorch's `torch/_tensor_str.py` and checked byte for byte
//! against real PyTorch output (`tests/fixtures/print_fixtures_public.json`).

mod layout;
mod number;
mod size;
mod suffix;

#[cfg(test)]
mod tests;

pub use size::Size;

use layout::Layout;
use number::Formatter;

/// `"tensor("`: every repr starts with it, and its length (7) is the indentation of the
/// outermost brackets' contents and of suffixes moved to their own line.
const PREFIX: &str = "tensor(";
/// Lines are kept within this many columns (PyTorch's default `linewidth`), both when
/// wrapping rows and when placing suffixes.
const LINE_WIDTH: usize = 80;

/// The element values of a tensor in row-major (logical) order, borrowed.
///
/// The variant is the tensor's dtype: it decides how cells look (`1.5000`, `7`, `True`)
/// and whether a `dtype=torch.…` suffix is printed.
#[derive(Clone, Copy, Debug)]
pub enum Values<'a> {
    /// `torch.float32`, the default dtype: never gets a dtype suffix when non-empty.
    F32(&'a [f32]),
    /// `torch.float64`: formatted by the same rules as float32, but printed with
    /// `dtype=torch.float64`.
    F64(&'a [f64]),
    /// `torch.int64`, the default integer dtype: no dtype suffix when non-empty.
    I64(&'a [i64]),
    /// `torch.int32`: printed with `dtype=torch.int32`.
    I32(&'a [i32]),
    /// `torch.bool`: cells `True` / `False`, no dtype suffix when non-empty.
    Bool(&'a [bool]),
}

impl Values<'_> {
    /// The number of elements.
    fn len(&self) -> usize {
        match self {
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::Bool(v) => v.len(),
        }
    }
}

/// What prints after the values: autograd state. Our tensors track no gradients, so the
/// default prints nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Suffixes {
    /// The tensor is a leaf that requires grad: prints `requires_grad=True`, unless
    /// `grad_fn` is set (PyTorch then shows only the `grad_fn`).
    pub requires_grad: bool,
    /// The class name of the autograd node that produced the tensor, e.g. `MulBackward0`;
    /// prints `grad_fn=<MulBackward0>`.
    pub grad_fn: Option<String>,
}

/// The exact text of PyTorch's `repr(t)` / `print(t)`.
///
/// ```
/// use shared::fmt::{format_tensor, Suffixes, Values};
///
/// let text = format_tensor(Values::F32(&[1.0, 2.5, -3.0]), &[3], &Suffixes::default());
/// assert_eq!(text, "tensor([ 1.0000,  2.5000, -3.0000])");
/// ```
///
/// # Shapes
/// `values.len()` must equal the product of `shape` (1 for `shape == []`).
///
/// # Panics
/// If `values.len()` does not match `shape`.
pub fn format_tensor(
    values: Values<'_>,
    shape: &[usize],
    suffixes: &Suffixes,
) -> String {
    let numel: usize = shape.iter().product();
    assert_eq!(
        values.len(),
        numel,
        "format_tensor: {} values given for shape {shape:?}, which holds {numel}",
        values.len(),
    );

    // An empty tensor prints `[]` whatever its shape; the shape goes into a suffix.
    let body = if numel == 0 {
        String::from("[]")
    } else {
        let layout = Layout::new(shape);
        let formatter = Formatter::new(values, &layout.shown_offsets());
        layout.render(&formatter, PREFIX.len())
    };
    let list = suffix::suffixes(values, shape, suffixes);
    suffix::attach(format!("{PREFIX}{body}"), &list, PREFIX.len())
}
