//! Suffixes: what a repr says after the values (PyTorch: `_str_intern` and
//! `_add_suffixes` in `torch/_tensor_str.py`).
//!
//! Some facts are not visible in the values: the shape of an empty tensor, a dtype that
//! is not a default one, autograd state. PyTorch appends them as `, key=value` before the
//! closing parenthesis, each moved to a line of its own when the current line would get
//! too long.

use super::{LINE_WIDTH, Suffixes, Values};

/// The suffixes of a tensor, in PyTorch's order: `size=`, `dtype=`, then autograd state.
pub(super) fn suffixes(
    values: Values<'_>,
    shape: &[usize],
    autograd: &Suffixes,
) -> Vec<String> {
    let mut list = Vec::new();
    let empty = shape.iter().product::<usize>() == 0;
    let dtype = dtype_name(values);
    if empty {
        // `[]` says nothing about the shape, except for the 1-D case it looks like.
        if shape.len() != 1 {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            list.push(format!("size=({})", dims.join(", ")));
        }
        // Nor does it say anything about the dtype, so any non-float32 dtype is shown,
        // even the int64 and bool that non-empty tensors make obvious.
        if dtype != "float32" {
            list.push(format!("dtype=torch.{dtype}"));
        }
    } else if !matches!(dtype, "float32" | "int64" | "bool") {
        // The cells already tell float32 (`1.`), int64 (`1`) and bool (`True`) apart;
        // other dtypes would be mistaken for one of these.
        list.push(format!("dtype=torch.{dtype}"));
    }
    // A tensor produced by an autograd op shows the node; `requires_grad=True` would be
    // redundant next to it, so it appears only on leaves.
    if let Some(name) = &autograd.grad_fn {
        list.push(format!("grad_fn=<{name}>"));
    } else if autograd.requires_grad {
        list.push(String::from("requires_grad=True"));
    }
    list
}

/// PyTorch's name of the dtype, as in `torch.float64`.
fn dtype_name(values: Values<'_>) -> &'static str {
    match values {
        Values::F32(_) => "float32",
        Values::F64(_) => "float64",
        Values::I64(_) => "int64",
        Values::I32(_) => "int32",
        Values::Bool(_) => "bool",
    }
}

/// Appends the suffixes and the closing `)` to `text` (`tensor(` + body).
///
/// A suffix moves to a new line, indented by `indent`, when the last line's length plus
/// the suffix would pass 76 columns. PyTorch measures the last line as
/// `len(s) - s.rfind("\n") + 1`, two more than its real length, and then also counts
/// the `", "`: a deliberately conservative rule, replicated exactly.
pub(super) fn attach(mut text: String, suffixes: &[String], indent: usize) -> String {
    let last_line = text.rsplit('\n').next().unwrap_or_default();
    let mut line_len = last_line.chars().count() + 2;
    for suffix in suffixes {
        let suffix_len = suffix.chars().count();
        if line_len + suffix_len + 2 > LINE_WIDTH {
            text.push_str(",\n");
            text.push_str(&" ".repeat(indent));
            line_len = indent + suffix_len;
        } else {
            text.push_str(", ");
            line_len += suffix_len + 2;
        }
        text.push_str(suffix);
    }
    text.push(')');
    text
}
