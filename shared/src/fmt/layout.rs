//! Layout: nested brackets, line wrapping and summarisation (PyTorch: `_tensor_str_with_formatter`,
//! `_vector_str` and `get_summarized_data` in `torch/_tensor_str.py`).
//!
//! A tensor prints as nested brackets, one level per dimension:
//!
//! * the innermost vectors are rows of cells joined by `", "`, wrapped so that lines stay
//!   within 80 columns (continuation lines start under the first cell);
//! * a d-dimensional block joins its (d−1)-dimensional children with `","` and d − 1
//!   newlines, so 2-D rows follow each other directly, 3-D blocks are separated by one
//!   blank line, 4-D blocks by two, and so on.
//!
//! A tensor with more than 1000 elements is *summarised*: every dimension longer than 6
//! shows its first 3 and last 3 indices with an ellipsis in between, at every level.

use super::LINE_WIDTH;
use super::number::Formatter;

/// Tensors with more elements than this are summarised (PyTorch's `threshold`).
const SUMMARY_THRESHOLD: usize = 1000;
/// How many indices are kept at each end of a summarised dimension (`edgeitems`).
const EDGE_ITEMS: usize = 3;

/// One printed position along a dimension: a real index, or the ellipsis standing for
/// the hidden middle of a summarised dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Index(usize),
    Ellipsis,
}

/// The shape of a non-empty tensor and whether it is summarised.
#[derive(Debug)]
pub(super) struct Layout<'s> {
    shape: &'s [usize],
    /// Row-major strides: how far apart in the flat values consecutive indices of each
    /// dimension are.
    strides: Vec<usize>,
    summarize: bool,
}

impl<'s> Layout<'s> {
    /// The layout of a tensor of this shape, which must have at least one element.
    pub(super) fn new(shape: &'s [usize]) -> Self {
        let mut strides = vec![1; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * shape[d + 1];
        }
        // Only the total count matters: 1000 elements print in full, however they are
        // shaped, while 1001 are summarised.
        let summarize = shape.iter().product::<usize>() > SUMMARY_THRESHOLD;
        Layout {
            shape,
            strides,
            summarize,
        }
    }

    /// The positions printed along a dimension of length `len`.
    fn slots(&self, len: usize) -> Vec<Slot> {
        if self.summarize && len > 2 * EDGE_ITEMS {
            let head = (0..EDGE_ITEMS).map(Slot::Index);
            let tail = (len - EDGE_ITEMS..len).map(Slot::Index);
            head.chain([Slot::Ellipsis]).chain(tail).collect()
        } else {
            (0..len).map(Slot::Index).collect()
        }
    }

    /// Flat offsets of every element that will be printed: the cartesian product of the
    /// kept indices of each dimension. The formatter is built from exactly these.
    pub(super) fn shown_offsets(&self) -> Vec<usize> {
        let mut offsets = vec![0];
        for (&len, &stride) in self.shape.iter().zip(&self.strides) {
            let kept: Vec<usize> = self
                .slots(len)
                .into_iter()
                .filter_map(|slot| match slot {
                    Slot::Index(i) => Some(i * stride),
                    Slot::Ellipsis => None,
                })
                .collect();
            offsets = offsets
                .iter()
                .flat_map(|&base| kept.iter().map(move |&step| base + step))
                .collect();
        }
        offsets
    }

    /// The body text (everything between `tensor(` and the suffixes), with the outermost
    /// opening bracket at column `indent` (7, just after `tensor(`).
    pub(super) fn render(&self, formatter: &Formatter<'_>, indent: usize) -> String {
        if self.shape.is_empty() {
            // A 0-d tensor is its single cell, without brackets.
            return formatter.cell(0);
        }
        self.render_block(formatter, 0, 0, indent)
    }

    /// The sub-tensor made of dimensions `dim..` starting at flat offset `offset`, whose
    /// opening bracket is at column `indent`; its contents line up one column further.
    fn render_block(
        &self,
        formatter: &Formatter<'_>,
        dim: usize,
        offset: usize,
        indent: usize,
    ) -> String {
        let slots = self.slots(self.shape[dim]);
        let stride = self.strides[dim];
        let dims_left = self.shape.len() - dim;
        if dims_left == 1 {
            let cells: Vec<String> = slots
                .iter()
                .map(|slot| match slot {
                    Slot::Index(i) => formatter.cell(offset + i * stride),
                    // Four characters, not padded to the width; the two spaces before the
                    // dots in `3,  ..., 7` are its own leading space plus the `", "`.
                    Slot::Ellipsis => String::from(" ..."),
                })
                .collect();
            return vector(&cells, formatter.width(), indent);
        }
        let children: Vec<String> = slots
            .iter()
            .map(|slot| match slot {
                Slot::Index(i) => self.render_block(
                    formatter,
                    dim + 1,
                    offset + i * stride,
                    indent + 1,
                ),
                Slot::Ellipsis => String::from("..."),
            })
            .collect();
        // d − 1 newlines, so that blank lines show how deep the split is. The spaces come
        // after the last newline only, so blank lines are truly empty.
        let separator =
            format!(",{}{}", "\n".repeat(dims_left - 1), " ".repeat(indent + 1));
        format!("[{}]", children.join(&separator))
    }
}

/// A 1-D row of cells in brackets whose opening bracket is at column `indent`, wrapped
/// to the line width.
fn vector(cells: &[String], width: usize, indent: usize) -> String {
    // PyTorch counts how many cells of the common width (plus `", "`) fit after the
    // indentation, measured from the bracket: `(80 - indent) / (width + 2)`. Cells wider
    // than the width (and the ellipsis) still count as one, so such lines can run past
    // 80 columns.
    let per_line = (LINE_WIDTH.saturating_sub(indent) / (width + 2)).max(1);
    let lines: Vec<String> =
        cells.chunks(per_line).map(|line| line.join(", ")).collect();
    // Continuation lines start under the first cell, one column after the bracket.
    format!(
        "[{}]",
        lines.join(&format!(",\n{}", " ".repeat(indent + 1)))
    )
}
