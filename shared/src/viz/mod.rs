//! Attention weights as pictures: a matrix of weights drawn as a heatmap, one cell per
//! weight, queries down the side and keys along the top.
//!
//! ```
//! use shared::{tensor, viz};
//! let weights = tensor!([[1.0, 0.0], [0.25, 0.75]]);
//! let map = viz::heatmap(&weights, &["I", "am"], &["I", "am"]).unwrap();
//! assert_eq!(
//!     map.to_string(),
//!     "     I      am\n\
//!      I  ██1.00      0\n\
//!      am ░░0.25 ▓▓0.75\n\
//!      (blank = 0, ██ = 1.00)\n"
//! );
//! ```
//!
//! The text form reads without colour: every cell has a shade block *and* its value, and
//! a weight of exactly `0` (masked, dropped or padding) is written `0` so it stands out
//! from a small weight. [`Heatmap::colour`] adds a coloured background to each cell, the
//! colours of the book's figures, for a terminal that shows them; [`Heatmap::to_svg`] draws
//! the same heatmap as the book's figures (module [`svg`]).
//!
//! A heatmap is 2-D. To draw the heads of a `[heads, queries, keys]` tensor, draw
//! each head on its own: `heatmap(&weights.select(0, h), ..)`.

mod terminal;

pub mod svg;

pub use terminal::side_by_side;

use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// One matrix of weights with its labels: `rows` are the queries, `cols` the keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Heatmap {
    /// Written above the heatmap (empty: no title line).
    pub title: String,
    /// The query labels, top to bottom.
    pub rows: Vec<String>,
    /// The key labels, left to right.
    pub cols: Vec<String>,
    /// Row-major, `rows.len() × cols.len()` values.
    pub values: Vec<f32>,
    /// The magnitude drawn darkest: 1 for weights, else the largest magnitude.
    pub scale: f32,
    /// Whether the text form colours each cell's background (ANSI truecolour).
    pub colour: bool,
}

/// The heatmap of a 2-D tensor of weights, rows labelled by `rows` (the queries) and
/// columns by `cols` (the keys). A tensor of another rank, or labels that do not match its
/// shape, is an error naming the shapes.
///
/// # Shapes
/// `weights`: `[rows.len(), cols.len()]`.
pub fn heatmap<R: AsRef<str>, C: AsRef<str>>(
    weights: &Tensor,
    rows: &[R],
    cols: &[C],
) -> Result<Heatmap> {
    let shape_error = |detail: String| Error::Shape {
        op: "heatmap",
        detail,
    };
    let Ok([n_rows, n_cols]) = weights.f_dims() else {
        return Err(shape_error(format!(
            "expected a 2-D tensor of weights [queries, keys], got shape {:?} \
             (draw each leading index on its own, e.g. weights.select(0, head))",
            weights.sizes()
        )));
    };
    if (rows.len(), cols.len()) != (n_rows, n_cols) {
        return Err(shape_error(format!(
            "{} row labels and {} column labels do not fit weights of shape {:?}",
            rows.len(),
            cols.len(),
            weights.sizes()
        )));
    }
    let values = weights.to_vec();
    Ok(Heatmap {
        title: String::new(),
        rows: rows.iter().map(|s| s.as_ref().to_string()).collect(),
        cols: cols.iter().map(|s| s.as_ref().to_string()).collect(),
        scale: default_scale(&values),
        values,
        colour: false,
    })
}

/// [`heatmap`] labelled by indices, `0, 1, 2, ...`, for weights without words.
///
/// # Shapes
/// `weights`: `[queries, keys]`.
pub fn heatmap_indexed(weights: &Tensor) -> Result<Heatmap> {
    let indices = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>();
    let dims = weights.sizes();
    let (rows, cols) = match dims {
        [r, c] => (indices(*r), indices(*c)),
        _ => (Vec::new(), Vec::new()),
    };
    heatmap(weights, &rows, &cols)
}

impl Heatmap {
    /// The same heatmap with a title line above it.
    pub fn title(mut self, title: impl Into<String>) -> Heatmap {
        self.title = title.into();
        self
    }

    /// The same heatmap with its text form coloured (`true`) or plain (`false`).
    pub fn colour(mut self, colour: bool) -> Heatmap {
        self.colour = colour;
        self
    }

    /// The same heatmap drawn on the scale `-max ..= max` (to share one scale between
    /// several heatmaps); a `max` that is not a positive number keeps the scale as it is.
    pub fn scale(mut self, max: f32) -> Heatmap {
        if max.is_finite() && max > 0.0 {
            self.scale = max;
        }
        self
    }

    /// The value in row `row`, column `col`.
    pub fn value(&self, row: usize, col: usize) -> f32 {
        self.values[row * self.cols.len() + col]
    }

    /// Whether every value is a weight, between 0 and 1.
    pub fn is_weights(&self) -> bool {
        self.values.iter().all(|v| (0.0..=1.0).contains(v))
    }
}

/// The darkest magnitude of a heatmap's values: 1 for weights (so 0.5 always looks the
/// same), else the largest finite magnitude; at least 1e-6.
fn default_scale(values: &[f32]) -> f32 {
    if values.iter().all(|v| (0.0..=1.0).contains(v)) {
        return 1.0;
    }
    values
        .iter()
        .map(|v| v.abs())
        .filter(|v| v.is_finite())
        .fold(1e-6, f32::max)
}

/// The lightest colour of the scale, then the darkest of a positive and of a negative
/// value (weights have no sign; scores and encodings do).
const LIGHT: (f64, f64, f64) = (247.0, 251.0, 255.0);
const DARK: (f64, f64, f64) = (8.0, 48.0, 107.0);
const DARK_NEGATIVE: (f64, f64, f64) = (165.0, 15.0, 21.0);

/// The colour of `value` on the scale `-max ..= max`, as `(red, green, blue)`: from
/// light to dark blue above 0, to dark red below.
pub fn cell_colour(value: f32, max: f32) -> (u8, u8, u8) {
    let t = f64::from((value.abs() / max).clamp(0.0, 1.0));
    let dark = if value < 0.0 { DARK_NEGATIVE } else { DARK };
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    (
        mix(LIGHT.0, dark.0),
        mix(LIGHT.1, dark.1),
        mix(LIGHT.2, dark.2),
    )
}

/// Whether a cell of `value` on the scale `-max ..= max` is dark enough to need white ink.
pub fn needs_light_ink(value: f32, max: f32) -> bool {
    value.abs() / max > 0.6
}

/// How a value is written in its cell: two decimals, and a plain `0` for a weight that is
/// exactly zero (masked, dropped or padding), so it stands out from a small weight.
pub fn cell_text(value: f32) -> String {
    if value == 0.0 {
        "0".to_string()
    } else {
        format!("{value:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor;

    #[test]
    fn bad_shapes_are_errors_naming_the_shapes() {
        let cube = crate::zeros(&[2, 2, 2]);
        let error = heatmap(&cube, &["a", "b"], &["a", "b"]).unwrap_err();
        assert!(
            error.to_string().starts_with(
                "heatmap: expected a 2-D tensor of weights [queries, keys], got shape [2, 2, 2]"
            ),
            "{error}"
        );
        let error =
            heatmap(&tensor!([[0.5, 0.5]]), &["a", "b"], &["x", "y"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "heatmap: 2 row labels and 2 column labels do not fit weights of shape [1, 2]"
        );
        assert!(heatmap_indexed(&tensor!([0.5, 0.5])).is_err());
    }

    #[test]
    fn weights_keep_the_scale_of_one_and_scores_take_their_largest_magnitude() {
        let weights = heatmap_indexed(&tensor!([[0.25, 0.75]])).unwrap();
        assert_eq!(weights.scale, 1.0);
        assert!(weights.is_weights());
        let scores = heatmap_indexed(&tensor!([[2.0, -4.0]])).unwrap();
        assert_eq!(scores.scale, 4.0);
        assert!(!scores.is_weights());
        assert_eq!(scores.clone().scale(0.0).scale, 4.0, "0 keeps the scale");
        assert_eq!(scores.value(0, 1), -4.0);
    }

    #[test]
    fn colours_run_from_light_to_dark() {
        assert_eq!(cell_colour(0.0, 1.0), (247, 251, 255));
        assert_eq!(cell_colour(1.0, 1.0), (8, 48, 107));
        assert_eq!(cell_colour(-2.0, 1.0), (165, 15, 21));
        assert_eq!(cell_text(0.0), "0");
        assert_eq!(cell_text(0.123), "0.12");
    }
}
